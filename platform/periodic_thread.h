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
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace urlguard {

class PeriodicThread {
 public:
  PeriodicThread(std::chrono::milliseconds interval, std::function<void()> fn)
      : thread_([this, interval, fn = std::move(fn)] {
          std::unique_lock<std::mutex> l(mu_);
          while (!stop_) {
            cv_.wait_for(l, interval);
            if (stop_) break;
            l.unlock();
            fn();
            l.lock();
          }
        }) {}
  ~PeriodicThread() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

 private:
  std::mutex mu_;  // guards stop_; cv_ wakes the thread early
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members it uses exist
};

}  // namespace urlguard

#endif  // URLGUARD_PLATFORM_PERIODIC_THREAD_H_
