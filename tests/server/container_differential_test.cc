// Container differential test: a seeded random stream of hash, list, set,
// sorted-set and bit commands (each stream in container_streams/), mixed
// with the keyspace and string commands that meet them (TYPE, OBJECT
// ENCODING, DEL, EXPIRE, RENAME, COPY, GET, SET, MGET, INCR, MULTI/EXEC) on
// a few shared keys, so that WRONGTYPE, the deletion of emptied keys, the
// compact encodings' limits and the integer and float formats all come up —
// sent to a real redis-server and to a Session over each engine. Replies
// must be identical byte for byte, except where a reply's order is a hash
// table's (compared as the same elements) or a random pick's (the same
// shape); each type's stream says which. Run twice: in RESP2, and in RESP3
// after HELLO 3 on both sides (maps, sets, doubles, nulls, score pairs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <sstream>

#include "tests/server/container_streams/container_stream.h"
#include "tests/server/redis_reference.h"
#include "tests/server/resp_reply_reader.h"
#include "tests/server/resp_text.h"
#include "tests/server/session_driver.h"

namespace kvlab::test {
namespace {

// An array, or RESP3's set or map (a map's keys and values in turn).
bool IsAggregate(std::string_view reply) {
  return !reply.empty() && (reply[0] == '*' || reply[0] == '~' || reply[0] == '%') &&
         reply.substr(0, 3) != "*-1";
}

// The elements of an aggregate reply (the reply itself when it is not one).
std::vector<std::string> Elements(std::string_view reply) {
  if (!IsAggregate(reply)) return {std::string(reply)};
  return SplitReplies(reply.substr(reply.find("\r\n") + 2));
}

std::string Header(std::string_view reply) {
  return std::string(reply.substr(0, reply.find("\r\n")));
}

// An array's elements, `group` at a time, sorted.
std::vector<std::string> Grouped(std::string_view reply, size_t group) {
  const std::vector<std::string> all = Elements(reply);
  std::vector<std::string> joined;
  for (size_t i = 0; i + group <= all.size(); i += group) {
    std::string item;
    for (size_t j = 0; j < group; ++j) item += all[i + j];
    joined.push_back(item);
  }
  std::sort(joined.begin(), joined.end());
  return joined;
}

bool SameUnordered(std::string_view a, std::string_view b, size_t group) {
  return Header(a) == Header(b) && Grouped(a, group) == Grouped(b, group);
}

bool IsScan(ReplyMatch match) {
  return match == ReplyMatch::kScanUnordered || match == ReplyMatch::kScanUnorderedPairs;
}

size_t ScanGroup(ReplyMatch match) { return match == ReplyMatch::kScanUnordered ? 1 : 2; }

// The text of a bulk string reply ("$1\r\n7\r\n" -> "7").
std::string BulkText(std::string_view reply) {
  const size_t start = reply.find("\r\n") + 2;
  return std::string(reply.substr(start, reply.size() - start - 2));
}

// Redis answered a hashtable's first COUNT buckets (a cursor to go on from);
// kvlab answers the whole container at once (cursor 0). Redis's iteration is
// completed here, from its cursor, on the same key and options: the scan is
// the last command of its chunk, so nothing has changed the key since. The
// two must then hold exactly the same elements (a full iteration returns
// every element present throughout at least once; repeats are dropped).
bool FullScanMatches(RedisReference& redis, std::vector<std::string> command,
                     std::string_view first, std::string_view got, size_t group) {
  const std::vector<std::string> eb = Elements(got);
  if (eb.size() != 2 || eb[0] != "$1\r\n0\r\n") return false;
  std::vector<std::string> from_redis;
  std::string reply(first);
  for (int calls = 0; calls < 100000; ++calls) {
    const std::vector<std::string> ea = Elements(reply);
    if (ea.size() != 2) return false;
    const std::vector<std::string> part = Grouped(ea[1], group);
    from_redis.insert(from_redis.end(), part.begin(), part.end());
    if (ea[0] == "$1\r\n0\r\n") break;
    command[2] = BulkText(ea[0]);
    reply = redis.Exchange(Encode(command), 1);
  }
  std::sort(from_redis.begin(), from_redis.end());
  from_redis.erase(std::unique(from_redis.begin(), from_redis.end()), from_redis.end());
  return Grouped(eb[1], group) == from_redis;  // a repeat or an extra on kvlab's side fails
}

// A random pick's key read whole right before the pick, so that every element
// picked can be checked to be a member (none when the command is no pick).
std::vector<std::string> ListingFor(const std::vector<std::string>& pick) {
  if (pick.size() < 2) return {};
  const std::string name = Lower(pick[0]);
  if (name == "spop" || name == "srandmember") return {"SMEMBERS", pick[1]};
  if (name == "hrandfield") return {"HGETALL", pick[1]};
  if (name == "zrandmember") return {"ZRANGE", pick[1], "0", "-1", "WITHSCORES"};
  return {};
}

ReplyMatch ListingMatch(const std::vector<std::string>& listing) {
  if (listing[0] == "SMEMBERS") return ReplyMatch::kUnorderedElements;
  if (listing[0] == "HGETALL") return ReplyMatch::kUnorderedPairs;
  return ReplyMatch::kExact;  // a sorted set's order is its own
}

// The replies inside a reply, at any depth (the reply itself when it is no aggregate).
void Leaves(std::string_view reply, std::vector<std::string>* out) {
  if (!IsAggregate(reply)) {
    out->emplace_back(reply);
    return;
  }
  for (const std::string& element : Elements(reply)) Leaves(element, out);
}

// Every string or double a pick returned is one of the listing's: a member, a
// field, a value or a score the key held just before.
bool PicksAreMembers(std::string_view pick, std::string_view listing) {
  std::vector<std::string> picked, held;
  Leaves(pick, &picked);
  Leaves(listing, &held);
  std::sort(held.begin(), held.end());
  for (const std::string& leaf : picked) {
    const bool value = (leaf[0] == '$' && leaf != "$-1\r\n") || leaf[0] == ',';
    if (value && !std::binary_search(held.begin(), held.end(), leaf)) return false;
  }
  return true;
}

bool RepliesMatch(ReplyMatch match, std::string_view a, std::string_view b) {
  if (a == b) return true;
  if (match == ReplyMatch::kSameShape && !a.empty() && !b.empty() && a[0] == '$' && b[0] == '$') {
    return (a == "$-1\r\n") == (b == "$-1\r\n");  // a random member, or nil for both
  }
  if (!IsAggregate(a) || !IsAggregate(b)) return false;
  switch (match) {
    case ReplyMatch::kExact:
      return false;
    case ReplyMatch::kUnorderedElements:
      return SameUnordered(a, b, 1);
    case ReplyMatch::kUnorderedPairs: {
      // RESP3 nests each pair ([field, value], HRANDFIELD WITHVALUES): a
      // pair is then one element; a map or a RESP2 array has them flat.
      const std::vector<std::string> first = Elements(a);
      const bool nested = !first.empty() && first[0][0] == '*';
      return SameUnordered(a, b, nested ? 1 : 2);
    }
    case ReplyMatch::kScanUnordered:
    case ReplyMatch::kScanUnorderedPairs: {
      // The same cursor and the same elements; a partial answer from Redis is
      // completed by FullScanMatches.
      std::vector<std::string> ea = Elements(a), eb = Elements(b);
      if (ea.size() != 2 || eb.size() != 2) return false;
      return ea[0] == eb[0] && SameUnordered(ea[1], eb[1], ScanGroup(match));
    }
    case ReplyMatch::kSameShape:
      return Header(a) == Header(b);
  }
  return false;
}

// The keyspace and string commands that meet containers.
std::vector<std::string> NextKeyspace(StreamSource& s) {
  const std::string k = s.Key();
  switch (s.Uniform(0, 15)) {
    case 0:
      return {s.Case("type"), k};
    case 1:
      return {s.Case("object"), s.Case("encoding"), k};
    case 2:
      return {s.Case("del"), k};
    case 3:
      return {s.Case("exists"), k, s.Key()};
    case 4:
      return {s.Case("expire"), k, s.OneIn(3) ? "0" : "1000"};
    case 5:
      return {s.Case("ttl"), k};
    case 6:
      return {s.Case("rename"), k, s.Key()};
    case 7:
      return {s.Case("copy"), k, s.Key(), s.Case("replace")};
    case 8:
      return {s.Case("get"), k};
    case 9:
      return {s.Case("set"), s.OneIn(2) ? "str" : k, s.Value()};
    case 10:
      return {s.Case("mget"), k, s.Key()};
    case 11:
      return {s.Case("incr"), k};
    // (not APPEND: Redis makes its result "raw", kvlab decides from the bytes)
    case 12:
      return {s.Case("strlen"), k};
    case 13:
      return {s.Case("persist"), k};
    case 14:
      return {s.Case("set"), k, "x", s.Case("get")};
    default:
      return {s.Case("dbsize")};
  }
}

void RunContainerStream(const std::string& engine, RespVersion protocol) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  EngineUnderTest kvlab = MakeEngineUnderTest(engine);
  ASSERT_TRUE(kvlab.engine);
  SessionDriver driver(*kvlab.context);
  if (protocol == RespVersion::kResp3) {
    // The replies differ only in the client id.
    const std::string hello = Encode({"HELLO", "3"});
    for (const std::string& reply : {redis.Exchange(hello, 1), driver.Feed(hello)}) {
      ASSERT_EQ(reply.substr(0, 4), "%7\r\n") << Escape(reply);
    }
  }

  const std::vector<ContainerStream> streams = {HashStream(), ListStream(), SetStream(),
                                                ZSetStream(), SortStream(), BitStream()};
  const char* seed_override = std::getenv("KVLAB_DIFFERENTIAL_SEED");
  const uint64_t seed = seed_override ? std::strtoull(seed_override, nullptr, 10) : 20261201;
  // Under ThreadSanitizer the stream's first part only (about a third): TSan
  // looks for races in the hop every command takes, not in which commands run,
  // and each container type's stream still comes up hundreds of times; the
  // normal build sends the whole stream.
#if defined(__SANITIZE_THREAD__)
  constexpr int kCommands = 4000;
#else
  constexpr int kCommands = 12000;
#endif
  StreamSource source(seed);
  ASSERT_EQ(redis.Exchange(Encode({"FLUSHALL"}), 1), "+OK\r\n");
  std::deque<std::string> history;
  int sent = 0;
  while (sent < kCommands) {
    const int chunk = source.Uniform(1, 30);
    std::vector<std::vector<std::string>> commands;
    std::vector<ReplyMatch> matches;
    std::vector<bool> listed;  // [i]: commands[i] is a pick, commands[i - 1] its key's listing
    std::string bytes;
    for (int i = 0; i < chunk; ++i) {
      const size_t first_new = commands.size();
      bool ends_chunk = false;
      const int pick = source.Uniform(0, 99);
      if (pick < 15) {
        commands.push_back(NextKeyspace(source));
        matches.push_back(ReplyMatch::kExact);
      } else if (pick < 17) {
        // A transaction of container commands: EXEC's reply is compared
        // whole, so only commands whose replies are exact, and that need no
        // command after them, go in.
        const ContainerStream& stream = streams[source.Uniform(0, streams.size() - 1)];
        std::vector<std::vector<std::string>> body;
        while (body.size() < 3) {
          std::vector<std::string> command = stream.next(source);
          const bool followed = stream.after && !stream.after(command).empty();
          if (stream.match(command) != ReplyMatch::kExact || followed) continue;
          if (stream.before) {
            std::vector<std::string> first = stream.before(command);
            if (!first.empty()) body.push_back(std::move(first));
          }
          body.push_back(std::move(command));
        }
        commands.push_back({"MULTI"});
        matches.push_back(ReplyMatch::kExact);
        for (auto& command : body) {
          commands.push_back(std::move(command));
          matches.push_back(ReplyMatch::kExact);
        }
        commands.push_back({"EXEC"});
        matches.push_back(ReplyMatch::kExact);
      } else if (pick < 18) {
        commands.push_back({"FLUSHALL"});
        matches.push_back(ReplyMatch::kExact);
      } else {
        const ContainerStream& stream = streams[source.Uniform(0, streams.size() - 1)];
        std::vector<std::string> command = stream.next(source);
        if (stream.before) {
          std::vector<std::string> first = stream.before(command);
          if (!first.empty()) {
            commands.push_back(std::move(first));
            matches.push_back(ReplyMatch::kExact);
          }
        }
        const ReplyMatch match = stream.match(command);
        const std::vector<std::string> listing =
            match == ReplyMatch::kSameShape ? ListingFor(command) : std::vector<std::string>{};
        if (!listing.empty()) {
          commands.push_back(listing);
          matches.push_back(ListingMatch(listing));
          listed.resize(commands.size() + 1, false);
          listed[commands.size()] = true;  // the next command is checked against this
        }
        commands.push_back(std::move(command));
        matches.push_back(match);
        std::vector<std::string> follow;
        if (stream.after) follow = stream.after(commands.back());
        if (!follow.empty()) {
          commands.push_back(std::move(follow));
          matches.push_back(ReplyMatch::kExact);
        }
        // the chunk's last, so that FullScanMatches may go on from Redis's cursor
        ends_chunk = IsScan(match) && follow.empty();
      }
      for (size_t j = first_new; j < commands.size(); ++j) bytes += Encode(commands[j]);
      if (ends_chunk) break;
    }
    if (std::getenv("KVLAB_DIFFERENTIAL_TRACE")) {
      for (const auto& command : commands) {
        for (const auto& a : command) std::cerr << '"' << Escape(a.substr(0, 30)) << "\" ";
        std::cerr << "\n";
      }
    }
    const std::vector<std::string> expected = SplitReplies(redis.Exchange(bytes, commands.size()));
    const std::vector<std::string> actual = SplitReplies(driver.Feed(bytes));
    ASSERT_EQ(expected.size(), commands.size()) << "redis answered fewer replies";
    ASSERT_EQ(actual.size(), commands.size())
        << "kvlab answered " << actual.size() << " replies to " << commands.size()
        << " commands (seed " << seed << ")";
    listed.resize(commands.size(), false);
    for (size_t i = 0; i < commands.size(); ++i) {
      const std::string got = i < actual.size() ? actual[i] : "<missing>";
      // TTL after EXPIRE 1000: the two servers' clocks differ by a second at most.
      const bool ttl =
          Lower(commands[i][0]) == "ttl" && got.size() > 1 && got[0] == ':' &&
          expected[i].size() > 1 && expected[i][0] == ':' &&
          std::llabs(std::atoll(got.c_str() + 1) - std::atoll(expected[i].c_str() + 1)) <= 1;
      const bool members = !listed[i] || PicksAreMembers(got, actual[i - 1]);
      if (members && (RepliesMatch(matches[i], expected[i], got) || ttl)) continue;
      if (members && IsScan(matches[i]) && i + 1 == commands.size() &&
          FullScanMatches(redis, commands[i], expected[i], got, ScanGroup(matches[i]))) {
        continue;
      }
      std::ostringstream context;
      for (const std::string& line : history) context << line << "\n           ";
      for (const auto& a : commands[i]) context << '"' << Escape(a) << "\" ";
      FAIL() << "first divergence at command #" << (sent + i) << " (seed " << seed << ", engine "
             << engine << ", RESP" << static_cast<int>(protocol)
             << ")\n  command: " << context.str()
             << "\n  redis:   " << Escape(expected[i].substr(0, 400))
             << "\n  kvlab:   " << Escape(got.substr(0, 400))
             << (members ? "" : "\n  (kvlab picked an element its key did not hold)");
    }
    for (size_t i = 0; i < commands.size(); ++i) {
      std::string line;
      for (const auto& a : commands[i]) line += '"' + Escape(a.substr(0, 40)) + "\" ";
      history.push_back(line + "=> " + Escape(expected[i].substr(0, 60)));
      if (history.size() > 30) history.pop_front();
    }
    sent += static_cast<int>(commands.size());
  }
}

class ContainerDifferentialTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ContainerDifferentialTest, RandomContainerStreamMatchesRedis) {
  RunContainerStream(GetParam(), RespVersion::kResp2);
}

TEST_P(ContainerDifferentialTest, RandomContainerStreamAfterHelloThreeMatchesRedis) {
  RunContainerStream(GetParam(), RespVersion::kResp3);
}

INSTANTIATE_TEST_SUITE_P(Engines, ContainerDifferentialTest, ::testing::ValuesIn(AllEngineKinds()),
                         EngineTestName);

}  // namespace
}  // namespace kvlab::test
