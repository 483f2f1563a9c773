#include "engines/containers/hash_value.h"

#include "engines/containers/encoding_limits.h"
#include "engines/containers/string_heap_bytes.h"

namespace kvlab {

size_t HashValue::Size() const { return table_ ? table_->size() : packed_.size() / 2; }

size_t HashValue::Bytes() const {
  size_t bytes = sizeof(HashValue);
  if (!table_) return bytes + packed_.capacity();
  // A node: next pointer, the pair, the cached hash, and a malloc header.
  constexpr size_t kNodeBytes = sizeof(void*) + sizeof(Table::value_type) + sizeof(size_t) + 16;
  bytes += sizeof(Table) + table_->bucket_count() * sizeof(void*);
  // O(1): the keyspace asks before and after every write.
  return bytes + table_->size() * kNodeBytes + table_heap_bytes_;
}

std::unique_ptr<Container> HashValue::Clone() const {
  auto copy = std::make_unique<HashValue>();
  copy->packed_ = packed_;
  if (table_) copy->table_ = std::make_unique<Table>(*table_);
  copy->table_heap_bytes_ = table_heap_bytes_;
  return copy;
}

std::optional<std::string_view> HashValue::Get(std::string_view field) const {
  if (table_) {
    const auto found = table_->find(field);
    if (found == table_->end()) return std::nullopt;
    return std::string_view(found->second);
  }
  const PackedList::Position at = packed_.FindPairKey(field);
  if (at == packed_.end()) return std::nullopt;
  return packed_.At(packed_.Next(at));
}

bool HashValue::Set(std::string_view field, std::string_view value) {
  EncodingLimits& limits = CompactEncodingLimits();
  const size_t max_bytes = EncodingLimits::Read(limits.hash_value_bytes);
  if (!table_ && (field.size() > max_bytes || value.size() > max_bytes)) {
    ConvertToTable();
  }
  if (table_) {
    auto [found, inserted] = table_->try_emplace(std::string(field));
    if (inserted) {
      table_heap_bytes_ += StringHeapBytes(found->first);
    } else {
      table_heap_bytes_ -= StringHeapBytes(found->second);
    }
    found->second.assign(value);
    table_heap_bytes_ += StringHeapBytes(found->second);
    return inserted;
  }
  const PackedList::Position at = packed_.FindPairKey(field);
  if (at != packed_.end()) {
    packed_.Replace(packed_.Next(at), value);
    return false;
  }
  packed_.PushBack(field);
  packed_.PushBack(value);
  if (Size() > EncodingLimits::Read(limits.hash_entries)) ConvertToTable();
  return true;
}

bool HashValue::Delete(std::string_view field) {
  if (table_) {
    const auto found = table_->find(field);
    if (found == table_->end()) return false;
    table_heap_bytes_ -= StringHeapBytes(found->first) + StringHeapBytes(found->second);
    table_->erase(found);
    return true;
  }
  return packed_.ErasePair(field);
}

void HashValue::ConvertToTable() {
  auto table = std::make_unique<Table>();
  table->reserve(Size());
  ForEach([&](std::string_view field, std::string_view value) {
    const auto [node, inserted] = table->emplace(std::string(field), std::string(value));
    table_heap_bytes_ += StringHeapBytes(node->first) + StringHeapBytes(node->second);
  });
  table_ = std::move(table);
  packed_.Clear();
  packed_ = PackedList();  // give the buffer back
}

}  // namespace kvlab
