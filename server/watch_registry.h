// WatchRegistry: which connections WATCH which keys, and the flag each
// watcher's EXEC reads (Redis's watched_keys and CLIENT_DIRTY_CAS).
//
// A write command touches its keys twice: when it is dispatched, and again
// once the engine has run it. The first touch reaches an EXEC that runs
// after the write; the second reaches a WATCH registered while the write
// was still on its way to the engine. Both are needed because kvlab's
// engines run a command some time after its session dispatched it.
//
// Thread-safe. Touch() costs one atomic load while nobody watches anything.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engines/entry.h"

namespace kvlab {

class WatchRegistry {
 public:
  // One connection's side: set once any key it watches is touched.
  struct Watcher {
    std::atomic<bool> touched{false};
    std::vector<std::string> keys;  // what it watches; its own thread only
  };

  // Adds `key` to the watcher's keys (once).
  void Watch(Watcher& watcher, std::string_view key);
  // Forgets every key of the watcher (UNWATCH, EXEC, DISCARD, a closed
  // connection) and clears its flag.
  void UnwatchAll(Watcher& watcher);
  // Marks every watcher of `key` but `except` (a transaction's own writes
  // inside its EXEC do not abort it).
  void Touch(std::string_view key, const Watcher* except = nullptr);
  // FLUSHALL: marks every watcher of every key.
  void TouchAll(const Watcher* except = nullptr);
  bool AnyWatched() const { return watches_.load(std::memory_order_seq_cst) != 0; }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::vector<Watcher*>, KeyHash, KeyEqual> watchers_;
  std::atomic<size_t> watches_{0};
};

}  // namespace kvlab
