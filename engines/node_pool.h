// NodePool and NodePoolAllocator: fixed-size slots for a hash map's nodes,
// carved from 64 KiB chunks, so that a node costs its own size and not a
// malloc chunk's header and rounding on top.
//
// Why: the concurrent engine's tbb::concurrent_hash_map node is 32 bytes
// (next pointer, per-node lock, key record pointer, spill pointer); malloc
// serves 32 bytes from a 48-byte chunk, so a third of every node was
// allocator overhead. The chunks come from malloc, so INFO's allocator-level
// used_memory (mallinfo2) still counts them. Freed slots are kept for reuse
// until the pool is destroyed (after FLUSHALL the chunks stay allocated, as
// a freed node's memory would stay in malloc's bins).
//
// Thread-safe: Allocate() and Deallocate() may be called from any threads.
// Threads are spread over a few lanes, each with its own lock, free list and
// chunk, so concurrent inserts rarely share a lock; a slot freed on another
// lane than it came from simply joins that lane's free list.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

namespace kvlab {

class NodePool {
 public:
  // Slots for objects of `object_size` bytes, each 16-byte aligned (as
  // malloc's). REQUIRES: object_size >= sizeof(void*).
  explicit NodePool(size_t object_size)
      : object_size_(object_size), slot_size_((object_size + 15) / 16 * 16) {}
  ~NodePool() {
    for (Lane& lane : lanes_) {
      for (void* chunk : lane.chunks) std::free(chunk);
    }
  }
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;

  size_t object_size() const { return object_size_; }

  // Room for one object of object_size() bytes. Throws std::bad_alloc.
  void* Allocate() {
    Lane& lane = LaneOfThisThread();
    std::lock_guard guard(lane.mutex);
    if (lane.free != nullptr) {
      FreeSlot* slot = lane.free;
      lane.free = slot->next;
      return slot;
    }
    if (lane.bump == lane.bump_end) {
      void* chunk = std::malloc(kChunkBytes);
      if (chunk == nullptr) throw std::bad_alloc();
      lane.chunks.push_back(chunk);  // reserved ahead: see Lane
      lane.bump = static_cast<char*>(chunk);
      lane.bump_end = lane.bump + kChunkBytes / slot_size_ * slot_size_;
      if (lane.chunks.size() == lane.chunks.capacity()) lane.chunks.reserve(lane.chunks.size() * 2);
    }
    void* slot = lane.bump;
    lane.bump += slot_size_;
    return slot;
  }

  // REQUIRES: `slot` came from Allocate() of this pool and is not in use.
  void Deallocate(void* slot) {
    Lane& lane = LaneOfThisThread();
    std::lock_guard guard(lane.mutex);
    lane.free = new (slot) FreeSlot{lane.free};
  }

 private:
  static constexpr size_t kChunkBytes = 64 * 1024;
  static constexpr size_t kLanes = 8;

  struct FreeSlot {
    FreeSlot* next;
  };
  struct alignas(64) Lane {
    Lane() { chunks.reserve(16); }  // so that push_back in Allocate() never throws
    std::mutex mutex;
    FreeSlot* free = nullptr;
    char* bump = nullptr;
    char* bump_end = nullptr;
    std::vector<void*> chunks;
  };

  Lane& LaneOfThisThread() {
    static std::atomic<unsigned> next_lane{0};
    thread_local const unsigned lane = next_lane.fetch_add(1, std::memory_order_relaxed);
    return lanes_[lane % kLanes];
  }

  const size_t object_size_;
  const size_t slot_size_;
  Lane lanes_[kLanes];
};

// A std allocator that takes single objects of exactly the pool's object size
// from `pool` and everything else (the map's bucket arrays) from
// std::allocator. Which objects go where depends only on T and n, so
// allocate() and deallocate() always agree.
template <typename T>
class NodePoolAllocator {
 public:
  using value_type = T;

  explicit NodePoolAllocator(NodePool& pool) : pool_(&pool) {}
  template <typename U>
  NodePoolAllocator(const NodePoolAllocator<U>& other) : pool_(other.pool()) {}

  T* allocate(size_t n) {
    if (Pooled(n)) return static_cast<T*>(pool_->Allocate());
    return std::allocator<T>{}.allocate(n);
  }
  void deallocate(T* p, size_t n) {
    if (Pooled(n)) {
      pool_->Deallocate(p);
    } else {
      std::allocator<T>{}.deallocate(p, n);
    }
  }

  NodePool* pool() const { return pool_; }
  template <typename U>
  bool operator==(const NodePoolAllocator<U>& other) const { return pool_ == other.pool(); }
  template <typename U>
  bool operator!=(const NodePoolAllocator<U>& other) const { return pool_ != other.pool(); }

 private:
  bool Pooled(size_t n) const {
    return n == 1 && sizeof(T) == pool_->object_size() && alignof(T) <= 16;
  }
  NodePool* pool_;
};

}  // namespace kvlab
