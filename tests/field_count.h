// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// FieldCount<T>(): how many initializers the aggregate T takes, counted at compile time. For the tests that pin a
// public struct copied into an internal twin (or back): `static_assert(FieldCount<ServerOptions>() == 21)` stops
// the build when someone adds a field, until the test says where the new field goes and checks that it gets there.
//
// How: T{f, f, ..., f} with one more AnyField each time, until it no longer compiles; AnyField converts to any
// member type. A member array takes one initializer per element (brace elision: nothing converts to an array),
// so `uint64_t entries[3]` counts 3. T must be an aggregate without base classes (every options and report
// struct of include/urlguard/ is).
#ifndef URLGUARD_TESTS_FIELD_COUNT_H_
#define URLGUARD_TESTS_FIELD_COUNT_H_

#include <cstddef>
#include <type_traits>

namespace urlguard::testing {

struct AnyField {
  // Only named in unevaluated operands: never defined.
  template <typename T>
  operator T() const;  // NOLINT(google-explicit-constructor): converting to any member is the point
};

template <typename T, typename... Fields>
constexpr size_t FieldCount() {
  static_assert(std::is_aggregate_v<T>, "FieldCount counts the members of an aggregate");
  if constexpr (requires { T{Fields{}..., AnyField{}}; }) {
    return FieldCount<T, Fields..., AnyField>();
  } else {
    return sizeof...(Fields);
  }
}

}  // namespace urlguard::testing

#endif  // URLGUARD_TESTS_FIELD_COUNT_H_
