// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// URLGUARD_EXPORT marks the symbols liburlguard.so exports; everything else is hidden.
#ifndef URLGUARD_EXPORT_H_
#define URLGUARD_EXPORT_H_

#if defined(_WIN32)
#define URLGUARD_EXPORT
#else
#define URLGUARD_EXPORT [[gnu::visibility("default")]]
#endif

#endif  // URLGUARD_EXPORT_H_
