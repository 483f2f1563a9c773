// Known-answer tests of the latencies kvlab-load reports:
//  - a reply delay of known size (DelayServer holds each PING's reply D):
//    the open-loop median is D plus the stack, for every strategy and for
//    every request of a pipelined batch;
//  - coordinated omission: a real redis-server child stopped with SIGSTOP
//    for ~200 ms under open loop at rate R leaves about R x (pause - 100 ms)
//    requests at >= 100 ms in the corrected histogram (each request counts
//    from its intended time), while a closed loop of the same shape shows
//    one per connection (the request each connection had in flight);
//  - an open loop the server cannot keep up with is marked behind, its
//    backlog counted, and the backlog's replies measured, not dropped.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#include "harness/measurement/client_phases.h"
#include "harness/measurement/load_clock.h"
#include "harness/sweep.h"
#include "tests/harness/delay_server.h"
#include "tests/harness/test_server.h"

namespace kvlab::harness {
namespace {

using testing::DelayServer;
using testing::TestServer;

// The stack's cost (two Unix-socket hops, up to four thread wake-ups) is
// measured at run time against a server without delay; this is how much it
// may vary between that run and the delayed one on a shared 2-core machine.
constexpr double kStackUs = 200;
// ... and the most the stack itself may cost, whatever the harness measures:
// the tolerance must not grow with a stack cost the same harness reports
// (110-300 us measured on the 2-core VM with a build beside it). A median
// above this says the machine, or the harness, is broken. ThreadSanitizer
// (`make test` runs this test under it) slows every wake-up several times:
// there the shared strategy's stack measured 460-1280 us on the same VM
// with other builds beside it, so its cap is 4 ms, still a fixed figure.
#if defined(__SANITIZE_THREAD__)  // GCC's; clang says so through __has_feature
constexpr bool kUnderThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kUnderThreadSanitizer = true;
#else
constexpr bool kUnderThreadSanitizer = false;
#endif
#else
constexpr bool kUnderThreadSanitizer = false;
#endif
constexpr double kMaxStackUs = kUnderThreadSanitizer ? 4000 : 1000;

// The most a known delay's open-loop p50 may read: 5% above the delay plus
// the stack measured just before (capped), plus what it may vary by.
double UpperBoundUs(double delay_us, double stack_us) {
  return delay_us * 1.05 + std::min(stack_us, kMaxStackUs) + kStackUs;
}

uint64_t CountAtOrAbove(const LatencyHistogram& histogram, uint64_t threshold_ns) {
  uint64_t count = 0;
  for (const LatencyHistogram::Bucket& bucket : histogram.NonEmptyBuckets()) {
    if (bucket.lower_ns >= threshold_ns) count += bucket.count;
  }
  return count;
}

LoadConfig PingConfig(const Target& target) {
  LoadConfig config;
  config.target = target;
  config.workload.command = CommandKind::kPing;
  config.warmup_s = 0.2;
  config.duration_s = 1.0;
  config.repetitions = 1;
  return config;
}

// The known-delay test and its helper are not built under ThreadSanitizer: its six
// open-loop cases (27 of this executable's 37 s there, the longest test of `make test`'s
// TSan pass) check a measured time, which TSan's slowdown does not make more thorough;
// their threads are the same strategies and open loop that the coordinated-omission,
// behind-schedule and phase cases run under TSan.
#if !defined(__SANITIZE_THREAD__)
// The p50 of the median repetition of `config` (3 repetitions): a stall of
// this shared machine, not of the code under test, can spoil one of them.
double MedianRepetitionP50(const LoadConfig& config, uint64_t* requests, int* behind) {
  std::vector<PointResult> points;
  const Status status = RunSweep(config, {}, &points);
  EXPECT_TRUE(status.ok()) << status.message();
  if (points.empty() || points[0].repetitions.size() != 3) return -1;
  std::vector<double> p50s;
  *behind = 0;
  for (const RepetitionResult& r : points[0].repetitions) {
    p50s.push_back(r.p50_us);
    *behind += r.behind;
  }
  *requests = MergedLatency(points[0]).count();
  std::sort(p50s.begin(), p50s.end());
  return p50s[1];
}

TEST(KnownDelayTest, OpenLoopMedianIsTheReplyDelayForEveryStrategy) {
  constexpr uint64_t kDelayNs = 5'000'000;
  const double delay_us = kDelayNs / 1000.0;
  DelayServer immediate(0);  // calibrates the stack: the same load, no delay
  DelayServer delayed(kDelayNs);
  ASSERT_TRUE(immediate.started() && delayed.started());
  struct Case {
    ClientKind client;
    int threads;
    int pipeline;
    double rate;
  };
  // Dedicated: ~10 requests in flight on one connection, each with its own
  // intended time; pooled and shared: 40 ops/s per thread, a fifth of the
  // 200/s that one request at a time allows. With Poisson arrivals a request
  // then finds the one before it still in flight at most a fifth of the
  // time, so the median is the delay itself (queueing would have to reach
  // half the requests to move it), over 30 requests per thread and
  // repetition in 0.75 s.
  for (const Case& c : {Case{ClientKind::kDedicated, 1, 32, 2000},
                        Case{ClientKind::kPooled, 1, 1, 40}, Case{ClientKind::kShared, 2, 1, 80}}) {
    for (const ArrivalKind arrival : {ArrivalKind::kUniform, ArrivalKind::kPoisson}) {
      SCOPED_TRACE(std::string(ClientKindName(c.client)) + " " + ArrivalKindName(arrival));
      LoadConfig config = PingConfig(immediate.unix_target());
      config.client = c.client;
      config.threads = {c.threads};
      config.pipeline = c.pipeline;
      config.rate = c.rate;
      config.arrival = arrival;
      config.duration_s = c.rate >= 1000 ? 0.5 : 0.75;
      config.repetitions = 3;
      // A starved moment of this shared machine (other tests, other builds)
      // can slow one whole measurement; such an attempt is measured again,
      // up to three times. A harness that misreports the delay fails every
      // attempt alike, so the last one's figures are the verdict.
      uint64_t requests = 0;
      int behind = 0;
      double stack_us = 0, p50_us = 0;
      // The stack alone needs fewer requests than the delay's median: it only sets the
      // allowance above the delay (capped at kMaxStackUs), so a short window serves.
      LoadConfig stack_config = config;
      stack_config.target = immediate.unix_target();
      stack_config.warmup_s = 0.05;
      stack_config.duration_s = 0.25;
      for (int attempt = 1; attempt <= 3; ++attempt) {
        stack_us = MedianRepetitionP50(stack_config, &requests, &behind);
        config.target = delayed.unix_target();
        p50_us = MedianRepetitionP50(config, &requests, &behind);
        std::printf(
            "%s %s (attempt %d): delay %.0f us, open-loop p50 %.1f us (stack alone "
            "%.1f us; median of 3 repetitions, %llu requests)\n",
            ClientKindName(c.client), ArrivalKindName(arrival), attempt, delay_us, p50_us, stack_us,
            static_cast<unsigned long long>(requests));
        const bool held = stack_us > 0 && stack_us <= kMaxStackUs &&
                          p50_us <= UpperBoundUs(delay_us, stack_us) && behind <= 1;
        if (held) break;
      }
      EXPECT_GE(requests, static_cast<uint64_t>(c.rate * config.duration_s * 3 *
                                                0.6));  // Poisson counts vary
      // Never below the delay (0.5%: the histogram's bucket error) ...
      EXPECT_GE(p50_us, delay_us * 0.995);
      // ... and within 5% plus the stack, as measured just before (capped), above it.
      EXPECT_GT(stack_us, 0);
      EXPECT_LE(stack_us, kMaxStackUs);
      EXPECT_LE(p50_us, UpperBoundUs(delay_us, stack_us));
      EXPECT_LE(behind, 1);
    }
  }
}
#endif  // !__SANITIZE_THREAD__

// Runs `config` against `server`, stopping the server for ~200 ms once,
// about 1 s into the measured window. Returns how many requests took
// >= 100 ms; *paused_s is the pause's true length.
uint64_t SlowRequestsWithPause(const LoadConfig& config, TestServer& server, double* paused_out) {
  double paused_s = 0;
  SweepCallbacks callbacks;
  callbacks.on_progress = [&](const SweepProgress& progress) {
    if (progress.repetition != 1 || paused_s > 0) return;
    const uint64_t stopped = NowNs();
    server.Signal(SIGSTOP);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    server.Signal(SIGCONT);
    paused_s = (NowNs() - stopped) / 1e9;
  };
  std::vector<PointResult> points;
  const Status status = RunSweep(config, callbacks, &points);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_GT(paused_s, 0) << "the pause never happened";
  *paused_out = paused_s;
  return points.size() == 1 ? CountAtOrAbove(MergedLatency(points[0]), 100'000'000) : 0;
}

TEST(CoordinatedOmissionTest, OpenLoopCountsEveryDelayedRequestClosedLoopOnePerConnection) {
  TestServer server(testing::RedisServer());
  ASSERT_TRUE(server.started()) << server.start_error();
  constexpr int kConnections = 4;
  constexpr double kRate = 2000;
  LoadConfig config = PingConfig(server.unix_target());
  config.client = ClientKind::kDedicated;
  config.threads = {1};
  config.connections = kConnections;
  config.duration_s = 2.0;
  config.warmup_s = 0.3;

  // Open loop: requests intended during the pause wait for it to end, so a
  // request intended t after the stop waits (pause - t): those intended in
  // the first (pause - 100 ms) take >= 100 ms. Requests are sent on time
  // (pipeline 1000 leaves room), so every one is in the histogram.
  config.rate = kRate;
  config.pipeline = 1000;
  double open_pause_s = 0;
  const uint64_t corrected = SlowRequestsWithPause(config, server, &open_pause_s);
  const double expected = kRate * (open_pause_s - 0.1);

  // Closed loop, same shape: each connection's one request in flight waits
  // out the pause; no other request is even sent meanwhile.
  config.rate = 0;
  config.pipeline = 1;
  double closed_pause_s = 0;
  const uint64_t uncorrected = SlowRequestsWithPause(config, server, &closed_pause_s);

  std::printf(
      "server stopped %.0f ms at %.0f ops/s: requests >= 100 ms: open loop (corrected) "
      "%llu, expected %.0f; closed loop (uncorrected) %llu with %d connections\n",
      open_pause_s * 1000, kRate, static_cast<unsigned long long>(corrected), expected,
      static_cast<unsigned long long>(uncorrected), kConnections);
  // Tolerance 15% + 20: the schedule's phase and wake-up jitter around the
  // 100 ms threshold, and the pause's start and end as the harness saw them.
  EXPECT_NEAR(static_cast<double>(corrected), expected, 0.15 * expected + 20);
  // One per connection; a stall of >= 100 ms of the shared machine (not the
  // server) adds one per connection, and up to two such stalls are allowed.
  EXPECT_GE(uncorrected, static_cast<uint64_t>(kConnections));
  EXPECT_LE(uncorrected, static_cast<uint64_t>(3 * kConnections));
}

TEST(OpenLoopBehindTest, AServerThatCannotKeepUpIsBehindWithItsBacklogMeasured) {
  // One pooled connection, one request at a time, 1 ms per reply: at most
  // ~1000 ops/s against 2000 offered.
  DelayServer server(1'000'000);
  ASSERT_TRUE(server.started());
  LoadConfig config = PingConfig(server.unix_target());
  config.client = ClientKind::kPooled;
  config.connections = 1;
  config.rate = 2000;
  config.warmup_s = 0.1;
  config.duration_s = 0.3;
  config.repetitions = 2;
  std::vector<PointResult> points;
  const Status status = RunSweep(config, {}, &points);
  ASSERT_TRUE(status.ok()) << status.message();
  uint64_t measured = 0;
  for (const RepetitionResult& r : points[0].repetitions) {
    EXPECT_TRUE(r.behind);
    EXPECT_DOUBLE_EQ(r.offered_rate, 2000);
    EXPECT_LE(r.achieved_rate, 1000 * 1.01);
    // The backlog has grown since the point started: at least the shortfall of this window.
    EXPECT_GE(static_cast<double>(r.backlog), (r.offered_rate - r.achieved_rate) * r.seconds);
    measured += r.latency.count();
  }
  // The last window's backlog was drained and measured: more latencies
  // than answers inside the windows.
  const RepetitionResult& last = points[0].repetitions.back();
  EXPECT_GE(last.latency.count(), last.ops + last.backlog / 2);
  // Everything the server answered during and after the windows, minus the
  // warm-up, was measured (the drain ran to the end of the schedule).
  EXPECT_GE(server.PingsOnceCounted(measured), measured);
}

// The client's own phases (client_phases.h) against a known delay: a load
// thread with one request in flight on a server that holds every reply 5 ms
// spends those 5 ms of each operation waiting (in poll, a blocking read or
// for the thread that does its I/O), little in the other three phases (the
// stack's cost at most), and the four add up to the thread's whole window
// per operation. For every strategy and I/O model.
struct PhaseCase {
  ClientKind client;
  IoModel io;
  const char* name;
};

class ClientPhasesTest : public ::testing::TestWithParam<PhaseCase> {};

TEST_P(ClientPhasesTest, AKnownReplyDelayIsWaitingAndThePhasesAddUpToTheWindow) {
  constexpr double kDelayUs = 5000;
  DelayServer server(static_cast<uint64_t>(kDelayUs * 1000));
  ASSERT_TRUE(server.started());
  LoadConfig config = PingConfig(server.unix_target());
  config.client = GetParam().client;
  config.io.model = GetParam().io;
  config.io.loop_threads = 1;
  config.threads = {1};
  config.connections = 1;
  config.pipeline = 1;
  config.duration_s = 0.5;
  std::vector<PointResult> points;
  ASSERT_TRUE(RunSweep(config, {}, &points).ok());
  ASSERT_EQ(points.size(), 1u);
  const RepetitionResult& r = points[0].repetitions.at(0);
  ASSERT_GT(r.ops, 25u);
  const auto& names = ClientPhaseNames();
  double sum_us = 0, others_us = 0;
  for (size_t i = 0; i < kClientPhaseCount; ++i) {
    SCOPED_TRACE(names[i]);
    ASSERT_FALSE(std::isnan(r.client_phase_us[i]));
    EXPECT_GE(r.client_phase_us[i], 0);
    sum_us += r.client_phase_us[i];
    if (static_cast<ClientPhase>(i) != ClientPhase::kWait) others_us += r.client_phase_us[i];
  }
  const double wait_us = r.client_phase_us[static_cast<size_t>(ClientPhase::kWait)];
  EXPECT_GE(wait_us, kDelayUs * 0.95);
  EXPECT_LE(wait_us, UpperBoundUs(kDelayUs, kMaxStackUs));
  EXPECT_LT(others_us, kMaxStackUs);
  // One thread: its phases are its whole window, give or take the step
  // running at each edge (one 5 ms wait of a 0.5 s window).
  const double window_us_per_op = r.seconds * 1e6 / static_cast<double>(r.ops);
  EXPECT_NEAR(sum_us, window_us_per_op, window_us_per_op * 0.03);
}

INSTANTIATE_TEST_SUITE_P(
    Strategies, ClientPhasesTest,
    ::testing::Values(PhaseCase{ClientKind::kDedicated, IoModel::kDirect, "dedicated"},
                      PhaseCase{ClientKind::kPooled, IoModel::kDirect, "pooled"},
                      PhaseCase{ClientKind::kShared, IoModel::kDirect, "shared"},
                      PhaseCase{ClientKind::kPooled, IoModel::kEventLoop, "pooled_event_loop"},
                      PhaseCase{ClientKind::kShared, IoModel::kEventLoop, "shared_event_loop"}),
    [](const ::testing::TestParamInfo<PhaseCase>& info) { return std::string(info.param.name); });

// Where the caller does its own I/O, its write() is send and the parsing of
// the reply receive: a pooled thread against a server that answers at once
// spends time in each of the four, not all of it waiting.
TEST(ClientPhasesSplitTest, APooledThreadSendsWaitsAndReceivesApart) {
  DelayServer server(0);
  ASSERT_TRUE(server.started());
  LoadConfig config = PingConfig(server.unix_target());
  config.client = ClientKind::kPooled;
  config.threads = {1};
  config.connections = 1;
  config.duration_s = 0.3;
  std::vector<PointResult> points;
  ASSERT_TRUE(RunSweep(config, {}, &points).ok());
  const RepetitionResult& r = points.at(0).repetitions.at(0);
  ASSERT_GT(r.ops, 100u);
  for (size_t i = 0; i < kClientPhaseCount; ++i) {
    SCOPED_TRACE(ClientPhaseNames()[i]);
    EXPECT_GT(r.client_phase_us[i], 0);
  }
}

}  // namespace
}  // namespace kvlab::harness
