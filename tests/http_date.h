// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// HttpDate: a Unix time as an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT", RFC 9110 §5.6.7), for tests whose
// servers send Date or Retry-After headers.
#ifndef URLGUARD_TESTS_HTTP_DATE_H_
#define URLGUARD_TESTS_HTTP_DATE_H_

#include <cstdint>
#include <ctime>
#include <string>

namespace urlguard::testing {

inline std::string HttpDate(int64_t t) {
  const time_t tt = static_cast<time_t>(t);
  tm parts{};
  gmtime_r(&tt, &parts);
  char buf[64];
  strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &parts);
  return buf;
}

}  // namespace urlguard::testing

#endif  // URLGUARD_TESTS_HTTP_DATE_H_
