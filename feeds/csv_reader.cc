// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The CSV record reader (contracts in csv_reader.h; the format in docs/feeds.md).
#include "feeds/csv_reader.h"

#include <algorithm>
#include <utility>

#include "core/ascii.h"
#include "feeds/feeds.h"

namespace urlguard {

CsvStep CsvReader::Next(CsvRecord* record, std::string_view* comment, std::string* error) {
  if (pos_ >= data_.size()) return CsvStep::kEnd;
  const size_t start = pos_;
  record->line = line_ + 1;
  record->count = 0;

  size_t eol = data_.find('\n', start);
  std::string_view physical =
      data_.substr(start, eol == std::string_view::npos ? data_.size() - start : eol - start);
  std::string_view trimmed = TrimAsciiSpace(physical);
  if (trimmed.empty() || trimmed.front() == '#') {
    *comment = trimmed;
    SkipToNextLine(start);
    return CsvStep::kComment;
  }

  const size_t limit = std::min(data_.size(), start + kMaxFeedLineBytes + 1);
  auto fail = [&](std::string message) {
    *error = std::move(message);
    SkipToNextLine(start);
    return CsvStep::kError;
  };
  auto too_long = [&] {
    return fail("record is longer than " + std::to_string(kMaxFeedLineBytes) + " bytes");
  };
  uint64_t newlines = 0;  // newlines consumed inside quoted fields
  size_t pos = start;
  while (true) {
    while (pos < limit && IsAsciiBlank(data_[pos])) ++pos;
    std::string* field = record->NewField();
    if (pos < data_.size() && data_[pos] == '"') {
      // Spec (RFC 4180 2.5-2.7): a quoted field may hold commas, CR/LF and doubled quotes ("").
      ++pos;
      while (true) {
        size_t quote = data_.substr(0, limit).find('"', pos);
        if (quote == std::string_view::npos) {
          return limit < data_.size() ? too_long() : fail("unterminated quoted field");
        }
        std::string_view chunk = data_.substr(pos, quote - pos);
        newlines += static_cast<uint64_t>(std::count(chunk.begin(), chunk.end(), '\n'));
        field->append(chunk);
        if (quote + 1 < data_.size() && data_[quote + 1] == '"') {
          field->push_back('"');
          pos = quote + 2;
          continue;
        }
        pos = quote + 1;
        break;
      }
      while (pos < limit && IsAsciiBlank(data_[pos])) ++pos;
      if (pos < data_.size() && data_[pos] == '\r' && (pos + 1 == data_.size() || data_[pos + 1] == '\n'))
        ++pos;
      if (pos >= limit && pos < data_.size()) return too_long();
      if (pos < data_.size() && data_[pos] != ',' && data_[pos] != '\n') {
        return fail("unexpected character " + QuoteBytes(data_.substr(pos, 1)) + " after a closing quote");
      }
    } else {
      size_t end = data_.find_first_of(",\n", pos);
      if (end == std::string_view::npos) end = data_.size();
      if (end - start > kMaxFeedLineBytes) return too_long();
      std::string_view text = data_.substr(pos, end - pos);
      if (!text.empty() && text.back() == '\r' && (end == data_.size() || data_[end] == '\n')) {
        text.remove_suffix(1);
      }
      while (!text.empty() && IsAsciiBlank(text.back())) text.remove_suffix(1);
      field->assign(text);
      pos = end;
    }
    if (pos - start > kMaxFeedLineBytes) return too_long();
    if (pos >= data_.size()) break;
    if (data_[pos] == ',') {
      ++pos;
      continue;
    }
    // data_[pos] == '\n': the record ends.
    ++pos;
    ++newlines;
    break;
  }
  pos_ = pos;
  line_ += newlines;
  return CsvStep::kRecord;
}

void CsvReader::SkipToNextLine(size_t start) {
  size_t eol = data_.find('\n', start);
  pos_ = eol == std::string_view::npos ? data_.size() : eol + 1;
  ++line_;
}

Status ForEachCsvRecord(std::string_view data, const std::function<void(std::string_view)>& on_comment,
                        const std::function<void(uint64_t, std::string)>& on_error,
                        const std::function<Status(const CsvRecord&)>& on_record) {
  CsvReader reader(data);
  CsvRecord record;
  std::string_view comment;
  std::string error;
  while (true) {
    switch (reader.Next(&record, &comment, &error)) {
      case CsvStep::kEnd:
        return Status::Ok();
      case CsvStep::kComment:
        on_comment(comment);
        break;
      case CsvStep::kError:
        on_error(record.line, std::move(error));
        break;
      case CsvStep::kRecord:
        URLGUARD_RETURN_IF_ERROR(on_record(record));
        break;
    }
  }
}

size_t FindCsvColumn(const CsvRecord& header, std::string_view name) {
  for (size_t i = 0; i < header.count; ++i) {
    if (EqualsIgnoreCase(TrimAsciiSpace(header.field(i)), TrimAsciiSpace(name))) return i;
  }
  return kNoCsvColumn;
}

}  // namespace urlguard
