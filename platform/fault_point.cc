// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
#include "platform/fault_point.h"

// Everything below exists only in builds with fault points (platform/fault_point.h); elsewhere this file compiles
// to an object with no code and no strings.
#if defined(URLGUARD_FAULT_POINTS)

#include <signal.h>

#include <optional>
#include <string>

#include "urlguard/env.h"

namespace urlguard {

void FaultPointReached(const char* name) {
  const std::optional<std::string> armed = Env::Default()->GetEnvVar(kFaultKillEnvVar);
  // SIGKILL, not exit() or abort(): no destructor, atexit handler or buffered write runs, as when the machine
  // loses power or an operator runs kill -9, which is what the tests mean to survive.
  if (armed.has_value() && *armed == name) ::raise(SIGKILL);
}

}  // namespace urlguard

#endif  // URLGUARD_FAULT_POINTS
