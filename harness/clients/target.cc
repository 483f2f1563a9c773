#include "harness/clients/target.h"

#include <charconv>

namespace kvlab::harness {
namespace {

constexpr std::string_view kForms = "expected tcp://HOST:PORT or unix:///PATH";

Status Invalid(std::string_view url, std::string_view why) {
  return Status::InvalidArgument("bad target '" + std::string(url) + "': " + std::string(why) +
                                 " (" + std::string(kForms) + ")");
}

}  // namespace

std::string Target::ToUrl() const {
  if (transport == Transport::kUnix) return "unix://" + path;
  const bool ipv6 = host.find(':') != std::string::npos;
  return "tcp://" + (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

const char* TransportName(Transport transport) {
  return transport == Transport::kUnix ? "unix" : "tcp";
}

Status ParseTarget(std::string_view url, Target* out) {
  constexpr std::string_view kTcp = "tcp://";
  constexpr std::string_view kUnix = "unix://";
  Target target;
  if (url.starts_with(kUnix)) {
    std::string_view path = url.substr(kUnix.size());
    if (path.empty() || path.front() != '/')
      return Invalid(url, "the socket path must be absolute");
    target.transport = Transport::kUnix;
    target.path = std::string(path);
    *out = target;
    return Status::Ok();
  }
  if (!url.starts_with(kTcp)) return Invalid(url, "unknown scheme");
  std::string_view rest = url.substr(kTcp.size());
  std::string_view host;
  std::string_view port_text;
  if (rest.starts_with('[')) {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':') {
      return Invalid(url, "an IPv6 host is written [ADDR]:PORT");
    }
    host = rest.substr(1, close - 1);
    port_text = rest.substr(close + 2);
  } else {
    const size_t colon = rest.rfind(':');
    if (colon == std::string_view::npos) return Invalid(url, "missing :PORT");
    host = rest.substr(0, colon);
    port_text = rest.substr(colon + 1);
  }
  if (host.empty()) return Invalid(url, "missing HOST");
  int port = 0;
  const auto [end, error] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (error != std::errc() || end != port_text.data() + port_text.size() || port < 1 ||
      port > 65535) {
    return Invalid(url, "PORT must be a number from 1 to 65535");
  }
  target.transport = Transport::kTcp;
  target.host = std::string(host);
  target.port = port;
  *out = target;
  return Status::Ok();
}

}  // namespace kvlab::harness
