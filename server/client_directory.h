// ClientDirectory: every connected client as CLIENT LIST and CLIENT KILL see
// it from any connection (Redis's server.clients). Each client lives on its
// own I/O thread, so another client's Session never reads its ClientState:
// the directory holds a Listing per client, which its own Session keeps up
// to date (name, protocol, subscriptions, last command), and a way to close
// it on its own thread.
//
// Thread-safe: Listings are added and removed by their clients' threads
// and read (and killed) by any.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "server/client_info.h"

namespace kvlab {

class ClientDirectory {
 public:
  // What one client shows to the others.
  class Listing {
   public:
    Listing(ClientInfo info, std::function<void()> close)
        : info_(std::move(info)), close_(std::move(close)) {}

    // What CLIENT LIST prints of a client, copied together.
    struct View {
      std::string name;
      int protocol = 2;
      size_t channels = 0, patterns = 0, shard_channels = 0;
      bool pubsub = false;  // Redis's CLIENT_PUBSUB
    };
    const ClientInfo& info() const { return info_; }
    View view() const {
      MutexLock lock(mutex_);
      return view_;
    }
    void set_view(View view) {
      MutexLock lock(mutex_);
      view_ = std::move(view);
    }
    // The last command's name (a CommandSpec's, which lives for the
    // process): one relaxed store per command.
    void set_last_command(const std::string* name) {
      last_command_.store(name, std::memory_order_relaxed);
    }
    const std::string* last_command() const {
      return last_command_.load(std::memory_order_relaxed);
    }
    // Posts the client's close to its own thread.
    void Close() const {
      if (close_) close_();
    }

   private:
    const ClientInfo info_;
    const std::function<void()> close_;
    mutable Mutex mutex_;
    View view_ GUARDED_BY(mutex_);
    std::atomic<const std::string*> last_command_{nullptr};
  };

  // Lists a client; `close` must only post its close to the client's thread.
  std::shared_ptr<Listing> Add(const ClientInfo& info, std::function<void()> close);
  // The client is gone (closed, or killed). Safe to call twice.
  void Remove(uint64_t id);
  // Every listed client, by id.
  std::vector<std::shared_ptr<const Listing>> All() const;
  std::shared_ptr<const Listing> Find(uint64_t id) const;

 private:
  mutable Mutex mutex_;
  std::map<uint64_t, std::shared_ptr<Listing>> listed_ GUARDED_BY(mutex_);
};

}  // namespace kvlab
