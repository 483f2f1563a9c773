#include "tests/server/server_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include "engines/engine.h"
#include "engines/engine_kind.h"
#include "tests/test_ports.h"

extern char** environ;

namespace kvlab::test {
namespace {

using Clock = std::chrono::steady_clock;
// Generous: a TSan-built server starts slowly on a busy 2-core machine.
constexpr std::chrono::seconds kReadyTimeout{30};
constexpr std::chrono::seconds kExitTimeout{30};
constexpr int kStartAttempts = 5;

int RemainingMs(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

// Reads the child's stdout until the ready line, EOF or the deadline.
std::optional<std::string> AwaitReadyLine(int fd, Clock::time_point deadline) {
  std::string text;
  char buffer[4096];
  while (true) {
    if (auto newline = text.find('\n'); newline != std::string::npos) {
      std::string line = text.substr(0, newline);
      if (line.rfind("kvlab-server ready", 0) == 0) return line;
      text.erase(0, newline + 1);
      continue;
    }
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, RemainingMs(deadline));
    if (ready <= 0) return std::nullopt;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) return std::nullopt;
    text.append(buffer, static_cast<size_t>(n));
  }
}

}  // namespace

Status ServerProcess::Start(const std::string& engine, const std::vector<std::string>& extra_args,
                            std::unique_ptr<ServerProcess>* started) {
  Status failed;
  for (int attempt = 0; attempt < kStartAttempts; ++attempt) {
    std::unique_ptr<ServerProcess> server(new ServerProcess());
    char dir_template[] = "/tmp/kvlab-server-test-XXXXXX";
    if (::mkdtemp(dir_template) == nullptr) {
      return Status::Unavailable(std::string("mkdtemp: ") + std::strerror(errno));
    }
    server->temp_dir_ = dir_template;
    server->unix_path_ = server->temp_dir_ + "/kvlab.sock";
    server->port_ = test_ports::FreeTcpPort();

    std::vector<std::string> args = {
        KVLAB_SERVER_PATH, "--engine",        engine, "--port", std::to_string(server->port_),
        "--unixsocket",    server->unix_path_};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);

    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) {
      return Status::Unavailable(std::string("pipe: ") + std::strerror(errno));
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    const int spawned =
        ::posix_spawn(&server->pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    if (spawned != 0) {
      ::close(out[0]);
      return Status::Unavailable(std::string("cannot start ") + argv[0] + ": " +
                                 std::strerror(spawned));
    }
    auto line = AwaitReadyLine(out[0], Clock::now() + kReadyTimeout);
    ::close(out[0]);  // the server's later prints go nowhere; it ignores SIGPIPE
    if (line) {
      server->ready_line_ = *line;
      *started = std::move(server);
      return Status::Ok();
    }
    failed = Status::Unavailable("kvlab-server printed no ready line (port " +
                                 std::to_string(server->port_) +
                                 " taken, or a start-up error: see its stderr above)");
    // The destructor kills and reaps it; another free port may do.
  }
  return failed;
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (!temp_dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(temp_dir_, ignored);
  }
}

bool ServerProcess::Running() {
  if (reaped_) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    reaped_ = true;
    return false;
  }
  return true;
}

std::optional<int> ServerProcess::StopWith(int signal) {
  if (reaped_) return std::nullopt;
  ::kill(pid_, signal);
  const auto deadline = Clock::now() + kExitTimeout;
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      reaped_ = true;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      return std::nullopt;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;  // the destructor SIGKILLs it
}

std::unique_ptr<RawClient> RawClient::Tcp(const std::string& host, uint16_t port,
                                          const std::string& source_host) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  std::unique_ptr<RawClient> client(new RawClient(fd));
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (!source_host.empty()) {
    sockaddr_in source{};
    source.sin_family = AF_INET;
    if (::inet_pton(AF_INET, source_host.c_str(), &source.sin_addr) != 1) return nullptr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof source) != 0) return nullptr;
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) return nullptr;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return nullptr;
  return client;
}

std::unique_ptr<RawClient> RawClient::Unix(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return nullptr;
  std::unique_ptr<RawClient> client(new RawClient(fd));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) return nullptr;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return nullptr;
  return client;
}

RawClient::~RawClient() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawClient::Send(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::string RawClient::ReadExactly(size_t bytes, std::chrono::milliseconds timeout) {
  std::string data;
  const auto deadline = Clock::now() + timeout;
  char buffer[65536];
  while (data.size() < bytes) {
    pollfd pfd{fd_, POLLIN, 0};
    if (::poll(&pfd, 1, RemainingMs(deadline)) <= 0) break;
    const ssize_t n = ::recv(fd_, buffer, std::min(sizeof buffer, bytes - data.size()), 0);
    if (n <= 0) break;
    data.append(buffer, static_cast<size_t>(n));
  }
  return data;
}

std::string RawClient::ReadSome(std::chrono::milliseconds timeout) {
  pollfd pfd{fd_, POLLIN, 0};
  if (::poll(&pfd, 1, static_cast<int>(timeout.count())) <= 0) return "";
  char buffer[65536];
  const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : "";
}

std::string RawClient::ReadUntilClosed(bool* closed, std::chrono::milliseconds timeout) {
  std::string data;
  *closed = false;
  const auto deadline = Clock::now() + timeout;
  char buffer[65536];
  while (true) {
    pollfd pfd{fd_, POLLIN, 0};
    if (::poll(&pfd, 1, RemainingMs(deadline)) <= 0) return data;
    const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n <= 0) {
      *closed = n == 0 || errno == ECONNRESET;
      return data;
    }
    data.append(buffer, static_cast<size_t>(n));
  }
}

void RawClient::Reset() {
  const linger abort_on_close{1, 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &abort_on_close, sizeof abort_on_close);
  ::close(fd_);
  fd_ = -1;
}

std::string EncodeCommand(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& arg : args) {
    out += "$" + std::to_string(arg.size()) + "\r\n";
    out += arg;
    out += "\r\n";
  }
  return out;
}

std::optional<std::string> NonLoopbackAddress() {
  ifaddrs* interfaces = nullptr;
  if (::getifaddrs(&interfaces) != 0) return std::nullopt;
  std::optional<std::string> found;
  for (ifaddrs* it = interfaces; it != nullptr && !found; it = it->ifa_next) {
    if (it->ifa_addr == nullptr || it->ifa_addr->sa_family != AF_INET) continue;
    const auto* address = reinterpret_cast<const sockaddr_in*>(it->ifa_addr);
    if ((ntohl(address->sin_addr.s_addr) >> 24) == 127) continue;
    char text[INET_ADDRSTRLEN];
    if (::inet_ntop(AF_INET, &address->sin_addr, text, sizeof text)) found = text;
  }
  ::freeifaddrs(interfaces);
  return found;
}

uint64_t RaiseOpenFileLimit(uint64_t wanted) {
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < wanted) {
    limit.rlim_cur =
        limit.rlim_max == RLIM_INFINITY ? wanted : std::min<rlim_t>(wanted, limit.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &limit);
    ::getrlimit(RLIMIT_NOFILE, &limit);
  }
  return limit.rlim_cur;
}

std::vector<std::string> ServerEngineKinds() { return EngineKinds(); }

}  // namespace kvlab::test
