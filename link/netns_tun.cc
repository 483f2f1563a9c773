#include "link/netns_tun.h"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace kvlab::link {
namespace {

std::string ErrnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

// Closes a descriptor when the scope ends, whatever path leaves it.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

TunOpenResult AttachTun(const std::string& device_name) {
  ScopedFd tun(::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (tun.get() < 0) return {-1, ErrnoText("open /dev/net/tun")};
  ifreq request{};
  request.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::strncpy(request.ifr_name, device_name.c_str(), IFNAMSIZ - 1);
  if (::ioctl(tun.get(), TUNSETIFF, &request) < 0) {
    return {-1, ErrnoText("TUNSETIFF " + device_name)};
  }
  return {tun.release(), {}};
}

}  // namespace

TunOpenResult OpenTunInNamespace(const std::string& namespace_name,
                                 const std::string& device_name) {
  if (device_name.empty() || device_name.size() >= IFNAMSIZ) {
    return {-1, "bad TUN device name '" + device_name + "'"};
  }
  ScopedFd original(::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC));
  if (original.get() < 0) return {-1, ErrnoText("open /proc/self/ns/net")};
  const std::string path = "/var/run/netns/" + namespace_name;
  ScopedFd target(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (target.get() < 0) return {-1, ErrnoText("open " + path)};
  if (::setns(target.get(), CLONE_NEWNET) < 0) return {-1, ErrnoText("setns " + path)};

  TunOpenResult result = AttachTun(device_name);
  if (result.fd >= 0)
    result.error.clear();
  else
    result.error = namespace_name + ": " + result.error;

  if (::setns(original.get(), CLONE_NEWNET) < 0) {
    if (result.fd >= 0) ::close(result.fd);
    return {-1, ErrnoText("setns back to the original namespace")};
  }
  return result;
}

}  // namespace kvlab::link
