// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The CSV feed formats: generic CSV, PhishTank and URLhaus (docs/feeds.md), all read through
// ForEachCsvRecord.
#include "feeds/feed_csv.h"

#include <algorithm>
#include <functional>
#include <string>

#include "core/ascii.h"
#include "feeds/csv_reader.h"
#include "feeds/feed_values.h"

namespace urlguard {
namespace {

// URLhaus CSV columns when the dump carries no "# id,dateadded,url,..." header comment (0-based).
constexpr size_t kUrlhausDefaultUrlColumn = 2;
constexpr size_t kUrlhausDefaultThreatColumn = 5;

std::string ListCsvColumns(const CsvRecord& header) {
  std::string out;
  for (size_t i = 0; i < header.count && i < 32; ++i) {
    if (i > 0) out += ", ";
    out += QuoteBytes(header.field(i));
  }
  if (header.count > 32) out += ", ...";
  return out;
}

struct CsvColumns {
  size_t value = kNoCsvColumn;
  std::string value_name;         // for messages
  size_t threat = kNoCsvColumn;   // column holding the threat type, or kNoCsvColumn
  std::string_view fixed_threat;  // used when `threat` is kNoCsvColumn
  bool empty_is_error = true;     // false: an empty value cell is skipped (generic CSV)
};

void HandleCsvRow(const CsvRecord& row, const CsvColumns& columns, FeedSink* sink) {
  if (columns.value >= row.count) {
    sink->Error(row.line, "row has " + std::to_string(row.count) + (row.count == 1 ? " field" : " fields") +
                              "; column " + columns.value_name + " (" + std::to_string(columns.value + 1) +
                              ") is missing");
    return;
  }
  std::string_view value = TrimAsciiSpace(row.field(columns.value));
  if (value.empty()) {
    if (columns.empty_is_error) {
      sink->Error(row.line, "empty " + columns.value_name + " field");
    } else {
      sink->Skip();
    }
    return;
  }
  std::string_view threat = columns.fixed_threat;
  if (columns.threat != kNoCsvColumn) {
    threat = TrimAsciiSpace(row.field(columns.threat));
    if (!IsFeedThreatName(threat)) {
      sink->Error(row.line, "unusable threat type " + QuoteBytes(threat));
      return;
    }
  }
  sink->Add(value, threat, row.line);
}

// The record loop of the CSV formats: a comment line counts as a comment (and then goes to `on_comment`,
// when given), a reader error goes to the sink, the first record goes to `first_record`, which says whether
// it was a header row (counted as a comment) or fails the parse, and every other record is an entry read
// through *columns. *saw_record turns true when the first record arrives (before `first_record` runs).
Status ForEachFeedCsvRow(std::string_view data, FeedSink* sink, const CsvColumns* columns, bool* saw_record,
                         const std::function<Result<bool>(const CsvRecord&)>& first_record,
                         const std::function<void(std::string_view)>& on_comment = nullptr) {
  *saw_record = false;
  return ForEachCsvRecord(
      data,
      [&](std::string_view comment) {
        sink->Comment();
        if (on_comment) on_comment(comment);
      },
      [&](uint64_t line, std::string error) { sink->Error(line, std::move(error)); },
      [&](const CsvRecord& record) -> Status {
        if (!*saw_record) {
          *saw_record = true;
          URLGUARD_ASSIGN_OR_RETURN(const bool header, first_record(record));
          if (header) {
            sink->Comment();
            return Status::Ok();
          }
        }
        HandleCsvRow(record, *columns, sink);
        return Status::Ok();
      });
}

// Reads "url" and "threat" positions from a header record; false when it has no "url".
bool TakeUrlhausHeader(const CsvRecord& header, CsvColumns* columns) {
  size_t url = FindCsvColumn(header, "url");
  if (url == kNoCsvColumn) return false;
  columns->value = url;
  columns->threat = FindCsvColumn(header, "threat");
  return true;
}

}  // namespace

// Parses a "1-based column number" spelled in decimal. Returns false when `text` is not all digits.
bool ParseCsvColumnNumber(std::string_view text, size_t* number) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), IsAsciiDigit)) return false;
  size_t n = 0;
  for (char c : text) {
    n = n * 10 + static_cast<size_t>(c - '0');
    if (n > kMaxFeedLineBytes) break;  // no record has that many fields; also stops overflow
  }
  *number = n;
  return true;
}

Status ParseGenericCsv(std::string_view data, std::string_view column, FeedSink* sink) {
  CsvColumns columns;
  columns.empty_is_error = false;
  size_t number = 0;
  const bool by_number = ParseCsvColumnNumber(column, &number);
  if (by_number) {
    if (number == 0 || number > kMaxFeedLineBytes) {
      return Status::InvalidArgument("csv: column number " + QuoteBytes(column) +
                                     " is out of range (1-based)");
    }
    columns.value = number - 1;
    columns.value_name = "#" + std::to_string(number);
  } else {
    if (TrimAsciiSpace(column).empty())
      return Status::InvalidArgument("csv: no column given (csv:COLUMN:PATH)");
    columns.value_name = QuoteBytes(TrimAsciiSpace(column));
  }
  bool saw_record = false;
  URLGUARD_RETURN_IF_ERROR(
      ForEachFeedCsvRow(data, sink, &columns, &saw_record, [&](const CsvRecord& header) -> Result<bool> {
        if (!by_number) {
          columns.value = FindCsvColumn(header, column);
          if (columns.value == kNoCsvColumn) {
            return Status::InvalidArgument("csv: no column " + columns.value_name +
                                           " in the header on line " + std::to_string(header.line) +
                                           " (columns: " + ListCsvColumns(header) + ")");
          }
          return true;
        }
        // With a column number the first row is a header exactly when its cell there is no plausible entry.
        return columns.value < header.count &&
               !CheckFeedValue(TrimAsciiSpace(header.field(columns.value))).empty();
      }));
  if (!saw_record && !by_number) {
    return Status::InvalidArgument("csv: no header row (looking for column " + columns.value_name + ")");
  }
  return Status::Ok();
}

// PhishTank: "phish_id,url,phish_detail_url,submission_time,verified,verification_time,online,target".
Status ParsePhishtankCsv(std::string_view data, FeedSink* sink) {
  CsvColumns columns;
  columns.value_name = "'url'";
  columns.fixed_threat = kThreatPhishing;
  bool saw_record = false;
  URLGUARD_RETURN_IF_ERROR(
      ForEachFeedCsvRow(data, sink, &columns, &saw_record, [&](const CsvRecord& header) -> Result<bool> {
        columns.value = FindCsvColumn(header, "url");
        if (columns.value == kNoCsvColumn) {
          return Status::Corruption("phishtank-csv: the header on line " + std::to_string(header.line) +
                                    " has no 'url' column (columns: " + ListCsvColumns(header) + ")");
        }
        return true;
      }));
  if (!saw_record) return Status::Corruption("phishtank-csv: no header row");
  return Status::Ok();
}

// URLhaus: "################" banner comments, "# id,dateadded,url,url_status,last_online,threat,tags,
// urlhaus_link,reporter" as the last comment, then one quoted row per URL.
Status ParseUrlhausCsv(std::string_view data, FeedSink* sink) {
  CsvColumns columns;
  columns.value = kUrlhausDefaultUrlColumn;
  columns.threat = kUrlhausDefaultThreatColumn;
  columns.value_name = "'url'";
  bool data_seen = false;
  return ForEachFeedCsvRow(
      data, sink, &columns, &data_seen,
      // An uncommented header row.
      [&](const CsvRecord& record) -> Result<bool> { return TakeUrlhausHeader(record, &columns); },
      [&](std::string_view comment) {
        if (data_seen || comment.empty()) return;
        // A comment that reads as a CSV record with a "url" field names the columns.
        std::string_view body = TrimAsciiSpace(comment.substr(1));
        if (body.find(',') == std::string_view::npos) return;
        CsvReader header_reader(body);
        CsvRecord header;
        std::string_view unused;
        std::string header_error;
        if (header_reader.Next(&header, &unused, &header_error) == CsvStep::kRecord) {
          TakeUrlhausHeader(header, &columns);
        }
      });
}

}  // namespace urlguard
