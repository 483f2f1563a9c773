// Differential test: one seeded random command stream — binary keys and
// values (NUL, CR, LF), every supported command with valid and invalid
// options, wrong arity, unknown commands, INCR on non-integers and at the
// int64 edges, INCRBYFLOAT's formatting, multi-key commands, RENAME/COPY,
// MULTI/EXEC/DISCARD with WATCH, far-future expiries — sent to a real
// redis-server and to a Session over each engine. Replies must be identical
// byte for byte; the tolerances: TTL/PTTL/EXPIRETIME/PEXPIRETIME of keys
// with a relative expiry (the two servers run at slightly different
// instants), and KEYS, whose order is the hash table's (compared sorted).
// SCAN, RANDOMKEY and OBJECT ENCODING have tests of their own below.
//
// Also: each malformed-protocol form on a fresh connection; the error reply
// and the close must match Redis.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <cstdio>
#include <random>
#include <sstream>

#include "engines/containers/encoding_limits.h"
#include "engines/rules/redis_integer.h"
#include "server/append_log.h"
#include "server/command_table.h"
#include "tests/server/redis_reference.h"
#include "tests/server/resp_reply_reader.h"
#include "tests/server/resp_text.h"
#include "tests/server/session_driver.h"

namespace kvlab::test {
namespace {

class StreamGenerator {
 public:
  explicit StreamGenerator(uint64_t seed) : rng_(seed) {
    auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
    exat_base_ = now_s + 50'000'000;
  }

  std::vector<std::string> Next() {
    int pick = Uniform(0, 149);
    if (pick >= 90) return NextNewer(pick);
    const std::string k = Key();
    if (pick < 12) return {Case("get"), k};
    if (pick < 26) return SetCommand(k);
    if (pick < 28) return {Case("setnx"), k, Value()};
    if (pick < 30) return {Case("getset"), k, Value()};
    if (pick < 34) return Multi(Case("del"), 1, 3);
    if (pick < 37) return Multi(Case("exists"), 1, 3);
    if (pick < 41) return {Case("incr"), k};
    if (pick < 43) return {Case("decr"), k};
    if (pick < 46) return {Case("incrby"), k, Delta()};
    if (pick < 48) return {Case("decrby"), k, Delta()};
    if (pick < 52) return Multi(Case("mget"), 1, 4);
    if (pick < 55) {
      auto cmd = std::vector<std::string>{Case("mset")};
      int pairs = Uniform(1, 3);
      for (int i = 0; i < pairs; ++i) {
        cmd.push_back(Key());
        cmd.push_back(Value());
      }
      if (Uniform(0, 5) == 0) cmd.pop_back();  // odd count: wrong arity
      return cmd;
    }
    if (pick < 59) return {Case("append"), k, Value()};
    if (pick < 61) return {Case("strlen"), k};
    if (pick < 67) return ExpireCommand(k);
    if (pick < 70) return {Case(Uniform(0, 1) ? "ttl" : "pttl"), k};
    if (pick < 72) return {Case("persist"), k};
    if (pick < 73) return {Case("dbsize")};
    if (pick < 75) return {Case("echo"), Value()};
    if (pick < 77)
      return Uniform(0, 1) ? std::vector<std::string>{Case("ping")}
                           : std::vector<std::string>{Case("ping"), Value()};
    if (pick < 78) return {Case("select"), SelectIndex()};
    if (pick < 81) return WrongArity(k);
    if (pick < 84) {  // unknown command, binary args included
      std::vector<std::string> cmd = {Uniform(0, 1) ? "nosuchcmd" : Binary(1, 12)};
      int n = Uniform(0, 4);
      for (int i = 0; i < n; ++i) cmd.push_back(Uniform(0, 1) ? Binary(0, 80) : Value());
      return cmd;
    }
    if (pick < 85) return {Case("flushdb")};
    if (pick < 86) return {Case("flushall"), Uniform(0, 1) ? "sync" : "bogus"};
    if (pick < 88) return {Case("auth"), Value()};
    if (pick < 89) return {Case("ping"), "a", "b"};
    return {Case("get"), k};
  }

  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

 private:
  // The commands added with the string and keyspace family, transactions.
  std::vector<std::string> NextNewer(int pick) {
    const std::string k = Key();
    if (pick < 92) return {Case("getdel"), k};
    if (pick < 95) return GetExCommand(k);
    if (pick < 97)
      return {Case(Uniform(0, 1) ? "setex" : "psetex"), k, ExpireAmount(Uniform(0, 1)), Value()};
    if (pick < 100) return {Case("incrbyfloat"), k, FloatDelta()};
    if (pick < 102) return {Case("setrange"), k, Offset(), Value()};
    if (pick < 104) return {Case(Uniform(0, 3) ? "getrange" : "substr"), k, Index(), Index()};
    if (pick < 106) {
      auto cmd = std::vector<std::string>{Case("msetnx")};
      int pairs = Uniform(1, 3);
      for (int i = 0; i < pairs; ++i) {
        cmd.push_back(Key());
        cmd.push_back(Value());
      }
      if (Uniform(0, 6) == 0) cmd.pop_back();
      return cmd;
    }
    if (pick < 108) return LcsCommand(k);
    if (pick < 110) return ExpireAtCommand(k);
    if (pick < 112) return {Case(Uniform(0, 1) ? "expiretime" : "pexpiretime"), k};
    if (pick < 114) return {Case("type"), k};
    if (pick < 116) return Multi(Case(Uniform(0, 1) ? "touch" : "unlink"), 1, 3);
    if (pick < 119) return {Case(Uniform(0, 1) ? "rename" : "renamenx"), k, Key()};
    if (pick < 121) return CopyCommand(k);
    if (pick < 122) {
      // Patterns that match one key at most: inside EXEC a KEYS reply is
      // an element whose order could not be compared (KeysMatchRedis does).
      static const char* const patterns[] = {"count*", "b?g", "*\xfe", "k[3]", "nokey*", "\\*"};
      return {Case("keys"), patterns[Uniform(0, std::size(patterns) - 1)]};
    }
    if (pick < 123)
      return {Case(Uniform(0, 1) ? "function" : "script"), Case("flush"),
              Uniform(0, 2) ? "sync" : (Uniform(0, 1) ? "async" : "bad")};
    return TransactionCommand(k);
  }
  std::vector<std::string> GetExCommand(const std::string& k) {
    std::vector<std::string> cmd = {Case("getex"), k};
    switch (Uniform(0, 7)) {
      case 0:
        break;
      case 1:
        cmd.push_back(Case("persist"));
        break;
      case 2:
        cmd.push_back(Case("ex"));
        cmd.push_back(ExpireAmount(true));
        break;
      case 3:
        cmd.push_back(Case("px"));
        cmd.push_back(ExpireAmount(false));
        break;
      case 4:
        cmd.push_back(Case("exat"));
        cmd.push_back(std::to_string(exat_base_ + Uniform(0, 1'000'000)));
        break;
      case 5:
        cmd.push_back(Case("pxat"));
        cmd.push_back(Uniform(0, 1) ? "1" : "abc");
        break;
      case 6:
        cmd.push_back(Case("persist"));
        cmd.push_back(Case("ex"));
        cmd.push_back("10");
        break;
      default:
        cmd.push_back(Case("keepttl"));
        break;
    }
    return cmd;
  }
  std::string FloatDelta() {
    static const char* const deltas[] = {"1",        "-1.5", "0.1",
                                         "3.0e2",    "1e-5", "abc",
                                         "",         " 1",   "inf",
                                         "-inf",     "nan",  "9223372036854775807",
                                         "1.5e4000", "0x10", "5.0000000000000000001"};
    return deltas[Uniform(0, std::size(deltas) - 1)];
  }
  std::string Offset() {
    // 536870912 always exceeds proto-max-bulk-len with a value (a smaller
    // huge offset would make both servers build a 512 MB string).
    static const char* const offsets[] = {"0",  "1",   "3",         "17",
                                          "-1", "abc", "536870912", "9223372036854775807"};
    return offsets[Uniform(0, std::size(offsets) - 1)];
  }
  std::string Index() {
    static const char* const indexes[] = {"0",
                                          "1",
                                          "2",
                                          "-1",
                                          "-2",
                                          "-100",
                                          "100",
                                          "x",
                                          "9223372036854775807",
                                          "-9223372036854775808"};
    return indexes[Uniform(0, std::size(indexes) - 1)];
  }
  std::vector<std::string> LcsCommand(const std::string& k) {
    std::vector<std::string> cmd = {Case("lcs"), k, Key()};
    int options = Uniform(0, 3);
    for (int i = 0; i < options; ++i) {
      switch (Uniform(0, 5)) {
        case 0:
          cmd.push_back(Case("len"));
          break;
        case 1:
          cmd.push_back(Case("idx"));
          break;
        case 2:
          cmd.push_back(Case("withmatchlen"));
          break;
        case 3:
          cmd.push_back(Case("minmatchlen"));
          cmd.push_back(Uniform(0, 1) ? "2" : "-1");
          break;
        case 4:
          cmd.push_back(Case("minmatchlen"));
          break;
        default:
          cmd.push_back("bogus");
          break;
      }
    }
    return cmd;
  }
  std::vector<std::string> ExpireAtCommand(const std::string& k) {
    bool seconds = Uniform(0, 1);
    std::string when;
    switch (Uniform(0, 4)) {
      case 0:
        when = "1";
        break;  // in the past: deletes the key
      case 1:
        when = "abc";
        break;
      case 2:
        when = "9223372036854775807";
        break;
      default:
        when = std::to_string(seconds ? exat_base_ + Uniform(0, 1000)
                                      : (exat_base_ + Uniform(0, 1000)) * 1000);
    }
    std::vector<std::string> cmd = {Case(seconds ? "expireat" : "pexpireat"), k, when};
    static const char* const names[] = {"nx", "xx", "gt", "lt"};
    if (Uniform(0, 2) == 0) cmd.push_back(Case(names[Uniform(0, 3)]));
    return cmd;
  }
  std::vector<std::string> CopyCommand(const std::string& k) {
    std::vector<std::string> cmd = {Case("copy"), k, Key()};
    switch (Uniform(0, 5)) {
      case 0:
        cmd.push_back(Case("replace"));
        break;
      case 1:
        cmd.push_back(Case("db"));
        cmd.push_back("0");
        break;
      case 2:
        cmd.push_back(Case("db"));
        cmd.push_back("x");
        break;
      case 3:
        cmd.push_back("bogus");
        break;
      default:
        break;
    }
    return cmd;
  }
  std::vector<std::string> TransactionCommand(const std::string& k) {
    switch (Uniform(0, 9)) {
      case 0:
      case 1:
      case 2:
        return {Case("multi")};
      case 3:
      case 4:
      case 5:
        return {Case("exec")};
      case 6:
        return {Case("discard")};
      case 7:
        return Multi(Case("watch"), 1, 2);
      case 8:
        return {Case("unwatch")};
      default:
        return {Case("watch")};  // wrong arity
    }
    (void)k;
  }
  std::string Case(std::string name) {
    if (Uniform(0, 3) == 0)
      for (char& c : name) c = static_cast<char>(toupper(c));
    return name;
  }
  std::string Binary(int min_len, int max_len) {
    std::string s(Uniform(min_len, max_len), '\0');
    const char alphabet[] = {'\0', '\r', '\n', 'a', 'b', ' ', '"', '\'', '\xff', '7', '$', '*'};
    for (char& c : s) c = alphabet[Uniform(0, sizeof alphabet - 1)];
    return s;
  }
  std::string Key() {
    static const char* const keys[] = {"k0", "k1", "k2", "k3", "k4", "counter", "", "big"};
    int pick = Uniform(0, 10);
    if (pick < 8) return keys[pick];
    if (pick == 8) return std::string("bin\0key", 7);
    if (pick == 9) return "\r\nkey\n";
    return "\xff\xfe";
  }
  std::string Value() {
    static const char* const values[] = {"",
                                         "0",
                                         "1",
                                         "-1",
                                         "123",
                                         "9223372036854775807",
                                         "-9223372036854775808",
                                         "9223372036854775808",
                                         "abc",
                                         " 12",
                                         "012",
                                         "+5",
                                         "1.5",
                                         "-0",
                                         "99999999999999999999"};
    if (Uniform(0, 2) == 0) return Binary(0, 40);
    return values[Uniform(0, std::size(values) - 1)];
  }
  // Redis has 16 databases and kvlab one: SELECT 1..15 is the one intended
  // difference, so the stream never asks for those.
  std::string SelectIndex() {
    std::string index = Uniform(0, 1) ? "0" : Value();
    std::optional<int64_t> n = ParseRedisInt64(index);
    return (n && *n >= 1 && *n <= 15) ? "16" : index;
  }
  std::string Delta() {
    static const char* const deltas[] = {
        "1", "-1", "5", "100", "9223372036854775807", "-9223372036854775808", "x", "", "1.0", "0"};
    return deltas[Uniform(0, std::size(deltas) - 1)];
  }
  std::string FarSeconds() { return std::to_string(Uniform(100'000, 50'000'000)); }
  std::string ExpireAmount(bool seconds) {
    switch (Uniform(0, 9)) {
      case 0:
        return "-5";  // in the past: deletes the key
      case 1:
        return "abc";
      case 2:
        return "9223372036854775807";  // overflows once in ms or made absolute
      case 3:
        return "0";
      default:
        return seconds ? FarSeconds() : FarSeconds() + "123";
    }
  }
  std::vector<std::string> SetCommand(const std::string& k) {
    std::vector<std::string> cmd = {Case("set"), k, Value()};
    int options = Uniform(0, 3);
    for (int i = 0; i < options; ++i) {
      switch (Uniform(0, 11)) {
        case 0:
          cmd.push_back(Case("nx"));
          break;
        case 1:
          cmd.push_back(Case("xx"));
          break;
        case 2:
          cmd.push_back(Case("get"));
          break;
        case 3:
          cmd.push_back(Case("keepttl"));
          break;
        case 4:
          cmd.push_back(Case("ex"));
          cmd.push_back(ExpireAmount(true));
          break;
        case 5:
          cmd.push_back(Case("px"));
          cmd.push_back(ExpireAmount(false));
          break;
        case 6:
          cmd.push_back(Case("exat"));
          cmd.push_back(std::to_string(exat_base_ + Uniform(0, 1'000'000)));
          break;
        case 7:
          cmd.push_back(Case("pxat"));
          cmd.push_back(std::to_string((exat_base_ + Uniform(0, 1'000'000)) * 1000));
          break;
        case 8:
          cmd.push_back(Case("ex"));
          break;  // missing amount
        case 9:
          cmd.push_back("bogus");
          break;
        case 10:
          cmd.push_back(Case("ex"));
          cmd.push_back("-3");
          break;
        default:
          cmd.push_back(Case("px"));
          cmd.push_back("abc");
          break;
      }
    }
    return cmd;
  }
  std::vector<std::string> ExpireCommand(const std::string& k) {
    bool seconds = Uniform(0, 1);
    std::vector<std::string> cmd = {Case(seconds ? "expire" : "pexpire"), k, ExpireAmount(seconds)};
    int flags = Uniform(0, 4) == 0 ? Uniform(1, 2) : 0;
    static const char* const names[] = {"nx", "xx", "gt", "lt", "zz"};
    for (int i = 0; i < flags; ++i) cmd.push_back(Case(names[Uniform(0, 4)]));
    return cmd;
  }
  std::vector<std::string> Multi(std::string name, int lo, int hi) {
    std::vector<std::string> cmd = {std::move(name)};
    int n = Uniform(lo, hi);
    for (int i = 0; i < n; ++i) cmd.push_back(Key());
    return cmd;
  }
  std::vector<std::string> WrongArity(const std::string& k) {
    switch (Uniform(0, 7)) {
      case 0:
        return {Case("get")};
      case 1:
        return {Case("get"), k, k};
      case 2:
        return {Case("set"), k};
      case 3:
        return {Case("incr")};
      case 4:
        return {Case("mget")};
      case 5:
        return {Case("ttl"), k, "x"};
      case 6:
        return {Case("echo")};
      default:
        return {Case("dbsize"), "x"};
    }
  }

  std::mt19937_64 rng_;
  int64_t exat_base_;
};

bool IsTimeDependent(const std::vector<std::string>& cmd, std::string_view a, std::string_view b) {
  std::string name = cmd[0];
  for (char& c : name) c = static_cast<char>(tolower(c));
  const bool seconds = name == "ttl" || name == "expiretime";
  if ((!seconds && name != "pttl" && name != "pexpiretime") || a.empty() || b.empty() ||
      a[0] != ':' || b[0] != ':') {
    return false;
  }
  long long x = std::stoll(std::string(a.substr(1)));
  long long y = std::stoll(std::string(b.substr(1)));
  long long tolerance = seconds ? 1 : 3000;
  return x > 0 && y > 0 && std::llabs(x - y) <= tolerance;
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(tolower(c));
  return text;
}

// EXEC's replies, element by element, with each queued command's own
// tolerance (a PTTL inside a transaction runs at each server's instant).
bool ExecRepliesMatch(const std::vector<std::vector<std::string>>& queued, std::string_view a,
                      std::string_view b) {
  if (a.empty() || b.empty() || a[0] != '*' || b[0] != '*') return false;
  const std::string_view header_a = a.substr(0, a.find("\r\n") + 2);
  if (header_a != b.substr(0, b.find("\r\n") + 2)) return false;
  const std::vector<std::string> elements_a = SplitReplies(a.substr(header_a.size()));
  const std::vector<std::string> elements_b = SplitReplies(b.substr(header_a.size()));
  if (elements_a.size() != queued.size() || elements_b.size() != queued.size()) return false;
  for (size_t i = 0; i < queued.size(); ++i) {
    if (elements_a[i] != elements_b[i] &&
        !IsTimeDependent(queued[i], elements_a[i], elements_b[i])) {
      return false;
    }
  }
  return true;
}

// An array reply's elements, sorted (KEYS answers in hash-table order).
std::vector<std::string> SortedElements(std::string_view reply) {
  if (reply.empty() || reply[0] != '*') return {std::string(reply)};
  std::vector<std::string> all = SplitReplies(reply.substr(reply.find("\r\n") + 2));
  std::sort(all.begin(), all.end());
  return all;
}

// Sends each input on a fresh connection to Redis and to a fresh Session;
// the bytes before the close and the close itself must match. kvlab answers
// first, so the wait for Redis can be generous where an answer is due (a
// loaded machine may be slow) and short where none is.
void CompareFreshConnections(const RedisReference& redis, const std::string& kind,
                             const ServerSettings& settings,
                             const std::vector<std::string>& inputs) {
  for (const std::string& input : inputs) {
    EngineUnderTest kvlab = MakeEngineUnderTest(kind, settings);
    ASSERT_TRUE(kvlab.engine);
    SessionDriver driver(*kvlab.context);
    std::string actual = driver.Feed(input);

    int fd = redis.Connect();
    ASSERT_GE(fd, 0);
    send(fd, input.data(), input.size(), MSG_NOSIGNAL);
    std::string expected;
    bool redis_closed = false;
    char buf[4096];
    while (true) {
      // Long while kvlab's answer (or close) is still outstanding from Redis;
      // then 100 ms of silence means "nothing more, still open".
      bool outstanding = expected.size() < actual.size() || driver.closed();
      timeval timeout = outstanding ? timeval{5, 0} : timeval{0, 100000};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
      ssize_t n = read(fd, buf, sizeof buf);
      if (n == 0) {
        redis_closed = true;
        break;
      }
      if (n < 0) break;
      expected.append(buf, static_cast<size_t>(n));
    }
    close(fd);
    EXPECT_EQ(Escape(actual), Escape(expected)) << "input: " << Escape(input.substr(0, 80));
    EXPECT_EQ(driver.closed(), redis_closed) << "input: " << Escape(input.substr(0, 80));
  }
}

// Switches both connections to RESP3 (HELLO 3). The replies differ only in
// the client id, so each is checked for the RESP3 map of proto 3.
void SwitchBothToResp3(RedisReference& redis, SessionDriver& driver) {
  const std::string hello = Encode({"HELLO", "3"});
  for (const std::string& reply : {redis.Exchange(hello, 1), driver.Feed(hello)}) {
    EXPECT_EQ(reply.substr(0, 4), "%7\r\n") << Escape(reply);
    EXPECT_NE(reply.find("$5\r\nproto\r\n:3\r\n"), std::string::npos) << Escape(reply);
  }
}

// The main stream, in RESP2 or (after HELLO 3 on both sides) RESP3; with
// `logged`, kvlab appends every write to an append-only file meanwhile
// (appendfsync always), which must not change a byte of a reply.
void RunRandomStream(const std::string& engine, RespVersion protocol, bool logged = false) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  EngineUnderTest kvlab = MakeEngineUnderTest(engine);
  ASSERT_TRUE(kvlab.engine);
  // The append-only file's folder goes when the case passed (a failure keeps
  // it to look at); before, every run left one in the working directory.
  struct RemovedWhenPassed {
    std::filesystem::path folder;
    ~RemovedWhenPassed() {
      if (folder.empty() || ::testing::Test::HasFailure()) return;
      std::error_code ignored;
      std::filesystem::remove_all(folder, ignored);
      std::filesystem::remove(folder.parent_path(), ignored);  // only if no other is left
    }
  } aof_folder;
  std::unique_ptr<AppendLog> log;
  if (logged) {
    const std::filesystem::path folder = std::filesystem::current_path() / "differential-aof" /
                                         (engine + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(folder);
    std::filesystem::create_directories(folder);
    aof_folder.folder = folder;
    ASSERT_TRUE(
        AppendLog::Open((folder / "appendonly.aof").string(), 0, AppendFsync::kAlways, &log).ok());
    kvlab.context->append_log = log.get();
  }
  SessionDriver driver(*kvlab.context);
  if (protocol == RespVersion::kResp3) SwitchBothToResp3(redis, driver);

  // KVLAB_DIFFERENTIAL_SEED explores other streams by hand; CI runs this one.
  const char* seed_override = std::getenv("KVLAB_DIFFERENTIAL_SEED");
  const uint64_t kSeed = seed_override ? std::strtoull(seed_override, nullptr, 10) : 20260701;
  // Under ThreadSanitizer the stream's first part only (about a third): TSan
  // looks for races in the hop every command takes, not in which commands run,
  // and each command still comes up dozens of times; the normal build sends
  // the whole stream.
#if defined(__SANITIZE_THREAD__)
  constexpr int kCommands = 6000;
#else
  constexpr int kCommands = 20000;
#endif
  StreamGenerator gen(kSeed);
  ASSERT_EQ(redis.Exchange(Encode({"FLUSHALL"}), 1), "+OK\r\n");
  int sent = 0;
  std::deque<std::string> history;               // the last commands and Redis's replies
  std::vector<std::vector<std::string>> queued;  // since MULTI, as Redis queued them
  while (sent < kCommands) {
    // Pipelines of 1..40 commands exercise the batch path.
    int chunk = gen.Uniform(1, 40);
    std::vector<std::vector<std::string>> cmds;
    std::string bytes;
    for (int i = 0; i < chunk; ++i) {
      cmds.push_back(gen.Next());
      bytes += Encode(cmds.back());
    }
    std::vector<std::string> expected = SplitReplies(redis.Exchange(bytes, cmds.size()));
    std::vector<std::string> actual = SplitReplies(driver.Feed(bytes));
    ASSERT_EQ(expected.size(), cmds.size()) << "redis answered fewer replies";
    for (size_t i = 0; i < cmds.size(); ++i) {
      std::string got = i < actual.size() ? actual[i] : "<missing>";
      const std::string name = Lower(cmds[i][0]);
      const bool was_queued = expected[i] == "+QUEUED\r\n";
      if (was_queued) queued.push_back(cmds[i]);
      if (name == "multi" && expected[i] == "+OK\r\n") queued.clear();
      const bool exec_matches = name == "exec" && ExecRepliesMatch(queued, expected[i], got);
      if (name == "exec" || name == "discard") queued.clear();
      if (got == expected[i] || exec_matches || IsTimeDependent(cmds[i], expected[i], got)) {
        continue;
      }
      std::ostringstream command;
      // The commands before it (a transaction's queue, its WATCHes).
      for (const std::string& line : history) command << line << "\n           ";
      for (const auto& a : cmds[i]) command << '"' << Escape(a) << "\" ";
      FAIL() << "first divergence at command #" << (sent + i) << " (seed " << kSeed << ", engine "
             << engine << ", RESP" << static_cast<int>(protocol)
             << ")\n  command: " << command.str() << "\n  redis:   " << Escape(expected[i])
             << "\n  kvlab:   " << Escape(got);
    }
    ASSERT_EQ(actual.size(), cmds.size());
    for (size_t i = 0; i < cmds.size(); ++i) {
      std::string line;
      for (const auto& a : cmds[i]) line += '"' + Escape(a) + "\" ";
      history.push_back(line + "=> " + Escape(expected[i].substr(0, 60)));
      if (history.size() > 40) history.pop_front();
    }
    sent += chunk;
  }
}

// The compact-encoding limits are the process's (one redis-server's), and a
// case may CONFIG SET them: each case starts and ends at Redis's defaults, as
// the fresh redis-server it compares with does, whatever ran before it in this
// process (CTest runs each case alone; a developer may run the binary whole).
class DifferentialTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { CompactEncodingLimits().Reset(); }
  void TearDown() override { CompactEncodingLimits().Reset(); }
};

TEST_P(DifferentialTest, RandomStreamMatchesRedisByteForByte) {
  RunRandomStream(GetParam(), RespVersion::kResp2);
}

TEST_P(DifferentialTest, RandomStreamAfterHelloThreeMatchesRedisByteForByte) {
  RunRandomStream(GetParam(), RespVersion::kResp3);
}

TEST_P(DifferentialTest, RandomStreamWithTheAppendOnlyFileMatchesRedisByteForByte) {
  RunRandomStream(GetParam(), RespVersion::kResp2, /*logged=*/true);
}

// The whole-keyspace commands, on the same 300 keys in both servers: KEYS
// (sorted: the order is each hash table's), a full SCAN iteration (the same
// set; kvlab returns each key exactly once), SCAN's TYPE filter, RANDOMKEY
// (a key that exists; nil when empty), OBJECT ENCODING of strings SET with
// integer, short, 44/45-byte and long values (byte for byte), and TIME.
TEST_P(DifferentialTest, KeyspaceIterationMatchesRedis) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  EngineUnderTest kvlab = MakeEngineUnderTest(GetParam());
  ASSERT_TRUE(kvlab.engine);
  SessionDriver driver(*kvlab.context);
  auto both = [&](const std::vector<std::string>& cmd) {
    const std::string bytes = Encode(cmd);
    return std::make_pair(redis.Exchange(bytes, 1), driver.Feed(bytes));
  };
  ASSERT_EQ(both({"FLUSHALL"}).first, "+OK\r\n");
  {
    const auto [expected, actual] = both({"RANDOMKEY"});
    EXPECT_EQ(expected, "$-1\r\n");
    EXPECT_EQ(actual, expected);
  }
  std::vector<std::string> keys;
  for (int i = 0; i < 300; ++i) {
    std::string key = (i % 3 ? "k" : "other:") + std::to_string(i);
    if (i % 50 == 7) key += std::string("\0\r\n", 3);
    std::string value;
    switch (i % 6) {
      case 0:
        value = std::to_string(i * 7919 - 1000);
        break;  // int
      case 1:
        value = "v" + std::to_string(i);
        break;  // embstr
      case 2:
        value = std::string(44, 'e');
        break;  // embstr, at the limit
      case 3:
        value = std::string(45, 'r');
        break;  // raw
      case 4:
        value = "12345678901234567890123";
        break;  // too long for int
      default:
        value = std::string(1000, 'x');
        break;  // raw
    }
    keys.push_back(key);
    const auto [expected, actual] = both({"SET", key, value});
    ASSERT_EQ(actual, expected);
  }
  for (const std::string& key : keys) {
    const auto [expected, actual] = both({"OBJECT", "ENCODING", key});
    EXPECT_EQ(Escape(actual), Escape(expected)) << "OBJECT ENCODING " << Escape(key);
  }
  for (const std::string pattern : {"*", "k1*", "*[0-3]", "other:?", "*\r\n"}) {
    const auto [expected, actual] = both({"KEYS", pattern});
    EXPECT_EQ(SortedElements(actual), SortedElements(expected)) << "KEYS " << Escape(pattern);
  }
  // A whole SCAN iteration: the cursor values differ (Redis walks its
  // buckets), the keys do not.
  auto scan_all = [&](bool kvlab_side, const std::vector<std::string>& options) {
    std::vector<std::string> seen;
    std::string cursor = "0";
    for (int calls = 0; calls < 10000; ++calls) {
      std::vector<std::string> cmd = {"SCAN", cursor};
      cmd.insert(cmd.end(), options.begin(), options.end());
      const std::string bytes = Encode(cmd);
      const std::string reply = kvlab_side ? driver.Feed(bytes) : redis.Exchange(bytes, 1);
      std::vector<std::string> parts = SplitReplies(reply.substr(reply.find("\r\n") + 2));
      EXPECT_EQ(parts.size(), 2u) << Escape(reply);
      if (parts.size() != 2) break;
      cursor = SplitReplies(parts[0]).empty() ? "0" : parts[0].substr(parts[0].find("\r\n") + 2);
      cursor = cursor.substr(0, cursor.find("\r\n"));
      for (const std::string& key : SortedElements(parts[1])) seen.push_back(key);
      if (cursor == "0") break;
    }
    return seen;
  };
  for (const std::vector<std::string>& options :
       std::vector<std::vector<std::string>>{{},
                                             {"COUNT", "7"},
                                             {"MATCH", "k2*", "COUNT", "3"},
                                             {"TYPE", "string"},
                                             {"TYPE", "hash"}}) {
    std::vector<std::string> from_kvlab = scan_all(true, options);
    std::vector<std::string> from_redis = scan_all(false, options);
    std::sort(from_kvlab.begin(), from_kvlab.end());
    std::sort(from_redis.begin(), from_redis.end());
    EXPECT_TRUE(std::adjacent_find(from_kvlab.begin(), from_kvlab.end()) == from_kvlab.end())
        << "kvlab's SCAN returned a key twice";
    from_redis.erase(std::unique(from_redis.begin(), from_redis.end()), from_redis.end());
    EXPECT_EQ(from_kvlab, from_redis) << "SCAN with " << options.size() << " option words";
  }
  {
    // TIME: the same shape, the same second (give or take one).
    const auto [expected, actual] = both({"TIME"});
    const std::vector<std::string> ours = SplitReplies(actual.substr(actual.find("\r\n") + 2));
    const std::vector<std::string> theirs =
        SplitReplies(expected.substr(expected.find("\r\n") + 2));
    ASSERT_EQ(actual.substr(0, 4), "*2\r\n");
    ASSERT_EQ(ours.size(), 2u);
    ASSERT_EQ(theirs.size(), 2u);
    auto number = [](const std::string& bulk) {
      return std::stoll(bulk.substr(bulk.find("\r\n") + 2));
    };
    EXPECT_LE(std::llabs(number(ours[0]) - number(theirs[0])), 1);
    EXPECT_GE(number(ours[1]), 0);
    EXPECT_LT(number(ours[1]), 1000000);
  }
  for (int i = 0; i < 20; ++i) {
    const std::string reply = driver.Feed(Encode({"RANDOMKEY"}));
    const std::vector<std::string> element = SplitReplies(reply);
    ASSERT_EQ(element.size(), 1u);
    const std::string key =
        reply.substr(reply.find("\r\n") + 2, reply.size() - reply.find("\r\n") - 4);
    EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << Escape(reply);
  }
}

// Redis's encoding knobs (both their ziplist and listpack names) through
// CONFIG SET/GET, and the encodings and OBJECT replies they lead to, as
// redis-server 7.0.15 gives them: the knobs Redis's own test units set
// before their first test, each container crossing its threshold, a knob
// refused with Redis's error, and OBJECT REFCOUNT/FREQ of plain and shared
// values. IDLETIME is left out: Redis reads it from a clock that ticks in
// serverCron, so two servers may differ by a second.
TEST_P(DifferentialTest, EncodingKnobsAndObjectRepliesMatchRedis) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  EngineUnderTest kvlab = MakeEngineUnderTest(GetParam());
  ASSERT_TRUE(kvlab.engine);
  SessionDriver driver(*kvlab.context);
  const std::vector<std::vector<std::string>> commands = {
      {"FLUSHALL"},
      {"CONFIG", "GET", "hash-max-ziplist-entries"},
      {"CONFIG", "GET", "hash-max-listpack-entries"},
      {"CONFIG", "SET", "hash-max-ziplist-entries", "2"},
      {"CONFIG", "GET", "hash-max-listpack-entries"},
      {"HSET", "h", "a", "1", "b", "2"},
      {"OBJECT", "ENCODING", "h"},
      {"HSET", "h", "c", "3"},
      {"OBJECT", "ENCODING", "h"},
      {"CONFIG", "SET", "hash-max-listpack-value", "4"},
      {"HSET", "h2", "a", "12345"},
      {"OBJECT", "ENCODING", "h2"},
      {"CONFIG", "SET", "set-max-intset-entries", "3"},
      {"SADD", "s", "1", "2", "3"},
      {"OBJECT", "ENCODING", "s"},
      {"SADD", "s", "4"},
      {"OBJECT", "ENCODING", "s"},
      {"CONFIG", "SET", "zset-max-ziplist-entries", "1"},
      {"ZADD", "z", "1", "a"},
      {"OBJECT", "ENCODING", "z"},
      {"ZADD", "z", "2", "b"},
      {"OBJECT", "ENCODING", "z"},
      {"CONFIG", "SET", "zset-max-listpack-value", "2"},
      {"CONFIG", "GET", "zset-max-ziplist-value"},
      {"CONFIG", "SET", "zset-max-listpack-entries", "128"},
      {"ZADD", "z2", "1", "abc"},
      {"OBJECT", "ENCODING", "z2"},
      {"CONFIG", "SET", "list-max-ziplist-size", "2"},
      {"CONFIG", "GET", "list-max-listpack-size"},
      {"RPUSH", "l", "a", "b", "c"},
      {"OBJECT", "ENCODING", "l"},
      {"CONFIG", "SET", "list-compress-depth", "1"},
      {"CONFIG", "GET", "list-compress-depth"},
      {"CONFIG", "SET", "hash-max-ziplist-value", "abc"},
      {"CONFIG", "SET", "save", ""},
      {"CONFIG", "GET", "save"},
      {"OBJECT", "REFCOUNT", "h"},
      {"OBJECT", "REFCOUNT", "nokey"},
      {"SET", "str", "a string value"},
      {"OBJECT", "REFCOUNT", "str"},
      {"OBJECT", "FREQ", "h"},
      {"OBJECT", "NOSUCH", "h"},
  };
  for (const auto& command : commands) {
    const std::string bytes = Encode(command);
    const std::string expected = redis.Exchange(bytes, 1);
    EXPECT_EQ(Escape(driver.Feed(bytes)), Escape(expected)) << Escape(bytes);
  }
}

// Each malformed (or oddly formed) request on a fresh connection: the bytes
// before the close must match Redis exactly, and both must close.
TEST_P(DifferentialTest, ProtocolEdgeCasesMatchRedis) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  const std::vector<std::string> inputs = {"*abc\r\n",
                                           "*1\r\n$abc\r\n",
                                           "*1\r\n$-5\r\n",
                                           "*1\r\nx3\r\n",
                                           "*2\r\n$3\r\nGET\r\n:1\r\n",
                                           "*1\r\n$536870913\r\n",
                                           "*1048577\r\n",
                                           "*-1\r\nPING\r\n",
                                           "*0\r\nPING\r\n",
                                           "\r\n\r\nPING\r\n",
                                           "PING\n",
                                           "  PING  \r\n",
                                           "\"unbalanced\r\n",
                                           "SET 'a\r\n",
                                           "GET \"a\"b\r\n",
                                           "SET k \"a\\x41\\n\\t\\\"q\"\r\nGET k\r\n",
                                           "SET k 'it\\'s'\r\nGET k\r\n",
                                           "*1\r\n$4\r\nPINGxx*1\r\n$4\r\nPING\r\n",
                                           "*1\r\n$0\r\n\r\n",
                                           "PING\r\n*1\r\n$-1\r\n",
                                           "*01\r\n",
                                           "*+1\r\n",
                                           "*1\r\n$01\r\n",
                                           "*1\r\n$\r\n",
                                           "ECHO \"a\" \"b\"\r\n",
                                           "ECHO \"\"\r\n",
                                           "echo a\tb\r\n",
                                           "*1\r\n\r\n",
                                           std::string(70000, 'A'),
                                           "*" + std::string(70000, '1'),
                                           "*1\r\n$" + std::string(70000, '1'),
                                           "PING\r\n" + std::string(70000, 'B'),
                                           std::string("*1\r\n\0abc\r\n", 10),
                                           "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nv\r\n\r\nGET k\r\n",
                                           "QUIT\r\nPING\r\n",
                                           "quit\r\n"};
  CompareFreshConnections(redis, GetParam(), {}, inputs);
}

// HELLO's value of "id" (each server numbers its own clients).
std::string MaskClientId(std::string reply) {
  const std::string id_key = "$2\r\nid\r\n:";
  for (size_t at = reply.find(id_key); at != std::string::npos; at = reply.find(id_key, at + 1)) {
    const size_t digits = at + id_key.size();
    reply.replace(digits, reply.find("\r\n", digits) - digits, "ID");
  }
  return reply;
}

// Each step's commands, pipelined, to one connection of Redis and to one
// Session over `kind`, step after step: the replies must match byte for
// byte, but for HELLO's client id, which each server numbers its own way.
void CompareSteps(RedisReference& redis, const std::string& kind,
                  const std::vector<std::vector<std::vector<std::string>>>& steps) {
  EngineUnderTest kvlab = MakeEngineUnderTest(kind);
  ASSERT_TRUE(kvlab.engine);
  SessionDriver driver(*kvlab.context);
  for (const auto& step : steps) {
    std::string bytes;
    for (const auto& command : step) bytes += Encode(command);
    const std::string expected = MaskClientId(redis.Exchange(bytes, step.size()));
    const std::string actual = MaskClientId(driver.Feed(bytes));
    EXPECT_EQ(Escape(actual), Escape(expected)) << "commands: " << Escape(bytes.substr(0, 200));
  }
}

// HELLO's own replies and errors, the switch to RESP3 and back, and the
// replies on either side of it, on one connection to each server.
TEST_P(DifferentialTest, HelloSwitchesProtocolsAsRedisDoes) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  const std::vector<std::vector<std::vector<std::string>>> steps = {
      {{"SET", "s", "v"},
       {"HSET", "h", "f", "1", "g", "2"},
       {"ZADD", "z", "1.5", "a", "-inf", "b"},
       {"SADD", "set", "x"}},
      {{"HELLO", "4"},
       {"HELLO", "1"},
       {"HELLO", "0"},
       {"HELLO", "-3"},
       {"HELLO", "3x"},
       {"HELLO", "99999999999999999999"},
       {"HELLO", "3", "bogus"},
       {"HELLO", "3", "AUTH", "default"},
       {"HELLO", "3", "SETNAME"},
       {"HELLO", "3", "SETNAME", "a b"},
       {"HELLO", "2", "3"},
       {"GET", "nokey"},
       {"HGETALL", "h"}},
      {{"HELLO"}, {"HELLO", "2"}},
      {{"HELLO", "3"}},
      {{"GET", "nokey"},
       {"HGETALL", "h"},
       {"HGETALL", "nokey"},
       {"ZSCORE", "z", "b"},
       {"HELLO"},
       {"HELLO", "4"},
       {"GET", "nokey"},
       {"CLIENT", "GETNAME"},
       {"HELLO", "3", "AUTH", "default", "any", "SETNAME", "named"},
       {"CLIENT", "GETNAME"},
       {"CONFIG", "GET", "maxmemory"},
       {"CONFIG", "GET", "nosuchparameter"},
       {"ZRANGE", "z", "0", "-1", "WITHSCORES"},
       {"SMEMBERS", "set"},
       {"LPOP", "nokey", "2"}},
      {{"HELLO", "2"},
       {"GET", "nokey"},
       {"HGETALL", "h"},
       {"ZSCORE", "z", "a"},
       {"CONFIG", "GET", "maxmemory"},
       {"ZRANGE", "z", "0", "-1", "WITHSCORES"}},
      // A pipeline that switches twice: each reply in its command's protocol.
      {{"HGETALL", "h"},
       {"HELLO", "3"},
       {"ZSCORE", "z", "a"},
       {"HELLO", "2"},
       {"ZSCORE", "z", "a"},
       {"MULTI"},
       {"HGETALL", "h"},
       {"HELLO", "3"},
       {"HGETALL", "h"},
       {"EXEC"},
       {"GET", "nokey"}},
  };
  CompareSteps(redis, GetParam(), steps);
}

// RESET inside MULTI (run at once, the transaction gone), after WATCH,
// HELLO 3 and CLIENT SETNAME, with arguments, and as the first command; one
// connection to each server, step after step.
TEST_P(DifferentialTest, ResetClearsTheConnectionAsRedisDoes) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  const std::vector<std::vector<std::vector<std::string>>> steps = {
      {{"RESET"}, {"RESET", "extra"}, {"reset"}},
      {{"MULTI"}, {"SET", "k", "queued"}, {"RESET"}, {"EXEC"}, {"GET", "k"}, {"DISCARD"}},
      {{"MULTI"}, {"nosuch"}, {"RESET"}, {"MULTI"}, {"SET", "k", "v"}, {"EXEC"}, {"GET", "k"}},
      {{"WATCH", "w"}, {"RESET"}, {"MULTI"}, {"WATCH", "w"}, {"RESET"}, {"EXEC"}},
      {{"HSET", "h", "f", "1"},
       {"HELLO", "3", "SETNAME", "named"},
       {"HGETALL", "h"},
       {"RESET"},
       {"HGETALL", "h"},
       {"CLIENT", "GETNAME"},
       {"GET", "nokey"}},
  };
  CompareSteps(redis, GetParam(), steps);
}

// CLIENT KILL's and CLIENT LIST's errors and their replies that name no
// client (each server's own clients differ, so only those are compared).
TEST_P(DifferentialTest, ClientKillAndListErrorsAsRedis) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  const std::vector<std::vector<std::vector<std::string>>> steps = {
      {{"CLIENT", "KILL"},
       {"CLIENT", "KILL", "1.2.3.4:5"},
       {"CLIENT", "KILL", "ADDR", "1.2.3.4:5"},
       {"CLIENT", "KILL", "ID", "0"},
       {"CLIENT", "KILL", "ID", "-1"},
       {"CLIENT", "KILL", "ID", "abc"},
       {"CLIENT", "KILL", "ID", "999999"},
       {"CLIENT", "KILL", "TYPE", "bogus"},
       {"CLIENT", "KILL", "TYPE", "master"},
       {"CLIENT", "KILL", "USER", "nobody"},
       {"CLIENT", "KILL", "SKIPME", "maybe"},
       {"CLIENT", "KILL", "LADDR", "9.9.9.9:1", "SKIPME", "yes"},
       {"CLIENT", "KILL", "ID", "999999", "TYPE"},
       {"CLIENT", "KILL", "BOGUS", "x"}},
      {{"CLIENT", "LIST", "TYPE", "bogus"},
       {"CLIENT", "LIST", "ID", "abc"},
       {"CLIENT", "LIST", "ID", "999999"},
       {"CLIENT", "LIST", "TYPE", "replica"},
       {"CLIENT", "LIST", "bogus"},
       {"CLIENT", "LIST", "TYPE"}},
  };
  CompareSteps(redis, GetParam(), steps);
}

// COMMAND GETKEYS over fixed positions, the numkeys commands (a count that
// is not an integer, too large, zero, negative, or an integer only to
// atoi(), which Redis's getkeys procedure then reads), SORT's last STORE,
// the subcommands with a key, and each error.
TEST_P(DifferentialTest, CommandGetKeysMatchesRedis) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  const std::vector<std::vector<std::string>> commands = {
      {"get", "key"},
      {"mset", "a", "1", "b"},
      {"bitop", "and", "d", "a", "b"},
      {"blpop", "a", "b", "0"},
      {"lmove", "a", "b", "left", "right"},
      {"zunionstore", "target", "3", "a", "b", "c"},
      {"zunionstore", "d", "x", "a"},
      {"zunionstore", "d", "2x", "a", "b"},
      {"zunionstore", "d", "5", "a", "b"},
      {"zunionstore", "d", "0", "a"},
      {"zdiffstore", "d", "-1", "a"},
      {"zinterstore", "d", "4294967297", "a", "b"},
      {"zunion", "0", "a"},
      {"zintercard", "1", "a", "limit", "3"},
      {"sintercard", "2", "a", "b"},
      {"lmpop", "3", "a", "b", "left"},
      {"blmpop", "0", "2", "a", "b", "left"},
      {"bzmpop", "0", "1", "a", "max"},
      {"sort", "abc", "store", "invalid", "store", "stillbad", "store", "def"},
      {"sort", "abc", "limit", "0", "1", "store", "x", "get", "store"},
      {"sort", "abc", "by", "x", "store"},
      {"sort_ro", "abc"},
      // GEORADIUS's key specs: the first STORE and the first STOREDIST, each
      // looked for from the sixth argument (fifth BYMEMBER) to the last but one.
      {"georadius", "src", "1", "2", "3", "km", "store", "d1", "storedist", "d2"},
      {"georadius", "src", "1", "2", "3", "km", "STOREDIST", "x", "STORE", "y"},
      {"georadius", "src", "1", "2", "3", "km", "store", "d1", "store", "d2"},
      {"georadius", "src", "1", "2", "3", "store", "d1"},
      {"georadius", "src", "1", "2", "3", "km", "store"},
      {"georadiusbymember", "src", "m", "3", "km", "storedist", "d1"},
      {"georadiusbymember", "src", "m", "3", "store", "d1", "x"},
      {"georadius_ro", "src", "1", "2", "3", "km", "store", "d1"},
      {"memory", "usage", "key", "samples", "5"},
      {"OBJECT", "ENCODING", "k"},
      {"object", "encoding"},
      {"object", "help"},
      {"client", "list"},
      {"nosuch", "x"},
      {"get", "a", "b"},
      {"ping"},
  };
  std::vector<std::vector<std::string>> step;
  for (const auto& command : commands) {
    std::vector<std::string> getkeys = {"COMMAND", "GETKEYS"};
    getkeys.insert(getkeys.end(), command.begin(), command.end());
    step.push_back(std::move(getkeys));
  }
  CompareSteps(redis, GetParam(), {step});
}

// COMMAND INFO flags a command "movablekeys" exactly where Redis does.
TEST_P(DifferentialTest, CommandInfoFlagsMovableKeysAsRedisDoes) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  EngineUnderTest kvlab = MakeEngineUnderTest(GetParam());
  ASSERT_TRUE(kvlab.engine);
  SessionDriver driver(*kvlab.context);
  for (const char* name : {"zunionstore",
                           "zinterstore",
                           "zdiffstore",
                           "zunion",
                           "zinter",
                           "zdiff",
                           "zintercard",
                           "sintercard",
                           "lmpop",
                           "zmpop",
                           "blmpop",
                           "bzmpop",
                           "sort",
                           "sort_ro",
                           "get",
                           "mset",
                           "bitop",
                           "blpop",
                           "lmove",
                           "object",
                           "memory",
                           "georadius",
                           "georadiusbymember",
                           "georadius_ro",
                           "georadiusbymember_ro",
                           "geosearch",
                           "geosearchstore"}) {
    const std::string info = Encode({"COMMAND", "INFO", name});
    const bool redis_movable = redis.Exchange(info, 1).find("movablekeys") != std::string::npos;
    const bool kvlab_movable = driver.Feed(info).find("movablekeys") != std::string::npos;
    EXPECT_EQ(kvlab_movable, redis_movable) << name;
  }
}

// The names in a flat array reply of bulk strings, sorted (COMMAND LIST's
// order is Redis's dict order, which no client relies on).
std::vector<std::string> SortedBulks(const std::string& reply) {
  std::vector<std::string> names;
  std::istringstream lines(reply);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line[0] == '$' && std::getline(lines, line)) {
      names.push_back(line.substr(0, line.size() - 1));  // without the '\r'
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// COMMAND LIST: its syntax errors and empty filters byte for byte, and the
// names a pattern picks, subcommands included ("config|*re*"), as sets.
TEST_P(DifferentialTest, CommandListMatchesRedis) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  CompareSteps(redis, GetParam(),
               {{{"COMMAND", "LIST", "bad_arg"},
                 {"COMMAND", "LIST", "FILTERBY", "bad_arg"},
                 {"COMMAND", "LIST", "FILTERBY", "bad_arg", "bad_arg2"},
                 {"COMMAND", "LIST", "FILTERBY", "PATTERN"},
                 {"COMMAND", "LIST", "FILTERBY", "PATTERN", "get", "extra"},
                 {"COMMAND", "LIST", "FILTERBY", "MODULE", "non_existing_module"},
                 {"COMMAND", "LIST", "FILTERBY", "ACLCAT", "non_existing_category"},
                 {"COMMAND", "LIST", "FILTERBY", "PATTERN", "set"},
                 {"command", "list", "filterby", "pattern", "GET"},
                 {"COMMAND", "COUNT", "x"},
                 {"COMMAND", "HELP", "x"},
                 {"CLIENT", "HELP", "x"}}});
  EngineUnderTest kvlab = MakeEngineUnderTest(GetParam());
  ASSERT_TRUE(kvlab.engine);
  SessionDriver driver(*kvlab.context);
  for (const char* pattern : {"config|*re*", "CONFIG*", "client|l*", "pubsub*", "object|*",
                              "memory|*", "command|*o*", "g?t*", "nosuch*"}) {
    const std::string list = Encode({"COMMAND", "LIST", "FILTERBY", "PATTERN", pattern});
    EXPECT_EQ(SortedBulks(driver.Feed(list)), SortedBulks(redis.Exchange(list, 1))) << pattern;
  }
  // Without a filter: every command's name and every subcommand's, once each.
  const std::vector<std::string> all = SortedBulks(driver.Feed(Encode({"COMMAND", "LIST"})));
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
  for (const char* name : {"set", "client", "client|list", "config|get", "georadius_ro"}) {
    EXPECT_TRUE(std::binary_search(all.begin(), all.end(), name)) << name;
  }
  // A category Redis has is refused, not answered from categories kvlab does not keep.
  EXPECT_EQ(driver.Feed(Encode({"COMMAND", "LIST", "FILTERBY", "ACLCAT", "read"})).substr(0, 5),
            "-ERR ");
}

// The subcommands a command lists are Redis's names, and its handler answers
// each one; every other subcommand of Redis's is unknown to it. Checked with
// cluster mode on, where CLUSTER answers its subcommands.
TEST_P(DifferentialTest, ListedSubcommandsAreAnsweredAndNoOthers) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  const std::vector<std::string> redis_names =
      SortedBulks(redis.Exchange(Encode({"COMMAND", "LIST"}), 1));
  ServerSettings settings;
  settings.shard_ports = 7000;
  EngineUnderTest kvlab = MakeEngineUnderTest(GetParam(), settings);
  ASSERT_TRUE(kvlab.engine);
  SessionDriver driver(*kvlab.context);
  size_t listed = 0;
  for (const CommandSpec& spec : CommandTable::Instance().commands()) {
    const std::string prefix = spec.name + "|";
    for (const std::string& name : redis_names) {
      if (!name.starts_with(prefix)) continue;
      const std::string sub = name.substr(prefix.size());
      const bool is_listed = std::find(spec.subcommands.begin(), spec.subcommands.end(), name) !=
                             spec.subcommands.end();
      listed += is_listed;
      const std::string reply = driver.Feed(Encode({spec.name, sub}));
      const bool unknown = reply.starts_with("-ERR unknown subcommand '");
      EXPECT_EQ(unknown, !is_listed) << name << ": " << reply;
    }
    for (const std::string& name : spec.subcommands) {
      EXPECT_TRUE(std::binary_search(redis_names.begin(), redis_names.end(), name)) << name;
    }
  }
  EXPECT_GE(listed, 40u);
}

// RESET ends an authenticated connection's AUTH where a password is set, and
// needs none itself.
TEST_P(DifferentialTest, ResetForgetsAuthenticationAsRedisDoes) {
  RedisReference redis({"--requirepass", "secret"});
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  ServerSettings settings;
  settings.requirepass = "secret";
  const std::vector<std::string> inputs = {
      Encode({"RESET"}) + Encode({"GET", "k"}),
      Encode({"AUTH", "secret"}) + Encode({"SET", "k", "v"}) + Encode({"RESET"}) +
          Encode({"GET", "k"}) + Encode({"AUTH", "default", "secret"}) + Encode({"GET", "k"})};
  CompareFreshConnections(redis, GetParam(), settings, inputs);
}

// Before and after AUTH, with a password set on both servers.
TEST_P(DifferentialTest, AuthenticationMatchesRedis) {
  RedisReference redis({"--requirepass", "secret"});
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  ServerSettings settings;
  settings.requirepass = "secret";
  const std::vector<std::string> inputs = {
      Encode({"GET", "k"}) + Encode({"nosuch", "a"}) + Encode({"get"}) + Encode({"PING"}) +
          Encode({"AUTH", "x"}) + Encode({"AUTH", "a", "b", "c"}) + Encode({"HELLO"}) +
          Encode({"HELLO", "2", "AUTH", "default", "wrong"}) + Encode({"CLIENT", "ID"}) +
          Encode({"AUTH", "default", "secret"}) + Encode({"SET", "k", "v"}) + Encode({"GET", "k"}) +
          Encode({"AUTH", "other", "secret"}) + Encode({"GET", "k"}),
      Encode({"AUTH", "secret"}) + Encode({"GET", "nokey"}),
      Encode({"SET", "a", "b"}) + "PING\r\n",
      "*10\r\n",
      "*11\r\n",
      "*2\r\n$16384\r\n",
      "*2\r\n$16385\r\n",
      Encode({"AUTH", "secret"}) + "*11\r\n",
      "QUIT\r\n"};
  CompareFreshConnections(redis, GetParam(), settings, inputs);
}

// The HyperLogLog commands against redis-server, byte for byte, values
// included (GET returns the representation): creation, the cache byte,
// PFCOUNT and PFMERGE over several keys (on several shards), sparse and
// dense sources, the promotion at hll-sparse-max-bytes, PFDEBUG, corrupted
// values and wrong types, inside MULTI/EXEC too; then 400 random PFADDs and
// PFMERGEs over four keys, each key's bytes compared after.
TEST_P(DifferentialTest, HyperLogLogMatchesRedisByteForByte) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  std::vector<std::vector<std::vector<std::string>>> steps = {
      {{"PFADD", "h"}, {"GET", "h"}, {"PFCOUNT", "h"}, {"GETRANGE", "h", "15", "15"}},
      {{"PFADD", "h", "a", "b", "c"},
       {"PFADD", "h", "a"},
       {"PFADD", "h", ""},
       {"GET", "h"},
       {"PFCOUNT", "h"},
       {"GET", "h"},
       {"PFCOUNT", "h"}},
      {{"PFADD", "x{t}", "1", "2", "3"},
       {"PFADD", "y{t}", "3", "4", "5"},
       {"PFCOUNT", "x{t}", "y{t}", "nokey{t}"},
       {"PFCOUNT", "x{t}", "x{t}"},
       {"PFMERGE", "m{t}", "x{t}", "y{t}", "nokey{t}"},
       {"GET", "m{t}"},
       {"PFCOUNT", "m{t}"},
       {"PFMERGE", "empty{t}"},
       {"GET", "empty{t}"},
       {"PFMERGE", "x{t}", "y{t}"},
       {"GET", "x{t}"}},
      {{"PFDEBUG", "ENCODING", "x{t}"},
       {"PFDEBUG", "DECODE", "x{t}"},
       {"PFDEBUG", "TODENSE", "x{t}"},
       {"PFDEBUG", "TODENSE", "x{t}"},
       {"PFDEBUG", "encoding", "x{t}"},
       {"PFDEBUG", "DECODE", "x{t}"},
       {"PFCOUNT", "x{t}"},
       {"PFMERGE", "n{t}", "y{t}", "x{t}"},
       {"PFDEBUG", "ENCODING", "n{t}"},
       {"GET", "n{t}"},
       {"PFDEBUG", "NOSUCH", "x{t}"},
       {"PFDEBUG", "GETREG", "nokey"},
       {"PFDEBUG", "GETREG"}},
      {{"SET", "s{t}", "not an hll"},
       {"LPUSH", "l{t}", "e"},
       {"PFADD", "s{t}", "a"},
       {"PFADD", "l{t}", "a"},
       {"PFCOUNT", "s{t}"},
       {"PFCOUNT", "l{t}"},
       {"PFCOUNT", "x{t}", "s{t}", "y{t}"},
       {"PFMERGE", "x{t}", "s{t}"},
       {"PFMERGE", "s{t}", "x{t}"},
       {"PFMERGE", "fresh{t}", "y{t}", "l{t}"},
       {"EXISTS", "fresh{t}"},
       {"PFDEBUG", "ENCODING", "s{t}"},
       {"PFDEBUG", "ENCODING", "l{t}"}},
      {{"PFADD", "c", "a", "b", "c"},
       {"APPEND", "c", "hello"},
       {"PFCOUNT", "c"},
       {"PFCOUNT", "c", "c"},
       {"PFADD", "d", "a", "b", "c"},
       {"SETRANGE", "d", "0", "0123"},
       {"PFCOUNT", "d"},
       {"PFADD", "e", "a", "b", "c"},
       {"SETRANGE", "e", "4", std::string(1, '\0')},
       {"PFCOUNT", "e"}},
      {{"MULTI"},
       {"PFADD", "tx{t}", "a", "b"},
       {"PFCOUNT", "tx{t}"},
       {"PFMERGE", "tx2{t}", "tx{t}", "y{t}"},
       {"PFCOUNT", "tx{t}", "tx2{t}"},
       {"EXEC"},
       {"GET", "tx2{t}"}},
      {{"CONFIG", "SET", "hll-sparse-max-bytes", "40"}, {"CONFIG", "GET", "hll-sparse-max-bytes"}},
  };
  // With a 40-byte sparse limit a few adds turn the value dense.
  std::vector<std::vector<std::string>> promote = {{"DEL", "p"}};
  for (int i = 0; i < 12; ++i) {
    promote.push_back({"PFADD", "p", "e" + std::to_string(i)});
    promote.push_back({"PFDEBUG", "ENCODING", "p"});
  }
  promote.push_back({"GET", "p"});
  promote.push_back({"CONFIG", "SET", "hll-sparse-max-bytes", "3000"});
  steps.push_back(promote);
  std::mt19937 random(11);
  std::vector<std::vector<std::string>> mixed;
  const std::vector<std::string> keys = {"r0{t}", "r1{t}", "r2{t}", "r3{t}"};
  for (int i = 0; i < 400; ++i) {
    const std::string& key = keys[random() % keys.size()];
    if (random() % 10 == 0) {
      mixed.push_back({"PFMERGE", key, keys[random() % keys.size()], keys[random() % keys.size()]});
    } else {
      std::vector<std::string> add = {"PFADD", key};
      for (int n = static_cast<int>(random() % 40); n > 0; --n) {
        add.push_back(std::to_string(random() % 5000));
      }
      mixed.push_back(add);
    }
    if (random() % 8 == 0) mixed.push_back({"PFCOUNT", key});
  }
  for (const std::string& key : keys) mixed.push_back({"GET", key});
  mixed.push_back({"PFCOUNT", keys[0], keys[1], keys[2], keys[3]});
  steps.push_back(mixed);
  CompareSteps(redis, GetParam(), steps);
}

// The GEO commands against redis-server, byte for byte: GEOADD's options
// and errors, GEOPOS/GEOHASH/GEODIST (RESP2 and RESP3), every search form
// with its options, sorting, COUNT [ANY], STORE/STOREDIST and
// GEOSEARCHSTORE (the stored sets read back), wrong types and missing
// keys; then 300 random points and 120 random searches (circles and boxes,
// big and small, near the poles and the antimeridian too).
TEST_P(DifferentialTest, GeoMatchesRedisByteForByte) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  std::vector<std::vector<std::vector<std::string>>> steps = {
      {{"GEOADD", "nyc", "-73.9454966", "40.747533", "lic market"},
       {"GEOADD",      "nyc",         "-73.9733487",  "40.7648057",  "central park n/q/r",
        "-73.9903085", "40.7362513",  "union square", "-74.0131604", "40.7126674",
        "wtc one",     "-73.7858139", "40.6428986",   "jfk",         "-73.9375699",
        "40.7498929",  "q4",          "-73.9564142",  "40.7480973",  "4545"},
       {"GEOADD", "nyc", "CH", "-73.9454966", "40.747533", "lic market"},
       {"GEOADD", "nyc", "CH", "XX", "-73.9", "40.7", "lic market", "1", "2", "nothere"},
       {"GEOADD", "nyc", "NX", "XX", "1", "2", "x"},
       {"GEOADD", "nyc", "bogus", "1", "2", "x"},
       {"GEOADD", "nyc", "1", "2"},
       {"GEOADD", "nyc", "200", "100", "x"},
       {"GEOADD", "nyc", "abc", "1", "x"},
       {"GEOADD", "nyc", "CH", "NX", "-73.9454966", "40.747533", "lic market", "10", "20", "new"},
       {"ZRANGE", "nyc", "0", "-1", "WITHSCORES"}},
      {{"GEOPOS", "nyc", "jfk", "nothere", "wtc one"},
       {"GEOPOS", "nokey", "a", "b"},
       {"GEOHASH", "nyc", "jfk", "nothere", "q4"},
       {"GEOHASH", "nokey", "a"},
       {"GEODIST", "nyc", "jfk", "wtc one"},
       {"GEODIST", "nyc", "jfk", "wtc one", "km"},
       {"GEODIST", "nyc", "jfk", "wtc one", "MI"},
       {"GEODIST", "nyc", "jfk", "wtc one", "ft"},
       {"GEODIST", "nyc", "jfk", "wtc one", "yards"},
       {"GEODIST", "nyc", "jfk", "wtc one", "km", "extra"},
       {"GEODIST", "nyc", "jfk", "nothere"},
       {"GEODIST", "nokey", "a", "b"},
       {"GEODIST", "nyc", "jfk", "jfk"}},
      {{"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "3", "km", "asc"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "3", "km", "DESC", "WITHDIST", "WITHHASH",
        "WITHCOORD"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "3", "km"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "10", "km", "COUNT", "3"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "10", "km", "COUNT", "2", "ANY"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "10", "km", "COUNT", "2", "ANY", "ASC"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "10", "km", "ANY"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "10", "km", "COUNT"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "10", "km", "COUNT", "0"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "10", "km", "COUNT", "x"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "-1", "km"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "x", "km"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "10", "parsecs"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "10", "km", "bogus"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "50000", "km", "asc"},
       {"GEORADIUS_RO", "nyc", "-73.9798091", "40.7598464", "3", "km", "STORE", "x"},
       {"GEORADIUSBYMEMBER", "nyc", "wtc one", "7", "km", "WITHDIST", "asc"},
       {"GEORADIUSBYMEMBER", "nyc", "nothere", "7", "km"},
       {"GEORADIUSBYMEMBER_RO", "nyc", "wtc one", "7", "km", "desc", "withcoord"},
       {"GEORADIUSBYMEMBER", "nokey", "x", "bad", "km"},
       {"GEOSEARCH", "nyc", "FROMLONLAT", "-73.9798091", "40.7598464", "BYRADIUS", "3", "km", "ASC",
        "WITHDIST"},
       {"GEOSEARCH", "nyc", "FROMMEMBER", "wtc one", "BYBOX", "14", "14", "km", "DESC", "WITHCOORD",
        "WITHHASH"},
       {"GEOSEARCH", "nyc", "FROMMEMBER", "wtc one", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km"},
       {"GEOSEARCH", "nyc", "BYRADIUS", "1", "km"},
       {"GEOSEARCH", "nyc", "FROMMEMBER", "wtc one"},
       {"GEOSEARCH", "nyc", "FROMMEMBER", "wtc one", "BYRADIUS", "1", "km", "BYBOX", "1", "1",
        "km"},
       {"geosearch", "nyc", "frommember", "nothere", "byradius", "1", "km"},
       {"GEOSEARCH", "nyc", "FROMLONLAT", "1", "2", "BYBOX", "-1", "1", "km"},
       {"GEOSEARCH", "nyc", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km", "STORE", "x"},
       {"GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", "1", "km"}},
      {{"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "10", "km", "STORE", "dst"},
       {"ZRANGE", "dst", "0", "-1", "WITHSCORES"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "10", "km", "STOREDIST", "dst", "COUNT",
        "2", "DESC"},
       {"ZRANGE", "dst", "0", "-1", "WITHSCORES"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "10", "km", "STORE", "dst", "WITHDIST"},
       {"GEORADIUSBYMEMBER", "nyc", "jfk", "1", "m", "STORE", "dst"},
       {"EXISTS", "dst"},
       {"SET", "dst", "string"},
       {"GEORADIUS", "nokey", "1", "2", "10", "km", "STORE", "dst"},
       {"EXISTS", "dst"},
       {"GEOSEARCHSTORE", "dst2", "nyc", "FROMMEMBER", "jfk", "BYRADIUS", "30", "km", "STOREDIST"},
       {"ZRANGE", "dst2", "0", "-1", "WITHSCORES"},
       {"GEOSEARCHSTORE", "dst2", "nyc", "FROMMEMBER", "jfk", "BYBOX", "60", "60", "km", "ASC",
        "COUNT", "3"},
       {"ZRANGE", "dst2", "0", "-1", "WITHSCORES"},
       {"GEOSEARCHSTORE", "dst2", "nyc", "FROMMEMBER", "jfk", "BYBOX", "60", "60", "km",
        "WITHDIST"},
       {"GEOSEARCHSTORE", "dst2", "nyc", "FROMMEMBER", "jfk", "BYBOX", "60", "60", "km", "STORE",
        "x"},
       {"SET", "str", "x"},
       {"GEOADD", "str", "1", "2", "a"},
       {"GEOPOS", "str", "a"},
       {"GEORADIUS", "str", "1", "2", "3", "km"},
       {"GEOSEARCHSTORE", "dst2", "str", "FROMLONLAT", "1", "2", "BYRADIUS", "1", "km"},
       {"ZADD", "odd", "-inf", "a", "1e300", "b", "-5", "c"},
       {"GEOPOS", "odd", "a", "b", "c"},
       {"GEOHASH", "odd", "a", "b", "c"}},
      {{"HELLO", "3"},
       {"GEOPOS", "nyc", "jfk", "nothere"},
       {"GEOHASH", "nyc", "jfk", "nothere"},
       {"GEODIST", "nyc", "jfk", "nothere"},
       {"GEORADIUS", "nyc", "-73.9798091", "40.7598464", "10", "km", "ASC", "WITHDIST", "WITHCOORD",
        "WITHHASH"},
       {"HELLO", "2"}},
      {{"MULTI"},
       {"GEOADD", "tx", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"},
       {"GEORADIUS", "tx", "15", "37", "200", "km", "STOREDIST", "tx2"},
       {"GEOSEARCH", "tx", "FROMLONLAT", "15", "37", "BYBOX", "400", "400", "km", "ASC"},
       {"EXEC"},
       {"ZRANGE", "tx2", "0", "-1", "WITHSCORES"}},
  };
  // Random points all over (poles and the antimeridian included), then
  // random searches of every form around them.
  std::mt19937 random(23);
  auto uniform = [&](double low, double high) {
    return low + (high - low) * (static_cast<double>(random()) / 4294967296.0);
  };
  auto text = [](double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.6f", value);
    return std::string(buffer);
  };
  std::vector<std::vector<std::string>> points = {{"DEL", "rp"}};
  for (int i = 0; i < 300; ++i) {
    const double lat = i % 10 == 0 ? uniform(-85.05, 85.05) : uniform(-70, 70);
    points.push_back(
        {"GEOADD", "rp", text(uniform(-180, 180)), text(lat), "p" + std::to_string(i)});
  }
  steps.push_back(points);
  std::vector<std::vector<std::string>> searches;
  const char* const units[] = {"m", "km", "mi", "ft"};
  for (int i = 0; i < 120; ++i) {
    const std::string lon = text(i % 7 == 0 ? uniform(175, 180) : uniform(-180, 180));
    const std::string lat = text(i % 11 == 0 ? uniform(80, 85) : uniform(-70, 70));
    const std::string size =
        std::to_string(i % 9 == 0 ? 1000 + random() % 5000 : 10 + random() % 800);
    const std::string unit = units[random() % 4];
    const std::string order = (random() % 3 == 0) ? "DESC" : "ASC";
    switch (i % 4) {
      case 0:
        searches.push_back({"GEORADIUS", "rp", lon, lat, size, unit, order, "WITHDIST"});
        break;
      case 1:
        searches.push_back({"GEOSEARCH", "rp", "FROMLONLAT", lon, lat, "BYBOX", size,
                            std::to_string(10 + random() % 3000), unit, order, "WITHCOORD"});
        break;
      case 2:
        searches.push_back({"GEORADIUSBYMEMBER", "rp", "p" + std::to_string(random() % 300), size,
                            unit, "COUNT", std::to_string(1 + random() % 5), "WITHHASH"});
        break;
      default:
        searches.push_back({"GEOSEARCHSTORE", "rs", "rp", "FROMMEMBER",
                            "p" + std::to_string(random() % 300), "BYRADIUS", size, unit,
                            "STOREDIST"});
        searches.push_back({"ZRANGE", "rs", "0", "-1", "WITHSCORES"});
        break;
    }
  }
  steps.push_back(searches);
  CompareSteps(redis, GetParam(), steps);
}

// Hostile arguments: counts, ranks, offsets, limits and deadlines at the
// edges of a 64-bit integer, sizes at the 512 MB bulk limit, overflowing
// arithmetic, corrupt payloads and HyperLogLogs, cursors past 2^64. Each
// answer (mostly an error) is redis-server's, byte for byte; the containers
// hold one element where a count past their size returns all of them, whose
// order is each server's own.
TEST_P(DifferentialTest, ExtremeArgumentsMatchRedisByteForByte) {
  RedisReference redis;
  ASSERT_TRUE(redis.available()) << "redis-server is not installed";
  const std::string min = "-9223372036854775808", max = "9223372036854775807";
  const std::string corrupt_hll = std::string("HYLL\x01\0\0\0\0\0\0\0\0\0\0\0", 16) + "\xff\xff";
  const std::vector<std::vector<std::vector<std::string>>> steps = {
      {{"HSET", "h", "a", "1"},
       {"HRANDFIELD", "h", min},
       {"HRANDFIELD", "h", min, "WITHVALUES"},
       {"HRANDFIELD", "h", "-4611686018427387904", "WITHVALUES"},
       {"HRANDFIELD", "h", max, "WITHVALUES"},
       {"ZADD", "z", "1", "a"},
       {"ZRANDMEMBER", "z", min},
       {"ZRANDMEMBER", "z", "-4611686018427387904", "WITHSCORES"},
       {"ZRANDMEMBER", "z", max, "WITHSCORES"},
       {"SADD", "s", "a"},
       {"SRANDMEMBER", "s", min},
       {"SRANDMEMBER", "s", max},
       {"SPOP", "s", "-1"},
       {"SPOP", "s", max}},
      {{"RPUSH", "l", "a", "b", "c"},
       {"LPOS", "l", "a", "RANK", min},
       {"LPOS", "l", "a", "RANK", max},
       {"LPOS", "l", "a", "COUNT", "-1"},
       {"LPOS", "l", "a", "MAXLEN", "-1"},
       {"LRANGE", "l", min, max},
       {"LINDEX", "l", min},
       {"LSET", "l", min, "x"},
       {"SORT", "l", "LIMIT", max, max, "ALPHA"},
       {"SORT", "l", "LIMIT", min, "-1", "ALPHA"},
       {"SORT", "l", "LIMIT", "1", max, "ALPHA"},
       {"LTRIM", "l", min, max},
       {"LRANGE", "l", "0", "-1"}},
      {{"SET", "str", "abc"},
       {"SETRANGE", "str", "536870912", "x"},
       {"SETRANGE", "str", "-1", "x"},
       {"GETRANGE", "str", min, max},
       {"SETBIT", "bits", "4294967296", "1"},
       {"SETBIT", "bits", "-1", "1"},
       {"BITFIELD", "bf", "SET", "u8", max, "1"},
       {"BITFIELD", "bf", "GET", "u64", "0"},
       {"BITFIELD", "bf", "SET", "i65", "0", "1"},
       {"BITCOUNT", "str", min, max},
       {"BITPOS", "str", "1", min, max}},
      {{"ZADD", "zz", "1", "a", "2", "b"},
       {"ZRANGE", "zz", min, max},
       {"ZRANGE", "zz", "0", "-1", "BYSCORE", "LIMIT", min, max},
       {"ZRANGEBYSCORE", "zz", "-inf", "+inf", "LIMIT", max, max},
       {"ZRANGESTORE", "dst", "zz", "0", "-1", "BYLEX"},
       {"ZINCRBY", "zz", "nan", "a"},
       {"ZADD", "zz", "nan", "x"},
       {"ZADD", "zz", "INCR", "1", "a", "2", "b"},
       {"ZINTERCARD", "2", "zz", "zz", "LIMIT", "-1"},
       {"ZUNIONSTORE", "out", "2147483647", "zz"},
       {"ZMPOP", "-1", "zz", "MIN"},
       {"LMPOP", max, "l", "LEFT"},
       {"SINTERCARD", max, "s"}},
      {{"INCRBY", "n", max},
       {"INCRBY", "n", "1"},
       {"DECRBY", "n", min},
       {"SET", "n", min},
       {"DECR", "n"},
       {"DECRBY", "n", max},
       {"INCRBYFLOAT", "f", "1e308"},
       {"INCRBYFLOAT", "f", "1e308"},
       {"INCRBYFLOAT", "f", "nan"},
       {"HINCRBYFLOAT", "h", "a", "inf"}},
      {{"EXPIRE", "n", max},
       {"PEXPIRE", "n", max},
       {"EXPIREAT", "n", max},
       {"SET", "k", "v", "EX", max},
       {"SET", "k", "v", "PX", max},
       {"SET", "k", "v", "EXAT", max},
       {"SET", "k", "v", "EX", "0"},
       {"SET", "k", "v", "EX", "-1"},
       {"GETEX", "k", "EX", max},
       {"RESTORE", "r", "0", std::string("\0\x01\x61\x0a\0\xff\xff\xff\xff\xff\xff\xff\xff", 13)},
       {"RESTORE", "r", "0", "garbage"}},
      {{"SCAN", "18446744073709551616"},
       {"SCAN", "0", "COUNT", "-1"},
       {"HSCAN", "h", "0", "COUNT", "0"},
       {"KEYS", "a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"},
       {"PFADD", "hll", "a", "b", "c"},
       {"SETRANGE", "hll", "4", "\xff\xff\xff\xff\xff\xff\xff\xff\xff"},
       {"PFCOUNT", "hll"},
       {"PFADD", "hll", "x"},
       {"PFMERGE", "hll2", "hll"},
       {"SET", "hll3", corrupt_hll},
       {"PFCOUNT", "hll3"},
       {"PFADD", "hll3", "q"},
       {"GEOADD", "g", "180.1", "0", "a"},
       {"GEOADD", "g", "0", "85.06", "a"},
       {"SELECT", max},
       {"CONFIG", "SET", "maxmemory", "-1"},
       {"DBSIZE"}}};
  CompareSteps(redis, GetParam(), steps);
}

INSTANTIATE_TEST_SUITE_P(Engines, DifferentialTest, ::testing::ValuesIn(AllEngineKinds()),
                         EngineTestName);

}  // namespace
}  // namespace kvlab::test
