// EntryView: what an operation reads of a stored key, plus the expiry,
// hashing and memory footprint rules every engine shares. The plain
// keyspaces store EntryRecords (entry_record.h, one compact allocation per
// key); the concurrent engine builds its EntryRecords inside its TBB map's
// nodes.
//
// Plain value types; not synchronised (the owning map's locking rules apply).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "engines/container.h"

namespace kvlab {

// How an entry holds its value, and for a string which encoding Redis would
// report for it (OBJECT ENCODING). Redis decides a written value's encoding
// from its bytes (int, embstr, raw) but keeps "raw" for a string APPEND,
// SETRANGE or a bit command edited in place, and never "int" for
// INCRBYFLOAT's result; kvlab keeps that one fact with the entry.
enum class ValueForm : uint8_t {
  kString = 0,        // the encoding follows from the bytes
  kEditedString = 1,  // "raw"
  kFloatString = 2,   // "embstr" up to 44 bytes, else "raw"
  kContainer = 3,     // the value bytes are a container's address
};

// A stored entry as operations read it; valid until the entry is changed.
// A string's value is `value`; a container's (container != nullptr) is the
// object, and `value` holds its address bytes.
struct EntryView {
  std::string_view value;
  int64_t expire_at_ms = 0;  // absolute unix ms; 0 = no expiry
  Container* container = nullptr;
  ValueForm form = ValueForm::kString;
};

// Redis's keyIsExpired(): a key is gone once the clock has passed its
// deadline, so at now == deadline it is still live with PTTL 0.
inline bool IsExpired(int64_t expire_at_ms, int64_t now_ms) {
  return expire_at_ms != 0 && now_ms > expire_at_ms;
}
inline bool IsExpired(const EntryView& entry, int64_t now_ms) {
  return IsExpired(entry.expire_at_ms, now_ms);
}

// Approximate bytes one entry costs: its key and value bytes plus a fixed
// allowance for the hash node, bucket and headers (the maxmemory estimate).
inline constexpr int64_t kEntryOverheadBytes = 96;
inline int64_t Footprint(std::string_view key, std::string_view value) {
  return kEntryOverheadBytes + static_cast<int64_t>(key.size() + value.size());
}
// The same for any entry: a container counts what it owns.
inline int64_t Footprint(std::string_view key, const EntryView& entry) {
  if (entry.container == nullptr) return Footprint(key, entry.value);
  return kEntryOverheadBytes + static_cast<int64_t>(key.size() + entry.container->Bytes());
}

// Transparent hash/equality so maps keyed by std::string can be probed with a
// std::string_view (the server's keys point into its read buffer) without
// allocating a temporary std::string.
struct KeyHash {
  using is_transparent = void;
  size_t operator()(std::string_view key) const noexcept {
    return std::hash<std::string_view>{}(key);
  }
};
using KeyEqual = std::equal_to<>;

}  // namespace kvlab
