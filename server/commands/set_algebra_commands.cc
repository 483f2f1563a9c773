// SINTER, SUNION and SDIFF: the multi-key set commands. Each queues one
// internal "setmembers" container step per key (engines/containers/
// set_commands.cc) as one atomic group, so the sets are read as of one
// instant on every engine, and computes its answer in the render, as
// Redis 7.0's sinterGenericCommand() and sunionDiffGenericCommand() do —
// including the order: a result Redis builds as an intset (every member an
// integer, at most 512) is answered in ascending order, and SINTER walks
// its smallest set in that set's own order. A key of another type is
// WRONGTYPE (the Session answers it for any of the operations).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "engines/container_call.h"
#include "engines/containers/encoding_limits.h"
#include "engines/containers/set_value.h"
#include "engines/redis_integer.h"
#include "server/command_table.h"
#include "server/commands/register.h"

namespace kvlab {

namespace {

enum SetAlgebra : int64_t { kInter, kUnion, kDiff };

using Members = std::vector<std::string_view>;
using MemberSet = std::unordered_set<std::string_view>;

// The members one "setmembers" step answered (views into its reply).
Members MembersOf(const OpResult& result) {
  Members members;
  if (result.kind != OpResult::Kind::kReply || !result.reply) return members;
  result.reply->ForEach([&](ReplyList::Item item, int64_t number, std::string_view bytes) {
    if (item == ReplyList::Item::kSet) members.reserve(static_cast<size_t>(number));
    if (item == ReplyList::Item::kBulk) members.push_back(bytes);
  });
  return members;
}

// Whether Redis would hold `members` in an intset it builds by adding
// them (createIntsetObject() + setTypeAdd()); if so they are answered in
// ascending numeric order, and `members` is sorted so.
bool SortIfIntset(Members& members) {
  if (members.size() > EncodingLimits::Read(CompactEncodingLimits().set_intset_entries)) {
    return false;
  }
  std::vector<std::pair<int64_t, std::string_view>> numbers;
  numbers.reserve(members.size());
  for (const std::string_view member : members) {
    const std::optional<int64_t> value = ParseRedisInt64(member);
    if (!value) return false;
    numbers.emplace_back(*value, member);
  }
  std::sort(numbers.begin(), numbers.end());
  for (size_t i = 0; i < numbers.size(); ++i) members[i] = numbers[i].second;
  return true;
}

bool AllIntegers(const Members& members) {
  return std::all_of(members.begin(), members.end(),
                     [](std::string_view member) { return ParseRedisInt64(member).has_value(); });
}

Members Intersection(std::vector<Members>& sets) {
  for (const Members& set : sets) {
    if (set.empty()) return {};  // a missing key is an empty set
  }
  // Smallest first (qsort by cardinality; ties keep the keys' order).
  std::vector<size_t> order(sets.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sets[a].size() < sets[b].size(); });
  std::vector<MemberSet> others;
  for (size_t i = 1; i < order.size(); ++i) {
    others.emplace_back(sets[order[i]].begin(), sets[order[i]].end());
  }
  Members result;
  for (const std::string_view member : sets[order[0]]) {
    if (std::all_of(others.begin(), others.end(),
                    [&](const MemberSet& other) { return other.count(member) != 0; })) {
      result.push_back(member);
    }
  }
  return result;
}

Members Union(const std::vector<Members>& sets) {
  MemberSet seen;
  Members result;
  for (const Members& set : sets) {
    for (const std::string_view member : set) {
      if (seen.insert(member).second) result.push_back(member);
    }
  }
  SortIfIntset(result);
  return result;
}

Members Difference(const std::vector<Members>& sets) {
  const Members& first = sets[0];
  if (first.empty()) return {};
  MemberSet others;
  // Redis's choice between its two algorithms decides which intermediate
  // set it builds, and so the result's encoding and order.
  int64_t algo_one_work = 0, algo_two_work = 0;
  for (size_t j = 0; j < sets.size(); ++j) {
    if (sets[j].empty()) continue;
    algo_one_work += static_cast<int64_t>(first.size());
    algo_two_work += static_cast<int64_t>(sets[j].size());
    if (j > 0) others.insert(sets[j].begin(), sets[j].end());
  }
  const bool algo_one = algo_one_work / 2 <= algo_two_work;
  Members result;
  for (const std::string_view member : first) {
    if (others.count(member) == 0) result.push_back(member);
  }
  // Algorithm 1 adds only the result; algorithm 2 adds the whole first set
  // and removes the others' members (an intset only if the first set fits).
  const size_t intset_entries = EncodingLimits::Read(CompactEncodingLimits().set_intset_entries);
  if (algo_one || (first.size() <= intset_entries && AllIntegers(first))) {
    SortIfIntset(result);
  }
  return result;
}

void RenderSetAlgebra(const DeferredReply& deferred, std::span<const OpResult> results,
                      ReplyWriter& writer, ServerContext&) {
  std::vector<Members> sets;
  sets.reserve(results.size());
  for (const OpResult& result : results) sets.push_back(MembersOf(result));
  Members answer;
  switch (deferred.flags) {
    case kInter: answer = Intersection(sets); break;
    case kUnion: answer = Union(sets); break;
    default: answer = Difference(sets); break;
  }
  writer.SetHeader(answer.size());
  for (const std::string_view member : answer) writer.Bulk(member);
}

// The arguments every "setmembers" step sees: its own name.
const std::vector<std::string_view>& StepArgs() {
  static const std::vector<std::string_view> args = {kSetMembersStep};
  return args;
}

template <SetAlgebra kOp>
void SetAlgebraCommand(CommandCall& call) {
  static const ContainerCommand* const step = FindContainerCommand(kSetMembersStep);
  for (size_t i = 1; i < call.args.size(); ++i) {
    Operation op;
    op.code = OpCode::kContainer;
    op.key = call.args[i];
    op.container_command = step;
    op.arg_pool = &StepArgs();
    op.arg_first = 0;
    op.arg_count = 1;
    call.Add(op);
  }
  call.Defer(RenderSetAlgebra);
  call.deferred_reply().flags = kOp;
  call.GroupQueued();
}

}  // namespace

void RegisterSetAlgebraCommands(CommandTable& table) {
  using F = CommandSpec;
  table.Add({.name = "sinter", .arity = -2, .flags = F::kReadOnly, .handler = SetAlgebraCommand<kInter>,
             .keys = {.first = 1, .last = -1, .step = 1}, .group = "set",
             .summary = "Intersect multiple sets"});
  table.Add({.name = "sunion", .arity = -2, .flags = F::kReadOnly, .handler = SetAlgebraCommand<kUnion>,
             .keys = {.first = 1, .last = -1, .step = 1}, .group = "set",
             .summary = "Add multiple sets"});
  table.Add({.name = "sdiff", .arity = -2, .flags = F::kReadOnly, .handler = SetAlgebraCommand<kDiff>,
             .keys = {.first = 1, .last = -1, .step = 1}, .group = "set",
             .summary = "Subtract multiple sets"});
}

}  // namespace kvlab
