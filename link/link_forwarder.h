// LinkForwarder: the emulated remote link's packet pump.
//
// Reads IP packets from the client-side and the server-side TUN devices,
// holds each in a DelayQueue until its due time (one-way delay, optional
// rate limit, drop tail at the queue limit), then writes it to the other
// side's TUN device. One thread does everything: epoll over both TUN
// descriptors and a signalfd, sleeping until shortly before the next due
// time and polling (spinning) for the last `spin_window`, so an idle link
// costs no CPU while deliveries stay within a few microseconds of due.
//
// Signals: SIGUSR1 prints statistics; SIGTERM, SIGINT and SIGHUP end Run()
// after printing them. Not thread-safe: construct and Run() on one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "link/delay_queue.h"
#include "link/lateness_histogram.h"

namespace kvlab::link {

enum class WaitMode {
  kSleep,   // sleep in epoll until the due time (no spinning)
  kHybrid,  // sleep until due - spin_window, then poll without sleeping
  kBusy,    // never sleep: poll continuously (burns a core)
};

struct ForwarderConfig {
  LinkShape shape;
  WaitMode wait_mode = WaitMode::kHybrid;
  std::chrono::nanoseconds spin_window{std::chrono::microseconds{20}};
};

class LinkForwarder {
 public:
  using Packet = std::vector<std::uint8_t>;

  // Takes ownership of both TUN descriptors (non-blocking, IFF_NO_PI).
  LinkForwarder(ForwarderConfig config, int client_tun_fd, int server_tun_fd, std::FILE* log);
  ~LinkForwarder();

  LinkForwarder(const LinkForwarder&) = delete;
  LinkForwarder& operator=(const LinkForwarder&) = delete;

  // Blocks SIGTERM/SIGINT/SIGHUP/SIGUSR1 for the process and forwards until
  // one of the first three arrives. Returns an empty string on a clean stop,
  // otherwise what went wrong.
  std::string Run();

  // One line of statistics (packets, bytes, drops, delay error, CPU time).
  void PrintStats(const char* when) const;

 private:
  using Clock = std::chrono::steady_clock;

  void ReadAvailable(Direction direction);
  void DeliverDue();
  int TunFor(Direction from) const;  // the descriptor packets from `from` arrive on
  int PeerOf(Direction from) const;  // the descriptor they leave through

  ForwarderConfig config_;
  int client_tun_fd_;
  int server_tun_fd_;
  std::FILE* log_;
  DelayQueue<Packet> queue_;
  LatenessHistogram lateness_;
  std::vector<Packet> spare_buffers_;  // recycled so steady state allocates nothing
  std::vector<std::uint8_t> read_buffer_;
  std::uint64_t write_errors_ = 0;
  std::uint64_t read_errors_ = 0;
};

}  // namespace kvlab::link
