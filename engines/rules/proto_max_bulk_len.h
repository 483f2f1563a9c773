// Redis's proto-max-bulk-len: the longest bulk string a client may send, and
// the longest string SETRANGE, APPEND, SETBIT and BITFIELD may build. One
// setting per process, as in redis-server (server.proto_max_bulk_len):
// CONFIG SET changes it at run time and the next command and the next bulk
// header read it.
//
// Thread-safe: a relaxed atomic; a command racing a CONFIG SET sees the old
// or the new limit, never a torn one.
#pragma once

#include <atomic>
#include <cstdint>

namespace kvlab {

inline constexpr int64_t kDefaultProtoMaxBulkLen = 512ll * 1024 * 1024;
// CONFIG SET refuses less (Redis 7.0's createLongLongConfig bounds).
inline constexpr int64_t kMinProtoMaxBulkLen = 1024 * 1024;

inline std::atomic<int64_t>& ProtoMaxBulkLenSetting() {
  static std::atomic<int64_t> bytes{kDefaultProtoMaxBulkLen};
  return bytes;
}

inline int64_t ProtoMaxBulkLen() {
  return ProtoMaxBulkLenSetting().load(std::memory_order_relaxed);
}

}  // namespace kvlab
