// DUMP's payload format (engines/containers/dump_payload.h): Redis's CRC-64 known
// answer, payloads captured from redis-server 7.0.15's DUMP read back (so
// the expectations do not come from kvlab's writer), round trips of every
// type and encoding, and hostile payloads — truncated, mutated, lying about
// their lengths — each under a valid checksum, which must be refused or
// read without harm (this test runs under ASan in `make test-asan`).
#include "engines/containers/dump_payload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engines/containers/hash_value.h"
#include "engines/containers/list_value.h"
#include "engines/containers/set_value.h"
#include "engines/containers/zset_value.h"
#include "tests/hex_bytes.h"

namespace kvlab {
namespace {

using test::FromHex;

// `object` (type byte and value) with a valid version 10 footer.
std::string WithFooter(std::string object) {
  object += '\x0a';
  object += '\x00';
  const uint64_t crc = Crc64(0, object);
  for (int i = 0; i < 8; ++i) object += static_cast<char>(crc >> (8 * i));
  return object;
}

std::vector<std::string> ListOf(const RestoredValue& value) {
  std::vector<std::string> out;
  static_cast<const ListValue&>(*value.container).ForEach(false, [&](size_t, std::string_view e) {
    out.emplace_back(e);
    return true;
  });
  return out;
}

std::vector<std::pair<std::string, double>> ZSetOf(const RestoredValue& value) {
  std::vector<std::pair<std::string, double>> out;
  const auto& zset = static_cast<const ZSetValue&>(*value.container);
  zset.Walk(0, false, [&](std::string_view member, double score) {
    out.emplace_back(member, score);
    return true;
  });
  return out;
}

// A container's elements as text, in its order for a list or a sorted
// set, sorted for a hash or a set (whose table order may differ).
std::vector<std::string> Contents(const Container& container) {
  std::vector<std::string> out;
  switch (container.type()) {
    case ValueType::kList:
      static_cast<const ListValue&>(container).ForEach(false, [&](size_t, std::string_view e) {
        out.emplace_back(e);
        return true;
      });
      return out;
    case ValueType::kZSet:
      static_cast<const ZSetValue&>(container).Walk(0, false, [&](std::string_view m, double s) {
        out.push_back(std::string(m) + "=" + std::to_string(s));
        return true;
      });
      return out;
    case ValueType::kHash:
      static_cast<const HashValue&>(container).ForEach([&](std::string_view f, std::string_view v) {
        out.push_back(std::string(f) + "=" + std::string(v));
      });
      break;
    case ValueType::kSet:
      static_cast<const SetValue&>(container).ForEach(
          [&](std::string_view m) { out.emplace_back(m); });
      break;
    case ValueType::kString:
      break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

RestoredValue Read(const std::string& payload) {
  RestoredValue value;
  EXPECT_EQ(ReadPayload(payload, &value), PayloadStatus::kOk);
  return value;
}

TEST(DumpPayload, Crc64IsRedisCrc64) {
  // crc64.c's own test: crc64(0, "123456789", 9) == 0xe9c6d914c4b8d9ca.
  EXPECT_EQ(Crc64(0, "123456789"), 0xe9c6d914c4b8d9caULL);
}

TEST(DumpPayload, ReadsWhatRedis70Dumps) {
  // redis-server 7.0.15: RPUSH l a 7 -300 70000 5000000000 (a quicklist of one listpack).
  RestoredValue list = Read(FromHex(
      "1201021e1e00000005008161020701ded402f270110104f400f2052a0100000009ff0a003cbfe366ed0d454b"));
  ASSERT_NE(list.container, nullptr);
  EXPECT_EQ(ListOf(list), (std::vector<std::string>{"a", "7", "-300", "70000", "5000000000"}));
  // HSET h field value n 12 (a listpack hash).
  RestoredValue hash =
      Read(FromHex("101a1a0000000400856669656c64068576616c756506816e020c01ff0a0021ac5d3396e47ba9"));
  ASSERT_NE(hash.container, nullptr);
  const auto& h = static_cast<const HashValue&>(*hash.container);
  EXPECT_EQ(h.Size(), 2u);
  EXPECT_EQ(h.Get("field"), "value");
  EXPECT_EQ(h.Get("n"), "12");
  // ZADD z 1 one 2.5 two (a listpack sorted set: integer and text scores).
  RestoredValue zset =
      Read(FromHex("1118180000000400836f6e650401018374776f0483322e3504ff0a00e7fbf0d5ac77bbb4"));
  EXPECT_EQ(ZSetOf(zset), (std::vector<std::pair<std::string, double>>{{"one", 1}, {"two", 2.5}}));
  // SADD s 3 -1 100000 (an intset of 4-byte integers).
  RestoredValue set =
      Read(FromHex("0b140400000003000000ffffffff03000000a08601000a000a790cc55b1dc8c5"));
  ASSERT_NE(set.container, nullptr);
  const auto& s = static_cast<const SetValue&>(*set.container);
  EXPECT_EQ(s.Size(), 3u);
  EXPECT_TRUE(s.Contains("-1") && s.Contains("3") && s.Contains("100000"));
  // SET lz "abc" x 30 (LZF-compressed) and SET i 123456 (an integer encoding).
  std::string abc;
  for (int i = 0; i < 30; ++i) abc += "abc";
  EXPECT_EQ(Read(FromHex("00c30b405a0361626361e04b020162630a00238036f9e2d0c780")).string_value,
            abc);
  EXPECT_EQ(Read(FromHex("00c240e201000a00432647f443197283")).string_value, "123456");
}

TEST(DumpPayload, StringsAsRedisWritesThem) {
  // rdbTryIntegerEncoding(): the bytes of redis-server's DUMP of SET i 123456.
  EXPECT_EQ(DumpPayload(EntryView{.value = "123456"}), FromHex("00c240e201000a00432647f443197283"));
  for (const std::string& text :
       std::vector<std::string>{"", "0", "-128", "127", "-32768", "2147483647", "-2147483649",
                                "007", "1.5", std::string(20000, 'q'), std::string("a\0b", 3)}) {
    EXPECT_EQ(Read(DumpPayload(EntryView{.value = text})).string_value, text);
  }
}

TEST(DumpPayload, EveryTypeRoundTripsSmallAndLarge) {
  for (int size : {1, 5, 200, 3000}) {
    SCOPED_TRACE(size);
    ListValue list;
    HashValue hash;
    SetValue ints;
    SetValue words;
    ZSetValue zset;
    for (int i = 0; i < size; ++i) {
      const std::string n = std::to_string(i * 37 - 500);
      list.PushBack(i % 2 ? n : std::string(i % 70, 'x') + n);
      hash.Set("f" + n, std::string(i % 90, 'v'));
      ints.Add(n);
      words.Add("w" + n);
      zset.Insert("m" + n, i % 3 ? i * 0.25 : -i * 1e300);
    }
    for (const Container* container :
         std::initializer_list<const Container*>{&list, &hash, &ints, &words, &zset}) {
      EntryView entry{.container = const_cast<Container*>(container),
                      .form = ValueForm::kContainer};
      RestoredValue back = Read(DumpPayload(entry));
      ASSERT_NE(back.container, nullptr);
      EXPECT_EQ(back.container->type(), container->type());
      EXPECT_EQ(back.container->Size(), container->Size());
      EXPECT_TRUE(Contents(*back.container) == Contents(*container));
    }
  }
}

TEST(DumpPayload, FooterIsChecked) {
  const std::string good = DumpPayload(EntryView{.value = "hello"});
  RestoredValue value;
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x20;
    EXPECT_EQ(ReadPayload(bad, &value), PayloadStatus::kVersionOrChecksum) << "byte " << i;
  }
  std::string newer = "\x00\x05hello";
  newer += '\x0b';  // RDB 11: newer than 7.0 reads
  newer += '\x00';
  const uint64_t crc = Crc64(0, newer);
  for (int i = 0; i < 8; ++i) newer += static_cast<char>(crc >> (8 * i));
  EXPECT_EQ(ReadPayload(newer, &value), PayloadStatus::kVersionOrChecksum);
  EXPECT_EQ(ReadPayload("", &value), PayloadStatus::kVersionOrChecksum);
  EXPECT_EQ(ReadPayload("short", &value), PayloadStatus::kVersionOrChecksum);
}

TEST(DumpPayload, LiesAndUnsupportedTypesAreBadFormat) {
  RestoredValue value;
  const std::vector<std::string> bad = {
      std::string("\x01\x81\x10\x00\x00\x00\x00\x00\x00\x00", 10),  // a list of 2^60 elements
      std::string("\x01\x00", 2),                                   // an empty list
      std::string("\x02\x02\x01x\x01x", 6),                         // a set with a duplicate
      std::string("\x04\x02\x01"
                  "f\x01v\x01"
                  "f\x01w",
                  10),                                         // a hash with a duplicate field
      std::string("\x03\x01\x01m\xfd", 5),                     // a sorted set with a NaN score
      std::string("\x00\xc3\x01\x80\x20\x00\x00\x00\x00", 9),  // LZF claiming 512 MiB
      std::string("\x00\xc3\x02\x05\x20\x00", 6),  // LZF back reference before the start
      std::string("\x0f\x00", 2),                  // a stream
      std::string("\x0d\x00", 2),                  // a ziplist hash (Redis < 7)
      std::string("\x12\x01\x03\x01x", 5),         // a quicklist node of no known kind
      std::string("\x0b\x08\x03\x00\x00\x00\x01\x00\x00\x00", 10),  // an intset of width 3
      std::string("\x00\x05hel", 5),                                // a string shorter than it says
  };
  for (size_t i = 0; i < bad.size(); ++i) {
    EXPECT_EQ(ReadPayload(WithFooter(bad[i]), &value), PayloadStatus::kBadFormat) << "case " << i;
    EXPECT_EQ(value.container, nullptr);
  }
}

TEST(DumpPayload, MutatedPayloadsUnderValidChecksumsDoNoHarm) {
  std::vector<std::string> seeds = {
      FromHex("1201021e1e00000005008161020701ded402f270110104f400f2052a0100000009ff"),
      FromHex("101a1a0000000400856669656c64068576616c756506816e020c01ff"),
      FromHex("1118180000000400836f6e650401018374776f0483322e3504ff"),
      FromHex("0b140400000003000000ffffffff03000000a0860100"),
      FromHex("00c30b405a0361626361e04b02016263"),
  };
  ZSetValue zset;
  zset.Insert("a", 1);
  zset.Insert("b", 2);
  EntryView entry{.container = &zset, .form = ValueForm::kContainer};
  const std::string ours = DumpPayload(entry);
  seeds.push_back(ours.substr(0, ours.size() - 10));
  std::mt19937_64 random(20261204);
  RestoredValue value;
  int accepted = 0;
  for (const std::string& seed : seeds) {
    for (size_t cut = 0; cut < seed.size(); ++cut) {  // every truncation
      ReadPayload(WithFooter(seed.substr(0, cut)), &value);
    }
    for (int round = 0; round < 3000; ++round) {
      std::string mutated = seed;
      const int edits = 1 + static_cast<int>(random() % 4);
      for (int e = 0; e < edits; ++e) {
        mutated[random() % mutated.size()] = static_cast<char>(random());
      }
      if (ReadPayload(WithFooter(mutated), &value) == PayloadStatus::kOk) ++accepted;
    }
  }
  // Some mutations are still valid values (a changed letter); most are not.
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, 3000 * static_cast<int>(seeds.size()));
}

}  // namespace
}  // namespace kvlab
