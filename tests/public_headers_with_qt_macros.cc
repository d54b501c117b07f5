// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Every public header must compile in a Qt program, where `signals`, `slots` and `emit` are macros (Qt's
// qobjectdefs.h: `#define signals public`, `#define slots`, `#define emit`). This file defines them the same way
// and includes every installed header; it is built with the tests, so a header that uses one of these words as a
// name breaks the build (as env.h's `signals` parameter once broke the demo browser).
#define signals public
#define slots
#define emit
#define foreach for

#include "urlguard/checker.h"
#include "urlguard/client.h"
#include "urlguard/env.h"
#include "urlguard/export.h"
#include "urlguard/keys.h"
#include "urlguard/plan.h"
#include "urlguard/render.h"
#include "urlguard/status.h"
#include "urlguard/sync.h"
#include "urlguard/text.h"
#include "urlguard/urlguard.h"
#include "urlguard/version.h"
