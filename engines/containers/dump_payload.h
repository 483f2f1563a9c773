// DumpPayload: a stored value as DUMP's serialized form, and RESTORE's
// reading of one (Redis's rdb.c object encoding, cluster.c's footer).
//
// A payload is an RDB object — its type byte, then the value — followed by
// the RDB version (2 bytes, little-endian) and a CRC-64 (Jones polynomial,
// Redis's crc64.c; 8 bytes, little-endian) of everything before it. kvlab
// writes the plain RDB types that every Redis loads (string, list, set,
// hash, sorted set with binary scores) rather than Redis 7's compact
// listpack and quicklist blobs, so its payloads are not byte-identical to
// redis-server's DUMP, but redis-server's RESTORE reads them, and kvlab's
// RESTORE reads those plus what Redis 7.0 writes: integer- and
// LZF-encoded strings, intsets, listpack hashes and sorted sets,
// quicklists of listpacks, and the old string-scored sorted sets. Streams,
// modules and the pre-7 ziplist and zipmap encodings are "Bad data format".
//
// Every length read is checked against the bytes left, so a hostile payload
// (a valid checksum over garbage) is refused, never trusted.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "engines/container.h"
#include "engines/entry.h"

namespace kvlab {

// The RDB version kvlab writes and the newest it reads (Redis 7.0's).
inline constexpr uint16_t kDumpRdbVersion = 10;

// Redis's crc64() (Jones, reflected, no final xor), continued from `crc`.
uint64_t Crc64(uint64_t crc, std::string_view bytes);

// DUMP's reply for a live entry.
std::string DumpPayload(const EntryView& entry);

enum class PayloadStatus : uint8_t {
  kOk,
  kVersionOrChecksum,  // "ERR DUMP payload version or checksum are wrong"
  kBadFormat,          // "ERR Bad data format"
};

// What a payload holds: a string (`string_value`) or a container.
struct RestoredValue {
  std::string string_value;
  std::unique_ptr<Container> container;  // null for a string
};

// Checks the footer, then reads the object into `out` (left empty unless kOk).
PayloadStatus ReadPayload(std::string_view payload, RestoredValue* out);

}  // namespace kvlab
