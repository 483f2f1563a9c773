#include "server/watch_registry.h"

#include <algorithm>

namespace kvlab {

void WatchRegistry::Watch(Watcher& watcher, std::string_view key) {
  if (std::find(watcher.keys.begin(), watcher.keys.end(), key) != watcher.keys.end()) return;
  std::lock_guard lock(mutex_);
  auto it = watchers_.find(key);
  if (it == watchers_.end()) it = watchers_.emplace(std::string(key), std::vector<Watcher*>{}).first;
  it->second.push_back(&watcher);
  watcher.keys.emplace_back(key);
  watches_.fetch_add(1, std::memory_order_seq_cst);
}

void WatchRegistry::UnwatchAll(Watcher& watcher) {
  if (!watcher.keys.empty()) {
    std::lock_guard lock(mutex_);
    for (const std::string& key : watcher.keys) {
      auto it = watchers_.find(key);
      if (it == watchers_.end()) continue;
      std::erase(it->second, &watcher);
      if (it->second.empty()) watchers_.erase(it);
      watches_.fetch_sub(1, std::memory_order_seq_cst);
    }
    watcher.keys.clear();
  }
  watcher.touched.store(false, std::memory_order_release);
}

void WatchRegistry::Touch(std::string_view key, const Watcher* except) {
  if (!AnyWatched()) return;
  std::lock_guard lock(mutex_);
  auto it = watchers_.find(key);
  if (it == watchers_.end()) return;
  for (Watcher* watcher : it->second) {
    if (watcher != except) watcher->touched.store(true, std::memory_order_release);
  }
}

void WatchRegistry::TouchAll(const Watcher* except) {
  if (!AnyWatched()) return;
  std::lock_guard lock(mutex_);
  for (auto& [key, watchers] : watchers_) {
    for (Watcher* watcher : watchers) {
      if (watcher != except) watcher->touched.store(true, std::memory_order_release);
    }
  }
}

}  // namespace kvlab
