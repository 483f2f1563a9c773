// The append-only log: its framing scan (truncated tails dropped, corruption
// refused), the records' absolute forms, and, on every engine, that a log
// written by several connections at once replays to the same keyspace —
// the order of the records agrees with the order of the effects.
#include "server/append_log.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "engines/dump_payload.h"
#include "server/aof_loader.h"
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
  // `single` is driven from one thread only (the Redis model).
  const int threads_count = GetParam() == "single" ? 1 : 4;
  constexpr int kRounds = 150;
  std::vector<std::thread> threads;
  for (int t = 0; t < threads_count; ++t) {
    threads.emplace_back([&, t] {
      SessionDriver driver(*kvlab_.context, 10 + t);
      const std::string me = std::to_string(t);
      for (int i = 0; i < kRounds; ++i) {
        const std::string n = std::to_string(i);
        driver.Feed(Command({"LPUSH", "list", me + ":" + n}) + Command({"SET", "last", me}) +
                    Command({"INCR", "counter"}) + Command({"MSET", "a", me + n, "b", me + n}) +
                    Command({"HINCRBY", "h", "f" + me, "1"}) + "MULTI\r\n" +
                    Command({"APPEND", "trail", me}) + Command({"RPUSH", "list2", n}) + "EXEC\r\n" +
                    Command({"SADD", "set", n}) + Command({"SPOP", "set"}));
      }
    });
  }
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
  replay.Feed(bytes);
  SessionDriver check(*fresh.context, 100);
  EXPECT_EQ(check.Feed(state), expected);
}

INSTANTIATE_TEST_SUITE_P(Engines, AppendLogEngineTest, ::testing::ValuesIn(AllEngineKinds()),
                         EngineTestName);

}  // namespace
}  // namespace kvlab::test
