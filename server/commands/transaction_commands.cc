// Transaction commands: MULTI EXEC DISCARD WATCH UNWATCH, with Redis 7.0's
// replies (multi.c). MULTI only opens the queue; the Session queues what
// follows and runs EXEC itself (CommandSpec::kExec), as one AtomicGroup.
#include "engines/clock.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {
namespace {

void Multi(CommandCall& call) {
  Transaction& transaction = call.client.transaction;
  if (transaction.open()) {
    call.reply().Error("ERR MULTI calls can not be nested");
    return;
  }
  transaction.Begin();
  call.reply().Ok();
}

void Discard(CommandCall& call) {
  Transaction& transaction = call.client.transaction;
  if (!transaction.open()) {
    call.reply().Error("ERR DISCARD without MULTI");
    return;
  }
  transaction.TakeQueued();
  call.server.watches.UnwatchAll(transaction.watcher());
  call.reply().Ok();
}

void Watch(CommandCall& call) {
  Transaction& transaction = call.client.transaction;
  if (transaction.open()) {
    call.reply().Error("ERR WATCH inside MULTI is not allowed");
    return;
  }
  const int64_t now_ms = UnixNowMs();
  for (size_t i = 1; i < call.args.size(); ++i) {
    call.server.watches.Watch(transaction.watcher(), call.args[i], now_ms);
  }
  call.reply().Ok();
}

void Unwatch(CommandCall& call) {
  call.server.watches.UnwatchAll(call.client.transaction.watcher());
  call.reply().Ok();
}

}  // namespace

void RegisterTransactionCommands(CommandTable& table) {
  using F = CommandSpec;
  table.Add({.name = "multi",
             .arity = 1,
             .flags = F::kFast | F::kNoMulti,
             .handler = Multi,
             .group = "transactions",
             .summary = "Mark the start of a transaction block"});
  // The Session runs EXEC (kExec): it needs the queue and the reply slots.
  table.Add({.name = "exec",
             .arity = 1,
             .flags = F::kNoMulti | F::kExec,
             .handler = nullptr,
             .group = "transactions",
             .summary = "Execute all commands issued after MULTI"});
  table.Add({.name = "discard",
             .arity = 1,
             .flags = F::kFast | F::kNoMulti,
             .handler = Discard,
             .group = "transactions",
             .summary = "Discard all commands issued after MULTI"});
  table.Add({.name = "watch",
             .arity = -2,
             .flags = F::kFast | F::kNoMulti | F::kAfterQueued,
             .handler = Watch,
             .keys = {.first = 1, .last = -1, .step = 1},
             .group = "transactions",
             .summary = "Watch the given keys to determine execution of the MULTI/EXEC block"});
  table.Add({.name = "unwatch",
             .arity = 1,
             .flags = F::kFast,
             .handler = Unwatch,
             .group = "transactions",
             .summary = "Forget about all watched keys"});
}

}  // namespace kvlab
