// Hash slots as Redis Cluster defines them: a key's slot is CRC16 (XMODEM)
// of the key, or of its {hash tag} when the key has a non-empty one, modulo
// 16384. The `owner` engine, CLUSTER KEYSLOT/SLOTS and kvlab-load's
// `--route slots` all place keys with these functions, so a client that
// routes by slot reaches the thread that owns the key.
//
// N owners take contiguous, even ranges of the slots, in owner order (as
// `redis-cli --cluster create` assigns them): owner i holds
// [FirstSlotOf(i, N), FirstSlotOf(i + 1, N)).
//
// Pure functions over constant tables; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace kvlab {

inline constexpr uint32_t kHashSlots = 16384;

namespace hash_slot_detail {
constexpr std::array<uint16_t, 256> MakeCrc16Table() {
  std::array<uint16_t, 256> table{};
  for (uint32_t byte = 0; byte < 256; ++byte) {
    uint16_t crc = static_cast<uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = static_cast<uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    table[byte] = crc;
  }
  return table;
}
inline constexpr std::array<uint16_t, 256> kCrc16Table = MakeCrc16Table();
}  // namespace hash_slot_detail

// CRC16-CCITT (XMODEM), Redis's crc16(): "123456789" -> 0x31C3.
constexpr uint16_t Crc16(std::string_view bytes) {
  uint16_t crc = 0;
  for (char c : bytes) {
    const uint8_t index = static_cast<uint8_t>((crc >> 8) ^ static_cast<uint8_t>(c));
    crc = static_cast<uint16_t>((crc << 8) ^ hash_slot_detail::kCrc16Table[index]);
  }
  return crc;
}

// Redis's keyHashSlot(): the part between the first '{' and the next '}'
// when it is not empty, else the whole key.
constexpr uint32_t HashSlot(std::string_view key) {
  const size_t open = key.find('{');
  if (open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return Crc16(key) & (kHashSlots - 1);
}

// The first slot of owner `owner` of `owners`; FirstSlotOf(owners, owners)
// is kHashSlots. REQUIRES: owners >= 1, owner <= owners.
constexpr uint32_t FirstSlotOf(uint32_t owner, uint32_t owners) {
  return static_cast<uint32_t>(uint64_t{owner} * kHashSlots / owners);
}

// The owner of `slot` among `owners`: the inverse of FirstSlotOf().
constexpr uint32_t OwnerOfSlot(uint32_t slot, uint32_t owners) {
  // ((slot + 1) * owners - 1) / kHashSlots is the largest i with
  // FirstSlotOf(i) <= slot.
  return static_cast<uint32_t>((uint64_t{slot + 1} * owners - 1) / kHashSlots);
}

}  // namespace kvlab
