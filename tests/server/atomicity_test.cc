// The concurrency checker: what Redis promises about commands running at
// once, checked on every engine and on redis-server itself, with several
// I/O threads and shards or stripes, so that a multi-key command really
// crosses threads:
//   - no reader ever sees a half-applied MSET (MGET sees one writer's
//     value in every key, or none), nor half of a MULTI/EXEC;
//   - MSETNX is all-or-nothing and has exactly one winner;
//   - a SETNX race has exactly one winner;
//   - INCR from many connections is exact;
//   - WATCH/MULTI/EXEC as an optimistic lock loses no update, and a
//     conflicting write aborts EXEC;
//   - LPUSH and LPOP/RPOP racing on one list from many connections never
//     lose nor duplicate an element;
//   - SUNION and SINTER never see half of a member's move between two
//     sets (MULTI SREM/SADD EXEC): every member in exactly one set; nor
//     do BITOP OR and AND see half of a bit's move between two bitmaps
//     (MULTI SETBIT 0/SETBIT 1 EXEC); nor do SUNIONSTORE and SINTERSTORE
//     see half of an SMOVE, nor ZUNIONSTORE and ZINTERCARD half of a
//     member's move between sorted sets (MULTI ZREM/ZADD EXEC).
// Under --multikey split the engines tear multi-key commands on purpose:
// the checker must see it (so it could catch the tearing it looks for);
// on `sharded`, where such a tear is rare, INFO shows the groups it no
// longer holds whole.
// Also runs under ThreadSanitizer (label `tsan`).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>

#include "tests/server/redis_reference.h"
#include "tests/server/server_test_support.h"

namespace kvlab::test {
namespace {

using Clock = std::chrono::steady_clock;
using Connector = std::function<std::unique_ptr<RedisConnection>()>;

constexpr int kKeys = 8;  // spread over the 4 shards or stripes

std::vector<std::string> Keys(const std::string& prefix) {
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; ++i) keys.push_back(prefix + std::to_string(i));
  return keys;
}

// Readers that check each multi-key read while writers run, until `stop`
// or `enough` torn reads were seen. Returns {reads, torn}.
struct TornCount {
  long reads = 0;
  long torn = 0;
};

// The shared state of a race between two writers and three readers that
// check each multi-key read, and its run.
class Race {
 public:
  // The race stops early after `stop_at_torn` torn reads (0: never).
  explicit Race(long stop_at_torn) : stop_at_torn_(stop_at_torn) {}

  std::atomic<bool> stop{false};
  std::atomic<long> reads{0}, torn{0}, errors{0};

  // A reader saw a torn read.
  void Torn() {
    if (++torn >= stop_at_torn_ && stop_at_torn_ > 0) stop = true;
  }
  // Runs writer(first_writer), writer(first_writer + 1) and three readers
  // for `budget` or until stopped; expects no errors. Returns {reads, torn}.
  // Past `budget` it goes on until the readers have made kMinReads reads (a
  // race of fewer checks little), up to kMinReadsCeiling: on a loaded
  // machine under ThreadSanitizer 750 ms once gave 97 reads (CI, 62c559c),
  // while a server that stops answering still ends with too few.
  static constexpr long kMinReads = 200;
  static constexpr auto kMinReadsCeiling = std::chrono::seconds(20);
  template <typename Writer, typename Reader>
  TornCount Run(Writer& writer, int first_writer, Reader& reader, Clock::duration budget) {
    std::vector<std::thread> threads;
    threads.emplace_back(writer, first_writer);
    threads.emplace_back(writer, first_writer + 1);
    for (int i = 0; i < 3; ++i) threads.emplace_back(reader);
    const auto start = Clock::now();
    const auto deadline = start + budget;
    const auto ceiling = start + std::max<Clock::duration>(budget, kMinReadsCeiling);
    auto running = [&] {
      const auto now = Clock::now();
      if (stop.load() || now >= ceiling) return false;
      return now < deadline || reads.load() < kMinReads;
    };
    while (running()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stop = true;
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(errors.load(), 0);
    return {reads.load(), torn.load()};
  }

 private:
  const long stop_at_torn_;
};

// What one multi-key read saw: every key the same (one writer's value, or all
// nil), torn (a well-formed reply of kKeys values holding at least two
// distinct ones: nil counts as one), or not a read at all (an error, a lost
// connection, a short array, an element that is neither a string nor nil),
// which is an error and never counts as torn.
enum class ReadSeen { kWhole, kTorn, kMalformed };

ReadSeen Classify(const Reply& reply) {
  if (!reply.ok || reply.type != REDIS_REPLY_ARRAY || reply.elements.size() != kKeys) {
    return ReadSeen::kMalformed;
  }
  for (const Reply& element : reply.elements) {
    if (element.type != REDIS_REPLY_STRING && element.type != REDIS_REPLY_NIL)
      return ReadSeen::kMalformed;
  }
  const Reply& first = reply.elements[0];
  for (const Reply& element : reply.elements) {
    if (element.type != first.type || element.text != first.text) return ReadSeen::kTorn;
  }
  return ReadSeen::kWhole;
}

Reply Bulk(const std::string& text) { return Reply{REDIS_REPLY_STRING, text, 0, {}, true}; }
Reply Nil() { return Reply{REDIS_REPLY_NIL, "", 0, {}, true}; }
Reply Array(std::vector<Reply> elements) {
  return Reply{REDIS_REPLY_ARRAY, "", 0, std::move(elements), true};
}

// The negative control below counts torn reads: only well-formed replies with two
// values may count, or a server that fails under --multikey split would pass it.
TEST(AtomicityChecker, OnlyAWellFormedReplyWithTwoValuesIsTorn) {
  const std::vector<Reply> same(kKeys, Bulk("1:7"));
  EXPECT_EQ(Classify(Array(same)), ReadSeen::kWhole);
  EXPECT_EQ(Classify(Array(std::vector<Reply>(kKeys, Nil()))), ReadSeen::kWhole);
  std::vector<Reply> mixed = same;
  mixed[3] = Bulk("2:7");
  EXPECT_EQ(Classify(Array(mixed)), ReadSeen::kTorn);
  mixed[3] = Nil();  // half a DEL
  EXPECT_EQ(Classify(Array(mixed)), ReadSeen::kTorn);
  EXPECT_EQ(Classify(Reply{REDIS_REPLY_ERROR, "ERR split", 0, {}, true}), ReadSeen::kMalformed);
  EXPECT_EQ(Classify(Reply{REDIS_REPLY_NIL, "", 0, {}, true}),
            ReadSeen::kMalformed);  // aborted EXEC
  EXPECT_EQ(Classify(Array(std::vector<Reply>(same.begin(), same.end() - 1))),
            ReadSeen::kMalformed);
  std::vector<Reply> with_error = same;
  with_error[0] = Reply{REDIS_REPLY_ERROR, "ERR", 0, {}, true};
  EXPECT_EQ(Classify(Array(with_error)), ReadSeen::kMalformed);
  Reply lost = Array(same);
  lost.ok = false;
  EXPECT_EQ(Classify(lost), ReadSeen::kMalformed);
}

// One writer MSETs (or DELs) every key to one value, readers MGET them.
// With `transaction`, the writer uses MULTI/SET.../EXEC instead of MSET and
// readers MULTI/GET.../EXEC instead of MGET. Runs for `budget`, or until
// `stop_at_torn` torn reads (0: never stop early).
TornCount RaceMultiKeyWritesAndReads(const Connector& connect, bool transaction,
                                     Clock::duration budget, long stop_at_torn) {
  const std::vector<std::string> keys = Keys(transaction ? "tx:" : "m:");
  Race race(stop_at_torn);
  auto writer = [&](int id) {
    auto client = connect();
    if (!client) {
      ++race.errors;
      return;
    }
    for (long round = 0; !race.stop.load(); ++round) {
      const std::string value = std::to_string(id) + ":" + std::to_string(round);
      std::vector<std::string> mset = {"MSET"};
      for (const auto& key : keys) {
        mset.push_back(key);
        mset.push_back(value);
      }
      std::vector<std::string> del = {"DEL"};
      del.insert(del.end(), keys.begin(), keys.end());
      if (!transaction) {
        if (client->Command(round % 5 == 4 ? del : mset).IsError()) ++race.errors;
        continue;
      }
      client->Append({"MULTI"});
      for (const auto& key : keys) client->Append({"SET", key, value});
      client->Append({"EXEC"});
      for (size_t i = 0; i < keys.size() + 1; ++i) client->GetReply();
      if (client->GetReply().type != REDIS_REPLY_ARRAY) ++race.errors;
    }
  };
  auto reader = [&] {
    auto client = connect();
    if (!client) {
      ++race.errors;
      return;
    }
    std::vector<std::string> mget = {"MGET"};
    mget.insert(mget.end(), keys.begin(), keys.end());
    while (!race.stop.load()) {
      Reply values;
      if (!transaction) {
        values = client->Command(mget);
      } else {
        client->Append({"MULTI"});
        for (const auto& key : keys) client->Append({"GET", key});
        client->Append({"EXEC"});
        for (size_t i = 0; i < keys.size() + 1; ++i) client->GetReply();
        values = client->GetReply();
      }
      ++race.reads;
      switch (Classify(values)) {
        case ReadSeen::kWhole:
          break;
        case ReadSeen::kTorn:
          race.Torn();
          break;
        case ReadSeen::kMalformed:
          ++race.errors;
          break;  // Run() requires none
      }
    }
  };
  return race.Run(writer, 1, reader, budget);
}

// Rounds of clients racing MSETNX over the same keys with their own value:
// exactly one wins each round, and every key then holds the winner's value.
void ExpectMsetNxAllOrNothing(const Connector& connect) {
  constexpr int kClients = 4;
  constexpr int kRounds = 40;
  std::vector<std::unique_ptr<RedisConnection>> clients;
  for (int c = 0; c < kClients; ++c) clients.push_back(connect());
  for (auto& client : clients) ASSERT_NE(client, nullptr);
  for (int round = 0; round < kRounds; ++round) {
    const std::vector<std::string> keys = Keys("nx" + std::to_string(round) + ":");
    std::atomic<int> winners{0};
    std::vector<std::thread> threads;
    for (int c = 0; c < kClients; ++c) {
      threads.emplace_back([&, c] {
        std::vector<std::string> command = {"MSETNX"};
        // Each client names the keys in its own order: the engines must not
        // care (no deadlock, one winner).
        for (int i = 0; i < kKeys; ++i) {
          const std::string& key = keys[(i + c) % kKeys];
          command.push_back(key);
          command.push_back("client" + std::to_string(c));
        }
        if (clients[c]->Command(command).IsInteger(1)) ++winners;
      });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(winners.load(), 1) << "round " << round;
    std::vector<std::string> mget = {"MGET"};
    mget.insert(mget.end(), keys.begin(), keys.end());
    const Reply values = clients[0]->Command(mget);
    EXPECT_TRUE(Classify(values) == ReadSeen::kWhole &&
                values.elements[0].type == REDIS_REPLY_STRING)
        << "round " << round;
  }
}

void ExpectOneSetNxWinner(const Connector& connect) {
  constexpr int kClients = 6;
  std::vector<std::unique_ptr<RedisConnection>> clients;
  for (int c = 0; c < kClients; ++c) clients.push_back(connect());
  for (auto& client : clients) ASSERT_NE(client, nullptr);
  for (int round = 0; round < 40; ++round) {
    std::atomic<int> winners{0};
    std::vector<std::thread> threads;
    for (int c = 0; c < kClients; ++c) {
      threads.emplace_back([&, c] {
        if (clients[c]->Command({"SETNX", "setnx:" + std::to_string(round), "x"}).IsInteger(1)) {
          ++winners;
        }
      });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(winners.load(), 1) << "round " << round;
  }
}

// INCR from many connections, and WATCH/GET/MULTI/SET/EXEC as an
// optimistic lock (retried on a null EXEC): both counters must be exact.
void ExpectCountersExact(const Connector& connect) {
  constexpr int kClients = 4;
  constexpr int kIncrements = 150;
  std::atomic<int> errors{0};
  std::atomic<long> aborted{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&] {
      auto client = connect();
      if (!client) {
        ++errors;
        return;
      }
      for (int i = 0; i < kIncrements; ++i) {
        if (client->Command({"INCR", "counter:incr"}).type != REDIS_REPLY_INTEGER) ++errors;
        while (true) {
          if (!client->Command({"WATCH", "counter:cas"}).IsStatus("OK")) ++errors;
          const Reply current = client->Command({"GET", "counter:cas"});
          const long value = current.IsNil() ? 0 : std::stol(current.text);
          client->Append({"MULTI"});
          client->Append({"SET", "counter:cas", std::to_string(value + 1)});
          client->Append({"EXEC"});
          client->GetReply();
          client->GetReply();
          const Reply exec = client->GetReply();
          if (exec.type == REDIS_REPLY_ARRAY) break;
          if (!exec.IsNil()) {
            ++errors;
            break;
          }
          ++aborted;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(errors.load(), 0);
  auto check = connect();
  ASSERT_NE(check, nullptr);
  const std::string total = std::to_string(kClients * kIncrements);
  EXPECT_TRUE(check->Command({"GET", "counter:incr"}).IsBulk(total));
  EXPECT_TRUE(check->Command({"GET", "counter:cas"}).IsBulk(total))
      << "a WATCHed EXEC committed over another client's write (" << aborted.load()
      << " aborts seen)";
}

// A write by another client between WATCH and EXEC aborts the EXEC.
void ExpectWatchConflictAborts(const Connector& connect) {
  auto a = connect();
  auto b = connect();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  for (const std::string key : {"w:plain", "w:other-shard-1", "w:other-shard-2"}) {
    EXPECT_TRUE(a->Command({"WATCH", key}).IsStatus("OK"));
    EXPECT_TRUE(b->Command({"SET", key, "b"}).IsStatus("OK"));
    EXPECT_TRUE(a->Command({"MULTI"}).IsStatus("OK"));
    EXPECT_TRUE(a->Command({"SET", key, "a"}).IsStatus("QUEUED"));
    EXPECT_TRUE(a->Command({"SET", "w:untouched", "a"}).IsStatus("QUEUED"));
    EXPECT_TRUE(a->Command({"EXEC"}).IsNil());
    EXPECT_TRUE(a->Command({"GET", key}).IsBulk("b"));
  }
  EXPECT_TRUE(a->Command({"EXISTS", "w:untouched"}).IsInteger(0));
  // Without the conflict, the same transaction commits.
  EXPECT_TRUE(a->Command({"WATCH", "w:plain"}).IsStatus("OK"));
  EXPECT_TRUE(a->Command({"MULTI"}).IsStatus("OK"));
  EXPECT_TRUE(a->Command({"SET", "w:plain", "a"}).IsStatus("QUEUED"));
  EXPECT_EQ(a->Command({"EXEC"}).type, REDIS_REPLY_ARRAY);
  EXPECT_TRUE(b->Command({"GET", "w:plain"}).IsBulk("a"));
}

// Producers LPUSH distinct elements (one to three per command, pipelined)
// onto two lists while consumers LPOP and RPOP them, one at a time or with
// a count, until the producers are done and the lists are empty: every
// element comes out exactly once, and the emptied keys are gone.
void ExpectListPushPopExact(const Connector& connect) {
  constexpr int kProducers = 3;
  constexpr int kConsumers = 3;
  constexpr int kPushesPerProducer = 500;
  const std::vector<std::string> lists = {"list:a", "list:other-shard"};
  std::atomic<int> errors{0};
  std::atomic<bool> produced{false};
  std::mutex popped_mutex;
  std::vector<std::string> popped;
  std::vector<std::string> pushed;
  for (int p = 0; p < kProducers; ++p) {
    for (int i = 0; i < kPushesPerProducer; ++i) {
      for (int e = 0; e <= i % 3; ++e) {
        pushed.push_back("p" + std::to_string(p) + ":" + std::to_string(i) + ":" +
                         std::to_string(e));
      }
    }
  }
  auto producer = [&](int p) {
    auto client = connect();
    if (!client) {
      ++errors;
      return;
    }
    for (int i = 0; i < kPushesPerProducer; i += 4) {
      int sent = 0;
      for (int j = i; j < std::min(i + 4, kPushesPerProducer); ++j, ++sent) {
        std::vector<std::string> push = {"LPUSH", lists[j % lists.size()]};
        for (int e = 0; e <= j % 3; ++e) {
          push.push_back("p" + std::to_string(p) + ":" + std::to_string(j) + ":" +
                         std::to_string(e));
        }
        client->Append(push);
      }
      for (int j = 0; j < sent; ++j) {
        if (client->GetReply().type != REDIS_REPLY_INTEGER) ++errors;
      }
    }
  };
  auto consumer = [&](int c) {
    auto client = connect();
    if (!client) {
      ++errors;
      return;
    }
    std::vector<std::string> mine;
    int empty_after_produced = 0;
    for (long round = 0; empty_after_produced < static_cast<int>(lists.size()); ++round) {
      const bool finished = produced.load();
      const std::string& key = lists[round % lists.size()];
      const bool left = (round + c) % 2 == 0;
      std::vector<std::string> pop = {left ? "LPOP" : "RPOP", key};
      if (round % 3 == 0) pop.push_back(std::to_string(1 + round % 4));
      const Reply reply = client->Command(pop);
      if (reply.type == REDIS_REPLY_STRING) {
        mine.push_back(reply.text);
      } else if (reply.type == REDIS_REPLY_ARRAY && !reply.elements.empty()) {
        for (const Reply& element : reply.elements) mine.push_back(element.text);
      } else if (reply.IsNil()) {
        // Empty once the producers are done: empty for good.
        if (finished) ++empty_after_produced;
        continue;
      } else {
        ++errors;
        break;
      }
      empty_after_produced = 0;
    }
    std::lock_guard<std::mutex> lock(popped_mutex);
    popped.insert(popped.end(), mine.begin(), mine.end());
  };
  std::vector<std::thread> consumers, producers;
  for (int c = 0; c < kConsumers; ++c) consumers.emplace_back(consumer, c);
  for (int p = 0; p < kProducers; ++p) producers.emplace_back(producer, p);
  for (auto& thread : producers) thread.join();
  produced = true;
  for (auto& thread : consumers) thread.join();
  EXPECT_EQ(errors.load(), 0);
  std::sort(pushed.begin(), pushed.end());
  std::sort(popped.begin(), popped.end());
  EXPECT_EQ(popped.size(), pushed.size()) << "elements lost or duplicated";
  EXPECT_TRUE(popped == pushed) << "the popped elements are not the pushed ones";
  EXPECT_EQ(std::adjacent_find(popped.begin(), popped.end()), popped.end())
      << "an element popped twice";
  auto check = connect();
  ASSERT_NE(check, nullptr);
  EXPECT_TRUE(check->Command({"EXISTS", lists[0], lists[1]}).IsInteger(0));
}

// How a move race (RaceMoves) spells its commands for one kind of value
// that holds members: sets (SADD/SREM, read by SUNION and SINTER), sets
// moved by SMOVE (read by SUNIONSTORE and SINTERSTORE) or bitmaps (a
// member is a bit: SETBIT, read by BITOP OR/AND and BITCOUNT).
struct MoveCommands {
  std::string prefix;  // of the keys moved between
  std::vector<std::string> (*add)(const std::string& key, int member);
  std::vector<std::string> (*remove)(const std::string& key, int member);
  long added_reply, removed_reply;  // the integer each answers in a move
  // How many members all `keys` hold together, and how many `a` and `b`
  // both hold; -1 on an unexpected reply. `reader` names the reader.
  long (*count_all)(RedisConnection& client, const std::vector<std::string>& keys, int reader);
  long (*count_both)(RedisConnection& client, const std::string& a, const std::string& b,
                     int reader);
  // One command that moves a member, answering 1 (nullptr: MULTI, the
  // remove and the add, EXEC).
  std::vector<std::string> (*move)(const std::string& from, const std::string& to,
                                   int member) = nullptr;
};

long ArraySize(const Reply& reply) {
  return reply.type == REDIS_REPLY_ARRAY ? static_cast<long>(reply.elements.size()) : -1;
}

std::vector<std::string> SetAdd(const std::string& key, int m) {
  return {"SADD", key, "m" + std::to_string(m)};
}
std::vector<std::string> SetRemove(const std::string& key, int m) {
  return {"SREM", key, "m" + std::to_string(m)};
}

const MoveCommands kSetMoves = {
    "sets:",
    SetAdd,
    SetRemove,
    1,
    1,
    [](RedisConnection& client, const std::vector<std::string>& keys, int) {
      std::vector<std::string> sunion = {"SUNION"};
      sunion.insert(sunion.end(), keys.begin(), keys.end());
      return ArraySize(client.Command(sunion));
    },
    [](RedisConnection& client, const std::string& a, const std::string& b, int) {
      return ArraySize(client.Command({"SINTER", a, b}));
    }};

long IntegerOrFailure(const Reply& reply) {
  return reply.type == REDIS_REPLY_INTEGER ? static_cast<long>(reply.integer) : -1;
}

// SMOVE moves, counted by storing into the reader's own key: the STOREs
// answer the size of what they read.
const MoveCommands kSetMoveStores = {
    "smoves:",
    SetAdd,
    SetRemove,
    1,
    1,
    [](RedisConnection& client, const std::vector<std::string>& keys, int reader) {
      std::vector<std::string> store = {"SUNIONSTORE", "smoves-union:" + std::to_string(reader)};
      store.insert(store.end(), keys.begin(), keys.end());
      return IntegerOrFailure(client.Command(store));
    },
    [](RedisConnection& client, const std::string& a, const std::string& b, int reader) {
      return IntegerOrFailure(
          client.Command({"SINTERSTORE", "smoves-inter:" + std::to_string(reader), a, b}));
    },
    [](const std::string& from, const std::string& to, int m) -> std::vector<std::string> {
      return {"SMOVE", from, to, "m" + std::to_string(m)};
    }};

// Sends one writer round's `commands` (in one MULTI/EXEC when
// `transaction`) and whether each answered its `expected` integer.
bool SendMoves(RedisConnection& client, const std::vector<std::vector<std::string>>& commands,
               const std::vector<long>& expected, bool transaction) {
  if (transaction) client.Append({"MULTI"});
  for (const std::vector<std::string>& command : commands) client.Append(command);
  if (!transaction) {
    bool applied = true;
    for (const long reply : expected) applied &= client.GetReply().IsInteger(reply);
    return applied;
  }
  client.Append({"EXEC"});
  for (size_t i = 0; i < 1 + commands.size(); ++i) client.GetReply();
  const Reply exec = client.GetReply();
  bool applied = exec.type == REDIS_REPLY_ARRAY && exec.elements.size() == expected.size();
  for (size_t i = 0; applied && i < exec.elements.size(); ++i) {
    applied = exec.elements[i].IsInteger(expected[i]);
  }
  return applied;
}

// BITOP into the reader's own key, then BITCOUNT it: only the reader
// writes that key, so the count is what the BITOP saw.
long CountBitop(RedisConnection& client, const std::string& op,
                const std::vector<std::string>& keys, int reader) {
  const std::string dest = "bitop-result:" + std::to_string(reader);
  std::vector<std::string> bitop = {"BITOP", op, dest};
  bitop.insert(bitop.end(), keys.begin(), keys.end());
  if (client.Command(bitop).type != REDIS_REPLY_INTEGER) return -1;
  const Reply count = client.Command({"BITCOUNT", dest});
  return count.type == REDIS_REPLY_INTEGER ? static_cast<long>(count.integer) : -1;
}

const MoveCommands kBitMoves = {
    "bitmaps:",
    [](const std::string& key, int m) -> std::vector<std::string> {
      return {"SETBIT", key, std::to_string(m), "1"};
    },
    [](const std::string& key, int m) -> std::vector<std::string> {
      return {"SETBIT", key, std::to_string(m), "0"};
    },
    0,
    1,  // SETBIT answers the bit's old value
    [](RedisConnection& client, const std::vector<std::string>& keys, int reader) {
      return CountBitop(client, "OR", keys, reader);
    },
    [](RedisConnection& client, const std::string& a, const std::string& b, int reader) {
      return CountBitop(client, "AND", {a, b}, reader);
    }};

// Sorted sets: ZADD/ZREM, read by ZUNIONSTORE into the reader's own key
// (its reply is the size it stored: the store is in the same atomic step
// as the reads) and by ZINTERCARD.
const MoveCommands kZSetMoves = {
    "zsets:",
    [](const std::string& key, int m) -> std::vector<std::string> {
      return {"ZADD", key, std::to_string(m), "m" + std::to_string(m)};
    },
    [](const std::string& key, int m) -> std::vector<std::string> {
      return {"ZREM", key, "m" + std::to_string(m)};
    },
    1,
    1,
    [](RedisConnection& client, const std::vector<std::string>& keys, int reader) {
      std::vector<std::string> zunionstore = {
          "ZUNIONSTORE", "zunion-result:" + std::to_string(reader), std::to_string(keys.size())};
      zunionstore.insert(zunionstore.end(), keys.begin(), keys.end());
      const Reply stored = client.Command(zunionstore);
      return stored.type == REDIS_REPLY_INTEGER ? static_cast<long>(stored.integer) : -1;
    },
    [](RedisConnection& client, const std::string& a, const std::string& b, int) {
      const Reply count = client.Command({"ZINTERCARD", "2", a, b});
      return count.type == REDIS_REPLY_INTEGER ? static_cast<long>(count.integer) : -1;
    }};

// Members move between kSets keys, each move one SMOVE or one MULTI/EXEC
// that removes it from its key and adds it to another (in either order), so every
// member is in exactly one key at every instant. Readers count the members
// of all the keys (one missing: a half-applied remove-first move) and of
// two of them at once (one in both: a half-applied add-first move). Two
// writers each own half the members. Returns {reads, torn} as
// RaceMultiKeyWritesAndReads().
TornCount RaceMoves(const MoveCommands& spelling, const Connector& connect, Clock::duration budget,
                    long stop_at_torn) {
  constexpr int kSets = 4;
  constexpr int kMembers = 16;
  std::vector<std::string> sets;
  for (int i = 0; i < kSets; ++i) sets.push_back(spelling.prefix + std::to_string(i));
  {
    auto setup = connect();
    if (!setup) {
      ADD_FAILURE() << "no connection";
      return {};
    }
    std::vector<std::string> del = {"DEL"};
    del.insert(del.end(), sets.begin(), sets.end());
    setup->Command(del);
    for (int m = 0; m < kMembers; ++m) {
      EXPECT_TRUE(setup->Command(spelling.add(sets[m % kSets], m)).IsInteger(spelling.added_reply));
    }
  }
  Race race(stop_at_torn);
  auto writer = [&](int id) {
    auto client = connect();
    if (!client) {
      ++race.errors;
      return;
    }
    std::vector<int> where(kMembers);
    for (int m = 0; m < kMembers; ++m) where[m] = m % kSets;
    constexpr int kMovesPerExec = 3;  // several keys per EXEC: more of it to tear under split
    for (long round = 0; !race.stop.load(); ++round) {
      std::vector<std::pair<int, int>> moves;  // member, destination
      std::vector<std::vector<std::string>> commands;
      std::vector<long> expected;  // their replies
      for (int k = 0; k < kMovesPerExec; ++k) {
        const int m = id + 2 * static_cast<int>((round + k) % (kMembers / 2));
        const int from = where[m];
        const int to = (from + 1 + static_cast<int>((round + k) % (kSets - 1))) % kSets;
        if (spelling.move) {
          commands.push_back(spelling.move(sets[from], sets[to], m));
          expected.push_back(1);
        } else if ((round + k) % 2 == 0) {
          commands.insert(commands.end(),
                          {spelling.remove(sets[from], m), spelling.add(sets[to], m)});
          expected.insert(expected.end(), {spelling.removed_reply, spelling.added_reply});
        } else {
          commands.insert(commands.end(),
                          {spelling.add(sets[to], m), spelling.remove(sets[from], m)});
          expected.insert(expected.end(), {spelling.added_reply, spelling.removed_reply});
        }
        moves.emplace_back(m, to);
      }
      if (!SendMoves(*client, commands, expected, spelling.move == nullptr)) ++race.errors;
      for (const auto& [m, to] : moves) where[m] = to;
    }
  };
  std::atomic<int> readers{0};
  auto reader = [&] {
    auto client = connect();
    if (!client) {
      ++race.errors;
      return;
    }
    const int id = readers++;
    for (long round = 0; !race.stop.load(); ++round) {
      const long all = spelling.count_all(*client, sets, id);
      const long both =
          spelling.count_both(*client, sets[round % kSets],
                              sets[(round + 1 + round / kSets % (kSets - 1)) % kSets], id);
      race.reads += 2;
      if (all < 0 || both < 0) {
        ++race.errors;
        continue;
      }
      if (all != kMembers || both != 0) race.Torn();
    }
  };
  return race.Run(writer, 0, reader, budget);
}

#if defined(__SANITIZE_THREAD__)
// Under ThreadSanitizer a race's value is the happens-before it checks on every access,
// not how many reads it makes: half the time (each of the ~30 races per `make test`
// keeps both cores busy for its whole budget).
constexpr auto kRaceBudget = std::chrono::milliseconds(750);
#else
constexpr auto kRaceBudget = std::chrono::milliseconds(1500);
#endif
const std::vector<std::string> kServerArgs = {"--io-threads", "2", "--shards", "4",
                                              "--stripes",    "4"};

class Atomicity : public ServerTest {
 protected:
  Connector Connect() {
    return [this] { return RedisConnection::Tcp(server_->port()); };
  }
  // The sharded engine's count of groups it held whole across shards (INFO
  // kvlab multi_shard_groups), or -1 when the server does not report one.
  long MultiShardGroups() {
    auto client = Connect()();
    if (!client) return -1;
    const std::string info = client->Command({"INFO", "kvlab"}).text;
    const std::string field = "multi_shard_groups:";
    const size_t at = info.find(field);
    if (at == std::string::npos) return -1;
    return std::stol(info.substr(at + field.size()));
  }
  // How many groups the sharded engine held whole across shards while
  // `work` ran on a client of its own, with no other client.
  long HeldGroupsOf(const std::function<void(RedisConnection&)>& work) {
    auto client = Connect()();
    if (!client) return -1;
    const long before = MultiShardGroups();
    work(*client);
    return MultiShardGroups() - before;
  }
  // Moves member 0 of `spelling`'s keys from key 0 to each other key and
  // back (MULTI, remove, add, EXEC), one at a time. With 4 keys over 4
  // shards some of these moves cross shards (the hash is fixed).
  long HeldGroupsOfLoneMoves(const MoveCommands& spelling) {
    return HeldGroupsOf([&](RedisConnection& client) {
      const auto key = [&](int i) { return spelling.prefix + "lone" + std::to_string(i); };
      client.Command({"DEL", key(0), key(1), key(2), key(3)});
      EXPECT_TRUE(client.Command(spelling.add(key(0), 0)).IsInteger(spelling.added_reply));
      for (int to = 1; to < 4; ++to) {
        for (const auto& [from, into] : {std::pair{0, to}, std::pair{to, 0}}) {
          EXPECT_TRUE(SendMoves(client, {spelling.remove(key(from), 0), spelling.add(key(into), 0)},
                                {spelling.removed_reply, spelling.added_reply}, true))
              << spelling.prefix << " " << from << " -> " << into;
        }
      }
    });
  }
  // One MSET of kKeys keys (spread over the shards), or one MULTI of a SET
  // to each of them and EXEC.
  long HeldGroupsOfLoneWrite(bool transaction) {
    return HeldGroupsOf([&](RedisConnection& client) {
      const std::vector<std::string> keys = Keys("lone:");
      if (!transaction) {
        std::vector<std::string> mset = {"MSET"};
        for (const std::string& key : keys) mset.insert(mset.end(), {key, "v"});
        EXPECT_TRUE(client.Command(mset).IsStatus("OK"));
        return;
      }
      EXPECT_TRUE(client.Command({"MULTI"}).IsStatus("OK"));
      for (const std::string& key : keys) client.Command({"SET", key, "v"});
      EXPECT_EQ(client.Command({"EXEC"}).elements.size(), keys.size());
    });
  }
};

TEST_P(Atomicity, NoReaderSeesHalfAnMset) {
  StartServer(kServerArgs);
  const TornCount seen = RaceMultiKeyWritesAndReads(Connect(), false, kRaceBudget, 0);
  EXPECT_GT(seen.reads, 100);
  EXPECT_EQ(seen.torn, 0) << seen.torn << " of " << seen.reads << " MGETs saw half an MSET";
  if (GetParam() == "sharded") {
    EXPECT_GT(HeldGroupsOfLoneWrite(false), 0);
  }
}

TEST_P(Atomicity, NoReaderSeesHalfATransaction) {
  StartServer(kServerArgs);
  const TornCount seen = RaceMultiKeyWritesAndReads(Connect(), true, kRaceBudget, 0);
  EXPECT_GT(seen.reads, 100);
  EXPECT_EQ(seen.torn, 0) << seen.torn << " of " << seen.reads << " reads saw half an EXEC";
  if (GetParam() == "sharded") {
    EXPECT_GT(HeldGroupsOfLoneWrite(true), 0);
  }
}

TEST_P(Atomicity, MsetNxIsAllOrNothing) {
  StartServer(kServerArgs);
  ExpectMsetNxAllOrNothing(Connect());
}

TEST_P(Atomicity, SetNxRaceHasOneWinner) {
  StartServer(kServerArgs);
  ExpectOneSetNxWinner(Connect());
}

TEST_P(Atomicity, CountersAreExactUnderIncrAndWatch) {
  StartServer(kServerArgs);
  ExpectCountersExact(Connect());
}

TEST_P(Atomicity, WatchConflictAbortsExec) {
  StartServer(kServerArgs);
  ExpectWatchConflictAborts(Connect());
}

TEST_P(Atomicity, ListPushAndPopLoseNothing) {
  StartServer(kServerArgs);
  ExpectListPushPopExact(Connect());
}

TEST_P(Atomicity, SetAlgebraAndBitopNeverSeeHalfAMove) {
  StartServer(kServerArgs);
  for (const MoveCommands* spelling : {&kSetMoves, &kSetMoveStores, &kBitMoves, &kZSetMoves}) {
    const TornCount seen = RaceMoves(*spelling, Connect(), kRaceBudget, 0);
    EXPECT_GT(seen.reads, 100);
    EXPECT_EQ(seen.torn, 0) << seen.torn << " of " << seen.reads << " reads of " << spelling->prefix
                            << "* saw a member in no key or in two";
  }
  // What made them whole on `sharded`: a move that crosses shards runs as a held group.
  if (GetParam() == "sharded") {
    for (const MoveCommands* spelling : {&kSetMoves, &kBitMoves, &kZSetMoves}) {
      EXPECT_GT(HeldGroupsOfLoneMoves(*spelling), 0) << spelling->prefix;
    }
  }
}

// The move checker can fail too: under --multikey split the moves (and
// SUNION/SINTER) are torn, and it sees it. (BITOP stays whole: its steps
// depend on one another; the torn EXECs are what it sees. So do SMOVE and
// the set STOREs, and with no EXEC to tear, that race is not run here.)
//
// On `sharded` split tears only when two connection threads' hand-overs
// interleave: each batch enters the shards' inboxes in one short loop, and
// every shard runs its inbox in order, so a reader sees half a move only
// when one loop runs between two sends of the other. That is rare and
// depends on the host: sets tore 2 times in 51,084 reads here alone, never
// in 29,102 with two busy loops beside the test, never in 187,470 on a CI
// host (ec9f123). So on `sharded` the checker's sensitivity is left to the
// engines that tear readily, and what split changes is checked where it is
// decided: no move runs as a held group (under atomic, those that cross
// shards do: SetAlgebraAndBitopNeverSeeHalfAMove).
TEST_P(Atomicity, SplitModeTearsMoves) {
  std::vector<std::string> args = kServerArgs;
  args.insert(args.end(), {"--multikey", "split"});
  StartServer(args);
  for (const MoveCommands* spelling : {&kSetMoves, &kBitMoves, &kZSetMoves}) {
    if (GetParam() == "single") {
      EXPECT_EQ(RaceMoves(*spelling, Connect(), kRaceBudget, 0).torn, 0);
      continue;
    }
    if (GetParam() == "sharded") {
      EXPECT_EQ(HeldGroupsOfLoneMoves(*spelling), 0)
          << "split held a move of " << spelling->prefix << "* whole across shards";
      continue;
    }
    const TornCount seen = RaceMoves(*spelling, Connect(), std::chrono::seconds(30), 1);
    EXPECT_GE(seen.torn, 1) << "no torn read of " << spelling->prefix << "* in " << seen.reads
                            << " reads";
  }
}

// The checker can fail: with --multikey split the engines that run a
// command on several threads tear it, and the checker sees it (it stops at
// the first torn read; the budget is generous for a loaded machine). What
// split keeps atomic (MSETNX, WATCHed EXEC) still passes. On `sharded` a
// tear needs two hand-overs to interleave (SplitModeTearsMoves): with two
// busy loops beside it the first torn MGET took up to 18 s here, so there
// the lone MSET and EXEC are seen not to be held instead.
TEST_P(Atomicity, SplitModeTearsWhatTheCheckerLooksFor) {
  std::vector<std::string> args = kServerArgs;
  args.insert(args.end(), {"--multikey", "split"});
  StartServer(args);
  if (GetParam() == "single") {
    // One thread runs every command whole: split has nothing to tear.
    EXPECT_EQ(RaceMultiKeyWritesAndReads(Connect(), false, kRaceBudget, 0).torn, 0);
    return;
  }
  if (GetParam() == "sharded") {
    EXPECT_EQ(HeldGroupsOfLoneWrite(false), 0) << "split held an MSET whole across shards";
    EXPECT_EQ(HeldGroupsOfLoneWrite(true), 0) << "split held an EXEC whole across shards";
    ExpectMsetNxAllOrNothing(Connect());
    ExpectCountersExact(Connect());
    return;
  }
  const TornCount mset = RaceMultiKeyWritesAndReads(Connect(), false, std::chrono::seconds(30), 1);
  EXPECT_GE(mset.torn, 1) << "no torn MGET in " << mset.reads << " reads";
  const TornCount exec = RaceMultiKeyWritesAndReads(Connect(), true, std::chrono::seconds(30), 1);
  EXPECT_GE(exec.torn, 1) << "no torn EXEC in " << exec.reads << " reads";
  ExpectMsetNxAllOrNothing(Connect());
  ExpectCountersExact(Connect());
}

INSTANTIATE_TEST_SUITE_P(Engines, Atomicity, ::testing::ValuesIn(ServerEngineKinds()), EngineName);

// The reference: redis-server passes the same checker.
TEST(AtomicityReference, RedisServerPassesTheChecker) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  const ::kvlab::test::Connector connect = [&] {
    return RedisConnection::Unix(redis.socket_path());
  };
  EXPECT_EQ(RaceMultiKeyWritesAndReads(connect, false, kRaceBudget, 0).torn, 0);
  EXPECT_EQ(RaceMultiKeyWritesAndReads(connect, true, kRaceBudget, 0).torn, 0);
  ExpectMsetNxAllOrNothing(connect);
  ExpectOneSetNxWinner(connect);
  ExpectCountersExact(connect);
  ExpectWatchConflictAborts(connect);
  ExpectListPushPopExact(connect);
  EXPECT_EQ(RaceMoves(kSetMoves, connect, kRaceBudget, 0).torn, 0);
  EXPECT_EQ(RaceMoves(kSetMoveStores, connect, kRaceBudget, 0).torn, 0);
  EXPECT_EQ(RaceMoves(kBitMoves, connect, kRaceBudget, 0).torn, 0);
  EXPECT_EQ(RaceMoves(kZSetMoves, connect, kRaceBudget, 0).torn, 0);
}

}  // namespace
}  // namespace kvlab::test
