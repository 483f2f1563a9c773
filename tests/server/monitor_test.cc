// MONITOR: the line's known answers (Redis's time stamp, client address,
// sdscatrepr quoting, redacted secrets), then on every engine a monitor
// that sees another client's commands in order — MULTI, the commands EXEC
// ran, then EXEC; an EXEC refused after a bad command; no CONFIG or CLIENT
// LIST, Redis's admin commands — and stops at RESET. Also under ThreadSanitizer (lines are fed from
// the commands' threads into the monitor's mailbox).
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "server/monitor_feed.h"
#include "tests/server/redis_connection.h"
#include "tests/server/server_test_support.h"

namespace kvlab::test {
namespace {

std::string LineOf(const ClientInfo& from, const std::vector<std::string_view>& args) {
  return MonitorFeed::Line(1700000000123456, from, args);
}

TEST(MonitorLine, QuotesEscapesAndRedactsAsRedis) {
  ClientInfo tcp;
  tcp.peer_address = "127.0.0.1:50312";
  EXPECT_EQ(LineOf(tcp, {"set", "foo", "bar baz"}),
            "+1700000000.123456 [0 127.0.0.1:50312] \"set\" \"foo\" \"bar baz\"\r\n");
  EXPECT_EQ(LineOf(tcp, {"set", std::string_view("a\"b\\c\n\r\t\a\b\x01\x7f\xe9\0z", 15)}),
            "+1700000000.123456 [0 127.0.0.1:50312] \"set\" "
            "\"a\\\"b\\\\c\\n\\r\\t\\a\\b\\x01\\x7f\\xe9\\x00z\"\r\n");
  EXPECT_EQ(LineOf(tcp, {"AUTH", "user", "secret"}),
            "+1700000000.123456 [0 127.0.0.1:50312] \"AUTH\" \"(redacted)\" \"(redacted)\"\r\n");
  EXPECT_EQ(LineOf(tcp, {"hello", "3", "AUTH", "u", "p", "SETNAME", "n"}),
            "+1700000000.123456 [0 127.0.0.1:50312] \"hello\" \"3\" \"AUTH\" \"(redacted)\" "
            "\"(redacted)\" \"SETNAME\" \"n\"\r\n");
  EXPECT_EQ(LineOf(tcp, {"hello", "3", "AUTH", "u"}),  // no password: nothing to hide
            "+1700000000.123456 [0 127.0.0.1:50312] \"hello\" \"3\" \"AUTH\" \"u\"\r\n");
  ClientInfo unix_client;
  unix_client.is_unix = true;
  unix_client.peer_address = unix_client.local_address = "/tmp/kvlab.sock:0";
  EXPECT_EQ(LineOf(unix_client, {"ping"}),
            "+1700000000.123456 [0 unix:/tmp/kvlab.sock] \"ping\"\r\n");
  EXPECT_EQ(MonitorFeed::Line(5, tcp, std::vector<std::string_view>{"ping"}),
            "+0.000005 [0 127.0.0.1:50312] \"ping\"\r\n");
}

class MonitorTest : public ServerTest {};

// The monitor's next line, matched against `pattern` after its time stamp
// and address.
void ExpectLine(RedisConnection& monitor, const std::string& arguments) {
  const Reply line = monitor.GetReply();
  ASSERT_EQ(line.type, REDIS_REPLY_STATUS) << line.text;
  EXPECT_TRUE(
      std::regex_match(line.text, std::regex(R"(\d+\.\d{6} \[0 127\.0\.0\.1:\d+\] )" + arguments)))
      << line.text;
}

TEST_P(MonitorTest, SeesAnotherClientsCommandsInOrderUntilReset) {
  StartServer({"--io-threads", "2"});
  auto monitor = Connect();
  auto client = Connect();
  ASSERT_TRUE(monitor && client);
  EXPECT_TRUE(monitor->Command({"MONITOR"}).IsStatus("OK"));
  EXPECT_TRUE(client->Command({"SET", "foo", "bar"}).IsStatus("OK"));
  EXPECT_TRUE(client->Command({"GET", "foo"}).IsBulk("bar"));
  EXPECT_TRUE(client->Command({"CONFIG", "GET", "maxmemory"}).type == REDIS_REPLY_ARRAY);
  EXPECT_TRUE(client->Command({"CLIENT", "LIST"}).type != REDIS_REPLY_ERROR);
  EXPECT_TRUE(client->Command({"CLIENT", "ID"}).type == REDIS_REPLY_INTEGER);
  EXPECT_TRUE(client->Command({"MULTI"}).IsStatus("OK"));
  EXPECT_TRUE(client->Command({"SET", "a", "x\n"}).IsStatus("QUEUED"));
  EXPECT_EQ(client->Command({"EXEC"}).elements.size(), 1u);
  EXPECT_TRUE(client->Command({"MULTI"}).IsStatus("OK"));
  EXPECT_TRUE(client->Command({"NOSUCH"}).IsError());
  EXPECT_TRUE(client->Command({"EXEC"}).IsError());
  EXPECT_TRUE(client->Command({"AUTH", "nopass"}).IsError());
  ExpectLine(*monitor, R"re("SET" "foo" "bar")re");
  ExpectLine(*monitor, R"re("GET" "foo")re");
  ExpectLine(*monitor, R"re("CLIENT" "ID")re");  // CONFIG and CLIENT LIST are not shown
  ExpectLine(*monitor, R"re("MULTI")re");
  ExpectLine(*monitor, R"re("SET" "a" "x\\n")re");
  ExpectLine(*monitor, R"re("EXEC")re");
  ExpectLine(*monitor, R"re("MULTI")re");  // the unknown command is not
  ExpectLine(*monitor, R"re("EXEC")re");
  ExpectLine(*monitor, R"re("AUTH" "\(redacted\)")re");
  // RESET ends it: the next reply on the monitor is its PING's.
  EXPECT_TRUE(monitor->Command({"RESET"}).IsStatus("RESET"));
  EXPECT_TRUE(client->Command({"SET", "foo", "again"}).IsStatus("OK"));
  EXPECT_TRUE(monitor->Command({"PING"}).IsStatus("PONG"));
  // A second MONITOR answers nothing, as in Redis.
  EXPECT_TRUE(monitor->Command({"MONITOR"}).IsStatus("OK"));
  monitor->Append({"MONITOR"});
  ASSERT_TRUE(monitor->Flush());
  EXPECT_TRUE(client->Command({"DEL", "foo"}).IsInteger(1));
  ExpectLine(*monitor, R"re("DEL" "foo")re");
}

INSTANTIATE_TEST_SUITE_P(Engines, MonitorTest, ::testing::ValuesIn(ServerEngineKinds()),
                         EngineName);

}  // namespace
}  // namespace kvlab::test
