// WatchRegistry: which connections WATCH which keys, and the flag each
// watcher's EXEC reads (Redis's watched_keys and CLIENT_DIRTY_CAS).
//
// The engine reports every key a write changes, from the writing thread and
// with the key still held (ModificationFeed), so a watcher is touched at the
// moment of the write, exactly when Redis's signalModifiedKey() would: a
// write that changes nothing (SETNX on a present key, DEL of a missing one)
// touches nothing. An expired entry reclaimed after the WATCH touches the
// watcher only if the key was live when it was watched (Redis 7.0's
// watchedKey.expired): its deadline is not before the WATCH. The registry is
// the feed's observer only while some key is watched; otherwise a write pays
// one atomic load.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/mutex.h"
#include "engines/entry.h"
#include "engines/modification_feed.h"

namespace kvlab {

class WatchRegistry final : public KeyObserver {
 public:
  // One connection's side: set once any key it watches is changed.
  struct Watcher {
    std::atomic<bool> touched{false};
    std::vector<std::string> keys;  // what it watches; its own thread only
  };

  // `feed` must outlive the registry (the engine's modifications()).
  explicit WatchRegistry(ModificationFeed& feed) : feed_(feed) {}
  ~WatchRegistry() override { feed_.Set(nullptr); }
  WatchRegistry(const WatchRegistry&) = delete;
  WatchRegistry& operator=(const WatchRegistry&) = delete;

  // Adds `key` to the watcher's keys (once), watched at unix ms `now_ms`.
  void Watch(Watcher& watcher, std::string_view key, int64_t now_ms);
  // Forgets every key of the watcher (UNWATCH, EXEC, DISCARD, a closed
  // connection) and clears its flag.
  void UnwatchAll(Watcher& watcher);
  // KeyObserver: marks every watcher of `key`; for an expiry, those that
  // watched it at or before its deadline (Redis: live while now <= deadline).
  void KeyModified(std::string_view key) override;
  void KeyExpired(std::string_view key, int64_t deadline) override;

 private:
  struct Watching {
    Watcher* watcher;
    int64_t watched_at_ms;
  };

  ModificationFeed& feed_;
  Mutex mutex_;
  std::unordered_map<std::string, std::vector<Watching>, KeyHash, KeyEqual> watchers_
      GUARDED_BY(mutex_);
};

}  // namespace kvlab
