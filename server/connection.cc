#include "server/connection.h"

#include <utility>

#include <boost/asio/post.hpp>

#include "server/connection_registry.h"

namespace kvlab {
namespace {

// While a batch is pending, read ahead at most this much: enough to batch the
// next commands, little enough that a fast pipeliner waits in its own socket
// buffer rather than in our memory.
constexpr size_t kStagedInputHighWater = 64 * 1024;

// Output buffer capacity kept after it empties; larger ones are released.
constexpr size_t kRetainedOutputCapacity = 64 * 1024;

// Whether this I/O thread has queued its engine wake-up for the current round.
thread_local bool engine_wake_posted = false;

}  // namespace

Connection::Connection(boost::asio::io_context& io_context, Socket socket, ServerContext& context,
                       ClientInfo info, ConnectionLimits limits, ConnectionRegistry& registry)
    : io_context_(io_context),
      socket_(std::move(socket)),
      id_(info.id),
      session_(context, std::move(info)),
      limits_(limits),
      registry_(registry),
      stats_(context.stats),
      engine_(context.engine) {
  stats_.connected_clients.fetch_add(1, std::memory_order_relaxed);
}

Connection::~Connection() { Unregister(); }

void Connection::Unregister() {
  if (unregistered_) return;
  unregistered_ = true;
  registry_.Remove(id_);
  stats_.connected_clients.fetch_sub(1, std::memory_order_relaxed);
}

void Connection::Start() {
  // User-level non-blocking mode: send() below returns would_block instead
  // of polling inside Asio until the socket drains.
  boost::system::error_code error;
  socket_.non_blocking(true, error);
  if (error) {
    CloseNow();
    return;
  }
  engine_.DeferWakeupsOnThisThread();  // this thread calls WakeDeferred(): see Drive()
  ReadMore();
}

void Connection::ReadMore() {
  if (closed_ || session_done_ || peer_done_ || read_in_flight_) return;
  if (pending_batch_ && staged_input_.size() >= kStagedInputHighWater) return;  // resumed later
  read_in_flight_ = true;
  socket_.async_read_some(boost::asio::buffer(read_buffer_),
                          [self = shared_from_this()](const boost::system::error_code& error,
                                                      size_t bytes) { self->OnRead(error, bytes); });
}

void Connection::OnRead(const boost::system::error_code& error, size_t bytes) {
  read_in_flight_ = false;
  if (closed_ || session_done_) return;  // after QUIT or a protocol error, input is ignored
  if (error == boost::asio::error::eof) {
    // The client finished sending: answer what it sent, then close.
    peer_done_ = true;
    Drive();
    return;
  }
  if (error) {  // reset, mid-bulk or otherwise: nothing can be delivered any more
    CloseNow();
    return;
  }
  stats_.total_net_input_bytes.fetch_add(bytes, std::memory_order_relaxed);
  // Bytes go to the session unless a pending batch still points into its input.
  (pending_batch_ ? staged_input_ : session_.input()).append(read_buffer_.data(), bytes);
  if (UnparsedBytes() > limits_.query_buffer_bytes) {
    CloseNow();  // Redis: "closing client that reached max query buffer length"
    return;
  }
  Drive();
  // While a batch is pending the resume handler starts the next read.
  if (!pending_batch_) ReadMoreLater();
}

// The next read is started from the back of the io_context's queue, not
// right after answering. Asio starts a read with a speculative recv() when
// the socket was last seen readable, and right after we answered, a P1
// client has not sent its next command yet: that recv() would fail with
// EAGAIN (measured: 0.85 wasted recvfrom per request). Queued behind the
// other connections' completions of this epoll round, it sometimes finds
// the next command there and completes without another epoll_wait.
//
// What this still costs, and why it stays: at P1 with 50 clients (perf stat
// tracepoints, per request) kvlab makes 1.93 recvfrom, redis-server 1.00
// read, so about one recv() per request fails with EAGAIN. Asio 1.74 marks a
// socket "try speculatively" after every successful read (only a 0-byte read
// clears it), and its alternative — socket.async_wait(wait_read) and then
// our own receive() — was measured too: recvfrom fell to 1.00 but each wait
// costs an epoll_ctl(EPOLL_CTL_MOD) (1.01 per request), so the total stayed
// 3.2-3.3 syscalls per request. A readiness poller of our own registered in
// Asio would cost about 3 syscalls per round (not built: by that count no
// gain at the ~2 ready sockets per epoll_wait seen here). Matching Redis's 2 syscalls needs a level-triggered
// loop that owns the sockets, i.e. leaving Asio's reactor for reads.
void Connection::ReadMoreLater() {
  boost::asio::post(io_context_, [self = shared_from_this()] { self->ReadMore(); });
}

void Connection::Drive() {
  if (closed_ || pending_batch_) return;
  if (session_done_) {
    Flush();
    return;
  }
  if (!staged_input_.empty()) {
    session_.input().append(staged_input_);
    staged_input_.clear();
  }
  auto resume = [this] {
    // Any thread (a shard thread for `sharded`): hop back to ours. keep_alive_
    // holds the connection until the posted handler has run.
    boost::asio::post(io_context_, [this] {
      std::shared_ptr<Connection> self = std::move(keep_alive_);
      pending_batch_.reset();
      Drive();
      ReadMoreLater();
    });
  };
  // Bytes already sent stay at the front of out_ until it empties.
  const size_t out_limit = out_sent_ + limits_.output_buffer_bytes;
  switch (session_.Process(out_, std::move(resume), out_limit)) {
    case Session::Progress::kPending:
      pending_batch_.emplace(io_context_.get_executor());
      keep_alive_ = shared_from_this();  // before the posted resume can run (same thread)
      WakeEngineAfterThisRound();
      break;
    case Session::Progress::kClose:
      session_done_ = true;
      break;
    case Session::Progress::kOutputLimit:
      CloseNow();  // Redis: "scheduled to be closed ASAP for overcoming of output buffer limits"
      return;
    case Session::Progress::kNeedInput:
      break;
  }
  if (UnsentBytes() > limits_.output_buffer_bytes) {
    CloseNow();
    return;
  }
  if (!pending_batch_ && UnparsedBytes() > limits_.query_buffer_bytes) {
    CloseNow();
    return;
  }
  Flush();
}

// The batch is queued to the engine's threads, not yet woken: one handler
// per round of this I/O thread wakes them, queued behind the completions of
// the connections that were ready with this one, so every batch they send
// shares that wake-up (at P1 with 50 clients, one futex wake instead of one
// per request). The handler is in the queue, so the thread does not block in
// epoll_wait before it has run.
void Connection::WakeEngineAfterThisRound() {
  if (engine_wake_posted) return;
  engine_wake_posted = true;
  boost::asio::post(io_context_, [&engine = engine_] {
    engine_wake_posted = false;
    engine.WakeDeferred();
  });
}

// Sends the replies straight away with non-blocking send() calls, as Redis
// does in beforeSleep(): no write operation, handler or completion per reply.
// Only a full socket makes the connection wait (WaitWritable()).
void Connection::Flush() {
  if (closed_ || write_blocked_) return;
  while (out_sent_ < out_.size()) {
    boost::system::error_code error;
    const size_t sent = socket_.send(
        boost::asio::buffer(out_.data() + out_sent_, out_.size() - out_sent_), 0, error);
    if (error == boost::asio::error::would_block || error == boost::asio::error::try_again) {
      WaitWritable();
      return;
    }
    if (error) {
      CloseNow();
      return;
    }
    stats_.total_net_output_bytes.fetch_add(sent, std::memory_order_relaxed);
    out_sent_ += sent;
  }
  out_.clear();
  out_sent_ = 0;
  // A burst of large replies should not pin its buffer for the connection's life.
  if (out_.capacity() > kRetainedOutputCapacity) std::string().swap(out_);
  if ((session_done_ || peer_done_) && !pending_batch_) CloseNow();
}

void Connection::WaitWritable() {
  write_blocked_ = true;
  socket_.async_wait(Socket::wait_write,
                     [self = shared_from_this()](const boost::system::error_code& error) {
                       self->write_blocked_ = false;
                       if (self->closed_) return;
                       if (error) {
                         self->CloseNow();
                         return;
                       }
                       self->Flush();
                     });
}

void Connection::CloseNow() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  socket_.shutdown(Socket::shutdown_both, ignored);
  socket_.close(ignored);  // outstanding handlers complete with operation_aborted
  out_.clear();
  out_.shrink_to_fit();
  out_sent_ = 0;
  staged_input_.clear();
  staged_input_.shrink_to_fit();
  Unregister();  // the slot counts against --maxclients no longer
}

}  // namespace kvlab
