// MONITOR: this client receives a line for every command any client runs
// from now on (server/monitor_feed.h), until it closes or RESETs. As in
// Redis 7.0's monitorCommand(), a client already monitoring gets no reply.
#include "server/commands/register.h"

namespace kvlab {
namespace {

void Monitor(CommandCall& call) {
  ClientSubscriptions& subs = call.client.pubsub;
  if (subs.monitoring) return;
  subs.monitoring = true;
  call.server.monitors.Add(call.client.info.id, subs.Mailbox());
  call.reply().Ok();
}

}  // namespace

void RegisterMonitorCommand(CommandTable& table) {
  table.Add({.name = "monitor",
             .arity = 1,
             .handler = Monitor,
             .group = "server",
             .summary = "Listen for all requests received by the server in real time"});
}

}  // namespace kvlab
