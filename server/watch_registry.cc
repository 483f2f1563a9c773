#include "server/watch_registry.h"

#include <algorithm>

namespace kvlab {

void WatchRegistry::Watch(Watcher& watcher, std::string_view key, int64_t now_ms) {
  if (std::find(watcher.keys.begin(), watcher.keys.end(), key) != watcher.keys.end()) return;
  MutexLock lock(mutex_);
  auto it = watchers_.find(key);
  if (it == watchers_.end())
    it = watchers_.emplace(std::string(key), std::vector<Watching>{}).first;
  it->second.push_back(Watching{&watcher, now_ms});
  watcher.keys.emplace_back(key);
  // Installed once the key is registered: a write that still found no
  // observer came before this WATCH (see ModificationFeed::Set()).
  feed_.Set(this);
}

void WatchRegistry::UnwatchAll(Watcher& watcher) {
  if (!watcher.keys.empty()) {
    MutexLock lock(mutex_);
    for (const std::string& key : watcher.keys) {
      auto it = watchers_.find(key);
      if (it == watchers_.end()) continue;
      std::erase_if(it->second, [&](const Watching& w) { return w.watcher == &watcher; });
      if (it->second.empty()) watchers_.erase(it);
    }
    watcher.keys.clear();
    if (watchers_.empty()) feed_.Set(nullptr);
  }
  watcher.touched.store(false, std::memory_order_release);
}

void WatchRegistry::KeyModified(std::string_view key) {
  MutexLock lock(mutex_);
  auto it = watchers_.find(key);
  if (it == watchers_.end()) return;
  for (const Watching& w : it->second) w.watcher->touched.store(true, std::memory_order_release);
}

void WatchRegistry::KeyExpired(std::string_view key, int64_t deadline) {
  MutexLock lock(mutex_);
  auto it = watchers_.find(key);
  if (it == watchers_.end()) return;
  for (const Watching& w : it->second) {
    if (w.watched_at_ms <= deadline) w.watcher->touched.store(true, std::memory_order_release);
  }
}

}  // namespace kvlab
