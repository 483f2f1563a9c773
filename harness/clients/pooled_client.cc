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

// A blocking read() waits for the reply and copies it in one call: it is
// charged to wait, as the dedicated strategy's poll is; parsing is receive.
// Waiting for a free connection is wait too.
Status PooledClient::RoundTrip(std::string_view request, ReplyPtr* reply, LoadPhaseClock* phases) {
  return pool_.WithBorrowed([&](Connection* connection) {
    EnterPhase(phases, ClientPhase::kSend);
    Status written = connection->Write(request);
    if (!written.ok()) return written;
    for (;;) {
      EnterPhase(phases, ClientPhase::kReceive);
      if (connection->PopReply(reply)) return Status::Ok();
      EnterPhase(phases, ClientPhase::kWait);
      Status read = connection->ReadAvailable();
      if (!read.ok()) return read;
    }
  });
}

void PooledClient::Interrupt() {
  pool_.Fail(Status::Cancelled("interrupted"));
  for (auto& connection : connections_) connection->Shutdown();
}

}  // namespace kvlab::harness
