// DelayServer: a RESP server for known-answer latency tests that holds each
// PING's reply for a fixed delay after the request arrived, then answers
// +PONG (replies stay in request order; INFO answers an empty bulk string,
// anything else +OK, both without delay). So the latency the harness
// measures for a PING must be the delay plus the client-server stack.
// Requests are held concurrently (a pipelined connection's throughput is
// not limited by the delay), but a synchronous client with one request in
// flight can do at most one PING per delay per connection.
//
// Runs in the test's process: one thread accepts on a Unix socket in a fresh
// temporary directory, one thread per connection parses, holds and answers
// (sleeping in ppoll until the next reply is due, no spinning).
//
// Thread safety: construct and destroy on one thread; the server threads
// are internal.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness/clients/target.h"

namespace kvlab::harness::testing {

class DelayServer {
 public:
  explicit DelayServer(uint64_t delay_ns);
  ~DelayServer();
  DelayServer(const DelayServer&) = delete;
  DelayServer& operator=(const DelayServer&) = delete;

  bool started() const { return listen_fd_ >= 0; }
  Target unix_target() const;
  // PINGs answered so far.
  uint64_t pings() const { return pings_.load(); }
  // pings(), once it reached `expected` or 2 s passed: a connection's thread
  // counts its replies after writing them, so a client may read the last
  // ones before they are counted (a fresh clone's make test once compared
  // 6,304 received with 6,288 counted).
  uint64_t PingsOnceCounted(uint64_t expected) const;

 private:
  void AcceptLoop();
  void Serve(int fd);

  const uint64_t delay_ns_;
  std::string directory_;
  std::string socket_path_;
  int listen_fd_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> pings_{0};
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<int> connection_fds_;    // GUARDED_BY(mutex_)
  std::vector<std::thread> handlers_;  // GUARDED_BY(mutex_)
};

}  // namespace kvlab::harness::testing
