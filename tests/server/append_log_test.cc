// The append-only log: its framing scan (truncated tails dropped, corruption
// refused), the records' absolute forms, and, on every engine, that a log
// written by several connections at once replays to the same keyspace —
// the order of the records agrees with the order of the effects.
#include "server/append_log.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <thread>

#include "engines/containers/dump_payload.h"
#include "server/net/aof_loader.h"
#include "server/aof_record.h"
#include "server/aof_rewrite_policy.h"
#include "tests/server/session_driver.h"

namespace kvlab::test {
namespace {

std::string Command(std::initializer_list<std::string_view> args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (std::string_view a : args) {
    out += "$" + std::to_string(a.size()) + "\r\n";
    out.append(a);
    out += "\r\n";
  }
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// A fresh folder under the build tree (a real disk: fsync means something).
std::string FreshLogPath(const std::string& name) {
  const std::filesystem::path folder = std::filesystem::current_path() / "append_log_test" /
                                       (name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  return (folder / "appendonly.aof").string();
}

// The log's records without its annotation lines: what a Session can be fed.
std::string WithoutAnnotations(std::string_view log) {
  std::string records;
  for (const AppendLogUnit& unit : ScanAppendLog(log).units) {
    records.append(log.substr(unit.begin, unit.end - unit.begin));
  }
  return records;
}

// Each unit replays at the clock of the annotation before it; Redis's own
// annotations are skipped; a unit before any kvlab clock has none.
TEST(AppendLogScan, ClockAnnotationsSetTheClockOfTheUnitsAfterThem) {
  const std::string set = Command({"SET", "a", "1"});
  const std::string incr = Command({"INCR", "a"});
  const std::string transaction = Command({"MULTI"}) + incr + Command({"EXEC"});
  const std::string log = set + "#kvlab-now-ms:1000\r\n" + incr + "#TS:1700000000\r\n" +
                          transaction + "#kvlab-now-ms:2000\r\n" + set;
  const AppendLogScan scan = ScanAppendLog(log);
  ASSERT_TRUE(scan.corruption.empty()) << scan.corruption;
  ASSERT_EQ(scan.units.size(), 4u);
  EXPECT_EQ(scan.units[0].clock_ms, std::nullopt);
  EXPECT_EQ(scan.units[1].clock_ms, 1000);
  EXPECT_EQ(scan.units[2].clock_ms, 1000);  // #TS: is Redis's, not a clock
  EXPECT_EQ(scan.units[3].clock_ms, 2000);
  EXPECT_EQ(log.substr(scan.units[2].begin, scan.units[2].end - scan.units[2].begin), transaction);
  EXPECT_EQ(scan.commands, 6u);
  EXPECT_EQ(scan.valid_bytes, log.size());
}

// An annotation cut short at the end is a truncated tail; a kvlab clock
// that is not a number is corruption, with its offset.
TEST(AppendLogScan, AnAnnotationCutShortIsTruncatedAndABadClockCorrupt) {
  const std::string set = Command({"SET", "a", "1"});
  const AppendLogScan cut = ScanAppendLog(set + "#kvlab-now-ms:12");
  EXPECT_TRUE(cut.corruption.empty()) << cut.corruption;
  EXPECT_EQ(cut.valid_bytes, set.size());
  EXPECT_EQ(cut.dropped_bytes, std::string("#kvlab-now-ms:12").size());
  for (std::string bad : {"#kvlab-now-ms:\r\n", "#kvlab-now-ms:12x\r\n", "#kvlab-now-ms:-5\r\n"}) {
    const AppendLogScan scan = ScanAppendLog(set + bad + set);
    EXPECT_NE(scan.corruption.find("bad annotation at byte " + std::to_string(set.size())),
              std::string::npos)
        << bad << ": " << scan.corruption;
  }
}

// A record carries the clock its write ran at: the first after the open
// says it, and so does every later one whose clock differs.
TEST(AppendLogClock, TheLogAnnotatesEachChangeOfTheWritesClock) {
  const std::string path = FreshLogPath("clock");
  std::unique_ptr<AppendLog> log;
  ASSERT_TRUE(AppendLog::Open(path, 0, AppendFsync::kNo, &log).ok());
  AofRecord record(log.get());
  const std::string_view args[] = {"SET", "a", "1"};
  record.AddCommand(args, {}, 0);
  for (int64_t clock : {5, 5, 7, 5}) record.AppendWith({}, clock, {});
  log.reset();
  const std::string set = Command({"SET", "a", "1"});
  EXPECT_EQ(ReadFile(path), "#kvlab-now-ms:5\r\n" + set + set + "#kvlab-now-ms:7\r\n" + set +
                                "#kvlab-now-ms:5\r\n" + set);
}

TEST(AppendLogScan, EveryTruncationOfTheLastRecordLoadsTheRest) {
  const std::string first = Command({"SET", "a", "1"});
  const std::string second = Command({"INCR", "a"});
  const std::string log = first + second;
  for (size_t cut = first.size() + 1; cut < log.size(); ++cut) {
    const AppendLogScan scan = ScanAppendLog(std::string_view(log).substr(0, cut));
    ASSERT_TRUE(scan.corruption.empty()) << cut << ": " << scan.corruption;
    EXPECT_EQ(scan.valid_bytes, first.size()) << cut;
    EXPECT_EQ(scan.dropped_bytes, cut - first.size()) << cut;
    EXPECT_EQ(scan.commands, 1u) << cut;
  }
  const AppendLogScan whole = ScanAppendLog(log);
  EXPECT_EQ(whole.valid_bytes, log.size());
  EXPECT_EQ(whole.commands, 2u);
}

TEST(AppendLogScan, ATransactionWithoutItsExecIsDroppedWhole) {
  const std::string before = Command({"SET", "a", "1"});
  const std::string open = Command({"MULTI"}) + Command({"INCR", "a"}) + Command({"INCR", "b"});
  const AppendLogScan scan = ScanAppendLog(before + open);
  EXPECT_TRUE(scan.corruption.empty());
  EXPECT_EQ(scan.valid_bytes, before.size());
  EXPECT_EQ(scan.dropped_bytes, open.size());
  const AppendLogScan closed = ScanAppendLog(before + open + Command({"EXEC"}));
  EXPECT_EQ(closed.dropped_bytes, 0u);
  EXPECT_EQ(closed.commands, 5u);
}

TEST(AppendLogScan, ABadByteInTheMiddleIsCorruption) {
  const std::string first = Command({"SET", "a", "1"});
  std::string log = first + Command({"SET", "b", "2"}) + Command({"INCR", "a"});
  log[first.size()] = '+';  // the second record's '*'
  const AppendLogScan scan = ScanAppendLog(log);
  EXPECT_NE(scan.corruption.find("at byte " + std::to_string(first.size())), std::string::npos)
      << scan.corruption;
  std::string bad_length = first + "*2\r\n$4\r\nINCR\r\n$x\r\na\r\n";
  EXPECT_FALSE(ScanAppendLog(bad_length).corruption.empty());
  std::string no_crlf = first + "*2\r\n$4\r\nINCRxx$1\r\na\r\n";
  EXPECT_FALSE(ScanAppendLog(no_crlf).corruption.empty());
  EXPECT_FALSE(ScanAppendLog(Command({"EXEC"})).corruption.empty());
}

// The engine under test with its log open at path_ under `policy`.
class AppendLogEngineTest : public ::testing::TestWithParam<std::string> {
 protected:
  void OpenLogged(const std::string& name, AppendFsync policy) {
    path_ = FreshLogPath(name + "-" + GetParam());
    kvlab_ = MakeEngineUnderTest(GetParam());
    ASSERT_TRUE(kvlab_.engine);
    ASSERT_TRUE(AppendLog::Open(path_, 0, policy, &log_).ok());
    kvlab_.context->append_log = log_.get();
  }
  // Connections writing at once (one on `single`, which is driven from
  // one thread only: the Redis model), each feeding `round(me, i)` for i in
  // [0, rounds) and counting it in `done`.
  int WriterCount() const { return GetParam() == "single" ? 1 : 4; }
  std::vector<std::thread> StartWriters(
      int rounds, std::function<std::string(const std::string& me, int i)> round,
      std::atomic<int>* done = nullptr) {
    std::vector<std::thread> threads;
    for (int t = 0; t < WriterCount(); ++t) {
      threads.emplace_back([this, t, rounds, round, done] {
        SessionDriver driver(*kvlab_.context, 10 + t);
        const std::string me = std::to_string(t);
        for (int i = 0; i < rounds; ++i) {
          driver.Feed(round(me, i));
          if (done != nullptr) done->fetch_add(1);
        }
      });
    }
    return threads;
  }
  std::string path_;
  EngineUnderTest kvlab_;
  std::unique_ptr<AppendLog> log_;
};

// Relative times are logged as absolute ones, SPOP as what it popped, a
// transaction as MULTI, its writes, EXEC; reads are not logged.
TEST_P(AppendLogEngineTest, RecordsAreTheEffectsInAbsoluteForm) {
  ASSERT_NO_FATAL_FAILURE(OpenLogged("forms", AppendFsync::kAlways));
  SessionDriver driver(*kvlab_.context);
  driver.Feed(
      "SET k v EX 100\r\nGET k\r\nEXPIRE k 50\r\nSADD s m\r\nSPOP s\r\nSPOP s\r\n"
      "MULTI\r\nINCR n\r\nGET n\r\nEXEC\r\nGETEX k PERSIST\r\n");
  log_.reset();
  const std::string bytes = ReadFile(path_);
  EXPECT_EQ(bytes.find("GET\r\n"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find("$4\r\nPXAT\r\n"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find("$9\r\nPEXPIREAT\r\n$1\r\nk\r\n"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find(Command({"SREM", "s", "m"})), std::string::npos) << bytes;
  EXPECT_EQ(bytes.find("SPOP"), std::string::npos) << bytes;  // the empty one: nothing
  EXPECT_NE(bytes.find(Command({"MULTI"}) + Command({"INCR", "n"}) + Command({"EXEC"})),
            std::string::npos)
      << bytes;
  EXPECT_NE(bytes.find(Command({"PERSIST", "k"})), std::string::npos) << bytes;
  EXPECT_TRUE(ScanAppendLog(bytes).corruption.empty());
}

// RESTORE's relative TTL is logged as the deadline it set (ABSTTL), as
// Redis propagates it; one without a TTL as it came.
TEST_P(AppendLogEngineTest, RestoreIsLoggedWithItsDeadline) {
  ASSERT_NO_FATAL_FAILURE(OpenLogged("restore", AppendFsync::kAlways));
  SessionDriver driver(*kvlab_.context);
  const std::string payload = DumpPayload(EntryView{.value = "v"});
  driver.Feed(Command({"RESTORE", "r", "100000", payload}) +
              Command({"RESTORE", "p", "0", payload}));
  log_.reset();
  const std::string bytes = ReadFile(path_);
  EXPECT_NE(bytes.find("$6\r\nABSTTL\r\n"), std::string::npos) << bytes;
  EXPECT_EQ(bytes.find("$6\r\n100000\r\n"), std::string::npos) << bytes;
  EXPECT_NE(bytes.find(Command({"RESTORE", "p", "0", payload})), std::string::npos) << bytes;
  EXPECT_TRUE(ScanAppendLog(bytes).corruption.empty());
}

// Four connections write the same keys at once (one on `single`); the log, replayed on a fresh
// engine of the same kind, must give the same values — the list's order
// included, which only a log in effect order reproduces.
TEST_P(AppendLogEngineTest, ConcurrentWritersReplayToTheSameKeyspace) {
  ASSERT_NO_FATAL_FAILURE(OpenLogged("replay", AppendFsync::kEverySec));
  std::vector<std::thread> threads = StartWriters(150, [](const std::string& me, int i) {
    const std::string n = std::to_string(i);
    return Command({"LPUSH", "list", me + ":" + n}) + Command({"SET", "last", me}) +
           Command({"INCR", "counter"}) + Command({"MSET", "a", me + n, "b", me + n}) +
           Command({"HINCRBY", "h", "f" + me, "1"}) + "MULTI\r\n" +
           Command({"APPEND", "trail", me}) + Command({"RPUSH", "list2", n}) + "EXEC\r\n" +
           Command({"SADD", "set", n}) + Command({"SPOP", "set"});
  });
  for (std::thread& thread : threads) thread.join();
  const std::string state =
      "LRANGE list 0 -1\r\nGET last\r\nGET counter\r\nMGET a b\r\n"
      "HGETALL h\r\nGET trail\r\nLRANGE list2 0 -1\r\nSMEMBERS set\r\n";
  SessionDriver reader(*kvlab_.context, 99);
  const std::string expected = reader.Feed(state);
  log_.reset();

  EngineUnderTest fresh = MakeEngineUnderTest(GetParam());
  SessionDriver replay(*fresh.context);
  const std::string bytes = ReadFile(path_);
  const AppendLogScan scan = ScanAppendLog(bytes);
  ASSERT_TRUE(scan.corruption.empty()) << scan.corruption;
  EXPECT_EQ(scan.dropped_bytes, 0u);
  replay.Feed(WithoutAnnotations(bytes));
  SessionDriver check(*fresh.context, 100);
  EXPECT_EQ(check.Feed(state), expected);
}

// BGREWRITEAOF while four connections write: the rewritten file starts with
// the snapshot (a clock, then RESTOREs), is smaller than the log it
// replaced, and replays to the same keyspace as the writers left.
TEST_P(AppendLogEngineTest, ARewriteWhileWritersGoOnReplaysToTheSameKeyspace) {
  ASSERT_NO_FATAL_FAILURE(OpenLogged("rewrite", AppendFsync::kEverySec));
  const int threads_count = WriterCount();
  constexpr int kRounds = 200;
  std::atomic<int> rounds_done{0};
  std::vector<std::thread> threads = StartWriters(
      kRounds,
      [](const std::string& me, int i) {
        const std::string n = std::to_string(i);
        return Command({"LPUSH", "list", me + ":" + n}) + Command({"INCR", "counter"}) +
               Command({"SET", "k" + std::to_string(i % 10), me + n}) +
               Command({"MSET", "a", me + n, "b", me + n}) +
               Command({"HINCRBY", "h", "f" + me, "1"}) + "MULTI\r\n" +
               Command({"APPEND", "trail", me}) + Command({"RPUSH", "list2", n}) + "EXEC\r\n";
      },
      &rounds_done);
  // single: one thread drives the engine, so the rewrite is fed after it.
  if (threads_count == 1) threads[0].join();
  while (threads_count > 1 && rounds_done.load() < kRounds) std::this_thread::yield();
  SessionDriver admin(*kvlab_.context, 50);
  EXPECT_EQ(admin.Feed("BGREWRITEAOF\r\n"), "+Background append only file rewriting started\r\n");
  for (std::thread& thread : threads) {
    if (thread.joinable()) thread.join();
  }
  while (log_->counters().rewrite_in_progress)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const AppendLog::Counters counters = log_->counters();
  EXPECT_EQ(counters.rewrites, 1u);
  EXPECT_TRUE(counters.last_rewrite_ok);
  const std::string state =
      "LRANGE list 0 -1\r\nGET counter\r\nMGET a b\r\nHGETALL h\r\nGET trail\r\n"
      "LRANGE list2 0 -1\r\nMGET k0 k1 k2 k3 k4 k5 k6 k7 k8 k9\r\nDBSIZE\r\n";
  SessionDriver reader(*kvlab_.context, 99);
  const std::string expected = reader.Feed(state);
  const uint64_t appended = counters.appended_bytes;
  log_.reset();

  const std::string bytes = ReadFile(path_);
  EXPECT_TRUE(bytes.starts_with("#kvlab-now-ms:")) << bytes.substr(0, 100);
  EXPECT_NE(bytes.find("$7\r\nRESTORE\r\n"), std::string::npos);
  EXPECT_LT(bytes.size(), appended);  // every record ever appended is bigger
  const AppendLogScan scan = ScanAppendLog(bytes);
  ASSERT_TRUE(scan.corruption.empty()) << scan.corruption;
  EXPECT_EQ(scan.dropped_bytes, 0u);
  EngineUnderTest fresh = MakeEngineUnderTest(GetParam());
  SessionDriver replay(*fresh.context);
  replay.Feed(WithoutAnnotations(bytes));
  SessionDriver check(*fresh.context, 100);
  EXPECT_EQ(check.Feed(state), expected);
}

// Redis's own refusals and kvlab's: no log, no rewrite; none inside MULTI.
TEST_P(AppendLogEngineTest, BgRewriteAofNeedsTheLogAndIsRefusedInMulti) {
  {
    EngineUnderTest unlogged = MakeEngineUnderTest(GetParam());
    SessionDriver driver(*unlogged.context);
    EXPECT_TRUE(driver.Feed("BGREWRITEAOF\r\n").starts_with("-ERR kvlab-server rewrites only"));
  }
  ASSERT_NO_FATAL_FAILURE(OpenLogged("rewrite-multi", AppendFsync::kNo));
  SessionDriver driver(*kvlab_.context);
  const std::string replies = driver.Feed("MULTI\r\nBGREWRITEAOF\r\nEXEC\r\n");
  EXPECT_NE(replies.find("-EXECABORT"), std::string::npos) << replies;
  EXPECT_EQ(log_->counters().rewrites, 0u);
  EXPECT_FALSE(log_->counters().rewrite_in_progress);
}

// Redis's rule: past the minimum size and grown by the percentage over the
// size after the last rewrite; a percentage of 0 never.
TEST(AutoRewriteDue, IsRedisesGrowthRule) {
  EXPECT_TRUE(AutoRewriteDue(1000, 500, 100, 64));  // grown by 100%
  EXPECT_FALSE(AutoRewriteDue(999, 500, 100, 64));  // by 99.8%
  EXPECT_TRUE(AutoRewriteDue(1001, 500, 100, 64));
  EXPECT_FALSE(AutoRewriteDue(1001, 500, 100, 2000));                // below the minimum size
  EXPECT_FALSE(AutoRewriteDue(1001, 500, 0, 64));                    // off
  EXPECT_TRUE(AutoRewriteDue(100, 0, 100, 64));                      // no base yet: from 1 byte
  EXPECT_FALSE(AutoRewriteDue(400, 500, 1, 64));                     // smaller than its base
  EXPECT_TRUE(AutoRewriteDue(UINT64_MAX, UINT64_MAX / 4, 200, 64));  // no overflow
}

INSTANTIATE_TEST_SUITE_P(Engines, AppendLogEngineTest, ::testing::ValuesIn(AllEngineKinds()),
                         EngineTestName);

}  // namespace
}  // namespace kvlab::test
