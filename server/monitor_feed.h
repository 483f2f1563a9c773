// MonitorFeed: the clients in MONITOR mode and what they are sent — one
// line per command any client runs, as Redis's replicationFeedMonitors()
// writes it: +<unix time>.<microseconds> [0 <client address>] "arg" "arg"...
// with each argument quoted and escaped as sdscatrepr() does, and AUTH's
// and HELLO AUTH's secrets shown as "(redacted)".
//
// A line goes into each monitor's mailbox (the Pub/Sub one: a monitor's
// connection renders it on its own thread). Costs a command one relaxed
// atomic load while nobody monitors.
//
// Thread-safe: any thread may feed, add or remove.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/mutex.h"
#include "server/client_info.h"
#include "server/pubsub_registry.h"

namespace kvlab {

class MonitorFeed {
 public:
  // Whether any client monitors (a hint: one may start or stop meanwhile).
  bool active() const { return monitors_.load(std::memory_order_relaxed) != 0; }
  void Add(uint64_t client, std::shared_ptr<PubSubMailbox> mailbox);
  void Remove(uint64_t client);
  // Sends the line for `args`, run by the client `from`, to every monitor.
  void Feed(const ClientInfo& from, std::span<const std::string_view> args);

  // The line itself, without its time stamp's source (for tests): `time_us`
  // microseconds since the epoch.
  static std::string Line(int64_t time_us, const ClientInfo& from,
                          std::span<const std::string_view> args);

 private:
  std::atomic<int> monitors_{0};
  Mutex mutex_;
  std::vector<std::pair<uint64_t, std::shared_ptr<PubSubMailbox>>> clients_ GUARDED_BY(mutex_);
};

}  // namespace kvlab
