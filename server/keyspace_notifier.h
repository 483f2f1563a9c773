// KeyspaceNotifier: Redis's keyspace notifications (notify.c). It hears the
// engine's keyspace events (ModificationFeed, engines/calls/keyspace_events.h)
// and publishes each, as Redis's notifyKeyspaceEvent() does, to
// `__keyspace@0__:<key>` with the event as the message (class K) and to
// `__keyevent@0__:<event>` with the key as the message (class E), through
// the PubSubRegistry, so SUBSCRIBE and PSUBSCRIBE clients receive them like
// any PUBLISH. kvlab has one database, 0.
//
// Also the text of notify-keyspace-events, parsed and written as Redis's
// keyspaceEventsStringToFlags() and keyspaceEventsFlagsToString() do.
//
// Thread-safe: KeyEvent() runs on whichever thread changed the key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engines/modification_feed.h"
#include "server/pubsub_registry.h"

namespace kvlab {

// The classes `text` names ("KEA", "Kl$", ...), or nullopt for a character
// Redis does not know.
std::optional<uint32_t> KeyspaceEventClassesFromText(std::string_view text);
// CONFIG GET's text for `classes` ("AKE" for KEA, as Redis writes it).
std::string KeyspaceEventClassesText(uint32_t classes);

inline constexpr std::string_view kInvalidKeyspaceEventClasses =
    "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.";

class KeyspaceNotifier final : public KeyEventObserver {
 public:
  // Observes `feed` until destroyed.
  KeyspaceNotifier(PubSubRegistry& pubsub, ModificationFeed& feed);
  ~KeyspaceNotifier() override;
  KeyspaceNotifier(const KeyspaceNotifier&) = delete;
  KeyspaceNotifier& operator=(const KeyspaceNotifier&) = delete;

  void KeyEvent(std::string_view event, std::string_view key) override;

 private:
  PubSubRegistry& pubsub_;
  ModificationFeed& feed_;
};

}  // namespace kvlab
