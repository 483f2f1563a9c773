#include "link/link_forwarder.h"

#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>

namespace kvlab::link {
namespace {

constexpr std::size_t kMaxPacketBytes = 65536;  // larger than any MTU a TUN can have
constexpr std::size_t kSpareBufferLimit = 4096;
constexpr std::uint32_t kSignalTag = 2;

double CpuSecondsUsed() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) { return tv.tv_sec + tv.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

LinkForwarder::LinkForwarder(ForwarderConfig config, int client_tun_fd, int server_tun_fd,
                             std::FILE* log)
    : config_(config),
      client_tun_fd_(client_tun_fd),
      server_tun_fd_(server_tun_fd),
      log_(log),
      queue_(config.shape),
      read_buffer_(kMaxPacketBytes) {}

LinkForwarder::~LinkForwarder() {
  ::close(client_tun_fd_);
  ::close(server_tun_fd_);
}

int LinkForwarder::TunFor(Direction from) const {
  return from == Direction::ClientToServer ? client_tun_fd_ : server_tun_fd_;
}

int LinkForwarder::PeerOf(Direction from) const {
  return from == Direction::ClientToServer ? server_tun_fd_ : client_tun_fd_;
}

void LinkForwarder::ReadAvailable(Direction direction) {
  const int fd = TunFor(direction);
  for (;;) {
    const ssize_t n = ::read(fd, read_buffer_.data(), read_buffer_.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) ++read_errors_;
      return;
    }
    // The packet entered the link now: its delay counts from here.
    const Clock::time_point arrival = Clock::now();
    Packet packet;
    if (!spare_buffers_.empty()) {
      packet = std::move(spare_buffers_.back());
      spare_buffers_.pop_back();
    }
    packet.assign(read_buffer_.begin(), read_buffer_.begin() + n);
    if (!queue_.Push(direction, packet, static_cast<std::size_t>(n), arrival)) {
      if (spare_buffers_.size() < kSpareBufferLimit) spare_buffers_.push_back(std::move(packet));
    }
  }
}

void LinkForwarder::DeliverDue() {
  for (;;) {
    const Clock::time_point now = Clock::now();
    std::optional<DelayQueue<Packet>::Entry> entry = queue_.PopDue(now);
    if (!entry) return;
    lateness_.Record(now - entry->due);
    // A TUN write hands the packet to the peer namespace's IP stack; it does
    // not block. Errors (peer device down) lose the packet, as a wire would.
    if (::write(PeerOf(entry->direction), entry->payload.data(), entry->payload.size()) < 0) {
      ++write_errors_;
    }
    if (spare_buffers_.size() < kSpareBufferLimit) {
      spare_buffers_.push_back(std::move(entry->payload));
    }
  }
}

std::string LinkForwarder::Run() {
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGTERM, SIGINT, SIGHUP, SIGUSR1}) sigaddset(&signals, s);
  if (::sigprocmask(SIG_BLOCK, &signals, nullptr) < 0) {
    return std::string("sigprocmask: ") + std::strerror(errno);
  }
  const int signal_fd = ::signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC);
  const int epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (signal_fd < 0 || epoll_fd < 0) return std::string("signalfd/epoll: ") + std::strerror(errno);

  auto watch = [&](int fd, std::uint32_t tag) {
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.u32 = tag;
    return ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event);
  };
  std::string error;
  if (watch(client_tun_fd_, static_cast<std::uint32_t>(Direction::ClientToServer)) < 0 ||
      watch(server_tun_fd_, static_cast<std::uint32_t>(Direction::ServerToClient)) < 0 ||
      watch(signal_fd, kSignalTag) < 0) {
    error = std::string("epoll_ctl: ") + std::strerror(errno);
  }

  bool stopping = !error.empty();
  std::array<epoll_event, 8> events{};
  while (!stopping) {
    DeliverDue();

    // Sleep until the spin window before the next due packet (or until a
    // packet or signal arrives); inside the window, poll without sleeping.
    timespec timeout{};
    const timespec* timeout_ptr = &timeout;
    const std::optional<Clock::time_point> next_due = queue_.NextDue();
    if (config_.wait_mode == WaitMode::kBusy) {
      // zero timeout: poll
    } else if (!next_due) {
      timeout_ptr = nullptr;  // idle link: sleep until a packet arrives
    } else {
      const auto spin = config_.wait_mode == WaitMode::kHybrid ? config_.spin_window
                                                               : std::chrono::nanoseconds{0};
      const auto sleep_for = *next_due - spin - Clock::now();
      if (sleep_for > std::chrono::nanoseconds{0}) {
        const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(sleep_for).count();
        timeout.tv_sec = nanos / 1'000'000'000;
        timeout.tv_nsec = nanos % 1'000'000'000;
      }
    }

    const int ready = ::epoll_pwait2(epoll_fd, events.data(), static_cast<int>(events.size()),
                                     timeout_ptr, nullptr);
    if (ready < 0) {
      if (errno == EINTR) continue;
      error = std::string("epoll_pwait2: ") + std::strerror(errno);
      break;
    }
    for (int i = 0; i < ready; ++i) {
      const std::uint32_t tag = events[static_cast<std::size_t>(i)].data.u32;
      if (tag != kSignalTag) {
        ReadAvailable(static_cast<Direction>(tag));
        continue;
      }
      signalfd_siginfo info{};
      while (::read(signal_fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        if (info.ssi_signo == SIGUSR1) {
          PrintStats("on SIGUSR1");
        } else {
          stopping = true;
        }
      }
    }
  }
  PrintStats("at exit");
  ::close(epoll_fd);
  ::close(signal_fd);
  return error;
}

void LinkForwarder::PrintStats(const char* when) const {
  std::fprintf(log_, "kvlab-link stats %s:", when);
  for (Direction direction : kBothDirections) {
    const DirectionCounters& c = queue_.Counters(direction);
    std::fprintf(log_, " %s packets=%llu bytes=%llu delivered=%llu drops=%llu queued_now=%zu;",
                 DirectionName(direction), static_cast<unsigned long long>(c.queued_packets),
                 static_cast<unsigned long long>(c.queued_bytes),
                 static_cast<unsigned long long>(c.delivered_packets),
                 static_cast<unsigned long long>(c.dropped_packets), queue_.Size(direction));
  }
  std::fprintf(log_,
               " delay_error_us mean=%.2f p50<=%.0f p99<=%.0f p99.9<=%.0f max=%.1f;"
               " read_errors=%llu write_errors=%llu cpu_s=%.3f\n",
               lateness_.MeanMicros(), lateness_.QuantileMicros(0.5),
               lateness_.QuantileMicros(0.99), lateness_.QuantileMicros(0.999),
               lateness_.MaxMicros(), static_cast<unsigned long long>(read_errors_),
               static_cast<unsigned long long>(write_errors_), CpuSecondsUsed());
  std::fflush(log_);
}

}  // namespace kvlab::link
