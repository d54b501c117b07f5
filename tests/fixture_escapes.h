// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The escapes of the URL fixtures (fixtures/vectors/, fixtures/browser/): a field spells a tab, line
// feed and carriage return as \t \n \r and any other byte as \xNN; the files hold no literal backslash.
#ifndef URLGUARD_TESTS_FIXTURE_ESCAPES_H_
#define URLGUARD_TESTS_FIXTURE_ESCAPES_H_

#include <gtest/gtest.h>

#include <string>

namespace urlguard::testing {

// The bytes a fixture field stands for. An unknown escape is a test failure (and kept as it is).
inline std::string DecodeFixtureEscapes(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out.push_back(s[i]);
      continue;
    }
    const char e = s[i + 1];
    if (e == 't' || e == 'n' || e == 'r') {
      out.push_back(e == 't' ? '\t' : e == 'n' ? '\n' : '\r');
      ++i;
    } else if (e == 'x' && i + 3 < s.size()) {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 2, 2), nullptr, 16)));
      i += 3;
    } else {
      ADD_FAILURE() << "unknown escape in fixture field: " << s;
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace urlguard::testing

#endif  // URLGUARD_TESTS_FIXTURE_ESCAPES_H_
