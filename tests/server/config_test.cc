// CONFIG GET/SET over a Session on every engine, with redis-server 7.0.15's
// replies (checked by hand when written): the parameters kvlab applies
// (the compact-encoding limits change OBJECT ENCODING at the next write;
// maxmemory refuses writes at once), the ones it records and reports back,
// the ones fixed at start, Redis's validation errors, and all-or-nothing
// SETs of several parameters.
#include <gtest/gtest.h>

#include "engines/containers/encoding_limits.h"
#include "tests/server/session_driver.h"

namespace kvlab::test {
namespace {

class ConfigTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    kvlab_ = MakeEngineUnderTest(GetParam(), settings_);
    ASSERT_TRUE(kvlab_.engine);
    driver_ = std::make_unique<SessionDriver>(*kvlab_.context);
  }
  // The limits are the process's: leave Redis's defaults for the next test.
  void TearDown() override { CompactEncodingLimits().Reset(); }
  std::string Feed(std::string_view bytes) { return driver_->Feed(bytes); }

  ServerSettings settings_;
  EngineUnderTest kvlab_;
  std::unique_ptr<SessionDriver> driver_;
};

std::string Bulk(std::string_view text) {
  return "$" + std::to_string(text.size()) + "\r\n" + std::string(text) + "\r\n";
}
std::string Pair(std::string_view name, std::string_view value) {
  return "*2\r\n" + Bulk(name) + Bulk(value);
}
std::string Failed(std::string_view name, std::string_view why) {
  return "-ERR CONFIG SET failed (possibly related to argument '" + std::string(name) + "') - " +
         std::string(why) + "\r\n";
}

TEST_P(ConfigTest, EncodingLimitsChangeTheNextWritesEncoding) {
  EXPECT_EQ(Feed("CONFIG SET hash-max-ziplist-entries 2 zset-max-listpack-entries 2\r\n"
                 "HSET h a 1 b 2\r\nOBJECT ENCODING h\r\nHSET h c 3\r\nOBJECT ENCODING h\r\n"
                 "ZADD z 1 a 2 b\r\nOBJECT ENCODING z\r\nZADD z 3 c\r\nOBJECT ENCODING z\r\n"),
            "+OK\r\n:2\r\n" + Bulk("listpack") + ":1\r\n" + Bulk("hashtable") + ":2\r\n" +
                Bulk("listpack") + ":1\r\n" + Bulk("skiplist"));
  EXPECT_EQ(Feed("CONFIG SET hash-max-listpack-value 4 zset-max-ziplist-value 4 "
                 "set-max-intset-entries 2\r\n"
                 "HSET h2 f 1234\r\nOBJECT ENCODING h2\r\nHSET h2 g 12345\r\nOBJECT ENCODING h2\r\n"
                 "ZADD z2 1 abcde\r\nOBJECT ENCODING z2\r\n"
                 "SADD s 1 2\r\nOBJECT ENCODING s\r\nSADD s 3\r\nOBJECT ENCODING s\r\n"),
            "+OK\r\n:1\r\n" + Bulk("listpack") + ":1\r\n" + Bulk("hashtable") + ":1\r\n" +
                Bulk("skiplist") + ":2\r\n" + Bulk("intset") + ":1\r\n" + Bulk("hashtable"));
  // A value never converts back when the limit grows again, as in Redis.
  EXPECT_EQ(Feed("CONFIG SET hash-max-ziplist-entries 512\r\nOBJECT ENCODING h\r\n"
                 "CONFIG GET hash-max-listpack-entries\r\n"),
            "+OK\r\n" + Bulk("hashtable") + Pair("hash-max-listpack-entries", "512"));
}

TEST_P(ConfigTest, MaxmemoryRefusesWritesAtOnceAndZeroLiftsIt) {
  EXPECT_EQ(Feed("SET k v\r\nCONFIG SET maxmemory 1\r\nSET k2 v\r\nGET k\r\nDEL k\r\n"
                 "CONFIG SET maxmemory 0\r\nSET k2 v\r\nCONFIG GET maxmemory\r\n"),
            "+OK\r\n+OK\r\n-OOM command not allowed when used memory > 'maxmemory'.\r\n" +
                Bulk("v") + ":1\r\n+OK\r\n+OK\r\n" + Pair("maxmemory", "0"));
  // multi.tcl: a refusal while queueing dooms the EXEC.
  EXPECT_EQ(Feed("MULTI\r\nSET a 1\r\n"), "+OK\r\n+QUEUED\r\n");
  SessionDriver other(*kvlab_.context, 2);
  EXPECT_EQ(other.Feed("CONFIG SET maxmemory 1\r\n"), "+OK\r\n");
  EXPECT_EQ(Feed("LPUSH l x\r\n"), "-OOM command not allowed when used memory > 'maxmemory'.\r\n");
  EXPECT_EQ(other.Feed("CONFIG SET maxmemory 0\r\n"), "+OK\r\n");
  EXPECT_EQ(Feed("SET b 2\r\nEXEC\r\nEXISTS a\r\n"),
            "+QUEUED\r\n-EXECABORT Transaction discarded because of previous errors.\r\n:0\r\n");
}

TEST_P(ConfigTest, RecordedParametersAreReportedBack) {
  EXPECT_EQ(Feed("CONFIG SET list-max-ziplist-size 1 list-compress-depth 2 save \"\" "
                 "lua-time-limit 10 replica-read-only YES "
                 "stream-node-max-bytes 1kb\r\n"
                 "CONFIG GET list-max-listpack-size\r\nCONFIG GET LIST-COMPRESS-DEPTH\r\n"
                 "CONFIG GET busy-reply-threshold\r\nCONFIG GET replica-read-only\r\n"
                 "CONFIG GET stream-node-max-bytes\r\n"),
            "+OK\r\n" + Pair("list-max-listpack-size", "1") + Pair("LIST-COMPRESS-DEPTH", "2") +
                Pair("busy-reply-threshold", "10") + Pair("replica-read-only", "yes") +
                Pair("stream-node-max-bytes", "1024"));
}

TEST_P(ConfigTest, GetMatchesNamesAndAliasesAndHidesHiddenFromGlobs) {
  EXPECT_EQ(Feed("CONFIG GET zset-max-*-entries\r\n"),
            "*4\r\n" + Bulk("zset-max-listpack-entries") + Bulk("128") +
                Bulk("zset-max-ziplist-entries") + Bulk("128"));
  EXPECT_EQ(Feed("CONFIG GET rdb-key*\r\nCONFIG GET rdb-key-save-delay\r\n"),
            "*0\r\n" + Pair("rdb-key-save-delay", "0"));
  EXPECT_EQ(Feed("CONFIG GET MAXMEMORY maxmemory\r\n"), "*2\r\n" + Bulk("MAXMEMORY") + Bulk("0"));
}

TEST_P(ConfigTest, SetErrorsAreRedisesAndChangeNothing) {
  EXPECT_EQ(Feed("CONFIG SET maxmemory 1x\r\n"),
            Failed("maxmemory", "argument must be a memory value"));
  EXPECT_EQ(Feed("CONFIG SET hz abc\r\n"),
            Failed("hz", "argument couldn't be parsed into an integer"));
  EXPECT_EQ(Feed("CONFIG SET hash-max-ziplist-entries -1\r\n"),
            Failed("hash-max-ziplist-entries",
                   "argument must be between 0 and 9223372036854775807 inclusive"));
  EXPECT_EQ(Feed("CONFIG SET list-max-listpack-size 2147483648\r\n"),
            Failed("list-max-listpack-size",
                   "argument must be between -2147483648 and 2147483647 inclusive"));
  EXPECT_EQ(Feed("CONFIG SET activerehashing maybe\r\n"),
            Failed("activerehashing", "argument must be 'yes' or 'no'"));
  EXPECT_EQ(Feed("CONFIG SET save 100\r\n"), Failed("save", "Invalid save parameters"));
  EXPECT_EQ(Feed("CONFIG SET hz 5 hz 6\r\n"), Failed("hz", "duplicate parameter"));
  EXPECT_EQ(Feed("CONFIG SET databases 3\r\n"), Failed("databases", "can't set immutable config"));
  EXPECT_EQ(Feed("CONFIG SET hz 5 unknown 1\r\n"),
            "-ERR Unknown option or number of arguments for CONFIG SET - 'unknown'\r\n");
  EXPECT_EQ(Feed("CONFIG SET hz\r\nCONFIG SET hz 1 2\r\n"),
            "-ERR wrong number of arguments for 'config|set' command\r\n-ERR syntax error\r\n");
  // All or nothing: hz stays at its default after each refused SET.
  EXPECT_EQ(Feed("CONFIG SET hz 5 maxmemory bla\r\nCONFIG GET hz\r\n"),
            Failed("maxmemory", "argument must be a memory value") + Pair("hz", "10"));
  // What kvlab cannot do is refused, saying why.
  EXPECT_EQ(Feed("CONFIG SET appendonly yes\r\n"),
            Failed("appendonly", "kvlab-server sets it at start only (a command-line option)"));
  EXPECT_EQ(Feed("CONFIG SET save \"3600 1\"\r\n"),
            Failed("save", "kvlab-server keeps no snapshots (no RDB persistence)"));
  EXPECT_EQ(
      Feed("CONFIG SET maxmemory-policy allkeys-lru\r\n"),
      Failed("maxmemory-policy", "kvlab-server evicts nothing: only noeviction is implemented"));
  EXPECT_EQ(Feed("CONFIG SET port 1\r\n"),
            Failed("port", "kvlab-server sets it at start only (a command-line option)"));
}

TEST_P(ConfigTest, ConfigErrorInsideMultiIsAnExecMemberError) {
  // multi.tcl's "MULTI with config error".
  EXPECT_EQ(Feed("MULTI\r\nSET foo bar\r\nCONFIG SET maxmemory bla\r\nEXEC\r\n"),
            "+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n" +
                Failed("maxmemory", "argument must be a memory value"));
}

TEST_P(ConfigTest, OtherSubcommands) {
  EXPECT_EQ(Feed("CONFIG RESETSTAT\r\nCONFIG REWRITE\r\nCONFIG RESETSTAT x\r\n"),
            "+OK\r\n-ERR The server is running without a config file\r\n"
            "-ERR wrong number of arguments for 'config|resetstat' command\r\n");
  EXPECT_EQ(Feed("CONFIG HELP\r\n").substr(0, 5), "*11\r\n");
}

INSTANTIATE_TEST_SUITE_P(Engines, ConfigTest, ::testing::ValuesIn(AllEngineKinds()),
                         EngineTestName);

}  // namespace
}  // namespace kvlab::test
