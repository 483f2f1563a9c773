// INFO stages' known answers, per engine, on kvlab-server as a process: a
// test-only spin of a known time inside one stage (--stage-spin) must show
// in that stage's median and in no other stage's; the stages must add up to
// the server's whole time (wake-up to send); and no stage may take longer
// than the round trip the client measured for the same requests. Each
// thread's busy and waiting time (thread_<name>) holds a known spin on the
// thread that executes it and only there, and a known sleep as waiting.
//
// Timing without flakiness: the injected time (2 ms) is far above what a
// stage takes on a quiet or a busy machine (microseconds to tens of them),
// the comparisons are of medians over one sequential client's requests, and
// the tolerance is 10% of the injected answer, never a bound of its own.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <thread>

#include "tests/server/server_test_support.h"

namespace kvlab::test {
namespace {

constexpr int kRequests = 61;  // sequential GETs: an odd count has one median
// The injected answer; ThreadSanitizer makes every stage several times
// slower, so its known answer is ten times longer.
#if defined(__SANITIZE_THREAD__)
constexpr double kSpinUsec = 20000;
#else
constexpr double kSpinUsec = 2000;
#endif
constexpr double kTolerance = 0.1 * kSpinUsec;

// One INFO stages line's fields: a stage's calls=..,usec=..,usec_per_call=..,
// p50=..,p99=..,p99.9=.., or a thread's busy_usec=..,wait_usec=..
using StageFields = std::map<std::string, double>;

// The INFO lines `<prefix><name>:<field>=<number>,...`, by name.
std::map<std::string, StageFields> ParseFieldLines(const std::string& info,
                                                   const std::string& prefix) {
  std::map<std::string, StageFields> stages;
  std::istringstream lines(info);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind(prefix, 0) != 0 || line.find('=') == std::string::npos) continue;
    const size_t colon = line.find(':');
    StageFields& fields = stages[line.substr(prefix.size(), colon - prefix.size())];
    std::istringstream pairs(line.substr(colon + 1));
    std::string pair;
    while (std::getline(pairs, pair, ',')) {
      const size_t equals = pair.find('=');
      fields[pair.substr(0, equals)] = std::stod(pair.substr(equals + 1));
    }
  }
  return stages;
}

std::map<std::string, StageFields> ParseStages(const std::string& info) {
  return ParseFieldLines(info, "stage_");
}

// thread_io0, thread_shard1, ...: each thread's busy_usec and wait_usec.
std::map<std::string, StageFields> ParseThreadTimes(const std::string& info) {
  return ParseFieldLines(info, "thread_");
}

struct Measured {
  std::map<std::string, StageFields> stages;
  std::vector<double> client_usec;  // every request the server sampled, as the client saw it
};

// Starts the engine with every read sampled (plus `extra`), sends one
// CONFIG RESETSTAT and kRequests GETs one at a time, and reads INFO stages.
void Measure(const std::string& engine, const std::vector<std::string>& extra, Measured* out) {
  std::vector<std::string> args = {"--stage-sample", "1", "--io-threads", "2", "--shards", "2"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::unique_ptr<ServerProcess> server;
  const Status started = ServerProcess::Start(engine, args, &server);
  ASSERT_TRUE(started.ok()) << started.message();
  auto c = RedisConnection::Tcp(server->port());
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->Command({"SET", "known", "answer"}).IsStatus("OK"));
  auto timed = [&](const std::vector<std::string>& command) {
    const auto begin = std::chrono::steady_clock::now();
    Reply reply = c->Command(command);
    out->client_usec.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - begin)
            .count());
    return reply;
  };
  // Its own sample is recorded after the reset, once its reply is sent.
  ASSERT_TRUE(timed({"CONFIG", "RESETSTAT"}).IsStatus("OK"));
  for (int i = 0; i < kRequests; ++i) ASSERT_TRUE(timed({"GET", "known"}).IsBulk("answer"));
  out->stages = ParseStages(c->Command({"INFO", "stages"}).text);
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

class StagesKnownAnswer : public ::testing::TestWithParam<std::string> {};

TEST_P(StagesKnownAnswer, StagesAddUpAndStayWithinTheClientsLatency) {
  Measured m;
  ASSERT_NO_FATAL_FAILURE(Measure(GetParam(), {}, &m));
  ASSERT_TRUE(m.stages.count("total")) << "no sample recorded";
  const double samples = m.stages["total"]["calls"];
  EXPECT_EQ(samples, kRequests + 1);  // the GETs and the RESETSTAT
  for (const char* always : {"read", "parse", "dispatch", "execute", "render", "write"}) {
    EXPECT_TRUE(m.stages.count(always)) << always;
  }
  if (GetParam() == "sharded") {  // every command crosses to a shard thread and back
    EXPECT_EQ(m.stages["queue"]["calls"], kRequests);
    EXPECT_EQ(m.stages["return"]["calls"], kRequests);
  }
  if (GetParam() == "single" || GetParam() == "concurrent" || GetParam() == "striped") {
    EXPECT_FALSE(m.stages.count("queue")) << "an inline engine has no hop: absent, not zero";
    EXPECT_FALSE(m.stages.count("return"));
  }
  // The stages' means per sampled request add up to the wake-up-to-send mean.
  double sum = 0;
  for (auto& [name, fields] : m.stages) {
    if (name != "total") sum += fields["usec"] / samples;
  }
  const double total_mean = m.stages["total"]["usec"] / samples;
  EXPECT_NEAR(sum, total_mean, 0.1 * total_mean);
  // No stage takes longer than the client's round trip: medians against its
  // median, and the whole's mean against its mean. (Not maxima: a loopback
  // send() delivers the reply, and wakes the client, before it returns, so
  // a single request's `sent` can come after the client has its reply.)
  const double client_median = Median(m.client_usec);
  double client_mean = 0;
  for (double usec : m.client_usec) client_mean += usec / m.client_usec.size();
  // A reported percentile is its bucket's, within 1/64 of the true value
  // (stage_histogram.h); and the whole ends when send() returns, which can
  // be after the client has its reply, by up to the write stage's own time.
  const double resolution = 1.0 + 1.0 / 64;
  const double write_p50 = m.stages["write"]["p50"];
  for (auto& [name, fields] : m.stages) {
    const double allowed = name == "total" ? client_median + write_p50 : client_median;
    EXPECT_LE(fields["p50"], allowed * resolution) << name;
  }
  // Means likewise: the whole's mean may exceed the client's by the write
  // stage's mean (under ASan on a busy machine it did, by 1.3%).
  const double write_mean = m.stages["write"]["usec"] / samples;
  EXPECT_LE(total_mean, client_mean + write_mean);
}

// Injected in `stage` (parse: the server's own code; execute: the engine's,
// on whichever thread runs it): that stage's median grows by the spin, and
// every other stage's median stays where it was without the spin.
void ExpectSpinShowsOnlyIn(const std::string& engine, const std::string& stage) {
  Measured base, spun;
  ASSERT_NO_FATAL_FAILURE(Measure(engine, {}, &base));
  ASSERT_NO_FATAL_FAILURE(
      Measure(engine, {"--stage-spin", stage + "=" + std::to_string(int(kSpinUsec))}, &spun));
  ASSERT_TRUE(spun.stages.count(stage));
  EXPECT_NEAR(spun.stages[stage]["p50"] - base.stages[stage]["p50"], kSpinUsec, kTolerance)
      << "spun " << spun.stages[stage]["p50"] << " base " << base.stages[stage]["p50"];
  for (auto& [name, fields] : spun.stages) {
    if (name == stage || name == "total") continue;
    ASSERT_TRUE(base.stages.count(name)) << name << " appeared with the spin";
    EXPECT_NEAR(fields["p50"], base.stages[name]["p50"], kTolerance) << name;
  }
}

TEST_P(StagesKnownAnswer, ExecuteSpinShowsInExecuteOnly) {
  ExpectSpinShowsOnlyIn(GetParam(), "execute");
}
TEST_P(StagesKnownAnswer, ParseSpinShowsInParseOnly) { ExpectSpinShowsOnlyIn(GetParam(), "parse"); }

// CONFIG SET stage-sample 0 stops sampling; CONFIG GET reads the rate back.
TEST_P(StagesKnownAnswer, ConfigSetTurnsSamplingOff) {
  std::unique_ptr<ServerProcess> server;
  ASSERT_TRUE(ServerProcess::Start(GetParam(), {"--stage-sample", "1"}, &server).ok());
  auto c = RedisConnection::Tcp(server->port());
  ASSERT_NE(c, nullptr);
  ASSERT_TRUE(c->Command({"CONFIG", "SET", "stage-sample", "0"}).IsStatus("OK"));
  ASSERT_TRUE(c->Command({"CONFIG", "RESETSTAT"}).IsStatus("OK"));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(c->Command({"PING"}).IsStatus("PONG"));
  Reply got = c->Command({"CONFIG", "GET", "stage-sample"});
  ASSERT_EQ(got.elements.size(), 2u);
  EXPECT_EQ(got.elements[1].text, "0");
  EXPECT_FALSE(ParseStages(c->Command({"INFO", "stages"}).text).count("total"));
  ASSERT_TRUE(c->Command({"CONFIG", "SET", "stage-sample", "1"}).IsStatus("OK"));
  ASSERT_TRUE(c->Command({"PING"}).IsStatus("PONG"));
  // The PING; not the CONFIG SET, whose read came while sampling was off.
  EXPECT_EQ(ParseStages(c->Command({"INFO", "stages"}).text)["total"]["calls"], 1);
}

// One measurement of the test below: per parity (as started, shifted by one
// PING), how many of the sampled requests hopped to the shard.
void MeasureSampledHops(int pairs, int members, std::vector<double>* hopped) {
  for (const bool shift : {false, true}) {
    SCOPED_TRACE(shift ? "parity shifted" : "parity as started");
    std::unique_ptr<ServerProcess> server;
    ASSERT_TRUE(ServerProcess::Start("sharded",
                                     {"--stage-sample", "2", "--io-threads", "1", "--shards", "1"},
                                     &server)
                    .ok());
    auto c = RedisConnection::Tcp(server->port());
    ASSERT_NE(c, nullptr);
    for (int batch = 0; batch < members / 10000; ++batch) {
      std::vector<std::string> sadd = {"SADD", "big"};
      for (int i = 0; i < 10000; ++i) sadd.push_back(std::to_string(batch * 10000 + i));
      ASSERT_TRUE(c->Command(sadd).IsInteger(10000));
    }
    ASSERT_TRUE(c->Command({"CONFIG", "RESETSTAT"}).IsStatus("OK"));
    if (shift) {
      ASSERT_TRUE(c->Command({"PING"}).IsStatus("PONG"));
    }
    for (int pair = 0; pair < pairs; ++pair) {
      c->Append({"SUNIONSTORE", "copy", "big", "big"});
      ASSERT_TRUE(c->Flush());
      // Its own read, mid-union: a union of 100,000 members takes 40-100 ms here,
      // so 20 ms leaves the server time to have read the SUNIONSTORE alone even when
      // it is descheduled (one read holding both would shift the parity).
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      c->Append({"PING"});
      ASSERT_TRUE(c->Flush());
      ASSERT_TRUE(c->GetReply().IsInteger(members));
      ASSERT_TRUE(c->GetReply().IsStatus("PONG"));
    }
    auto stages = ParseStages(c->Command({"INFO", "stages"}).text);
    std::printf("  sampled %.0f requests, %.0f with a hop\n", stages["total"]["calls"],
                stages["queue"]["calls"]);
    // `pairs`, give or take RESETSTAT's or the extra PING's own sample.
    EXPECT_GE(stages["total"]["calls"], pairs - 1);
    EXPECT_LE(stages["total"]["calls"], pairs + 1);
    hopped->push_back(stages["queue"]["calls"]);
  }
}

// A sample falls due on a read that arrives while its connection still has
// a batch on a shard thread: it is owed, not dropped, and taken when that
// batch returns, by the request the read brought. Here every second read is
// such a read (a PING sent while a SUNIONSTORE runs on the shard), and
// every second read is due (--stage-sample 2); the extra PING flips which.
//  - Dropped samples would leave every pair sampled or none, by the parity;
//    owed ones sample every pair either way.
//  - With the SUNIONSTOREs due, the samples are theirs: each has a `queue`
//    stage (the hop). With the PINGs due, they are the PINGs', which run on
//    the I/O thread and have none. A sample owed to the thread's next read
//    instead fell on the next SUNIONSTORE in both parities, and with a hop
//    per command and 50 pipelining clients, where a batch is nearly always
//    away, left that engine a fifth of the others' samples per request.
TEST(StagesSampling, ADueSampleIsTakenWhenItsConnectionsBatchReturns) {
  constexpr int kPairs = 8;
  // The union must outlast the 20 ms pause before the PING by far. Under
  // ThreadSanitizer, which runs it several times slower, a fifth of the
  // members does (the test took 37 s there with all of them).
#if defined(__SANITIZE_THREAD__)
  constexpr int kMembers = 20000;
#else
  constexpr int kMembers = 100000;
#endif
  // A server descheduled for the whole 20 ms pause (`make test` runs four
  // tests on two cores; seen once) reads the SUNIONSTORE and the PING in one
  // read, which shifts the parity for every later pair: both parities then
  // sample the unions. That is the scheduler, not the sampling, so such a
  // measurement is made again, up to three times; the bug this test is for
  // (a sample owed to the thread's next read) samples the unions every time.
  std::vector<double> hopped;  // per parity: sampled requests that hopped to the shard
  for (int attempt = 1; attempt <= 3; ++attempt) {
    hopped.clear();
    ASSERT_NO_FATAL_FAILURE(MeasureSampledHops(kPairs, kMembers, &hopped));
    std::sort(hopped.begin(), hopped.end());
    if (hopped[0] <= 1) break;
    std::printf("  attempt %d: both parities sampled the unions; measured again\n", attempt);
  }
  EXPECT_LE(hopped[0], 1) << "with the PINGs due, the sampled requests were not the PINGs";
  EXPECT_GE(hopped[1], kPairs - 1) << "with the unions due, they were not the unions";
}

// ---- Busy versus waiting: the thread_<name> lines ---------------------------
//
// Each I/O, shard or owner thread marks the moments its waits for work begin
// and end (base/busy_wait_meter.h) and adds each span when it ends, so the
// spans a thread adds between two INFO readings tile, without gap or
// overlap, the time between its last mark before the first reading and its
// last mark before the second. The bounds below come from that and from the
// client's own clock, never from the server's figures.

double SteadyUsec() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A key whose commands execute on another thread than the connection's: on
// `owner`, one the other I/O thread owns, told by its `queue` stage (only a
// hop has one); there every key is tried until one hops. "" if none did.
std::string KeyOwnedByAnotherThread(RedisConnection& c) {
  for (int i = 0; i < 64; ++i) {  // each key hops with odds 1/2: 2^-64 to find none
    const std::string key = "owned:" + std::to_string(i);
    if (!c.Command({"CONFIG", "RESETSTAT"}).IsStatus("OK")) return "";
    if (!c.Command({"SET", key, "answer"}).IsStatus("OK")) return "";
    if (ParseStages(c.Command({"INFO", "stages"}).text).count("queue")) return key;
  }
  return "";
}

// The thread that executed most operations by the engine's own counters
// (INFO kvlab, which the busy figures do not feed): on `sharded` the shard
// with the most (shard<i>_ops), on `owner` the owner with the most from
// other threads' connections (owner<i>_remote_ops; owner i is I/O thread
// i). "" on the inline engines, which count no thread's operations.
std::string ThreadThatExecuted(const std::string& engine, const std::string& kvlab_info) {
  std::string counter_prefix, counter_suffix, thread_prefix;
  if (engine == "sharded") {
    counter_prefix = "shard", counter_suffix = "_ops", thread_prefix = "shard";
  } else if (engine == "owner") {
    counter_prefix = "owner", counter_suffix = "_remote_ops", thread_prefix = "io";
  } else {
    return "";
  }
  std::string most;
  double most_ops = -1;
  std::istringstream lines(kvlab_info);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos || line.rfind(counter_prefix, 0) != 0) continue;
    const std::string name = line.substr(0, colon);
    if (name.size() <= counter_prefix.size() + counter_suffix.size() ||
        name.compare(name.size() - counter_suffix.size(), counter_suffix.size(), counter_suffix) !=
            0) {
      continue;
    }
    const std::string index = name.substr(
        counter_prefix.size(), name.size() - counter_prefix.size() - counter_suffix.size());
    if (index.find_first_not_of("0123456789") != std::string::npos) continue;
    const double ops = std::stod(line.substr(colon + 1));
    if (ops > most_ops) most_ops = ops, most = thread_prefix + index;
  }
  return most;
}

// Known work: every GET (all sampled) spins kSpinUsec inside execute, on the
// thread that executes it — the connection's I/O thread on the inline
// engines, a shard thread on `sharded`, and on `owner` the key's owner,
// chosen to be the other I/O thread, so that the connection's own thread
// hands every GET over and executes none.
//  - The busiest thread is that one (by the engine's operation counters
//    where it has them), and its busy time holds every spin, once its spans
//    have closed (below); and at most the wall time since the last request
//    before the reset, inside which every span it added lies.
//  - Every other thread ran no spin, only its own work per request
//    (recv, parse, hand over, send: microseconds against a spin of
//    milliseconds), so its busy time stays under half the spun total: a
//    spin counted on the connection's thread, or waiting counted as busy,
//    breaks that by far, and a thread descheduled for half a spin per
//    request on a loaded machine does not.
//  - No thread adds more busy plus waiting time than that wall time: the
//    reset clips the span each thread had in progress (CI once saw `owner`'s
//    io1 add 1.8 ms over it, a round begun before the SET that went on
//    without a wait, counted from its start before the reset clipped it).
TEST_P(StagesKnownAnswer, BusyTimeHoldsTheSpinOnlyOnTheThreadThatExecutes) {
  const std::string engine = GetParam();
  std::unique_ptr<ServerProcess> server;
  const Status started =
      ServerProcess::Start(engine,
                           {"--stage-sample", "1", "--io-threads", "2", "--shards", "2",
                            "--stage-spin", "execute=" + std::to_string(int(kSpinUsec))},
                           &server);
  ASSERT_TRUE(started.ok()) << started.message();
  auto c = RedisConnection::Tcp(server->port());
  ASSERT_NE(c, nullptr);
  const std::string key = engine == "owner" ? KeyOwnedByAnotherThread(*c) : "known";
  ASSERT_FALSE(key.empty()) << "no key hopped to the other owner";
  const double before_last_request = SteadyUsec();
  ASSERT_TRUE(c->Command({"SET", key, "answer"}).IsStatus("OK"));
  ASSERT_TRUE(c->Command({"CONFIG", "RESETSTAT"}).IsStatus("OK"));
  for (int i = 0; i < kRequests; ++i) ASSERT_TRUE(c->Command({"GET", key}).IsBulk("answer"));
  const double spun_usec = kRequests * kSpinUsec;
  // On `sharded` and `owner` another thread executes the GETs (by the
  // engine's own counters, which are bumped before each reply).
  const std::string executed = ThreadThatExecuted(engine, c->Command({"INFO", "kvlab"}).text);
  if (engine == "sharded" || engine == "owner") {
    ASSERT_FALSE(executed.empty()) << "INFO kvlab has no per-thread operation counts";
  }
  // The connection's thread answers INFO in a round after the last GET's
  // (one recv() per readiness report), so its spans have all closed.
  // Another thread adds its last span when it next waits, which a loaded
  // machine can delay, and as an I/O loop marks only around epoll_wait, on
  // `owner` that span can even hold the last few GETs: INFO is read again
  // until that thread holds every spin, for at most 10 s (a wait for the
  // spans to close, not a bound; INFO does not wake that thread).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string info;
  std::map<std::string, StageFields> threads;
  for (;;) {
    info = c->Command({"INFO", "stages"}).text;
    threads = ParseThreadTimes(info);
    const auto executing = threads.find(executed);
    if (executing == threads.end() || executing->second["busy_usec"] >= spun_usec ||
        std::chrono::steady_clock::now() > deadline) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const double wall_usec = SteadyUsec() - before_last_request;

  ASSERT_TRUE(threads.count("io0")) << info;
  if (engine == "sharded") {
    ASSERT_TRUE(threads.count("shard1")) << info;
  }
  if (engine == "owner") {
    ASSERT_TRUE(threads.count("io1")) << info;
  }
  auto busiest = std::max_element(threads.begin(), threads.end(), [](auto& a, auto& b) {
    return a.second["busy_usec"] < b.second["busy_usec"];
  });
  if (!executed.empty()) {
    EXPECT_EQ(busiest->first, executed) << "the busiest thread did not execute the GETs";
  } else {
    EXPECT_EQ(busiest->first.rfind("io", 0), 0u) << busiest->first << " is the busiest";
  }
  const double executing_busy = busiest->second["busy_usec"];
  EXPECT_GE(executing_busy, spun_usec) << busiest->first;
  EXPECT_LE(executing_busy, wall_usec) << busiest->first;
  for (auto& [name, times] : threads) {
    std::printf("  thread_%s busy %.0f us, wait %.0f us (spun %.0f us in a wall of %.0f us)\n",
                name.c_str(), times["busy_usec"], times["wait_usec"], spun_usec, wall_usec);
    EXPECT_LE(times["busy_usec"] + times["wait_usec"], wall_usec) << name;
    if (name != busiest->first) {
      EXPECT_LT(times["busy_usec"], spun_usec / 2) << name;
    }
  }
}

// Known idleness: between two readings the client sleeps kIdleMs, then one
// GET wakes every thread (the I/O thread and, on `sharded`, the shard
// thread; on `owner` the I/O thread is the owner). A thread asleep adds its
// wait only when it wakes, hence the GET before the second reading.
//  - Busy plus waiting grows by at least the client's time from the first
//    reply to the GET (a thread's spans tile the time between its marks:
//    one before the first reading, the GET's wake-up after), which holds
//    the sleep; and by at most the time from the SET before the first
//    reading to the second reply.
//  - Busy grows by less than half the sleep: the thread answered one INFO
//    and one GET (microseconds), and counting the sleep as busy would give
//    the whole of it; half leaves a descheduled thread 250 ms.
TEST_P(StagesKnownAnswer, AnIdleThreadWaitsThroughASleepAndIsNotBusy) {
  constexpr int kIdleMs = 500;
  std::unique_ptr<ServerProcess> server;
  const Status started = ServerProcess::Start(
      GetParam(), {"--stage-sample", "1", "--io-threads", "1", "--shards", "1"}, &server);
  ASSERT_TRUE(started.ok()) << started.message();
  auto c = RedisConnection::Tcp(server->port());
  ASSERT_NE(c, nullptr);
  const double before_set = SteadyUsec();
  ASSERT_TRUE(c->Command({"SET", "known", "answer"}).IsStatus("OK"));
  std::map<std::string, StageFields> first = ParseThreadTimes(c->Command({"INFO", "stages"}).text);
  const double first_reply = SteadyUsec();
  std::this_thread::sleep_for(std::chrono::milliseconds(kIdleMs));
  const double before_get = SteadyUsec();
  ASSERT_TRUE(c->Command({"GET", "known"}).IsBulk("answer"));
  std::map<std::string, StageFields> second = ParseThreadTimes(c->Command({"INFO", "stages"}).text);
  const double second_reply = SteadyUsec();

  ASSERT_TRUE(second.count("io0"));
  if (GetParam() == "sharded") {
    ASSERT_TRUE(second.count("shard0"));
  }
  for (auto& [name, times] : second) {
    ASSERT_TRUE(first.count(name)) << name;
    const double busy = times["busy_usec"] - first[name]["busy_usec"];
    const double wait = times["wait_usec"] - first[name]["wait_usec"];
    std::printf("  thread_%s over %d ms idle: busy +%.0f us, wait +%.0f us\n", name.c_str(),
                kIdleMs, busy, wait);
    EXPECT_GE(busy + wait, before_get - first_reply) << name;
    EXPECT_LE(busy + wait, second_reply - before_set) << name;
    EXPECT_LT(busy, kIdleMs * 1000.0 / 2) << name;
  }
}

// Known reset: every thread idles kIdleMs with sampling on, then CONFIG
// RESETSTAT, and one GET wakes the thread that executes it (on `sharded` a
// shard thread, on `owner` the other I/O thread), asleep since before the
// idle time. Its wait counts from the reset, not from when it fell asleep:
// no thread's busy plus waiting time exceeds the client's time from before
// RESETSTAT to the INFO reply. Counted from the thread's last mark, the
// woken thread's wait would hold the whole idle time.
TEST_P(StagesKnownAnswer, AResetCountsASleepingThreadFromTheResetOn) {
  constexpr int kIdleMs = 300;
  const std::string engine = GetParam();
  std::unique_ptr<ServerProcess> server;
  const Status started = ServerProcess::Start(
      engine, {"--stage-sample", "1", "--io-threads", "2", "--shards", "2"}, &server);
  ASSERT_TRUE(started.ok()) << started.message();
  auto c = RedisConnection::Tcp(server->port());
  ASSERT_NE(c, nullptr);
  const std::string key = engine == "owner" ? KeyOwnedByAnotherThread(*c) : "known";
  ASSERT_FALSE(key.empty()) << "no key hopped to the other owner";
  ASSERT_TRUE(c->Command({"SET", key, "answer"}).IsStatus("OK"));
  std::this_thread::sleep_for(std::chrono::milliseconds(kIdleMs));
  const double before_reset = SteadyUsec();
  ASSERT_TRUE(c->Command({"CONFIG", "RESETSTAT"}).IsStatus("OK"));
  ASSERT_TRUE(c->Command({"GET", key}).IsBulk("answer"));
  const std::string info = c->Command({"INFO", "stages"}).text;
  const double since_reset = SteadyUsec() - before_reset;
  const std::map<std::string, StageFields> threads = ParseThreadTimes(info);
  ASSERT_TRUE(threads.count("io0")) << info;
  for (auto [name, times] : threads) {
    std::printf(
        "  thread_%s after a %d ms idle and a reset: busy %.0f us, wait %.0f us in %.0f us\n",
        name.c_str(), kIdleMs, times["busy_usec"], times["wait_usec"], since_reset);
    EXPECT_LE(times["busy_usec"] + times["wait_usec"], since_reset) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, StagesKnownAnswer, ::testing::ValuesIn(ServerEngineKinds()),
                         EngineName);

}  // namespace
}  // namespace kvlab::test
