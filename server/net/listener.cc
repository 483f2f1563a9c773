#include "server/net/listener.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <utility>

#include "server/net/protected_mode.h"

namespace kvlab {
namespace {

constexpr std::string_view kMaxClientsReached = "-ERR max number of clients reached\r\n";
constexpr int kBacklog = 511;  // Redis's tcp-backlog default

bool OutOfDescriptorsOrMemory(const boost::system::error_code& error) {
  const int code = error.value();
  return error.category() == boost::system::system_category() &&
         (code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM);
}

// A socket file left behind by a server that died is removed; a live one (a
// connect succeeds) or a path that is not a socket is an error.
Status PrepareUnixSocketPath(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return Status::Ok();  // nothing there
  if (!S_ISSOCK(info.st_mode)) {
    return Status::InvalidArgument("--unixsocket " + path + " exists and is not a socket");
  }
  boost::asio::io_context probe_context;
  boost::asio::local::stream_protocol::socket probe(probe_context);
  boost::system::error_code connect_error;
  probe.connect(boost::asio::local::stream_protocol::endpoint(path), connect_error);
  if (!connect_error) {
    return Status::Unavailable("--unixsocket " + path + " is in use by a running server");
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Status::Unavailable("cannot remove stale socket file " + path);
  }
  return Status::Ok();
}

// Redis's spelling: "127.0.0.1:6379", "[::1]:6379".
std::string EndpointText(const boost::asio::ip::tcp::endpoint& endpoint) {
  const std::string host = endpoint.address().to_string();
  const std::string port = std::to_string(endpoint.port());
  return endpoint.address().is_v6() ? "[" + host + "]:" + port : host + ":" + port;
}

}  // namespace

Listener::Listener(const ServerSettings& options, boost::asio::io_context& accept_context,
                   IoThreadPool& io_threads, ServerContext& server_context,
                   ConnectionRegistry& registry)
    : options_(options),
      io_threads_(io_threads),
      server_context_(server_context),
      registry_(registry),
      retry_timer_(accept_context) {}

Listener::~Listener() { Close(); }

Status Listener::Open(const ServerSettings& options, boost::asio::io_context& accept_context,
                      IoThreadPool& io_threads, ServerContext& server_context,
                      ConnectionRegistry& registry, std::unique_ptr<Listener>* opened) {
  std::unique_ptr<Listener> listener(
      new Listener(options, accept_context, io_threads, server_context, registry));
  boost::system::error_code code;
  if (options.port != 0) {
    const auto address = boost::asio::ip::make_address(options.bind, code);
    if (code) return Status::InvalidArgument("--bind '" + options.bind + "' is not an IP address");
    const boost::asio::ip::tcp::endpoint endpoint(address, options.port);
    auto& tcp = listener->tcp_.emplace(accept_context);
    if (tcp.open(endpoint.protocol(), code) ||
        tcp.set_option(boost::asio::socket_base::reuse_address(true), code) ||
        tcp.bind(endpoint, code) || tcp.listen(kBacklog, code)) {
      return Status::Unavailable("cannot listen on " + options.bind + ":" +
                                 std::to_string(options.port) + ": " + code.message());
    }
  }
  for (unsigned i = 0; options.shard_ports != 0 && i < io_threads.size(); ++i) {
    const unsigned port = options.shard_ports + i;
    const auto address = boost::asio::ip::make_address(options.bind, code);
    const boost::asio::ip::tcp::endpoint endpoint(address, static_cast<uint16_t>(port));
    auto acceptor = std::make_unique<boost::asio::ip::tcp::acceptor>(accept_context);
    if (acceptor->open(endpoint.protocol(), code) ||
        acceptor->set_option(boost::asio::socket_base::reuse_address(true), code) ||
        acceptor->bind(endpoint, code) || acceptor->listen(kBacklog, code)) {
      return Status::Unavailable("cannot listen on shard port " + options.bind + ":" +
                                 std::to_string(port) + ": " + code.message());
    }
    listener->shard_tcp_.push_back(std::move(acceptor));
  }
  if (!options.unix_socket.empty()) {
    if (Status prepared = PrepareUnixSocketPath(options.unix_socket); !prepared.ok()) {
      return prepared;
    }
    auto& unix_acceptor = listener->unix_.emplace(accept_context);
    const boost::asio::local::stream_protocol::endpoint endpoint(options.unix_socket);
    if (unix_acceptor.open(endpoint.protocol(), code) || unix_acceptor.bind(endpoint, code) ||
        unix_acceptor.listen(kBacklog, code)) {
      listener->unix_.reset();
      return Status::Unavailable("cannot listen on unix socket " + options.unix_socket + ": " +
                                 code.message());
    }
  }
  *opened = std::move(listener);
  return Status::Ok();
}

void Listener::StartAccepting() {
  if (tcp_) AcceptTcp(*tcp_, -1);
  for (size_t i = 0; i < shard_tcp_.size(); ++i) AcceptTcp(*shard_tcp_[i], static_cast<int>(i));
  if (unix_) AcceptUnix();
}

void Listener::Close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  retry_timer_.cancel();
  if (tcp_) tcp_->close(ignored);
  for (auto& acceptor : shard_tcp_) acceptor->close(ignored);
  if (unix_) {
    unix_->close(ignored);
    ::unlink(options_.unix_socket.c_str());
  }
}

bool Listener::Full() const { return registry_.size() >= options_.max_clients; }

template <typename Socket>
void Listener::Refuse(Socket& socket, std::string_view reply) {
  boost::system::error_code ignored;
  socket.non_blocking(true, ignored);
  socket.write_some(boost::asio::buffer(reply.data(), reply.size()), ignored);
  socket.close(ignored);
}

void Listener::RetryLater(std::function<void()> accept) {
  retry_timer_.expires_after(std::chrono::milliseconds(50));
  retry_timer_.async_wait(
      [this, accept = std::move(accept)](const boost::system::error_code& error) {
        if (!error && !closed_) accept();
      });
}

void Listener::AcceptTcp(boost::asio::ip::tcp::acceptor& acceptor, int owner) {
  acceptor.async_accept(
      [this, &acceptor, owner](const boost::system::error_code& error, auto socket) {
        if (closed_ || error == boost::asio::error::operation_aborted) return;
        if (error) {
          if (OutOfDescriptorsOrMemory(error)) {
            return RetryLater([this, &acceptor, owner] { AcceptTcp(acceptor, owner); });
          }
          return AcceptTcp(acceptor, owner);  // the client gave up before we accepted it
        }
        boost::system::error_code peer_error;
        const auto peer = socket.remote_endpoint(peer_error);
        if (peer_error) {
          Refuse(socket, "");
        } else if (Full()) {
          server_context_.stats.rejected_connections.fetch_add(1, std::memory_order_relaxed);
          Refuse(socket, kMaxClientsReached);
        } else if (ProtectedModeRefuses(options_.protected_mode, !options_.requirepass.empty(),
                                        peer.address())) {
          Refuse(socket, kProtectedModeDenied);
        } else {
          boost::system::error_code ignored;
          socket.set_option(boost::asio::ip::tcp::no_delay(true), ignored);
          ClientInfo info;
          info.id = server_context_.NextClientId();
          info.peer_address = EndpointText(peer);
          info.local_address = EndpointText(socket.local_endpoint(ignored));
          info.is_unix = false;
          info.fd = socket.native_handle();
          info.owner_port = owner;
          Admit(socket.release(ignored), std::move(info));
        }
        AcceptTcp(acceptor, owner);
      });
}

void Listener::AcceptUnix() {
  unix_->async_accept([this](const boost::system::error_code& error, auto socket) {
    if (closed_ || error == boost::asio::error::operation_aborted) return;
    if (error) {
      if (OutOfDescriptorsOrMemory(error)) return RetryLater([this] { AcceptUnix(); });
      return AcceptUnix();
    }
    if (Full()) {
      server_context_.stats.rejected_connections.fetch_add(1, std::memory_order_relaxed);
      Refuse(socket, kMaxClientsReached);
    } else {
      ClientInfo info;
      info.id = server_context_.NextClientId();
      info.peer_address = options_.unix_socket + ":0";  // Redis's addr= for Unix clients
      info.local_address = info.peer_address;
      info.is_unix = true;
      info.fd = socket.native_handle();
      boost::system::error_code ignored;
      Admit(socket.release(ignored), std::move(info));
    }
    AcceptUnix();
  });
}

// The descriptor leaves Asio here: each I/O thread runs its own EventLoop
// (event_loop.h says why).
void Listener::Admit(int socket_fd, ClientInfo info) {
  if (socket_fd < 0) return;
  const ConnectionLimits limits{options_.client_output_buffer_limit,
                                options_.client_query_buffer_limit};
  const uint64_t id = info.id;
  EventLoop& loop = info.owner_port >= 0 ? io_threads_.loop(static_cast<size_t>(info.owner_port))
                                         : io_threads_.Next();
  auto connection = std::make_shared<Connection>(loop, socket_fd, server_context_, std::move(info),
                                                 limits, registry_);
  registry_.Add(id, connection);
  server_context_.stats.total_connections_received.fetch_add(1, std::memory_order_relaxed);
  loop.Post([connection] { connection->Start(); });
}

}  // namespace kvlab
