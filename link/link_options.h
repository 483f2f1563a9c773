// Command-line options of kvlab-link, parsed into a ForwarderConfig plus the
// two TUN endpoints. Parsing is a pure function so it can be unit-tested.
//
// Thread-safe: no shared state.
#pragma once

#include <string>
#include <vector>

#include "link/link_forwarder.h"

namespace kvlab::link {

struct TunEndpoint {
  std::string namespace_name;
  std::string device_name;
};

struct LinkOptions {
  ForwarderConfig forwarder;
  TunEndpoint client{"kvlab-client", "kvtun0"};
  TunEndpoint server{"kvlab-server", "kvtun0"};
  std::string pid_file;  // written once both TUN devices are attached; empty: none
  // SCHED_FIFO priority (1..99) for the forwarder, 0: normal scheduling. On a
  // machine shared with the server and client, real-time priority keeps the
  // link's delay accurate when every core is busy.
  int realtime_priority = 0;
};

struct LinkOptionsResult {
  LinkOptions options;
  std::string error;  // non-empty: bad command line
  std::string help;   // non-empty: --help was asked for; print and exit 0
};

LinkOptionsResult ParseLinkOptions(const std::vector<std::string>& arguments);

}  // namespace kvlab::link
