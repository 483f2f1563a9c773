// Pub/Sub against redis-server: the same steps on named connections to
// kvlab-server (each engine, two I/O threads, so subscriber and publisher
// sit on different threads) and to redis-server 7.0.15, every reply
// compared byte for byte — subscribe confirmations and their counts, the
// messages and their order, RESP3 pushes, PUBSUB's counters, what a RESP2
// subscriber may still run, MULTI and RESET. Then what a comparison cannot
// show: a closed subscriber leaves its channels, one that never reads is
// disconnected at the output limit, and many publishers on other threads
// lose and reorder nothing (also under ThreadSanitizer).
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/redis_connection.h"
#include "tests/server/redis_reference.h"
#include "tests/server/resp_reply_reader.h"
#include "tests/server/resp_text.h"
#include "tests/server/server_process.h"
#include "tests/server/server_test_support.h"

namespace kvlab::test {
namespace {

// One step: commands sent on connection `conn` (none: only read), then
// `replies` whole replies read back from it.
struct Step {
  int conn;
  std::vector<std::vector<std::string>> commands;
  size_t replies;
};

// HELLO's "id" (each server numbers its own clients) and its "version".
std::string MaskHello(std::string reply) {
  for (const std::string key : {"$2\r\nid\r\n:", "$7\r\nversion\r\n$"}) {
    for (size_t at = reply.find(key); at != std::string::npos; at = reply.find(key, at + 1)) {
      size_t from = at + key.size();
      if (key.back() == '$') from = reply.find("\r\n", from) + 2;  // the bulk's body
      reply.replace(from, reply.find("\r\n", from) - from, "X");
    }
  }
  return reply;
}

// Raw connections to one server, reads bounded by a 5 s receive timeout so
// that a missing message fails the comparison instead of hanging it.
class Connections {
 public:
  explicit Connections(std::function<int()> connect) : connect_(std::move(connect)) {}
  ~Connections() {
    for (auto& [conn, fd] : fds_) ::close(fd);
  }
  std::string Run(const Step& step) {
    auto it = fds_.find(step.conn);
    if (it == fds_.end()) {
      const int fd = connect_();
      timeval timeout{5, 0};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
      it = fds_.emplace(step.conn, fd).first;
    }
    const int fd = it->second;
    std::string bytes;
    for (const auto& command : step.commands) bytes += Encode(command);
    return MaskHello(RedisReference::Exchange(fd, bytes, step.replies));
  }

 private:
  std::function<int()> connect_;
  std::map<int, int> fds_;
};

int ConnectUnix(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

class PubSubTest : public ServerTest {
 protected:
  // Runs `steps` on redis-server and on this engine; every step's replies
  // must be the same bytes.
  void Compare(const std::vector<Step>& steps) {
    RedisReference redis;
    ASSERT_TRUE(redis.available()) << "redis-server is not installed";
    StartServer({"--io-threads", "2"});
    Connections expected([&] { return redis.Connect(); });
    Connections actual([&] { return ConnectUnix(server_->unix_path()); });
    for (size_t i = 0; i < steps.size(); ++i) {
      std::string commands;
      for (const auto& command : steps[i].commands) commands += Encode(command);
      const std::string want = expected.Run(steps[i]);
      const std::string got = actual.Run(steps[i]);
      EXPECT_EQ(Escape(got), Escape(want))
          << "step " << i << " on connection " << steps[i].conn << ": " << Escape(commands);
    }
  }
};

constexpr int kSub = 1, kSub2 = 2, kPub = 3;

TEST_P(PubSubTest, ChannelsAsRedis) {
  Compare({
      {kSub, {{"SUBSCRIBE", "chan1", "chan2"}}, 2},
      {kPub, {{"PUBLISH", "chan1", "hello"}, {"PUBLISH", "chan2", "world"}}, 2},
      {kSub, {}, 2},
      {kSub, {{"UNSUBSCRIBE", "chan1"}}, 1},
      {kPub, {{"PUBLISH", "chan1", "hello"}, {"PUBLISH", "chan2", "again"}}, 2},
      {kSub, {}, 1},
      // Twice the same channel counts once; one never subscribed answers too.
      {kSub, {{"SUBSCRIBE", "chan2", "chan2", "chan3"}, {"UNSUBSCRIBE", "nosuch"}}, 4},
      {kSub2, {{"SUBSCRIBE", "chan3"}}, 1},
      {kPub, {{"PUBLISH", "chan3", "both"}, {"PUBSUB", "NUMSUB", "chan3", "chan2", "none"}}, 2},
      {kSub, {}, 1},
      {kSub2, {}, 1},
      {kPub, {{"PUBSUB", "CHANNELS", "chan[12]"}, {"PUBSUB", "CHANNELS", "x*"}}, 2},
      // UNSUBSCRIBE without arguments: every channel (one each here), then nothing.
      {kSub2, {{"UNSUBSCRIBE"}, {"UNSUBSCRIBE"}}, 2},
      {kPub, {{"PUBLISH", "chan3", "one"}, {"PUBSUB", "NUMSUB", "chan3"}}, 2},
      {kSub, {}, 1},
      {kSub, {{"UNSUBSCRIBE", "chan2"}, {"UNSUBSCRIBE", "chan3"}, {"PING"}}, 3},
      {kPub, {{"PUBLISH", "chan2", "gone"}, {"PUBSUB", "CHANNELS"}}, 2},
  });
}

TEST_P(PubSubTest, PatternsAsRedis) {
  Compare({
      {kSub, {{"PSUBSCRIBE", "foo.*", "bar.*"}}, 2},
      {kPub,
       {{"PUBLISH", "foo.1", "hello"},
        {"PUBLISH", "bar.1", "hello"},
        {"PUBLISH", "foo1", "hello"},
        {"PUBLISH", "barfoo.1", "hello"},
        {"PUBLISH", "qux.1", "hello"}},
       5},
      {kSub, {}, 2},
      {kSub2, {{"PSUBSCRIBE", "foo.*", "b?z"}}, 2},
      {kPub, {{"PUBSUB", "NUMPAT"}, {"PUBLISH", "foo.2", "two"}, {"PUBLISH", "baz", "z"}}, 3},
      {kSub, {}, 1},
      {kSub2, {}, 2},
      {kSub, {{"PUNSUBSCRIBE", "foo.*"}, {"PUNSUBSCRIBE", "never.*"}}, 2},
      {kPub, {{"PUBLISH", "foo.3", "x"}, {"PUBSUB", "NUMPAT"}}, 2},
      {kSub2, {}, 1},
      {kSub2, {{"PUNSUBSCRIBE"}, {"PUNSUBSCRIBE"}}, 3},
      {kSub, {{"PUNSUBSCRIBE"}, {"PUNSUBSCRIBE"}}, 2},
      {kPub, {{"PUBSUB", "NUMPAT"}, {"PUBLISH", "bar.2", "none"}}, 2},
      // A channel and a pattern that match: one message each, counted twice.
      {kSub, {{"SUBSCRIBE", "foo.bar"}, {"PSUBSCRIBE", "foo.*"}}, 2},
      {kPub, {{"PUBLISH", "foo.bar", "hello"}}, 1},
      {kSub, {}, 2},
      {kSub, {{"UNSUBSCRIBE"}, {"PUNSUBSCRIBE"}, {"UNSUBSCRIBE"}}, 3},
  });
}

// A RESP2 subscriber may only (un)subscribe, PING (answered as an array),
// QUIT and RESET; MULTI is refused, a SUBSCRIBE queued in MULTI runs in EXEC.
TEST_P(PubSubTest, SubscribedContextAsRedis) {
  Compare({
      {kSub, {{"SUBSCRIBE", "c"}, {"PING"}, {"PING", "foo"}}, 3},
      {kSub,
       {{"GET", "k"},
        {"MULTI"},
        {"CLIENT", "INFO"},
        {"PUBSUB", "NUMPAT"},
        {"nosuch"},
        {"PUBLISH", "c", "m"}},
       6},
      {kSub, {{"UNSUBSCRIBE"}, {"PING"}, {"GET", "k"}}, 3},
      {kSub, {{"MULTI"}, {"SUBSCRIBE", "d"}, {"PING"}, {"EXEC"}}, 4},
      {kPub, {{"PUBLISH", "d", "after-exec"}}, 1},
      {kSub, {}, 1},
      {kSub, {{"RESET"}, {"GET", "k"}}, 2},
      {kPub, {{"PUBLISH", "d", "after-reset"}, {"PUBSUB", "NUMSUB", "d"}}, 2},
      // Arity, unknown subcommands, PUBSUB HELP.
      {kPub,
       {{"SUBSCRIBE"},
        {"PSUBSCRIBE"},
        {"PUBLISH", "a"},
        {"PUBSUB"},
        {"PUBSUB", "bogus"},
        {"PUBSUB", "CHANNELS", "a", "b"},
        {"PUBSUB", "NUMPAT", "x"},
        {"PUBSUB", "HELP"}},
       8},
  });
}

// RESP3: confirmations and messages are pushes, and a subscriber may run
// any command.
TEST_P(PubSubTest, Resp3PushesAsRedis) {
  Compare({
      {kSub, {{"HELLO", "3"}}, 1},
      {kSub, {{"SUBSCRIBE", "c"}, {"PSUBSCRIBE", "c*"}, {"SET", "k", "v"}, {"GET", "k"}}, 4},
      {kPub, {{"PUBLISH", "c", "hello"}}, 1},
      {kSub, {}, 2},
      {kSub, {{"PING"}, {"UNSUBSCRIBE"}, {"PUNSUBSCRIBE"}, {"UNSUBSCRIBE"}}, 4},
      {kSub, {{"HELLO", "2"}, {"SUBSCRIBE", "c"}}, 2},
      {kPub, {{"PUBLISH", "c", "resp2"}}, 1},
      {kSub, {}, 1},
  });
}

TEST_P(PubSubTest, ShardChannelsAsRedis) {
  Compare({
      {kSub, {{"SSUBSCRIBE", "s1", "s2"}, {"SUBSCRIBE", "s1"}}, 3},
      {kPub, {{"SPUBLISH", "s1", "shard"}, {"PUBLISH", "s2", "global"}}, 2},
      {kSub, {}, 1},
      {kPub,
       {{"PUBSUB", "SHARDCHANNELS", "s1"},
        {"PUBSUB", "SHARDNUMSUB", "s1", "s3"},
        {"PUBSUB", "NUMSUB", "s1"}},
       3},
      {kSub, {{"SUNSUBSCRIBE", "s1"}, {"SUNSUBSCRIBE"}, {"SUNSUBSCRIBE"}, {"UNSUBSCRIBE"}}, 4},
  });
}

// CLIENT REPLY OFF drops every reply but pushes (Redis's CLIENT_PUSHING):
// confirmations and messages still come; SKIP drops the next command's;
// ON answers +OK and ends both; an engine command's deferred reply and an
// EXEC's are dropped too.
TEST_P(PubSubTest, ClientReplyKeepsOnlyPushesAsRedis) {
  Compare({
      {kSub, {{"CLIENT", "REPLY", "OFF"}, {"PING", "pong"}, {"SET", "k", "v"}, {"GET", "k"}}, 0},
      {kSub, {{"CLIENT", "REPLY", "ON"}, {"PING", "pong3"}}, 2},
      {kSub, {{"CLIENT", "REPLY", "SKIP"}, {"GET", "k"}, {"GET", "nokey"}}, 1},
      {kSub, {{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "ON"}, {"PING"}}, 2},
      {kSub,
       {{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "SKIP"}, {"PING", "a"}, {"PING", "b"}},
       1},
      {kSub,
       {{"CLIENT", "REPLY", "OFF"},
        {"MULTI"},
        {"INCR", "n"},
        {"EXEC"},
        {"CLIENT", "REPLY", "BOGUS"},
        {"CLIENT", "REPLY"},
        {"CLIENT", "REPLY", "ON"},
        {"GET", "n"}},
       2},
      {kSub, {{"HELLO", "3"}}, 1},
      {kSub, {{"CLIENT", "REPLY", "OFF"}, {"SUBSCRIBE", "channel"}, {"PSUBSCRIBE", "ch*"}}, 2},
      {kPub, {{"PUBLISH", "channel", "hello"}}, 1},
      {kSub, {}, 2},
      {kSub,
       {{"PING"}, {"UNSUBSCRIBE", "channel"}, {"PUNSUBSCRIBE", "ch*"}, {"CLIENT", "REPLY", "ON"}},
       3},
  });
}

// A client that goes away leaves every channel and pattern.
TEST_P(PubSubTest, ClosedSubscriberLeavesItsChannels) {
  StartServer({"--io-threads", "2"});
  {
    auto subscriber = Connect();
    ASSERT_NE(subscriber, nullptr);
    subscriber->Append({"SUBSCRIBE", "a", "b"});
    subscriber->Append({"PSUBSCRIBE", "p*"});
    for (int i = 0; i < 3; ++i) ASSERT_EQ(subscriber->GetReply().type, REDIS_REPLY_ARRAY);
    auto publisher = Connect();
    EXPECT_TRUE(publisher->Command({"PUBLISH", "a", "m"}).IsInteger(1));
    EXPECT_TRUE(publisher->Command({"PUBSUB", "NUMPAT"}).IsInteger(1));
  }
  auto publisher = Connect();
  ASSERT_NE(publisher, nullptr);
  // The close reaches the server asynchronously: wait for it, up to 10 s.
  long long left = -1;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const Reply numsub = publisher->Command({"PUBSUB", "NUMSUB", "a", "b"});
    ASSERT_EQ(numsub.elements.size(), 4u);
    left = numsub.elements[1].integer + numsub.elements[3].integer +
           publisher->Command({"PUBSUB", "NUMPAT"}).integer;
    if (left == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(left, 0);
  EXPECT_TRUE(publisher->Command({"PUBLISH", "pa", "m"}).IsInteger(0));
  EXPECT_TRUE(publisher->Command({"PUBSUB", "CHANNELS"}).elements.empty());
}

// A subscriber that never reads is disconnected once its unsent messages
// pass client-output-buffer-limit, and its subscription goes with it.
TEST_P(PubSubTest, SubscriberThatNeverReadsIsDisconnectedAtTheOutputLimit) {
  StartServer({"--io-threads", "2", "--client-output-buffer-limit", "1mb"});
  const int fd = ConnectUnix(server_->unix_path());
  ASSERT_GE(fd, 0);
  const int small = 4096;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  const std::string subscribe = Encode({"SUBSCRIBE", "flood"});
  ASSERT_EQ(::send(fd, subscribe.data(), subscribe.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(subscribe.size()));
  auto publisher = Connect();
  ASSERT_NE(publisher, nullptr);
  for (int attempt = 0; attempt < 500; ++attempt) {  // the SUBSCRIBE has run
    if (publisher->Command({"PUBSUB", "NUMSUB", "flood"}).elements.at(1).integer == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::string payload(64 * 1024, 'x');
  long long receivers = 1;
  // 8 MiB published is 8 times the limit; the kernel's buffers hold far less.
  for (int i = 0; i < 128 && receivers != 0; ++i) {
    receivers = publisher->Command({"PUBLISH", "flood", payload}).integer;
  }
  for (int attempt = 0; attempt < 500 && receivers != 0; ++attempt) {
    receivers = publisher->Command({"PUBLISH", "flood", "x"}).integer;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(receivers, 0) << "the subscriber was never disconnected";
  ::close(fd);
  ExpectHealthy();
}

// Publishers on several connections (and I/O threads) at once: each
// subscriber gets every message once, each publisher's in its order, and
// PUBLISH counts both subscribers (one by channel, one by pattern).
TEST_P(PubSubTest, ConcurrentPublishersLoseAndReorderNothing) {
  StartServer({"--io-threads", "2"});
  constexpr int kPublishers = 4;
#if defined(__SANITIZE_THREAD__)
  constexpr int kMessages = 300;
#else
  constexpr int kMessages = 2000;
#endif
  auto by_channel = Connect();
  auto by_pattern = Connect();
  ASSERT_NE(by_channel, nullptr);
  ASSERT_NE(by_pattern, nullptr);
  EXPECT_EQ(by_channel->Command({"SUBSCRIBE", "news"}).elements.size(), 3u);
  EXPECT_EQ(by_pattern->Command({"PSUBSCRIBE", "n*s"}).elements.size(), 3u);
  std::atomic<int> wrong_counts{0};
  std::vector<std::thread> publishers;
  for (int p = 0; p < kPublishers; ++p) {
    publishers.emplace_back([&, p] {
      auto client = Connect();
      if (!client) {
        ++wrong_counts;
        return;
      }
      for (int i = 0; i < kMessages; ++i) {
        if (!client->Command({"PUBLISH", "news", std::to_string(p) + ":" + std::to_string(i)})
                 .IsInteger(2)) {
          ++wrong_counts;
        }
      }
    });
  }
  // Each subscriber: the next sequence number expected from each publisher.
  auto check = [&](RedisConnection& subscriber, size_t payload_at) {
    std::vector<int> next(kPublishers, 0);
    for (int received = 0; received < kPublishers * kMessages; ++received) {
      const Reply message = subscriber.GetReply();
      ASSERT_EQ(message.elements.size(), payload_at + 1) << "after " << received << " messages";
      const std::string& payload = message.elements[payload_at].text;
      const int publisher = std::stoi(payload.substr(0, payload.find(':')));
      const int sequence = std::stoi(payload.substr(payload.find(':') + 1));
      ASSERT_EQ(sequence, next[publisher]) << "publisher " << publisher << " out of order";
      ++next[publisher];
    }
  };
  check(*by_channel, 2);
  check(*by_pattern, 3);
  for (auto& thread : publishers) thread.join();
  EXPECT_EQ(wrong_counts.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Engines, PubSubTest, ::testing::ValuesIn(ServerEngineKinds()), EngineName);

}  // namespace
}  // namespace kvlab::test
