// EntryRecord: one key, its value and — only when it has one — its expiry,
// in a single heap allocation: [sizes][expiry?][key bytes][value bytes].
//
// The compact entry the plain keyspaces store (one allocation per key
// instead of a node plus key and value strings), so that a key costs about
// its own bytes plus a small fixed overhead; the concurrent engine builds
// one inside each of its map nodes' allocations (MakeAt()).
//
// A record whose value is a container (container.h) holds the container's
// address as its value bytes and says so (holds_container()); the record
// never owns the object: the keyspace semantics do.
//
// Not synchronised: the owning map's locking rules apply. Records are made
// through Make() (freed with Free()) or MakeAt() (ending with the memory
// they were built in); a record of its own changes size by being replaced
// (Store()), so pointers to it must be updated by the owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "engines/container.h"
#include "engines/entry.h"

namespace kvlab {

class EntryRecord {
 public:
  // A new record. Aborts (std::bad_alloc) when memory is exhausted.
  static EntryRecord* Make(std::string_view key, std::string_view value, int64_t expire_at_ms,
                           ValueForm form = ValueForm::kString);
  static void Free(EntryRecord* record);

  // A record built in memory its owner provides (the concurrent engine puts
  // it in its map node's malloc chunk), never passed to Free(), Store(),
  // Append() or SetExpiry(): it is changed only in place (CanHold() with the
  // memory's size, Overwrite()) and ends with that memory.
  // REQUIRES: `memory` holds SizeFor(key.size(), value.size(),
  // expire_at_ms != 0) bytes and is aligned for EntryRecord.
  // Throws std::bad_alloc for a key or value beyond the sizes a record holds.
  static EntryRecord* MakeAt(void* memory, std::string_view key, std::string_view value,
                             int64_t expire_at_ms, ValueForm form = ValueForm::kString);
  // The bytes a record of these sizes takes.
  static constexpr size_t SizeFor(size_t key_size, size_t value_size, bool has_expiry) {
    return sizeof(EntryRecord) + (has_expiry ? sizeof(int64_t) : 0) + key_size + value_size;
  }

  // Sets the value and expiry of `*record`, in place when they fit the
  // allocation and expiry presence is unchanged, else by replacing the
  // record (the key is kept). Returns the record to use from now on.
  static EntryRecord* Store(EntryRecord* record, std::string_view value, int64_t expire_at_ms,
                            ValueForm form = ValueForm::kString);
  // Appends to the value (keeps the expiry; the string is then an edited
  // one). Returns the record to use. REQUIRES: !holds_container().
  static EntryRecord* Append(EntryRecord* record, std::string_view tail);

  EntryRecord(const EntryRecord&) = delete;
  EntryRecord& operator=(const EntryRecord&) = delete;

  std::string_view key() const { return {Bytes(), key_size_}; }
  std::string_view value() const { return {Bytes() + key_size_, value_size_}; }
  // Whether value() is a container's address (container.h).
  bool holds_container() const { return form() == ValueForm::kContainer; }
  ValueForm form() const { return static_cast<ValueForm>(form_); }
  // Absolute unix ms; 0 = no expiry.
  int64_t expire_at_ms() const {
    if (!has_expiry_) return 0;
    int64_t deadline;
    std::memcpy(&deadline, ExpirySlot(), sizeof deadline);
    return deadline;
  }
  // Changes the expiry in place when presence is unchanged; otherwise
  // replaces the record. Returns the record to use.
  static EntryRecord* SetExpiry(EntryRecord* record, int64_t expire_at_ms);

  // In-place changes, for owners that cannot replace a record (the
  // concurrent engine's map key): whether this allocation holds a value of
  // `value_size` bytes and (if `with_expiry`) an expiry, and the rewrite.
  // They write only the value's size, bytes and expiry, never the key's
  // bytes, size or the expiry slot's presence, which other threads may
  // read; a record with an expiry slot stores "none" there as 0.
  bool CanHold(size_t value_size, bool with_expiry) const;
  // The same for a record made by MakeAt(): `memory_bytes()` says how many
  // bytes its memory has (asked only when the value would grow).
  template <typename MemoryBytes>
  bool CanHoldWithin(size_t value_size, bool with_expiry, MemoryBytes memory_bytes) const {
    if (with_expiry && !has_expiry_) return false;
    return value_size <= value_size_ ||
           SizeFor(key_size_, value_size, has_expiry_) <= memory_bytes();
  }
  // REQUIRES: CanHold(value.size(), expire_at_ms != 0).
  void Overwrite(std::string_view value, int64_t expire_at_ms, ValueForm form = ValueForm::kString);

 private:
  EntryRecord(uint32_t key_size, uint32_t value_size, bool has_expiry, ValueForm form)
      : key_size_(key_size),
        has_expiry_(has_expiry),
        value_size_(value_size),
        form_(static_cast<uint32_t>(form)) {}
  static EntryRecord* Allocate(size_t key_size, size_t value_size, bool has_expiry, ValueForm form);
  // Throws std::bad_alloc for sizes the header cannot hold.
  static void CheckSizes(size_t key_size, size_t value_size);
  // Copies the expiry (when the record has its slot), key and value in.
  void CopyIn(std::string_view key, std::string_view value, int64_t expire_at_ms);
  bool Fits(size_t value_size, bool has_expiry) const;
  // Where the expiry lives when has_expiry_ is set: right after the header.
  char* ExpirySlot() { return reinterpret_cast<char*>(this + 1); }
  const char* ExpirySlot() const { return reinterpret_cast<const char*>(this + 1); }
  char* Bytes() { return reinterpret_cast<char*>(this + 1) + (has_expiry_ ? sizeof(int64_t) : 0); }
  const char* Bytes() const {
    return reinterpret_cast<const char*>(this + 1) + (has_expiry_ ? sizeof(int64_t) : 0);
  }

  // The key's size and the expiry's presence never change; the value's size
  // and kind are a separate memory location, rewritten in place (see
  // Overwrite()). A string is at most 512 MB, so 30 bits hold its size.
  uint32_t key_size_ : 31;
  uint32_t has_expiry_ : 1;
  // A zero-width bit-field ends the memory location: adjacent bit-fields
  // are one location in C++'s memory model, and other threads read the
  // key's size while the value's is rewritten (TSan saw the race).
  uint32_t : 0;
  uint32_t value_size_ : 30;
  uint32_t form_ : 2;  // a ValueForm
};

static_assert(sizeof(EntryRecord) == 8);

// What an operation reads of a record.
inline EntryView ViewOfRecord(const EntryRecord& record) {
  EntryView view{record.value(), record.expire_at_ms()};
  view.form = record.form();
  if (record.holds_container()) view.container = AddressFrom(view.value);
  return view;
}

}  // namespace kvlab
