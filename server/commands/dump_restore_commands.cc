// DUMP and RESTORE (cluster.c's dumpCommand() and restoreCommand()), with
// Redis 7.0's replies and the order of its checks: the options, then
// BUSYKEY (the key exists and no REPLACE), then the TTL, then the payload's
// version and checksum, then its contents. The payload format is
// engines/containers/dump_payload.h's. RESTORE's value is built by the engine with the
// key held, so it replaces the key in one step. IDLETIME and FREQ are
// checked and then ignored: kvlab keeps no LRU or LFU data.
#include <cstdint>
#include <optional>
#include <string>

#include "engines/clock.h"
#include "engines/containers/dump_payload.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {
namespace {

void RenderDump(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
                ServerContext&) {
  if (results[0].kind == OpResult::Kind::kBulk) {
    writer.Bulk(results[0].bulk.view());
  } else {
    writer.Nil();
  }
}

void Dump(CommandCall& call) {
  call.Add(MakeOp(OpCode::kDump, call.args[1]));
  call.Defer(RenderDump);
}

constexpr std::string_view kBusyKeyError = "BUSYKEY Target key name already exists.";

// What RESTORE found wrong before it asked the engine, in Redis's order
// after BUSYKEY; the deferred reply's flags hold one.
enum RestoreProblem : int64_t {
  kNoProblem = 0,
  kTtlNotInteger,
  kTtlNegative,
  kVersionOrChecksum,
  kBadFormat,
};

std::string_view ProblemText(int64_t problem) {
  switch (problem) {
    case kTtlNotInteger:
      return kNotIntegerError;
    case kTtlNegative:
      return "ERR Invalid TTL value, must be >= 0";
    case kVersionOrChecksum:
      return "ERR DUMP payload version or checksum are wrong";
    default:
      return "ERR Bad data format";
  }
}

// A RESTORE with a problem and no REPLACE asked only whether the key exists.
void RenderRestoreProblem(const DeferredReply& deferred, std::span<const OpResult> results,
                          ReplyWriter& writer, ServerContext&) {
  if (results[0].integer != 0) {
    writer.Error(kBusyKeyError);
  } else {
    writer.Error(ProblemText(deferred.flags));
  }
}

void RenderRestore(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
                   ServerContext&) {
  const OpResult& result = results[0];
  if (result.kind == OpResult::Kind::kInteger) {
    writer.Error(kBusyKeyError);
  } else if (result.kind == OpResult::Kind::kError) {
    RenderContainerResult(result, writer);
  } else {
    writer.Ok();
  }
}

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
void Restore(CommandCall& call) {
  const auto& args = call.args;
  bool replace = false;
  bool absolute = false;
  bool idle_given = false;
  bool freq_given = false;
  for (size_t j = 4; j < args.size(); ++j) {
    const bool has_value = j + 1 < args.size();
    if (EqualsIgnoreCase(args[j], "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(args[j], "absttl")) {
      absolute = true;
    } else if (EqualsIgnoreCase(args[j], "idletime") && has_value && !freq_given) {
      std::optional<int64_t> idle = ParseRedisInt64(args[++j]);
      if (!idle) {
        call.reply().Error(kNotIntegerError);
        return;
      }
      if (*idle < 0) {
        call.reply().Error("ERR Invalid IDLETIME value, must be >= 0");
        return;
      }
      idle_given = true;
    } else if (EqualsIgnoreCase(args[j], "freq") && has_value && !idle_given) {
      std::optional<int64_t> freq = ParseRedisInt64(args[++j]);
      if (!freq) {
        call.reply().Error(kNotIntegerError);
        return;
      }
      if (*freq < 0 || *freq > 255) {
        call.reply().Error("ERR Invalid FREQ value, must be >= 0 and <= 255");
        return;
      }
      freq_given = true;
    } else {
      call.reply().Error(kSyntaxError);
      return;
    }
  }
  int64_t problem = kNoProblem;
  const std::optional<int64_t> ttl = ParseRedisInt64(args[2]);
  if (!ttl) {
    problem = kTtlNotInteger;
  } else if (*ttl < 0) {
    problem = kTtlNegative;
  } else {
    RestoredValue checked;
    switch (ReadPayload(args[3], &checked)) {
      case PayloadStatus::kOk:
        break;
      case PayloadStatus::kVersionOrChecksum:
        problem = kVersionOrChecksum;
        break;
      case PayloadStatus::kBadFormat:
        problem = kBadFormat;
        break;
    }
  }
  if (problem != kNoProblem) {
    if (replace) {  // nothing to ask the engine: BUSYKEY cannot come first
      call.reply().Error(ProblemText(problem));
      return;
    }
    call.Add(MakeOp(OpCode::kExists, args[1]));
    call.Defer(RenderRestoreProblem);
    call.deferred_reply().flags = problem;
    return;
  }
  int64_t deadline = *ttl;
  if (deadline != 0 && !absolute) {
    deadline = deadline > INT64_MAX - UnixNowMs() ? INT64_MAX : deadline + UnixNowMs();
  }
  Operation op = MakeOp(OpCode::kRestore, args[1], args[3], deadline);
  op.integer2 = replace ? 1 : 0;
  call.Add(op);
  call.Defer(RenderRestore);
}

}  // namespace

void RegisterDumpRestoreCommands(CommandTable& table) {
  using F = CommandSpec;
  table.Add({.name = "dump",
             .arity = 2,
             .flags = F::kReadOnly,
             .handler = Dump,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "generic",
             .summary = "Return a serialized version of the value stored at the specified key."});
  table.Add({.name = "restore",
             .arity = -4,
             .flags = F::kWrite | F::kDenyOom,
             .handler = Restore,
             .keys = {.first = 1, .last = 1, .step = 1},
             .group = "generic",
             .summary = "Create a key using the provided serialized value, previously obtained "
                        "using DUMP."});
}

}  // namespace kvlab
