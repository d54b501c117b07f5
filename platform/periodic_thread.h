// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// PeriodicThread: a thread that calls a function every `interval` until destroyed (the Client's generation
// watcher). Destruction wakes the thread at once and joins it.
//
// Thread safety: construct and destroy from one thread; `fn` runs on the periodic thread only.
#ifndef URLGUARD_PLATFORM_PERIODIC_THREAD_H_
#define URLGUARD_PLATFORM_PERIODIC_THREAD_H_

#include <chrono>
#include <functional>
#include <thread>

#include "core/thread_annotations.h"

namespace urlguard {

class PeriodicThread {
 public:
  PeriodicThread(std::chrono::milliseconds interval, std::function<void()> fn)
      : thread_([this, interval, fn = std::move(fn)] {
          MutexLock l(&mu_);
          while (!stop_) {
            cv_.WaitFor(&mu_, interval);
            if (stop_) break;
            mu_.Unlock();
            fn();
            mu_.Lock();
          }
        }) {}
  ~PeriodicThread() {
    {
      MutexLock l(&mu_);
      stop_ = true;
    }
    cv_.SignalAll();
    thread_.join();
  }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

 private:
  Mutex mu_;
  CondVar cv_;  // wakes the thread early
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;  // last: starts after the members it uses exist
};

}  // namespace urlguard

#endif  // URLGUARD_PLATFORM_PERIODIC_THREAD_H_
