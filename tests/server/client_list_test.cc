// CLIENT LIST and CLIENT KILL across connections on every engine: clients on
// other I/O threads are listed with what they did (name, subscriptions,
// last command), filtered by TYPE and ID, and killed by ID, ADDR, LADDR and
// TYPE — a killed client is gone from the list and its channels at once and
// its socket is closed; with SKIPME no (or the old form) a client kills
// itself after the reply. Also under ThreadSanitizer.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/server/redis_connection.h"
#include "tests/server/server_test_support.h"

namespace kvlab::test {
namespace {

using Fields = std::map<std::string, std::string>;

// CLIENT LIST's lines, each as its fields, by id (in id order: ids are
// given in connection order).
struct ById {
  bool operator()(const std::string& a, const std::string& b) const {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  }
};
std::map<std::string, Fields, ById> ParseClientList(const std::string& text) {
  std::map<std::string, Fields, ById> clients;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    Fields fields;
    std::istringstream words(line);
    std::string word;
    while (words >> word) {
      const size_t eq = word.find('=');
      if (eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
    }
    clients[fields["id"]] = fields;
  }
  return clients;
}

std::string IdOf(RedisConnection& client) {
  return std::to_string(client.Command({"CLIENT", "ID"}).integer);
}

// Whether `client`'s connection was closed by the server: a read that ends
// in EOF or an error rather than a reply.
bool WasClosed(RedisConnection& client) { return !client.Command({"PING"}).ok; }

class ClientListTest : public ServerTest {
 protected:
  void SetUp() override { StartServer({"--io-threads", "2"}); }
};

TEST_P(ClientListTest, ListsEveryConnectionWithWhatItDid) {
  auto lister = Connect();
  auto named = Connect();
  auto subscriber = Connect();
  ASSERT_TRUE(lister && named && subscriber);
  EXPECT_TRUE(named->Command({"CLIENT", "SETNAME", "worker-1"}).IsStatus("OK"));
  EXPECT_TRUE(named->Command({"SET", "k", "v"}).IsStatus("OK"));
  EXPECT_EQ(subscriber->Command({"SUBSCRIBE", "a"}).elements.size(), 3u);
  subscriber->Append({"PSUBSCRIBE", "p*"});
  EXPECT_EQ(subscriber->GetReply().elements.size(), 3u);
  // The subscriber's confirmation is sent after its listing is updated.
  const std::string lister_id = IdOf(*lister), named_id = IdOf(*named);
  auto clients = ParseClientList(lister->Command({"CLIENT", "LIST"}).text);
  ASSERT_EQ(clients.size(), 3u);
  EXPECT_EQ(clients[named_id]["name"], "worker-1");
  EXPECT_EQ(clients[named_id]["cmd"], "client|id");  // CLIENT ID, just now
  EXPECT_EQ(clients[named_id]["flags"], "N");
  EXPECT_EQ(clients[lister_id]["cmd"], "client|list");
  const Fields& sub = std::prev(clients.end())->second;  // the newest id
  EXPECT_EQ(sub.at("flags"), "P");
  EXPECT_EQ(sub.at("sub"), "1");
  EXPECT_EQ(sub.at("psub"), "1");
  EXPECT_EQ(sub.at("cmd"), "psubscribe");
  for (const auto& [id, fields] : clients) {
    EXPECT_EQ(fields.at("user"), "default");
    EXPECT_EQ(fields.at("db"), "0");
    EXPECT_TRUE(fields.count("addr") && fields.count("laddr") && fields.count("age")) << id;
  }
  // As Redis names them: a subcommand in lower case whatever case it was sent
  // in, a bare container by its own name, a command refused for its arity as
  // well; a command or subcommand the server does not know as NULL.
  for (const auto& [command, shown] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"cOnFiG", "gEt", "maxmemory"}, "config|get"},
           {{"CONFIG"}, "config"},
           {{"CLIENT", "BOGUS"}, "NULL"},
           {{"GET"}, "get"},  // refused for its arity, named all the same
           {{"NOSUCH"}, "NULL"},
           {{"GET", "k"}, "get"}}) {
    named->Command(command);
    EXPECT_EQ(ParseClientList(lister->Command({"CLIENT", "LIST"}).text)[named_id]["cmd"], shown)
        << command[0];
  }
  // TYPE and ID filters.
  EXPECT_EQ(ParseClientList(lister->Command({"CLIENT", "LIST", "TYPE", "pubsub"}).text).size(), 1u);
  EXPECT_EQ(ParseClientList(lister->Command({"CLIENT", "LIST", "TYPE", "normal"}).text).size(), 2u);
  EXPECT_TRUE(lister->Command({"CLIENT", "LIST", "TYPE", "master"}).text.empty());
  const auto by_id =
      ParseClientList(lister->Command({"CLIENT", "LIST", "ID", named_id, "999999"}).text);
  ASSERT_EQ(by_id.size(), 1u);
  EXPECT_EQ(by_id.begin()->first, named_id);
  // A closed client leaves the list (its close reaches the server in time).
  named.reset();
  size_t listed = 3;
  for (int attempt = 0; attempt < 500 && listed != 2; ++attempt) {
    listed = ParseClientList(lister->Command({"CLIENT", "LIST"}).text).size();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(listed, 2u);
}

TEST_P(ClientListTest, KillClosesOtherClientsAtOnce) {
  auto killer = Connect();
  auto victim = Connect();
  auto subscriber = Connect();
  ASSERT_TRUE(killer && victim && subscriber);
  EXPECT_EQ(subscriber->Command({"SUBSCRIBE", "news"}).elements.size(), 3u);
  const std::string victim_id = IdOf(*victim);
  EXPECT_TRUE(killer->Command({"CLIENT", "KILL", "ID", victim_id}).IsInteger(1));
  EXPECT_EQ(ParseClientList(killer->Command({"CLIENT", "LIST"}).text).count(victim_id), 0u);
  EXPECT_TRUE(WasClosed(*victim));
  EXPECT_TRUE(killer->Command({"CLIENT", "KILL", "ID", victim_id}).IsInteger(0));
  // By type: the subscriber's channel is left before the reply.
  EXPECT_TRUE(killer->Command({"CLIENT", "KILL", "TYPE", "pubsub"}).IsInteger(1));
  EXPECT_TRUE(killer->Command({"PUBLISH", "news", "x"}).IsInteger(0));
  EXPECT_TRUE(WasClosed(*subscriber));
  // By address, old form and new; the killer stays.
  auto by_addr = Connect();
  const std::string by_addr_id = IdOf(*by_addr);  // a reply: it is listed by now
  const auto listed = ParseClientList(killer->Command({"CLIENT", "LIST"}).text);
  const Fields& fields = listed.at(by_addr_id);
  EXPECT_TRUE(killer->Command({"CLIENT", "KILL", fields.at("addr")}).IsStatus("OK"));
  EXPECT_TRUE(WasClosed(*by_addr));
  EXPECT_TRUE(killer->Command({"CLIENT", "KILL", fields.at("addr")}).IsError());
  auto by_laddr = Connect();
  IdOf(*by_laddr);
  EXPECT_TRUE(killer->Command({"CLIENT", "KILL", "LADDR", fields.at("laddr")}).IsInteger(1));
  EXPECT_TRUE(WasClosed(*by_laddr));
  EXPECT_TRUE(killer->Command({"PING"}).IsStatus("PONG"));
  ExpectHealthy();
}

TEST_P(ClientListTest, KillingABlockedClientClosesIt) {
  auto killer = Connect();
  auto blocked = Connect();
  ASSERT_TRUE(killer && blocked);
  const std::string id = IdOf(*blocked);
  blocked->Append({"BLPOP", "empty-list", "0"});
  ASSERT_TRUE(blocked->Flush());
  bool waiting = false;
  for (int attempt = 0; attempt < 500 && !waiting; ++attempt) {
    waiting =
        killer->Command({"INFO", "clients"}).text.find("blocked_clients:1\r") != std::string::npos;
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(waiting) << "the BLPOP never blocked";
  EXPECT_TRUE(killer->Command({"CLIENT", "KILL", "ID", id}).IsInteger(1));
  EXPECT_FALSE(blocked->GetReply().ok);
  EXPECT_TRUE(killer->Command({"RPUSH", "empty-list", "a"}).IsInteger(1));
  EXPECT_TRUE(killer->Command({"LLEN", "empty-list"}).IsInteger(1));  // nobody took it
}

TEST_P(ClientListTest, SkipmeNoKillsItselfAfterTheReply) {
  auto self = Connect();
  ASSERT_NE(self, nullptr);
  EXPECT_TRUE(self->Command({"CLIENT", "KILL", "ID", IdOf(*self)}).IsInteger(0));  // SKIPME yes
  const Reply reply = self->Command({"CLIENT", "KILL", "ID", IdOf(*self), "SKIPME", "no"});
  EXPECT_TRUE(reply.IsInteger(1)) << reply.text;
  EXPECT_TRUE(WasClosed(*self));
  ExpectHealthy();
}

INSTANTIATE_TEST_SUITE_P(Engines, ClientListTest, ::testing::ValuesIn(ServerEngineKinds()),
                         EngineName);

}  // namespace
}  // namespace kvlab::test
