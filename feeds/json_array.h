// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Cuts a top-level JSON array into its elements without parsing them: a small scanner tracks strings and
// bracket depth, so a caller can parse each element alone (one bad element costs one element, memory stays
// bounded by the element cap instead of a DOM of the whole file, and every element gets a line number).
#ifndef URLGUARD_FEEDS_JSON_ARRAY_H_
#define URLGUARD_FEEDS_JSON_ARRAY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "urlguard/status.h"

namespace urlguard {

// JSON's whitespace (RFC 8259 §2): space, tab, CR, LF.
constexpr bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Walks the array that opens at data[open] == '['. For each element calls on_element(text, line, where):
// the element's text (trimmed), the line it starts on, and " (array element N)" for messages. An empty
// element (except the one a trailing comma leaves, "[a,]") and an element over max_element_bytes go to
// on_problem(line, message) instead. kCorruption for an unterminated array, an unbalanced '}', or bytes
// other than whitespace after the array.
Status ForEachJsonArrayElement(
    std::string_view data, size_t open, size_t max_element_bytes,
    const std::function<void(std::string_view, uint64_t, std::string_view)>& on_element,
    const std::function<void(uint64_t, std::string)>& on_problem);

}  // namespace urlguard

#endif  // URLGUARD_FEEDS_JSON_ARRAY_H_
