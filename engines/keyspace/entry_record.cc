#include "engines/keyspace/entry_record.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace kvlab {

void EntryRecord::CheckSizes(size_t key_size, size_t value_size) {
  // Redis caps a string at 512 MB; the 31-bit key and 30-bit value sizes
  // hold up to 2 GB and 1 GB.
  if (key_size >= (size_t{1} << 31) || value_size >= (size_t{1} << 30)) throw std::bad_alloc();
}

EntryRecord* EntryRecord::Allocate(size_t key_size, size_t value_size, bool has_expiry,
                                   ValueForm form) {
  CheckSizes(key_size, value_size);
  void* memory = std::malloc(SizeFor(key_size, value_size, has_expiry));
  if (memory == nullptr) throw std::bad_alloc();
  return new (memory) EntryRecord(static_cast<uint32_t>(key_size),
                                  static_cast<uint32_t>(value_size), has_expiry, form);
}

void EntryRecord::CopyIn(std::string_view key, std::string_view value, int64_t expire_at_ms) {
  if (expire_at_ms != 0) std::memcpy(ExpirySlot(), &expire_at_ms, sizeof expire_at_ms);
  // memcpy from an empty view's null data() is undefined even for 0 bytes
  // (UBSan reports it: the concurrent engine's spilled records hold no key).
  if (!key.empty()) std::memcpy(Bytes(), key.data(), key.size());
  if (!value.empty()) std::memcpy(Bytes() + key.size(), value.data(), value.size());
}

EntryRecord* EntryRecord::Make(std::string_view key, std::string_view value, int64_t expire_at_ms,
                               ValueForm form) {
  EntryRecord* record = Allocate(key.size(), value.size(), expire_at_ms != 0, form);
  record->CopyIn(key, value, expire_at_ms);
  return record;
}

EntryRecord* EntryRecord::MakeAt(void* memory, std::string_view key, std::string_view value,
                                 int64_t expire_at_ms, ValueForm form) {
  CheckSizes(key.size(), value.size());
  auto* record =
      new (memory) EntryRecord(static_cast<uint32_t>(key.size()),
                               static_cast<uint32_t>(value.size()), expire_at_ms != 0, form);
  record->CopyIn(key, value, expire_at_ms);
  return record;
}

void EntryRecord::Free(EntryRecord* record) {
  record->~EntryRecord();
  std::free(record);
}

// malloc rounds every request up to its size class; a value that still fits
// the block, with the expiry slot where it was, is rewritten in place.
// A value no larger than the current one (the common overwrite) needs no
// allocator call.
bool EntryRecord::CanHold(size_t value_size, bool with_expiry) const {
  return CanHoldWithin(value_size, with_expiry,
                       [this] { return malloc_usable_size(const_cast<EntryRecord*>(this)); });
}

// Records the plain keyspaces own also drop an expiry slot no longer used.
bool EntryRecord::Fits(size_t value_size, bool has_expiry) const {
  return has_expiry == static_cast<bool>(has_expiry_) && CanHold(value_size, has_expiry);
}

void EntryRecord::Overwrite(std::string_view value, int64_t expire_at_ms, ValueForm form) {
  if (has_expiry_) std::memcpy(ExpirySlot(), &expire_at_ms, sizeof expire_at_ms);
  // memmove: `value` may be this record's own bytes.
  if (!value.empty()) std::memmove(Bytes() + key_size_, value.data(), value.size());
  value_size_ = static_cast<uint32_t>(value.size());
  form_ = static_cast<uint32_t>(form);
}

EntryRecord* EntryRecord::Store(EntryRecord* record, std::string_view value, int64_t expire_at_ms,
                                ValueForm form) {
  if (!record->Fits(value.size(), expire_at_ms != 0)) {
    EntryRecord* replacement = Make(record->key(), value, expire_at_ms, form);
    Free(record);
    return replacement;
  }
  record->Overwrite(value, expire_at_ms, form);
  return record;
}

EntryRecord* EntryRecord::Append(EntryRecord* record, std::string_view tail) {
  const size_t old_size = record->value_size_;
  const bool has_expiry = record->has_expiry_;
  if (!record->Fits(old_size + tail.size(), has_expiry)) {
    EntryRecord* grown =
        Allocate(record->key_size_, old_size + tail.size(), has_expiry, ValueForm::kEditedString);
    if (has_expiry) std::memcpy(grown->ExpirySlot(), record->ExpirySlot(), sizeof(int64_t));
    std::memcpy(grown->Bytes(), record->Bytes(), record->key_size_ + old_size);
    std::memcpy(grown->Bytes() + record->key_size_ + old_size, tail.data(), tail.size());
    Free(record);
    return grown;
  }
  if (!tail.empty()) {
    std::memmove(record->Bytes() + record->key_size_ + old_size, tail.data(), tail.size());
  }
  record->value_size_ = static_cast<uint32_t>(old_size + tail.size());
  record->form_ = static_cast<uint32_t>(ValueForm::kEditedString);
  return record;
}

EntryRecord* EntryRecord::SetExpiry(EntryRecord* record, int64_t expire_at_ms) {
  if ((expire_at_ms != 0) == static_cast<bool>(record->has_expiry_)) {
    if (expire_at_ms != 0) std::memcpy(record->ExpirySlot(), &expire_at_ms, sizeof expire_at_ms);
    return record;
  }
  EntryRecord* replacement = Make(record->key(), record->value(), expire_at_ms, record->form());
  Free(record);
  return replacement;
}

}  // namespace kvlab
