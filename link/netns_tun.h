// Attaching to a TUN device that lives in a named network namespace.
//
// `ip tuntap add mode tun` inside a namespace creates a persistent TUN
// device there; this opens /dev/net/tun from inside that namespace (setns on
// /var/run/netns/NAME) and attaches to the device by name, then returns the
// calling thread to the namespace it started in. The returned descriptor
// keeps working from any namespace.
//
// Thread-safety: setns() switches the calling thread only; call from a
// process's single thread (or a thread nothing else relies on) at startup.
#pragma once

#include <string>

namespace kvlab::link {

struct TunOpenResult {
  int fd = -1;        // non-blocking, IFF_TUN | IFF_NO_PI; -1 on error
  std::string error;  // set when fd == -1
};

// REQUIRES: root (CAP_SYS_ADMIN for setns, CAP_NET_ADMIN for the device).
TunOpenResult OpenTunInNamespace(const std::string& namespace_name, const std::string& device_name);

}  // namespace kvlab::link
