#include "harness/pooled_client.h"

namespace kvlab::harness {

PooledClient::PooledClient(const StrategyOptions& options) : options_(options) {}

Status PooledClient::Connect() {
  for (int i = 0; i < options_.connections; ++i) {
    std::unique_ptr<Connection> connection;
    Status opened = Connection::Open(options_.target, options_.connection, &connection);
    if (!opened.ok()) return opened;
    connections_.push_back(std::move(connection));
  }
  std::lock_guard lock(mutex_);
  for (auto& connection : connections_) idle_.push_back(connection.get());
  return Status::Ok();
}

Status PooledClient::Borrow(Connection** connection) {
  std::unique_lock lock(mutex_);
  returned_.wait(lock, [&] { return !idle_.empty() || !failure_.ok(); });
  if (!failure_.ok()) return failure_;
  *connection = idle_.back();
  idle_.pop_back();
  return Status::Ok();
}

void PooledClient::GiveBack(Connection* connection) {
  {
    std::lock_guard lock(mutex_);
    idle_.push_back(connection);
  }
  returned_.notify_one();
}

void PooledClient::Fail(const Status& status) {
  {
    std::lock_guard lock(mutex_);
    if (failure_.ok()) failure_ = status;
  }
  returned_.notify_all();
}

int PooledClient::borrowed() const {
  std::lock_guard lock(mutex_);
  return static_cast<int>(connections_.size() - idle_.size());
}

Status PooledClient::Call(std::string_view request, ReplyPtr* reply) {
  Connection* connection = nullptr;
  Status borrowed = Borrow(&connection);
  if (!borrowed.ok()) return borrowed;
  Status called = connection->Call(request, reply);
  if (!called.ok()) {
    Fail(called);  // the connection's stream position is unknown: never reuse it
    return called;
  }
  GiveBack(connection);
  return Status::Ok();
}

void PooledClient::Interrupt() {
  Fail(Status::Cancelled("interrupted"));
  for (auto& connection : connections_) connection->Shutdown();
}

}  // namespace kvlab::harness
