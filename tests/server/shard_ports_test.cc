// kvlab-server --engine owner --shard-ports BASE as a process: the slot map
// CLUSTER SLOTS/SHARDS/NODES give covers every slot once, on the ports
// BASE + i; a client that sends each key to its owner's port causes no hop
// (INFO remote_ops stays 0) while one that does not hops for about
// (N-1)/N of its keys; a key on the wrong port gets -MOVED to the right
// one; and a command answered after a hop is byte-identical to the same
// command answered inline. Also under ThreadSanitizer (label `tsan`).
#include <map>
#include <string>
#include <vector>

#include "base/hash_slot.h"
#include "tests/server/server_test_support.h"
#include "tests/test_ports.h"

namespace kvlab::test {
namespace {

constexpr unsigned kThreads = 3;

// INFO kvlab runs no engine work (no DBSIZE): reading it adds no hop.
uint64_t KvlabField(RedisConnection& client, const std::string& name) {
  const Reply info = client.Command({"INFO", "kvlab"});
  const std::string prefix = "\n" + name + ":";
  const size_t at = info.text.find(prefix);
  if (at == std::string::npos) {
    ADD_FAILURE() << "no " << name << " in " << info.text;
    return 0;
  }
  return std::stoull(info.text.substr(at + prefix.size()));
}

class ShardPorts : public ::testing::Test {
 protected:
  // The shard ports are BASE .. BASE + kThreads - 1, from below the
  // ephemeral range so the main port (bind to 0) cannot be one of them;
  // another base may do when a parallel test took one.
  void SetUp() override {
    for (int attempt = 0; attempt < 5 && server_ == nullptr; ++attempt) {
      base_ = test_ports::FreeTcpPortRange(kThreads);
      if (base_ == 0) continue;
      const Status started = ServerProcess::Start(
          "owner",
          {"--io-threads", std::to_string(kThreads), "--shard-ports", std::to_string(base_)},
          &server_);
      if (!started.ok()) server_.reset();
    }
    ASSERT_NE(server_, nullptr) << "kvlab-server did not start with --shard-ports";
  }
  std::unique_ptr<RedisConnection> ToShard(unsigned owner) {
    auto client = RedisConnection::Tcp(static_cast<uint16_t>(base_ + owner));
    EXPECT_NE(client, nullptr);
    return client;
  }
  std::unique_ptr<RedisConnection> ToMainPort() { return RedisConnection::Tcp(server_->port()); }

  std::unique_ptr<ServerProcess> server_;
  uint16_t base_ = 0;
};

TEST_F(ShardPorts, SlotMapCoversEverySlotOnceOnTheShardPorts) {
  auto client = ToMainPort();
  ASSERT_NE(client, nullptr);
  const Reply slots = client->Command({"CLUSTER", "SLOTS"});
  ASSERT_EQ(slots.elements.size(), kThreads);
  long long next = 0;
  for (unsigned i = 0; i < kThreads; ++i) {
    const Reply& range = slots.elements[i];
    ASSERT_EQ(range.elements.size(), 3u);
    EXPECT_TRUE(range.elements[0].IsInteger(next));
    next = range.elements[1].integer + 1;
    EXPECT_TRUE(range.elements[2].elements[0].IsBulk("127.0.0.1"));
    EXPECT_TRUE(range.elements[2].elements[1].IsInteger(base_ + i));
  }
  EXPECT_EQ(next, 16384);
  const Reply shards = client->Command({"CLUSTER", "SHARDS"});
  ASSERT_EQ(shards.elements.size(), kThreads);
  EXPECT_TRUE(shards.elements[0].elements[0].IsBulk("slots"));
  EXPECT_NE(client->Command({"CLUSTER", "INFO"}).text.find("cluster_state:ok"), std::string::npos);
  EXPECT_TRUE(client->Command({"CLUSTER", "KEYSLOT", "foo"}).IsInteger(12182));
  EXPECT_TRUE(client->Command({"CLUSTER", "KEYSLOT", "{foo}.bar"}).IsInteger(12182));
  const std::string nodes = client->Command({"CLUSTER", "NODES"}).text;
  EXPECT_NE(nodes.find("127.0.0.1:" + std::to_string(base_ + 2)), std::string::npos) << nodes;
}

TEST_F(ShardPorts, RoutedKeysNeverHopAndUnroutedOnesMostlyDo) {
  std::vector<std::unique_ptr<RedisConnection>> shard;
  for (unsigned i = 0; i < kThreads; ++i) shard.push_back(ToShard(i));
  constexpr int kKeys = 300;
  for (int k = 0; k < kKeys; ++k) {
    const std::string key = "key:" + std::to_string(k);
    RedisConnection& owner = *shard[OwnerOfSlot(HashSlot(key), kThreads)];
    ASSERT_TRUE(owner.Command({"SET", key, "v"}).IsStatus("OK")) << key;
    ASSERT_TRUE(owner.Command({"GET", key}).IsBulk("v")) << key;
  }
  EXPECT_EQ(KvlabField(*shard[0], "remote_ops"), 0u);
  EXPECT_EQ(KvlabField(*shard[0], "local_ops"), 2u * kKeys);

  // One client on the main port: one thread, which owns about 1/N of the keys.
  auto unrouted = ToMainPort();
  ASSERT_NE(unrouted, nullptr);
  for (int k = 0; k < kKeys; ++k) {
    ASSERT_TRUE(unrouted->Command({"GET", "key:" + std::to_string(k)}).IsBulk("v"));
  }
  const uint64_t remote = KvlabField(*unrouted, "remote_ops");
  // N = 3: 2/3 of 300 is 200; the slot ranges are even, the keys nearly so.
  EXPECT_GT(remote, kKeys / 2u);
  EXPECT_LT(remote, kKeys * 5u / 6u);
  EXPECT_EQ(KvlabField(*unrouted, "hops"), remote);  // one command per read: a hop each
}

TEST_F(ShardPorts, KeyOnTheWrongPortIsMovedToItsOwner) {
  const std::string key = "foo";  // slot 12182: owner 2 of 3
  const unsigned owner = OwnerOfSlot(12182, kThreads);
  auto wrong = ToShard((owner + 1) % kThreads);
  ASSERT_NE(wrong, nullptr);
  const Reply moved = wrong->Command({"SET", key, "v"});
  EXPECT_TRUE(moved.IsError());
  EXPECT_EQ(moved.text, "MOVED 12182 127.0.0.1:" + std::to_string(base_ + owner));
  EXPECT_TRUE(ToShard(owner)->Command({"SET", key, "v"}).IsStatus("OK"));
  // Keyless commands and the main port answer anywhere.
  EXPECT_TRUE(wrong->Command({"PING"}).IsStatus("PONG"));
  EXPECT_TRUE(ToMainPort()->Command({"GET", key}).IsBulk("v"));
  // Inside MULTI the redirect dooms the transaction, as in Redis Cluster.
  EXPECT_TRUE(wrong->Command({"MULTI"}).IsStatus("OK"));
  EXPECT_TRUE(wrong->Command({"GET", key}).IsError());
  EXPECT_TRUE(wrong->Command({"EXEC"}).IsError());
}

TEST_F(ShardPorts, AReplyAfterAHopIsByteIdenticalToAnInlineOne) {
  // Keys of one slot ({t}), so one owner; the same pipeline runs once on the
  // owner's shard port (inline) and once on a main-port connection of each
  // thread (another shard port would answer -MOVED), where it hops.
  const std::string owner_key = "{t}a";
  const unsigned owner = OwnerOfSlot(HashSlot(owner_key), kThreads);
  const std::vector<std::vector<std::string>> script = {
      {"SET", "{t}a", "hello"},
      {"GET", "{t}a"},
      {"APPEND", "{t}a", " world"},
      {"STRLEN", "{t}a"},
      {"GETRANGE", "{t}a", "0", "4"},
      {"INCR", "{t}n"},
      {"INCRBYFLOAT", "{t}n", "1.5"},
      {"SET", "{t}b", "x", "NX", "GET"},
      {"MSET", "{t}c", "1", "{t}d", "2"},
      {"MGET", "{t}a", "{t}c", "{t}missing"},
      {"EXPIRE", "{t}a", "1000"},
      {"TTL", "{t}a"},
      {"TYPE", "{t}a"},
      {"OBJECT", "ENCODING", "{t}n"},
      {"RENAME", "{t}c", "{t}e"},
      {"EXISTS", "{t}c", "{t}e"},
      {"GETDEL", "{t}b"},
      {"DEL", "{t}a", "{t}b", "{t}d", "{t}e", "{t}n"},
      {"INCR", "{t}missing2"},
      {"DEL", "{t}missing2"},
  };
  std::string pipeline;
  for (const auto& command : script) pipeline += EncodeCommand(command);
  auto run = [&](uint16_t port) {
    auto raw = RawClient::Tcp("127.0.0.1", port);
    EXPECT_NE(raw, nullptr);
    EXPECT_TRUE(raw->Send(pipeline + EncodeCommand({"PING"})));
    std::string replies;
    while (replies.find("+PONG\r\n") == std::string::npos) {
      const std::string more = raw->ReadSome();
      if (more.empty()) break;
      replies += more;
    }
    return replies;
  };
  auto info = ToMainPort();  // the first main-port connection: thread 0
  ASSERT_NE(info, nullptr);
  const std::string inline_replies = run(static_cast<uint16_t>(base_ + owner));
  EXPECT_EQ(KvlabField(*info, "remote_ops"), 0u);
  // Main-port connections are dealt round-robin: of the next kThreads, all
  // but one run on a thread that does not own {t}.
  std::vector<std::string> main_port_replies;
  for (unsigned i = 0; i < kThreads; ++i) main_port_replies.push_back(run(server_->port()));
  EXPECT_GT(KvlabField(*info, "remote_ops"), 0u);
  for (const std::string& replies : main_port_replies) EXPECT_EQ(replies, inline_replies);
  EXPECT_NE(inline_replies.find("$5\r\nhello\r\n"), std::string::npos) << inline_replies;
}

}  // namespace
}  // namespace kvlab::test
