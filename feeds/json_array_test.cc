// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The JSON array scanner on its own; the JSON feed formats built on it are tested in feeds_test.cc.
#include "feeds/json_array.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace urlguard {
namespace {

struct Walk {
  Status status;
  std::vector<std::string> events;  // "<line>:<element>" or "!<line>:<message>"
};

Walk Scan(std::string_view data, size_t cap = 1000) {
  Walk w;
  const size_t open = data.find('[');
  w.status = ForEachJsonArrayElement(
      data, open, cap,
      [&](std::string_view element, uint64_t line, std::string_view where) {
        w.events.push_back(std::to_string(line) + ":" + std::string(element) + std::string(where));
      },
      [&](uint64_t line, std::string message) {
        w.events.push_back("!" + std::to_string(line) + ":" + message);
      });
  return w;
}

TEST(JsonArray, ElementsWithLinesAndNesting) {
  Walk w = Scan("\n[ {\"a\": [1, 2], \"s\": \"],\\\"}\"},\n  {\"b\": {}} ,\n3 ]\n");
  ASSERT_TRUE(w.status.ok()) << w.status.ToString();
  EXPECT_EQ(w.events, (std::vector<std::string>{"2:{\"a\": [1, 2], \"s\": \"],\\\"}\"} (array element 1)",
                                                "3:{\"b\": {}} (array element 2)", "4:3 (array element 3)"}));
  EXPECT_TRUE(Scan("[]").status.ok());
  EXPECT_TRUE(Scan("[ ]  \n").events.empty());
}

TEST(JsonArray, ProblemsAreOneElementEach) {
  Walk w = Scan("[1,,2,]");  // an empty element is a problem; the trailing comma is tolerated
  ASSERT_TRUE(w.status.ok());
  EXPECT_EQ(w.events, (std::vector<std::string>{"1:1 (array element 1)",
                                                "!1:empty JSON array element (array element 2)",
                                                "1:2 (array element 3)"}));
  w = Scan("[\"" + std::string(20, 'x') + "\", 1]", /*cap=*/10);
  ASSERT_TRUE(w.status.ok());
  ASSERT_EQ(w.events.size(), 2u);
  EXPECT_EQ(w.events[0], "!1:JSON array element is longer than 10 bytes (array element 1)");
}

TEST(JsonArray, WholeInputFailures) {
  EXPECT_EQ(Scan("[1, 2").status.code(), StatusCode::kCorruption);
  EXPECT_EQ(Scan("[\"open string]").status.code(), StatusCode::kCorruption);
  EXPECT_EQ(Scan("[1}").status.code(), StatusCode::kCorruption);
  EXPECT_EQ(Scan("[1] x").status.code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace urlguard
