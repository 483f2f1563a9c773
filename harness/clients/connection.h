// Connection: one client connection to a RESP server. hiredis opens the
// socket (TCP or Unix, with a connect timeout) and its reader parses replies;
// the harness does its own reads and writes so that it controls batching.
//
// Thread safety: not thread-safe, with one exception the SharedClient relies
// on: Write() may run on one thread while the read functions run on another
// (they touch disjoint state: Write only the file descriptor).
#pragma once

#include <hiredis/hiredis.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "harness/status.h"
#include "harness/clients/target.h"

namespace kvlab::harness {

struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

// The harness's timeouts unless the user gives others (--connect-timeout,
// --timeout); every connection of kvlab-load, measured or control, uses them.
constexpr double kDefaultConnectTimeoutS = 5.0;
constexpr double kDefaultReplyTimeoutS = 10.0;
// Bytes a connection (direct or event-loop) asks the kernel for per read.
constexpr size_t kReadChunkBytes = 64 * 1024;

struct ConnectionOptions {
  bool tcp_nodelay = true;                             // TCP only: disable Nagle's algorithm
  double connect_timeout_s = kDefaultConnectTimeoutS;  // connect() gives up after this long
  double reply_timeout_s = kDefaultReplyTimeoutS;      // a read waiting this long for a reply fails
  // Non-empty: every connection sends AUTH [user] password right after it
  // connects, and fails (naming AUTH) unless the server answers +OK.
  std::string user;
  std::string password;
};

class Connection {
 public:
  static Status Open(const Target& target, const ConnectionOptions& options,
                     std::unique_ptr<Connection>* out);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Writes all of `bytes` (blocking).
  Status Write(std::string_view bytes);

  // Returns the next parsed reply, reading from the socket as needed; fails
  // on EOF, on a reset, on a protocol error or after the reply timeout.
  Status ReadReply(ReplyPtr* reply);

  // Waits up to `timeout_ms` for the socket to become readable (or closed);
  // returns false on timeout.
  bool WaitReadable(int timeout_ms);

  // Performs one read() of whatever is available (blocking while nothing
  // is) and parses it. Use PopReply() to take the replies parsed so far.
  Status ReadAvailable();
  // Takes one complete parsed reply, if there is one; returns false if not.
  // A protocol error is reported by the next ReadAvailable().
  bool PopReply(ReplyPtr* reply);

  // Synchronous round trip: writes `request` and reads one reply.
  Status Call(std::string_view request, ReplyPtr* reply);

  // Shuts the socket down in both directions: a thread blocked reading
  // returns with an error. Safe to call from any thread.
  void Shutdown();

  int fd() const { return context_->fd; }

 private:
  // AUTH [user] password as the first request; ConnectionFailed naming AUTH
  // unless the server answers +OK.
  Status Authenticate(const std::string& user, const std::string& password);

  Connection(redisContext* context, redisReader* reader, double reply_timeout_s);

  redisContext* context_;  // owns the socket
  redisReader* reader_;
  int reply_timeout_ms_;
  bool protocol_error_ = false;
  std::string read_buffer_;
};

}  // namespace kvlab::harness
