#include "engines/calls/zset_algebra.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engines/calls/container_call.h"
#include "engines/entry.h"
#include "engines/calls/call_support.h"
#include "engines/containers/encoding_limits.h"
#include "engines/containers/set_value.h"
#include "engines/containers/zset_text.h"
#include "engines/containers/zset_value.h"

namespace kvlab {

namespace {

enum class Aggregate { kSum, kMin, kMax };

// One input (zsetopsrc): a copy of a source's value (null when missing)
// and its weight.
struct Source {
  const Container* value = nullptr;
  double weight = 1;
  size_t Size() const { return value ? value->Size() : 0; }
  // visit(member, score) for every member; a set's members score 1.
  template <typename Visit>
  void ForEach(Visit&& visit) const {
    if (!value) return;
    if (value->type() == ValueType::kSet) {
      static_cast<const SetValue*>(value)->ForEach(
          [&](std::string_view member) { visit(member, 1.0); });
      return;
    }
    const auto* zset = static_cast<const ZSetValue*>(value);
    if (zset->Size() == 0) return;
    zset->Walk(0, false, [&](std::string_view member, double score) {
      visit(member, score);
      return true;
    });
  }
  // zuiFind(): the member's score (1 in a set), or nullopt.
  std::optional<double> Find(std::string_view member) const {
    if (!value) return std::nullopt;
    if (value->type() == ValueType::kSet) {
      if (static_cast<const SetValue*>(value)->Contains(member)) return 1.0;
      return std::nullopt;
    }
    return static_cast<const ZSetValue*>(value)->Score(member);
  }
};

// zunionInterAggregate(): SUM keeps Redis's "-inf + inf = 0" convention.
void AggregateInto(double* target, double value, Aggregate aggregate) {
  switch (aggregate) {
    case Aggregate::kSum:
      *target += value;
      if (std::isnan(*target)) *target = 0;
      break;
    case Aggregate::kMin:
      *target = value < *target ? value : *target;
      break;
    case Aggregate::kMax:
      *target = value > *target ? value : *target;
      break;
  }
}

using Scored = std::vector<std::pair<std::string, double>>;

struct Options {
  Aggregate aggregate = Aggregate::kSum;
  bool with_scores = false;
  int64_t limit = 0;  // ZINTERCARD: 0 is no limit
};

// The option loop of zunionInterDiffGenericCommand(), over args[first..]
// (weights written into `sources`). Returns an error's text, or empty.
std::string_view ParseOptions(std::span<const std::string_view> args, size_t first,
                              ZSetAlgebra algebra, bool store, std::vector<Source>& sources,
                              Options* options) {
  const bool card = algebra == ZSetAlgebra::kInterCard;
  const bool weighted = algebra != ZSetAlgebra::kDiff && !card;
  for (size_t j = first; j < args.size();) {
    const size_t remaining = args.size() - j;
    if (weighted && remaining >= sources.size() + 1 && OptionIs(args[j], "weights")) {
      ++j;
      for (Source& source : sources) {
        // getDoubleFromObject(): string2d()'s rules, as a score's.
        if (!ParseZSetScore(args[j++], &source.weight)) return "ERR weight value is not a float";
      }
    } else if (weighted && remaining >= 2 && OptionIs(args[j], "aggregate")) {
      const std::string_view name = args[j + 1];
      if (OptionIs(name, "sum"))
        options->aggregate = Aggregate::kSum;
      else if (OptionIs(name, "min"))
        options->aggregate = Aggregate::kMin;
      else if (OptionIs(name, "max"))
        options->aggregate = Aggregate::kMax;
      else
        return kContainerSyntaxError;
      j += 2;
    } else if (!store && !card && OptionIs(args[j], "withscores")) {
      options->with_scores = true;
      ++j;
    } else if (card && remaining >= 2 && OptionIs(args[j], "limit")) {
      // getPositiveLongFromObjectOrReply(): one error for both.
      const std::optional<int64_t> limit = ParseRedisInt64(args[j + 1]);
      if (!limit || *limit < 0) return "ERR LIMIT can't be negative";
      options->limit = *limit;
      j += 2;
    } else {
      return kContainerSyntaxError;
    }
  }
  return {};
}

// SET_OP_INTER over sources sorted smallest first; ZINTERCARD counts only.
Scored Intersection(const std::vector<Source>& sources, Aggregate aggregate, int64_t limit,
                    bool count_only, int64_t* count) {
  Scored result;
  if (sources[0].Size() == 0) return result;
  bool stopped = false;
  sources[0].ForEach([&](std::string_view member, double first_score) {
    if (stopped) return;
    double score = sources[0].weight * first_score;
    if (std::isnan(score)) score = 0;
    for (size_t j = 1; j < sources.size(); ++j) {
      const std::optional<double> value = sources[j].Find(member);
      if (!value) return;
      AggregateInto(&score, *value * sources[j].weight, aggregate);
    }
    if (count_only) {
      ++*count;
      stopped = limit != 0 && *count >= limit;
      return;
    }
    result.emplace_back(member, score);
  });
  return result;
}

// SET_OP_UNION: each member's weighted scores aggregated in the sources'
// order (smallest first), as Redis's accumulator does.
// The index owns its keys: an intset's members are views of a buffer that
// the next member overwrites (SetValue::ForEach), so a view kept past the
// visit would alias every later member.
Scored Union(const std::vector<Source>& sources, Aggregate aggregate) {
  std::unordered_map<std::string, size_t, KeyHash, KeyEqual> index;
  Scored result;
  for (const Source& source : sources) {
    source.ForEach([&](std::string_view member, double value) {
      double score = source.weight * value;
      if (std::isnan(score)) score = 0;
      if (const auto at = index.find(member); at != index.end()) {
        AggregateInto(&result[at->second].second, score, aggregate);
        return;
      }
      index.emplace(std::string(member), result.size());
      result.emplace_back(member, score);
    });
  }
  return result;
}

// SET_OP_DIFF: the first source's members found in no other, unweighted.
Scored Difference(const std::vector<Source>& sources) {
  Scored result;
  sources[0].ForEach([&](std::string_view member, double score) {
    for (size_t j = 1; j < sources.size(); ++j) {
      if (sources[j].Find(member)) return;
    }
    result.emplace_back(member, score);
  });
  return result;
}

// The skiplist's order: score, then the member's bytes.
void SortByScore(Scored& members) {
  std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second < b.second;
    return a.first < b.first;
  });
}

// The destination of a STORE: a listpack only if zsetConvertToListpackIfNeeded()
// would make one of Redis's skiplist result (which keeps a -0 score).
std::unique_ptr<ZSetValue> BuildZSet(const Scored& members) {
  auto zset = std::make_unique<ZSetValue>();
  const EncodingLimits& limits = CompactEncodingLimits();
  bool large = members.size() > EncodingLimits::Read(limits.zset_entries);
  for (const auto& [member, score] : members) {
    large = large || member.size() > EncodingLimits::Read(limits.zset_value_bytes);
  }
  if (large) zset->UseSkiplist();
  for (const auto& [member, score] : members) zset->Insert(member, score);
  return zset;
}

// Hands `zset` to the kStoreCarry after the step and answers its size.
OpResult CarryForStore(std::unique_ptr<ZSetValue> zset, GroupState& group) {
  const auto size = static_cast<int64_t>(zset->Size());
  group.carried = true;
  group.value.clear();
  group.container = std::move(zset);
  group.expire_at_ms = 0;  // setKey(): the destination keeps no old expiry
  return OpResult::Integer(size);
}

OpResult ReplyScored(const Scored& members, bool with_scores) {
  OpResult result;
  ReplyList& reply = result.StartList();
  // WITHSCORES: [member, score] pairs with a double in RESP3, flat in RESP2
  // (zunionInterDiffGenericCommand()).
  if (with_scores) {
    reply.ArrayOfPairs(members.size());
  } else {
    reply.Array(members.size());
  }
  for (const auto& [member, score] : members) {
    if (with_scores) reply.Pair();
    reply.Bulk(member);
    if (with_scores) reply.Double(score);
  }
  return result;
}

OpResult Compute(std::span<const std::string_view> args, size_t numkeys_index, ZSetAlgebra algebra,
                 GroupState& group) {
  const bool store = numkeys_index == 2;
  std::vector<Source> sources;
  sources.reserve(group.read_values.size());
  for (const std::unique_ptr<Container>& value : group.read_values) {
    sources.push_back(Source{value.get()});
  }
  Options options;
  const std::string_view error =
      ParseOptions(args, numkeys_index + 1 + sources.size(), algebra, store, sources, &options);
  if (!error.empty()) return OpResult::ErrorText(error);
  if (algebra != ZSetAlgebra::kDiff) {
    // qsort by cardinality (glibc's is a stable merge sort here).
    std::stable_sort(sources.begin(), sources.end(),
                     [](const Source& a, const Source& b) { return a.Size() < b.Size(); });
  }
  Scored members;
  int64_t count = 0;
  switch (algebra) {
    case ZSetAlgebra::kUnion:
      members = Union(sources, options.aggregate);
      break;
    case ZSetAlgebra::kInter:
      members = Intersection(sources, options.aggregate, 0, false, &count);
      break;
    case ZSetAlgebra::kInterCard:
      Intersection(sources, options.aggregate, options.limit, true, &count);
      return OpResult::Integer(count);
    case ZSetAlgebra::kDiff:
      members = Difference(sources);
      break;
  }
  SortByScore(members);
  if (store) return CarryForStore(BuildZSet(members), group);
  return ReplyScored(members, options.with_scores);
}

}  // namespace

OpResult ReadZSetAlgebraSource(const Operation& op, KeyReader& keys, GroupState& group) {
  const std::optional<EntryView> live = keys.Live(op.key);
  if (live && (live->container == nullptr || (live->container->type() != ValueType::kZSet &&
                                              live->container->type() != ValueType::kSet))) {
    return OpResult::Error(EngineError::kWrongType);
  }
  const ZSetAlgebraStep step = ZSetAlgebraStep::Decode(op.integer2);
  if (step.first_source) group.read_values.clear();
  group.read_values.push_back(live ? live->container->Clone() : nullptr);
  const std::span<const std::string_view> args = op.container_args();
  const auto numkeys = static_cast<size_t>(ParseRedisInt64(args[step.numkeys_index]).value_or(0));
  if (group.read_values.size() < numkeys) return OpResult::Ok();
  OpResult result = Compute(args, step.numkeys_index, static_cast<ZSetAlgebra>(op.integer), group);
  group.read_values.clear();
  return result;
}

OpResult CarryZSetForStore(const Scored& members, GroupState& group) {
  return CarryForStore(BuildZSet(members), group);
}

OpResult ReadZRangeStore(const Operation& op, KeyReader& keys, GroupState& group) {
  static const ContainerCommand* const zrange = FindContainerCommand("zrange");
  const std::span<const std::string_view> args = op.container_args();
  // ZRANGE's own parsing and reply, without WITHSCORES, which ZRANGESTORE
  // refuses where it stands (an option ZRANGE does not know: a syntax error).
  std::vector<std::string_view> range_args = {"zrange"};
  for (size_t i = 2; i < args.size(); ++i) {
    range_args.push_back(i > 4 && OptionIs(args[i], "withscores") ? "-withscores" : args[i]);
  }
  const std::optional<EntryView> live = keys.Live(op.key);
  OpResult range;
  ContainerCall call(*zrange, range_args, live, 0, range);
  zrange->run(call);
  if (range.kind != OpResult::Kind::kReply) return range;  // an error
  const auto* source = live ? static_cast<const ZSetValue*>(live->container) : nullptr;
  Scored members;
  range.reply->ForEach([&](ReplyList::Item item, int64_t, std::string_view bytes) {
    if (item == ReplyList::Item::kBulk) members.emplace_back(bytes, *source->Score(bytes));
  });
  return CarryForStore(BuildZSet(members), group);
}

}  // namespace kvlab
