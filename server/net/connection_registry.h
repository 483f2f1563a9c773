// ConnectionRegistry: the set of open client connections, for --maxclients
// admission and for closing every client at shutdown.
//
// Thread-safe: connections add themselves from the accepting thread and
// remove themselves from their own I/O thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

#include "base/mutex.h"

namespace kvlab {

class Connection;

class ConnectionRegistry {
 public:
  ConnectionRegistry() = default;
  ConnectionRegistry(const ConnectionRegistry&) = delete;
  ConnectionRegistry& operator=(const ConnectionRegistry&) = delete;

  void Add(uint64_t id, const std::shared_ptr<Connection>& connection);
  void Remove(uint64_t id);
  size_t size() const;
  // Asks every open connection to close (each on its own thread).
  void CloseAll();

 private:
  mutable Mutex mutex_;
  std::unordered_map<uint64_t, std::weak_ptr<Connection>> open_ GUARDED_BY(mutex_);
};

}  // namespace kvlab
