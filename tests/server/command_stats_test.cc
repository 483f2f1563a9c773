// INFO commandstats and errorstats on every engine: known counts of calls,
// rejected calls (arity, a refused command in MULTI) and failed calls
// (WRONGTYPE, found only once the engine ran it; an error inside EXEC),
// summed over clients on both I/O threads, error replies counted by code,
// and CONFIG RESETSTAT clearing them. Also under ThreadSanitizer (each
// thread counts in its own block; INFO reads them all).
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/redis_connection.h"
#include "tests/server/server_test_support.h"

namespace kvlab::test {
namespace {

// INFO's "name:value" lines.
std::map<std::string, std::string> InfoFields(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t colon = line.find(':');
    if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
    fields[line.substr(0, colon)] = line.substr(colon + 1);
  }
  return fields;
}

class CommandStatsTest : public ServerTest {};

TEST_P(CommandStatsTest, CountsCallsRejectionsFailuresAndErrorCodes) {
  StartServer({"--io-threads", "2"});
  constexpr int kClients = 4, kSets = 50;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      auto client = Connect();
      ASSERT_NE(client, nullptr);
      const std::string key = "k" + std::to_string(c);
      for (int i = 0; i < kSets; ++i)
        EXPECT_TRUE(client->Command({"SET", key, "v"}).IsStatus("OK"));
      EXPECT_TRUE(client->Command({"GET", key}).IsBulk("v"));
      EXPECT_TRUE(client->Command({"LPUSH", key, "x"}).IsError());  // WRONGTYPE: failed
      EXPECT_TRUE(client->Command({"GET"}).IsError());              // arity: rejected
      EXPECT_TRUE(client->Command({"NOSUCH"}).IsError());           // unknown: an error only
    });
  }
  for (auto& thread : clients) thread.join();
  auto client = Connect();
  ASSERT_NE(client, nullptr);
  // In MULTI: SAVE refused (rejected, dooms it); then EXEC answers EXECABORT.
  EXPECT_TRUE(client->Command({"MULTI"}).IsStatus("OK"));
  EXPECT_TRUE(client->Command({"SAVE"}).IsError());
  EXPECT_TRUE(client->Command({"EXEC"}).IsError());
  // An EXEC that runs: INCR on a string that is no integer fails inside it.
  EXPECT_TRUE(client->Command({"MULTI"}).IsStatus("OK"));
  EXPECT_TRUE(client->Command({"INCR", "k0"}).IsStatus("QUEUED"));
  EXPECT_TRUE(client->Command({"SET", "n", "1"}).IsStatus("QUEUED"));
  EXPECT_EQ(client->Command({"EXEC"}).elements.size(), 2u);

  auto stats = InfoFields(client->Command({"INFO", "commandstats"}).text);
  EXPECT_EQ(stats["cmdstat_set"],
            "calls=" + std::to_string(kClients * kSets + 1) + ",rejected_calls=0,failed_calls=0");
  EXPECT_EQ(stats["cmdstat_get"], "calls=4,rejected_calls=4,failed_calls=0");
  EXPECT_EQ(stats["cmdstat_lpush"], "calls=4,rejected_calls=0,failed_calls=4");
  EXPECT_EQ(stats["cmdstat_save"], "calls=0,rejected_calls=1,failed_calls=0");
  EXPECT_EQ(stats["cmdstat_incr"], "calls=1,rejected_calls=0,failed_calls=1");
  EXPECT_EQ(stats["cmdstat_exec"], "calls=2,rejected_calls=0,failed_calls=1");
  EXPECT_EQ(stats["cmdstat_multi"], "calls=2,rejected_calls=0,failed_calls=0");
  EXPECT_EQ(stats.count("cmdstat_nosuch"), 0u);
  EXPECT_EQ(stats.count("cmdstat_dbsize"), 0u);  // never called: not listed

  // Errors by code: 4 WRONGTYPE; ERR for 4 arity, 4 unknown, SAVE in MULTI
  // and INCR's; EXECABORT.
  auto errors = InfoFields(client->Command({"INFO", "errorstats"}).text);
  EXPECT_EQ(errors["errorstat_WRONGTYPE"], "count=4");
  EXPECT_EQ(errors["errorstat_ERR"], "count=10");
  EXPECT_EQ(errors["errorstat_EXECABORT"], "count=1");
  EXPECT_EQ(InfoFields(client->Command({"INFO", "stats"}).text)["total_error_replies"], "15");

  // Default INFO has errorstats but not commandstats; `all` has both.
  const std::string default_info = client->Command({"INFO"}).text;
  EXPECT_NE(default_info.find("errorstat_ERR"), std::string::npos);
  EXPECT_EQ(default_info.find("cmdstat_"), std::string::npos);
  EXPECT_NE(client->Command({"INFO", "all"}).text.find("rejected_calls"), std::string::npos);

  EXPECT_TRUE(client->Command({"CONFIG", "RESETSTAT"}).IsStatus("OK"));
  stats = InfoFields(client->Command({"INFO", "commandstats"}).text);
  EXPECT_EQ(stats.count("cmdstat_set"), 0u);
  EXPECT_EQ(stats["cmdstat_config"], "calls=1,rejected_calls=0,failed_calls=0");
  EXPECT_TRUE(InfoFields(client->Command({"INFO", "errorstats"}).text).empty());
  EXPECT_TRUE(client->Command({"GET"}).IsError());
  EXPECT_EQ(InfoFields(client->Command({"INFO", "commandstats"}).text)["cmdstat_get"],
            "calls=0,rejected_calls=1,failed_calls=0");
}

INSTANTIATE_TEST_SUITE_P(Engines, CommandStatsTest, ::testing::ValuesIn(ServerEngineKinds()),
                         EngineName);

}  // namespace
}  // namespace kvlab::test
