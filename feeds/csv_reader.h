// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// One CSV record reader for the feed formats (docs/feeds.md): RFC 4180 records plus what real feeds do,
// and ForEachCsvRecord, the one loop over a file's records that every CSV format uses.
#ifndef URLGUARD_FEEDS_CSV_READER_H_
#define URLGUARD_FEEDS_CSV_READER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "urlguard/status.h"

namespace urlguard {

// "No such column".
inline constexpr size_t kNoCsvColumn = static_cast<size_t>(-1);

struct CsvRecord {
  std::vector<std::string> fields;  // fields[0, count) are this record's; later ones are stale buffers
  size_t count = 0;
  uint64_t line = 0;  // 1-based line where the record starts

  std::string_view field(size_t i) const {
    return i < count ? std::string_view(fields[i]) : std::string_view();
  }
  std::string* NewField() {
    if (count == fields.size()) fields.emplace_back();
    std::string* f = &fields[count++];
    f->clear();
    return f;
  }
};

enum class CsvStep { kEnd, kComment, kRecord, kError };

// RFC 4180 records plus what real feeds do: '#' comment lines and blank lines between records, CRLF or LF,
// blanks around fields, a '"' inside an unquoted field kept as is.
class CsvReader {
 public:
  explicit CsvReader(std::string_view data) : data_(data) {}

  // Reads the next record into `*record`. kComment: a blank or '#' line (its text in `*comment`).
  // kError: a bad record (`*error` says why, record->line where); reading resumes at the next line.
  CsvStep Next(CsvRecord* record, std::string_view* comment, std::string* error);

 private:
  void SkipToNextLine(size_t start);

  std::string_view data_;
  size_t pos_ = 0;
  uint64_t line_ = 0;  // lines fully consumed so far
};

// The record loop: reads every record of `data` in order and calls
//   on_comment(text)         for a blank or '#' line (text trimmed),
//   on_error(line, message)  for a bad record (reading resumes at the line after its first line),
//   on_record(record)        for each record; a non-ok Status stops the loop and is returned.
Status ForEachCsvRecord(std::string_view data, const std::function<void(std::string_view)>& on_comment,
                        const std::function<void(uint64_t, std::string)>& on_error,
                        const std::function<Status(const CsvRecord&)>& on_record);

// Index of the header field equal (ignoring case and blanks) to `name`, or kNoCsvColumn.
size_t FindCsvColumn(const CsvRecord& header, std::string_view name);

}  // namespace urlguard

#endif  // URLGUARD_FEEDS_CSV_READER_H_
