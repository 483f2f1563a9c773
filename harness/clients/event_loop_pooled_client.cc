#include "harness/clients/event_loop_pooled_client.h"

namespace kvlab::harness {

EventLoopPooledClient::EventLoopPooledClient(const StrategyOptions& options)
    : options_(options),
      loops_(EffectiveLoopThreads(options.io.loop_threads, options.cpus), options.io.flush,
             options.cpus) {}

// Loops first: they complete every waiter before the channels go away.
EventLoopPooledClient::~EventLoopPooledClient() { loops_.Stop(); }

Status EventLoopPooledClient::Connect() {
  Status status = loops_.Open();
  for (int i = 0; status.ok() && i < options_.connections; ++i) {
    std::unique_ptr<Connection> connection;
    status = Connection::Open(options_.target, options_.connection, &connection);
    if (!status.ok()) break;
    auto pooled = std::make_unique<PooledChannel>();
    pooled->channel = std::make_unique<EventLoopChannel>(std::move(connection),
                                                         options_.connection.reply_timeout_s);
    pooled->loop = loops_.Next();
    status = pooled->loop->Adopt(pooled->channel.get());
    channels_.push_back(std::move(pooled));
  }
  if (!status.ok()) return status;
  for (auto& pooled : channels_) pool_.Add(pooled.get());
  loops_.Start();
  return Status::Ok();
}

Status EventLoopPooledClient::RoundTrip(std::string_view request, ReplyPtr* reply,
                                        LoadPhaseClock*) {
  return pool_.WithBorrowed([&](PooledChannel* pooled) {
    ReplyWaiter waiter;
    pooled->loop->Submit(pooled->channel.get(), request, &waiter);
    return waiter.Wait(reply).WithContext("pooled connection");
  });
}

void EventLoopPooledClient::Interrupt() {
  pool_.Fail(Status::Cancelled("interrupted"));
  loops_.Interrupt(Status::Cancelled("interrupted"));
}

}  // namespace kvlab::harness
