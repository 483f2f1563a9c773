// SetValue: a set (SADD's value), in Redis 7.0's two encodings: an "intset"
// (a sorted vector of int64) while every member is an integer by Redis's
// string2ll() rules and there are at most set-max-intset-entries (512)
// (set-max-intset-entries), else a "hashtable". It never converts back, as
// Redis's does not (only a rebuilt set — SPOP's rest, a STORE's result —
// starts afresh).
//
// The hashtable keeps its members in a dense vector beside the index so a
// random member (SPOP, SRANDMEMBER) costs O(1) and is uniform; removal
// moves the last member into the hole.
//
// Not synchronised (container.h): the engine holding the key serialises it.
// RandomIndex() uses a per-thread generator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engines/container.h"
#include "engines/entry.h"

namespace kvlab {

// The internal container command (kContainerInternal) that answers a set's
// members (an empty array for a missing key): SINTER, SUNION, SDIFF and
// SINTERCARD queue one per key.
inline constexpr std::string_view kSetMembersStep = "setmembers";

// The group steps (kContainerGroupStep) of the commands that write several
// sets, each queued with its command's arguments:
//   SINTERSTORE, SUNIONSTORE, SDIFFSTORE: "setstore:first-source" on the
//   first source key, "setstore:source" on each other one, then the store
//   step of their operation on the destination;
//   SMOVE: "smove:source" and "smove:destination" (what moves, and the
//   destination's type, before anything changes), "smove:remove" on the
//   source, then "smove:add" on the destination: Redis's order of changes,
//   so the keyspace events come in its order (srem, then sadd).
inline constexpr std::string_view kSetStoreFirstSourceStep = "setstore:first-source";
inline constexpr std::string_view kSetStoreSourceStep = "setstore:source";
inline constexpr std::string_view kSetInterStoreStep = "setstore:inter";
inline constexpr std::string_view kSetUnionStoreStep = "setstore:union";
inline constexpr std::string_view kSetDiffStoreStep = "setstore:diff";
inline constexpr std::string_view kSetMoveSourceStep = "smove:source";
inline constexpr std::string_view kSetMoveDestinationStep = "smove:destination";
inline constexpr std::string_view kSetMoveRemoveStep = "smove:remove";
inline constexpr std::string_view kSetMoveAddStep = "smove:add";

class SetValue final : public Container {
 public:
  static constexpr ValueType kType = ValueType::kSet;

  SetValue() : Container(kType) {}
  // A set of `members` (distinct) in the encoding Redis leaves a set it
  // builds: an intset only when `as_intset` (a hashtable from the start
  // otherwise, though every member may be an integer).
  static std::unique_ptr<SetValue> FromMembers(const std::vector<std::string_view>& members,
                                               bool as_intset);

  size_t Size() const override { return table_ ? table_->dense.size() : ints_.size(); }
  size_t Bytes() const override;
  std::string_view Encoding() const override { return table_ ? "hashtable" : "intset"; }
  std::unique_ptr<Container> Clone() const override;

  bool Contains(std::string_view member) const;
  // True when the member is new.
  bool Add(std::string_view member);
  // True when the member was there.
  bool Remove(std::string_view member);

  // The index-th member in ForEach() order. REQUIRES: index < Size().
  std::string At(size_t index) const;
  // Removes the index-th member (ForEach() order) and returns it.
  std::string RemoveAt(size_t index);
  // Replaces the contents with `other`'s (SPOP's rebuild of the rest).
  void Swap(SetValue& other) {
    ints_.swap(other.ints_);
    table_.swap(other.table_);
  }

  // visit(std::string_view member) for every member: ascending numeric
  // order for an intset (as Redis's), the dense order for a hashtable.
  template <typename Visit>
  void ForEach(Visit&& visit) const {
    if (table_) {
      for (const std::string* member : table_->dense) visit(std::string_view(*member));
      return;
    }
    char buffer[24];
    for (const int64_t value : ints_) visit(FormatInt(value, buffer));
  }

  // A uniform index in [0, n). REQUIRES: n > 0.
  static size_t RandomIndex(size_t n);

 private:
  struct Table {
    std::unordered_map<std::string, size_t, KeyHash, KeyEqual> index;  // member -> dense position
    std::vector<const std::string*> dense;  // the index's keys (node addresses are stable)
    size_t member_heap_bytes = 0;           // the members' own heap bytes, kept as they change
  };
  static std::string_view FormatInt(int64_t value, char* buffer);
  void ConvertToTable();
  void TableAdd(std::string_view member);

  std::vector<int64_t> ints_;     // sorted, while table_ is null
  std::unique_ptr<Table> table_;  // once converted
};

}  // namespace kvlab
