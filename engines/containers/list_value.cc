#include "engines/containers/list_value.h"

#include <algorithm>
#include <iterator>

#include "engines/containers/string_heap_bytes.h"

namespace kvlab {

namespace {

// libstdc++'s deque keeps its elements in 512-byte nodes (16 strings each)
// reached through a map of node pointers.
constexpr size_t kDequeNodeBytes = 512;
constexpr size_t kStringsPerNode = kDequeNodeBytes / sizeof(std::string);

}  // namespace

size_t ListValue::Bytes() const {
  size_t bytes = sizeof(ListValue);
  if (!deque_) return bytes + packed_.capacity();
  const size_t nodes = deque_->size() / kStringsPerNode + 1;
  // Each node plus its malloc header, the map (at least 8 slots), the
  // strings' own heap bytes.
  return bytes + sizeof(Deque) + nodes * (kDequeNodeBytes + 16) +
         (std::max<size_t>(nodes + 2, 8) * sizeof(void*) + 16) + deque_bytes_;
}

std::unique_ptr<Container> ListValue::Clone() const {
  auto copy = std::make_unique<ListValue>();
  copy->packed_ = packed_;
  if (deque_) {
    copy->deque_ = std::make_unique<Deque>(*deque_);
    copy->RecountDeque();
  }
  return copy;
}

std::vector<PackedList::Position> ListValue::PackedPositions() const {
  std::vector<PackedList::Position> positions;
  positions.reserve(packed_.size());
  for (PackedList::Position at = packed_.begin(); at != packed_.end(); at = packed_.Next(at)) {
    positions.push_back(at);
  }
  return positions;
}

void ListValue::MakeRoomFor(std::string_view element) {
  if (!deque_ && (element.size() > kMaxPackedBytes || packed_.size() + 1 > kMaxPackedEntries)) {
    ConvertToDeque();
  }
}

void ListValue::ConvertToDeque() {
  auto converted = std::make_unique<Deque>();
  for (PackedList::Position at = packed_.begin(); at != packed_.end(); at = packed_.Next(at)) {
    converted->emplace_back(packed_.At(at));
  }
  deque_ = std::move(converted);
  packed_ = PackedList();  // give the buffer back
  RecountDeque();
}

void ListValue::RecountDeque() {
  deque_bytes_ = 0;
  for (const std::string& element : *deque_) deque_bytes_ += StringHeapBytes(element);
}

void ListValue::PushFront(std::string_view element) {
  MakeRoomFor(element);
  if (!deque_) return packed_.Insert(packed_.begin(), element);
  deque_->emplace_front(element);
  deque_bytes_ += StringHeapBytes(deque_->front());
}

void ListValue::PushBack(std::string_view element) {
  MakeRoomFor(element);
  if (!deque_) return packed_.PushBack(element);
  deque_->emplace_back(element);
  deque_bytes_ += StringHeapBytes(deque_->back());
}

std::string ListValue::PopFront() {
  if (!deque_) {
    std::string element(packed_.At(packed_.begin()));
    packed_.Erase(packed_.begin());
    return element;
  }
  std::string element = std::move(deque_->front());
  deque_->pop_front();
  deque_bytes_ -= StringHeapBytes(element);
  return element;
}

std::string ListValue::PopBack() {
  if (!deque_) {
    const PackedList::Position last = packed_.Nth(packed_.size() - 1);
    std::string element(packed_.At(last));
    packed_.Erase(last);
    return element;
  }
  std::string element = std::move(deque_->back());
  deque_->pop_back();
  deque_bytes_ -= StringHeapBytes(element);
  return element;
}

std::string_view ListValue::At(size_t index) const {
  if (deque_) return (*deque_)[index];
  return packed_.At(packed_.Nth(index));
}

void ListValue::Set(size_t index, std::string_view element) {
  if (!deque_ && element.size() > kMaxPackedBytes) ConvertToDeque();
  if (!deque_) return packed_.Replace(packed_.Nth(index), element);
  std::string& slot = (*deque_)[index];
  deque_bytes_ -= StringHeapBytes(slot);
  slot.assign(element);
  deque_bytes_ += StringHeapBytes(slot);
}

void ListValue::Insert(size_t index, std::string_view element) {
  MakeRoomFor(element);
  if (!deque_) {
    const PackedList::Position at = index == packed_.size() ? packed_.end() : packed_.Nth(index);
    return packed_.Insert(at, element);
  }
  const auto inserted =
      deque_->emplace(deque_->begin() + static_cast<std::ptrdiff_t>(index), element);
  deque_bytes_ += StringHeapBytes(*inserted);
}

void ListValue::EraseRange(size_t first, size_t count) {
  if (count == 0) return;
  if (!deque_) {
    const PackedList::Position at = packed_.Nth(first);
    for (size_t i = 0; i < count; ++i) packed_.Erase(at);
    return;
  }
  const auto begin = deque_->begin() + static_cast<std::ptrdiff_t>(first);
  const auto end = begin + static_cast<std::ptrdiff_t>(count);
  for (auto it = begin; it != end; ++it) deque_bytes_ -= StringHeapBytes(*it);
  deque_->erase(begin, end);
}

void ListValue::EraseIndexes(const std::vector<size_t>& indexes) {
  if (indexes.empty()) return;
  if (!deque_) {
    const std::vector<PackedList::Position> positions = PackedPositions();
    // From the last, so the positions before stay valid.
    for (size_t i = indexes.size(); i-- > 0;) packed_.Erase(positions[indexes[i]]);
    return;
  }
  // One pass: the kept elements slide down over the removed ones.
  size_t next = 0;  // into indexes
  size_t write = 0;
  for (size_t read = 0; read < deque_->size(); ++read) {
    if (next < indexes.size() && indexes[next] == read) {
      deque_bytes_ -= StringHeapBytes((*deque_)[read]);
      ++next;
      continue;
    }
    if (write != read) (*deque_)[write] = std::move((*deque_)[read]);
    ++write;
  }
  deque_->erase(deque_->begin() + static_cast<std::ptrdiff_t>(write), deque_->end());
}

}  // namespace kvlab
