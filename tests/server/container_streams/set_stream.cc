// The set commands' random stream for the container differential test,
// and a fixed script whose replies must match Redis's byte for byte: the
// orders Redis fixes (an intset's ascending members in SMEMBERS, SSCAN,
// SRANDMEMBER/SPOP of the whole set, SINTER over an intset, SUNION and
// SDIFF results that fit an intset) and the encodings at 512 members.
#include <gtest/gtest.h>

#include "tests/server/container_streams/container_stream.h"
#include "tests/server/redis_reference.h"
#include "tests/server/resp_reply_reader.h"
#include "tests/server/resp_text.h"
#include "tests/server/session_driver.h"

namespace kvlab::test {
namespace {


// A member: mostly small integers (so sets stay intsets), sometimes what
// string2ll() refuses ("01", "-0", "+1", past int64), the int64 limits, or
// any element (strings, binary, long).
std::string Member(StreamSource& s) {
  const int pick = s.Uniform(0, 19);
  if (pick < 11) return std::to_string(s.Uniform(-5, 30));
  if (pick < 13) {
    static const char* const edges[] = {"01", "-0", "+1", " 1", "9223372036854775807",
                                        "-9223372036854775808", "9223372036854775808", "1.0", ""};
    return edges[s.Uniform(0, 8)];
  }
  return s.Element();
}

void AddMembers(StreamSource& s, std::vector<std::string>& cmd, int low, int high) {
  for (int i = s.Uniform(low, high); i > 0; --i) cmd.push_back(Member(s));
}

std::vector<std::string> NextSet(StreamSource& s) {
  const std::string k = s.Key();
  const int pick = s.Uniform(0, 99);
  if (pick < 20) {
    std::vector<std::string> cmd = {s.Case("sadd"), k};
    if (s.OneIn(12)) {
      // Integers around set-max-intset-entries (512): intset or hashtable,
      // and sometimes one string on top.
      const int base = s.Uniform(0, 2) * 1000 - 500;
      const int count = s.Uniform(505, 520);
      for (int i = 0; i < count; ++i) cmd.push_back(std::to_string(base + i));
      if (s.OneIn(3)) cmd.push_back("m" + std::to_string(s.Uniform(0, 3)));
      return cmd;
    }
    AddMembers(s, cmd, 1, 5);
    return cmd;
  }
  if (pick < 30) {
    std::vector<std::string> cmd = {s.Case("srem"), k};
    AddMembers(s, cmd, 1, 4);
    return cmd;
  }
  if (pick < 35) return {s.Case("scard"), k};
  if (pick < 42) return {s.Case("sismember"), k, Member(s)};
  if (pick < 47) {
    std::vector<std::string> cmd = {s.Case("smismember"), k};
    AddMembers(s, cmd, 1, 4);
    return cmd;
  }
  if (pick < 54) return {s.Case("smembers"), k};
  if (pick < 60) {
    static const char* const counts[] = {"0", "1", "2", "5", "100000", "-1", "x", "1.5",
                                         "-9223372036854775808", "9223372036854775807"};
    switch (s.Uniform(0, 3)) {
      case 0: return {s.Case("spop"), k};
      case 1: return {s.Case("spop"), k, counts[s.Uniform(0, 9)], "extra"};
      default: return {s.Case("spop"), k, counts[s.Uniform(0, 9)]};
    }
  }
  if (pick < 67) {
    static const char* const counts[] = {"0", "1", "3", "-3", "-1", "100000", "x",
                                         "-9223372036854775808", "-9223372036854775807x", "2"};
    switch (s.Uniform(0, 3)) {
      case 0: return {s.Case("srandmember"), k};
      case 1: return {s.Case("srandmember"), k, "1", "extra"};
      default: return {s.Case("srandmember"), k, counts[s.Uniform(0, 9)]};
    }
  }
  if (pick < 74) {
    return s.Scan("sscan", k, "1*", "*");
  }
  if (pick < 94) {
    static const char* const names[] = {"sinter", "sunion", "sdiff"};
    std::vector<std::string> cmd = {s.Case(names[s.Uniform(0, 2)]), k};
    for (int i = s.Uniform(0, 3); i > 0; --i) cmd.push_back(s.Key());
    return cmd;
  }
  // Wrong arities.
  return s.OneOf({{"sadd", k}, {"srem", k}, {"scard"}, {"sismember", k}, {"smembers", k, "x"},
                   {"sinter"}, {"spop"}, {"sscan", k}});
}

bool IsWholeCount(const std::vector<std::string>& command) {
  return command.size() == 3 && command[2] == "100000";
}

// Small sets are intsets, answered in ascending order by both; a
// hashtable's order is its own, and a random pick is compared by shape.
ReplyMatch MatchSet(const std::vector<std::string>& command) {
  const std::string name = Lower(command[0]);
  if (name == "smembers" || name == "sinter" || name == "sunion" || name == "sdiff") {
    return ReplyMatch::kUnorderedElements;
  }
  if (name == "sscan") return ReplyMatch::kScanUnordered;
  if (name == "spop" || name == "srandmember") {
    if (command.size() > 3) return ReplyMatch::kExact;  // syntax error
    if (command.size() == 3) {
      if (IsWholeCount(command)) return ReplyMatch::kUnorderedElements;  // the whole set
      const std::string& count = command[2];
      if (count == "0" || count == "x" || count == "1.5" || (count[0] == '-' && name == "spop") ||
          count == "-9223372036854775808" || count == "-9223372036854775807x") {
        return ReplyMatch::kExact;  // errors and empty answers
      }
    }
    return ReplyMatch::kSameShape;
  }
  return ReplyMatch::kExact;
}

// SPOP's random picks leave the two servers' sets different: the key is
// deleted on both right after.
std::vector<std::string> AfterSet(const std::vector<std::string>& command) {
  if (Lower(command[0]) == "spop" && command.size() >= 2 && command.size() <= 3 &&
      MatchSet(command) == ReplyMatch::kSameShape) {
    return {"DEL", command[1]};
  }
  return {};
}

}  // namespace

ContainerStream SetStream() { return {NextSet, MatchSet, AfterSet}; }

namespace {

std::vector<std::string> Range(std::vector<std::string> head, int from, int to) {
  for (int i = from; i <= to; ++i) head.push_back(std::to_string(i));
  return head;
}

class SetScriptTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SetScriptTest, IntsetOrdersAndEncodingsMatchRedisExactly) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  EngineUnderTest kvlab = MakeEngineUnderTest(GetParam());
  ASSERT_TRUE(kvlab.engine);
  SessionDriver driver(*kvlab.context);
  const std::vector<std::vector<std::string>> script = {
      {"FLUSHALL"},
      {"SADD", "a", "30", "-7", "5", "9223372036854775807", "-9223372036854775808", "0", "5"},
      {"OBJECT", "ENCODING", "a"},
      {"SMEMBERS", "a"},
      {"SSCAN", "a", "0"},
      {"SSCAN", "a", "7", "MATCH", "*0*", "COUNT", "1"},
      {"SRANDMEMBER", "a", "100"},
      {"SADD", "b", "5", "100", "30", "-7", "x"},
      {"OBJECT", "ENCODING", "b"},
      {"SREM", "b", "x"},
      {"OBJECT", "ENCODING", "b"},
      {"SADD", "d", "1000", "30", "5"},
      {"SINTER", "a", "d"},
      {"SINTER", "d", "a", "b"},
      {"SINTER", "b", "a", "nokey"},
      {"SUNION", "b", "a"},
      {"SDIFF", "a", "b"},
      {"SDIFF", "b", "a"},
      {"SDIFF", "nokey", "a"},
      {"SADD", "c", "01", "-0", "+1", "1"},
      {"OBJECT", "ENCODING", "c"},
      {"SISMEMBER", "c", "01"},
      {"SMISMEMBER", "a", "5", "05", "nope"},
      Range({"SADD", "big"}, 1, 512),
      {"OBJECT", "ENCODING", "big"},
      {"SCARD", "big"},
      {"SMEMBERS", "a"},
      {"SADD", "big", "513"},
      {"OBJECT", "ENCODING", "big"},
      {"SREM", "big", "513", "512"},
      {"OBJECT", "ENCODING", "big"},
      Range({"SADD", "i"}, 400, 700),
      {"SINTER", "i", "big"},
      {"SPOP", "a", "100"},
      {"EXISTS", "a"},
      {"SADD", "s", "1"},
      {"SPOP", "s"},
      {"EXISTS", "s"},
      {"SET", "str", "v"},
      {"SUNION", "b", "str"},
      {"SINTER", "nokey", "str"},
      {"SADD", "str", "1"},
      {"SPOP", "str", "-1"},
      {"SPOP", "str", "0"},
      {"SRANDMEMBER", "str", "x"},
      {"SSCAN", "str", "x"},
      {"SSCAN", "nokey", "0", "COUNT", "0"},
      {"SRANDMEMBER", "nokey", "-5"},
      {"MULTI"},
      {"SADD", "m", "3", "1"},
      {"SUNION", "m", "b"},
      {"SREM", "m", "3", "1"},
      {"SINTER", "m", "b"},
      {"EXEC"},
  };
  for (const auto& command : script) {
    const std::string bytes = Encode(command);
    const std::string expected = redis.Exchange(bytes, 1);
    EXPECT_EQ(Escape(driver.Feed(bytes)), Escape(expected))
        << command[0] << " " << (command.size() > 1 ? command[1] : "");
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, SetScriptTest, ::testing::ValuesIn(AllEngineKinds()),
                         EngineTestName);

}  // namespace

}  // namespace kvlab::test
