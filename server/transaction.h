// Transaction: one connection's MULTI/EXEC state — whether MULTI is open,
// the commands queued since (their argument bytes owned here, since the
// read buffer moves on), whether a queue-time error doomed the EXEC, and
// the connection's WATCH side (watch_registry.h).
//
// Not thread-safe: lives in its connection's ClientState; only a watcher's
// flag is written by other connections (through the WatchRegistry).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/watch_registry.h"

namespace kvlab {

class Transaction {
 public:
  bool open() const { return open_; }
  bool doomed() const { return doomed_; }
  void Begin() { open_ = true; }
  void Doom() { doomed_ = true; }
  void Queue(std::span<const std::string_view> args) {
    queued_.emplace_back(args.begin(), args.end());
  }
  // Hands the queued commands over and closes MULTI (EXEC, DISCARD).
  std::vector<std::vector<std::string>> TakeQueued() {
    std::vector<std::vector<std::string>> taken = std::move(queued_);
    queued_.clear();
    open_ = false;
    doomed_ = false;
    return taken;
  }

  // The keys WATCHed since the last EXEC, DISCARD or UNWATCH.
  WatchRegistry::Watcher& watcher() { return *watcher_; }
  // EXEC takes the watches it decides on (they stay registered until the
  // engine has run it); later WATCHes start a fresh set.
  std::unique_ptr<WatchRegistry::Watcher> TakeWatcher() {
    std::unique_ptr<WatchRegistry::Watcher> taken = std::move(watcher_);
    watcher_ = std::make_unique<WatchRegistry::Watcher>();
    return taken;
  }

 private:
  std::unique_ptr<WatchRegistry::Watcher> watcher_ = std::make_unique<WatchRegistry::Watcher>();
  bool open_ = false;
  bool doomed_ = false;
  std::vector<std::vector<std::string>> queued_;
};

}  // namespace kvlab
