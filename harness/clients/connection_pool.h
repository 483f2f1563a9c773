// ConnectionPool: commons-pool2's GenericObjectPool as the pooled strategies
// use it — a fixed set of connections (maxTotal), idle ones kept LIFO (the
// most recently returned is lent next, so one thread keeps reusing one
// connection), a borrow that blocks while every connection is out, and one
// failure that fails the pool: every waiting and later borrower gets it.
// The pool does not own the connections.
//
// Thread safety: thread-safe.
#pragma once

#include <condition_variable>
#include <vector>

#include "base/mutex.h"

#include "harness/status.h"

namespace kvlab::harness {

template <typename ConnectionType>
class ConnectionPool {
 public:
  ConnectionPool() = default;
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // Adds an idle connection (when the pool is filled, before use).
  void Add(ConnectionType* connection) {
    {
      MutexLock lock(mutex_);
      idle_.push_back(connection);
      ++size_;
    }
    returned_.notify_one();
  }

  // Blocks until a connection is idle (or the pool failed).
  Status Borrow(ConnectionType** connection) {
    MutexLock lock(mutex_);
    lock.Wait(returned_, [&]() REQUIRES(mutex_) { return !idle_.empty() || !failure_.ok(); });
    if (!failure_.ok()) return failure_;
    *connection = idle_.back();
    idle_.pop_back();
    return Status::Ok();
  }

  void GiveBack(ConnectionType* connection) {
    {
      MutexLock lock(mutex_);
      idle_.push_back(connection);
    }
    returned_.notify_one();
  }

  // Borrows a connection, runs `use(connection)` (returns a Status) and gives
  // it back. A failed use fails the pool: the connection's stream position
  // is unknown, so it is never reused.
  template <typename Use>
  Status WithBorrowed(Use&& use) {
    ConnectionType* connection = nullptr;
    Status borrowed = Borrow(&connection);
    if (!borrowed.ok()) return borrowed;
    Status used = use(connection);
    if (!used.ok()) {
      Fail(used);
      return used;
    }
    GiveBack(connection);
    return Status::Ok();
  }

  // Fails the pool; the first failure is the one reported.
  void Fail(const Status& status) {
    {
      MutexLock lock(mutex_);
      if (failure_.ok()) failure_ = status;
    }
    returned_.notify_all();
  }

  // Connections currently lent out.
  int borrowed() const {
    MutexLock lock(mutex_);
    return size_ - static_cast<int>(idle_.size());
  }

 private:
  mutable Mutex mutex_;
  std::condition_variable returned_;
  std::vector<ConnectionType*> idle_ GUARDED_BY(mutex_);  // LIFO
  int size_ GUARDED_BY(mutex_) = 0;
  Status failure_ GUARDED_BY(mutex_);
};

}  // namespace kvlab::harness
