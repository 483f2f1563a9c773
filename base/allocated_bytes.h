// AllocatedBytes(): what the process's allocator has handed out and not had
// back, as Redis's used_memory (zmalloc's count): the heap arenas' allocated
// bytes plus the blocks malloc serves with mmap. Allocator-level, so it
// includes every byte of overhead the data structures cost, unlike an
// engine's own estimate. INFO memory reports it; the engine tests check
// what a key costs with it.
//
// Under AddressSanitizer or ThreadSanitizer the sanitizer's allocator serves
// every malloc and glibc's mallinfo2() reads 0, so the count comes from the
// sanitizer's own allocator instead (the same quantity, bytes handed out,
// in that allocator's own bookkeeping: it may lag a few allocations behind).
//
// Thread-safe: a snapshot; other threads' allocations may race it.
#pragma once

#include <malloc.h>

#include <cstddef>
#include <cstdint>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// From the sanitizers' allocator interface (clang ships its header, GCC does
// not; libasan and libtsan both define it).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif

namespace kvlab {

inline uint64_t AllocatedBytes() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 heap = mallinfo2();
  return heap.uordblks + heap.hblkhd;
#endif
}

}  // namespace kvlab
