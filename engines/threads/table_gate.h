// TableGate: a reader-writer lock whose shared side scales with threads.
//
// tbb::concurrent_hash_map makes single-key operations safe to run
// concurrently, but iterating it (DBSIZE) or clear()ing it (FLUSHALL) is
// undefined while other threads insert or erase. The gate lets every
// single-key operation in ("shared") and holds them all out while a
// whole-table operation runs ("exclusive").
//
// A single std::shared_mutex would make every operation of every thread
// write the same cache line. The gate instead has one padded shared_mutex per
// slot; a thread always enters through its own slot (threads are spread over
// the slots round-robin), and an exclusive holder locks every slot in order.
//
// Thread-safe. Usable with std::shared_lock / std::unique_lock.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <shared_mutex>

namespace kvlab {

class TableGate {
 public:
  TableGate() = default;
  TableGate(const TableGate&) = delete;
  TableGate& operator=(const TableGate&) = delete;

  // Shared side: many threads, through their own slot. A thread that holds
  // the shared side must not ask for the exclusive side.
  void lock_shared() { slots_[ThreadSlot()].mutex.lock_shared(); }
  void unlock_shared() { slots_[ThreadSlot()].mutex.unlock_shared(); }

  // Exclusive side: waits for every shared holder, then keeps all out.
  void lock() {
    for (Slot& slot : slots_) slot.mutex.lock();
  }
  void unlock() {
    for (Slot& slot : slots_) slot.mutex.unlock();
  }

 private:
  static constexpr size_t kSlots = 32;
  struct alignas(64) Slot {
    std::shared_mutex mutex;
  };

  static size_t ThreadSlot() {
    static std::atomic<size_t> next_thread{0};
    thread_local const size_t slot = next_thread.fetch_add(1, std::memory_order_relaxed) % kSlots;
    return slot;
  }

  std::array<Slot, kSlots> slots_;
};

}  // namespace kvlab
