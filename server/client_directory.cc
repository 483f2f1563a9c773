#include "server/client_directory.h"

namespace kvlab {

std::shared_ptr<ClientDirectory::Listing> ClientDirectory::Add(const ClientInfo& info,
                                                               std::function<void()> close) {
  auto listing = std::make_shared<Listing>(info, std::move(close));
  MutexLock lock(mutex_);
  listed_[info.id] = listing;
  return listing;
}

void ClientDirectory::Remove(uint64_t id) {
  MutexLock lock(mutex_);
  listed_.erase(id);
}

std::vector<std::shared_ptr<const ClientDirectory::Listing>> ClientDirectory::All() const {
  std::vector<std::shared_ptr<const Listing>> all;
  MutexLock lock(mutex_);
  all.reserve(listed_.size());
  for (const auto& [id, listing] : listed_) all.push_back(listing);
  return all;
}

std::shared_ptr<const ClientDirectory::Listing> ClientDirectory::Find(uint64_t id) const {
  MutexLock lock(mutex_);
  const auto it = listed_.find(id);
  return it == listed_.end() ? nullptr : it->second;
}

}  // namespace kvlab
