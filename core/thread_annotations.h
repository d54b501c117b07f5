// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// Locks that say what they guard, to the compiler. clang's thread-safety analysis (-Wthread-safety, an error
// in every clang build: CMakeLists.txt) checks at compile time that a member marked GUARDED_BY(mu_) is
// touched only with mu_ held, that a function marked REQUIRES(mu_) is called only with it held, and that
// every lock taken is released on every path. A comment saying "guards x" is checked by nobody; these are
// checked on every build.
//
// Why a Mutex of our own: libstdc++'s std::mutex carries no capability attributes, so the analysis cannot see
// a std::lock_guard<std::mutex> take anything. Mutex wraps std::mutex and is the capability; MutexLock is the
// scoped lock; CondVar waits on a Mutex. They add no state and no cost over the std types (every member is
// inline). Mutex deliberately has no lock()/unlock(): a std::lock_guard<Mutex> would compile and hide the
// lock from the analysis.
//
// Usage:
//   Mutex mu_;
//   int count_ GUARDED_BY(mu_) = 0;
//   void BumpLocked() REQUIRES(mu_) { ++count_; }
//   void Bump() EXCLUDES(mu_) { MutexLock lock(&mu_); BumpLocked(); }
// Waiting: `MutexLock lock(&mu_); while (!ready_) cv_.Wait(&mu_);` (a loop in the caller, not a predicate
// lambda, so the analysis sees the guarded reads under the lock). To drop the lock for a while inside a
// MutexLock's scope: mu_.Unlock(); ...; mu_.Lock(); the analysis checks that the pair matches.
//
// Under GCC (and any compiler without the analysis) the annotation macros are empty; the types still work.
// In core/, the bottom layer, so that every folder (platform/ included) can annotate its locks; header-only,
// it reaches the OS only through std::mutex and std::condition_variable.
// The attributes are clang's: https://clang.llvm.org/docs/ThreadSafetyAnalysis.html
#ifndef URLGUARD_CORE_THREAD_ANNOTATIONS_H_
#define URLGUARD_CORE_THREAD_ANNOTATIONS_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define URLGUARD_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define URLGUARD_THREAD_ANNOTATION_(x)
#endif

// On a class: its objects are capabilities (locks) of the named kind ("mutex").
#define CAPABILITY(x) URLGUARD_THREAD_ANNOTATION_(capability(x))
// On a class: an RAII object that holds a capability from construction to destruction.
#define SCOPED_CAPABILITY URLGUARD_THREAD_ANNOTATION_(scoped_lockable)
// On a member: read and written only with capability x held.
#define GUARDED_BY(x) URLGUARD_THREAD_ANNOTATION_(guarded_by(x))
// On a pointer member: what it points to is read and written only with x held (the pointer itself is not).
#define PT_GUARDED_BY(x) URLGUARD_THREAD_ANNOTATION_(pt_guarded_by(x))
// On a capability member: the lock order (taken before / after the named ones).
#define ACQUIRED_BEFORE(...) URLGUARD_THREAD_ANNOTATION_(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) URLGUARD_THREAD_ANNOTATION_(acquired_after(__VA_ARGS__))
// On a function: the caller must hold the capabilities (exclusively / at least shared).
#define REQUIRES(...) URLGUARD_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) URLGUARD_THREAD_ANNOTATION_(requires_shared_capability(__VA_ARGS__))
// On a function: it takes / releases the capabilities (none named: `this`).
#define ACQUIRE(...) URLGUARD_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) URLGUARD_THREAD_ANNOTATION_(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) URLGUARD_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) URLGUARD_THREAD_ANNOTATION_(release_shared_capability(__VA_ARGS__))
// On a function: takes the capability when it returns `ok` (the first argument), e.g. TRY_ACQUIRE(true).
#define TRY_ACQUIRE(...) URLGUARD_THREAD_ANNOTATION_(try_acquire_capability(__VA_ARGS__))
// On a function: the caller must not hold the capabilities (the function takes them itself).
#define EXCLUDES(...) URLGUARD_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))
// On a function: after it returns, the analysis assumes the capability is held (a run-time check).
#define ASSERT_CAPABILITY(x) URLGUARD_THREAD_ANNOTATION_(assert_capability(x))
// On a function: it returns a reference to the capability x.
#define RETURN_CAPABILITY(x) URLGUARD_THREAD_ANNOTATION_(lock_returned(x))
// On a function: not analyzed. Say in a comment why the analysis cannot follow it.
#define NO_THREAD_SAFETY_ANALYSIS URLGUARD_THREAD_ANNOTATION_(no_thread_safety_analysis)

namespace urlguard {

// A non-recursive mutex (std::mutex) the analysis can see. Lock it through MutexLock where a scope fits;
// Lock()/Unlock() to drop a MutexLock's lock for a while (see the top), or where some paths must unlock
// before the scope ends (the analysis checks that every path releases it exactly once).
class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;  // waits on mu_ itself
  std::mutex mu_;
};

// Holds `*mu` for its lifetime. `mu` must outlive it.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A condition variable (std::condition_variable) whose waits take the Mutex the caller holds, so the analysis
// checks that it is held. Every wait on one CondVar must name the same Mutex. Waits may wake spuriously: wait
// in a loop that re-checks the condition. Timed waits measure the steady clock (inside the C++ library).
class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases `*mu`, waits for a Signal, and takes `*mu` again before returning.
  void Wait(Mutex* mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // still held: the caller's lock releases it
  }
  // Wait() for at most `timeout`. False when the time ran out, true when woken (by a Signal, or spuriously).
  template <typename Rep, typename Period>
  bool WaitFor(Mutex* mu, std::chrono::duration<Rep, Period> timeout) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool woken = cv_.wait_for(lock, timeout) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }
  // Wait() until `deadline` at the latest. False when it passed, true when woken.
  bool WaitUntil(Mutex* mu, std::chrono::steady_clock::time_point deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    const bool woken = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }

  // Wakes one waiter / every waiter. The Mutex need not be held.
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace urlguard

#endif  // URLGUARD_CORE_THREAD_ANNOTATIONS_H_
