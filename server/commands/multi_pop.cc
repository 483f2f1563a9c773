// ZMPOP and LMPOP: one pop step per key, queued as one atomic group; the
// first step that answers (it popped, or its key is of another type)
// stops the rest, as mpopGenericCommand()'s and genericZpopCommand()'s
// loops do, so the keys are looked at as of one instant on every engine.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engines/calls/container_call.h"
#include "server/command_table.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {

namespace {

// The reply: [key, [popped ...]] from the first step that popped (ZMPOP's
// [member, score] pairs, LMPOP's elements), or its error; nil when every
// key was missing. The keys are kept for the render.
void RenderMultiPop(const DeferredReply& deferred, std::span<const OpResult> results,
                    ReplyWriter& writer, ServerContext&) {
  const auto& keys = *static_cast<const std::vector<std::string>*>(deferred.state);
  for (size_t i = 0; i < results.size(); ++i) {
    const OpResult& result = results[i];
    if (result.kind == OpResult::Kind::kNil) continue;
    if (result.kind == OpResult::Kind::kError) return RenderContainerResult(result, writer);
    writer.ArrayHeader(2);
    writer.Bulk(keys[i]);
    return RenderContainerResult(result, writer);
  }
  writer.NilArray();
}

}  // namespace

std::optional<size_t> ParseMultiPop(CommandCall& call, std::string_view first_end,
                                    std::string_view second_end) {
  const std::optional<int64_t> numkeys = ParseRedisInt64(call.args[1]);
  if (!numkeys || *numkeys < 1) {  // the same error for both, as Redis's
    call.reply().Error("ERR numkeys should be greater than 0");
    return std::nullopt;
  }
  const size_t where = static_cast<size_t>(*numkeys) + 2;
  if (*numkeys > static_cast<int64_t>(call.args.size()) || where >= call.args.size() ||
      !(EqualsIgnoreCase(call.args[where], first_end) ||
        EqualsIgnoreCase(call.args[where], second_end))) {
    call.reply().Error(kSyntaxError);
    return std::nullopt;
  }
  for (size_t j = where + 1; j < call.args.size(); ++j) {
    if (j == where + 1 && EqualsIgnoreCase(call.args[j], "count") && j + 1 < call.args.size()) {
      const std::optional<int64_t> count = ParseRedisInt64(call.args[++j]);
      if (!count || *count < 1) {
        call.reply().Error("ERR count should be greater than 0");
        return std::nullopt;
      }
    } else {
      call.reply().Error(kSyntaxError);
      return std::nullopt;
    }
  }
  return static_cast<size_t>(*numkeys);
}

void QueueMultiPopSteps(CommandCall& call, std::string_view step_name, size_t numkeys) {
  const ContainerCommand* const step = FindContainerCommand(step_name);
  for (size_t i = 0; i < numkeys; ++i) {
    Operation pop = MakeOp(OpCode::kContainer, call.args[2 + i]);
    pop.container_command = step;
    pop.guard_span = static_cast<uint32_t>(numkeys - i - 1);
    if (i == 0) {
      call.AddWithArgs(pop);
    } else {
      call.AddWithSharedArgs(pop);
    }
  }
  call.GroupQueued();
}

void QueueMultiPop(CommandCall& call, std::string_view step_name, std::string_view first_end,
                   std::string_view second_end) {
  const std::optional<size_t> numkeys = ParseMultiPop(call, first_end, second_end);
  if (!numkeys) return;
  auto keys = std::make_shared<std::vector<std::string>>(call.args.begin() + 2,
                                                         call.args.begin() + 2 + *numkeys);
  QueueMultiPopSteps(call, step_name, *numkeys);
  call.Defer(RenderMultiPop);
  call.KeepForRender(std::move(keys));
}

}  // namespace kvlab
