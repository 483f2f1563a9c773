#include "engines/entry_record.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace kvlab {

size_t EntryRecord::SizeFor(size_t key_size, size_t value_size, bool has_expiry) {
  return sizeof(EntryRecord) + (has_expiry ? sizeof(int64_t) : 0) + key_size + value_size;
}

EntryRecord* EntryRecord::Allocate(size_t key_size, size_t value_size, bool has_expiry) {
  // Redis caps a string at 512 MB; the 31-bit size field holds up to 2 GB.
  if (value_size >= (size_t{1} << 31) || key_size > UINT32_MAX) throw std::bad_alloc();
  void* memory = std::malloc(SizeFor(key_size, value_size, has_expiry));
  if (memory == nullptr) throw std::bad_alloc();
  return new (memory) EntryRecord(static_cast<uint32_t>(key_size),
                                  static_cast<uint32_t>(value_size), has_expiry);
}

EntryRecord* EntryRecord::Make(std::string_view key, std::string_view value,
                               int64_t expire_at_ms) {
  EntryRecord* record = Allocate(key.size(), value.size(), expire_at_ms != 0);
  if (expire_at_ms != 0) std::memcpy(record->ExpirySlot(), &expire_at_ms, sizeof expire_at_ms);
  std::memcpy(record->Bytes(), key.data(), key.size());
  if (!value.empty()) std::memcpy(record->Bytes() + key.size(), value.data(), value.size());
  return record;
}

void EntryRecord::Free(EntryRecord* record) {
  record->~EntryRecord();
  std::free(record);
}

// malloc rounds every request up to its size class; a value that still fits
// the block, with the expiry slot where it was, is rewritten in place.
// A value of the same size (the common overwrite) needs no allocator call.
bool EntryRecord::Fits(size_t value_size, bool has_expiry) const {
  if (has_expiry != static_cast<bool>(has_expiry_)) return false;
  if (value_size <= value_size_) return true;
  return SizeFor(key_size_, value_size, has_expiry) <=
         malloc_usable_size(const_cast<EntryRecord*>(this));
}

EntryRecord* EntryRecord::Store(EntryRecord* record, std::string_view value,
                                int64_t expire_at_ms) {
  const bool has_expiry = expire_at_ms != 0;
  if (!record->Fits(value.size(), has_expiry)) {
    EntryRecord* replacement = Make(record->key(), value, expire_at_ms);
    Free(record);
    return replacement;
  }
  if (has_expiry) std::memcpy(record->ExpirySlot(), &expire_at_ms, sizeof expire_at_ms);
  // memmove: `value` may be this record's own bytes (SET k from GET k).
  if (!value.empty()) std::memmove(record->Bytes() + record->key_size_, value.data(), value.size());
  record->value_size_ = static_cast<uint32_t>(value.size()) & 0x7fffffffu;
  return record;
}

EntryRecord* EntryRecord::Append(EntryRecord* record, std::string_view tail) {
  const size_t old_size = record->value_size_;
  const bool has_expiry = record->has_expiry_;
  if (!record->Fits(old_size + tail.size(), has_expiry)) {
    EntryRecord* grown = Allocate(record->key_size_, old_size + tail.size(), has_expiry);
    if (has_expiry) std::memcpy(grown->ExpirySlot(), record->ExpirySlot(), sizeof(int64_t));
    std::memcpy(grown->Bytes(), record->Bytes(), record->key_size_ + old_size);
    std::memcpy(grown->Bytes() + record->key_size_ + old_size, tail.data(), tail.size());
    Free(record);
    return grown;
  }
  if (!tail.empty()) {
    std::memmove(record->Bytes() + record->key_size_ + old_size, tail.data(), tail.size());
  }
  record->value_size_ = static_cast<uint32_t>(old_size + tail.size()) & 0x7fffffffu;
  return record;
}

EntryRecord* EntryRecord::SetExpiry(EntryRecord* record, int64_t expire_at_ms) {
  if ((expire_at_ms != 0) == static_cast<bool>(record->has_expiry_)) {
    if (expire_at_ms != 0) std::memcpy(record->ExpirySlot(), &expire_at_ms, sizeof expire_at_ms);
    return record;
  }
  EntryRecord* replacement = Make(record->key(), record->value(), expire_at_ms);
  Free(record);
  return replacement;
}

}  // namespace kvlab
