// PrefetchLine(): start loading the cache line holding `address` into every
// cache level, without waiting for it and without faulting on a bad address.
//
// Why not plain __builtin_prefetch: GCC 12 at -O2 deleted it from
// RecordTable's hints. PlainKeyspace::Prefetch() compiled to a bare call of
// HashOf(): neither the slot nor the record line was ever prefetched (seen in
// the disassembly; tests/engines/prefetch_emitted_test.sh guards it). An
// asm volatile statement cannot be deleted, so on x86-64 the hint is one.
//
// Thread-safe: it reads nothing and changes no state a program can observe.
#pragma once

namespace kvlab {

inline void PrefetchLine(const void* address) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(address)));
#else
  __builtin_prefetch(address);
#endif
}

}  // namespace kvlab
