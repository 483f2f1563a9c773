#include "harness/clients/event_loop_shared_client.h"

namespace kvlab::harness {

EventLoopSharedClient::EventLoopSharedClient(const StrategyOptions& options)
    : options_(options),
      loops_(EffectiveLoopThreads(options.io.loop_threads, options.cpus), options.io.flush,
             options.cpus) {}

// Loops first: they complete every waiter before the channel goes away.
EventLoopSharedClient::~EventLoopSharedClient() { loops_.Stop(); }

Status EventLoopSharedClient::Connect() {
  Status status = loops_.Open();
  std::unique_ptr<Connection> connection;
  if (status.ok()) status = Connection::Open(options_.target, options_.connection, &connection);
  if (!status.ok()) return status;
  channel_ = std::make_unique<EventLoopChannel>(std::move(connection),
                                                options_.connection.reply_timeout_s);
  loop_ = loops_.Next();
  status = loop_->Adopt(channel_.get());
  if (!status.ok()) return status;
  loops_.Start();
  return Status::Ok();
}

Status EventLoopSharedClient::RoundTrip(std::string_view request, ReplyPtr* reply,
                                        LoadPhaseClock*) {
  ReplyWaiter waiter;
  loop_->Submit(channel_.get(), request, &waiter);
  Status answered = waiter.Wait(reply);
  return answered.ok() ? answered : answered.WithContext("shared connection");
}

void EventLoopSharedClient::Interrupt() { loops_.Interrupt(Status::Cancelled("interrupted")); }

}  // namespace kvlab::harness
