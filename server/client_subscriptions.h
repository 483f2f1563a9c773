// ClientSubscriptions: one client's side of Pub/Sub (Redis's
// c->pubsub_channels, c->pubsub_patterns, c->pubsubshard_channels and the
// CLIENT_PUBSUB flag): what it listens to, and the mailbox its messages
// wait in until its connection renders them.
//
// Not thread-safe: lives in the ClientState of one connection's thread. The
// mailbox it shares with the registry is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "server/monitor_feed.h"
#include "server/pubsub_registry.h"

namespace kvlab {

struct ClientSubscriptions {
  std::set<std::string> channels;
  std::set<std::string> shard_channels;
  std::vector<std::string> patterns;  // in subscription order, as Redis lists them
  // Redis's CLIENT_PUBSUB: set by (P|S)SUBSCRIBE, cleared once an
  // unsubscribe leaves none. A RESP2 client in it may only (un)subscribe,
  // PING, QUIT and RESET.
  bool active = false;
  // MONITOR: the mailbox also receives every command's line (monitor_feed.h).
  bool monitoring = false;
  // Posts the rendering of newly arrived messages to the client's thread
  // (empty: they wait for the client's next command).
  std::function<void()> wake;
  std::shared_ptr<PubSubMailbox> mailbox;  // made at the first subscription

  // SUBSCRIBE's and PSUBSCRIBE's count (SSUBSCRIBE's is shard_channels').
  int64_t Count() const { return static_cast<int64_t>(channels.size() + patterns.size()); }
  int64_t Total() const { return Count() + static_cast<int64_t>(shard_channels.size()); }
  const std::shared_ptr<PubSubMailbox>& Mailbox() {
    if (!mailbox) mailbox = std::make_shared<PubSubMailbox>(wake);
    return mailbox;
  }
  bool HasMessages() const { return mailbox && mailbox->HasMessages(); }
  // Leaves every channel, pattern and shard channel in `registry` and
  // MONITOR in `monitors`, without replies (a client that closes or
  // RESETs), and leaves Pub/Sub mode.
  void LeaveAll(PubSubRegistry& registry, MonitorFeed& monitors, uint64_t client_id) {
    if (monitoring) {
      monitors.Remove(client_id);
      monitoring = false;
    }
    for (const std::string& channel : channels) {
      registry.Unsubscribe(PubSubRegistry::Space::kGlobal, channel, client_id);
    }
    for (const std::string& channel : shard_channels) {
      registry.Unsubscribe(PubSubRegistry::Space::kShard, channel, client_id);
    }
    for (const std::string& pattern : patterns) registry.UnsubscribePattern(pattern, client_id);
    channels.clear();
    shard_channels.clear();
    patterns.clear();
    active = false;
  }
};

}  // namespace kvlab
