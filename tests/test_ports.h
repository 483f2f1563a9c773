// TCP ports for test servers on 127.0.0.1; shared by the server and harness
// tests. Stateless and thread-safe.
//
// FreeTcpPort(): a port the kernel just handed out (bind to 0, released). A
// race with another process is possible, so a caller retries a failed start
// with a fresh one.
//
// FreeTcpPortRange(count): the first of `count` consecutive ports (e.g.
// --shard-ports BASE). These come from below the kernel's ephemeral range:
// a range taken from bind(0) collides with the next bind(0) (the kernel may
// hand the same port out again once it is released, so a server's main port
// can land on its own shard base) and with any outgoing connection's local
// port. Below the range only another explicit bind can take one; the base is
// random so parallel tests rarely pick the same, and each port is checked
// bindable now. 0 when none was found.
#ifndef KVLAB_TESTS_TEST_PORTS_H_
#define KVLAB_TESTS_TEST_PORTS_H_

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <random>

namespace kvlab::test_ports {

// Binds 127.0.0.1:`port` (0: any) and releases it; the port bound, or 0.
inline uint16_t BindAndRelease(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  socklen_t length = sizeof address;
  uint16_t bound = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    bound = ntohs(address.sin_port);
  }
  ::close(fd);
  return bound;
}

inline uint16_t FreeTcpPort() { return BindAndRelease(0); }

inline uint16_t FreeTcpPortRange(unsigned count) {
  unsigned ephemeral_low = 32768;  // Linux's default when /proc says nothing
  unsigned ephemeral_high = 60999;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> ephemeral_low >> ephemeral_high;
  // Below the ephemeral range when it leaves room (it starts at 32768 by
  // default), else above it.
  unsigned low = 10000;
  unsigned high = ephemeral_low;
  if (high < low + 100 * count) {
    low = ephemeral_high + 1;
    high = 65536;
  }
  if (high < low + count) return 0;
  std::mt19937 random(std::random_device{}());
  std::uniform_int_distribution<unsigned> pick(low, high - count);
  for (int attempt = 0; attempt < 200; ++attempt) {
    const unsigned base = pick(random);
    unsigned free = 0;
    while (free < count && BindAndRelease(static_cast<uint16_t>(base + free)) != 0) ++free;
    if (free == count) return static_cast<uint16_t>(base);
  }
  return 0;
}

}  // namespace kvlab::test_ports

#endif  // KVLAB_TESTS_TEST_PORTS_H_
