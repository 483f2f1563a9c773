#include "engines/rules/bit_arithmetic.h"

#include <bit>
#include <cstring>

namespace kvlab {

namespace {

const unsigned char* Data(std::string_view bytes) {
  return reinterpret_cast<const unsigned char*>(bytes.data());
}

int64_t PopCount(const unsigned char* bytes, int64_t count) {
  int64_t total = 0;
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + i, sizeof word);
    total += std::popcount(word);
  }
  for (; i < count; ++i) total += std::popcount(static_cast<unsigned>(bytes[i]));
  return total;
}

// Redis's redisBitpos(): the first `bit` in `count` bytes; when there is
// none, -1 for a 1, and count * 8 for a 0 (the bytes count as followed by
// zeros).
int64_t FirstBitIn(const unsigned char* bytes, int64_t count, bool bit) {
  const unsigned char skip = bit ? 0x00 : 0xff;
  for (int64_t i = 0; i < count; ++i) {
    if (bytes[i] == skip) continue;
    for (int b = 0; b < 8; ++b) {
      if (((bytes[i] >> (7 - b)) & 1) == static_cast<int>(bit)) return i * 8 + b;
    }
  }
  return bit ? -1 : count * 8;
}

// Clamps Redis's start/end (negative from the end) to [0, length - 1] and,
// in bit units, turns them into bytes plus masks of the edge bits outside
// the range. Shared by BITCOUNT and BITPOS, as in bitops.c.
struct ByteRange {
  int64_t start;
  int64_t end;
  unsigned char first_outside = 0;  // bits of the first byte before start
  unsigned char last_outside = 0;   // bits of the last byte after end
};

ByteRange Clamp(int64_t length, int64_t start, int64_t end, bool bit_units) {
  const int64_t total = bit_units ? length << 3 : length;
  if (start < 0) start = total + start;
  if (end < 0) end = total + end;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= total) end = total - 1;
  ByteRange range{start, end};
  if (bit_units && start <= end) {
    range.first_outside = static_cast<unsigned char>(~((1 << (8 - (start & 7))) - 1) & 0xff);
    range.last_outside = static_cast<unsigned char>((1 << (7 - (end & 7))) - 1);
    range.start = start >> 3;
    range.end = end >> 3;
  }
  return range;
}

}  // namespace

bool GetBit(std::string_view bytes, uint64_t offset) {
  const uint64_t byte = offset >> 3;
  if (byte >= bytes.size()) return false;
  return (Data(bytes)[byte] >> (7 - (offset & 7))) & 1;
}

void SetBit(std::string& bytes, uint64_t offset, bool on) {
  const unsigned char mask = static_cast<unsigned char>(1 << (7 - (offset & 7)));
  char& byte = bytes[offset >> 3];
  byte = static_cast<char>(on ? (byte | mask) : (byte & ~mask));
}

int64_t CountBits(std::string_view bytes) {
  return PopCount(Data(bytes), static_cast<int64_t>(bytes.size()));
}

int64_t CountBits(std::string_view bytes, int64_t start, int64_t end, bool bit_units) {
  if (start < 0 && end < 0 && start > end) return 0;
  const ByteRange range = Clamp(static_cast<int64_t>(bytes.size()), start, end, bit_units);
  if (range.start > range.end) return 0;
  const unsigned char* p = Data(bytes);
  int64_t count = PopCount(p + range.start, range.end - range.start + 1);
  // The edge bytes were counted whole: take back their bits outside the range.
  count -= std::popcount(static_cast<unsigned>(p[range.start] & range.first_outside));
  count -= std::popcount(static_cast<unsigned>(p[range.end] & range.last_outside));
  return count;
}

int64_t FindBit(std::string_view bytes, bool bit) {
  if (bytes.empty()) return -1;
  return FirstBitIn(Data(bytes), static_cast<int64_t>(bytes.size()), bit);
}

int64_t FindBit(std::string_view bytes, bool bit, int64_t start, std::optional<int64_t> end,
                bool bit_units) {
  const int64_t length = static_cast<int64_t>(bytes.size());
  const int64_t last = end ? *end : (bit_units ? (length << 3) + 7 : length - 1);
  const ByteRange range = Clamp(length, start, last, bit_units);
  if (range.start > range.end) return -1;  // an empty range holds neither bit
  const unsigned char* p = Data(bytes);
  int64_t from = range.start;
  int64_t count = range.end - range.start + 1;
  // The byte `at` with the bits outside the range set to what is not sought.
  auto masked = [&](int64_t at, unsigned char outside) {
    return static_cast<unsigned char>(bit ? (p[at] & ~outside) : (p[at] | outside));
  };
  int64_t pos = -1;
  // bitposCommand()'s three steps: the first byte, the whole bytes, the
  // last byte, each ending the search once it finds the bit.
  auto search = [&] {
    if (range.first_outside) {
      unsigned char first = masked(from, range.first_outside);
      if (range.last_outside && count == 1) {
        first = static_cast<unsigned char>(bit ? (first & ~range.last_outside)
                                               : (first | range.last_outside));
      }
      pos = FirstBitIn(&first, 1, bit);
      if (count == 1 || (pos != -1 && pos != 8)) return;
      ++from;
      --count;
    }
    const int64_t whole = count - (range.last_outside ? 1 : 0);
    if (whole > 0) {
      pos = FirstBitIn(p + from, whole, bit);
      if (count == whole || (pos != -1 && pos != whole << 3)) return;
      from += whole;
      count -= whole;
    }
    const unsigned char last_byte = masked(range.end, range.last_outside);
    pos = FirstBitIn(&last_byte, 1, bit);
  };
  search();
  // With an explicit end the range is not followed by zeros: a 0 found just
  // past it is no answer.
  if (end && !bit && pos == count << 3) return -1;
  return pos == -1 ? -1 : pos + (from << 3);
}

uint64_t GetUnsignedField(const unsigned char* bytes, uint64_t offset, int bits) {
  uint64_t value = 0;
  for (int j = 0; j < bits; ++j, ++offset) {
    value = (value << 1) | ((bytes[offset >> 3] >> (7 - (offset & 7))) & 1);
  }
  return value;
}

int64_t GetSignedField(const unsigned char* bytes, uint64_t offset, int bits) {
  uint64_t value = GetUnsignedField(bytes, offset, bits);
  // Two's complement: a set top bit extends into the higher bits.
  if (bits < 64 && (value & (uint64_t{1} << (bits - 1)))) value |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(value);
}

void SetUnsignedField(unsigned char* bytes, uint64_t offset, int bits, uint64_t value) {
  for (int j = 0; j < bits; ++j, ++offset) {
    const bool on = (value >> (bits - 1 - j)) & 1;
    const unsigned char mask = static_cast<unsigned char>(1 << (7 - (offset & 7)));
    unsigned char& byte = bytes[offset >> 3];
    byte = static_cast<unsigned char>(on ? (byte | mask) : (byte & ~mask));
  }
}

namespace {

// The up to 9 bytes a field of at most 64 bits starting at `offset` spans,
// zero past the string's end, and the field's offset in them.
struct FieldWindow {
  unsigned char bytes[9] = {};
  uint64_t offset = 0;
};

FieldWindow WindowAt(std::string_view bytes, uint64_t offset) {
  FieldWindow window;
  const uint64_t first = offset >> 3;
  for (uint64_t i = 0; i < 9 && first + i < bytes.size(); ++i) {
    window.bytes[i] = Data(bytes)[first + i];
  }
  window.offset = offset - first * 8;
  return window;
}

}  // namespace

uint64_t ReadUnsignedField(std::string_view bytes, uint64_t offset, int bits) {
  const FieldWindow window = WindowAt(bytes, offset);
  return GetUnsignedField(window.bytes, window.offset, bits);
}

int64_t ReadSignedField(std::string_view bytes, uint64_t offset, int bits) {
  const FieldWindow window = WindowAt(bytes, offset);
  return GetSignedField(window.bytes, window.offset, bits);
}

// The arithmetic below is unsigned wherever Redis's C may overflow, so it
// wraps as Redis's build does instead of being undefined.
int CheckUnsignedFieldOverflow(uint64_t value, int64_t increment, int bits, FieldOverflow overflow,
                               uint64_t* limit) {
  const uint64_t max = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  const int64_t max_increment = static_cast<int64_t>(max - value);
  const int64_t min_increment = static_cast<int64_t>(uint64_t{0} - value);
  auto wrap = [&] {
    *limit = (value + static_cast<uint64_t>(increment)) & ~(~uint64_t{0} << bits);
    return 1;  // Redis answers 1 for a wrap either way
  };
  if (value > max || (increment > 0 && increment > max_increment)) {
    if (overflow == FieldOverflow::kWrap) return wrap();
    if (overflow == FieldOverflow::kSat) *limit = max;
    return 1;
  }
  if (increment < 0 && increment < min_increment) {
    if (overflow == FieldOverflow::kWrap) return wrap();
    if (overflow == FieldOverflow::kSat) *limit = 0;
    return -1;
  }
  return 0;
}

int CheckSignedFieldOverflow(int64_t value, int64_t increment, int bits, FieldOverflow overflow,
                             int64_t* limit) {
  const int64_t max = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  const int64_t min = -max - 1;
  const int64_t max_increment =
      static_cast<int64_t>(static_cast<uint64_t>(max) - static_cast<uint64_t>(value));
  const int64_t min_increment =
      static_cast<int64_t>(static_cast<uint64_t>(min) - static_cast<uint64_t>(value));
  auto wrap = [&] {
    uint64_t sum = static_cast<uint64_t>(value) + static_cast<uint64_t>(increment);
    if (bits < 64) {
      const uint64_t above = ~uint64_t{0} << bits;
      sum = (sum & (uint64_t{1} << (bits - 1))) ? (sum | above) : (sum & ~above);
    }
    *limit = static_cast<int64_t>(sum);
    return 1;
  };
  if (value > max || (bits != 64 && increment > max_increment) ||
      (value >= 0 && increment > 0 && increment > max_increment)) {
    if (overflow == FieldOverflow::kWrap) return wrap();
    if (overflow == FieldOverflow::kSat) *limit = max;
    return 1;
  }
  if (value < min || (bits != 64 && increment < min_increment) ||
      (value < 0 && increment < 0 && increment < min_increment)) {
    if (overflow == FieldOverflow::kWrap) return wrap();
    if (overflow == FieldOverflow::kSat) *limit = min;
    return -1;
  }
  return 0;
}

void FoldBitOperand(BitOperator op, bool first, std::string_view source, std::string& result) {
  if (first) {
    result.assign(source);
    if (op == BitOperator::kNot) {
      for (char& byte : result) byte = static_cast<char>(~byte);
    }
    return;
  }
  if (source.size() > result.size()) result.resize(source.size(), '\0');
  for (size_t i = 0; i < result.size(); ++i) {
    const char byte = i < source.size() ? source[i] : '\0';
    switch (op) {
      case BitOperator::kAnd:
        result[i] = static_cast<char>(result[i] & byte);
        break;
      case BitOperator::kOr:
        result[i] = static_cast<char>(result[i] | byte);
        break;
      case BitOperator::kXor:
        result[i] = static_cast<char>(result[i] ^ byte);
        break;
      case BitOperator::kNot:
        break;  // NOT has one source only
    }
  }
}

}  // namespace kvlab
