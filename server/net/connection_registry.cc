#include "server/net/connection_registry.h"

#include <vector>

#include "server/net/connection.h"

namespace kvlab {

void ConnectionRegistry::Add(uint64_t id, const std::shared_ptr<Connection>& connection) {
  MutexLock lock(mutex_);
  open_[id] = connection;
}

void ConnectionRegistry::Remove(uint64_t id) {
  MutexLock lock(mutex_);
  open_.erase(id);
}

size_t ConnectionRegistry::size() const {
  MutexLock lock(mutex_);
  return open_.size();
}

void ConnectionRegistry::CloseAll() {
  std::vector<std::shared_ptr<Connection>> open;
  {
    MutexLock lock(mutex_);
    for (auto& [id, weak] : open_) {
      if (auto connection = weak.lock()) open.push_back(std::move(connection));
    }
  }
  for (auto& connection : open) {
    connection->loop().Post([connection] { connection->CloseNow(); });
  }
}

}  // namespace kvlab
