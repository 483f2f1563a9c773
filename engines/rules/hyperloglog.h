// Redis 7.0's HyperLogLog (src/hyperloglog.c) as functions over a string's
// bytes, byte for byte its representation: a 16-byte header ("HYLL", the
// encoding, three reserved bytes, the cached cardinality little endian with
// its top bit set when stale), then 16,384 six-bit registers, either dense
// (12,288 bytes) or sparse (ZERO, XZERO and VAL run-length opcodes). An
// element's register and run come from MurmurHash64A with Redis's seed, and
// the estimate is Ertl's (arXiv:1702.01284), as Redis computes it, so a
// value written here counts the same in redis-server and the other way round.
//
// A corrupted value (any bytes a client SETRANGEs into it) is detected,
// never read past its end: opcodes that run beyond the last register, or
// stop short of it, make the value invalid.
//
// Kept apart from the commands (engines/calls/hll_calls.cc) so that the
// representation can be checked against known answers on its own.
//
// Pure functions, thread-safe; HllSparseMaxBytesSetting() is one relaxed
// atomic per process, as Redis's server.hll_sparse_max_bytes.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvlab {

inline constexpr int kHllRegisters = 16384;
inline constexpr size_t kHllHeaderBytes = 16;
inline constexpr size_t kHllDenseBytes = kHllHeaderBytes + kHllRegisters * 6 / 8;
inline constexpr uint8_t kHllDense = 0;
inline constexpr uint8_t kHllSparse = 1;

// Redis's replies for a value that is not an HLL and for a corrupted one.
inline constexpr std::string_view kHllWrongTypeError =
    "WRONGTYPE Key is not a valid HyperLogLog string value.";
inline constexpr std::string_view kHllInvalidError = "INVALIDOBJ Corrupted HLL object detected";

// hll-sparse-max-bytes: a sparse value that would grow past it turns dense.
inline constexpr int64_t kDefaultHllSparseMaxBytes = 3000;
inline std::atomic<int64_t>& HllSparseMaxBytesSetting() {
  static std::atomic<int64_t> bytes{kDefaultHllSparseMaxBytes};
  return bytes;
}

// One register per entry, 0..63: what PFCOUNT of several keys and PFMERGE
// fold their sources into.
using HllRegisters = std::array<uint8_t, kHllRegisters>;

// Redis's MurmurHash64A (little-endian words), exposed for known answers.
uint64_t MurmurHash64A(std::string_view bytes, uint64_t seed);

// An empty HLL: sparse, every register in XZERO opcodes.
std::string NewHll();

// isHLLObjectOrReply() without the type check: the magic, a known encoding,
// and a dense value's exact length. The registers are checked as they are read.
bool LooksLikeHll(std::string_view value);
// REQUIRES: LooksLikeHll().
bool IsDenseHll(std::string_view value);

// Adds `element`: 1 when a register grew (the cache is then stale), 0 when
// none did, -1 when the value is corrupted. May turn a sparse value dense.
int HllAdd(std::string& hll, std::string_view element);

// Raises register `index` to `count` when it is lower: as HllAdd.
int HllSet(std::string& hll, int index, uint8_t count);

// The cardinality of the registers; nullopt for a corrupted sparse value.
// Ignores the cache.
std::optional<uint64_t> HllEstimate(std::string_view hll);
uint64_t HllEstimate(const HllRegisters& registers);

// The cached cardinality, when it is current; storing one marks it current.
std::optional<uint64_t> HllCachedCount(std::string_view hll);
void HllStoreCount(std::string& hll, uint64_t count);
void HllInvalidateCount(std::string& hll);

// Raises each of `max` to this value's register; false when corrupted.
bool HllMergeInto(HllRegisters& max, std::string_view hll);

// The value in the dense encoding (a dense one is left alone); false, and
// the value unchanged, when the sparse opcodes are corrupted.
bool HllToDense(std::string& hll);

// PFDEBUG DECODE: a sparse value's opcodes as "z:N", "Z:N", "v:VALUE,N",
// space separated.
std::string HllDecodeSparse(std::string_view hll);

// PFDEBUG GETREG: REQUIRES: a dense value.
HllRegisters HllDenseRegisters(std::string_view hll);

// PFSELFTEST: register access, then the estimate's error and the dense and
// sparse encodings' agreement at 10^0..10^6 of 10 million elements; "" when
// every check passes, else Redis's TESTFAILED text.
std::string HllSelfTest(uint64_t seed);

}  // namespace kvlab
