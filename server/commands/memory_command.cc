// MEMORY USAGE | PURGE | HELP, with Redis 7.0's replies (object.c's
// memoryCommand()). USAGE answers the engine's estimate of what the key
// costs — the figure --maxmemory is enforced against (Footprint(),
// engines/entry.h) — not an allocator measurement; SAMPLES is parsed as
// Redis parses it, and kvlab's estimate counts every element anyway.
// DOCTOR, STATS and MALLOC-STATS report Redis's own allocator: kvlab
// answers an error saying it does not serve them.
#include "server/commands/arguments.h"
#include "server/commands/register.h"
#include "server/commands/subcommands.h"

namespace kvlab {
namespace {

void MemoryUsage(CommandCall& call) {
  for (size_t i = 3; i < call.args.size(); ++i) {
    if (EqualsIgnoreCase(call.args[i], "samples") && i + 1 < call.args.size()) {
      const std::optional<int64_t> samples = ParseRedisInt64(call.args[i + 1]);
      if (!samples) {
        call.reply().Error(kNotIntegerError);
        return;
      }
      if (*samples < 0) {
        call.reply().Error(kSyntaxError);
        return;
      }
      ++i;
    } else {
      call.reply().Error(kSyntaxError);
      return;
    }
  }
  call.Add(MakeOp(OpCode::kMemoryUsage, call.args[2]));
  call.Defer(RenderIntegerOrNil);
}

void MemoryHelp(CommandCall& call) {
  static constexpr std::string_view kHelp[] = {
      "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "DOCTOR",
      "    Return memory problems reports.",
      "MALLOC-STATS",
      "    Return internal statistics report from the memory allocator.",
      "PURGE",
      "    Attempt to purge dirty pages for reclamation by the allocator.",
      "STATS",
      "    Return information about the memory usage of the server.",
      "USAGE <key> [SAMPLES <count>]",
      "    Return memory in bytes used by <key> and its value. Nested values are",
      "    sampled up to <count> times (default: 5, 0 means sample all).",
      "HELP",
      "    Prints this help."};
  call.reply().StatusLines(kHelp);
}

void AllocatorReportNotServed(CommandCall& call) {
  call.reply().Error("ERR kvlab-server does not report its allocator's internals: MEMORY '" +
                     std::string(AsCString(call.args[1]).substr(0, 128)) + "' is not supported");
}

void Memory(CommandCall& call) {
  static constexpr Subcommand kSubcommands[] = {
      {"usage", -3, MemoryUsage},
      {"purge", 2, [](CommandCall& c) { c.reply().Ok(); }},
      {"help", 2, MemoryHelp},
      {"doctor", 2, AllocatorReportNotServed},
      {"stats", 2, AllocatorReportNotServed},
      {"malloc-stats", 2, AllocatorReportNotServed},
  };
  DispatchSubcommand(call, "memory", kSubcommands);
}

}  // namespace

void RegisterMemoryCommand(CommandTable& table) {
  table.Add({.name = "memory",
             .arity = -2,
             .flags = CommandSpec::kReadOnly,
             .handler = Memory,
             .group = "server",
             .summary = "A container for memory diagnostics commands",
             .subcommands = {"memory|doctor", "memory|help", "memory|malloc-stats", "memory|purge",
                             "memory|stats", "memory|usage"}});
}

}  // namespace kvlab
