// Known answers for the HyperLogLog representation (engines/rules/hyperloglog.h),
// each taken from redis-server 7.0.15: the exact bytes of an empty HLL and of
// one holding a, b, c; the estimate and the sparse opcodes of known element
// sets; then the dense and sparse encodings agreeing, the promotion at
// hll-sparse-max-bytes, the cache, and corrupted values detected without a
// read past their end.
#include "engines/rules/hyperloglog.h"

#include <cstdint>
#include <random>
#include <string>

#include <gtest/gtest.h>

namespace kvlab {
namespace {

std::string Header(uint8_t encoding, uint8_t count_top) {
  std::string header("HYLL", 4);
  header.push_back(static_cast<char>(encoding));
  header.append(10, '\0');
  header.push_back(static_cast<char>(count_top));
  return header;
}

std::string WithElements(std::string_view prefix, int first, int count) {
  std::string hll = NewHll();
  for (int i = first; i < first + count; ++i) {
    EXPECT_GE(HllAdd(hll, std::string(prefix) + std::to_string(i)), 0);
  }
  return hll;
}

TEST(HyperLogLog, AnEmptyHllIsRedisBytesExactly) {
  // redis-server: PFADD e; GET e ("PFADD" marks the count stale).
  std::string hll = NewHll();
  HllInvalidateCount(hll);
  EXPECT_EQ(hll, Header(kHllSparse, 0x80) + "\x7f\xff");
  EXPECT_TRUE(LooksLikeHll(hll));
  EXPECT_FALSE(IsDenseHll(hll));
  EXPECT_EQ(HllEstimate(hll), 0u);
}

TEST(HyperLogLog, AddingABCGivesRedisBytes) {
  // redis-server: PFADD h a b c; GET h
  std::string hll = NewHll();
  int updated = 0;
  for (const char* element : {"a", "b", "c"}) updated += HllAdd(hll, element);
  EXPECT_EQ(updated, 3);
  EXPECT_EQ(hll, Header(kHllSparse, 0x80) + "\x60\xf3\x80\x50\xb1\x84\x4b\xfb\x80\x42\x5a");
  EXPECT_EQ(HllEstimate(hll), 3u);
  EXPECT_EQ(HllAdd(hll, "a"), 0);  // no register grows
}

TEST(HyperLogLog, EstimatesAndOpcodesAreRedis) {
  // redis-server: PFADD small x0 .. x99; PFCOUNT -> 99; PFDEBUG DECODE.
  const std::string small = WithElements("x", 0, 100);
  EXPECT_EQ(HllEstimate(small), 99u);
  const std::string decoded = HllDecodeSparse(small);
  EXPECT_EQ(decoded.size(), 1147u);
  EXPECT_EQ(decoded.substr(0, 28), "z:57 v:1,1 Z:101 v:1,1 Z:119");
  EXPECT_EQ(decoded.substr(decoded.size() - 27), "Z:117 v:1,1 Z:81 v:3,1 Z:98");
  // PFADD big 0 .. 9999 -> PFCOUNT 9987, dense at the default 3,000 bytes.
  const std::string big = WithElements("", 0, 10000);
  EXPECT_TRUE(IsDenseHll(big));
  EXPECT_EQ(big.size(), kHllDenseBytes);
  EXPECT_EQ(HllEstimate(big), 9987u);
}

TEST(HyperLogLog, SparseAndDenseAgreeRegisterForRegister) {
  std::mt19937 random(7);
  for (int round = 0; round < 200; ++round) {
    std::string sparse = NewHll(), dense = NewHll();
    ASSERT_TRUE(HllToDense(dense));
    const int elements = static_cast<int>(random() % 300);
    for (int i = 0; i < elements; ++i) {
      const std::string element = std::to_string(random());
      EXPECT_EQ(HllAdd(sparse, element), HllAdd(dense, element));
    }
    ASSERT_FALSE(IsDenseHll(sparse));
    EXPECT_EQ(HllEstimate(sparse), HllEstimate(dense));
    HllRegisters from_sparse{}, from_dense{};
    ASSERT_TRUE(HllMergeInto(from_sparse, sparse));
    ASSERT_TRUE(HllMergeInto(from_dense, dense));
    EXPECT_EQ(from_sparse, from_dense);
    EXPECT_EQ(HllEstimate(from_sparse), HllEstimate(sparse));
    std::string converted = sparse;
    ASSERT_TRUE(HllToDense(converted));
    EXPECT_EQ(HllDenseRegisters(converted), HllDenseRegisters(dense));
  }
}

TEST(HyperLogLog, ASparseValueTurnsDenseAtTheSparseLimit) {
  auto& limit = HllSparseMaxBytesSetting();
  for (int64_t bytes : {int64_t{100}, int64_t{3000}, int64_t{10000}}) {
    limit.store(bytes);
    std::string hll = NewHll();
    int added = 0;
    while (!IsDenseHll(hll)) {
      ASSERT_LE(static_cast<int64_t>(hll.size()), bytes);
      ASSERT_GE(HllAdd(hll, std::to_string(added++)), 0);
    }
    EXPECT_GT(added, bytes / 20) << "promoted early at " << bytes;
  }
  limit.store(kDefaultHllSparseMaxBytes);
}

TEST(HyperLogLog, TheCacheIsLittleEndianWithAStaleBit) {
  std::string hll = WithElements("", 0, 10);
  EXPECT_EQ(HllCachedCount(hll), std::nullopt);  // adds left it stale
  HllStoreCount(hll, 0x0102030405060708ull);
  EXPECT_EQ(hll.substr(8, 8), "\x08\x07\x06\x05\x04\x03\x02\x01");
  EXPECT_EQ(HllCachedCount(hll), 0x0102030405060708ull);
  HllInvalidateCount(hll);
  EXPECT_EQ(static_cast<uint8_t>(hll[15]), 0x81);
  EXPECT_EQ(HllCachedCount(hll), std::nullopt);
}

TEST(HyperLogLog, CorruptedValuesAreDetectedNotReadPast) {
  const std::string good = WithElements("", 0, 3);
  EXPECT_FALSE(LooksLikeHll("HYL"));
  EXPECT_FALSE(LooksLikeHll("0123" + good.substr(4)));                   // magic
  EXPECT_FALSE(LooksLikeHll(good.substr(0, 4) + "x" + good.substr(5)));  // encoding 'x'
  std::string wrong_length = good;
  wrong_length[4] = static_cast<char>(kHllDense);  // dense, but sparse's length
  EXPECT_FALSE(LooksLikeHll(wrong_length));

  // Opcodes past the end of the registers, or short of it.
  std::string tail = good + "hello";
  EXPECT_EQ(HllEstimate(tail), std::nullopt);
  HllRegisters max{};
  EXPECT_FALSE(HllMergeInto(max, tail));
  EXPECT_FALSE(HllToDense(tail));
  // An add finds its register before the garbage and succeeds, as in Redis:
  // PFCOUNT is where a corrupted value is reported.
  const std::string cut = good.substr(0, good.size() - 1);  // an XZERO's second byte gone
  EXPECT_EQ(HllEstimate(cut), std::nullopt);

  // Redis's regression: XZERO runs adding up past 2^32 registers, then a VAL.
  std::string xzeros = Header(kHllSparse, 0);
  for (int i = 0; i < 131072 + 1000; ++i) xzeros += "\x7f\xff";
  xzeros += "\xff";
  EXPECT_EQ(HllEstimate(xzeros), std::nullopt);
  EXPECT_FALSE(HllMergeInto(max, xzeros));
  EXPECT_FALSE(HllToDense(xzeros));
}

// Redis's fuzzing test, here where AddressSanitizer watches: random bytes
// written into valid values, then every reader and writer run on them. Each
// must answer (a value or "corrupted"), never read or write past the value.
TEST(HyperLogLog, RandomlyCorruptedValuesNeverCrash) {
  std::mt19937 random(3);
  int detected = 0;
  for (int round = 0; round < 600; ++round) {
    std::string hll = WithElements("f", round, static_cast<int>(random() % 3000));
    for (int changes = 0; changes < 5; ++changes) {
      hll[random() % hll.size()] = static_cast<char>(random());
      if (random() % 2 == 0) break;
    }
    if (!LooksLikeHll(hll)) continue;
    const std::optional<uint64_t> estimate = HllEstimate(hll);
    if (!estimate) ++detected;
    HllRegisters max{};
    EXPECT_EQ(HllMergeInto(max, hll), estimate.has_value() || IsDenseHll(hll));
    std::string added = hll;
    HllAdd(added, "one more");
    std::string dense = hll;
    HllToDense(dense);
    if (IsDenseHll(hll)) (void)HllDenseRegisters(hll);
    if (!IsDenseHll(hll)) (void)HllDecodeSparse(hll);
  }
  EXPECT_GT(detected, 0) << "no corruption was ever detected";
}

TEST(HyperLogLog, TheSelfTestPasses) { EXPECT_EQ(HllSelfTest(12345), ""); }

}  // namespace
}  // namespace kvlab
