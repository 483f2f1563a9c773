#include "harness/clients/pooled_client.h"

namespace kvlab::harness {

PooledClient::PooledClient(const StrategyOptions& options) : options_(options) {}

Status PooledClient::Connect() {
  for (int i = 0; i < options_.connections; ++i) {
    std::unique_ptr<Connection> connection;
    Status opened = Connection::Open(options_.target, options_.connection, &connection);
    if (!opened.ok()) return opened;
    connections_.push_back(std::move(connection));
  }
  for (auto& connection : connections_) pool_.Add(connection.get());
  return Status::Ok();
}

Status PooledClient::Call(std::string_view request, ReplyPtr* reply) {
  return pool_.WithBorrowed(
      [&](Connection* connection) { return connection->Call(request, reply); });
}

void PooledClient::Interrupt() {
  pool_.Fail(Status::Cancelled("interrupted"));
  for (auto& connection : connections_) connection->Shutdown();
}

}  // namespace kvlab::harness
