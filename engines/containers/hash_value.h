// HashValue: a hash (HSET's value), in Redis 7.0's two encodings: a
// "listpack" (a PackedList of field, value, field, value, ... in insertion
// order) while it has at most hash-max-listpack-entries fields (512, Redis
// 7.0.15's built-in default; its sample redis.conf says 128) and no
// field or value longer than hash-max-listpack-value bytes (64), else a
// "hashtable" (encoding_limits.h). It never converts back, as Redis's does not.
//
// Not synchronised (container.h): the engine holding the key serialises it.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "engines/container.h"
#include "engines/containers/packed_list.h"
#include "engines/entry.h"

namespace kvlab {

class HashValue final : public Container {
 public:
  static constexpr ValueType kType = ValueType::kHash;

  HashValue() : Container(kType) {}

  size_t Size() const override;
  size_t Bytes() const override;
  std::string_view Encoding() const override { return table_ ? "hashtable" : "listpack"; }
  std::unique_ptr<Container> Clone() const override;

  // The field's value, or nullopt. The view is valid until the next change.
  std::optional<std::string_view> Get(std::string_view field) const;
  // Sets a field; true when it is new.
  bool Set(std::string_view field, std::string_view value);
  // Removes a field; true when it was there.
  bool Delete(std::string_view field);

  // visit(field, value) for every field: insertion order while packed,
  // the table's order after.
  template <typename Visit>
  void ForEach(Visit&& visit) const {
    if (table_) {
      for (const auto& [field, value] : *table_)
        visit(std::string_view(field), std::string_view(value));
      return;
    }
    for (PackedList::Position at = packed_.begin(); at != packed_.end();) {
      const std::string_view field = packed_.At(at);
      at = packed_.Next(at);
      visit(field, packed_.At(at));
      at = packed_.Next(at);
    }
  }

 private:
  using Table = std::unordered_map<std::string, std::string, KeyHash, KeyEqual>;
  void ConvertToTable();

  PackedList packed_;             // while table_ is null
  std::unique_ptr<Table> table_;  // once converted
  size_t table_heap_bytes_ = 0;   // the table's strings' own heap bytes, kept as they change
};

}  // namespace kvlab
