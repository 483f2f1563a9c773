#include "engines/rules/hyperloglog.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace kvlab {

namespace {

constexpr int kRegisterBits = 6;
constexpr uint8_t kRegisterMax = (1 << kRegisterBits) - 1;
constexpr int kIndexBits = 14;                         // HLL_P
constexpr int kRunBits = 64 - kIndexBits;              // HLL_Q
constexpr uint64_t kHashSeed = 0xadc83b19ULL;          // Redis's seed for elements
constexpr double kAlphaInf = 0.721347520444481703680;  // 0.5 / ln(2)

// The header's fields (struct hllhdr).
constexpr size_t kEncodingAt = 4;
constexpr size_t kCountAt = 8;
constexpr uint8_t kStaleCountBit = 0x80;  // in the count's last byte

// The sparse opcodes: 00xxxxxx ZERO (1..64 zero registers), 01xxxxxx
// yyyyyyyy XZERO (1..16384), 1vvvvvxx VAL (1..4 registers of value 1..32).
constexpr int kSparseValMaxValue = 32;
constexpr int kSparseValMaxLen = 4;
constexpr int kSparseZeroMaxLen = 64;
constexpr int kSparseXzeroMaxLen = 16384;

bool IsZero(uint8_t op) { return (op & 0xc0) == 0; }
bool IsXzero(uint8_t op) { return (op & 0xc0) == 0x40; }
bool IsVal(uint8_t op) { return (op & 0x80) != 0; }
int ZeroLen(uint8_t op) { return (op & 0x3f) + 1; }
int ValValue(uint8_t op) { return ((op >> 2) & 0x1f) + 1; }
int ValLen(uint8_t op) { return (op & 0x3) + 1; }
uint8_t ValOp(int value, int len) {
  return static_cast<uint8_t>(((value - 1) << 2) | (len - 1) | 0x80);
}
uint8_t ZeroOp(int len) { return static_cast<uint8_t>(len - 1); }

uint8_t ByteAt(std::string_view bytes, size_t at) {
  // Redis reads an XZERO's second byte from a cut-off value's sds
  // terminator: a zero.
  return at < bytes.size() ? static_cast<uint8_t>(bytes[at]) : 0;
}
int XzeroLen(std::string_view bytes, size_t at) {
  return (((ByteAt(bytes, at) & 0x3f) << 8) | ByteAt(bytes, at + 1)) + 1;
}
void PutXzero(std::string& seq, int len) {
  seq.push_back(static_cast<char>(((len - 1) >> 8) | 0x40));
  seq.push_back(static_cast<char>((len - 1) & 0xff));
}

// A dense register: six bits from the least significant of byte
// index * 6 / 8 on, into the next byte where they do not fit (they never
// need a byte past the last register's).
uint8_t DenseGet(const uint8_t* registers, int index) {
  const size_t byte = static_cast<size_t>(index) * kRegisterBits / 8;
  const unsigned first_bit = (static_cast<unsigned>(index) * kRegisterBits) & 7;
  unsigned value = registers[byte] >> first_bit;
  if (first_bit > 8 - kRegisterBits)
    value |= static_cast<unsigned>(registers[byte + 1]) << (8 - first_bit);
  return static_cast<uint8_t>(value & kRegisterMax);
}
void DenseSet(uint8_t* registers, int index, uint8_t value) {
  const size_t byte = static_cast<size_t>(index) * kRegisterBits / 8;
  const unsigned first_bit = (static_cast<unsigned>(index) * kRegisterBits) & 7;
  registers[byte] =
      static_cast<uint8_t>((registers[byte] & ~(kRegisterMax << first_bit)) | (value << first_bit));
  if (first_bit > 8 - kRegisterBits) {
    const unsigned in_next = 8 - first_bit;
    registers[byte + 1] = static_cast<uint8_t>((registers[byte + 1] & ~(kRegisterMax >> in_next)) |
                                               (value >> in_next));
  }
}

uint8_t* DenseRegisters(std::string& hll) {
  return reinterpret_cast<uint8_t*>(hll.data()) + kHllHeaderBytes;
}
const uint8_t* DenseRegisters(std::string_view hll) {
  return reinterpret_cast<const uint8_t*>(hll.data()) + kHllHeaderBytes;
}

// hllPatLen(): the element's register, and the position of the first 1 bit
// in the hash's other 50 bits (1 when the lowest is set, at most 51).
uint8_t RunOf(std::string_view element, int* index) {
  uint64_t hash = MurmurHash64A(element, kHashSeed);
  *index = static_cast<int>(hash & (kHllRegisters - 1));
  hash >>= kIndexBits;
  hash |= uint64_t{1} << kRunBits;  // the loop ends by bit 50
  uint8_t count = 1;
  for (uint64_t bit = 1; (hash & bit) == 0; bit <<= 1) ++count;
  return count;
}

int DenseRaise(uint8_t* registers, int index, uint8_t count) {
  if (count <= DenseGet(registers, index)) return 0;
  DenseSet(registers, index, count);
  return 1;
}

// Walks a sparse value's opcodes, calling run(first register, length,
// value) for each (value 0 for ZERO and XZERO); false when they run past
// the last register or end short of it. Checked before each run is used,
// so a hostile value of millions of opcodes never indexes past 16,384.
template <typename Run>
bool WalkSparse(std::string_view hll, Run&& run) {
  int64_t index = 0;
  size_t at = kHllHeaderBytes;
  while (at < hll.size()) {
    const uint8_t op = static_cast<uint8_t>(hll[at]);
    int len, value = 0;
    if (IsZero(op)) {
      len = ZeroLen(op);
      at += 1;
    } else if (IsXzero(op)) {
      len = XzeroLen(hll, at);
      at += 2;
    } else {
      len = ValLen(op);
      value = ValValue(op);
      at += 1;
    }
    if (index + len > kHllRegisters) return false;
    run(static_cast<int>(index), len, value);
    index += len;
  }
  return index == kHllRegisters;
}

// Ertl's estimate from the histogram of register values (hllCount()).
double Sigma(double x) {
  if (x == 1.) return INFINITY;
  double z_prime;
  double y = 1;
  double z = x;
  do {
    x *= x;
    z_prime = z;
    z += x * y;
    y += y;
  } while (z_prime != z);
  return z;
}

double Tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double z_prime;
  double y = 1.0;
  double z = 1 - x;
  do {
    x = std::sqrt(x);
    z_prime = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (z_prime != z);
  return z / 3;
}

uint64_t EstimateFromHistogram(const std::array<int, 64>& histogram) {
  const double m = kHllRegisters;
  double z = m * Tau((m - histogram[kRunBits + 1]) / m);
  for (int j = kRunBits; j >= 1; --j) {
    z += histogram[j];
    z *= 0.5;
  }
  z += m * Sigma(histogram[0] / m);
  return static_cast<uint64_t>(std::llround(kAlphaInf * m * m / z));
}

// hllSparseSet(): raises one register of a sparse value, splitting the
// opcode that covers it, merging equal neighbours after, and turning the
// value dense when the value needs more than VAL holds or the value would
// grow past hll-sparse-max-bytes.
int SparseRaise(std::string& hll, int index, uint8_t count) {
  auto promote = [&]() {
    if (!HllToDense(hll)) return -1;
    return DenseRaise(DenseRegisters(hll), index, count);  // 1: it was lower
  };
  if (count > kSparseValMaxValue) return promote();

  // Step 1: the opcode covering `index`.
  std::string_view bytes(hll);
  size_t at = kHllHeaderBytes, end = hll.size();
  size_t prev = std::string::npos;
  int64_t first = 0, span = 0;
  while (at < end) {
    const uint8_t op = static_cast<uint8_t>(bytes[at]);
    size_t op_len = 1;
    if (IsZero(op)) {
      span = ZeroLen(op);
    } else if (IsVal(op)) {
      span = ValLen(op);
    } else {
      span = XzeroLen(bytes, at);
      op_len = 2;
    }
    if (index <= first + span - 1) break;
    prev = at;
    at += op_len;
    first += span;
  }
  if (span == 0 || at >= end) return -1;

  const uint8_t op = static_cast<uint8_t>(bytes[at]);
  const bool is_zero = IsZero(op), is_xzero = IsXzero(op), is_val = !is_zero && !is_xzero;
  const int run_len = is_zero ? ZeroLen(op) : is_xzero ? XzeroLen(bytes, at) : ValLen(op);

  bool replaced_in_place = false;
  if (is_val) {
    if (ValValue(op) >= count) return 0;  // A: nothing to raise
    if (run_len == 1) {                   // B
      hll[at] = static_cast<char>(ValOp(count, 1));
      replaced_in_place = true;
    }
  }
  if (is_zero && run_len == 1) {  // C
    hll[at] = static_cast<char>(ValOp(count, 1));
    replaced_in_place = true;
  }
  if (!replaced_in_place) {
    // D: the covering opcode split into at most XZERO VAL XZERO.
    std::string seq;
    const int64_t last = first + span - 1;
    auto put_zeros = [&](int len) {
      if (len > kSparseZeroMaxLen) {
        PutXzero(seq, len);
      } else {
        seq.push_back(static_cast<char>(ZeroOp(len)));
      }
    };
    if (is_zero || is_xzero) {
      if (index != first) put_zeros(static_cast<int>(index - first));
      seq.push_back(static_cast<char>(ValOp(count, 1)));
      if (index != last) put_zeros(static_cast<int>(last - index));
    } else {
      const int value = ValValue(op);
      if (index != first)
        seq.push_back(static_cast<char>(ValOp(value, static_cast<int>(index - first))));
      seq.push_back(static_cast<char>(ValOp(count, 1)));
      if (index != last)
        seq.push_back(static_cast<char>(ValOp(value, static_cast<int>(last - index))));
    }
    const size_t old_len = is_xzero ? 2 : 1;
    const int64_t delta = static_cast<int64_t>(seq.size()) - static_cast<int64_t>(old_len);
    if (delta > 0 && static_cast<int64_t>(hll.size()) + delta >
                         HllSparseMaxBytesSetting().load(std::memory_order_relaxed)) {
      return promote();
    }
    hll.replace(at, old_len, seq);
    end = hll.size();
  }

  // Step 4: adjacent VALs of one value merged, up to five opcodes from prev.
  size_t scan = prev != std::string::npos ? prev : kHllHeaderBytes;
  for (int scan_left = 5; scan < end && scan_left-- > 0;) {
    const uint8_t here = static_cast<uint8_t>(hll[scan]);
    if (IsXzero(here)) {
      scan += 2;
      continue;
    }
    if (IsZero(here)) {
      ++scan;
      continue;
    }
    if (scan + 1 < end && IsVal(static_cast<uint8_t>(hll[scan + 1]))) {
      const uint8_t right = static_cast<uint8_t>(hll[scan + 1]);
      const int merged = ValLen(here) + ValLen(right);
      if (ValValue(here) == ValValue(right) && merged <= kSparseValMaxLen) {
        hll[scan + 1] = static_cast<char>(ValOp(ValValue(here), merged));
        hll.erase(scan, 1);
        --end;
        continue;  // and try the merged one with its right neighbour
      }
    }
    ++scan;
  }
  HllInvalidateCount(hll);
  return 1;
}

}  // namespace

uint64_t MurmurHash64A(std::string_view bytes, uint64_t seed) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  const size_t len = bytes.size();
  uint64_t h = seed ^ (len * m);
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  const uint8_t* end = data + (len - (len & 7));
  for (; data != end; data += 8) {
    uint64_t k = 0;
    for (int i = 7; i >= 0; --i) k = (k << 8) | data[i];  // little endian
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  const size_t tail = len & 7;
  if (tail > 0) {
    for (size_t i = tail; i-- > 0;) h ^= static_cast<uint64_t>(data[i]) << (8 * i);
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

std::string NewHll() {
  std::string hll(kHllHeaderBytes, '\0');
  std::memcpy(hll.data(), "HYLL", 4);
  hll[kEncodingAt] = static_cast<char>(kHllSparse);
  for (int left = kHllRegisters; left > 0; left -= kSparseXzeroMaxLen) {
    PutXzero(hll, std::min(left, kSparseXzeroMaxLen));
  }
  return hll;
}

bool LooksLikeHll(std::string_view value) {
  if (value.size() < kHllHeaderBytes || value.substr(0, 4) != "HYLL") return false;
  const uint8_t encoding = static_cast<uint8_t>(value[kEncodingAt]);
  if (encoding > kHllSparse) return false;
  return encoding != kHllDense || value.size() == kHllDenseBytes;
}

bool IsDenseHll(std::string_view value) {
  return static_cast<uint8_t>(value[kEncodingAt]) == kHllDense;
}

int HllSet(std::string& hll, int index, uint8_t count) {
  if (IsDenseHll(hll)) {
    const int raised = DenseRaise(DenseRegisters(hll), index, count);
    if (raised) HllInvalidateCount(hll);
    return raised;
  }
  return SparseRaise(hll, index, count);
}

int HllAdd(std::string& hll, std::string_view element) {
  int index;
  const uint8_t count = RunOf(element, &index);
  return HllSet(hll, index, count);
}

std::optional<uint64_t> HllEstimate(std::string_view hll) {
  std::array<int, 64> histogram{};
  if (IsDenseHll(hll)) {
    const uint8_t* registers = DenseRegisters(hll);
    for (int i = 0; i < kHllRegisters; ++i) ++histogram[DenseGet(registers, i)];
  } else if (!WalkSparse(hll, [&](int, int len, int value) { histogram[value] += len; })) {
    return std::nullopt;
  }
  return EstimateFromHistogram(histogram);
}

uint64_t HllEstimate(const HllRegisters& registers) {
  std::array<int, 64> histogram{};
  for (uint8_t value : registers) ++histogram[value & 63];
  return EstimateFromHistogram(histogram);
}

std::optional<uint64_t> HllCachedCount(std::string_view hll) {
  if ((static_cast<uint8_t>(hll[kCountAt + 7]) & kStaleCountBit) != 0) return std::nullopt;
  uint64_t count = 0;
  for (int i = 7; i >= 0; --i) count = (count << 8) | static_cast<uint8_t>(hll[kCountAt + i]);
  return count;
}

void HllStoreCount(std::string& hll, uint64_t count) {
  for (int i = 0; i < 8; ++i) hll[kCountAt + i] = static_cast<char>((count >> (8 * i)) & 0xff);
}

void HllInvalidateCount(std::string& hll) {
  hll[kCountAt + 7] = static_cast<char>(static_cast<uint8_t>(hll[kCountAt + 7]) | kStaleCountBit);
}

bool HllMergeInto(HllRegisters& max, std::string_view hll) {
  if (IsDenseHll(hll)) {
    const uint8_t* registers = DenseRegisters(hll);
    for (int i = 0; i < kHllRegisters; ++i) max[i] = std::max(max[i], DenseGet(registers, i));
    return true;
  }
  return WalkSparse(hll, [&](int first, int len, int value) {
    for (int i = first; i < first + len; ++i) {
      max[i] = std::max(max[i], static_cast<uint8_t>(value));
    }
  });
}

bool HllToDense(std::string& hll) {
  if (IsDenseHll(hll)) return true;
  std::string dense(kHllDenseBytes, '\0');
  std::memcpy(dense.data(), hll.data(), kHllHeaderBytes);  // magic, reserved, cached count
  dense[kEncodingAt] = static_cast<char>(kHllDense);
  uint8_t* registers = DenseRegisters(dense);
  const bool valid = WalkSparse(hll, [&](int first, int len, int value) {
    for (int i = first; value != 0 && i < first + len; ++i) {
      DenseSet(registers, i, static_cast<uint8_t>(value));
    }
  });
  if (!valid) return false;
  hll = std::move(dense);
  return true;
}

std::string HllDecodeSparse(std::string_view hll) {
  std::string decoded;
  for (size_t at = kHllHeaderBytes; at < hll.size();) {
    const uint8_t op = static_cast<uint8_t>(hll[at]);
    if (IsZero(op)) {
      decoded += "z:" + std::to_string(ZeroLen(op)) + " ";
      at += 1;
    } else if (IsXzero(op)) {
      decoded += "Z:" + std::to_string(XzeroLen(hll, at)) + " ";
      at += 2;
    } else {
      decoded += "v:" + std::to_string(ValValue(op)) + "," + std::to_string(ValLen(op)) + " ";
      at += 1;
    }
  }
  if (!decoded.empty()) decoded.pop_back();
  return decoded;
}

HllRegisters HllDenseRegisters(std::string_view hll) {
  HllRegisters registers;
  for (int i = 0; i < kHllRegisters; ++i) registers[i] = DenseGet(DenseRegisters(hll), i);
  return registers;
}

std::string HllSelfTest(uint64_t seed) {
  std::mt19937_64 random(seed);
  // Test 1: every register keeps what was set, and leaves its neighbours be.
  std::string dense(kHllDenseBytes, '\0');
  uint8_t* registers = DenseRegisters(dense);
  HllRegisters expected;
  for (int cycle = 0; cycle < 1000; ++cycle) {
    for (int i = 0; i < kHllRegisters; ++i) {
      expected[i] = static_cast<uint8_t>(random() & kRegisterMax);
      DenseSet(registers, i, expected[i]);
    }
    for (int i = 0; i < kHllRegisters; ++i) {
      if (DenseGet(registers, i) != expected[i]) {
        return "TESTFAILED Register " + std::to_string(i) + " should be " +
               std::to_string(expected[i]) + " but is " + std::to_string(DenseGet(registers, i));
      }
    }
  }
  // Test 2: the estimate's error, dense and sparse side by side.
  std::memset(registers, 0, kHllDenseBytes - kHllHeaderBytes);
  std::string sparse = NewHll();
  const double relative_error = 1.04 / std::sqrt(static_cast<double>(kHllRegisters));
  const uint64_t offset = random();
  int64_t checkpoint = 1;
  for (int64_t j = 1; j <= 10000000; ++j) {
    const uint64_t element = static_cast<uint64_t>(j) ^ offset;
    std::string_view bytes(reinterpret_cast<const char*>(&element), sizeof(element));
    int index;
    const uint8_t count = RunOf(bytes, &index);
    DenseRaise(registers, index, count);
    HllSet(sparse, index, count);
    if (j != checkpoint) continue;
    if (j < HllSparseMaxBytesSetting().load(std::memory_order_relaxed) / 2 && IsDenseHll(sparse)) {
      return "TESTFAILED sparse encoding not used";
    }
    const uint64_t estimate = *HllEstimate(dense);
    if (HllEstimate(sparse) != estimate) return "TESTFAILED dense/sparse disagree";
    int64_t max_error = static_cast<int64_t>(std::ceil(relative_error * 6 * checkpoint));
    if (j == 10) max_error = 1;  // collisions at 10 are likely enough to allow one
    const int64_t error = std::llabs(checkpoint - static_cast<int64_t>(estimate));
    if (error > max_error) {
      return "TESTFAILED Too big error. card:" + std::to_string(checkpoint) +
             " abserr:" + std::to_string(error);
    }
    checkpoint *= 10;
  }
  return "";
}

}  // namespace kvlab
