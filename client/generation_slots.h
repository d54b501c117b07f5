// SPDX-License-Identifier: Apache-2.0
// Copyright urlguard authors.
//
// GenerationSlots: the current Generation (client/generation.h), swapped without making lookups wait: a two-slot
// reader-count scheme (the "left-right" pattern). Readers announce themselves on the current slot's counter and
// re-check the epoch (retrying if a swap slipped in); the single writer fills the other slot only after that
// slot's readers have drained, then bumps the epoch. Readers never block or take a lock; the writer waits for
// lookups of the generation before the previous one (microseconds). std::atomic<std::shared_ptr> was the first
// choice, but libstdc++ 12 implements it with an internal spin lock that readers also take, and ThreadSanitizer
// reports its unsynchronized pointer reads.
//
// Thread safety: Acquire() from any number of threads; Publish() from one thread at a time (callers serialize).
#ifndef URLGUARD_CLIENT_GENERATION_SLOTS_H_
#define URLGUARD_CLIENT_GENERATION_SLOTS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "client/generation.h"

namespace urlguard {

class GenerationSlots {
 public:
  // A reader's hold on the current generation; release it (destroy) before any slow work.
  class Ref {
   public:
    Ref(const GenerationSlots* s, int slot) : s_(s), slot_(slot) {}
    Ref(const Ref&) = delete;
    Ref& operator=(const Ref&) = delete;
    ~Ref() { s_->readers_[slot_].fetch_sub(1, std::memory_order_seq_cst); }
    const Generation& operator*() const { return *s_->slots_[slot_]; }
    const Generation* operator->() const { return s_->slots_[slot_].get(); }

   private:
    const GenerationSlots* s_;
    int slot_;
  };

  Ref Acquire() const {
    for (;;) {
      uint64_t e = epoch_.load(std::memory_order_seq_cst);
      int slot = static_cast<int>(e & 1);
      readers_[slot].fetch_add(1, std::memory_order_seq_cst);
      if (epoch_.load(std::memory_order_seq_cst) == e) return Ref(this, slot);
      readers_[slot].fetch_sub(1, std::memory_order_seq_cst);  // a swap slipped in: use the new slot
    }
  }

  // Makes `next` current. Single writer (callers serialize).
  void Publish(std::shared_ptr<const Generation> next) {
    uint64_t e = epoch_.load(std::memory_order_seq_cst);
    int target = static_cast<int>((e + 1) & 1);
    while (readers_[target].load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
    slots_[target] = std::move(next);  // the old generation in this slot (two swaps ago) is freed here
    epoch_.fetch_add(1, std::memory_order_seq_cst);
  }

 private:
  std::atomic<uint64_t> epoch_{0};
  mutable std::atomic<uint64_t> readers_[2] = {0, 0};
  std::shared_ptr<const Generation> slots_[2] = {std::make_shared<Generation>(), std::make_shared<Generation>()};
};

}  // namespace urlguard

#endif  // URLGUARD_CLIENT_GENERATION_SLOTS_H_
