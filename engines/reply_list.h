// ReplyList: the answer of a command that replies with more than one value
// (HGETALL, LRANGE, ZRANGE WITHSCORES, SPOP with a count, ...), built by the
// engine as a sequence of items the server renders into its protocol.
//
// Items are kept in one byte buffer ([kind][8-byte number][bytes]) so a reply
// of N values costs one growing allocation, not N.
//
// The engine does not know its client's protocol: where Redis 7.0 answers
// RESP3 clients with another type (a map, a set, a double, nested score
// pairs) the list records that type, and the server's renderer writes it in
// the connection's protocol (RESP2 bytes unchanged).
//
// A value type; not synchronised.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace kvlab {

class ReplyList {
 public:
  enum class Item : uint8_t {
    kArray,
    kBulk,
    kInteger,
    kNil,
    kNilArray,
    kError,
    kStatus,
    kMap,           // number: pairs; a key then its value, `number` times
    kSet,           // number: members (addReplySetLen)
    kDouble,        // number: the double's bits (addReplyDouble)
    kArrayOfPairs,  // number: pairs, each opened by kPair (flat in RESP2)
    kPair,          // opens a (member, score) pair: an array of 2 in RESP3 only
    kHumanDouble,   // bytes: a double as addReplyHumanLongDouble writes it
  };

  void Array(size_t count) { Put(Item::kArray, static_cast<int64_t>(count), {}); }
  void Bulk(std::string_view bytes) { Put(Item::kBulk, static_cast<int64_t>(bytes.size()), bytes); }
  void Integer(int64_t value) { Put(Item::kInteger, value, {}); }
  void Nil() { Put(Item::kNil, 0, {}); }
  void NilArray() { Put(Item::kNilArray, 0, {}); }
  // The whole error line, code included ("ERR index out of range").
  void Error(std::string_view text) { Put(Item::kError, static_cast<int64_t>(text.size()), text); }
  void Status(std::string_view text) {
    Put(Item::kStatus, static_cast<int64_t>(text.size()), text);
  }
  void Map(size_t pairs) { Put(Item::kMap, static_cast<int64_t>(pairs), {}); }
  void Set(size_t count) { Put(Item::kSet, static_cast<int64_t>(count), {}); }
  void Double(double value) {
    int64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    Put(Item::kDouble, bits, {});
  }
  // A double already formatted for humans (Redis's LD_STR_HUMAN): a bulk
  // string in RESP2, a double in RESP3 (GEOPOS's coordinates).
  void HumanDouble(std::string_view text) {
    Put(Item::kHumanDouble, static_cast<int64_t>(text.size()), text);
  }
  void ArrayOfPairs(size_t pairs) { Put(Item::kArrayOfPairs, static_cast<int64_t>(pairs), {}); }
  void Pair() { Put(Item::kPair, 0, {}); }
  // The double a kDouble item's number holds.
  static double DoubleOf(int64_t number) {
    double value;
    std::memcpy(&value, &number, sizeof value);
    return value;
  }

  // An array (or set, or array of pairs) whose length is known only at its
  // end: its header with a placeholder now, its count set by EndArray().
  size_t BeginArray() { return BeginHeader(Item::kArray); }
  size_t BeginSet() { return BeginHeader(Item::kSet); }
  size_t BeginArrayOfPairs() { return BeginHeader(Item::kArrayOfPairs); }
  void EndArray(size_t at, size_t count) {
    const int64_t value = static_cast<int64_t>(count);
    std::memcpy(bytes_.data() + at + 1, &value, sizeof value);
  }

  bool empty() const { return bytes_.empty(); }

  // Calls visit(Item, int64_t number, std::string_view bytes) for each item
  // in order: an array's count, an integer's value, a string's bytes.
  template <typename Visit>
  void ForEach(Visit&& visit) const {
    size_t at = 0;
    while (at < bytes_.size()) {
      const auto item = static_cast<Item>(bytes_[at]);
      int64_t number;
      std::memcpy(&number, bytes_.data() + at + 1, sizeof number);
      at += 1 + sizeof number;
      std::string_view bytes;
      if (HasBytes(item)) {
        bytes = std::string_view(bytes_.data() + at, static_cast<size_t>(number));
        at += static_cast<size_t>(number);
      }
      visit(item, number, bytes);
    }
  }

 private:
  size_t BeginHeader(Item item) {
    const size_t at = bytes_.size();
    Put(item, 0, {});
    return at;
  }
  static bool HasBytes(Item item) {
    return item == Item::kBulk || item == Item::kError || item == Item::kStatus ||
           item == Item::kHumanDouble;
  }
  void Put(Item item, int64_t number, std::string_view bytes) {
    bytes_.push_back(static_cast<char>(item));
    bytes_.append(reinterpret_cast<const char*>(&number), sizeof number);
    bytes_.append(bytes);
  }

  std::string bytes_;
};

}  // namespace kvlab
