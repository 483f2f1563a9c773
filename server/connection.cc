#include "server/connection.h"

#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "server/connection_registry.h"

namespace kvlab {
namespace {

// While a batch is pending, read ahead at most this much: enough to batch the
// next commands, little enough that a fast pipeliner waits in its own socket
// buffer rather than in our memory.
constexpr size_t kStagedInputHighWater = 64 * 1024;

}  // namespace

Connection::Connection(boost::asio::io_context& io_context, Socket socket, ServerContext& context,
                       ClientInfo info, ConnectionLimits limits, ConnectionRegistry& registry)
    : io_context_(io_context),
      socket_(std::move(socket)),
      id_(info.id),
      session_(context, std::move(info)),
      limits_(limits),
      registry_(registry),
      stats_(context.stats) {
  stats_.connected_clients.fetch_add(1, std::memory_order_relaxed);
}

Connection::~Connection() { Unregister(); }

void Connection::Unregister() {
  if (unregistered_) return;
  unregistered_ = true;
  registry_.Remove(id_);
  stats_.connected_clients.fetch_sub(1, std::memory_order_relaxed);
}

void Connection::Start() { ReadMore(); }

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
  ReadMore();
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
  auto resume = [self = shared_from_this()] {
    // Any thread (a shard thread for `sharded`): hop back to ours.
    boost::asio::post(self->io_context_, [self] {
      self->pending_batch_.reset();
      self->Drive();
      self->ReadMore();
    });
  };
  switch (session_.Process(out_, std::move(resume))) {
    case Session::Status::kPending:
      pending_batch_.emplace(io_context_.get_executor());
      break;
    case Session::Status::kClose:
      session_done_ = true;
      break;
    case Session::Status::kNeedInput:
      break;
  }
  if (out_.size() + writing_.size() > limits_.output_buffer_bytes) {
    CloseNow();  // Redis: "scheduled to be closed ASAP for overcoming of output buffer limits"
    return;
  }
  if (!pending_batch_ && UnparsedBytes() > limits_.query_buffer_bytes) {
    CloseNow();
    return;
  }
  Flush();
}

void Connection::Flush() {
  if (closed_ || write_in_flight_) return;
  if (out_.empty()) {
    if ((session_done_ || peer_done_) && !pending_batch_) CloseNow();
    return;
  }
  // One write carries every reply produced since the last one.
  writing_.swap(out_);
  out_.clear();
  write_in_flight_ = true;
  boost::asio::async_write(socket_, boost::asio::buffer(writing_),
                           [self = shared_from_this()](const boost::system::error_code& error,
                                                       size_t bytes) { self->OnWritten(error, bytes); });
}

void Connection::OnWritten(const boost::system::error_code& error, size_t bytes) {
  stats_.total_net_output_bytes.fetch_add(bytes, std::memory_order_relaxed);
  write_in_flight_ = false;
  writing_.clear();
  if (closed_) return;
  if (error) {
    CloseNow();
    return;
  }
  Flush();
}

void Connection::CloseNow() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  socket_.shutdown(Socket::shutdown_both, ignored);
  socket_.close(ignored);  // outstanding handlers complete with operation_aborted
  out_.clear();
  out_.shrink_to_fit();
  staged_input_.clear();
  staged_input_.shrink_to_fit();
  Unregister();  // the slot counts against --maxclients no longer
}

}  // namespace kvlab
