// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/rpz_export.h"

#include <algorithm>
#include <cstdio>
#include <unordered_set>

#include "core/ascii.h"
#include "url/entry.h"
#include "core/list_name.h"
#include "publish/publisher.h"
#include "format/manifest.h"
#include "format/repository_files.h"

namespace urlguard {
namespace {

// RFC 1035 §2.3.4: labels of at most 63 bytes, names of at most 255 bytes on the wire.
constexpr size_t kMaxLabelBytes = 63;
constexpr size_t kMaxNameWireBytes = 255;

bool IsLabelByte(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'; }

// Wire length of a relative name in text form ("a.bc" -> 1+1 + 1+2 = 5), without the root byte.
size_t RelativeWireBytes(std::string_view name) { return name.empty() ? 0 : name.size() + 1; }

// True when `name` (relative, no final dot, lower case) is labels of IsLabelByte bytes, each 1-63 bytes.
bool IsHostName(std::string_view name) {
  if (name.empty()) return false;
  size_t label = 0;
  for (char c : name) {
    if (c == '.') {
      if (label == 0) return false;
      label = 0;
    } else if (!IsLabelByte(c) || ++label > kMaxLabelBytes) {
      return false;
    }
  }
  return label != 0;
}

// Draft §3-§4: the last label of an owner name below the origin selects the trigger type. A listed domain
// ending in one of these would be read as another trigger kind, so it cannot be expressed.
bool EndsInTriggerLabel(std::string_view name) {
  size_t dot = name.rfind('.');
  std::string_view last = dot == std::string_view::npos ? name : name.substr(dot + 1);
  return last == "rpz-ip" || last == "rpz-nsip" || last == "rpz-nsdname" || last == "rpz-client-ip";
}

// True when `domain` or a name it is under (a suffix at a label boundary) is in `allowed`.
bool UnderAllowedDomain(const std::string& domain, const std::unordered_set<std::string_view>& allowed) {
  std::string_view name = domain;
  for (;;) {
    if (allowed.count(name) != 0) return true;
    const size_t dot = name.find('.');
    if (dot == std::string_view::npos) return false;
    name.remove_prefix(dot + 1);
  }
}

// Allowed ranges, by family and prefix length, for "is this range inside an allowed one".
class AllowedRanges {
 public:
  explicit AllowedRanges(const std::vector<std::string>& ranges) {
    for (const std::string& r : ranges) {
      uint8_t addr[16];
      bool v6 = false;
      int len = 0;
      if (!ParseIpOrCidr(r, addr, &v6, &len)) continue;
      char buf[kMaxIpExpressionBytes];
      set_.insert(std::string(buf, IpPrefixExpression(addr, v6, len, buf)));
      lengths_[v6 ? 1 : 0][len] = true;
    }
  }
  // True when the range `r` equals or lies inside an allowed range.
  bool Covers(const std::string& r) const {
    if (set_.empty()) return false;
    uint8_t addr[16];
    bool v6 = false;
    int len = 0;
    if (!ParseIpOrCidr(r, addr, &v6, &len)) return false;
    for (int l = 1; l <= len; ++l) {
      if (!lengths_[v6 ? 1 : 0][l]) continue;
      char buf[kMaxIpExpressionBytes];
      if (set_.count(std::string(buf, IpPrefixExpression(addr, v6, l, buf))) != 0) return true;
    }
    return false;
  }

 private:
  std::unordered_set<std::string> set_;
  bool lengths_[2][129] = {};
};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

Status ParseRpzAction(std::string_view text, RpzAction* action, std::string* cname_target) {
  if (text == "nxdomain" || text == "nodata" || text == "null") {
    *action = text == "nxdomain" ? RpzAction::kNxdomain : text == "nodata" ? RpzAction::kNodata : RpzAction::kNull;
    cname_target->clear();
    return Status::Ok();
  }
  constexpr std::string_view kCnamePrefix = "cname:";
  if (text.substr(0, kCnamePrefix.size()) == kCnamePrefix) {
    std::string host = Lower(text.substr(kCnamePrefix.size()));
    if (!host.empty() && host.back() == '.') host.pop_back();
    if (IsHostName(host) && RelativeWireBytes(host) + 1 <= kMaxNameWireBytes) {
      *action = RpzAction::kCname;
      *cname_target = host + ".";
      return Status::Ok();
    }
    return Status::InvalidArgument("the cname action needs a DNS host name: cname:warning.example.net");
  }
  return Status::InvalidArgument("the action is \"nxdomain\", \"nodata\", \"null\" or \"cname:HOST\"");
}

Result<RpzAllowlist> ParseRpzAllowlist(std::string_view text, const std::string& name) {
  if (text.size() > kMaxRpzAllowlistBytes) {
    return Status::ResourceExhausted(name + ": an allowlist is at most " + std::to_string(kMaxRpzAllowlistBytes) +
                                     " bytes");
  }
  RpzAllowlist out;
  size_t entries = 0;
  uint64_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string line(TrimAsciiSpace(text.substr(pos, end - pos)));
    pos = end + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const std::string where = name + ":" + std::to_string(line_no);
    if (++entries > kMaxRpzAllowlistEntries) {
      return Status::ResourceExhausted(where + ": an allowlist holds at most " +
                                       std::to_string(kMaxRpzAllowlistEntries) + " entries");
    }
    auto key = EntryKeyFor(line);
    if (!key.ok()) return key.status().WithContext(where);
    switch (key->layer) {
      case LayerKind::kDomain: {
        std::string domain = key->expression.substr(0, key->expression.size() - 1);  // "good.example/"
        if (!IsHostName(domain) || EndsInTriggerLabel(domain)) {
          return Status::InvalidArgument(where + ": not a DNS host name, so no resolver could let it through");
        }
        out.domains.push_back(std::move(domain));
        break;
      }
      case LayerKind::kIp:
        if (key->prefix_length == 0) return Status::InvalidArgument(where + ": a /0 range would let everything through");
        out.ip_ranges.push_back(key->expression);
        break;
      case LayerKind::kUrl:
        ++out.url_entries_left_out;
        break;
    }
  }
  for (std::vector<std::string>* v : {&out.domains, &out.ip_ranges}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  return out;
}

Result<std::string> NormalizeRpzOrigin(std::string_view origin) {
  std::string name = Lower(origin);
  if (!name.empty() && name.back() == '.') name.pop_back();
  if (!IsHostName(name) || RelativeWireBytes(name) + 1 > kMaxNameWireBytes) {
    return Status::InvalidArgument("the zone origin must be a DNS name such as phishing.rpz.example.net");
  }
  return name + ".";
}

Result<std::string> RpzIpTriggerName(std::string_view range) {
  uint8_t addr[16];
  bool v6 = false;
  int len = 0;
  if (!ParseIpOrCidr(range, addr, &v6, &len)) return Status::InvalidArgument("not an address or range");
  if (len == 0) return Status::InvalidArgument("a /0 range has no rpz-ip trigger");
  std::string name = std::to_string(len);
  if (!v6) {
    // Spec (draft §4.2): "prefixlength.B4.B3.B2.B1.rpz-ip", the address's bytes in reverse order.
    for (int i = 3; i >= 0; --i) name += "." + std::to_string(addr[i]);
    return name + ".rpz-ip";
  }
  // Spec (draft §4.2): "prefixlength.W8.W7.W6.W5.W4.W3.W2.W1.rpz-ip", 16-bit words in reverse order in
  // lower-case hex without leading zeros, where "zz" replaces the one run of zero words that "::" would
  // replace in the text form. RFC 5952 §4.2 picks that run: the longest of at least two words, the first on
  // a tie.
  uint16_t words[8];
  for (int i = 0; i < 8; ++i) words[i] = static_cast<uint16_t>(addr[2 * i] << 8 | addr[2 * i + 1]);
  int best = -1, best_len = 1;
  for (int i = 0; i < 8;) {
    if (words[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && words[j] == 0) ++j;
    if (j - i > best_len) best = i, best_len = j - i;
    i = j;
  }
  for (int i = 7; i >= 0; --i) {
    if (best >= 0 && i >= best && i < best + best_len) {
      if (i == best) name += ".zz";
      continue;
    }
    char hex[8];
    std::snprintf(hex, sizeof(hex), ".%x", words[i]);
    name += hex;
  }
  return name + ".rpz-ip";
}

Result<std::string> RenderRpzZone(const EntryList& entries, const RpzZoneOptions& options, RpzZoneStats* stats) {
  auto origin = NormalizeRpzOrigin(options.origin);
  if (!origin.ok()) return origin.status();
  // The records after an owner name: one policy record, or two for the null action (the draft's Local Data action).
  std::string policy;
  std::string policy_text;
  switch (options.action) {
    case RpzAction::kNxdomain:
      policy = " CNAME .\n";  // Spec (draft, policy actions): "CNAME ." is the NXDOMAIN action.
      policy_text = "NXDOMAIN";
      break;
    case RpzAction::kNodata:
      policy = " CNAME *.\n";  // Spec (draft, policy actions): "CNAME *." is the NODATA action.
      policy_text = "NODATA";
      break;
    case RpzAction::kNull:
      policy = " A 0.0.0.0\n";  // Spec (draft, Local Data action): records of other types are answered as they are.
      policy_text = "A 0.0.0.0 / AAAA ::";
      break;
    case RpzAction::kCname:
      if (options.cname_target.empty() || options.cname_target.back() != '.' ||
          !IsHostName(std::string_view(options.cname_target).substr(0, options.cname_target.size() - 1))) {
        return Status::InvalidArgument("the cname action needs an absolute host name (ParseRpzAction)");
      }
      policy = " CNAME " + options.cname_target + "\n";
      policy_text = "CNAME " + options.cname_target;
      break;
  }
  auto append_policy = [&](std::string* out, const std::string& owner) {
    *out += owner + policy;
    if (options.action == RpzAction::kNull) *out += owner + " AAAA ::\n";
  };
  RpzZoneStats s;
  s.url_entries_left_out = entries.url_entries;
  // Owner names are written relative to $ORIGIN; "*." + name + "." + origin must fit 255 wire bytes.
  const size_t origin_wire = RelativeWireBytes(std::string_view(*origin).substr(0, origin->size() - 1));
  auto fits = [&](const std::string& d) {
    return IsHostName(d) && !EndsInTriggerLabel(d) && 2 + RelativeWireBytes(d) + origin_wire + 1 <= kMaxNameWireBytes;
  };

  // Spec (draft, policy actions): "CNAME rpz-passthru." is the PASSTHRU action. Written first, so a reader sees the
  // exceptions before the blocks; precedence does not depend on the order (exact names beat wildcards, longer
  // prefixes beat shorter ones), which is why blocks the allowlist covers are left out below.
  std::string passthru;
  std::unordered_set<std::string_view> allowed_domains;
  for (const std::string& d : options.allowlist.domains) {
    if (!fits(d)) return Status::InvalidArgument("allowlisted name is no DNS host name under the origin: " + d);
    if (!allowed_domains.insert(d).second) continue;
    passthru += d + " CNAME rpz-passthru.\n*." + d + " CNAME rpz-passthru.\n";
    ++s.passthru;
  }
  std::unordered_set<std::string> allowed_range_owners;
  for (const std::string& r : options.allowlist.ip_ranges) {
    auto owner = RpzIpTriggerName(r);
    if (!owner.ok()) return owner.status().WithContext("allowlisted range " + r);
    if (!allowed_range_owners.insert(*owner).second) continue;
    passthru += *owner + " CNAME rpz-passthru.\n";
    ++s.passthru;
  }
  s.allowlist_url_entries_left_out = options.allowlist.url_entries_left_out;
  const AllowedRanges allowed_ranges(options.allowlist.ip_ranges);

  std::string body;
  for (const std::string& d : entries.domains) {
    if (!fits(d)) {
      ++s.unexpressible_left_out;
      continue;
    }
    if (!allowed_domains.empty() && UnderAllowedDomain(d, allowed_domains)) {
      ++s.allowed_left_out;
      continue;
    }
    append_policy(&body, d);
    append_policy(&body, "*." + d);
    ++s.domains;
  }
  for (const std::string& r : entries.ip_ranges) {
    auto owner = RpzIpTriggerName(r);
    if (!owner.ok()) {
      ++s.unexpressible_left_out;
      continue;
    }
    if (allowed_ranges.Covers(r)) {
      ++s.allowed_left_out;
      continue;
    }
    append_policy(&body, *owner);
    ++s.ip_ranges;
  }

  const std::string ttl = std::to_string(kRpzRecordTtlSeconds);
  const uint32_t serial = static_cast<uint32_t>(entries.version);  // mod 2^32 (RFC 1982)
  std::string z;
  z += "; urlguard Response Policy Zone (docs/rpz.md): list " + entries.list + ", version " +
       std::to_string(entries.version) + "\n";
  z += "; policy: " + policy_text + " for each listed domain and every name under it (" + std::to_string(s.domains) +
       " domains), and for answers holding an address in a listed range (" + std::to_string(s.ip_ranges) +
       " ranges)\n";
  z += "; left out: " + std::to_string(s.url_entries_left_out) +
       " url-layer entries (DNS cannot match a URL's path; clients of the urlguard library still check them)\n";
  if (s.unexpressible_left_out != 0) {
    z += "; left out: " + std::to_string(s.unexpressible_left_out) +
         " entries that are no DNS host name or range (bad label, too long, /0)\n";
  }
  if (s.passthru != 0 || s.allowlist_url_entries_left_out != 0) {
    z += "; passthru: " + std::to_string(s.passthru) +
         " allowlisted domains and ranges (rpz-passthru, before the blocks); " + std::to_string(s.allowed_left_out) +
         " listed entries they cover left out\n";
  }
  if (s.allowlist_url_entries_left_out != 0) {
    z += "; left out: " + std::to_string(s.allowlist_url_entries_left_out) +
         " allowlisted URLs with a path (DNS cannot let only a path through)\n";
  }
  z += "$TTL " + ttl + "\n$ORIGIN " + *origin + "\n";
  // SOA: MNAME RNAME SERIAL REFRESH RETRY EXPIRE MINIMUM. The names are placeholders (the draft: RPZ ignores
  // them); the timers suit a zone transferred or fetched every few minutes.
  z += "@ IN SOA localhost. hostmaster.localhost. " + std::to_string(serial) + " 300 60 604800 " + ttl + "\n";
  z += "@ IN NS localhost.\n";
  z += passthru;
  z += body;
  if (stats != nullptr) *stats = s;
  return z;
}

std::string PublicRpzPath(const std::string& repo, const std::string& list) {
  return JoinPath(PublicListDir(repo, list), RpzFileName(list));
}

Result<RpzFileReport> ExportRpzFile(Env* env, const std::string& repo, const std::string& list,
                                    const RpzZoneOptions& options, const std::string& out_path) {
  if (!IsValidListName(list)) return Status::InvalidArgument("list name must be 1-64 bytes of [a-z0-9_-]: " + list);
  // The version clients see is the one the manifest names (a publication that failed before its manifest
  // leaves a newer private copy behind; it must not be exported).
  const std::string manifest_path = JoinPath(PublicListDir(repo, list), kManifestFileName);
  auto manifest_bytes = env->ReadFile(manifest_path, kMaxManifestBytes);
  if (!manifest_bytes.ok()) {
    if (manifest_bytes.status().code() == StatusCode::kNotFound) {
      return Status::NotFound("list " + list + " has no published version in " + repo);
    }
    return manifest_bytes.status();
  }
  auto manifest = ParseManifest(*manifest_bytes);
  if (!manifest.ok()) return manifest.status().WithContext(manifest_path);
  // The entries of that version: the newest V.entries at or below it plus the entry-list deltas of the format 2
  // incremental versions after it (publish/entry_list.h), applied in order; a missing or damaged link fails the
  // export, never a partial zone.
  auto entries = ReadEntryListAt(env, PrivateListDir(repo, list), list, manifest->version);
  if (!entries.ok()) return entries.status();
  RpzFileReport report;
  auto zone = RenderRpzZone(*entries, options, &report.stats);
  if (!zone.ok()) return zone.status();
  report.path = out_path.empty() ? PublicRpzPath(repo, list) : out_path;
  report.version = entries->version;
  report.bytes = zone->size();
  URLGUARD_RETURN_IF_ERROR(WriteFileAtomic(env, report.path, *zone));
  return report;
}

}  // namespace urlguard
