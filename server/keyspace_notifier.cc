#include "server/keyspace_notifier.h"

namespace kvlab {

namespace {

// Redis's NOTIFY_ALL ('A'): every class but key misses and new keys.
constexpr uint32_t kAllClasses = kEventGeneric | kEventString | kEventList | kEventSet |
                                 kEventHash | kEventZSet | kEventExpired | kEventEvicted |
                                 kEventStream | kEventModule;

}  // namespace

std::optional<uint32_t> KeyspaceEventClassesFromText(std::string_view text) {
  uint32_t classes = 0;
  for (const char c : text) {
    switch (c) {
      case 'A':
        classes |= kAllClasses;
        break;
      case 'g':
        classes |= kEventGeneric;
        break;
      case '$':
        classes |= kEventString;
        break;
      case 'l':
        classes |= kEventList;
        break;
      case 's':
        classes |= kEventSet;
        break;
      case 'h':
        classes |= kEventHash;
        break;
      case 'z':
        classes |= kEventZSet;
        break;
      case 'x':
        classes |= kEventExpired;
        break;
      case 'e':
        classes |= kEventEvicted;
        break;
      case 'K':
        classes |= kEventKeyspace;
        break;
      case 'E':
        classes |= kEventKeyevent;
        break;
      case 't':
        classes |= kEventStream;
        break;
      case 'm':
        classes |= kEventKeyMiss;
        break;
      case 'd':
        classes |= kEventModule;
        break;
      case 'n':
        classes |= kEventNew;
        break;
      default:
        return std::nullopt;
    }
  }
  return classes;
}

std::string KeyspaceEventClassesText(uint32_t classes) {
  std::string text;
  if ((classes & kAllClasses) == kAllClasses) {
    text += 'A';
  } else {
    constexpr std::pair<uint32_t, char> kOrder[] = {
        {kEventGeneric, 'g'}, {kEventString, '$'}, {kEventList, 'l'},    {kEventSet, 's'},
        {kEventHash, 'h'},    {kEventZSet, 'z'},   {kEventExpired, 'x'}, {kEventEvicted, 'e'},
        {kEventStream, 't'},  {kEventModule, 'd'}, {kEventNew, 'n'}};
    for (const auto& [bit, letter] : kOrder) {
      if ((classes & bit) != 0) text += letter;
    }
  }
  if ((classes & kEventKeyspace) != 0) text += 'K';
  if ((classes & kEventKeyevent) != 0) text += 'E';
  if ((classes & kEventKeyMiss) != 0) text += 'm';
  return text;
}

KeyspaceNotifier::KeyspaceNotifier(PubSubRegistry& pubsub, ModificationFeed& feed)
    : pubsub_(pubsub), feed_(feed) {
  feed_.SetEventObserver(this);
}

KeyspaceNotifier::~KeyspaceNotifier() { feed_.SetEventObserver(nullptr); }

void KeyspaceNotifier::KeyEvent(std::string_view event, std::string_view key) {
  // The feed calls only for a class that is on; K and E say where it goes.
  const uint32_t classes = feed_.event_classes();
  if ((classes & kEventKeyspace) != 0) {
    std::string channel = "__keyspace@0__:";
    channel.append(key);
    pubsub_.Publish(PubSubRegistry::Space::kGlobal, channel, event);
  }
  if ((classes & kEventKeyevent) != 0) {
    std::string channel = "__keyevent@0__:";
    channel.append(event);
    pubsub_.Publish(PubSubRegistry::Space::kGlobal, channel, key);
  }
}

}  // namespace kvlab
