// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// WorkQueue: a bounded FIFO of jobs run one at a time on its own worker thread (Client::CheckAsync). Push refuses
// work beyond the capacity instead of growing without limit. Destruction runs the jobs already queued, then joins.
//
// Thread safety: Push from any number of threads; destroy once no Push can race with it.
#ifndef URLGUARD_PLATFORM_WORK_QUEUE_H_
#define URLGUARD_PLATFORM_WORK_QUEUE_H_

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>

#include "core/thread_annotations.h"

namespace urlguard {

class WorkQueue {
 public:
  explicit WorkQueue(size_t capacity) : capacity_(capacity), worker_([this] { Run(); }) {}
  ~WorkQueue() {
    {
      MutexLock l(&mu_);
      stop_ = true;
    }
    cv_.SignalAll();
    worker_.join();
  }
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Queues `job`; false (and the job is dropped) when the queue holds `capacity` jobs or is stopping.
  bool Push(std::function<void()> job) EXCLUDES(mu_) {
    {
      MutexLock l(&mu_);
      if (stop_ || jobs_.size() >= capacity_) return false;
      jobs_.push_back(std::move(job));
    }
    cv_.Signal();
    return true;
  }

 private:
  void Run() EXCLUDES(mu_) {
    for (;;) {
      std::function<void()> job;
      {
        MutexLock l(&mu_);
        while (!stop_ && jobs_.empty()) cv_.Wait(&mu_);
        if (jobs_.empty()) return;  // stopping and drained
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }

  const size_t capacity_;
  Mutex mu_;
  CondVar cv_;  // signalled when a job is queued or stop_ is set
  std::deque<std::function<void()>> jobs_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread worker_;  // last: starts after the members it uses exist
};

}  // namespace urlguard

#endif  // URLGUARD_PLATFORM_WORK_QUEUE_H_
