// The set commands' random stream for the container differential test,
// and a fixed script whose replies must match Redis's byte for byte: the
// orders Redis fixes (an intset's ascending members in SMEMBERS, SSCAN,
// SRANDMEMBER/SPOP of the whole set, SINTER over an intset, SUNION and
// SDIFF results that fit an intset) and the encodings at 512 members,
// also of what SINTERSTORE, SUNIONSTORE, SDIFFSTORE and SMOVE write.
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
    static const char* const edges[] = {"01",
                                        "-0",
                                        "+1",
                                        " 1",
                                        "9223372036854775807",
                                        "-9223372036854775808",
                                        "9223372036854775808",
                                        "1.0",
                                        ""};
    return edges[s.Uniform(0, 8)];
  }
  return s.Element();
}

void AddMembers(StreamSource& s, std::vector<std::string>& cmd, int low, int high) {
  for (int i = s.Uniform(low, high); i > 0; --i) cmd.push_back(Member(s));
}

// SINTERCARD numkeys key... [LIMIT n], with numkeys and LIMIT valid or
// not: zero, negative, not a number, more keys than arguments, a LIMIT
// without its value, an unknown option.
std::vector<std::string> NextSinterCard(StreamSource& s, const std::string& k) {
  std::vector<std::string> cmd = {s.Case("sintercard")};
  const int keys = s.Uniform(1, 3);
  static const char* const bad_numkeys[] = {"0", "-1", "x", "4", "9223372036854775808"};
  cmd.push_back(s.OneIn(6) ? bad_numkeys[s.Uniform(0, 4)] : std::to_string(keys));
  cmd.push_back(k);
  for (int i = 1; i < keys; ++i) cmd.push_back(s.Key());
  if (s.OneIn(2)) {
    static const char* const limits[] = {"0", "1", "2", "3", "-1", "x", "100"};
    cmd.push_back(s.OneIn(8) ? "other" : s.Case("limit"));
    if (!s.OneIn(8)) cmd.push_back(limits[s.Uniform(0, 6)]);
  }
  return cmd;
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
    static const char* const counts[] = {"0",
                                         "1",
                                         "2",
                                         "5",
                                         "100000",
                                         "-1",
                                         "x",
                                         "1.5",
                                         "-9223372036854775808",
                                         "9223372036854775807"};
    switch (s.Uniform(0, 3)) {
      case 0:
        return {s.Case("spop"), k};
      case 1:
        return {s.Case("spop"), k, counts[s.Uniform(0, 9)], "extra"};
      default:
        return {s.Case("spop"), k, counts[s.Uniform(0, 9)]};
    }
  }
  if (pick < 67) {
    static const char* const counts[] = {
        "0", "1", "3", "-3", "-1", "100000", "x", "-9223372036854775808", "-9223372036854775807x",
        "2"};
    switch (s.Uniform(0, 3)) {
      case 0:
        return {s.Case("srandmember"), k};
      case 1:
        return {s.Case("srandmember"), k, "1", "extra"};
      default:
        return {s.Case("srandmember"), k, counts[s.Uniform(0, 9)]};
    }
  }
  if (pick < 74) {
    return s.Scan("sscan", k, "1*", "*");
  }
  if (pick < 84) {
    static const char* const names[] = {"sinter", "sunion", "sdiff"};
    std::vector<std::string> cmd = {s.Case(names[s.Uniform(0, 2)]), k};
    for (int i = s.Uniform(0, 3); i > 0; --i) cmd.push_back(s.Key());
    return cmd;
  }
  if (pick < 89) {
    // The destination is often a source too, or of another type.
    static const char* const names[] = {"sinterstore", "sunionstore", "sdiffstore"};
    std::vector<std::string> cmd = {s.Case(names[s.Uniform(0, 2)]), s.Key(), k};
    for (int i = s.Uniform(0, 3); i > 0; --i) cmd.push_back(s.Key());
    return cmd;
  }
  if (pick < 92) return {s.Case("smove"), k, s.Key(), Member(s)};
  if (pick < 95) return NextSinterCard(s, k);
  // Wrong arities.
  return s.OneOf({{"sadd", k},
                  {"srem", k},
                  {"scard"},
                  {"sismember", k},
                  {"smembers", k, "x"},
                  {"sinter"},
                  {"spop"},
                  {"sscan", k},
                  {"sinterstore", k},
                  {"sunionstore"},
                  {"sdiffstore", k},
                  {"smove", k, "k2"},
                  {"smove", k, "k2", "1", "2"},
                  {"sintercard", "1"}});
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
      // The STOREs: the result's encoding (SDIFFSTORE's algorithm 2 builds
      // a hashtable from a first set that does not fit an intset), an
      // empty result deleting the destination, any type overwritten, the
      // TTL dropped, a WRONGTYPE source leaving the destination alone.
      {"SADD", "x1", "1", "2", "3", "4"},
      {"SADD", "x2", "3", "4", "5", "a"},
      {"SINTERSTORE", "dst", "x1", "x2"},
      {"OBJECT", "ENCODING", "dst"},
      {"SMEMBERS", "dst"},
      {"SUNIONSTORE", "dst", "x1", "x2"},
      {"OBJECT", "ENCODING", "dst"},
      {"SCARD", "dst"},
      {"SDIFFSTORE", "dst", "x1", "x2"},
      {"OBJECT", "ENCODING", "dst"},
      {"SMEMBERS", "dst"},
      {"SDIFFSTORE", "dst", "big", "x1"},
      {"OBJECT", "ENCODING", "dst"},
      {"SDIFFSTORE", "dst", "i", "big", "x1", "x2"},
      {"OBJECT", "ENCODING", "dst"},
      {"SCARD", "dst"},
      {"SUNIONSTORE", "dst", "big", "i"},
      {"OBJECT", "ENCODING", "dst"},
      {"SINTERSTORE", "dst", "x1", "nokey"},
      {"EXISTS", "dst"},
      {"SINTERSTORE", "dst", "x1", "nokey"},
      {"SET", "dst", "v", "EX", "100"},
      {"SUNIONSTORE", "dst", "x1"},
      {"TTL", "dst"},
      {"TYPE", "dst"},
      {"SUNIONSTORE", "dst", "x1", "str"},
      {"SMEMBERS", "dst"},
      {"SDIFFSTORE", "dst", "str", "nokey"},
      {"SINTERSTORE", "dst", "nokey", "str"},
      {"SINTERSTORE", "x1", "x1", "x2"},
      {"SMEMBERS", "x1"},
      {"SDIFFSTORE", "x2", "x2", "x2"},
      {"EXISTS", "x2"},
      // An intset as a sorted-set source: its members are rendered one at
      // a time, and each must stay a member of its own (seed 2 of the
      // container differential found 8 and 9 of {-1, 8, 9} merged).
      {"SADD", "ints", "-1", "9", "8"},
      {"ZUNIONSTORE", "zu", "1", "ints"},
      {"ZRANGE", "zu", "0", "-1", "WITHSCORES"},
      {"ZUNIONSTORE", "zu", "2", "nokey", "ints", "WEIGHTS", "0", "inf"},
      {"ZRANGE", "zu", "0", "-1", "WITHSCORES"},
      {"ZUNION", "2", "ints", "ints", "WITHSCORES"},
      {"ZINTER", "2", "ints", "ints", "WITHSCORES"},
      {"ZDIFF", "2", "ints", "nokey", "WITHSCORES"},
      // SMOVE: to a new key (its encoding chosen by the member), between
      // encodings, the last member taking its key along, the same key,
      // a missing source before the destination's type.
      {"SADD", "mv", "1", "2", "z"},
      {"SMOVE", "mv", "new", "1"},
      {"OBJECT", "ENCODING", "new"},
      {"SMOVE", "mv", "new", "z"},
      {"OBJECT", "ENCODING", "new"},
      {"SMOVE", "mv", "new", "nope"},
      {"SMOVE", "mv", "mv", "2"},
      {"SMOVE", "mv", "mv", "1"},
      {"SMOVE", "mv", "new", "2"},
      {"EXISTS", "mv"},
      {"SMOVE", "new", "new", "1"},
      {"SMOVE", "new", "str", "1"},
      {"SMOVE", "str", "new", "1"},
      {"SMOVE", "nokey", "str", "1"},
      {"SMOVE", "nokey", "nokey", "1"},
      {"SMOVE", "new", "new2", "1"},
      {"SMOVE", "new2", "new", "1"},
      {"SCARD", "new"},
      // SINTERCARD: the limit, and every argument error before WRONGTYPE.
      {"SINTERCARD", "2", "i", "big"},
      {"SINTERCARD", "2", "i", "big", "LIMIT", "10"},
      {"SINTERCARD", "2", "i", "big", "limit", "0"},
      {"SINTERCARD", "1", "nokey"},
      {"SINTERCARD", "2", "i", "str"},
      {"SINTERCARD", "0", "i"},
      {"SINTERCARD", "x", "i"},
      {"SINTERCARD", "3", "i", "big"},
      {"SINTERCARD", "1", "i", "LIMIT"},
      {"SINTERCARD", "1", "i", "LIMIT", "-1"},
      {"SINTERCARD", "1", "i", "LIMIT", "x"},
      {"SINTERCARD", "1", "i", "OTHER", "1"},
      {"SINTERCARD", "1", "str", "LIMIT", "-1"},
      {"MULTI"},
      {"SADD", "m", "3", "1"},
      // A failed STORE's sources are not the next one's.
      {"SUNIONSTORE", "mu", "b", "str"},
      {"SUNIONSTORE", "mi", "m"},
      {"SMOVE", "m", "str", "3"},
      {"SMOVE", "m", "mi", "1"},
      {"SUNION", "m", "b"},
      {"SREM", "m", "3", "1"},
      {"SINTER", "m", "b"},
      {"EXEC"},
      {"SMEMBERS", "mi"},
      {"EXISTS", "mu"},
      // The same for the sorted-set algebra (seed 6 of the container
      // differential: ZDIFF's three sources were counted as ZINTER's, whose
      // WEIGHTS then read as a syntax error).
      {"MULTI"},
      {"ZDIFF", "3", "zlex", "ints", "ints", "WITHSCORES"},
      {"ZINTER", "2", "ints", "nokey", "WEIGHTS", "3", "1e300"},
      {"ZUNIONSTORE", "zs", "2", "ints", "str"},
      {"ZUNION", "1", "ints", "WEIGHTS", "2", "WITHSCORES"},
      {"ZINTERCARD", "2", "ints", "ints"},
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
