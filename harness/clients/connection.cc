#include "harness/clients/connection.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "harness/clients/resp_encoding.h"

namespace kvlab::harness {
namespace {

timeval ToTimeval(double seconds) {
  timeval tv;
  tv.tv_sec = static_cast<time_t>(seconds);
  tv.tv_usec = static_cast<suseconds_t>((seconds - std::floor(seconds)) * 1e6);
  return tv;
}

}  // namespace

Status Connection::Open(const Target& target, const ConnectionOptions& options,
                        std::unique_ptr<Connection>* out) {
  const timeval timeout = ToTimeval(options.connect_timeout_s);
  redisContext* context = target.transport == Transport::kUnix
                              ? redisConnectUnixWithTimeout(target.path.c_str(), timeout)
                              : redisConnectWithTimeout(target.host.c_str(), target.port, timeout);
  if (context == nullptr) return Status::ConnectionFailed("cannot allocate a hiredis context");
  if (context->err != 0) {
    Status failed =
        Status::ConnectionFailed("cannot connect to " + target.ToUrl() + ": " + context->errstr);
    redisFree(context);
    return failed;
  }
  // hiredis sets TCP_NODELAY on every TCP connection; turn it off on request.
  if (target.transport == Transport::kTcp) {
    const int flag = options.tcp_nodelay ? 1 : 0;
    if (setsockopt(context->fd, IPPROTO_TCP, TCP_NODELAY, &flag, sizeof(flag)) != 0) {
      Status failed =
          Status::ConnectionFailed(std::string("setsockopt(TCP_NODELAY): ") + std::strerror(errno));
      redisFree(context);
      return failed;
    }
  }
  redisReader* reader = redisReaderCreate();
  if (reader == nullptr) {
    redisFree(context);
    return Status::ConnectionFailed("cannot allocate a hiredis reader");
  }
  std::unique_ptr<Connection> connection(new Connection(context, reader, options.reply_timeout_s));
  if (!options.password.empty()) {
    Status authenticated = connection->Authenticate(options.user, options.password);
    if (!authenticated.ok()) return authenticated.WithContext(target.ToUrl());
  }
  *out = std::move(connection);
  return Status::Ok();
}

Status Connection::Authenticate(const std::string& user, const std::string& password) {
  std::string request;
  if (user.empty()) {
    AppendCommand(&request, {"AUTH", password});
  } else {
    AppendCommand(&request, {"AUTH", user, password});
  }
  ReplyPtr reply;
  Status called = Call(request, &reply);
  if (!called.ok()) return Status::ConnectionFailed("AUTH got no answer: " + called.message());
  if (reply->type == REDIS_REPLY_ERROR) {
    // The server's text never echoes the password (Redis: -WRONGPASS ..., or
    // -ERR AUTH <password> called without any password configured ...).
    return Status::ConnectionFailed("AUTH refused: " + std::string(reply->str, reply->len) +
                                    " (check --password" + (user.empty() ? "" : " and --user") +
                                    ")");
  }
  if (reply->type != REDIS_REPLY_STATUS) {
    return Status::ConnectionFailed("AUTH answered something other than +OK");
  }
  return Status::Ok();
}

Connection::Connection(redisContext* context, redisReader* reader, double reply_timeout_s)
    : context_(context),
      reader_(reader),
      reply_timeout_ms_(static_cast<int>(reply_timeout_s * 1000)),
      read_buffer_(kReadChunkBytes, '\0') {}

Connection::~Connection() {
  redisReaderFree(reader_);
  redisFree(context_);
}

Status Connection::Write(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::send(context_->fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (written < 0) {
      if (errno == EINTR) continue;
      return Status::IoError(std::string("write failed: ") + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return Status::Ok();
}

bool Connection::WaitReadable(int timeout_ms) {
  pollfd waiting{context_->fd, POLLIN, 0};
  for (;;) {
    const int ready = ::poll(&waiting, 1, timeout_ms);
    if (ready >= 0) return ready > 0;
    if (errno != EINTR) return true;  // let the read report the error
  }
}

Status Connection::ReadAvailable() {
  if (protocol_error_) return Status::IoError("protocol error in the server's reply");
  if (!WaitReadable(reply_timeout_ms_)) {
    return Status::IoError("no reply within " + std::to_string(reply_timeout_ms_ / 1000) + " s");
  }
  for (;;) {
    const ssize_t got = ::read(context_->fd, read_buffer_.data(), read_buffer_.size());
    if (got > 0) {
      if (redisReaderFeed(reader_, read_buffer_.data(), static_cast<size_t>(got)) != REDIS_OK) {
        return Status::IoError("cannot buffer the server's reply");
      }
      return Status::Ok();
    }
    if (got == 0) return Status::IoError("connection closed by the server");
    if (errno == EINTR) continue;
    return Status::IoError(std::string("read failed: ") + std::strerror(errno));
  }
}

bool Connection::PopReply(ReplyPtr* reply) {
  void* parsed = nullptr;
  if (redisReaderGetReply(reader_, &parsed) != REDIS_OK) {
    protocol_error_ = true;
    return false;
  }
  if (parsed == nullptr) return false;
  reply->reset(static_cast<redisReply*>(parsed));
  return true;
}

Status Connection::ReadReply(ReplyPtr* reply) {
  for (;;) {
    if (PopReply(reply)) return Status::Ok();
    Status read = ReadAvailable();
    if (!read.ok()) return read;
  }
}

Status Connection::Call(std::string_view request, ReplyPtr* reply) {
  Status written = Write(request);
  if (!written.ok()) return written;
  return ReadReply(reply);
}

void Connection::Shutdown() { ::shutdown(context_->fd, SHUT_RDWR); }

}  // namespace kvlab::harness
