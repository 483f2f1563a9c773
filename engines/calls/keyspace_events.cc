#include "engines/calls/keyspace_events.h"

#include <span>

#include "engines/calls/bit_calls.h"
#include "engines/calls/call_support.h"
#include "engines/calls/container_call.h"
#include "engines/calls/hll_calls.h"
#include "engines/calls/string_call.h"
#include "engines/calls/zset_algebra.h"
#include "engines/containers/list_value.h"
#include "engines/containers/set_value.h"

namespace kvlab {

namespace {

struct KeyEvent {
  uint32_t event_class = 0;  // 0: the operation raises no event of its own
  std::string_view name;
  bool only_when_present = false;  // a store: "del" instead when it left nothing
};

uint32_t ClassOf(ValueType type) {
  switch (type) {
    case ValueType::kString:
      return kEventString;
    case ValueType::kHash:
      return kEventHash;
    case ValueType::kList:
      return kEventList;
    case ValueType::kSet:
      return kEventSet;
    case ValueType::kZSet:
      return kEventZSet;
  }
  return kEventGeneric;
}

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member ...: "zincr" with INCR.
bool ZAddIncrements(std::span<const std::string_view> args) {
  for (size_t i = 2; i < args.size(); ++i) {
    if (OptionIs(args[i], "incr")) return true;
    if (!OptionIs(args[i], "nx") && !OptionIs(args[i], "xx") && !OptionIs(args[i], "gt") &&
        !OptionIs(args[i], "lt") && !OptionIs(args[i], "ch")) {
      return false;  // the first score
    }
  }
  return false;
}

// The LEFT/RIGHT (or MIN/MAX) after the keys of LMPOP/BLMPOP/ZMPOP/BZMPOP.
std::string_view MultiPopWhere(std::span<const std::string_view> args) {
  const bool blocking =
      !args.empty() && (OptionIs(args[0], "blmpop") || OptionIs(args[0], "bzmpop"));
  const size_t count_at = blocking ? 2 : 1;
  if (args.size() <= count_at) return {};
  const std::optional<int64_t> keys = ParseRedisInt64(args[count_at]);
  if (!keys || *keys < 1 || count_at + 1 + static_cast<size_t>(*keys) >= args.size()) return {};
  return args[count_at + 1 + static_cast<size_t>(*keys)];
}

// LMOVE/BLMOVE src dst LEFT|RIGHT LEFT|RIGHT; RPOPLPUSH/BRPOPLPUSH src dst.
bool MovesFromLeft(std::span<const std::string_view> args) {
  return args.size() > 3 && OptionIs(args[3], "left") && !OptionIs(args[0], "rpoplpush") &&
         !OptionIs(args[0], "brpoplpush");
}
bool MovesToRight(std::span<const std::string_view> args) {
  return args.size() > 4 && OptionIs(args[4], "right") && !OptionIs(args[0], "rpoplpush") &&
         !OptionIs(args[0], "brpoplpush");
}

KeyEvent ContainerEvent(const Operation& op) {
  const ContainerCommand& command = *op.container_command;
  const std::string_view name = command.name;
  const std::span<const std::string_view> args = op.container_args();
  const uint32_t type_class = ClassOf(command.type);
  if (name == "hmset" || name == "hsetnx") return {kEventHash, "hset"};
  if (name == "lpushx") return {kEventList, "lpush"};
  if (name == "rpushx") return {kEventList, "rpush"};
  if (name == "zincrby") return {kEventZSet, "zincr"};
  if (name == "zadd") return {kEventZSet, ZAddIncrements(args) ? "zincr" : "zadd"};
  if (name == "geoadd") return {kEventZSet, "zadd"};
  if (name == kListMoveRemoveStep) return {kEventList, MovesFromLeft(args) ? "lpop" : "rpop"};
  if (name == kListMoveDestinationStep) return {kEventList, MovesToRight(args) ? "rpush" : "lpush"};
  if (name == kListMPopStep) {
    return {kEventList, OptionIs(MultiPopWhere(args), "right") ? "rpop" : "lpop"};
  }
  if (name == kZMPopStep) {
    return {kEventZSet, OptionIs(MultiPopWhere(args), "max") ? "zpopmax" : "zpopmin"};
  }
  if (name == kSetInterStoreStep) return {kEventSet, "sinterstore", true};
  if (name == kSetUnionStoreStep) return {kEventSet, "sunionstore", true};
  if (name == kSetDiffStoreStep) return {kEventSet, "sdiffstore", true};
  if (name == kSetMoveRemoveStep) return {kEventSet, "srem"};
  if (name == kSetMoveAddStep) return {kEventSet, "sadd"};
  if ((command.flags & kContainerInternal) != 0) return {};  // GEOADD is named above
  return {type_class, name};
}

KeyEvent StringCommandEvent(const Operation& op) {
  const std::string_view name = op.string_command->name;
  if (name == "setbit" || name == "bitfield") return {kEventString, "setbit"};
  if (name == "pfadd" || name == kPfmergeStore) return {kEventString, "pfadd"};
  if (name == kBitopStore) return {kEventString, "set", true};
  return {};  // PFCOUNT's cache, PFDEBUG: Redis raises nothing
}

KeyEvent EventOf(const Operation& op, bool exists) {
  switch (op.code) {
    case OpCode::kContainer:
      return ContainerEvent(op);
    case OpCode::kString:
      return StringCommandEvent(op);
    case OpCode::kSet:
    case OpCode::kGetSet:
      return {kEventString, "set"};
    case OpCode::kIncrBy:
      return {kEventString, "incrby"};
    case OpCode::kIncrByFloat:
      return {kEventString, "incrbyfloat"};
    case OpCode::kAppend:
      return {kEventString, "append"};
    case OpCode::kSetRange:
      return {kEventString, "setrange"};
    case OpCode::kDel:
      // RENAMENX removes its source with a kDel that names its event.
      return {kEventGeneric, op.value.empty() ? std::string_view("del") : op.value};
    case OpCode::kGetDel:
      return {kEventGeneric, "del"};
    case OpCode::kExpireAt:
      return {kEventGeneric, "expire", true};
    case OpCode::kPersist:
      return {kEventGeneric, "persist"};
    case OpCode::kGetEx:
      return {kEventGeneric, op.integer == kPersistDeadline ? "persist" : "expire", true};
    case OpCode::kRestore:
      return {kEventGeneric, "restore"};
    case OpCode::kLoadCarry:
      return exists ? KeyEvent{} : KeyEvent{kEventGeneric, "rename_from"};
    case OpCode::kStoreCarry:
      // The server names the store (rename_to, copy_to, zunionstore, ...).
      if (op.value.empty()) return {};
      return {op.value.starts_with("sort")                               ? kEventList
              : op.value.starts_with("z") || op.value.starts_with("geo") ? kEventZSet
                                                                         : kEventGeneric,
              op.value, true};
    default:
      return {};
  }
}

}  // namespace

void NotifyKeyEvents(const Operation& op, bool existed, bool exists, const ModificationFeed& feed) {
  if (!existed && exists) feed.Notify(kEventNew, "new", op.key);
  const KeyEvent event = EventOf(op, exists);
  if (event.event_class != 0 && (exists || !event.only_when_present)) {
    feed.Notify(event.event_class, event.name, op.key);
  }
  if (op.code == OpCode::kSet && exists && op.set.expire_at_ms != 0) {
    feed.Notify(kEventGeneric, "expire", op.key);
  }
  // A removal by nature (DEL, GETDEL, RENAME's source) raised its own.
  const bool removes =
      op.code == OpCode::kDel || op.code == OpCode::kGetDel || op.code == OpCode::kLoadCarry;
  if (existed && !exists && !removes) {
    feed.Notify(kEventGeneric, "del", op.key);
  }
}

}  // namespace kvlab
