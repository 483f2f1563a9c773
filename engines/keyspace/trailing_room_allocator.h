// TrailingRoomAllocator: a std-style allocator over malloc whose one-object
// allocations can carry extra bytes ("trailing room") right after the object,
// so that a container's node and a variable-sized payload it points to share
// one malloc chunk: one chunk header and one size-class rounding instead of
// two, and the payload on the cache lines the node's own lookup touches.
//
// The container allocates its nodes itself and knows nothing of the room, so
// the room's size travels beside the call, per thread:
//   1. the inserting thread opens a TrailingRoomRequest(bytes) around the
//      container call that may create a node;
//   2. the container's next one-object allocation on that thread takes those
//      bytes (one allocation per request; later ones get none) and grants the
//      room it made;
//   3. the object the container constructs in that node claims the room with
//      TakeTrailingRoom() and may build its payload there. The room is part
//      of the node's chunk: it is freed with the node, never on its own.
// Arrays (n != 1: a hash map's bucket segments) never get room. Closing the
// request withdraws whatever nobody took, so a request that created no node
// leaves nothing behind for the thread's next one.
//
// All memory comes from malloc, so allocator-level counts (mallinfo2, INFO
// used_memory) include it.
//
// Thread-safe: requests and grants are per thread; the allocator is stateless
// and every instance is interchangeable with every other.
#pragma once

#include <malloc.h>

#include <cstddef>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <type_traits>

namespace kvlab {

// Room granted after an object: `size` usable bytes from `bytes` on.
// Empty (nullptr, 0) when there is none.
struct TrailingRoom {
  char* bytes = nullptr;
  size_t size = 0;
};

namespace trailing_room_internal {
// Bytes the open request wants after the thread's next one-object allocation.
inline constinit thread_local size_t wanted_bytes = 0;
// Room granted by that allocation and not yet taken.
inline constinit thread_local TrailingRoom granted_room{};
}  // namespace trailing_room_internal

// Scope of one insert that may build its payload in a node's trailing room.
// Not nestable (one open request per thread).
class TrailingRoomRequest {
 public:
  // Outside a request nothing is wanted or granted (the destructor's
  // invariant), so opening one only sets what it wants.
  explicit TrailingRoomRequest(size_t bytes) { trailing_room_internal::wanted_bytes = bytes; }
  ~TrailingRoomRequest() {
    trailing_room_internal::wanted_bytes = 0;
    trailing_room_internal::granted_room = {};
  }
  TrailingRoomRequest(const TrailingRoomRequest&) = delete;
  TrailingRoomRequest& operator=(const TrailingRoomRequest&) = delete;
};

// The room this thread's latest one-object allocation granted, once: the
// next call returns an empty room. Call it from the constructor of the
// object placed in that allocation.
inline TrailingRoom TakeTrailingRoom() {
  const TrailingRoom room = trailing_room_internal::granted_room;
  trailing_room_internal::granted_room = {};
  return room;
}

// The usable bytes of room after an object of `object_size` bytes that
// TrailingRoomAllocator placed at `room - object_size` (the object's chunk
// may be larger than requested: malloc rounds up to its size class).
inline size_t TrailingRoomSize(const char* room, size_t object_size) {
  return malloc_usable_size(const_cast<char*>(room - object_size)) - object_size;
}

template <typename T>
class TrailingRoomAllocator {
 public:
  using value_type = T;
  using is_always_equal = std::true_type;

  TrailingRoomAllocator() = default;
  template <typename U>
  TrailingRoomAllocator(const TrailingRoomAllocator<U>&) noexcept {}

  // The room starts at `object + sizeof(T)`, so it is aligned as far as
  // sizeof(T) is (at least alignof(T)).
  T* allocate(size_t n) {
    if (n != 1) return std::allocator<T>().allocate(n);
    static_assert(alignof(T) <= alignof(std::max_align_t), "malloc's alignment must do for T");
    const size_t room = trailing_room_internal::wanted_bytes;
    trailing_room_internal::wanted_bytes = 0;
    if (room > std::numeric_limits<size_t>::max() - sizeof(T)) throw std::bad_alloc();
    void* memory = std::malloc(sizeof(T) + room);
    if (memory == nullptr) throw std::bad_alloc();
    if (room != 0) {
      char* bytes = static_cast<char*>(memory) + sizeof(T);
      trailing_room_internal::granted_room = {bytes, TrailingRoomSize(bytes, sizeof(T))};
    }
    return static_cast<T*>(memory);
  }
  void deallocate(T* object, size_t n) noexcept {
    if (n != 1) {
      std::allocator<T>().deallocate(object, n);
      return;
    }
    std::free(object);
  }

  template <typename U>
  bool operator==(const TrailingRoomAllocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace kvlab
