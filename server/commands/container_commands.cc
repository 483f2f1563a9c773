// Every container command (hashes, lists, sets, sorted sets) in the
// server's table: one handler queues the engine's ContainerCommand with the
// command's arguments, one render writes its reply. Their semantics live in
// engines/containers/, where every engine runs them.
#include "engines/calls/container_call.h"
#include "server/command_table.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {

namespace {

std::string_view GroupOf(ValueType type) {
  switch (type) {
    case ValueType::kHash:
      return "hash";
    case ValueType::kList:
      return "list";
    case ValueType::kSet:
      return "set";
    case ValueType::kZSet:
      return "sorted-set";
    case ValueType::kString:
      break;
  }
  return "string";
}

void RenderReplyList(const ReplyList& list, ReplyWriter& writer) {
  list.ForEach([&](ReplyList::Item item, int64_t number, std::string_view bytes) {
    switch (item) {
      case ReplyList::Item::kArray:
        writer.ArrayHeader(static_cast<uint64_t>(number));
        break;
      case ReplyList::Item::kBulk:
        writer.Bulk(bytes);
        break;
      case ReplyList::Item::kInteger:
        writer.Integer(number);
        break;
      case ReplyList::Item::kNil:
        writer.Nil();
        break;
      case ReplyList::Item::kNilArray:
        writer.NilArray();
        break;
      case ReplyList::Item::kError:
        writer.Error(bytes);
        break;
      case ReplyList::Item::kStatus:
        writer.SimpleString(bytes);
        break;
      case ReplyList::Item::kMap:
        writer.MapHeader(static_cast<uint64_t>(number));
        break;
      case ReplyList::Item::kSet:
        writer.SetHeader(static_cast<uint64_t>(number));
        break;
      case ReplyList::Item::kDouble:
        writer.Double(ReplyList::DoubleOf(number));
        break;
      case ReplyList::Item::kArrayOfPairs:
        writer.ArrayOfPairsHeader(static_cast<uint64_t>(number));
        break;
      case ReplyList::Item::kPair:
        writer.PairHeader();
        break;
      case ReplyList::Item::kHumanDouble:
        writer.HumanDouble(bytes);
        break;
    }
  });
}

}  // namespace

// The reply of one container operation, whatever its kind.
void RenderContainerResult(const OpResult& result, ReplyWriter& writer) {
  switch (result.kind) {
    case OpResult::Kind::kNil:
      writer.Nil();
      break;
    case OpResult::Kind::kOk:
      writer.Ok();
      break;
    case OpResult::Kind::kInteger:
      writer.Integer(result.integer);
      break;
    case OpResult::Kind::kBulk:
      writer.Bulk(result.bulk);
      break;
    case OpResult::Kind::kReply:
      RenderReplyList(*result.reply, writer);
      break;
    case OpResult::Kind::kError:
      // kWrongType and kOutOfMemory are answered by the Session.
      writer.Error(result.error == EngineError::kCommandError ? result.bulk.view()
                                                              : std::string_view("ERR"));
      break;
  }
}

void RenderFirstErrorOr(const DeferredReply& deferred, std::span<const OpResult> results,
                        ReplyWriter& writer, ServerContext&) {
  for (const OpResult& result : results) {
    if (result.kind == OpResult::Kind::kError) return RenderContainerResult(result, writer);
  }
  RenderContainerResult(results[static_cast<size_t>(deferred.flags)], writer);
}

namespace {

void RenderContainer(const DeferredReply&, std::span<const OpResult> results, ReplyWriter& writer,
                     ServerContext&) {
  RenderContainerResult(results[0], writer);
}

}  // namespace

void RunContainerCommand(CommandCall& call) {
  Operation op;
  op.code = OpCode::kContainer;
  op.key = call.args[1];
  op.container_command = CommandTable::Instance().Find(call.args[0])->container;
  call.AddWithArgs(op);
  call.Defer(RenderContainer);
}

void RegisterContainerCommands(CommandTable& table) {
  using F = CommandSpec::Flags;
  for (const ContainerCommand& command : ContainerCommands()) {
    if (command.flags & kContainerInternal) continue;
    uint32_t flags = (command.flags & kContainerWrite) ? F::kWrite : F::kReadOnly;
    if (command.flags & kContainerDenyOom) flags |= F::kDenyOom;
    table.Add({.name = std::string(command.name),
               .arity = command.arity,
               .flags = flags,
               .handler = RunContainerCommand,
               .keys = {.first = 1, .last = 1, .step = 1},
               .group = std::string(GroupOf(command.type)),
               .summary = {},
               .container = &command});
  }
}

}  // namespace kvlab
