// Copyright urlguard authors.
//
// Internal include for code inside the project that starts the reference server (tests, benchmarks): the
// public API (include/urlguard/server.h) plus the verify API's request limits (publish/verify_request.h).
// New code includes those two directly.
#ifndef URLGUARD_PUBLISH_SERVER_H_
#define URLGUARD_PUBLISH_SERVER_H_

#include "publish/verify_request.h"
#include "urlguard/server.h"

#endif  // URLGUARD_PUBLISH_SERVER_H_
