// PackedList: a short sequence of byte strings in one flat buffer, each
// prefixed by its length (a LEB128 varint) — kvlab's listpack, the compact
// form small hashes, lists and sorted sets keep, as Redis's do.
//
// Lookups scan from the front, so it is meant for the sizes Redis keeps in
// a listpack (a few hundred elements of at most 64 bytes); its owner
// switches to a real structure beyond them.
//
// A value type; not synchronised.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kvlab {

class PackedList {
 public:
  // A position is the byte offset of an element; end() is one past the last.
  using Position = size_t;

  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  Position begin() const { return 0; }
  Position end() const { return bytes_.size(); }
  // Heap bytes held.
  size_t capacity() const { return bytes_.capacity(); }

  std::string_view At(Position at) const {
    size_t length = 0;
    const Position data = ReadLength(at, &length);
    return {bytes_.data() + data, length};
  }
  Position Next(Position at) const {
    size_t length = 0;
    return ReadLength(at, &length) + length;
  }
  // The position of the index-th element (0-based). REQUIRES: index < size().
  Position Nth(size_t index) const {
    Position at = begin();
    while (index-- > 0) at = Next(at);
    return at;
  }

  void PushBack(std::string_view element) { Insert(end(), element); }
  // In a list of pairs (key, partner, key, partner, ...: a hash's fields
  // and values, a sorted set's members and scores): the position of the
  // key equal to `key`, or end().
  Position FindPairKey(std::string_view key) const {
    for (Position at = begin(); at != end();) {
      if (At(at) == key) return at;
      at = Next(Next(at));
    }
    return end();
  }
  // In such a list: removes the pair whose key is `key`; true when it was there.
  bool ErasePair(std::string_view key) {
    const Position at = FindPairKey(key);
    if (at == end()) return false;
    Erase(at);  // the key; its partner moves to `at`
    Erase(at);
    return true;
  }
  // Inserts before `at`; positions at or after it move.
  void Insert(Position at, std::string_view element) {
    char prefix[10];
    const size_t prefix_size = WriteLength(element.size(), prefix);
    bytes_.insert(at, prefix, prefix_size);
    bytes_.insert(at + prefix_size, element.data(), element.size());
    ++count_;
  }
  void Erase(Position at) {
    bytes_.erase(at, Next(at) - at);
    --count_;
  }
  void Replace(Position at, std::string_view element) {
    Erase(at);
    Insert(at, element);
  }
  void Clear() {
    bytes_.clear();
    count_ = 0;
  }

 private:
  Position ReadLength(Position at, size_t* length) const {
    size_t value = 0;
    int shift = 0;
    while (true) {
      const auto byte = static_cast<unsigned char>(bytes_[at++]);
      value |= static_cast<size_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) break;
      shift += 7;
    }
    *length = value;
    return at;
  }
  static size_t WriteLength(size_t length, char* out) {
    size_t written = 0;
    do {
      unsigned char byte = length & 0x7f;
      length >>= 7;
      if (length != 0) byte |= 0x80;
      out[written++] = static_cast<char>(byte);
    } while (length != 0);
    return written;
  }

  std::string bytes_;
  uint32_t count_ = 0;
};

}  // namespace kvlab
