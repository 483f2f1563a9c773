// ThreadRecorder: error replies count as errors but their latencies stay out
// of the histogram; ops are counted for throughput slices; the open-loop
// backlog counts issued-unanswered and due-unsent requests.
#include "harness/measurement/thread_recorder.h"

#include <gtest/gtest.h>

namespace kvlab::harness {
namespace {

TEST(ThreadRecorderTest, ErrorRepliesStayOutOfTheLatencyHistogram) {
  ThreadRecorder recorder;
  recorder.Record({1'000, ReplyVerdict::kOk, 0});
  recorder.Record({2'000, ReplyVerdict::kMiss, 0});
  recorder.Record({9'000'000, ReplyVerdict::kErrorReply, 0});
  recorder.Record({9'000'000, ReplyVerdict::kWrongType, 0});
  const ThreadCounters counters = recorder.Take();
  EXPECT_EQ(counters.ops, 2u);
  EXPECT_EQ(counters.errors, 2u);
  EXPECT_EQ(counters.wrong_type, 1u);
  EXPECT_EQ(counters.misses, 1u);
  EXPECT_EQ(counters.latency.count(), counters.ops);
  EXPECT_LT(counters.latency.max_ns(), 9'000'000u);
}

TEST(ThreadRecorderTest, CountsOpsForSlicesAcrossTakes) {
  ThreadRecorder recorder;
  recorder.Record({500, ReplyVerdict::kOk, 0});
  recorder.Record({50, ReplyVerdict::kErrorReply, 0});
  EXPECT_EQ(recorder.Take().ops_total, 1u);
  recorder.Record({600, ReplyVerdict::kMiss, 0});
  const ThreadCounters counters = recorder.Take();
  EXPECT_EQ(counters.ops, 1u);
  EXPECT_EQ(counters.ops_total, 2u);  // since construction, at the Take
  EXPECT_EQ(recorder.completed_ops(), 2u);
}

TEST(ThreadRecorderTest, BacklogCountsUnansweredAndUnsentDueRequests) {
  ThreadRecorder recorder;
  EXPECT_EQ(recorder.Backlog(5'000'000'000, 1000), 0u);  // closed loop: no schedule
  recorder.NoteSchedule(1'000'000'000, false);           // first request due at t = 1 s
  for (int i = 1; i <= 5; ++i) recorder.NoteSchedule(1'000'000'000 + i * 1'000'000, true);
  recorder.Record({10, ReplyVerdict::kOk, 0});
  // 5 issued, 1 answered: 4 in flight; at 1000 ops/s the next (due at
  // 1.005 s) and 9 more are due by 1.0145 s but not sent.
  EXPECT_EQ(recorder.Backlog(1'014'500'000, 1000), 4u + 10u);
  EXPECT_EQ(recorder.Backlog(1'004'000'000, 1000), 4u);
}

}  // namespace
}  // namespace kvlab::harness
