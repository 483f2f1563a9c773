// Keyspace notifications (notify-keyspace-events), with real clients, on
// every engine and on redis-server 7.0.15 (the `redis` case), which must
// pass the same expectations: the events each command raises, their names,
// classes and order, on both the __keyspace@0__ and __keyevent@0__
// channels; and CONFIG GET/SET of the classes as Redis writes them. A
// subscriber reads until a marker published after the commands, so a
// missing event fails the test instead of hanging it.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/server/engine_or_redis.h"
#include "tests/server/redis_connection.h"

namespace kvlab::test {
namespace {

using Strings = std::vector<std::string>;
// One event: its name and its key.
using Event = std::pair<std::string, std::string>;

class KeyspaceEventsTest : public TargetTest {
 protected:
  // Runs `commands` with `classes` on and returns what a PSUBSCRIBE * client
  // received, as "channel message" lines.
  Strings Received(const std::string& classes, const std::vector<Strings>& commands) {
    EXPECT_TRUE(
        client_->Command({"CONFIG", "SET", "notify-keyspace-events", classes}).IsStatus("OK"));
    auto subscriber = RedisConnection::Unix(target_.unix_path());
    EXPECT_EQ(subscriber->Command({"PSUBSCRIBE", "*"}).elements.size(), 3u);
    for (const Strings& command : commands) {
      const Reply reply = client_->Command(command);
      EXPECT_FALSE(reply.IsError()) << command[0] << ": " << reply.text;
    }
    client_->Command({"PUBLISH", "marker", "end"});
    Strings lines;
    for (int i = 0; i < 10'000; ++i) {
      const Reply message = subscriber->GetReply();
      if (!message.ok || message.elements.size() != 4) {
        ADD_FAILURE() << "not a pmessage: " << message.text;
        break;
      }
      if (message.elements[2].text == "marker") break;
      lines.push_back(message.elements[2].text + " " + message.elements[3].text);
    }
    client_->Command({"CONFIG", "SET", "notify-keyspace-events", ""});
    return lines;
  }

  // The lines of `events` with both K and E on.
  static Strings Both(const std::vector<Event>& events) {
    Strings lines;
    for (const auto& [event, key] : events) {
      lines.push_back("__keyspace@0__:" + key + " " + event);
      lines.push_back("__keyevent@0__:" + event + " " + key);
    }
    return lines;
  }
};

TEST_P(KeyspaceEventsTest, StringAndGenericCommands) {
  const Strings lines = Received("KEA", {{"SET", "s", "v"},
                                         {"SET", "s", "v", "EX", "100"},
                                         {"SET", "s", "w", "NX"},  // not set: no event
                                         {"EXPIRE", "s", "100"},
                                         {"PERSIST", "s"},
                                         {"APPEND", "s", "x"},
                                         {"SETRANGE", "s", "0", "y"},
                                         {"INCR", "n"},
                                         {"INCRBY", "n", "2"},
                                         {"DECR", "n"},
                                         {"INCRBYFLOAT", "n", "1.5"},
                                         {"GETSET", "n", "1"},
                                         {"MSET", "a", "1", "b", "2"},
                                         {"RENAME", "a", "c"},
                                         {"RENAMENX", "c", "d"},
                                         {"COPY", "d", "e"},
                                         {"SETEX", "t", "100", "v"},
                                         {"GETEX", "t", "PERSIST"},
                                         {"GETEX", "t", "EX", "50"},
                                         {"EXPIRE", "t", "-1"},  // a deadline passed: deleted
                                         {"GETDEL", "e"},
                                         {"DEL", "b", "d", "missing"},
                                         {"SETBIT", "bits", "3", "1"},
                                         {"PFADD", "hll", "a"},
                                         {"EXPIRE", "missing", "10"}});
  EXPECT_EQ(
      lines,
      Both({{"set", "s"},         {"set", "s"},       {"expire", "s"},      {"expire", "s"},
            {"persist", "s"},     {"append", "s"},    {"setrange", "s"},    {"incrby", "n"},
            {"incrby", "n"},      {"incrby", "n"},    {"incrbyfloat", "n"}, {"set", "n"},
            {"set", "a"},         {"set", "b"},       {"rename_from", "a"}, {"rename_to", "c"},
            {"rename_from", "c"}, {"rename_to", "d"}, {"copy_to", "e"},     {"set", "t"},
            {"expire", "t"},      {"persist", "t"},   {"expire", "t"},      {"del", "t"},
            {"del", "e"},         {"del", "b"},       {"del", "d"},         {"setbit", "bits"},
            {"pfadd", "hll"}}));
}

TEST_P(KeyspaceEventsTest, ContainerCommandsAndEmptiedKeys) {
  const Strings lines =
      Received("KEA", {{"LPUSH", "l", "a", "b", "c"},
                       {"RPUSH", "l", "d"},
                       {"LPUSHX", "l", "e"},
                       {"LSET", "l", "0", "z"},
                       {"LINSERT", "l", "BEFORE", "z", "y"},
                       {"LREM", "l", "0", "y"},
                       {"LTRIM", "l", "0", "2"},
                       {"LMOVE", "l", "l2", "LEFT", "RIGHT"},
                       {"RPOPLPUSH", "l", "l2"},
                       {"LMPOP", "1", "l", "RIGHT"},  // empties l
                       {"HSET", "h", "f", "1"},
                       {"HINCRBY", "h", "f", "2"},
                       {"HINCRBYFLOAT", "h", "f", "0.5"},
                       {"HDEL", "h", "f"},  // empties h
                       {"SADD", "s1", "a", "b"},
                       {"SADD", "s2", "b", "c"},
                       {"SREM", "s1", "x"},  // removes nothing: no event
                       {"SINTERSTORE", "si", "s1", "s2"},
                       {"SUNIONSTORE", "su", "s1", "s2"},
                       {"SDIFFSTORE", "sd", "s1", "s1"},  // empty result, sd missing: nothing
                       {"SPOP", "si"},                    // empties si
                       {"ZADD", "z", "1", "a", "2", "b"},
                       {"ZADD", "z", "INCR", "1", "a"},
                       {"ZINCRBY", "z", "1", "b"},
                       {"ZREM", "z", "a"},
                       {"ZUNIONSTORE", "zu", "1", "z"},
                       {"ZRANGESTORE", "zr", "z", "0", "-1"},
                       {"ZPOPMIN", "zr"},  // empties zr
                       {"ZREMRANGEBYSCORE", "zu", "-inf", "+inf"},
                       {"SORT", "l2", "ALPHA", "STORE", "sorted"},
                       {"SADD", "m1", "a"},
                       {"SMOVE", "m1", "m2", "a"},  // the source emptied
                       {"SADD", "m3", "x"},
                       {"SADD", "m4", "x"},
                       {"SMOVE", "m3", "m4", "x"}});  // the destination has it already
  EXPECT_EQ(lines, Both({{"lpush", "l"},
                         {"rpush", "l"},
                         {"lpush", "l"},
                         {"lset", "l"},
                         {"linsert", "l"},
                         {"lrem", "l"},
                         // LMOVE and RPOPLPUSH: the push first, as Redis's lmoveGenericCommand().
                         {"ltrim", "l"},
                         {"rpush", "l2"},
                         {"lpop", "l"},
                         {"lpush", "l2"},
                         {"rpop", "l"},
                         {"rpop", "l"},
                         {"del", "l"},
                         {"hset", "h"},
                         {"hincrby", "h"},
                         {"hincrbyfloat", "h"},
                         {"hdel", "h"},
                         {"del", "h"},
                         {"sadd", "s1"},
                         {"sadd", "s2"},
                         {"sinterstore", "si"},
                         {"sunionstore", "su"},
                         {"spop", "si"},
                         {"del", "si"},
                         {"zadd", "z"},
                         {"zincr", "z"},
                         {"zincr", "z"},
                         {"zrem", "z"},
                         {"zunionstore", "zu"},
                         {"zrangestore", "zr"},
                         {"zpopmin", "zr"},
                         {"del", "zr"},
                         {"zremrangebyscore", "zu"},
                         {"del", "zu"},
                         {"sortstore", "sorted"},
                         {"sadd", "m1"},
                         {"srem", "m1"},
                         {"del", "m1"},
                         {"sadd", "m2"},
                         {"sadd", "m3"},
                         {"sadd", "m4"},
                         {"srem", "m3"},
                         {"del", "m3"}}));
}

TEST_P(KeyspaceEventsTest, ClassesSelectTheEventsAndChannels) {
  EXPECT_EQ(Received("Kl", {{"SET", "a", "1"}, {"LPUSH", "l", "x"}, {"DEL", "a"}}),
            (Strings{"__keyspace@0__:l lpush"}));
  EXPECT_EQ(Received("Eg", {{"SET", "a", "1"}, {"DEL", "a"}}), (Strings{"__keyevent@0__:del a"}));
  // "new" only with n (A leaves it out, as it leaves out m).
  EXPECT_EQ(Received("En", {{"SET", "a", "1"}, {"SET", "a", "2"}, {"SET", "b", "1"}}),
            (Strings{"__keyevent@0__:new a", "__keyevent@0__:new b"}));
  EXPECT_EQ(Received("KA", {{"SET", "a", "1"}}), (Strings{"__keyspace@0__:a set"}));
  // A class without K or E publishes nothing.
  EXPECT_TRUE(Received("A", {{"SET", "a", "1"}}).empty());
}

TEST_P(KeyspaceEventsTest, ExpiredKeysRaiseExpired) {
  const Strings lines = Received("Ex", {{"SET", "soon", "v", "PX", "20"},
                                        {"SET", "later", "v", "PX", "600000"},
                                        {"SET", "plain", "v"}});
  EXPECT_TRUE(lines.empty());
  EXPECT_TRUE(client_->Command({"CONFIG", "SET", "notify-keyspace-events", "Ex"}).IsStatus("OK"));
  auto subscriber = RedisConnection::Unix(target_.unix_path());
  ASSERT_EQ(subscriber->Command({"SUBSCRIBE", "__keyevent@0__:expired"}).elements.size(), 3u);
  // No command touches it: the active expiry reclaims it.
  const Reply message = subscriber->GetReply();
  ASSERT_EQ(message.elements.size(), 3u) << message.text;
  EXPECT_EQ(message.elements[1].text, "__keyevent@0__:expired");
  EXPECT_EQ(message.elements[2].text, "soon");
}

TEST_P(KeyspaceEventsTest, ConfigReadsBackAsRedisWritesIt) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"gKE", "gKE"}, {"$lshzxeKE", "$lshzxeKE"}, {"KA", "AK"}, {"EA", "AE"},
      {"Ag$", "A"},   {"nmKE", "nKEm"},           {"", ""}};
  for (const auto& [set, read] : cases) {
    ASSERT_TRUE(client_->Command({"CONFIG", "SET", "notify-keyspace-events", set}).IsStatus("OK"));
    const Reply got = client_->Command({"CONFIG", "GET", "notify-keyspace-events"});
    ASSERT_EQ(got.elements.size(), 2u);
    EXPECT_EQ(got.elements[1].text, read) << set;
  }
  const Reply bad = client_->Command({"CONFIG", "SET", "notify-keyspace-events", "KQ"});
  EXPECT_EQ(bad.text,
            "ERR CONFIG SET failed (possibly related to argument 'notify-keyspace-events') - "
            "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.");
}

INSTANTIATE_TEST_SUITE_P(Targets, KeyspaceEventsTest, ::testing::ValuesIn(EnginesAndRedis()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace kvlab::test
