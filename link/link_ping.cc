// kvlab-link-ping: TCP ping-pong round trips, to measure what a link adds.
//
//   kvlab-link-ping serve --bind ADDR --port P [--once]
//   kvlab-link-ping ping --host ADDR --port P [--count N] [--warmup W] [--size B]
//
// `serve` echoes every byte it receives (TCP_NODELAY, one connection at a
// time; --once exits after the first). `ping` sends a B-byte message, waits
// for all B bytes back, N times, and prints the round-trip distribution in
// µs on one line: count min p50 p90 p99 max mean. The integration test and
// the link's accuracy measurements both use it.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

struct Arguments {
  std::string mode;
  std::string address = "127.0.0.1";
  int port = 0;
  int count = 2000;
  int warmup = 100;
  int size = 32;
  bool once = false;
};

int Usage(const char* why) {
  std::fprintf(
      stderr,
      "kvlab-link-ping: %s\nusage: kvlab-link-ping serve --bind ADDR --port P [--once]\n"
      "       kvlab-link-ping ping --host ADDR --port P [--count N] [--warmup W] [--size B]\n",
      why);
  return 2;
}

bool ParseArguments(int argc, char** argv, Arguments& args) {
  if (argc < 2) return false;
  args.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--once") {
      args.once = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    const char* value = argv[++i];
    if (flag == "--bind" || flag == "--host")
      args.address = value;
    else if (flag == "--port")
      args.port = std::atoi(value);
    else if (flag == "--count")
      args.count = std::atoi(value);
    else if (flag == "--warmup")
      args.warmup = std::atoi(value);
    else if (flag == "--size")
      args.size = std::atoi(value);
    else
      return false;
  }
  return (args.mode == "serve" || args.mode == "ping") && args.port > 0 && args.port < 65536 &&
         args.count > 0 && args.warmup >= 0 && args.size > 0 && args.size <= 65536;
}

bool ToAddress(const Arguments& args, sockaddr_in& address) {
  address = {};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(args.port));
  return ::inet_pton(AF_INET, args.address.c_str(), &address.sin_addr) == 1;
}

void SetNoDelay(int fd) {
  const int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

bool WriteAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::recv(fd, data, size, 0);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

int Serve(const Arguments& args) {
  sockaddr_in address{};
  if (!ToAddress(args, address)) return Usage("bad --bind address");
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int on = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) < 0 ||
      ::listen(listener, 16) < 0) {
    std::perror("kvlab-link-ping: bind/listen");
    return 1;
  }
  std::printf("listening %s:%d\n", args.address.c_str(), args.port);
  std::fflush(stdout);
  std::vector<char> buffer(65536);
  do {
    const int connection = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) {
      std::perror("kvlab-link-ping: accept");
      return 1;
    }
    SetNoDelay(connection);
    for (;;) {
      const ssize_t n = ::recv(connection, buffer.data(), buffer.size(), 0);
      if (n <= 0 || !WriteAll(connection, buffer.data(), static_cast<std::size_t>(n))) break;
    }
    ::close(connection);
  } while (!args.once);
  ::close(listener);
  return 0;
}

int Ping(const Arguments& args) {
  sockaddr_in address{};
  if (!ToAddress(args, address)) return Usage("bad --host address");
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) < 0) {
    std::perror("kvlab-link-ping: connect");
    return 1;
  }
  SetNoDelay(fd);
  std::vector<char> message(static_cast<std::size_t>(args.size), 'k');
  std::vector<char> echo(message.size());
  std::vector<double> round_trips_us;
  round_trips_us.reserve(static_cast<std::size_t>(args.count));
  for (int i = 0; i < args.warmup + args.count; ++i) {
    message[0] = static_cast<char>('a' + i % 26);  // so a stale echo cannot pass
    const auto start = std::chrono::steady_clock::now();
    if (!WriteAll(fd, message.data(), message.size()) || !ReadAll(fd, echo.data(), echo.size())) {
      std::fprintf(stderr, "kvlab-link-ping: connection lost after %d round trips\n", i);
      return 1;
    }
    const auto stop = std::chrono::steady_clock::now();
    if (echo != message) {
      std::fprintf(stderr, "kvlab-link-ping: echo differs from the message at round trip %d\n", i);
      return 1;
    }
    if (i >= args.warmup) {
      round_trips_us.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
    }
  }
  ::close(fd);
  std::sort(round_trips_us.begin(), round_trips_us.end());
  auto quantile = [&](double q) {
    return round_trips_us[static_cast<std::size_t>(q *
                                                   static_cast<double>(round_trips_us.size() - 1))];
  };
  const double mean =
      std::accumulate(round_trips_us.begin(), round_trips_us.end(), 0.0) / round_trips_us.size();
  std::printf(
      "count=%zu min_us=%.1f p50_us=%.1f p90_us=%.1f p99_us=%.1f max_us=%.1f mean_us=%.1f\n",
      round_trips_us.size(), round_trips_us.front(), quantile(0.5), quantile(0.9), quantile(0.99),
      round_trips_us.back(), mean);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Arguments args;
  if (!ParseArguments(argc, argv, args)) return Usage("bad arguments");
  return args.mode == "serve" ? Serve(args) : Ping(args);
}
