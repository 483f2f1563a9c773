// ZSetValue: a sorted set (ZADD's value), ordered by score and then by the
// member's bytes (memcmp, a shorter prefix first), in Redis 7.0's two
// encodings:
//
//   "listpack" while it has at most zset-max-listpack-entries members (128)
//     and none longer than zset-max-listpack-value bytes (64; see
//     encoding_limits.h): a PackedList of member, score, member, score, ...
//     kept in order, the score as its 8 raw bytes. Every operation scans it:
//     O(n) for n up to the limit.
//   "skiplist" after: an order-statistics tree of (score, member) (GCC's
//     __gnu_pbds rb-tree, so rank lookups are O(log n) too) plus a hash map
//     member -> score that owns the member bytes the tree points at.
//     Score, Insert, Update, Remove, Rank, CountBelow and reaching a rank are
//     O(log n) (Score O(1)); a walk costs O(1) per element after that.
//
// It never converts back, as Redis's does not. Scores are never NaN. A -0
// score stays -0 in a skiplist but becomes 0 in a listpack (which stores
// it as the integer 0), as in Redis 7.0: ZSCORE then replies "-0" or "0".
//
// Not synchronised (container.h): the engine holding the key serialises it.
#pragma once

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engines/container.h"
#include "engines/containers/packed_list.h"
#include "engines/entry.h"

namespace kvlab {

class ZSetValue final : public Container {
 public:
  static constexpr ValueType kType = ValueType::kZSet;

  ZSetValue() : Container(kType) {}

  size_t Size() const override;
  size_t Bytes() const override;
  std::string_view Encoding() const override { return large_ ? "skiplist" : "listpack"; }
  // Moves a listpack to the skiplist form now and for good, as SORT does
  // (Redis's zsetConvert() in sortCommandGeneric(), SORT_RO included).
  void UseSkiplist() {
    if (!large_) ConvertToTree();
  }
  std::unique_ptr<Container> Clone() const override;

  // The member's score, or nullopt.
  std::optional<double> Score(std::string_view member) const;
  // Adds a member that is not there (REQUIRES: !Score(member), score not
  // NaN). Converts to the skiplist first when the listpack would pass its
  // limits, as Redis's zsetAdd() does.
  void Insert(std::string_view member, double score);
  // Moves an existing member to `score` (REQUIRES: it is there).
  void Update(std::string_view member, double score);
  // Removes a member; true when it was there.
  bool Remove(std::string_view member);
  // The member's 0-based rank in ascending order, or nullopt.
  std::optional<size_t> Rank(std::string_view member) const;
  // How many members score below `score` (inclusive: at or below).
  size_t CountBelow(double score, bool inclusive) const;
  // How many members sort before (score, member) (inclusive: or are it):
  // a lex bound's rank where all scores are equal. O(log n) on a skiplist.
  size_t CountBefore(double score, std::string_view member, bool inclusive) const;

  // visit(member, score) -> bool for the members from rank `rank` on,
  // ascending (descending when `reverse`), until visit returns false or the
  // end. REQUIRES: rank < Size(). Views are valid until the next change.
  template <typename Visit>
  void Walk(size_t rank, bool reverse, Visit&& visit) const {
    if (large_) {
      const Tree& tree = large_->tree;
      auto at = tree.find_by_order(rank);
      while (true) {
        if (!visit(at->member, at->score)) return;
        if (reverse) {
          if (at == tree.begin()) return;
          --at;
        } else {
          if (++at == tree.end()) return;
        }
      }
    }
    if (!reverse) {
      for (PackedList::Position at = packed_.Nth(2 * rank); at != packed_.end();) {
        const std::string_view member = packed_.At(at);
        at = packed_.Next(at);
        const double score = PackedScore(at);
        at = packed_.Next(at);
        if (!visit(member, score)) return;
      }
      return;
    }
    std::vector<PackedList::Position> members;  // a listpack has no way back
    members.reserve(rank + 1);
    for (PackedList::Position at = packed_.begin(); members.size() <= rank;) {
      members.push_back(at);
      at = packed_.Next(packed_.Next(at));
    }
    for (size_t i = members.size(); i-- > 0;) {
      if (!visit(packed_.At(members[i]), PackedScore(packed_.Next(members[i])))) return;
    }
  }

  // ZSCAN's text for a score, which Redis 7.0 writes differently per
  // encoding: a listpack stores integral scores in [-2^62, 2^62] as
  // integers ("100000000000000000"), a skiplist prints "%.17g" ("1e+17").
  std::string ScanScoreText(double score) const;

 private:
  // A tree key: a stored member (bias 0), or a probe that sorts before
  // (-1) or after (+1) every member of its score.
  struct Key {
    double score;
    std::string_view member;
    int8_t bias;
  };
  struct KeyLess {
    bool operator()(const Key& a, const Key& b) const {
      if (a.score != b.score) return a.score < b.score;
      if (a.bias != b.bias) return a.bias < b.bias;
      return a.member < b.member;
    }
  };
  using Tree = __gnu_pbds::tree<Key, __gnu_pbds::null_type, KeyLess, __gnu_pbds::rb_tree_tag,
                                __gnu_pbds::tree_order_statistics_node_update>;
  using Scores = std::unordered_map<std::string, double, KeyHash, KeyEqual>;
  struct Large {
    Tree tree;  // members point at scores' keys
    Scores scores;
    size_t member_heap_bytes = 0;  // the members' own heap bytes, kept as they change
  };

  double PackedScore(PackedList::Position at) const {
    double score;
    std::memcpy(&score, packed_.At(at).data(), sizeof score);
    return score;
  }
  void ConvertToTree();
  void InsertLarge(std::string_view member, double score);

  PackedList packed_;             // while large_ is null
  std::unique_ptr<Large> large_;  // once converted
};

}  // namespace kvlab
