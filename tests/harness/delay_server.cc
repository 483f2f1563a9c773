#include "tests/harness/delay_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>

#include "harness/measurement/load_clock.h"

namespace kvlab::harness::testing {
namespace {

struct PendingReply {
  uint64_t due_ns;
  const char* text;
};

// Parses one RESP array of bulk strings at the front of `buffer`; returns
// its length in bytes (0: incomplete) and the first element's name.
size_t ParseCommand(const std::string& buffer, std::string* name) {
  if (buffer.empty() || buffer[0] != '*') return 0;
  size_t position = buffer.find("\r\n");
  if (position == std::string::npos) return 0;
  const long elements = std::strtol(buffer.c_str() + 1, nullptr, 10);
  position += 2;
  for (long i = 0; i < elements; ++i) {
    if (position >= buffer.size() || buffer[position] != '$') return 0;
    const size_t line_end = buffer.find("\r\n", position);
    if (line_end == std::string::npos) return 0;
    const size_t length = std::strtoul(buffer.c_str() + position + 1, nullptr, 10);
    const size_t data = line_end + 2;
    if (data + length + 2 > buffer.size()) return 0;
    if (i == 0) name->assign(buffer, data, length);
    position = data + length + 2;
  }
  return position;
}

}  // namespace

DelayServer::DelayServer(uint64_t delay_ns) : delay_ns_(delay_ns) {
  char pattern[] = "/tmp/kvlab-delay-server-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) return;
  directory_ = pattern;
  socket_path_ = directory_ + "/delay.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socket_path_.c_str(), sizeof(address.sun_path) - 1);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::listen(fd, 64) != 0) {
    ::close(fd);
    return;
  }
  listen_fd_ = fd;
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

DelayServer::~DelayServer() {
  stopping_.store(true);
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> handlers;
  {
    std::lock_guard lock(mutex_);
    for (int fd : connection_fds_) ::shutdown(fd, SHUT_RDWR);
    handlers.swap(handlers_);
  }
  for (std::thread& handler : handlers) handler.join();
  for (int fd : connection_fds_) ::close(fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (!directory_.empty()) std::filesystem::remove_all(directory_);
}

Target DelayServer::unix_target() const {
  Target target;
  (void)ParseTarget("unix://" + socket_path_, &target);
  return target;
}

void DelayServer::AcceptLoop() {
  while (!stopping_.load()) {
    pollfd listening{listen_fd_, POLLIN, 0};
    if (::poll(&listening, 1, 20) <= 0) continue;
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    std::lock_guard lock(mutex_);
    connection_fds_.push_back(fd);
    handlers_.emplace_back([this, fd] { Serve(fd); });
  }
}

void DelayServer::Serve(int fd) {
  std::string input;
  std::string output;
  std::deque<PendingReply> pending;  // in request order; due times never decrease
  char chunk[16384];
  while (!stopping_.load()) {
    // Wait for input, or until the oldest held reply is due (at most 20 ms,
    // to notice stopping).
    uint64_t wait_ns = 20'000'000;
    if (!pending.empty()) {
      const uint64_t now = NowNs();
      wait_ns = pending.front().due_ns > now ? std::min(wait_ns, pending.front().due_ns - now) : 0;
    }
    pollfd readable{fd, POLLIN, 0};
    const timespec timeout{static_cast<time_t>(wait_ns / 1'000'000'000),
                           static_cast<long>(wait_ns % 1'000'000'000)};
    if (::ppoll(&readable, 1, &timeout, nullptr) > 0) {
      const ssize_t got = ::read(fd, chunk, sizeof(chunk));
      if (got <= 0) return;
      const uint64_t arrived = NowNs();
      input.append(chunk, static_cast<size_t>(got));
      std::string name;
      for (size_t used; (used = ParseCommand(input, &name)) > 0;) {
        input.erase(0, used);
        const bool ping = name == "PING" || name == "ping";
        uint64_t due = ping ? arrived + delay_ns_ : arrived;
        if (!pending.empty()) due = std::max(due, pending.back().due_ns);  // FIFO
        pending.push_back({due, ping ? "+PONG\r\n" : name == "INFO" ? "$0\r\n\r\n" : "+OK\r\n"});
      }
    }
    const uint64_t now = NowNs();
    uint64_t answered_pings = 0;
    while (!pending.empty() && pending.front().due_ns <= now) {
      output += pending.front().text;
      answered_pings += pending.front().text[1] == 'P';
      pending.pop_front();
    }
    for (size_t written = 0; written < output.size();) {
      const ssize_t sent = ::write(fd, output.data() + written, output.size() - written);
      if (sent <= 0) return;
      written += static_cast<size_t>(sent);
    }
    output.clear();
    pings_.fetch_add(answered_pings);
  }
}

uint64_t DelayServer::PingsOnceCounted(uint64_t expected) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (pings_.load() < expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return pings_.load();
}

}  // namespace kvlab::harness::testing
