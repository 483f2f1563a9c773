// CONFIG GET | SET | RESETSTAT | REWRITE | HELP, with Redis 7.0's replies
// (config.c). The parameters, their values and what a SET does are
// ConfigParameters' (server/config_parameters.h).
#include "base/stage_clock.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"
#include "server/commands/subcommands.h"
#include "server/config_parameters.h"
#include "server/server_context.h"

namespace kvlab {
namespace {

void ConfigGet(CommandCall& call) {
  const auto matched = call.server.config.Get(call.args.subspan(2));
  ReplyWriter reply = call.reply();
  reply.MapHeader(matched.size());
  for (const auto& [name, value] : matched) {
    reply.Bulk(name);
    reply.Bulk(value);
  }
}

void ConfigSet(CommandCall& call) {
  if (call.args.size() % 2 != 0) {  // name value pairs after CONFIG SET
    call.reply().Error(kSyntaxError);
    return;
  }
  if (const std::optional<std::string> error = call.server.config.Set(call.args.subspan(2))) {
    call.reply().Error(*error);
    return;
  }
  call.reply().Ok();
}

// Clears what INFO stages accumulates (the stage histograms and every
// thread's busy and waiting time) and INFO commandstats and errorstats, as
// Redis's resetCommandTableStats() and resetErrorTableStats() do. (kvlab's
// other INFO counters are Redis's lifetime totals, which the harness reads
// as window deltas instead.)
void ConfigResetStat(CommandCall& call) {
  ServerContext& server = call.server;
  server.stages.Reset();
  server.command_stats.Reset();
  for (BusyWaitMeter* meter : server.io_thread_meters) meter->Reset(StageClockNs());
  server.engine.ResetThreadTimes();
  call.reply().Ok();
}

void ConfigHelp(CommandCall& call) {
  static constexpr std::string_view kLines[] = {
      "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET <pattern>",
      "    Return parameters matching the glob-like <pattern> and their values.",
      "SET <directive> <value>",
      "    Set the configuration <directive> to <value>.",
      "RESETSTAT",
      "    Reset statistics reported by the INFO command.",
      "REWRITE",
      "    Rewrite the configuration file.",
      "HELP",
      "    Print this help.",
  };
  call.reply().StatusLines(kLines);
}

void Config(CommandCall& call) {
  static constexpr Subcommand kSubcommands[] = {
      {"get", -3, ConfigGet},
      {"set", -4, ConfigSet},
      {"resetstat", 2, ConfigResetStat},
      {"rewrite", 2,
       [](CommandCall& c) { c.reply().Error("ERR The server is running without a config file"); }},
      {"help", 2, ConfigHelp},
  };
  DispatchSubcommand(call, "config", kSubcommands);
}

}  // namespace

void RegisterConfigCommand(CommandTable& table) {
  // After the commands queued before it: CONFIG SET changes what the
  // engines' commands do (hll-sparse-max-bytes, the encoding limits,
  // proto-max-bulk-len), so a pipelined PFADD before it must run with the
  // old value and one after it with the new, as on Redis's one thread.
  table.Add({.name = "config",
             .arity = -2,
             .flags = CommandSpec::kAfterQueued,
             .handler = Config,
             .group = "server",
             .summary = "A container for server configuration commands",
             .subcommands = {"config|get", "config|help", "config|resetstat", "config|rewrite",
                             "config|set"}});
}

}  // namespace kvlab
