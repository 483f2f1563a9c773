// kvlab-load's --route slots against kvlab-server --engine owner
// --shard-ports: each strategy (dedicated pipelined, pooled, shared) sends
// every key to its owner's port, so the server hops for none of them; and
// with a slot map that is wrong on purpose, every -MOVED is followed: each
// increment still lands exactly once. Also under ThreadSanitizer.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "base/hash_slot.h"
#include "harness/clients/resp_encoding.h"
#include "harness/clients/server_control.h"
#include "harness/clients/slot_map.h"
#include "tests/harness/strategy_conformance.h"
#include "tests/test_ports.h"
#include "tests/harness/test_server.h"

namespace kvlab::harness {
namespace {

using testing::TestServer;

constexpr int kOwners = 2;
constexpr int kKeys = 64;
constexpr auto kRunFor = std::chrono::milliseconds(300);

uint64_t RemoteOps(const Target& target) {
  std::unique_ptr<ServerControl> control;
  EXPECT_TRUE(ServerControl::Open(target, {}, &control).ok());
  std::string text;
  EXPECT_TRUE(control->Info("kvlab", &text).ok());
  return std::stoull(ParseInfo(text)["remote_ops"]);
}

class RouteSlots : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int attempt = 0; attempt < 5 && (server_ == nullptr || !server_->started()); ++attempt) {
      base_ = test_ports::FreeTcpPortRange(kOwners);
      server_ = std::make_unique<TestServer>(
          testing::ServerKind{"kvlab_owner",
                              {KVLAB_SERVER_PATH, "--engine", "owner", "--io-threads",
                               std::to_string(kOwners), "--shard-ports", std::to_string(base_)}});
    }
    ASSERT_TRUE(server_->started()) << server_->start_error();
  }
  Target ShardPort(int owner) const {
    Target target;
    target.host = "127.0.0.1";
    target.port = base_ + owner;
    return target;
  }
  StrategyOptions Options(int threads) const {
    StrategyOptions options;
    options.target = ShardPort(0);
    options.threads = threads;
    options.connections = threads;
    options.route_slots = true;
    return options;
  }

  std::unique_ptr<TestServer> server_;
  int base_ = 0;
};

TEST(FirstKeyOf, FindsTheKeyOfARespCommand) {
  std::string request;
  AppendCommand(&request, {"SET", "key:12", "value"});
  EXPECT_EQ(FirstKeyOf(request), "key:12");
  request.clear();
  AppendCommand(&request, {"PING"});
  EXPECT_EQ(FirstKeyOf(request), "");
  EXPECT_EQ(FirstKeyOf("garbage"), "");
}

TEST_F(RouteSlots, EveryStrategySendsEachKeyToItsOwner) {
  struct Case {
    ClientKind kind;
    int pipeline;
  };
  for (const Case& c : {Case{ClientKind::kDedicated, 4}, Case{ClientKind::kPooled, 1},
                        Case{ClientKind::kShared, 1}}) {
    SCOPED_TRACE(ClientKindName(c.kind));
    StrategyOptions options = Options(3);
    options.pipeline = c.pipeline;
    auto client = MakeClientStrategy(c.kind, options);
    ASSERT_TRUE(client->Connect().ok());
    const uint64_t before = RemoteOps(server_->tcp_target());
    // The check reads every key back through the main port (hops allowed
    // there: at most one per key) and FLUSHALLs (one hop per other owner).
    testing::ExpectIncrbySumMatchesServer(*client, server_->tcp_target(), 3, kKeys, kRunFor, 1);
    EXPECT_LE(RemoteOps(server_->tcp_target()) - before, uint64_t{kKeys + kOwners});
    EXPECT_EQ(client->moved(), 0);
  }
}

// A map that gives every slot to owner 0 but the last: the keys owner 1
// really holds are MOVED, followed, and the map learns their slots.
TEST_F(RouteSlots, MovedRepliesAreFollowedAndCounted) {
  auto stale_map = [&] {
    std::string slots = "*2\r\n";
    auto range = [&](int first, int last, int port) {
      slots += "*3\r\n:" + std::to_string(first) + "\r\n:" + std::to_string(last) +
               "\r\n*2\r\n$9\r\n127.0.0.1\r\n:" + std::to_string(port) + "\r\n";
    };
    range(0, kHashSlots - 2, base_);
    range(kHashSlots - 1, kHashSlots - 1, base_ + 1);
    redisReader* reader = redisReaderCreate();
    void* parsed = nullptr;
    std::unique_ptr<SlotMap> map;
    if (redisReaderFeed(reader, slots.data(), slots.size()) == REDIS_OK &&
        redisReaderGetReply(reader, &parsed) == REDIS_OK && parsed != nullptr) {
      const Status built =
          SlotMap::FromReply(*static_cast<redisReply*>(parsed), ShardPort(0), &map);
      EXPECT_TRUE(built.ok()) << built.message();
      freeReplyObject(parsed);
    }
    redisReaderFree(reader);
    return std::shared_ptr<SlotMap>(std::move(map));
  };
  for (ClientKind kind : {ClientKind::kDedicated, ClientKind::kPooled, ClientKind::kShared}) {
    SCOPED_TRACE(ClientKindName(kind));
    StrategyOptions options = Options(2);
    options.pipeline = kind == ClientKind::kDedicated ? 4 : 1;
    options.slot_map = stale_map();
    ASSERT_NE(options.slot_map, nullptr);
    auto client = MakeClientStrategy(kind, options);
    ASSERT_TRUE(client->Connect().ok());
    testing::ExpectIncrbySumMatchesServer(*client, server_->tcp_target(), 2, kKeys, kRunFor, 1);
    EXPECT_GT(client->moved(), 0);
    // Having followed them, the map sends each key that was used to its owner.
    for (int key = 0; key < kKeys; ++key) {
      const std::string name = "key:" + std::to_string(key);
      std::string request;
      AppendCommand(&request, {"GET", name});
      const size_t routed = options.slot_map->NodeOf(request);
      if (routed != 0) {
        EXPECT_EQ(routed, OwnerOfSlot(HashSlot(name), kOwners)) << name;
      }
    }
  }
}

}  // namespace
}  // namespace kvlab::harness
