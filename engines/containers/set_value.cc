#include "engines/containers/set_value.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <random>

#include "engines/containers/encoding_limits.h"
#include "engines/rules/redis_integer.h"
#include "engines/containers/string_heap_bytes.h"

namespace kvlab {

size_t SetValue::RandomIndex(size_t n) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  return std::uniform_int_distribution<size_t>(0, n - 1)(rng);
}

std::string_view SetValue::FormatInt(int64_t value, char* buffer) {
  const auto [end, ec] = std::to_chars(buffer, buffer + 24, value);
  return {buffer, static_cast<size_t>(end - buffer)};
}

size_t SetValue::Bytes() const {
  size_t bytes = sizeof(SetValue) + ints_.capacity() * sizeof(int64_t);
  if (!table_) return bytes;
  using Node = std::unordered_map<std::string, size_t>::value_type;
  constexpr size_t kNodeBytes = sizeof(void*) + sizeof(Node) + sizeof(size_t) + 16;
  bytes += sizeof(Table) + table_->index.bucket_count() * sizeof(void*) +
           table_->dense.capacity() * sizeof(void*);
  // O(1): the keyspace asks before and after every write.
  return bytes + table_->dense.size() * kNodeBytes + table_->member_heap_bytes;
}

std::unique_ptr<Container> SetValue::Clone() const {
  auto copy = std::make_unique<SetValue>();
  copy->ints_ = ints_;
  if (table_) {
    copy->table_ = std::make_unique<Table>();
    copy->table_->index.reserve(table_->dense.size());
    copy->table_->dense.reserve(table_->dense.size());
    for (const std::string* member : table_->dense) copy->TableAdd(*member);
  }
  return copy;
}

bool SetValue::Contains(std::string_view member) const {
  if (table_) return table_->index.find(member) != table_->index.end();
  const std::optional<int64_t> value = ParseRedisInt64(member);
  return value && std::binary_search(ints_.begin(), ints_.end(), *value);
}

void SetValue::TableAdd(std::string_view member) {
  const auto [found, inserted] =
      table_->index.try_emplace(std::string(member), table_->dense.size());
  if (inserted) {
    table_->dense.push_back(&found->first);
    table_->member_heap_bytes += StringHeapBytes(found->first);
  }
}

bool SetValue::Add(std::string_view member) {
  if (!table_) {
    if (const std::optional<int64_t> value = ParseRedisInt64(member)) {
      const auto at = std::lower_bound(ints_.begin(), ints_.end(), *value);
      if (at != ints_.end() && *at == *value) return false;
      ints_.insert(at, *value);
      if (ints_.size() > EncodingLimits::Read(CompactEncodingLimits().set_intset_entries)) {
        ConvertToTable();
      }
      return true;
    }
    ConvertToTable();
  }
  const size_t before = table_->dense.size();
  TableAdd(member);
  return table_->dense.size() != before;
}

bool SetValue::Remove(std::string_view member) {
  if (!table_) {
    const std::optional<int64_t> value = ParseRedisInt64(member);
    if (!value) return false;
    const auto at = std::lower_bound(ints_.begin(), ints_.end(), *value);
    if (at == ints_.end() || *at != *value) return false;
    ints_.erase(at);
    return true;
  }
  const auto found = table_->index.find(member);
  if (found == table_->index.end()) return false;
  RemoveAt(found->second);
  return true;
}

std::string SetValue::At(size_t index) const {
  if (table_) return *table_->dense[index];
  return std::to_string(ints_[index]);
}

std::string SetValue::RemoveAt(size_t index) {
  if (!table_) {
    std::string member = std::to_string(ints_[index]);
    ints_.erase(ints_.begin() + static_cast<std::ptrdiff_t>(index));
    return member;
  }
  std::vector<const std::string*>& dense = table_->dense;
  std::string member = *dense[index];
  const std::string* last = dense.back();
  dense[index] = last;
  table_->index.find(*last)->second = index;
  dense.pop_back();
  table_->member_heap_bytes -= StringHeapBytes(member);
  table_->index.erase(member);
  return member;
}

std::unique_ptr<SetValue> SetValue::FromMembers(const std::vector<std::string_view>& members,
                                                bool as_intset) {
  auto set = std::make_unique<SetValue>();
  if (!as_intset) set->ConvertToTable();
  for (const std::string_view member : members) set->Add(member);
  return set;
}

void SetValue::ConvertToTable() {
  auto table = std::make_unique<Table>();
  table->index.reserve(ints_.size());
  table->dense.reserve(ints_.size());
  table_ = std::move(table);
  for (const int64_t value : ints_) TableAdd(std::to_string(value));
  ints_.clear();
  ints_.shrink_to_fit();
}

}  // namespace kvlab
