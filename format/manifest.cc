// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The manifest format of docs/manifest-format.md: canonical writer and defensive parser.
//
// The parser uses nlohmann-json with exceptions disabled (parse(..., allow_exceptions = false) returns a
// "discarded" value on a syntax error) and touches values only through type-checked accessors that cannot
// throw (find(), is_*(), get_ptr()), so no exception can leave this file.
#include "format/manifest.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "core/diff_codec.h"
#include "core/list_name.h"
#include "core/snapshot.h"
#include "format/json_strict.h"

namespace urlguard {
namespace {

using Json = nlohmann::json;

// JSON member names, indexed by LayerKind (core/layer_kind.h: domain 0, url 1, ip 2).
constexpr const char* kLayerKeys[kLayerKindCount] = {"domain", "url", "ip"};

Status FieldError(const std::string& field, const std::string& problem) {
  return Status::Corruption("manifest field '" + field + "': " + problem);
}

// ---- validation -----------------------------------------------------------------------------------------

Status ValidateFile(const ManifestFile& f, const std::string& name, uint64_t max_bytes) {
  if (!IsValidManifestPath(f.path)) {
    return FieldError(name + ".path", "not 1-" + std::to_string(kMaxManifestPathBytes) +
                                          " bytes of [a-z0-9._-] (no leading '.', no \"..\")");
  }
  if (f.size == 0 || f.size > max_bytes) {
    return FieldError(name + ".size", std::to_string(f.size) + " not in 1.." + std::to_string(max_bytes));
  }
  if (f.inflated_size == 0 || f.inflated_size > max_bytes) {
    return FieldError(name + ".inflated_size",
                      std::to_string(f.inflated_size) + " not in 1.." + std::to_string(max_bytes));
  }
  return Status::Ok();
}

// ---- canonical writer -----------------------------------------------------------------------------------

// Appends canonical JSON: the caller writes members in sorted order. Strings are written without escaping:
// every string of a valid manifest is lower-case letters, digits and "._-" (list, paths, hex digests).
class Writer {
 public:
  void Open(char c) {
    out_ += c;
    ++depth_;
    first_ = true;
  }
  void Close(char c) {
    --depth_;
    if (!first_) {  // non-empty container: closing bracket on its own line
      out_ += '\n';
      Indent();
    }
    out_ += c;
    first_ = false;
  }
  void Key(const char* name) {
    Next();
    out_ += '"';
    out_ += name;
    out_ += "\": ";
  }
  void Element() { Next(); }  // before an array element
  void Uint(uint64_t v) { out_ += std::to_string(v); }
  void Int(int64_t v) { out_ += std::to_string(v); }
  void Bool(bool v) { out_ += v ? "true" : "false"; }
  void String(std::string_view s) {
    out_ += '"';
    out_ += s;
    out_ += '"';
  }
  std::string Finish() {
    out_ += '\n';
    return std::move(out_);
  }

 private:
  void Next() {
    if (!first_) out_ += ',';
    out_ += '\n';
    Indent();
    first_ = false;
  }
  void Indent() { out_.append(static_cast<size_t>(2 * depth_), ' '); }

  std::string out_;
  int depth_ = 0;
  bool first_ = true;
};

// Members of a file object, in sorted order after any that sort before "inflated_size" (the caller's).
void WriteFileMembers(Writer* w, const ManifestFile& f) {
  w->Key("inflated_size");
  w->Uint(f.inflated_size);
  w->Key("path");
  w->String(f.path);
  w->Key("sha256");
  w->String(ToHex(f.sha256));
  w->Key("size");
  w->Uint(f.size);
}

void WritePerLayer(Writer* w, const char* key, const std::array<uint64_t, kLayerKindCount>& v) {
  w->Key(key);
  w->Open('{');
  // Sorted member names: "domain" < "ip" < "url".
  w->Key("domain");
  w->Uint(v[static_cast<size_t>(LayerKind::kDomain)]);
  w->Key("ip");
  w->Uint(v[static_cast<size_t>(LayerKind::kIp)]);
  w->Key("url");
  w->Uint(v[static_cast<size_t>(LayerKind::kUrl)]);
  w->Close('}');
}

// ---- parser -------------------------------------------------------------------------------------------

// Typed, non-throwing access to the members of one JSON object. `prefix` names the object in errors
// ("", "snapshot.", "diffs[3].").
class ObjectReader {
 public:
  ObjectReader(const Json& obj, std::string prefix) : obj_(obj), prefix_(std::move(prefix)) {}

  Status Member(const char* name, const Json** out) const {
    auto it = obj_.find(name);  // end() for a non-object too; never throws
    if (it == obj_.end()) return FieldError(prefix_ + name, "missing");
    *out = &*it;
    return Status::Ok();
  }

  Status Uint64(const char* name, uint64_t* out) const {
    const Json* v;
    URLGUARD_RETURN_IF_ERROR(Member(name, &v));
    const auto* u = v->get_ptr<const Json::number_unsigned_t*>();
    if (u == nullptr) {
      return FieldError(prefix_ + name, v->is_number() ? "not a non-negative integer (negative or fractional)"
                                                       : std::string("not a number but ") + v->type_name());
    }
    *out = *u;
    return Status::Ok();
  }

  Status Uint32(const char* name, uint32_t* out) const {
    uint64_t v = 0;
    URLGUARD_RETURN_IF_ERROR(Uint64(name, &v));
    if (v > std::numeric_limits<uint32_t>::max()) return FieldError(prefix_ + name, "out of range");
    *out = static_cast<uint32_t>(v);
    return Status::Ok();
  }

  Status Int64(const char* name, int64_t* out) const {
    const Json* v;
    URLGUARD_RETURN_IF_ERROR(Member(name, &v));
    if (const auto* u = v->get_ptr<const Json::number_unsigned_t*>()) {
      if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return FieldError(prefix_ + name, "out of range");
      }
      *out = static_cast<int64_t>(*u);
      return Status::Ok();
    }
    if (const auto* i = v->get_ptr<const Json::number_integer_t*>()) {
      *out = *i;
      return Status::Ok();
    }
    return FieldError(prefix_ + name, std::string("not an integer but ") + v->type_name());
  }

  Status Bool(const char* name, bool* out) const {
    const Json* v;
    URLGUARD_RETURN_IF_ERROR(Member(name, &v));
    const auto* b = v->get_ptr<const Json::boolean_t*>();
    if (b == nullptr) return FieldError(prefix_ + name, std::string("not a boolean but ") + v->type_name());
    *out = *b;
    return Status::Ok();
  }

  Status String(const char* name, std::string* out) const {
    const Json* v;
    URLGUARD_RETURN_IF_ERROR(Member(name, &v));
    const auto* s = v->get_ptr<const Json::string_t*>();
    if (s == nullptr) return FieldError(prefix_ + name, std::string("not a string but ") + v->type_name());
    *out = *s;
    return Status::Ok();
  }

  // Exactly 2 * N lower-case hex digits into a std::array<uint8_t, N> (a digest, a bitmap).
  template <size_t N>
  Status Hex(const char* name, std::array<uint8_t, N>* out) const {
    std::string hex;
    URLGUARD_RETURN_IF_ERROR(String(name, &hex));
    bool lower = hex.size() == 2 * N;
    for (char c : hex) lower = lower && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
    if (!lower || !FromHex(hex, out->data(), N)) {
      return FieldError(prefix_ + name, "not " + std::to_string(2 * N) + " lower-case hex digits");
    }
    return Status::Ok();
  }

  Status Object(const char* name, const Json** out) const {
    URLGUARD_RETURN_IF_ERROR(Member(name, out));
    if (!(*out)->is_object()) {
      return FieldError(prefix_ + name, std::string("not an object but ") + (*out)->type_name());
    }
    return Status::Ok();
  }

  const std::string& prefix() const { return prefix_; }

 private:
  const Json& obj_;
  std::string prefix_;
};

Status ReadFile(const ObjectReader& r, ManifestFile* f) {
  URLGUARD_RETURN_IF_ERROR(r.String("path", &f->path));
  URLGUARD_RETURN_IF_ERROR(r.Uint64("size", &f->size));
  URLGUARD_RETURN_IF_ERROR(r.Hex("sha256", &f->sha256));
  URLGUARD_RETURN_IF_ERROR(r.Uint64("inflated_size", &f->inflated_size));
  return Status::Ok();
}

Status ReadPerLayer(const ObjectReader& top, const char* name, std::array<uint64_t, kLayerKindCount>* out) {
  const Json* obj;
  URLGUARD_RETURN_IF_ERROR(top.Object(name, &obj));
  ObjectReader r(*obj, std::string(name) + ".");
  for (int k = 0; k < kLayerKindCount; ++k) {
    URLGUARD_RETURN_IF_ERROR(r.Uint64(kLayerKeys[k], &(*out)[static_cast<size_t>(k)]));
  }
  return Status::Ok();
}

// A signed document must have exactly one meaning: no duplicate member names (format/json_strict.h).
Result<Json> ParseJsonStrict(std::string_view bytes) {
  Json doc;
  std::string duplicate_name;
  switch (urlguard::ParseJsonStrict(bytes, &doc, &duplicate_name)) {
    case JsonProblem::kInvalid: return Status::Corruption("manifest is not valid JSON");
    case JsonProblem::kDuplicateMember:
      return Status::Corruption("manifest has a duplicate member \"" + duplicate_name + "\"");
    case JsonProblem::kNone: break;
  }
  return doc;
}

// A format 2 array of range diff objects ("diffs", "large_diffs").
void WriteRangeDiffs(Writer* w, const std::vector<ManifestDiff>& diffs) {
  w->Open('[');
  for (const ManifestDiff& d : diffs) {
    w->Element();
    w->Open('{');
    w->Key("from_version");
    w->Uint(d.from_version);
    WriteFileMembers(w, d.file);
    w->Key("to_version");
    w->Uint(d.to_version);
    w->Close('}');
  }
  w->Close(']');
}

// Format 2's canonical bytes: members sorted by name as format 1 (docs/manifest-format.md, "Format 2").
std::string SerializeFormat2(const Manifest& m) {
  Writer w;
  w.Open('{');
  w.Key("checkpoint");
  w.Open('{');
  w.Key("snapshot");
  w.Open('{');
  WriteFileMembers(&w, m.checkpoint.snapshot);
  w.Close('}');
  w.Key("state_bytes");
  w.Uint(m.checkpoint.state_bytes);
  w.Key("state_sha256");
  w.String(ToHex(m.checkpoint.state_sha256));
  w.Key("version");
  w.Uint(m.checkpoint.version);
  w.Close('}');
  w.Key("created_unix");
  w.Int(m.created_unix);
  w.Key("diffs");
  WriteRangeDiffs(&w, m.diffs);
  w.Key("emergency");
  w.Bool(m.emergency);
  WritePerLayer(&w, "entries", m.entries);
  w.Key("expires_unix");
  w.Int(m.expires_unix);
  w.Key("format");
  w.Uint(m.format);
  w.Key("ip_prefix_lengths");
  w.String(ToHex(m.ip_prefix_lengths.data(), m.ip_prefix_lengths.size()));
  // Only when there are any: a manifest without large diffs keeps the bytes it had before the member existed.
  if (!m.large_diffs.empty()) {
    w.Key("large_diffs");
    WriteRangeDiffs(&w, m.large_diffs);
  }
  w.Key("list");
  w.String(m.list);
  w.Key("min_wait_seconds");
  w.Uint(m.min_wait_seconds);
  w.Key("state_digest");
  w.String(ToHex(m.state_digest));
  WritePerLayer(&w, "universe", m.universe);
  w.Key("version");
  w.Uint(m.version);
  w.Close('}');
  return w.Finish();
}

// The members of both formats, describing the version.
Status ReadCommon(const ObjectReader& r, Manifest* m) {
  URLGUARD_RETURN_IF_ERROR(r.String("list", &m->list));
  URLGUARD_RETURN_IF_ERROR(r.Uint64("version", &m->version));
  URLGUARD_RETURN_IF_ERROR(r.Int64("created_unix", &m->created_unix));
  URLGUARD_RETURN_IF_ERROR(r.Int64("expires_unix", &m->expires_unix));
  URLGUARD_RETURN_IF_ERROR(r.Uint32("min_wait_seconds", &m->min_wait_seconds));
  URLGUARD_RETURN_IF_ERROR(r.Bool("emergency", &m->emergency));
  URLGUARD_RETURN_IF_ERROR(ReadPerLayer(r, "entries", &m->entries));
  URLGUARD_RETURN_IF_ERROR(ReadPerLayer(r, "universe", &m->universe));
  URLGUARD_RETURN_IF_ERROR(r.Hex("ip_prefix_lengths", &m->ip_prefix_lengths));
  return Status::Ok();
}

// A format 2 array of range diff objects named `field`, at most `cap` of them.
Status ReadRangeDiffs(const Json& array, const std::string& field, size_t cap, std::vector<ManifestDiff>* out) {
  if (!array.is_array()) return FieldError(field, std::string("not an array but ") + array.type_name());
  if (array.size() > cap) {
    return Status::ResourceExhausted("manifest lists " + std::to_string(array.size()) + " " + field + " (cap " +
                                     std::to_string(cap) + ")");
  }
  out->reserve(array.size());
  size_t i = 0;
  for (const Json& entry : array) {  // iterating an array never throws
    const std::string name = field + "[" + std::to_string(i++) + "]";
    if (!entry.is_object()) return FieldError(name, std::string("not an object but ") + entry.type_name());
    ObjectReader dr(entry, name + ".");
    ManifestDiff d;
    URLGUARD_RETURN_IF_ERROR(dr.Uint64("from_version", &d.from_version));
    URLGUARD_RETURN_IF_ERROR(dr.Uint64("to_version", &d.to_version));
    URLGUARD_RETURN_IF_ERROR(ReadFile(dr, &d.file));
    out->push_back(std::move(d));
  }
  return Status::Ok();
}

// Format 2 after "format" (docs/manifest-format.md, "Format 2"). Format 1's snapshot, state_sha256 and
// state_bytes members are not read (a publisher may add them for its own reasons; they are ignored like
// any unknown member).
Status ParseFormat2(const ObjectReader& r, Manifest* m) {
  URLGUARD_RETURN_IF_ERROR(ReadCommon(r, m));
  URLGUARD_RETURN_IF_ERROR(r.Hex("state_digest", &m->state_digest));
  const Json* checkpoint;
  URLGUARD_RETURN_IF_ERROR(r.Object("checkpoint", &checkpoint));
  const ObjectReader cr(*checkpoint, "checkpoint.");
  URLGUARD_RETURN_IF_ERROR(cr.Uint64("version", &m->checkpoint.version));
  URLGUARD_RETURN_IF_ERROR(cr.Hex("state_sha256", &m->checkpoint.state_sha256));
  URLGUARD_RETURN_IF_ERROR(cr.Uint64("state_bytes", &m->checkpoint.state_bytes));
  const Json* snapshot;
  URLGUARD_RETURN_IF_ERROR(cr.Object("snapshot", &snapshot));
  URLGUARD_RETURN_IF_ERROR(ReadFile(ObjectReader(*snapshot, "checkpoint.snapshot."), &m->checkpoint.snapshot));
  const Json* diffs;
  URLGUARD_RETURN_IF_ERROR(r.Member("diffs", &diffs));
  URLGUARD_RETURN_IF_ERROR(ReadRangeDiffs(*diffs, "diffs", kMaxManifestDiffsFormat2, &m->diffs));
  // Optional: absent in every manifest without large diffs.
  const Json* large;
  if (r.Member("large_diffs", &large).ok()) {
    URLGUARD_RETURN_IF_ERROR(ReadRangeDiffs(*large, "large_diffs", kMaxManifestLargeDiffs, &m->large_diffs));
  }
  return Status::Ok();
}

}  // namespace

bool IsValidManifestPath(std::string_view path) {
  if (path.empty() || path.size() > kMaxManifestPathBytes || path[0] == '.') return false;
  if (path.find("..") != std::string_view::npos) return false;
  for (char c : path) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

namespace {

// The members both formats share, describing the version itself.
Status ValidateCommon(const Manifest& m) {
  if (!IsValidListName(m.list)) return FieldError("list", "not a valid list name");
  if (m.version == 0) return FieldError("version", "must be >= 1");
  if (m.created_unix <= 0) return FieldError("created_unix", "must be >= 1");
  if (m.expires_unix <= m.created_unix) return FieldError("expires_unix", "must be later than created_unix");
  if (m.min_wait_seconds > kMaxManifestMinWaitSeconds) {
    return FieldError("min_wait_seconds", std::to_string(m.min_wait_seconds) + " is over the cap of " +
                                              std::to_string(kMaxManifestMinWaitSeconds));
  }
  for (int k = 0; k < kLayerKindCount; ++k) {
    const size_t i = static_cast<size_t>(k);
    if (m.universe[i] != 0 && m.entries[i] > m.universe[i]) {
      return FieldError(std::string("entries.") + kLayerKeys[k],
                        "larger than universe." + std::string(kLayerKeys[k]));
    }
  }
  IpPrefixLengths prefixes;
  prefixes.bits = m.ip_prefix_lengths;
  if (!prefixes.Valid()) {
    return FieldError("ip_prefix_lengths", "bits set outside IPv4 /0-/32 and IPv6 /0-/128");
  }
  return Status::Ok();
}

Status ValidateFormat1(const Manifest& m) {
  URLGUARD_RETURN_IF_ERROR(ValidateCommon(m));
  if (m.state_bytes == 0 || m.state_bytes > kMaxSnapshotBytes) {
    return FieldError("state_bytes",
                      std::to_string(m.state_bytes) + " not in 1.." + std::to_string(kMaxSnapshotBytes));
  }
  if (m.state_digest != Sha256Digest{} || m.checkpoint != ManifestCheckpoint{}) {
    return FieldError("checkpoint", "format 2 members set in a format 1 manifest");
  }
  URLGUARD_RETURN_IF_ERROR(ValidateFile(m.snapshot, "snapshot", kMaxSnapshotBytes));
  if (m.snapshot.inflated_size != m.state_bytes) {
    return FieldError("snapshot.inflated_size", "differs from state_bytes");
  }
  if (m.diffs.size() > kMaxManifestDiffs) {
    return Status::ResourceExhausted("manifest lists " + std::to_string(m.diffs.size()) + " diffs (cap " +
                                     std::to_string(kMaxManifestDiffs) + ")");
  }
  for (size_t i = 0; i < m.diffs.size(); ++i) {
    const ManifestDiff& d = m.diffs[i];
    const std::string name = "diffs[" + std::to_string(i) + "]";
    if (d.from_version == 0 || d.from_version >= m.version) {
      return FieldError(name + ".from_version", "must be in 1..version-1");
    }
    if (i > 0 && d.from_version <= m.diffs[i - 1].from_version) {
      return FieldError(name + ".from_version", "diffs must be sorted by strictly ascending from_version");
    }
    if (d.to_version != 0 && d.to_version != m.version) {
      return FieldError(name + ".to_version", "a format 1 diff leads to the manifest's version");
    }
    URLGUARD_RETURN_IF_ERROR(ValidateFile(d.file, name, kMaxDiffBytes));
  }
  return Status::Ok();
}

// The rules `diffs` and `large_diffs` share: their count, versions, order and file caps.
Status ValidateRangeDiffs(const Manifest& m, const std::vector<ManifestDiff>& diffs, const std::string& field,
                          size_t count_cap, uint64_t file_cap) {
  if (diffs.size() > count_cap) {
    return Status::ResourceExhausted("manifest lists " + std::to_string(diffs.size()) + " " + field + " (cap " +
                                     std::to_string(count_cap) + ")");
  }
  const ManifestCheckpoint& c = m.checkpoint;
  for (size_t i = 0; i < diffs.size(); ++i) {
    const ManifestDiff& d = diffs[i];
    const std::string name = field + "[" + std::to_string(i) + "]";
    if (d.to_version != m.version && d.to_version != c.version) {
      return FieldError(name + ".to_version", "neither the version nor checkpoint.version");
    }
    if (d.from_version == 0 || d.from_version >= d.to_version) {
      return FieldError(name + ".from_version", "must be in 1..to_version-1");
    }
    if (d.to_version == m.version && c.version < m.version && d.from_version < c.version) {
      return FieldError(name + ".from_version", "a diff to the version starts at or after the checkpoint");
    }
    if (i > 0) {
      const ManifestDiff& p = diffs[i - 1];
      if (d.to_version < p.to_version || (d.to_version == p.to_version && d.from_version <= p.from_version)) {
        return FieldError(name + ".from_version",
                          field + " must be sorted by strictly ascending (to_version, from_version)");
      }
    }
    URLGUARD_RETURN_IF_ERROR(ValidateFile(d.file, name, file_cap));
  }
  return Status::Ok();
}

Status ValidateFormat2(const Manifest& m) {
  URLGUARD_RETURN_IF_ERROR(ValidateCommon(m));
  if (m.state_sha256 != Sha256Digest{} || m.state_bytes != 0 || m.snapshot != ManifestFile{}) {
    return FieldError("snapshot", "format 1 members set in a format 2 manifest (use checkpoint)");
  }
  const ManifestCheckpoint& c = m.checkpoint;
  if (c.version == 0 || c.version > m.version) {
    return FieldError("checkpoint.version", std::to_string(c.version) + " not in 1..version");
  }
  if (c.state_bytes == 0 || c.state_bytes > kMaxSnapshotBytes) {
    return FieldError("checkpoint.state_bytes",
                      std::to_string(c.state_bytes) + " not in 1.." + std::to_string(kMaxSnapshotBytes));
  }
  URLGUARD_RETURN_IF_ERROR(ValidateFile(c.snapshot, "checkpoint.snapshot", kMaxSnapshotBytes));
  if (c.snapshot.inflated_size != c.state_bytes) {
    return FieldError("checkpoint.snapshot.inflated_size", "differs from checkpoint.state_bytes");
  }
  URLGUARD_RETURN_IF_ERROR(ValidateRangeDiffs(m, m.diffs, "diffs", kMaxManifestDiffsFormat2, kMaxDiffBytes));
  URLGUARD_RETURN_IF_ERROR(
      ValidateRangeDiffs(m, m.large_diffs, "large_diffs", kMaxManifestLargeDiffs, kMaxSnapshotBytes));
  bool has_checkpoint_to_current = false;
  for (const ManifestDiff& d : m.diffs) {
    if (d.to_version == m.version && d.from_version == c.version) has_checkpoint_to_current = true;
  }
  if (c.version < m.version && !has_checkpoint_to_current) {
    return FieldError("diffs", "no diff from checkpoint.version to the version");
  }
  for (size_t i = 0; i < m.large_diffs.size(); ++i) {
    const ManifestDiff& d = m.large_diffs[i];
    const std::string name = "large_diffs[" + std::to_string(i) + "]";
    if (d.file.size >= c.snapshot.size) {
      return FieldError(name + ".size", "not smaller than checkpoint.snapshot.size (the snapshot is the way then)");
    }
    for (const ManifestDiff& small : m.diffs) {
      if (small.from_version == d.from_version && small.to_version == d.to_version) {
        return FieldError(name, "the same range as a member of diffs");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateManifest(const Manifest& m) {
  switch (m.format) {
    case kManifestFormatVersion: return ValidateFormat1(m);
    case kManifestFormat2: return ValidateFormat2(m);
    default: break;
  }
  return FieldError("format", "unsupported manifest format " + std::to_string(m.format) +
                                  " (this build reads 1 and 2)");
}

std::string SerializeManifest(const Manifest& m) {
  if (Status s = ValidateManifest(m); !s.ok()) {
    std::fprintf(stderr, "urlguard: SerializeManifest of an invalid manifest: %s\n", s.ToString().c_str());
    std::abort();
  }
  // Changes the canonical bytes: update docs/manifest-format.md §3 and the golden test.
  if (m.format == kManifestFormat2) return SerializeFormat2(m);
  Writer w;
  w.Open('{');
  w.Key("created_unix");
  w.Int(m.created_unix);
  w.Key("diffs");
  w.Open('[');
  for (const ManifestDiff& d : m.diffs) {
    w.Element();
    w.Open('{');
    w.Key("from_version");
    w.Uint(d.from_version);
    WriteFileMembers(&w, d.file);
    w.Close('}');
  }
  w.Close(']');
  w.Key("emergency");
  w.Bool(m.emergency);
  WritePerLayer(&w, "entries", m.entries);
  w.Key("expires_unix");
  w.Int(m.expires_unix);
  w.Key("format");
  w.Uint(m.format);
  w.Key("ip_prefix_lengths");
  w.String(ToHex(m.ip_prefix_lengths.data(), m.ip_prefix_lengths.size()));
  w.Key("list");
  w.String(m.list);
  w.Key("min_wait_seconds");
  w.Uint(m.min_wait_seconds);
  w.Key("snapshot");
  w.Open('{');
  WriteFileMembers(&w, m.snapshot);
  w.Close('}');
  w.Key("state_bytes");
  w.Uint(m.state_bytes);
  w.Key("state_sha256");
  w.String(ToHex(m.state_sha256));
  WritePerLayer(&w, "universe", m.universe);
  w.Key("version");
  w.Uint(m.version);
  w.Close('}');
  return w.Finish();
}

Result<Manifest> ParseManifest(std::string_view bytes) {
  if (bytes.size() > kMaxManifestBytes) {
    return Status::ResourceExhausted("manifest of " + std::to_string(bytes.size()) + " bytes (cap " +
                                     std::to_string(kMaxManifestBytes) + ")");
  }
  URLGUARD_ASSIGN_OR_RETURN(Json doc, ParseJsonStrict(bytes));
  if (!doc.is_object()) return Status::Corruption("manifest is not a JSON object");

  Manifest m;
  ObjectReader r(doc, "");
  // The format first: a newer format may change anything else.
  URLGUARD_RETURN_IF_ERROR(r.Uint32("format", &m.format));
  if (m.format == kManifestFormat2) {
    URLGUARD_RETURN_IF_ERROR(ParseFormat2(r, &m));
    URLGUARD_RETURN_IF_ERROR(ValidateManifest(m));
    return m;
  }
  if (m.format != kManifestFormatVersion) return ValidateManifest(m);  // names the unsupported format
  URLGUARD_RETURN_IF_ERROR(r.String("list", &m.list));
  URLGUARD_RETURN_IF_ERROR(r.Uint64("version", &m.version));
  URLGUARD_RETURN_IF_ERROR(r.Int64("created_unix", &m.created_unix));
  URLGUARD_RETURN_IF_ERROR(r.Int64("expires_unix", &m.expires_unix));
  URLGUARD_RETURN_IF_ERROR(r.Uint32("min_wait_seconds", &m.min_wait_seconds));
  URLGUARD_RETURN_IF_ERROR(r.Bool("emergency", &m.emergency));
  URLGUARD_RETURN_IF_ERROR(r.Hex("state_sha256", &m.state_sha256));
  URLGUARD_RETURN_IF_ERROR(r.Uint64("state_bytes", &m.state_bytes));
  URLGUARD_RETURN_IF_ERROR(ReadPerLayer(r, "entries", &m.entries));
  URLGUARD_RETURN_IF_ERROR(ReadPerLayer(r, "universe", &m.universe));
  URLGUARD_RETURN_IF_ERROR(r.Hex("ip_prefix_lengths", &m.ip_prefix_lengths));

  const Json* snapshot;
  URLGUARD_RETURN_IF_ERROR(r.Object("snapshot", &snapshot));
  URLGUARD_RETURN_IF_ERROR(ReadFile(ObjectReader(*snapshot, "snapshot."), &m.snapshot));

  const Json* diffs;
  URLGUARD_RETURN_IF_ERROR(r.Member("diffs", &diffs));
  if (!diffs->is_array()) return FieldError("diffs", std::string("not an array but ") + diffs->type_name());
  if (diffs->size() > kMaxManifestDiffs) {
    return Status::ResourceExhausted("manifest lists " + std::to_string(diffs->size()) + " diffs (cap " +
                                     std::to_string(kMaxManifestDiffs) + ")");
  }
  m.diffs.reserve(diffs->size());
  size_t i = 0;
  for (const Json& entry : *diffs) {  // iterating an array never throws
    const std::string name = "diffs[" + std::to_string(i++) + "]";
    if (!entry.is_object()) return FieldError(name, std::string("not an object but ") + entry.type_name());
    ObjectReader dr(entry, name + ".");
    ManifestDiff d;
    URLGUARD_RETURN_IF_ERROR(dr.Uint64("from_version", &d.from_version));
    URLGUARD_RETURN_IF_ERROR(ReadFile(dr, &d.file));
    m.diffs.push_back(std::move(d));
  }
  URLGUARD_RETURN_IF_ERROR(ValidateManifest(m));
  return m;
}

const ManifestDiff* FindManifestDiff(const Manifest& manifest, uint64_t from_version) {
  // A format 2 diff is a range diff: never hand it to a version 1 diff reader.
  if (manifest.format != kManifestFormatVersion) return nullptr;
  for (const ManifestDiff& d : manifest.diffs) {
    if (d.from_version == from_version) return &d;
  }
  return nullptr;
}

const ManifestDiff* FindRangeDiff(const Manifest& manifest, uint64_t to_version, uint64_t client_version) {
  if (manifest.format != kManifestFormat2 || client_version > to_version) return nullptr;
  const ManifestDiff* best = nullptr;
  for (const std::vector<ManifestDiff>* list : {&manifest.diffs, &manifest.large_diffs}) {
    for (const ManifestDiff& d : *list) {
      if (d.to_version == to_version && d.from_version <= client_version &&
          (best == nullptr || d.from_version > best->from_version)) {
        best = &d;
      }
    }
  }
  return best;
}

uint64_t LargeRangeDiffValueCap(const Manifest& manifest) {
  uint64_t entries = 0;
  for (uint64_t e : manifest.entries) entries = e > UINT64_MAX - entries ? UINT64_MAX : entries + e;
  const uint64_t twice = entries > (UINT64_MAX - kMaxDiffEntries) / 2 ? UINT64_MAX - kMaxDiffEntries : 2 * entries;
  return kMaxDiffEntries + twice;
}

RangeDiffCaps RangeDiffCapsFor(const Manifest& manifest, const ManifestDiff& diff) {
  const ManifestDiff* first = manifest.large_diffs.data();
  if (&diff < first || &diff >= first + manifest.large_diffs.size()) return {};
  return {std::max<uint64_t>(diff.file.inflated_size, kMaxDiffBytes), LargeRangeDiffValueCap(manifest)};
}

}  // namespace urlguard
