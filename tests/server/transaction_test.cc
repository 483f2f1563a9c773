// MULTI/EXEC/WATCH rules beyond the differential stream, over a Session on
// every engine, with Redis 7.0.15's replies (multi.tcl's cases):
//   - a watched key that expires after its WATCH dooms the EXEC, whether the
//     EXEC or another client's command is what finds it expired
//     (isWatchedKeyExpired(), and the signal of a lazy expiry);
//   - a key already expired when watched does not, even once reclaimed;
//   - SAVE and SHUTDOWN are refused inside MULTI and doom the EXEC.
// Expiry needs real time to pass: the deadlines are 100 ms away, the sleeps
// 250 ms, so the order of WATCH and deadline is known, not raced.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "tests/server/session_driver.h"

namespace kvlab::test {
namespace {

class TransactionTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    kvlab_ = MakeEngineUnderTest(GetParam(), settings_);
    ASSERT_TRUE(kvlab_.engine);
    client_ = std::make_unique<SessionDriver>(*kvlab_.context, 1);
    other_ = std::make_unique<SessionDriver>(*kvlab_.context, 2);
  }
  static void PassDeadline() { std::this_thread::sleep_for(std::chrono::milliseconds(250)); }

  ServerSettings settings_;
  EngineUnderTest kvlab_;
  std::unique_ptr<SessionDriver> client_;
  std::unique_ptr<SessionDriver> other_;
};

constexpr std::string_view kAborted = "*-1\r\n";
constexpr std::string_view kPong = "*1\r\n+PONG\r\n";

TEST_P(TransactionTest, KeyExpiringAfterWatchDoomsExec) {
  EXPECT_EQ(client_->Feed("SET x foo PX 100\r\nWATCH x\r\n"), "+OK\r\n+OK\r\n");
  PassDeadline();
  EXPECT_EQ(client_->Feed("MULTI\r\nPING\r\nEXEC\r\n"),
            "+OK\r\n+QUEUED\r\n" + std::string(kAborted));
  // The EXEC unwatched everything: the next one runs.
  EXPECT_EQ(client_->Feed("MULTI\r\nPING\r\nEXEC\r\n"), "+OK\r\n+QUEUED\r\n" + std::string(kPong));
}

TEST_P(TransactionTest, KeyReclaimedByAnotherClientAfterWatchDoomsExec) {
  EXPECT_EQ(client_->Feed("SET x foo PX 100\r\nWATCH x\r\n"), "+OK\r\n+OK\r\n");
  PassDeadline();
  // DEL finds it expired: reclaiming it is the change (nothing is deleted).
  EXPECT_EQ(other_->Feed("DEL x\r\n"), ":0\r\n");
  EXPECT_EQ(client_->Feed("MULTI\r\nPING\r\nEXEC\r\n"),
            "+OK\r\n+QUEUED\r\n" + std::string(kAborted));
}

TEST_P(TransactionTest, KeyAlreadyExpiredAtWatchDoesNotDoomExec) {
  EXPECT_EQ(client_->Feed("SET x foo PX 100\r\n"), "+OK\r\n");
  PassDeadline();
  EXPECT_EQ(client_->Feed("WATCH x\r\nMULTI\r\nPING\r\nEXEC\r\n"),
            "+OK\r\n+OK\r\n+QUEUED\r\n" + std::string(kPong));
  // Nor once another client has reclaimed it...
  EXPECT_EQ(client_->Feed("SET y foo PX 100\r\n"), "+OK\r\n");
  PassDeadline();
  EXPECT_EQ(client_->Feed("WATCH y\r\n"), "+OK\r\n");
  EXPECT_EQ(other_->Feed("DEL y\r\nEXISTS y\r\n"), ":0\r\n:0\r\n");
  EXPECT_EQ(client_->Feed("MULTI\r\nPING\r\nEXEC\r\n"), "+OK\r\n+QUEUED\r\n" + std::string(kPong));
  // ...but writing it again is a change.
  EXPECT_EQ(client_->Feed("SET z foo PX 100\r\n"), "+OK\r\n");
  PassDeadline();
  EXPECT_EQ(client_->Feed("WATCH z\r\n"), "+OK\r\n");
  EXPECT_EQ(other_->Feed("SET z bar\r\n"), "+OK\r\n");
  EXPECT_EQ(client_->Feed("MULTI\r\nPING\r\nEXEC\r\n"),
            "+OK\r\n+QUEUED\r\n" + std::string(kAborted));
}

TEST_P(TransactionTest, LiveWatchedKeyWithDistantDeadlineDoesNotDoomExec) {
  EXPECT_EQ(client_->Feed("SET x foo EX 1000\r\nWATCH x\r\nMULTI\r\nGET x\r\nEXEC\r\n"),
            "+OK\r\n+OK\r\n+OK\r\n+QUEUED\r\n*1\r\n$3\r\nfoo\r\n");
}

TEST_P(TransactionTest, SaveAndShutdownAreRefusedInsideMulti) {
  for (const std::string command : {"SAVE", "SHUTDOWN", "shutdown nosave"}) {
    SCOPED_TRACE(command);
    EXPECT_EQ(
        client_->Feed("DEL foo\r\nMULTI\r\nSET foo bar\r\n" + command + "\r\nEXEC\r\nGET foo\r\n"),
        ":0\r\n+OK\r\n+QUEUED\r\n-ERR Command not allowed inside a transaction\r\n"
        "-EXECABORT Transaction discarded because of previous errors.\r\n$-1\r\n");
  }
}

TEST_P(TransactionTest, ShutdownOptionsAreParsedAsRedisDoes) {
  EXPECT_EQ(client_->Feed("SHUTDOWN ABORT\r\nSHUTDOWN ABORT ABORT\r\nSHUTDOWN NOW ABORT\r\n"
                          "SHUTDOWN SAVE NOSAVE\r\nSHUTDOWN BOGUS\r\nSAVE\r\n"),
            "-ERR No shutdown in progress.\r\n-ERR No shutdown in progress.\r\n"
            "-ERR syntax error\r\n-ERR syntax error\r\n-ERR syntax error\r\n"
            "-ERR kvlab-server keeps no snapshot (no RDB persistence): SAVE is not supported\r\n");
  // A Session without a process to stop (no ServerContext::shutdown, as
  // here) answers an error rather than end whatever process it runs in.
  EXPECT_EQ(client_->Feed("SHUTDOWN\r\n"), "-ERR Errors trying to SHUTDOWN. Check logs.\r\n");
}

// Two moves in one EXEC share the group's state: the second, from a list
// the first emptied, pops nothing (it once popped a missing list: a crash).
TEST_P(TransactionTest, SecondMoveFromAnEmptiedListInExecPopsNothing) {
  EXPECT_EQ(client_->Feed("RPUSH src a\r\nMULTI\r\nRPOPLPUSH src dst\r\n"
                          "LMOVE src dst LEFT LEFT\r\nLRANGE dst 0 -1\r\nEXEC\r\n"),
            ":1\r\n+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n"
            "*3\r\n$1\r\na\r\n$-1\r\n*1\r\n$1\r\na\r\n");
}

INSTANTIATE_TEST_SUITE_P(Engines, TransactionTest, ::testing::ValuesIn(AllEngineKinds()),
                         EngineTestName);

}  // namespace
}  // namespace kvlab::test
