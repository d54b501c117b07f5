// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// The JSON error answer every urlguard-server endpoint uses: {"error": "..."} with Cache-Control: no-store.
#ifndef URLGUARD_SERVER_SERVER_RESPONSE_H_
#define URLGUARD_SERVER_SERVER_RESPONSE_H_

#include <string_view>

#include "http/request.h"

namespace urlguard {

HttpResponse JsonError(int status, std::string_view message);

}  // namespace urlguard

#endif  // URLGUARD_SERVER_SERVER_RESPONSE_H_
