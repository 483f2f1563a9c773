// SAVE and SHUTDOWN: the commands that act on the server process rather than
// on keys. Both are refused inside MULTI with Redis's error (its no-multi
// flag), which dooms the EXEC.
//
// SHUTDOWN stops kvlab-server the way SIGTERM does (main.cc's sigwait:
// stop accepting, close every client, finish in-flight batches, exit 0,
// through ServerContext::shutdown), so like Redis it sends no reply: the
// connection closes. kvlab keeps no
// snapshot, so SAVE, and SHUTDOWN SAVE (which must not exit without one),
// answer an error that says so instead of pretending to have written one.
#include "server/commands/arguments.h"
#include "server/commands/register.h"
#include "server/server_context.h"

namespace kvlab {
namespace {

constexpr std::string_view kNoSnapshotError =
    "ERR kvlab-server keeps no snapshot (no RDB persistence): SAVE is not supported";

void Save(CommandCall& call) { call.reply().Error(kNoSnapshotError); }

// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT], parsed as Redis 7.0's
// shutdownCommand() does.
void Shutdown(CommandCall& call) {
  bool save = false, nosave = false, now_or_force = false, abort = false;
  for (size_t i = 1; i < call.args.size(); ++i) {
    const std::string_view option = call.args[i];
    if (EqualsIgnoreCase(option, "nosave")) {
      nosave = true;
    } else if (EqualsIgnoreCase(option, "save")) {
      save = true;
    } else if (EqualsIgnoreCase(option, "now") || EqualsIgnoreCase(option, "force")) {
      // Redis: skip waiting for replicas / ignore save errors; kvlab has neither.
      now_or_force = true;
    } else if (EqualsIgnoreCase(option, "abort")) {
      abort = true;
    } else {
      call.reply().Error(kSyntaxError);
      return;
    }
  }
  if ((abort && (save || nosave || now_or_force)) || (save && nosave)) {
    call.reply().Error(kSyntaxError);
    return;
  }
  if (abort) {
    // kvlab's shutdown does not wait for anything, so none is ever pending.
    call.reply().Error("ERR No shutdown in progress.");
    return;
  }
  if (save) {
    call.reply().Error("ERR Errors trying to SHUTDOWN. Check logs.");
    return;
  }
  if (!call.server.shutdown) {
    call.reply().Error("ERR Errors trying to SHUTDOWN. Check logs.");
    return;
  }
  call.server.shutdown();
}

}  // namespace

void RegisterLifecycleCommands(CommandTable& table) {
  using F = CommandSpec;
  table.Add({.name = "save",
             .arity = 1,
             .flags = F::kRefusedInMulti,
             .handler = Save,
             .group = "server",
             .summary = "Synchronously save the dataset to disk"});
  table.Add({.name = "shutdown",
             .arity = -1,
             .flags = F::kRefusedInMulti,
             .handler = Shutdown,
             .group = "server",
             .summary = "Synchronously save the dataset to disk and then shut down the server"});
}

}  // namespace kvlab
