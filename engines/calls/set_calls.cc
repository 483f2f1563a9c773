// The set commands (Redis 7.0's t_set.c), written once for every engine.
// SINTER, SUNION, SDIFF and SINTERCARD read several keys: the server queues
// one internal "setmembers" per key in one atomic group and computes the
// result in its render (server/commands/set_algebra_commands.cc). The
// commands that write several keys (the STOREs, SMOVE) are group steps
// (set_value.h names them) that pass what they read through the group's
// state, so the destination is written in the same atomic step.
#include <numeric>
#include <string>
#include <vector>

#include "engines/calls/atomic_group.h"
#include "engines/calls/call_support.h"
#include "engines/calls/container_tables.h"
#include "engines/containers/set_algebra.h"
#include "engines/containers/set_value.h"

namespace kvlab {

namespace {

// Redis answers a whole set as a set (SMEMBERS, SPOP past the size) but
// SRANDMEMBER's picks as an array, even when they are the whole set.
template <bool kAsSet>
void ReplyMembers(ReplyList& reply, const SetValue& set) {
  if (kAsSet) {
    reply.Set(set.Size());
  } else {
    reply.Array(set.Size());
  }
  set.ForEach([&](std::string_view member) { reply.Bulk(member); });
}

void SAdd(ContainerCall& call) {
  if (!call.CheckType()) return;
  SetValue& set = call.FindOrCreate<SetValue>();
  int64_t added = 0;
  for (size_t i = 2; i < call.args.size(); ++i) added += set.Add(call.args[i]) ? 1 : 0;
  if (added != 0) call.Changed();
  call.Integer(added);
}

void SRem(ContainerCall& call) {
  RemoveEach<SetValue>(call,
                       [](SetValue& set, std::string_view member) { return set.Remove(member); });
}

// spopWithCountCommand().
void SPopCount(ContainerCall& call) {
  // getPositiveLongFromObjectOrReply(): one text for both failures.
  const std::optional<int64_t> parsed = ParseRedisInt64(call.args[2]);
  if (!parsed || *parsed < 0) return call.Error("ERR value is out of range, must be positive");
  const uint64_t count = static_cast<uint64_t>(*parsed);
  if (!call.CheckType()) return;
  SetValue* set = call.Find<SetValue>();
  if (!set || count == 0) return call.List().Set(0);
  const size_t size = set->Size();
  ReplyList& reply = call.List();
  call.Changed();
  if (count >= size) {
    // CASE 1: the whole set (Redis answers it through SUNION: an intset's
    // members in ascending order); the key goes.
    ReplyMembers<true>(reply, *set);
    SetValue empty;
    set->Swap(empty);
    return;
  }
  reply.Set(count);
  const size_t remaining = size - count;
  if (remaining * 5 > count) {
    // CASE 2: pop `count` random members.
    for (uint64_t i = 0; i < count; ++i) {
      reply.Bulk(set->RemoveAt(SetValue::RandomIndex(set->Size())));
    }
    return;
  }
  // CASE 3: move `remaining` random members to a new set (its encoding
  // chosen afresh, as Redis's setTypeCreate() does), answer the rest.
  SetValue kept;
  for (size_t i = 0; i < remaining; ++i) {
    kept.Add(set->RemoveAt(SetValue::RandomIndex(set->Size())));
  }
  set->ForEach([&](std::string_view member) { reply.Bulk(member); });
  set->Swap(kept);
}

void SPop(ContainerCall& call) {
  if (call.args.size() == 3) return SPopCount(call);
  if (call.args.size() > 3) return call.Error(kContainerSyntaxError);
  if (!call.CheckType()) return;
  SetValue* set = call.Find<SetValue>();
  if (!set) return call.Nil();
  const std::string member = set->RemoveAt(SetValue::RandomIndex(set->Size()));
  call.Changed();
  call.Bulk(member);
}

// srandmemberWithCountCommand().
void SRandMemberCount(ContainerCall& call) {
  const std::optional<int64_t> parsed = ParseRedisInt64(call.args[2]);
  if (!parsed) return call.Error(kContainerNotIntegerError);
  if (*parsed == INT64_MIN) {
    return call.Error(
        "ERR value is out of range, value must between -9223372036854775807 and "
        "9223372036854775807");
  }
  const bool unique = *parsed >= 0;
  const uint64_t count = static_cast<uint64_t>(unique ? *parsed : -*parsed);
  if (!call.CheckType()) return;
  const SetValue* set = call.Find<SetValue>();
  if (!set || count == 0) return call.List().Array(0);
  const size_t size = set->Size();
  ReplyList& reply = call.List();
  if (!unique || count == 1) {
    // CASE 1: `count` independent picks, repeats allowed.
    reply.Array(count);
    for (uint64_t i = 0; i < count; ++i) reply.Bulk(set->At(SetValue::RandomIndex(size)));
    return;
  }
  if (count >= size) return ReplyMembers<false>(reply, *set);  // CASE 2: the whole set
  // CASES 3 and 4: `count` distinct random members (a partial shuffle).
  std::vector<size_t> order(size);
  std::iota(order.begin(), order.end(), size_t{0});
  reply.Array(count);
  for (size_t i = 0; i < count; ++i) {
    std::swap(order[i], order[i + SetValue::RandomIndex(size - i)]);
    reply.Bulk(set->At(order[i]));
  }
}

void SRandMember(ContainerCall& call) {
  if (call.args.size() == 3) return SRandMemberCount(call);
  if (call.args.size() > 3) return call.Error(kContainerSyntaxError);
  if (!call.CheckType()) return;
  const SetValue* set = call.Find<SetValue>();
  if (!set) return call.Nil();
  call.Bulk(set->At(SetValue::RandomIndex(set->Size())));
}

void SIsMember(ContainerCall& call) {
  if (!call.CheckType()) return;
  const SetValue* set = call.Find<SetValue>();
  call.Integer(set && set->Contains(call.args[2]) ? 1 : 0);
}

void SMIsMember(ContainerCall& call) {
  ReplyPerArgument<SetValue>(call,
                             [](const SetValue* set, std::string_view member, ReplyList& reply) {
                               reply.Integer(set && set->Contains(member) ? 1 : 0);
                             });
}

// SMEMBERS, and the internal step of SINTER, SUNION and SDIFF (a missing
// key reads as an empty set).
void SMembers(ContainerCall& call) {
  if (!call.CheckType()) return;
  const SetValue* set = call.Find<SetValue>();
  ReplyList& reply = call.List();
  if (!set) return reply.Set(0);
  ReplyMembers<true>(reply, *set);
}

// A source of SINTERSTORE, SUNIONSTORE or SDIFFSTORE: its members join the
// group's (a key of another type is WRONGTYPE, which skips the store). The
// first starts afresh: a transaction's earlier STORE may have stopped
// before its store step took its sources.
void StoreSource(ContainerCall& call, bool first) {
  if (first) call.group->set_sources.clear();
  if (!call.CheckType()) return;
  std::vector<std::string>& members = call.group->set_sources.emplace_back();
  if (const SetValue* set = call.Find<SetValue>()) {
    members.reserve(set->Size());
    set->ForEach([&](std::string_view member) { members.emplace_back(member); });
  }
  call.Ok();
}

void StoreFirstSource(ContainerCall& call) { StoreSource(call, true); }
void StoreNextSource(ContainerCall& call) { StoreSource(call, false); }

// The destination of a STORE: replaced by the result of `kOp` over the
// sources, whatever it held, or deleted when the result is empty; replies
// the result's size.
template <SetOperation kOp>
void StoreResult(ContainerCall& call) {
  const std::vector<std::vector<std::string>>& sources = call.group->set_sources;
  std::vector<SetMembers> sets(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) sets[i].assign(sources[i].begin(), sources[i].end());
  const SetAlgebraResult result = ComputeSetAlgebra(kOp, sets);
  call.Replace(SetValue::FromMembers(result.members, result.intset));
  call.Integer(static_cast<int64_t>(result.members.size()));
}

// SMOVE source destination member (smoveCommand()), in three steps:
// the source is read, the destination takes the member, the source gives
// it up. Only a missing source is answered before the destination's type.
void SetMoveSource(ContainerCall& call) {
  if (!call.CheckType()) return;
  const SetValue* set = call.Find<SetValue>();
  call.group->set_move = {.source_exists = set != nullptr,
                          .source_has_member = set != nullptr && set->Contains(call.args[3])};
  call.Ok();
}

void SetMoveDestination(ContainerCall& call) {
  SetMove& move = call.group->set_move;
  if (!move.source_exists) return call.Integer(0);
  if (!call.CheckType()) return;
  // The same key: nothing moves (Redis answers SISMEMBER).
  if (call.args[1] == call.args[2] || !move.source_has_member) {
    return call.Integer(move.source_has_member ? 1 : 0);
  }
  move.moved = true;
  call.Integer(1);
}

void SetMoveRemove(ContainerCall& call) {
  if (call.group->set_move.moved && call.Find<SetValue>()->Remove(call.args[3])) call.Changed();
  call.Ok();
}

// After the removal, as Redis's smoveCommand() adds (a member the
// destination has already is no change).
void SetMoveAdd(ContainerCall& call) {
  if (call.group->set_move.moved && call.FindOrCreate<SetValue>().Add(call.args[3])) {
    call.Changed();
  }
  call.Ok();
}

void SScan(ContainerCall& call) {
  ScanContainer<SetValue>(call, "intset",
                          [](const SetValue& set, auto& offer) { set.ForEach(offer); });
}

using namespace command_flags;
constexpr ValueType kSet = ValueType::kSet;
constexpr uint8_t kSetStep = kContainerInternal | kContainerGroupStep;

constexpr ContainerCommand kSetCommands[] = {
    {"sadd", -3, kSet, kGrow, SAdd},
    {"srem", -3, kSet, kWrite, SRem},
    {"spop", -2, kSet, kWrite, SPop},
    {"srandmember", -2, kSet, kRead, SRandMember},
    {"scard", 2, kSet, kRead, ReplySize<SetValue>},
    {"sismember", 3, kSet, kRead, SIsMember},
    {"smismember", -3, kSet, kRead, SMIsMember},
    {"smembers", 2, kSet, kRead, SMembers},
    {"sscan", -3, kSet, kRead, SScan},
    {kSetMembersStep, 2, kSet, kContainerInternal, SMembers},
    {kSetStoreFirstSourceStep, -1, kSet, kRead | kSetStep, StoreFirstSource},
    {kSetStoreSourceStep, -1, kSet, kRead | kSetStep, StoreNextSource},
    {kSetInterStoreStep, -1, kSet, kGrow | kSetStep, StoreResult<SetOperation::kInter>},
    {kSetUnionStoreStep, -1, kSet, kGrow | kSetStep, StoreResult<SetOperation::kUnion>},
    {kSetDiffStoreStep, -1, kSet, kGrow | kSetStep, StoreResult<SetOperation::kDiff>},
    {kSetMoveSourceStep, -1, kSet, kRead | kSetStep, SetMoveSource},
    {kSetMoveDestinationStep, -1, kSet, kRead | kSetStep, SetMoveDestination},
    {kSetMoveRemoveStep, -1, kSet, kWrite | kSetStep, SetMoveRemove},
    {kSetMoveAddStep, -1, kSet, kGrow | kSetStep, SetMoveAdd},
};

}  // namespace

std::span<const ContainerCommand> SetCommands() { return kSetCommands; }

}  // namespace kvlab
