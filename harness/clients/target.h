// Target: where the server under test listens, parsed from a URL:
//   tcp://HOST:PORT      (HOST may be a name, an IPv4 address or [IPv6])
//   unix:///PATH         (an absolute path to a Unix domain socket)
// Plain value type; thread-compatible.
#pragma once

#include <string>
#include <string_view>

#include "harness/status.h"

namespace kvlab::harness {

enum class Transport { kTcp, kUnix };

struct Target {
  Transport transport = Transport::kTcp;
  std::string host;  // kTcp only
  int port = 0;      // kTcp only
  std::string path;  // kUnix only

  // The URL this target was parsed from, in canonical form.
  std::string ToUrl() const;
};

// "tcp" or "unix": the transport column of the results.
const char* TransportName(Transport transport);

// Parses `url` into *out. Returns InvalidArgument naming what is wrong and
// which forms are allowed.
Status ParseTarget(std::string_view url, Target* out);

}  // namespace kvlab::harness
