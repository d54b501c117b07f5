// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The one CSV record loop, on its own; the CSV feed formats built on it are tested in feeds_test.cc.
#include "feeds/csv_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "feeds/feeds.h"

namespace urlguard {
namespace {

struct Seen {
  std::vector<std::string> events;  // "c:<text>", "e<line>:<message>", "r<line>:<f1>|<f2>..."
};

Status Read(std::string_view data, Seen* seen, size_t stop_after_records = SIZE_MAX) {
  size_t records = 0;
  return ForEachCsvRecord(
      data, [&](std::string_view text) { seen->events.push_back("c:" + std::string(text)); },
      [&](uint64_t line, std::string message) {
        seen->events.push_back("e" + std::to_string(line) + ":" + message);
      },
      [&](const CsvRecord& r) -> Status {
        std::string e = "r" + std::to_string(r.line) + ":";
        for (size_t i = 0; i < r.count; ++i) e += (i > 0 ? "|" : "") + std::string(r.field(i));
        seen->events.push_back(e);
        if (++records == stop_after_records) return Status::Corruption("stop");
        return Status::Ok();
      });
}

TEST(CsvReader, RecordsCommentsAndQuotedNewlines) {
  Seen seen;
  ASSERT_TRUE(Read("# head\na, b ,c\r\n\n\"x,1\",\"two\nlines\",\"q\"\"q\"\nlast", &seen).ok());
  EXPECT_EQ(seen.events,
            (std::vector<std::string>{"c:# head", "r2:a|b|c", "c:", "r4:x,1|two\nlines|q\"q", "r6:last"}));
}

TEST(CsvReader, BadRecordCostsOneLine) {
  Seen seen;
  ASSERT_TRUE(Read("\"open,1\n\"x\"y,2\nok,3\n", &seen).ok());
  ASSERT_EQ(seen.events.size(), 3u);
  EXPECT_EQ(seen.events[0].rfind("e1:", 0), 0u) << seen.events[0];
  EXPECT_EQ(seen.events[1].rfind("e2:", 0), 0u) << seen.events[1];
  EXPECT_EQ(seen.events[2], "r3:ok|3");
}

TEST(CsvReader, RecordCallbackStatusStopsTheLoop) {
  Seen seen;
  Status s = Read("a\nb\nc\n", &seen, /*stop_after_records=*/2);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_EQ(seen.events, (std::vector<std::string>{"r1:a", "r2:b"}));
}

TEST(CsvReader, LongRecordIsAnError) {
  Seen seen;
  ASSERT_TRUE(Read(std::string(kMaxFeedLineBytes + 1, 'x') + "\nok\n", &seen).ok());
  ASSERT_EQ(seen.events.size(), 2u);
  EXPECT_NE(seen.events[0].find("longer than"), std::string::npos) << seen.events[0].substr(0, 80);
  EXPECT_EQ(seen.events[1], "r2:ok");
}

TEST(CsvReader, FindColumnIgnoresCaseAndBlanks) {
  CsvReader reader("id, URL ,threat");
  CsvRecord header;
  std::string_view comment;
  std::string error;
  ASSERT_EQ(reader.Next(&header, &comment, &error), CsvStep::kRecord);
  EXPECT_EQ(FindCsvColumn(header, "url"), 1u);
  EXPECT_EQ(FindCsvColumn(header, " Threat "), 2u);
  EXPECT_EQ(FindCsvColumn(header, "tags"), kNoCsvColumn);
}

}  // namespace
}  // namespace urlguard
