// Listener: the TCP and Unix-socket acceptors of kvlab-server, and the
// admission rules applied to each new client before it gets a Connection:
// --maxclients (Redis's "-ERR max number of clients reached") and protected
// mode (Redis 7.0's DENIED reply for non-loopback clients when no password is
// set). Admitted sockets are handed round-robin to the I/O threads.
//
// Thread-safety: runs on one accepting io_context; Open() and Close() are
// called from the thread that runs it (or before it runs / after it stops).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>

#include "server/connection.h"
#include "server/connection_registry.h"
#include "server/io_thread_pool.h"
#include "base/status.h"
#include "server/server_settings.h"

namespace kvlab {

class Listener {
 public:
  // Binds the listeners `options` asks for into *listener. On failure (bad
  // address, address in use, unusable socket path, ...) *listener is untouched.
  static Status Open(const ServerSettings& options, boost::asio::io_context& accept_context,
                     IoThreadPool& io_threads, ServerContext& server_context,
                     ConnectionRegistry& registry, std::unique_ptr<Listener>* listener);
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  void StartAccepting();
  // Stops accepting and removes the Unix socket file. Idempotent.
  void Close();

 private:
  Listener(const ServerSettings& options, boost::asio::io_context& accept_context,
           IoThreadPool& io_threads, ServerContext& server_context, ConnectionRegistry& registry);

  void AcceptTcp();
  void AcceptUnix();
  // After EMFILE and friends, wait before retrying rather than spin.
  void RetryLater(void (Listener::*accept)());
  // Writes `reply` best-effort (as Redis does) and closes the socket.
  template <typename Socket>
  static void Refuse(Socket& socket, std::string_view reply);
  // Hands an accepted descriptor to the next I/O thread's loop as a Connection.
  void Admit(int socket_fd, ClientInfo info);
  bool Full() const;

  const ServerSettings& options_;
  boost::asio::io_context& accept_context_;
  IoThreadPool& io_threads_;
  ServerContext& server_context_;
  ConnectionRegistry& registry_;
  std::optional<boost::asio::ip::tcp::acceptor> tcp_;
  std::optional<boost::asio::local::stream_protocol::acceptor> unix_;
  boost::asio::steady_timer retry_timer_;
  bool closed_ = false;
};

}  // namespace kvlab
