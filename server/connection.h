// Connection: one client socket (TCP or Unix) driving one Session.
//
// The loop: read -> Session::Process(out, resume) -> send everything the read
// produced -> read again. Replies go out with a direct non-blocking send()
// right after processing, as Redis writes them in beforeSleep(); only when
// the socket is full does the connection wait for it to drain (an async_wait
// for writability, then send again). A read is kept in flight while replies
// wait, so a client that pipelines without reading is noticed: once its
// unsent replies exceed the output-buffer limit it is disconnected (as
// Redis's client-output-buffer-limit does), and once its unparsed input
// exceeds the query-buffer limit likewise. The output limit is passed into
// Session::Process(), which stops executing once it is crossed, so one huge
// read cannot build an unbounded reply before the check. When the engine runs
// a batch asynchronously (sharded), `resume` arrives on a shard thread and is
// posted back to this connection's io_context; bytes that arrive meanwhile
// are staged, because the pending batch points into the session's input.
// The engine's threads are woken once per round of this I/O thread, not
// once per batch (Engine::WakeDeferred()).
//
// Thread-safety: every member runs on the connection's io_context (one I/O
// thread); only the resume callback is invoked elsewhere, and it only posts.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/io_context.hpp>

#include "server/session.h"

namespace kvlab {

class ConnectionRegistry;

struct ConnectionLimits {
  uint64_t output_buffer_bytes = 64ull << 20;
  uint64_t query_buffer_bytes = 1ull << 30;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using Socket = boost::asio::generic::stream_protocol::socket;

  // REQUIRES: `socket` belongs to `io_context`; `context` and `registry`
  // outlive the connection.
  Connection(boost::asio::io_context& io_context, Socket socket, ServerContext& context,
             ClientInfo info, ConnectionLimits limits, ConnectionRegistry& registry);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  uint64_t id() const { return id_; }
  boost::asio::io_context& io_context() { return io_context_; }

  // Both must run on the connection's io_context.
  void Start();
  void CloseNow();

 private:
  void ReadMore();
  void ReadMoreLater();
  void OnRead(const boost::system::error_code& error, size_t bytes);
  void Drive();
  void Flush();
  void WaitWritable();
  uint64_t UnsentBytes() const { return out_.size() - out_sent_; }
  void Unregister();
  void WakeEngineAfterThisRound();
  uint64_t UnparsedBytes() { return session_.input().size() + staged_input_.size(); }

  boost::asio::io_context& io_context_;
  Socket socket_;
  const uint64_t id_;
  Session session_;
  const ConnectionLimits limits_;
  ConnectionRegistry& registry_;
  ServerStats& stats_;
  Engine& engine_;

  std::array<char, 16 * 1024> read_buffer_;
  std::string staged_input_;  // received while a batch is pending
  std::string out_;           // replies not yet sent; the first out_sent_ bytes are sent
  size_t out_sent_ = 0;

  bool read_in_flight_ = false;
  bool write_blocked_ = false;  // the socket was full: waiting for it to drain
  bool session_done_ = false;  // Process() said kClose (QUIT, protocol error)
  bool peer_done_ = false;     // the client sent EOF: answer what it sent, then close
  bool closed_ = false;
  bool unregistered_ = false;
  // Keeps the io_context running while an engine batch is pending.
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>>
      pending_batch_;
  // Keeps this connection alive while a batch is pending: the resume
  // callback holds only `this`, so the std::function that carries it fits
  // its small buffer and costs no allocation per read.
  std::shared_ptr<Connection> keep_alive_;
};

}  // namespace kvlab
