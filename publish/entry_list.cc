// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/entry_list.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>

#include "url/entry.h"

namespace urlguard {
namespace {

constexpr std::string_view kMagicLine = "urlguard-entries 1";
constexpr std::string_view kDeltaMagicLine = "urlguard-entries-delta 1";

void SortUnique(std::vector<std::string>* v) {
  std::sort(v->begin(), v->end());
  v->erase(std::unique(v->begin(), v->end()), v->end());
}

bool ParseU64(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

// A value is one token: no space, no control byte (domain names and ranges never hold one).
bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return false;
  }
  return true;
}

// An unsigned number in canonical decimal ("0", "17"; no leading zeros): a delta has one spelling.
bool ParseCanonicalU64(std::string_view s, uint64_t* out) {
  return !s.empty() && (s.size() == 1 || s[0] != '0') && ParseU64(s, out);
}

// A signed count in canonical decimal: "0", "17", "-3" (no sign on zero, no leading zeros), |n| <= INT64_MAX.
bool ParseI64(std::string_view s, int64_t* out) {
  const bool negative = !s.empty() && s[0] == '-';
  const std::string_view digits = negative ? s.substr(1) : s;
  if (digits.empty() || (digits.size() > 1 && digits[0] == '0') || (negative && digits == "0")) return false;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  uint64_t v = 0;
  if (!ParseU64(digits, &v) || v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
  *out = negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

// One kind's "+KIND name" / "-KIND name" lines in name order.
void AppendDeltaLines(std::string* out, std::string_view kind, const std::vector<std::string>& added,
                      const std::vector<std::string>& removed) {
  size_t a = 0, r = 0;
  while (a < added.size() || r < removed.size()) {
    const bool add = r == removed.size() || (a < added.size() && added[a] <= removed[r]);
    *out += add ? '+' : '-';
    *out += kind;
    *out += ' ';
    *out += add ? added[a++] : removed[r++];
    *out += '\n';
  }
}

}  // namespace

std::string SerializeEntryList(EntryList list) {
  SortUnique(&list.domains);
  SortUnique(&list.ip_ranges);
  std::string out;
  out += kMagicLine;
  out += "\nlist " + list.list + "\nversion " + std::to_string(list.version) + "\nurl-entries " +
         std::to_string(list.url_entries) + "\n";
  for (const std::string& d : list.domains) out += "domain " + d + "\n";
  for (const std::string& r : list.ip_ranges) out += "ip " + r + "\n";
  out += "end " + std::to_string(list.domains.size() + list.ip_ranges.size()) + "\n";
  return out;
}

Result<EntryList> ParseEntryList(std::string_view bytes) {
  EntryList list;
  uint64_t line_no = 0;
  bool have_list = false, have_version = false, have_urls = false, ended = false;
  auto bad = [&](const std::string& what) {
    return Status::Corruption("entry list line " + std::to_string(line_no) + ": " + what);
  };
  while (!bytes.empty()) {
    ++line_no;
    size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) return bad("no final newline (truncated file)");
    std::string_view line = bytes.substr(0, nl);
    bytes.remove_prefix(nl + 1);
    if (line.size() > kMaxEntryListLineBytes) return bad("longer than " + std::to_string(kMaxEntryListLineBytes));
    if (ended) return bad("data after \"end\"");
    if (line_no == 1) {
      if (line != kMagicLine) return bad("not an urlguard entry list (expected \"urlguard-entries 1\")");
      continue;
    }
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos) return bad("expected \"KEYWORD VALUE\"");
    std::string_view key = line.substr(0, sp), value = line.substr(sp + 1);
    if (!IsToken(value)) return bad("bad value");
    if (key == "domain") {
      list.domains.emplace_back(value);
    } else if (key == "ip") {
      uint8_t addr[16];
      bool v6 = false;
      int len = 0;
      if (!ParseIpOrCidr(value, addr, &v6, &len)) return bad("not an address range");
      list.ip_ranges.emplace_back(value);
    } else if (key == "list" && !have_list) {
      list.list = value;
      have_list = true;
    } else if (key == "version" && !have_version) {
      if (!ParseU64(value, &list.version)) return bad("bad version");
      have_version = true;
    } else if (key == "url-entries" && !have_urls) {
      if (!ParseU64(value, &list.url_entries)) return bad("bad url-entries count");
      have_urls = true;
    } else if (key == "end") {
      uint64_t n = 0;
      if (!ParseU64(value, &n) || n != list.domains.size() + list.ip_ranges.size()) {
        return bad("\"end\" count does not match the entries read");
      }
      ended = true;
    } else {
      return bad("unexpected keyword");
    }
  }
  if (line_no == 0) return Status::Corruption("entry list: empty file");
  if (!have_list || !have_version || !have_urls) return Status::Corruption("entry list: header incomplete");
  if (!ended) return Status::Corruption("entry list: no \"end\" line (truncated file)");
  return list;
}

Result<EntryList> ReadEntryList(Env* env, const std::string& path) {
  auto bytes = env->ReadFile(path, kMaxEntryListBytes);
  if (!bytes.ok()) return bytes.status();
  auto list = ParseEntryList(*bytes);
  if (!list.ok()) return list.status().WithContext(path);
  return list;
}

Result<std::unique_ptr<EntryListReader>> EntryListReader::Open(const std::string& path) {
  std::unique_ptr<EntryListReader> r(new EntryListReader());
  URLGUARD_ASSIGN_OR_RETURN(r->file_, SequentialFile::Open(path));
  const char* keys[] = {nullptr, "list", "version", "url-entries"};
  for (int i = 0; i < 4; ++i) {
    std::string_view line;
    URLGUARD_ASSIGN_OR_RETURN(bool has, r->NextLine(&line));
    if (!has) return r->Bad("header incomplete");
    if (i == 0) {
      if (line != kMagicLine) return r->Bad("not an urlguard entry list (expected \"urlguard-entries 1\")");
      continue;
    }
    size_t sp = line.find(' ');
    if (sp == std::string_view::npos || line.substr(0, sp) != keys[i]) return r->Bad("header incomplete");
    std::string_view value = line.substr(sp + 1);
    uint64_t n = 0;
    if (i == 1) {
      r->list_ = std::string(value);
    } else if (!ParseU64(value, &n)) {
      return r->Bad("bad number");
    } else if (i == 2) {
      r->version_ = n;
    } else {
      r->url_entries_ = n;
    }
  }
  return r;
}

Status EntryListReader::Bad(const std::string& what) const {
  return Status::Corruption(file_->path() + ": entry list line " + std::to_string(line_no_) + ": " + what);
}

Result<bool> EntryListReader::NextLine(std::string_view* line) {
  for (;;) {
    size_t nl = buffer_.find('\n', pos_);
    if (nl != std::string::npos) {
      *line = std::string_view(buffer_).substr(pos_, nl - pos_);
      pos_ = nl + 1;
      ++line_no_;
      if (line->size() > kMaxEntryListLineBytes) return Bad("longer than " + std::to_string(kMaxEntryListLineBytes));
      return true;
    }
    if (buffer_.size() - pos_ > kMaxEntryListLineBytes) {
      ++line_no_;
      return Bad("longer than " + std::to_string(kMaxEntryListLineBytes));
    }
    if (eof_) {
      if (pos_ != buffer_.size()) return Bad("no final newline (truncated file)");
      return false;
    }
    buffer_.erase(0, pos_);
    pos_ = 0;
    size_t at = buffer_.size();
    buffer_.resize(at + (size_t{256} << 10));
    URLGUARD_ASSIGN_OR_RETURN(size_t n, file_->Read(buffer_.data() + at, buffer_.size() - at));
    buffer_.resize(at + n);
    eof_ = n == 0;
  }
}

Result<bool> EntryListReader::Next(bool* ip_range, std::string* value) {
  if (ended_) return false;
  std::string_view line;
  URLGUARD_ASSIGN_OR_RETURN(bool has, NextLine(&line));
  if (!has) return Bad("no \"end\" line (truncated file)");
  size_t sp = line.find(' ');
  if (sp == std::string_view::npos) return Bad("expected \"KEYWORD VALUE\"");
  std::string_view key = line.substr(0, sp), v = line.substr(sp + 1);
  if (key == "end") {
    uint64_t n = 0;
    if (!ParseU64(v, &n) || n != entries_) return Bad("\"end\" count does not match the entries read");
    std::string_view rest;
    URLGUARD_ASSIGN_OR_RETURN(bool more, NextLine(&rest));
    if (more) return Bad("data after \"end\"");
    ended_ = true;
    return false;
  }
  if (!IsToken(v)) return Bad("bad value");
  if (key == "domain") {
    *ip_range = false;
  } else if (key == "ip") {
    *ip_range = true;
  } else {
    return Bad("unexpected keyword");
  }
  *value = std::string(v);
  ++entries_;
  return true;
}

// ---- Entry-list deltas (format 2 incremental versions) ----

std::string SerializeEntryListDelta(EntryListDelta d) {
  for (std::vector<std::string>* v : {&d.added_domains, &d.removed_domains, &d.added_ip_ranges, &d.removed_ip_ranges}) {
    SortUnique(v);
  }
  std::string out;
  out += kDeltaMagicLine;
  out += "\nlist " + d.list + "\nversion " + std::to_string(d.version) + "\nbase " +
         std::to_string(d.version == 0 ? 0 : d.version - 1) + "\nurl-entries-change " +
         std::to_string(d.url_entries_change) + "\n";
  AppendDeltaLines(&out, "domain", d.added_domains, d.removed_domains);
  AppendDeltaLines(&out, "ip", d.added_ip_ranges, d.removed_ip_ranges);
  out += "end " + std::to_string(d.added_domains.size() + d.removed_domains.size() + d.added_ip_ranges.size() +
                                 d.removed_ip_ranges.size()) + "\n";
  return out;
}

Result<EntryListDelta> ParseEntryListDelta(std::string_view bytes) {
  static constexpr std::string_view kHeaderKeys[] = {"list", "version", "base", "url-entries-change"};
  EntryListDelta d;
  uint64_t line_no = 0, changes = 0, base = 0;
  bool ended = false;
  int section = 0;  // 0 domain lines, 1 ip lines: domains come first
  std::string_view last;
  bool have_last = false;
  auto bad = [&](const std::string& what) {
    return Status::Corruption("entry list delta line " + std::to_string(line_no) + ": " + what);
  };
  while (!bytes.empty()) {
    ++line_no;
    const size_t nl = bytes.find('\n');
    if (nl == std::string_view::npos) return bad("no final newline (truncated file)");
    const std::string_view line = bytes.substr(0, nl);
    bytes.remove_prefix(nl + 1);
    if (line.size() > kMaxEntryListLineBytes) return bad("longer than " + std::to_string(kMaxEntryListLineBytes));
    if (ended) return bad("data after \"end\"");
    if (line_no == 1) {
      if (line != kDeltaMagicLine) return bad("not an urlguard entry list delta (expected \"urlguard-entries-delta 1\")");
      continue;
    }
    const size_t sp = line.find(' ');
    if (sp == std::string_view::npos) return bad("expected \"KEYWORD VALUE\"");
    const std::string_view key = line.substr(0, sp), value = line.substr(sp + 1);
    if (!IsToken(value)) return bad("bad value");
    if (line_no <= 5) {  // the header, in this order
      if (key != kHeaderKeys[line_no - 2]) return bad("expected \"" + std::string(kHeaderKeys[line_no - 2]) + "\"");
      if (line_no == 2) {
        d.list = value;
      } else if (line_no == 3) {
        if (!ParseCanonicalU64(value, &d.version) || d.version < 2) return bad("bad version (a delta's is at least 2)");
      } else if (line_no == 4) {
        if (!ParseCanonicalU64(value, &base) || base != d.version - 1) return bad("the base must be version - 1");
      } else if (!ParseI64(value, &d.url_entries_change)) {
        return bad("bad url-entries-change");
      }
      continue;
    }
    if (key == "end") {
      uint64_t n = 0;
      if (!ParseCanonicalU64(value, &n) || n != changes) return bad("\"end\" count does not match the changes read");
      ended = true;
      continue;
    }
    if (key.size() < 2) return bad("unexpected keyword");
    const char op = key[0];
    const std::string_view kind = key.substr(1);
    const int k = kind == "domain" ? 0 : kind == "ip" ? 1 : -1;
    if ((op != '+' && op != '-') || k < 0) return bad("unexpected keyword");
    if (k < section) return bad("a domain line after the ip lines");
    if (k > section) {
      section = k;
      have_last = false;
    }
    if (k == 1) {
      uint8_t addr[16];
      bool v6 = false;
      int len = 0;
      if (!ParseIpOrCidr(value, addr, &v6, &len)) return bad("not an address range");
    }
    if (have_last && !(last < value)) return bad("names not strictly ascending (each at most once)");
    last = value;
    have_last = true;
    std::vector<std::string>* to = k == 0 ? (op == '+' ? &d.added_domains : &d.removed_domains)
                                          : (op == '+' ? &d.added_ip_ranges : &d.removed_ip_ranges);
    to->emplace_back(value);
    ++changes;
  }
  if (line_no == 0) return Status::Corruption("entry list delta: empty file");
  if (line_no < 5) return Status::Corruption("entry list delta: header incomplete");
  if (!ended) return Status::Corruption("entry list delta: no \"end\" line (truncated file)");
  return d;
}

Result<EntryListDelta> ReadEntryListDelta(Env* env, const std::string& path) {
  auto bytes = env->ReadFile(path, kMaxEntryListDeltaBytes);
  if (!bytes.ok()) return bytes.status();
  auto delta = ParseEntryListDelta(*bytes);
  if (!delta.ok()) return delta.status().WithContext(path);
  return delta;
}

Result<std::unique_ptr<EntryListChainReader>> EntryListChainReader::Open(Env* env, const std::string& private_dir,
                                                                         const std::string& list, uint64_t version) {
  std::unique_ptr<EntryListChainReader> r(new EntryListChainReader());
  r->list_ = list;
  r->version_ = version;
  auto names = env->ListDir(private_dir);
  bool found = false;
  if (names.ok()) {
    for (const std::string& n : *names) {
      std::optional<uint64_t> v = ParseEntryListFileName(n);
      if (v && *v <= version && (!found || *v > r->base_version_)) {
        r->base_version_ = *v;
        found = true;
      }
    }
  } else if (names.status().code() != StatusCode::kNotFound) {
    return names.status();
  }
  if (!found) {
    return Status::NotFound("no entry list for " + list + " version " + std::to_string(version) + " or before in " +
                            private_dir + ": it was published without one; publish it in full once more");
  }
  const std::string base_path = JoinPath(private_dir, EntryListFileName(r->base_version_));
  URLGUARD_ASSIGN_OR_RETURN(r->base_, EntryListReader::Open(base_path));
  if (r->base_->list() != list || r->base_->version() != r->base_version_) {
    return Status::Corruption(base_path + " describes " + r->base_->list() + " version " +
                              std::to_string(r->base_->version()));
  }
  uint64_t urls = r->base_->url_entries();
  // Fold the deltas in order: the first one naming an entry says what the base must hold; later ones must agree
  // with what the earlier ones left.
  for (uint64_t v = r->base_version_ + 1; v <= version; ++v) {
    const std::string path = JoinPath(private_dir, EntryListDeltaFileName(v));
    auto d = ReadEntryListDelta(env, path);
    if (!d.ok()) {
      if (d.status().code() == StatusCode::kNotFound) {
        return Status::NotFound("the entry list delta of " + list + " version " + std::to_string(v) + " (" + path +
                                ") is missing, so version " + std::to_string(version) + "'s entries cannot be made "
                                "from version " + std::to_string(r->base_version_) + "'s: publish it in full once more");
      }
      return d.status();
    }
    if (d->list != list || d->version != v) {
      return Status::Corruption(path + " describes " + d->list + " version " + std::to_string(d->version));
    }
    auto apply = [&](int kind, const std::vector<std::string>& names, bool add) -> Status {
      for (const std::string& name : names) {
        auto [it, inserted] = r->changes_[kind].try_emplace(name);
        if (inserted) {
          it->second.in_base = !add;
        } else if (it->second.present == add) {
          return Status::Corruption(path + (add ? " adds " : " removes ") + name + ", which version " +
                                    std::to_string(v - 1) + (add ? " lists already" : " does not list"));
        }
        it->second.present = add;
      }
      return Status::Ok();
    };
    URLGUARD_RETURN_IF_ERROR(apply(0, d->added_domains, true));
    URLGUARD_RETURN_IF_ERROR(apply(0, d->removed_domains, false));
    URLGUARD_RETURN_IF_ERROR(apply(1, d->added_ip_ranges, true));
    URLGUARD_RETURN_IF_ERROR(apply(1, d->removed_ip_ranges, false));
    const int64_t c = d->url_entries_change;
    const uint64_t magnitude = c < 0 ? static_cast<uint64_t>(-c) : static_cast<uint64_t>(c);
    if (c < 0 ? magnitude > urls : magnitude > std::numeric_limits<uint64_t>::max() - urls) {
      return Status::Corruption(path + ": url-entries-change " + std::to_string(c) + " does not apply to " +
                                std::to_string(urls) + " url entries");
    }
    urls = c < 0 ? urls - magnitude : urls + magnitude;
  }
  r->url_entries_ = urls;
  for (int k = 0; k < 2; ++k) r->at_[k] = r->changes_[k].begin();
  URLGUARD_ASSIGN_OR_RETURN(r->base_has_, r->NextBase());
  return r;
}

Status EntryListChainReader::Bad(const std::string& what) const {
  return Status::Corruption("entries of " + list_ + " version " + std::to_string(version_) + " from version " +
                            std::to_string(base_version_) + ": " + what);
}

Result<bool> EntryListChainReader::NextBase() {
  URLGUARD_ASSIGN_OR_RETURN(bool has, base_->Next(&base_ip_, &base_value_));
  if (!has) return false;
  // The merge below relies on the base's order: check it (the base is the publisher's own, but cheaply).
  if (have_last_ && (base_ip_ < last_ip_ || (base_ip_ == last_ip_ && base_value_ <= last_))) {
    return Bad("the entry list is not sorted at " + base_value_);
  }
  have_last_ = true;
  last_ip_ = base_ip_;
  last_ = base_value_;
  return true;
}

Result<bool> EntryListChainReader::Next(bool* ip_range, std::string* value) {
  for (;;) {
    while (kind_ < 2 && at_[kind_] == changes_[kind_].end()) ++kind_;
    const bool have_change = kind_ < 2;
    if (!base_has_ && !have_change) return false;
    int c = 0;  // base head versus change head, in (kind, name) order
    if (!have_change) {
      c = -1;
    } else if (!base_has_) {
      c = 1;
    } else if ((base_ip_ ? 1 : 0) != kind_) {
      c = (base_ip_ ? 1 : 0) < kind_ ? -1 : 1;
    } else {
      const int cmp = base_value_.compare(at_[kind_]->first);
      c = cmp < 0 ? -1 : cmp > 0 ? 1 : 0;
    }
    if (c < 0) {
      *ip_range = base_ip_;
      *value = base_value_;
      URLGUARD_ASSIGN_OR_RETURN(base_has_, NextBase());
      return true;
    }
    const std::string& name = at_[kind_]->first;
    const Change change = at_[kind_]->second;
    if (c == 0 && !change.in_base) return Bad("a delta adds " + name + ", which the base lists already");
    if (c > 0 && change.in_base) return Bad("a delta removes " + name + ", which the base does not list");
    const bool ip = kind_ == 1;
    if (change.present) *value = name;
    ++at_[kind_];
    if (c == 0) {
      URLGUARD_ASSIGN_OR_RETURN(base_has_, NextBase());
    }
    if (change.present) {
      *ip_range = ip;
      return true;
    }
  }
}

Result<EntryList> ReadEntryListAt(Env* env, const std::string& private_dir, const std::string& list,
                                  uint64_t version) {
  URLGUARD_ASSIGN_OR_RETURN(auto chain, EntryListChainReader::Open(env, private_dir, list, version));
  EntryList out;
  out.list = list;
  out.version = version;
  out.url_entries = chain->url_entries();
  bool ip = false;
  std::string value;
  for (;;) {
    URLGUARD_ASSIGN_OR_RETURN(bool has, chain->Next(&ip, &value));
    if (!has) break;
    (ip ? out.ip_ranges : out.domains).push_back(value);
  }
  return out;
}

Status WriteEntryListFile(Env* env, const std::string& path, const std::string& list, uint64_t version,
                          uint64_t url_entries, const std::function<Result<bool>(bool* ip, std::string* value)>& next) {
  auto write = [&]() -> Status {
    URLGUARD_ASSIGN_OR_RETURN(auto file, CreateTempFile(env, path + ".tmp"));
    std::string buf = std::string(kMagicLine) + "\nlist " + list + "\nversion " + std::to_string(version) +
                      "\nurl-entries " + std::to_string(url_entries) + "\n";
    uint64_t n = 0;
    bool ip = false;
    std::string value;
    for (;;) {
      URLGUARD_ASSIGN_OR_RETURN(bool has, next(&ip, &value));
      if (!has) break;
      buf += ip ? "ip " : "domain ";
      buf += value;
      buf += '\n';
      ++n;
      if (buf.size() >= (size_t{1} << 20)) {
        URLGUARD_RETURN_IF_ERROR(file->Append(buf));
        buf.clear();
      }
    }
    buf += "end " + std::to_string(n) + "\n";
    URLGUARD_RETURN_IF_ERROR(file->Append(buf));
    URLGUARD_RETURN_IF_ERROR(file->Sync());
    URLGUARD_RETURN_IF_ERROR(file->Close());
    URLGUARD_RETURN_IF_ERROR(env->RenameFile(path + ".tmp", path));
    return env->SyncDir(DirName(path));
  };
  Status s = write();
  if (!s.ok()) (void)env->RemoveFile(path + ".tmp");
  return s;
}

Status FoldEntryList(Env* env, const std::string& private_dir, const std::string& list, uint64_t version) {
  URLGUARD_ASSIGN_OR_RETURN(auto chain, EntryListChainReader::Open(env, private_dir, list, version));
  if (chain->base_version() == version) return Status::Ok();
  return WriteEntryListFile(env, JoinPath(private_dir, EntryListFileName(version)), list, version,
                            chain->url_entries(),
                            [&](bool* ip, std::string* value) { return chain->Next(ip, value); });
}

}  // namespace urlguard
