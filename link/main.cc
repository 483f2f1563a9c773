// kvlab-link: the emulated remote link's forwarder (see link_forwarder.h).
// scripts/remote-link creates the namespaces and TUN devices and starts it.
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "link/link_forwarder.h"
#include "link/link_options.h"
#include "link/netns_tun.h"

namespace {

const char* WaitModeName(kvlab::link::WaitMode mode) {
  switch (mode) {
    case kvlab::link::WaitMode::kSleep:
      return "sleep";
    case kvlab::link::WaitMode::kBusy:
      return "busy";
    case kvlab::link::WaitMode::kHybrid:
      break;
  }
  return "hybrid";
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kvlab::link;
  // A daemon must not keep its launcher's descriptors (pipes a caller waits
  // on for EOF, lock files) open for its whole life.
  ::close_range(3, ~0U, 0);
  const LinkOptionsResult parsed =
      ParseLinkOptions(std::vector<std::string>(argv + 1, argv + argc));
  if (!parsed.help.empty()) {
    std::printf("%s", parsed.help.c_str());
    return 0;
  }
  if (!parsed.error.empty()) {
    std::fprintf(stderr, "kvlab-link: %s (try --help)\n", parsed.error.c_str());
    return 2;
  }
  const LinkOptions& options = parsed.options;

  const TunOpenResult client =
      OpenTunInNamespace(options.client.namespace_name, options.client.device_name);
  if (client.fd < 0) {
    std::fprintf(stderr, "kvlab-link: client end: %s\n", client.error.c_str());
    return 1;
  }
  const TunOpenResult server =
      OpenTunInNamespace(options.server.namespace_name, options.server.device_name);
  if (server.fd < 0) {
    std::fprintf(stderr, "kvlab-link: server end: %s\n", server.error.c_str());
    ::close(client.fd);
    return 1;
  }

  // The default 50 µs timer slack would make every timed sleep up to 50 µs
  // late, a fifth of a 250 µs round trip; ask for exact wake-ups.
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  if (options.realtime_priority > 0) {
    sched_param priority{};
    priority.sched_priority = options.realtime_priority;
    if (::sched_setscheduler(0, SCHED_FIFO, &priority) < 0) {
      std::fprintf(stderr, "kvlab-link: SCHED_FIFO %d: %s\n", options.realtime_priority,
                   std::strerror(errno));
      return 1;
    }
  }

  const ForwarderConfig& config = options.forwarder;
  std::fprintf(stderr,
               "kvlab-link: %s/%s <-> %s/%s, one-way delay %.1f us, rate %s, queue %zu packets, "
               "wait %s (spin %.1f us), scheduling %s\n",
               options.client.namespace_name.c_str(), options.client.device_name.c_str(),
               options.server.namespace_name.c_str(), options.server.device_name.c_str(),
               config.shape.one_way_delay.count() / 1000.0,
               config.shape.rate_bits_per_second > 0
                   ? (std::to_string(config.shape.rate_bits_per_second / 1e6) + " Mbit/s").c_str()
                   : "unlimited",
               config.shape.queue_limit_packets, WaitModeName(config.wait_mode),
               config.spin_window.count() / 1000.0,
               options.realtime_priority > 0
                   ? ("SCHED_FIFO " + std::to_string(options.realtime_priority)).c_str()
                   : "normal");

  LinkForwarder forwarder(config, client.fd, server.fd, stderr);
  if (!options.pid_file.empty()) {
    std::ofstream pid_file(options.pid_file, std::ios::trunc);
    pid_file << ::getpid() << '\n';
    if (!pid_file.flush()) {
      std::fprintf(stderr, "kvlab-link: cannot write %s\n", options.pid_file.c_str());
      return 1;
    }
  }
  const std::string error = forwarder.Run();
  if (!error.empty()) {
    std::fprintf(stderr, "kvlab-link: %s\n", error.c_str());
    return 1;
  }
  return 0;
}
