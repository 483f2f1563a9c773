// ClientInfo: what the server knows about one client connection when it is
// accepted (its id, where it came from). Filled by the connection, read by the
// Session (CLIENT ID, CLIENT INFO, INFO).
//
// Plain value type; thread-compatible.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace kvlab {

struct ClientInfo {
  uint64_t id = 0;            // from ServerContext::NextClientId(), unique per process
  std::string peer_address;   // "127.0.0.1:50312", "[::1]:50312", or the socket path + ":0"
  std::string local_address;  // "127.0.0.1:6379" or the Unix socket path + ":0"
  bool is_unix = false;       // connected over the Unix socket listener
  int fd = -1;                // socket descriptor, for CLIENT INFO only
  // Connected to shard port BASE + owner_port (--shard-ports): keys of other
  // owners get -MOVED. -1: the main port or the Unix socket.
  int owner_port = -1;
  // When it connected (CLIENT LIST's age=).
  std::chrono::steady_clock::time_point connected_at = std::chrono::steady_clock::now();
};

}  // namespace kvlab
