#include "harness/workloads/workload.h"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>

#include "harness/clients/reply_check.h"

namespace kvlab::harness {
namespace {

WorkloadSpec Spec(CommandKind command, uint64_t keys) {
  WorkloadSpec spec;
  spec.command = command;
  spec.keys = keys;
  return spec;
}

TEST(WorkloadTest, SingleKeyIncrbyIsTheSeedsCommand) {
  WorkloadGenerator generator(Spec(CommandKind::kIncrby, 1), 0, 0);
  std::string out;
  const RequestInfo info = generator.AppendNext(&out);
  EXPECT_EQ(out, "*3\r\n$6\r\nINCRBY\r\n$5\r\nkey:0\r\n$1\r\n7\r\n");
  EXPECT_EQ(info.expected, ExpectedReply::kInteger);
  EXPECT_EQ(info.increment, 7);
}

TEST(WorkloadTest, LpushPushesAValueOfTheConfiguredSizeAndExpectsTheLength) {
  WorkloadSpec spec = Spec(CommandKind::kLpush, 1);
  ASSERT_TRUE(ParseValueSize("3", &spec).ok());
  spec.key_prefix = "k";
  CommandKind parsed;
  ASSERT_TRUE(ParseCommandKind("lpush", &parsed).ok());
  EXPECT_EQ(parsed, CommandKind::kLpush);
  EXPECT_STREQ(CommandName(CommandKind::kLpush), "lpush");
  WorkloadGenerator generator(spec, 0, 0);
  std::string out;
  const RequestInfo info = generator.AppendNext(&out);
  EXPECT_TRUE(out.starts_with("*3\r\n$5\r\nLPUSH\r\n$2\r\nk0\r\n$3\r\n")) << out;
  EXPECT_EQ(info.expected, ExpectedReply::kInteger);
  EXPECT_EQ(info.increment, 0);
}

TEST(WorkloadTest, SetCarriesAValueOfTheConfiguredSize) {
  WorkloadSpec spec = Spec(CommandKind::kSet, 1);
  ASSERT_TRUE(ParseValueSize("5", &spec).ok());
  spec.key_prefix = "k";
  WorkloadGenerator generator(spec, 0, 0);
  std::string out;
  EXPECT_EQ(generator.AppendNext(&out).expected, ExpectedReply::kOk);
  ASSERT_TRUE(out.starts_with("*3\r\n$3\r\nSET\r\n$2\r\nk0\r\n$5\r\n")) << out;
  EXPECT_EQ(out.size(), std::string("*3\r\n$3\r\nSET\r\n$2\r\nk0\r\n$5\r\n").size() + 5 + 2);
}

TEST(WorkloadTest, GetAndPingEncodings) {
  std::string out;
  WorkloadGenerator get(Spec(CommandKind::kGet, 1), 0, 0);
  EXPECT_EQ(get.AppendNext(&out).expected, ExpectedReply::kBulkOrNil);
  EXPECT_EQ(out, "*2\r\n$3\r\nGET\r\n$5\r\nkey:0\r\n");
  out.clear();
  WorkloadGenerator ping(Spec(CommandKind::kPing, 1), 0, 0);
  EXPECT_EQ(ping.AppendNext(&out).expected, ExpectedReply::kPong);
  EXPECT_EQ(out, "*1\r\n$4\r\nPING\r\n");
}

TEST(WorkloadTest, SameSeedAndStreamRepeatTheSameRequests) {
  WorkloadSpec spec = Spec(CommandKind::kMix, 1000);
  ASSERT_TRUE(ParseValueSize("1-100", &spec).ok());
  WorkloadGenerator a(spec, 3, 0), b(spec, 3, 0), other(spec, 4, 0);
  std::string out_a, out_b, out_other;
  for (int i = 0; i < 100; ++i) {
    a.AppendNext(&out_a);
    b.AppendNext(&out_b);
    other.AppendNext(&out_other);
  }
  EXPECT_EQ(out_a, out_b);
  EXPECT_NE(out_a, out_other);
}

TEST(WorkloadTest, UniformKeysCoverTheKeySpaceAndStayInIt) {
  WorkloadGenerator generator(Spec(CommandKind::kGet, 50), 0, 0);
  std::set<uint64_t> seen;
  for (int i = 0; i < 5000; ++i) {
    const uint64_t index = generator.NextKeyIndex();
    ASSERT_LT(index, 50u);
    seen.insert(index);
  }
  EXPECT_EQ(seen.size(), 50u);
}

TEST(WorkloadTest, SequentialKeysWalkFromTheStartAndWrap) {
  WorkloadSpec spec = Spec(CommandKind::kGet, 5);
  ASSERT_TRUE(ParseKeyDistribution("sequential", &spec).ok());
  WorkloadGenerator generator(spec, 0, 3);
  for (uint64_t expected : {3u, 4u, 0u, 1u, 2u, 3u}) EXPECT_EQ(generator.NextKeyIndex(), expected);
}

TEST(WorkloadTest, ZipfKeysFavourKeyZero) {
  WorkloadSpec spec = Spec(CommandKind::kGet, 1000);
  ASSERT_TRUE(ParseKeyDistribution("zipf:1.2", &spec).ok());
  EXPECT_EQ(KeyDistributionName(spec), "zipf:1.2");
  WorkloadGenerator generator(spec, 0, 0);
  int zero = 0, five_hundred = 0;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t index = generator.NextKeyIndex();
    ASSERT_LT(index, 1000u);
    zero += index == 0;
    five_hundred += index == 500;
  }
  EXPECT_GT(zero, 100 * std::max(five_hundred, 1));
}

TEST(WorkloadTest, MixFollowsTheRatio) {
  WorkloadSpec spec = Spec(CommandKind::kMix, 10);
  ASSERT_TRUE(ParseRatio("1:3", &spec).ok());
  WorkloadGenerator generator(spec, 0, 0);
  constexpr int kDraws = 40000;
  int sets = 0;
  for (int i = 0; i < kDraws; ++i) {
    std::string out;
    sets += generator.AppendNext(&out).expected == ExpectedReply::kOk;
  }
  const double expected = kDraws * 0.25;
  EXPECT_NEAR(sets, expected, 5 * std::sqrt(kDraws * 0.25 * 0.75));
}

TEST(WorkloadTest, ValueSizeRangeIsRespectedAndBothEndsOccur) {
  WorkloadSpec spec = Spec(CommandKind::kSet, 1);
  ASSERT_TRUE(ParseValueSize("3-6", &spec).ok());
  EXPECT_EQ(ValueSizeName(spec), "3-6");
  WorkloadGenerator generator(spec, 0, 0);
  std::set<size_t> sizes;
  for (int i = 0; i < 1000; ++i) sizes.insert(generator.NextValue().size());
  EXPECT_EQ(sizes, (std::set<size_t>{3, 4, 5, 6}));
}

TEST(WorkloadTest, BadSpellingsAreRejectedWithWhatIsAllowed) {
  WorkloadSpec spec;
  CommandKind command;
  Status status = ParseCommandKind("hset", &command);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("get, set, incrby, ping, mix, lpush"), std::string::npos);
  EXPECT_FALSE(ParseKeyDistribution("zipf:", &spec).ok());
  EXPECT_FALSE(ParseKeyDistribution("zipf:0", &spec).ok());
  EXPECT_FALSE(ParseKeyDistribution("zipf:abc", &spec).ok());
  EXPECT_FALSE(ParseKeyDistribution("gauss", &spec).ok());
  EXPECT_FALSE(ParseValueSize("10-5", &spec).ok());
  EXPECT_FALSE(ParseValueSize("-5", &spec).ok());
  EXPECT_FALSE(ParseValueSize("x", &spec).ok());
  EXPECT_FALSE(ParseRatio("1", &spec).ok());
  EXPECT_FALSE(ParseRatio("0:0", &spec).ok());
  EXPECT_FALSE(ParseRatio("a:b", &spec).ok());
}

TEST(WorkloadTest, MultiKeyCommandsNameNKeys) {
  WorkloadSpec spec = Spec(CommandKind::kSet, 1000);
  ASSERT_TRUE(ParseCommand("mset:3", &spec).ok());
  EXPECT_EQ(spec.command, CommandKind::kMset);
  EXPECT_EQ(spec.keys_per_command, 3);
  EXPECT_EQ(CommandLabel(spec), "mset:3");
  ASSERT_TRUE(ParseValueSize("2", &spec).ok());
  WorkloadGenerator mset(spec, 0, 0);
  std::string out;
  EXPECT_EQ(mset.AppendNext(&out).expected, ExpectedReply::kOk);
  ASSERT_TRUE(out.starts_with("*7\r\n$4\r\nMSET\r\n")) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '$'), 7);

  ASSERT_TRUE(ParseCommand("mget:2", &spec).ok());
  WorkloadGenerator mget(spec, 0, 0);
  out.clear();
  EXPECT_EQ(mget.AppendNext(&out).expected, ExpectedReply::kArray);
  EXPECT_TRUE(out.starts_with("*3\r\n$4\r\nMGET\r\n")) << out;
  ASSERT_TRUE(ParseCommand("get", &spec).ok());
  EXPECT_EQ(spec.keys_per_command, 1);
  EXPECT_EQ(CommandLabel(spec), "get");
}

// MULTI, N INCRBYs answered +QUEUED, EXEC answered by an array; then again.
TEST(WorkloadTest, MultiIncrIsATransactionOfNPlusTwoRequests) {
  WorkloadSpec spec = Spec(CommandKind::kSet, 1);
  ASSERT_TRUE(ParseCommand("multi-incr:2", &spec).ok());
  EXPECT_TRUE(NeedsOwnConnection(spec.command));
  WorkloadGenerator generator(spec, 0, 0);
  const std::vector<std::pair<std::string, ExpectedReply>> expected = {
      {"*1\r\n$5\r\nMULTI\r\n", ExpectedReply::kOk},
      {"*3\r\n$6\r\nINCRBY\r\n$5\r\nkey:0\r\n$1\r\n7\r\n", ExpectedReply::kQueued},
      {"*3\r\n$6\r\nINCRBY\r\n$5\r\nkey:0\r\n$1\r\n7\r\n", ExpectedReply::kQueued},
      {"*1\r\n$4\r\nEXEC\r\n", ExpectedReply::kArray}};
  for (int round = 0; round < 2; ++round) {
    for (const auto& [bytes, reply] : expected) {
      std::string out;
      const RequestInfo info = generator.AppendNext(&out);
      EXPECT_EQ(out, bytes);
      EXPECT_EQ(info.expected, reply);
      EXPECT_EQ(info.increment, 0);  // counted by the EXEC's array, not here
    }
  }
}

// A reply of `type` whose text (status, error) is `text`.
redisReply Reply(int type, const char* text = "") {
  redisReply reply{};
  reply.type = type;
  reply.str = const_cast<char*>(text);
  reply.len = std::strlen(text);
  return reply;
}

TEST(ReplyCheckTest, VerdictsByExpectedKind) {
  const redisReply ok = Reply(REDIS_REPLY_STATUS, "OK");
  const redisReply integer = Reply(REDIS_REPLY_INTEGER);
  const redisReply nil = Reply(REDIS_REPLY_NIL);
  const redisReply error = Reply(REDIS_REPLY_ERROR, "ERR");
  EXPECT_EQ(CheckReply(ok, ExpectedReply::kOk), ReplyVerdict::kOk);
  EXPECT_EQ(CheckReply(ok, ExpectedReply::kPong), ReplyVerdict::kWrongType);
  EXPECT_EQ(CheckReply(ok, ExpectedReply::kInteger), ReplyVerdict::kWrongType);
  EXPECT_EQ(CheckReply(integer, ExpectedReply::kInteger), ReplyVerdict::kOk);
  EXPECT_EQ(CheckReply(nil, ExpectedReply::kBulkOrNil), ReplyVerdict::kMiss);
  EXPECT_EQ(CheckReply(nil, ExpectedReply::kInteger), ReplyVerdict::kWrongType);
  EXPECT_EQ(CheckReply(error, ExpectedReply::kInteger), ReplyVerdict::kErrorReply);
  const redisReply queued = Reply(REDIS_REPLY_STATUS, "QUEUED");
  const redisReply array = Reply(REDIS_REPLY_ARRAY);
  EXPECT_EQ(CheckReply(queued, ExpectedReply::kQueued), ReplyVerdict::kOk);
  EXPECT_EQ(CheckReply(ok, ExpectedReply::kQueued), ReplyVerdict::kWrongType);
  EXPECT_EQ(CheckReply(array, ExpectedReply::kArray), ReplyVerdict::kOk);
  EXPECT_EQ(CheckReply(nil, ExpectedReply::kArray), ReplyVerdict::kWrongType);  // an aborted EXEC
}

}  // namespace
}  // namespace kvlab::harness

namespace kvlab::harness {
namespace {

TEST(ValueShapeTest, ParsesTheContainerShapesAndNamesWhatIsAllowed) {
  WorkloadSpec spec;
  ASSERT_TRUE(ParseValueShape("hash:10", &spec).ok());
  EXPECT_EQ(spec.shape.kind, ValueShape::Kind::kHash);
  EXPECT_EQ(spec.shape.elements, 10);
  EXPECT_EQ(ValueShapeName(spec.shape), "hash:10");
  for (const char* text : {"list:100", "set:1", "zset:100000"}) {
    ASSERT_TRUE(ParseValueShape(text, &spec).ok()) << text;
    EXPECT_EQ(ValueShapeName(spec.shape), text);
  }
  ASSERT_TRUE(ParseValueShape("string", &spec).ok());
  EXPECT_EQ(spec.shape.kind, ValueShape::Kind::kString);
  for (const char* text : {"hash", "hash:0", "list:100001", "tree:3", "zset:x", ""}) {
    const Status bad = ParseValueShape(text, &spec);
    EXPECT_FALSE(bad.ok()) << text;
    EXPECT_NE(bad.message().find("allowed: string, hash:N"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace kvlab::harness
