// EncodingLimits: the thresholds at which a hash, set or sorted set leaves
// its compact encoding, Redis 7.0's hash-max-listpack-entries/-value,
// set-max-intset-entries and zset-max-listpack-entries/-value. They start at
// Redis's defaults and CONFIG SET changes them at run time; as in Redis, a
// new limit applies to the next write of a value, and a value never
// converts back. Lists have no such knob here: Redis 7.0's lists are always
// "quicklist", and list-max-listpack-size only sizes its nodes.
//
// Thread-safe: one instance per process (every engine in it shares the
// knobs, as one redis-server's keyspace does), read with relaxed atomics on
// the write path; a write racing a CONFIG SET sees the old or the new limit.
#pragma once

#include <atomic>
#include <cstddef>

namespace kvlab {

struct EncodingLimits {
  static constexpr size_t kDefaultHashEntries = 512;
  static constexpr size_t kDefaultHashValueBytes = 64;
  static constexpr size_t kDefaultSetIntsetEntries = 512;
  static constexpr size_t kDefaultZSetEntries = 128;
  static constexpr size_t kDefaultZSetValueBytes = 64;

  std::atomic<size_t> hash_entries{kDefaultHashEntries};
  std::atomic<size_t> hash_value_bytes{kDefaultHashValueBytes};
  std::atomic<size_t> set_intset_entries{kDefaultSetIntsetEntries};
  std::atomic<size_t> zset_entries{kDefaultZSetEntries};
  std::atomic<size_t> zset_value_bytes{kDefaultZSetValueBytes};

  static size_t Read(const std::atomic<size_t>& limit) {
    return limit.load(std::memory_order_relaxed);
  }
  // Back to Redis's defaults (tests that changed them).
  void Reset() {
    hash_entries.store(kDefaultHashEntries, std::memory_order_relaxed);
    hash_value_bytes.store(kDefaultHashValueBytes, std::memory_order_relaxed);
    set_intset_entries.store(kDefaultSetIntsetEntries, std::memory_order_relaxed);
    zset_entries.store(kDefaultZSetEntries, std::memory_order_relaxed);
    zset_value_bytes.store(kDefaultZSetValueBytes, std::memory_order_relaxed);
  }
};

// The process's limits.
inline EncodingLimits& CompactEncodingLimits() {
  static EncodingLimits limits;
  return limits;
}

}  // namespace kvlab
