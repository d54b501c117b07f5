// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Internal helpers on top of the public Env (include/urlguard/env.h): atomic file replacement, temporary
// files that cannot be redirected, the private-directory check, and path arithmetic. Everything above
// platform/ reaches the OS only through an Env*, so a test can hand in an implementation that fails on
// purpose (platform/fault_injection_env.h, in the test-support library).
#ifndef URLGUARD_PLATFORM_ENV_H_
#define URLGUARD_PLATFORM_ENV_H_

#include <functional>
#include <string>
#include <string_view>

#include "urlguard/env.h"
#include "urlguard/status.h"

namespace urlguard {

// Creates the temporary file `tmp_path` for writing, safely: whatever is already there (a stale temporary
// file from a crash, or a symlink an attacker planted) is removed first (unlink removes a link, never its
// target), then the file is created with Env::NewExclusiveFile (O_CREAT|O_EXCL|O_NOFOLLOW). If something is
// planted again between the two steps the creation fails (kFailedPrecondition) rather than following it.
Result<std::unique_ptr<WritableFile>> CreateTempFile(Env* env, const std::string& tmp_path,
                                                     bool private_file = false);

// Writes `data` to `path` so that a crash at any moment leaves either the old file or the new one: write
// to `path + ".tmp"` (created with CreateTempFile), fsync, rename over `path`, fsync the directory. The
// temporary file is removed on failure.
Status WriteFileAtomic(Env* env, const std::string& path, std::string_view data, bool private_file = false);
// The same with the bytes `write` appends to the temporary file (as many Appends as it likes): for a file too
// large to build in memory first (a catch-up archive of a 100 M list is 1.4 GB). Its first error is returned and
// the temporary file removed; nothing is renamed then.
Status WriteFileAtomicWith(Env* env, const std::string& path, const std::function<Status(WritableFile&)>& write,
                           bool private_file = false);

// Ok when `dir` (after resolving symlinks) is a directory owned by the effective user of this process that
// neither its group nor others may write to, so nobody else can plant or swap files in it. Otherwise
// kPermissionDenied naming what is wrong ("D is owned by uid 65534, not by this user (uid 1000)", "D is
// writable by its group (mode 0775); chmod g-w,o-w D"), kNotFound when it does not exist,
// kFailedPrecondition when it is not a directory.
Status CheckPrivateDir(Env* env, const std::string& dir);

// Removes whatever is at `path` (a file, a symlink, a FIFO, or a directory with everything in it) without
// following symlinks: a link is removed, never its target. Ok when nothing is there. Directories nested
// deeper than kMaxRemoveTreeDepth are refused (kResourceExhausted) rather than recursed into without end.
inline constexpr int kMaxRemoveTreeDepth = 64;
Status RemoveTree(Env* env, const std::string& path);

// Gives the pages of [offset, offset + length) of a read-only mapping back to the kernel (madvise
// MADV_DONTNEED on the whole pages inside the range): they leave this process's resident set but stay in the
// page cache, and a later read maps them again (a minor fault). For code streaming once through a large
// mapping (a diff applied to a 100 M-entry list), whose RSS would otherwise grow by the file's size. Does
// nothing for a MappedFile that Env::Default() did not make (an embedder's Env may hand out heap memory,
// which MADV_DONTNEED would zero) and when the kernel refuses. Thread-safe; the bytes stay readable.
void ReleaseMappedPages(const MappedFile& file, size_t offset, size_t length);

// Tells the kernel that `file` is read at random places (madvise MADV_RANDOM): a page fault maps that one page
// instead of reading ahead around it. For lookups into a large sorted mapping (a 4.8 GB publisher state at 100 M
// entries), where readahead would read and map about 32 pages per probe that nobody asked for. Sequential walks
// of such a mapping then ask for their pages ahead themselves (PrefetchMappedPages). Same caveats as above.
void AdviseRandomAccess(const MappedFile& file);
// Asks the kernel to start reading [offset, offset + length) of `file` now (madvise MADV_WILLNEED): the readahead
// of a sequential walk over a mapping that AdviseRandomAccess turned off. Never blocks on the reads.
void PrefetchMappedPages(const MappedFile& file, size_t offset, size_t length);
// The share of `samples` pages spread evenly over `file` that are in memory (mincore): whether reading ahead is
// worth its system calls. 1.0 for a MappedFile Env::Default() did not make, or when the kernel does not say.
double SampleResidentFraction(const MappedFile& file, size_t samples);

// The directory part of `path` ("." when it has none).
std::string DirName(const std::string& path);
// The last component of `path`.
std::string BaseName(const std::string& path);
// Joins two path pieces with exactly one '/'.
std::string JoinPath(const std::string& a, const std::string& b);

}  // namespace urlguard

#endif  // URLGUARD_PLATFORM_ENV_H_
