// When the append-only file is due for an automatic rewrite: Redis's
// auto-aof-rewrite-percentage (0 turns it off) and auto-aof-rewrite-min-size,
// which CONFIG SET changes at run time.
//
// Thread-safe: the values are atomics, read by the auto-rewrite thread
// (aof_auto_rewrite.h) and written by CONFIG SET.
#pragma once

#include <atomic>
#include <cstdint>

namespace kvlab {

struct AofRewritePolicy {
  std::atomic<int64_t> percentage{100};
  std::atomic<uint64_t> min_size{64ull << 20};  // bytes
};

// The process's one policy (like Redis's server.aof_rewrite_perc).
AofRewritePolicy& AutoRewritePolicy();

// Redis's rule (serverCron): the file is larger than min_size and has grown
// by at least `percentage` percent over `base`, its size after the last
// rewrite or at the start (a base of 0 counts as 1 byte).
bool AutoRewriteDue(uint64_t current, uint64_t base, int64_t percentage, uint64_t min_size);

}  // namespace kvlab
