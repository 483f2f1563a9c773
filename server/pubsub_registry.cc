#include "server/pubsub_registry.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "engines/rules/glob.h"

namespace kvlab {
namespace {

// Adds `client` to `name`'s subscribers; false when it is among them.
template <typename Map>
bool AddSubscriber(Map& names, std::string_view name, uint64_t client,
                   const std::shared_ptr<PubSubMailbox>& mailbox) {
  auto it = names.find(std::string(name));
  if (it == names.end()) it = names.emplace(std::string(name), typename Map::mapped_type{}).first;
  auto& subscribers = it->second;
  for (const auto& [id, unused] : subscribers) {
    if (id == client) return false;
  }
  subscribers.emplace_back(client, mailbox);
  return true;
}

// Removes `client` from `name`'s subscribers, and `name` once it has none
// (as Redis frees it, so that a flood of channels does not stay).
template <typename Map>
bool RemoveSubscriber(Map& names, std::string_view name, uint64_t client) {
  const auto it = names.find(std::string(name));
  if (it == names.end()) return false;
  auto& subscribers = it->second;
  const auto at = std::find_if(subscribers.begin(), subscribers.end(),
                               [&](const auto& entry) { return entry.first == client; });
  if (at == subscribers.end()) return false;
  subscribers.erase(at);
  if (subscribers.empty()) names.erase(it);
  return true;
}

}  // namespace

void PubSubMailbox::Deliver(PubSubMessage message) {
  bool was_empty = false;
  {
    MutexLock lock(mutex_);
    was_empty = queue_.empty();
    queue_.push_back(std::move(message));
    waiting_.store(true, std::memory_order_release);
  }
  if (was_empty && wake_) wake_();
}

std::vector<PubSubMessage> PubSubMailbox::Take() {
  std::vector<PubSubMessage> taken;
  MutexLock lock(mutex_);
  taken.swap(queue_);
  waiting_.store(false, std::memory_order_release);
  return taken;
}

bool PubSubRegistry::Subscribe(Space space, std::string_view channel, uint64_t client,
                               const std::shared_ptr<PubSubMailbox>& mailbox) {
  WriterLock lock(mutex_);
  return AddSubscriber(Names(space), channel, client, mailbox);
}

bool PubSubRegistry::Unsubscribe(Space space, std::string_view channel, uint64_t client) {
  WriterLock lock(mutex_);
  return RemoveSubscriber(Names(space), channel, client);
}

bool PubSubRegistry::SubscribePattern(std::string_view pattern, uint64_t client,
                                      const std::shared_ptr<PubSubMailbox>& mailbox) {
  WriterLock lock(mutex_);
  return AddSubscriber(patterns_, pattern, client, mailbox);
}

bool PubSubRegistry::UnsubscribePattern(std::string_view pattern, uint64_t client) {
  WriterLock lock(mutex_);
  return RemoveSubscriber(patterns_, pattern, client);
}

void PubSubRegistry::RemoveClient(uint64_t client) {
  WriterLock lock(mutex_);
  auto remove_from = [client](auto& names) {
    for (auto it = names.begin(); it != names.end();) {
      auto& subscribers = it->second;
      std::erase_if(subscribers, [client](const auto& entry) { return entry.first == client; });
      it = subscribers.empty() ? names.erase(it) : std::next(it);
    }
  };
  remove_from(channels_);
  remove_from(shard_channels_);
  remove_from(patterns_);
}

int64_t PubSubRegistry::Publish(Space space, std::string_view channel, std::string_view payload) {
  int64_t receivers = 0;
  const PubSubMessage::Kind kind =
      space == Space::kGlobal ? PubSubMessage::Kind::kMessage : PubSubMessage::Kind::kShardMessage;
  ReaderLock lock(mutex_);
  const ByName& names = ReadNames(space);
  if (const auto it = names.find(std::string(channel)); it != names.end()) {
    for (const auto& [client, mailbox] : it->second) {
      mailbox->Deliver({kind, {}, std::string(channel), std::string(payload)});
      ++receivers;
    }
  }
  if (space == Space::kShard) return receivers;  // shard channels ignore patterns
  for (const auto& [pattern, subscribers] : patterns_) {
    if (!GlobMatch(pattern, channel, /*nocase=*/false)) continue;
    for (const auto& [client, mailbox] : subscribers) {
      mailbox->Deliver({PubSubMessage::Kind::kPatternMessage, pattern, std::string(channel),
                        std::string(payload)});
      ++receivers;
    }
  }
  return receivers;
}

std::vector<std::string> PubSubRegistry::Channels(Space space, const std::string* pattern) const {
  std::vector<std::string> channels;
  ReaderLock lock(mutex_);
  for (const auto& [channel, unused] : ReadNames(space)) {
    if (pattern == nullptr || GlobMatch(*pattern, channel, /*nocase=*/false)) {
      channels.push_back(channel);
    }
  }
  std::sort(channels.begin(), channels.end());
  return channels;
}

int64_t PubSubRegistry::Subscribers(Space space, std::string_view channel) const {
  ReaderLock lock(mutex_);
  const ByName& names = ReadNames(space);
  const auto it = names.find(std::string(channel));
  return it == names.end() ? 0 : static_cast<int64_t>(it->second.size());
}

int64_t PubSubRegistry::Patterns() const {
  ReaderLock lock(mutex_);
  return static_cast<int64_t>(patterns_.size());
}

int64_t PubSubRegistry::ChannelCount(Space space) const {
  ReaderLock lock(mutex_);
  return static_cast<int64_t>(ReadNames(space).size());
}

}  // namespace kvlab
