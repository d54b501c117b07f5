// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "publish/entry_list.h"

#include <algorithm>
#include <charconv>

#include "url/entry.h"

namespace urlguard {
namespace {

constexpr std::string_view kMagicLine = "urlguard-entries 1";

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

}  // namespace urlguard
