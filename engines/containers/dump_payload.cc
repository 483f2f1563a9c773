#include "engines/containers/dump_payload.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "engines/containers/hash_value.h"
#include "engines/containers/list_value.h"
#include "engines/containers/set_value.h"
#include "engines/containers/zset_text.h"
#include "engines/containers/zset_value.h"
#include "engines/rules/redis_integer.h"

namespace kvlab {
namespace {

// Redis's RDB object types (rdb.h) that kvlab writes or reads.
enum RdbType : uint8_t {
  kRdbString = 0,
  kRdbList = 1,
  kRdbSet = 2,
  kRdbZSet = 3,  // scores as text
  kRdbHash = 4,
  kRdbZSet2 = 5,  // scores as binary doubles
  kRdbSetIntset = 11,
  kRdbHashListpack = 16,
  kRdbZSetListpack = 17,
  kRdbListQuicklist2 = 18,
};

// Length prefixes (rdb.h RDB_6BITLEN ...) and string encodings (RDB_ENC_*).
constexpr uint8_t k6BitLen = 0, k14BitLen = 1, kEncodedValue = 3;
constexpr uint8_t k32BitLen = 0x80, k64BitLen = 0x81;
constexpr uint8_t kEncInt8 = 0, kEncInt16 = 1, kEncInt32 = 2, kEncLzf = 3;
// Quicklist 2 node containers (quicklist.h).
constexpr uint64_t kQuicklistPlain = 1, kQuicklistPacked = 2;

constexpr std::array<uint64_t, 256> MakeCrcTable() {
  std::array<uint64_t, 256> table{};
  constexpr uint64_t kPolyReflected = 0x95ac9329ac4bc9b5ULL;  // 0xad93d23594c935a9 reflected
  for (uint64_t i = 0; i < 256; ++i) {
    uint64_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1) ? (crc >> 1) ^ kPolyReflected : crc >> 1;
    table[i] = crc;
  }
  return table;
}
constexpr std::array<uint64_t, 256> kCrcTable = MakeCrcTable();

// ---- writing ---------------------------------------------------------------

void PutLength(std::string& out, uint64_t length) {
  if (length < (1u << 6)) {
    out += static_cast<char>(length);
  } else if (length < (1u << 14)) {
    out += static_cast<char>((k14BitLen << 6) | (length >> 8));
    out += static_cast<char>(length & 0xff);
  } else if (length <= UINT32_MAX) {
    out += static_cast<char>(k32BitLen);
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>(length >> shift);
  } else {
    out += static_cast<char>(k64BitLen);
    for (int shift = 56; shift >= 0; shift -= 8) out += static_cast<char>(length >> shift);
  }
}

void PutLittleEndian(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>(value >> (8 * i));
}

// rdbSaveRawString() without compression: a short canonical integer as
// rdbTryIntegerEncoding() writes it, else length and bytes.
void PutString(std::string& out, std::string_view text) {
  if (text.size() <= 11) {
    if (std::optional<int64_t> value = ParseRedisInt64(text)) {
      if (*value >= INT8_MIN && *value <= INT8_MAX) {
        out += static_cast<char>((kEncodedValue << 6) | kEncInt8);
        PutLittleEndian(out, static_cast<uint64_t>(*value), 1);
        return;
      }
      if (*value >= INT16_MIN && *value <= INT16_MAX) {
        out += static_cast<char>((kEncodedValue << 6) | kEncInt16);
        PutLittleEndian(out, static_cast<uint64_t>(*value), 2);
        return;
      }
      if (*value >= INT32_MIN && *value <= INT32_MAX) {
        out += static_cast<char>((kEncodedValue << 6) | kEncInt32);
        PutLittleEndian(out, static_cast<uint64_t>(*value), 4);
        return;
      }
    }
  }
  PutLength(out, text.size());
  out.append(text);
}

void PutContainer(std::string& out, const Container& container) {
  switch (container.type()) {
    case ValueType::kList: {
      const auto& list = static_cast<const ListValue&>(container);
      out += static_cast<char>(kRdbList);
      PutLength(out, list.Size());
      list.ForEach(false, [&](size_t, std::string_view element) {
        PutString(out, element);
        return true;
      });
      return;
    }
    case ValueType::kSet: {
      const auto& set = static_cast<const SetValue&>(container);
      out += static_cast<char>(kRdbSet);
      PutLength(out, set.Size());
      set.ForEach([&](std::string_view member) { PutString(out, member); });
      return;
    }
    case ValueType::kHash: {
      const auto& hash = static_cast<const HashValue&>(container);
      out += static_cast<char>(kRdbHash);
      PutLength(out, hash.Size());
      hash.ForEach([&](std::string_view field, std::string_view value) {
        PutString(out, field);
        PutString(out, value);
      });
      return;
    }
    case ValueType::kZSet: {
      const auto& zset = static_cast<const ZSetValue&>(container);
      out += static_cast<char>(kRdbZSet2);
      PutLength(out, zset.Size());
      if (zset.Size() == 0) return;
      zset.Walk(0, false, [&](std::string_view member, double score) {
        PutString(out, member);
        PutLittleEndian(out, std::bit_cast<uint64_t>(score), 8);
        return true;
      });
      return;
    }
    case ValueType::kString:
      return;
  }
}

// ---- reading ---------------------------------------------------------------

// A cursor over untrusted bytes: every read says whether the bytes were there.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return at_ == bytes_.size(); }
  size_t left() const { return bytes_.size() - at_; }

  bool Byte(uint8_t* value) {
    if (left() < 1) return false;
    *value = static_cast<uint8_t>(bytes_[at_++]);
    return true;
  }
  bool Bytes(size_t count, std::string_view* value) {
    if (left() < count) return false;
    *value = bytes_.substr(at_, count);
    at_ += count;
    return true;
  }
  bool LittleEndian(int count, uint64_t* value) {
    std::string_view raw;
    if (!Bytes(static_cast<size_t>(count), &raw)) return false;
    *value = 0;
    for (int i = count - 1; i >= 0; --i) *value = (*value << 8) | static_cast<uint8_t>(raw[i]);
    return true;
  }
  bool BigEndian(int count, uint64_t* value) {
    std::string_view raw;
    if (!Bytes(static_cast<size_t>(count), &raw)) return false;
    *value = 0;
    for (int i = 0; i < count; ++i) *value = (*value << 8) | static_cast<uint8_t>(raw[i]);
    return true;
  }

  // rdbLoadLen(): a length, or (`encoded`) a string encoding's number.
  bool Length(uint64_t* length, bool* encoded = nullptr) {
    uint8_t first = 0;
    if (!Byte(&first)) return false;
    if (encoded != nullptr) *encoded = false;
    switch (first >> 6) {
      case k6BitLen:
        *length = first & 0x3f;
        return true;
      case k14BitLen: {
        uint8_t second = 0;
        if (!Byte(&second)) return false;
        *length = (static_cast<uint64_t>(first & 0x3f) << 8) | second;
        return true;
      }
      case kEncodedValue:
        if (encoded == nullptr) return false;  // a length was due
        *encoded = true;
        *length = first & 0x3f;
        return true;
      default:
        if (first == k32BitLen) return BigEndian(4, length);
        if (first == k64BitLen) return BigEndian(8, length);
        return false;
    }
  }

  // rdbGenericLoadStringObject(): plain, integer-encoded or LZF-compressed.
  bool String(std::string* out) {
    uint64_t length = 0;
    bool encoded = false;
    if (!Length(&length, &encoded)) return false;
    if (!encoded) {
      std::string_view raw;
      if (!Bytes(length, &raw)) return false;
      out->assign(raw);
      return true;
    }
    uint64_t raw = 0;
    switch (length) {
      case kEncInt8:
        if (!LittleEndian(1, &raw)) return false;
        *out = std::to_string(static_cast<int8_t>(raw));
        return true;
      case kEncInt16:
        if (!LittleEndian(2, &raw)) return false;
        *out = std::to_string(static_cast<int16_t>(raw));
        return true;
      case kEncInt32:
        if (!LittleEndian(4, &raw)) return false;
        *out = std::to_string(static_cast<int32_t>(raw));
        return true;
      case kEncLzf:
        return Lzf(out);
      default:
        return false;
    }
  }

 private:
  // rdbLoadLzfStringObject() with lzf_decompress() (lzf_d.c), bounds checked.
  bool Lzf(std::string* out) {
    uint64_t compressed = 0;
    uint64_t length = 0;
    std::string_view in;
    if (!Length(&compressed) || !Length(&length) || !Bytes(compressed, &in)) return false;
    // A back reference of 3 bytes makes at most 264: a larger claim is a
    // lie that would only cost memory.
    if (length == 0 || length > 88 * compressed + 64) return false;
    out->assign(length, '\0');
    size_t ip = 0;
    size_t op = 0;
    while (ip < in.size()) {
      const unsigned ctrl = static_cast<uint8_t>(in[ip++]);
      if (ctrl < (1 << 5)) {  // a literal run of ctrl + 1 bytes
        const size_t run = ctrl + 1;
        if (op + run > length || ip + run > in.size()) return false;
        std::memcpy(out->data() + op, in.data() + ip, run);
        op += run;
        ip += run;
        continue;
      }
      size_t run = ctrl >> 5;  // a back reference
      if (run == 7) {
        if (ip >= in.size()) return false;
        run += static_cast<uint8_t>(in[ip++]);
      }
      if (ip >= in.size()) return false;
      const size_t back = ((ctrl & 0x1f) << 8) + static_cast<uint8_t>(in[ip++]) + 1;
      run += 2;
      if (back > op || op + run > length) return false;
      for (size_t i = 0; i < run; ++i, ++op) (*out)[op] = (*out)[op - back];
    }
    return op == length;
  }

  std::string_view bytes_;
  size_t at_ = 0;
};

// A listpack's elements (listpack.c's encodings), as strings; false when
// the blob is not a well-formed listpack.
bool ReadListpack(std::string_view blob, std::vector<std::string>* elements) {
  Reader reader(blob);
  uint64_t total = 0;
  uint64_t count = 0;
  if (!reader.LittleEndian(4, &total) || !reader.LittleEndian(2, &count) || total != blob.size()) {
    return false;
  }
  while (true) {
    uint8_t first = 0;
    if (!reader.Byte(&first)) return false;
    if (first == 0xff) break;
    size_t entry = 1;  // encoding and data bytes, which the back-length counts
    std::string element;
    uint64_t raw = 0;
    std::string_view bytes;
    auto as_signed = [](uint64_t value, int bits) {
      const uint64_t sign = 1ull << (bits - 1);
      return static_cast<int64_t>((value ^ sign) - sign);
    };
    if ((first & 0x80) == 0) {  // 7-bit unsigned integer
      element = std::to_string(first & 0x7f);
    } else if ((first & 0xc0) == 0x80) {  // string up to 63 bytes
      if (!reader.Bytes(first & 0x3f, &bytes)) return false;
      element.assign(bytes);
      entry += bytes.size();
    } else if ((first & 0xe0) == 0xc0) {  // 13-bit signed integer
      uint8_t low = 0;
      if (!reader.Byte(&low)) return false;
      element = std::to_string(as_signed((static_cast<uint64_t>(first & 0x1f) << 8) | low, 13));
      entry += 1;
    } else if ((first & 0xf0) == 0xe0) {  // string up to 4095 bytes
      uint8_t low = 0;
      if (!reader.Byte(&low)) return false;
      const size_t length = (static_cast<size_t>(first & 0x0f) << 8) | low;
      if (!reader.Bytes(length, &bytes)) return false;
      element.assign(bytes);
      entry += 1 + length;
    } else if (first == 0xf0) {  // string with a 32-bit length
      if (!reader.LittleEndian(4, &raw) || !reader.Bytes(raw, &bytes)) return false;
      element.assign(bytes);
      entry += 4 + raw;
    } else if (first >= 0xf1 && first <= 0xf4) {  // 16, 24, 32 or 64-bit integer
      const int bytes_wide = first == 0xf1 ? 2 : first == 0xf2 ? 3 : first == 0xf3 ? 4 : 8;
      if (!reader.LittleEndian(bytes_wide, &raw)) return false;
      element = std::to_string(as_signed(raw, 8 * bytes_wide));
      entry += static_cast<size_t>(bytes_wide);
    } else {
      return false;
    }
    // The back-length: the entry's size in 7-bit groups, 1 to 5 bytes.
    const size_t back_bytes = entry < 128         ? 1
                              : entry < 16383     ? 2
                              : entry < 2097151   ? 3
                              : entry < 268435455 ? 4
                                                  : 5;
    if (!reader.Bytes(back_bytes, &bytes)) return false;
    elements->push_back(std::move(element));
  }
  if (!reader.done()) return false;
  return count == 65535 || count == elements->size();  // 65535: "too many to count"
}

// An intset (intset.h): encoding, length, then little-endian integers.
bool ReadIntset(std::string_view blob, std::vector<std::string>* members) {
  Reader reader(blob);
  uint64_t width = 0;
  uint64_t count = 0;
  if (!reader.LittleEndian(4, &width) || !reader.LittleEndian(4, &count)) return false;
  if (width != 2 && width != 4 && width != 8) return false;
  if (reader.left() != width * count || count == 0) return false;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t raw = 0;
    reader.LittleEndian(static_cast<int>(width), &raw);
    const int bits = static_cast<int>(8 * width);
    const uint64_t sign = bits == 64 ? 0 : 1ull << (bits - 1);
    const int64_t value =
        bits == 64 ? static_cast<int64_t>(raw) : static_cast<int64_t>((raw ^ sign) - sign);
    members->push_back(std::to_string(value));
  }
  return true;
}

// rdbLoadDoubleValue(): a length byte, 253 NaN, 254 +inf, 255 -inf, else text.
bool ReadTextScore(Reader& reader, double* score) {
  uint8_t length = 0;
  if (!reader.Byte(&length)) return false;
  if (length == 253) return false;  // NaN: Redis refuses it in a sorted set
  if (length == 254 || length == 255) {
    *score = length == 254 ? INFINITY : -INFINITY;
    return true;
  }
  std::string_view text;
  if (!reader.Bytes(length, &text)) return false;
  return ParseZSetScore(text, score);
}

bool AddZSetMember(ZSetValue& zset, std::string_view member, double score) {
  if (std::isnan(score) || zset.Score(member)) return false;  // NaN or a duplicate
  zset.Insert(member, score);
  return true;
}

// The object after its type byte, into `out`; false on any malformation,
// an empty container (Redis refuses empty keys) or a duplicate member.
bool ReadObject(uint8_t type, Reader& reader, RestoredValue* out) {
  uint64_t count = 0;
  std::string first;
  std::string second;
  switch (type) {
    case kRdbString:
      return reader.String(&out->string_value);
    case kRdbList: {
      if (!reader.Length(&count) || count == 0) return false;
      auto list = std::make_unique<ListValue>();
      for (uint64_t i = 0; i < count; ++i) {
        if (!reader.String(&first)) return false;
        list->PushBack(first);
      }
      out->container = std::move(list);
      return true;
    }
    case kRdbListQuicklist2: {
      if (!reader.Length(&count) || count == 0) return false;
      auto list = std::make_unique<ListValue>();
      std::vector<std::string> elements;
      for (uint64_t i = 0; i < count; ++i) {
        uint64_t container = 0;
        if (!reader.Length(&container) || !reader.String(&first)) return false;
        if (container == kQuicklistPlain) {
          list->PushBack(first);
          continue;
        }
        elements.clear();
        if (container != kQuicklistPacked || !ReadListpack(first, &elements)) return false;
        for (const std::string& element : elements) list->PushBack(element);
      }
      if (list->Size() == 0) return false;  // every node empty
      out->container = std::move(list);
      return true;
    }
    case kRdbSet:
    case kRdbSetIntset: {
      std::vector<std::string> members;
      if (type == kRdbSetIntset) {
        if (!reader.String(&first) || !ReadIntset(first, &members)) return false;
      } else {
        if (!reader.Length(&count) || count == 0) return false;
        for (uint64_t i = 0; i < count; ++i) {
          if (!reader.String(&first)) return false;
          members.push_back(first);
        }
      }
      auto set = std::make_unique<SetValue>();
      for (const std::string& member : members) {
        if (!set->Add(member)) return false;  // a duplicate
      }
      out->container = std::move(set);
      return true;
    }
    case kRdbHash:
    case kRdbHashListpack: {
      auto hash = std::make_unique<HashValue>();
      if (type == kRdbHashListpack) {
        std::vector<std::string> elements;
        if (!reader.String(&first) || !ReadListpack(first, &elements)) return false;
        if (elements.empty() || elements.size() % 2 != 0) return false;
        for (size_t i = 0; i < elements.size(); i += 2) {
          if (!hash->Set(elements[i], elements[i + 1])) return false;
        }
      } else {
        if (!reader.Length(&count) || count == 0) return false;
        for (uint64_t i = 0; i < count; ++i) {
          if (!reader.String(&first) || !reader.String(&second)) return false;
          if (!hash->Set(first, second)) return false;
        }
      }
      out->container = std::move(hash);
      return true;
    }
    case kRdbZSet:
    case kRdbZSet2:
    case kRdbZSetListpack: {
      auto zset = std::make_unique<ZSetValue>();
      double score = 0;
      if (type == kRdbZSetListpack) {
        std::vector<std::string> elements;
        if (!reader.String(&first) || !ReadListpack(first, &elements)) return false;
        if (elements.empty() || elements.size() % 2 != 0) return false;
        for (size_t i = 0; i < elements.size(); i += 2) {
          if (!ParseZSetScore(elements[i + 1], &score)) return false;
          if (!AddZSetMember(*zset, elements[i], score)) return false;
        }
      } else {
        if (!reader.Length(&count) || count == 0) return false;
        for (uint64_t i = 0; i < count; ++i) {
          if (!reader.String(&first)) return false;
          if (type == kRdbZSet2) {
            uint64_t bits = 0;
            if (!reader.LittleEndian(8, &bits)) return false;
            score = std::bit_cast<double>(bits);
          } else if (!ReadTextScore(reader, &score)) {
            return false;
          }
          if (!AddZSetMember(*zset, first, score)) return false;
        }
      }
      out->container = std::move(zset);
      return true;
    }
    default:
      return false;  // streams, modules, ziplists, zipmaps
  }
}

}  // namespace

uint64_t Crc64(uint64_t crc, std::string_view bytes) {
  for (const char byte : bytes) {
    crc = kCrcTable[(crc ^ static_cast<uint8_t>(byte)) & 0xff] ^ (crc >> 8);
  }
  return crc;
}

std::string DumpPayload(const EntryView& entry) {
  std::string out;
  if (entry.container == nullptr) {
    out += static_cast<char>(kRdbString);
    PutString(out, entry.value);
  } else {
    PutContainer(out, *entry.container);
  }
  PutLittleEndian(out, kDumpRdbVersion, 2);
  PutLittleEndian(out, Crc64(0, out), 8);
  return out;
}

PayloadStatus ReadPayload(std::string_view payload, RestoredValue* out) {
  // verifyDumpPayload(): at least the footer, a version this server reads,
  // and the checksum over everything before it.
  if (payload.size() < 10) return PayloadStatus::kVersionOrChecksum;
  const std::string_view footer = payload.substr(payload.size() - 10);
  const uint16_t version = static_cast<uint16_t>(static_cast<uint8_t>(footer[0]) |
                                                 (static_cast<uint8_t>(footer[1]) << 8));
  if (version > kDumpRdbVersion) return PayloadStatus::kVersionOrChecksum;
  uint64_t crc = 0;
  for (int i = 7; i >= 0; --i) crc = (crc << 8) | static_cast<uint8_t>(footer[2 + i]);
  if (Crc64(0, payload.substr(0, payload.size() - 8)) != crc) {
    return PayloadStatus::kVersionOrChecksum;
  }
  Reader reader(payload.substr(0, payload.size() - 10));
  uint8_t type = 0;
  RestoredValue value;
  // Bytes after the object are ignored, as Redis's rdbLoadObject() ignores them.
  if (!reader.Byte(&type) || !ReadObject(type, reader, &value)) {
    return PayloadStatus::kBadFormat;
  }
  *out = std::move(value);
  return PayloadStatus::kOk;
}

}  // namespace kvlab
