// ListValue: a list (LPUSH's value). Redis 7.0 keeps every list in a
// quicklist (OBJECT ENCODING says "quicklist" whatever its size); kvlab
// keeps a short list in one PackedList while it has at most 128 elements of
// at most 64 bytes each, and moves it to a std::deque<std::string> beyond
// (push and pop at either end O(1) amortised, index O(1)). It never moves
// back.
//
// Bytes() is O(1): the deque form keeps a running count of what its
// elements own, since the keyspace asks for it before and after every write.
//
// Not synchronised (container.h): the engine holding the key serialises it.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engines/container.h"
#include "engines/containers/packed_list.h"

namespace kvlab {

// The group steps (kContainerGroupStep) of LMOVE and RPOPLPUSH, each queued
// with its command's arguments: "lmove:source" and "lmove:destination",
// then "lmove:remove" on the source.
inline constexpr std::string_view kListMoveSourceStep = "lmove:source";
inline constexpr std::string_view kListMoveDestinationStep = "lmove:destination";
inline constexpr std::string_view kListMoveRemoveStep = "lmove:remove";
// LMPOP's per-key step (kContainerGuard), as ZMPOP's (zset_algebra.h):
// pops from its key as LMPOP's arguments say, answering nil when the key
// is missing (the next key's step runs) or the popped elements.
inline constexpr std::string_view kListMPopStep = "lmpop-step";

class ListValue final : public Container {
 public:
  static constexpr ValueType kType = ValueType::kList;
  static constexpr size_t kMaxPackedEntries = 128;
  static constexpr size_t kMaxPackedBytes = 64;

  ListValue() : Container(kType) {}

  size_t Size() const override { return deque_ ? deque_->size() : packed_.size(); }
  size_t Bytes() const override;
  std::string_view Encoding() const override { return "quicklist"; }
  std::unique_ptr<Container> Clone() const override;
  // Whether the list is still in its compact form (tests).
  bool packed() const { return deque_ == nullptr; }

  void PushFront(std::string_view element);
  void PushBack(std::string_view element);
  // REQUIRES: Size() > 0.
  std::string PopFront();
  std::string PopBack();

  // The index-th element from the head. REQUIRES: index < Size(). The
  // view is valid until the next change.
  std::string_view At(size_t index) const;
  // REQUIRES: index < Size().
  void Set(size_t index, std::string_view element);
  // Inserts before the index-th element (index == Size(): at the tail).
  void Insert(size_t index, std::string_view element);
  // Removes `count` elements from `first` on. REQUIRES: first + count <= Size().
  void EraseRange(size_t first, size_t count);
  // Removes the elements at `indexes` (ascending, distinct, each < Size()).
  void EraseIndexes(const std::vector<size_t>& indexes);

  // visit(index, element) from the head (or, with `reverse`, from the
  // tail), until it returns false.
  template <typename Visit>
  void ForEach(bool reverse, Visit&& visit) const {
    const size_t size = Size();
    if (deque_) {
      for (size_t i = 0; i < size; ++i) {
        const size_t index = reverse ? size - 1 - i : i;
        if (!visit(index, std::string_view((*deque_)[index]))) return;
      }
      return;
    }
    if (!reverse) {
      size_t index = 0;
      for (PackedList::Position at = packed_.begin(); at != packed_.end(); at = packed_.Next(at)) {
        if (!visit(index++, packed_.At(at))) return;
      }
      return;
    }
    const std::vector<PackedList::Position> positions = PackedPositions();
    for (size_t i = positions.size(); i-- > 0;) {
      if (!visit(i, packed_.At(positions[i]))) return;
    }
  }

 private:
  using Deque = std::deque<std::string>;
  std::vector<PackedList::Position> PackedPositions() const;
  // Moves to the deque when `element` or one more element would not fit
  // the packed form.
  void MakeRoomFor(std::string_view element);
  void ConvertToDeque();
  void RecountDeque();

  PackedList packed_;             // while deque_ is null
  std::unique_ptr<Deque> deque_;  // once converted
  size_t deque_bytes_ = 0;        // what deque_'s elements own (sizeof + heap)
};

}  // namespace kvlab
