#include "engines/containers/set_algebra.h"

#include <algorithm>
#include <optional>
#include <unordered_set>
#include <utility>

#include "engines/containers/encoding_limits.h"
#include "engines/rules/redis_integer.h"

namespace kvlab {

namespace {

using MemberIndex = std::unordered_set<std::string_view>;

size_t IntsetEntries() { return EncodingLimits::Read(CompactEncodingLimits().set_intset_entries); }

bool AllIntegers(const SetMembers& members) {
  return std::all_of(members.begin(), members.end(),
                     [](std::string_view member) { return ParseRedisInt64(member).has_value(); });
}

// Whether Redis would hold `members` in an intset it builds by adding them
// (createIntsetObject() + setTypeAdd()).
bool FitsIntset(const SetMembers& members) {
  return members.size() <= IntsetEntries() && AllIntegers(members);
}

// An intset's members are answered in ascending numeric order.
void SortNumerically(SetMembers& members) {
  std::vector<std::pair<int64_t, std::string_view>> numbers;
  numbers.reserve(members.size());
  for (const std::string_view member : members)
    numbers.emplace_back(*ParseRedisInt64(member), member);
  std::sort(numbers.begin(), numbers.end());
  for (size_t i = 0; i < numbers.size(); ++i) members[i] = numbers[i].second;
}

// The sets smallest first (qsort by cardinality; ties keep the keys' order),
// or nothing when one is empty (a missing key is an empty set).
std::vector<const SetMembers*> SmallestFirst(const std::vector<SetMembers>& sets) {
  std::vector<const SetMembers*> order;
  for (const SetMembers& set : sets) {
    if (set.empty()) return {};
    order.push_back(&set);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const SetMembers* a, const SetMembers* b) { return a->size() < b->size(); });
  return order;
}

// visit(member) for each member of the smallest set that every set holds,
// in that set's order, until visit returns false.
template <typename Visit>
void ForEachCommonMember(const std::vector<SetMembers>& sets, Visit&& visit) {
  const std::vector<const SetMembers*> order = SmallestFirst(sets);
  if (order.empty()) return;
  std::vector<MemberIndex> others;
  for (size_t i = 1; i < order.size(); ++i) others.emplace_back(order[i]->begin(), order[i]->end());
  for (const std::string_view member : *order[0]) {
    if (std::all_of(others.begin(), others.end(),
                    [&](const MemberIndex& other) { return other.count(member) != 0; }) &&
        !visit(member)) {
      return;
    }
  }
}

SetAlgebraResult Intersection(const std::vector<SetMembers>& sets) {
  SetAlgebraResult result;
  ForEachCommonMember(sets, [&](std::string_view member) {
    result.members.push_back(member);
    return true;
  });
  // SINTER answers as it walks; only SINTERSTORE builds (and so encodes) a set.
  result.intset = FitsIntset(result.members);
  return result;
}

SetAlgebraResult Union(const std::vector<SetMembers>& sets) {
  MemberIndex seen;
  SetAlgebraResult result;
  for (const SetMembers& set : sets) {
    for (const std::string_view member : set) {
      if (seen.insert(member).second) result.members.push_back(member);
    }
  }
  result.intset = FitsIntset(result.members);
  if (result.intset) SortNumerically(result.members);
  return result;
}

SetAlgebraResult Difference(const std::vector<SetMembers>& sets) {
  const SetMembers& first = sets[0];
  if (first.empty()) return {};
  MemberIndex others;
  int64_t algo_one_work = 0, algo_two_work = 0;
  for (size_t j = 0; j < sets.size(); ++j) {
    if (sets[j].empty()) continue;
    algo_one_work += static_cast<int64_t>(first.size());
    algo_two_work += static_cast<int64_t>(sets[j].size());
    if (j > 0) others.insert(sets[j].begin(), sets[j].end());
  }
  const bool algo_one = algo_one_work / 2 <= algo_two_work;
  SetAlgebraResult result;
  for (const std::string_view member : first) {
    if (others.count(member) == 0) result.members.push_back(member);
  }
  // Algorithm 1 adds only the result; algorithm 2 adds the whole first set
  // and removes the others' members (an intset only if the first set fits).
  result.intset = FitsIntset(result.members) && (algo_one || FitsIntset(first));
  if (result.intset) SortNumerically(result.members);
  return result;
}

}  // namespace

SetAlgebraResult ComputeSetAlgebra(SetOperation op, const std::vector<SetMembers>& sets) {
  switch (op) {
    case SetOperation::kInter:
      return Intersection(sets);
    case SetOperation::kUnion:
      return Union(sets);
    case SetOperation::kDiff:
      return Difference(sets);
  }
  return {};
}

int64_t IntersectionCardinality(const std::vector<SetMembers>& sets, int64_t limit) {
  int64_t cardinality = 0;
  ForEachCommonMember(sets, [&](std::string_view) {
    ++cardinality;
    return limit == 0 || cardinality < limit;
  });
  return cardinality;
}

}  // namespace kvlab
