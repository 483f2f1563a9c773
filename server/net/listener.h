// Listener: the TCP and Unix-socket acceptors of kvlab-server, and the
// admission rules applied to each new client before it gets a Connection:
// --maxclients (Redis's "-ERR max number of clients reached") and protected
// mode (Redis 7.0's DENIED reply for non-loopback clients when no password is
// set). Sockets admitted on the main port and the Unix socket are handed
// round-robin to the I/O threads: the one accepting thread deals them out
// evenly and in a known order (SO_REUSEPORT would hash each connection's
// address to a listener, unevenly for the few connections of a benchmark).
// With --shard-ports BASE, I/O thread i also has its own port BASE + i, and
// a socket accepted there stays on thread i (the owner engine's routed
// clients).
//
// Thread-safety: runs on one accepting io_context; Open() and Close() are
// called from the thread that runs it (or before it runs / after it stops).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>

#include "server/net/connection.h"
#include "server/net/connection_registry.h"
#include "server/net/io_thread_pool.h"
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

  // Accepts on `acceptor` for ever; owner >= 0 keeps its sockets on I/O
  // thread `owner` (a shard port), -1 deals them round-robin.
  void AcceptTcp(boost::asio::ip::tcp::acceptor& acceptor, int owner);
  void AcceptUnix();
  // After EMFILE and friends, wait before retrying rather than spin.
  void RetryLater(std::function<void()> accept);
  // Writes `reply` best-effort (as Redis does) and closes the socket.
  template <typename Socket>
  static void Refuse(Socket& socket, std::string_view reply);
  // Hands an accepted descriptor to a loop as a Connection: thread
  // info.owner_port's for a shard port, else the next one's.
  void Admit(int socket_fd, ClientInfo info);
  bool Full() const;

  const ServerSettings& options_;
  IoThreadPool& io_threads_;
  ServerContext& server_context_;
  ConnectionRegistry& registry_;
  std::optional<boost::asio::ip::tcp::acceptor> tcp_;
  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> shard_tcp_;  // BASE + i
  std::optional<boost::asio::local::stream_protocol::acceptor> unix_;
  boost::asio::steady_timer retry_timer_;
  bool closed_ = false;
};

}  // namespace kvlab
