// YCSB's core workloads (harness/workloads/ycsb.h), by known answers: YCSB's own key
// names and index scores, each workload's operation mix over 100k
// operations, the scrambled-zipfian and latest key frequencies against
// their formulas, the records as YCSB's Redis binding stores them, a scan
// that returns the records YCSB's would, and every client strategy (open
// loop too) running each workload against redis-server without an error.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "harness/command_line.h"
#include "harness/clients/connection.h"
#include "harness/clients/resp_encoding.h"
#include "harness/clients/server_control.h"
#include "harness/sweep.h"
#include "harness/workloads/workload.h"
#include "harness/workloads/ycsb.h"
#include "tests/harness/test_server.h"

namespace kvlab::harness {
namespace {

using testing::RedisServer;
using testing::TestServer;

WorkloadSpec YcsbSpec(YcsbWorkload workload, uint64_t records) {
  WorkloadSpec spec;
  spec.command = CommandKind::kYcsb;
  spec.ycsb = workload;
  spec.keys = records;
  spec.distribution = KeyDistribution::kZipf;
  spec.zipf_theta = kYcsbZipfianConstant;
  spec.value_size_min = spec.value_size_max = kYcsbFieldLength;
  return spec;
}

// The words of one RESP request (an array of bulk strings).
std::vector<std::string> Words(const std::string& request) {
  std::vector<std::string> words;
  size_t at = request.find("\r\n") + 2;
  while (at < request.size()) {
    const size_t end = request.find("\r\n", at);
    const size_t length = std::stoul(request.substr(at + 1, end - at - 1));
    words.push_back(request.substr(end + 2, length));
    at = end + 2 + length + 2;
  }
  return words;
}

// ---- YCSB's names and scores ------------------------------------------------

TEST(YcsbKeysTest, KeyNamesAndScoresAreYcsbs) {
  // Utils.fnvhash64 and String.hashCode as Java computes them.
  EXPECT_EQ(FnvHash64(0), 6284781860667377211ULL);
  EXPECT_EQ(FnvHash64(1), 8517097267634966620ULL);
  EXPECT_EQ(FnvHash64(1000), 5952875239596136740ULL);
  EXPECT_EQ(YcsbKeyName(0), "user6284781860667377211");  // the first key of every YCSB load
  EXPECT_EQ(YcsbKeyName(123456789), "user2350796791908741607");
  EXPECT_EQ(JavaStringHash("hello"), 99162322);
  EXPECT_EQ(JavaStringHash("user6284781860667377211"), -594971599);
  EXPECT_EQ(JavaStringHash("user5952875239596136740"), 5772195);
}

TEST(YcsbKeysTest, CommandSpellingsRoundTrip) {
  for (const char* text :
       {"ycsb:load", "ycsb:A", "ycsb:B", "ycsb:C", "ycsb:D", "ycsb:E", "ycsb:F"}) {
    WorkloadSpec spec;
    ASSERT_TRUE(ParseCommand(text, &spec).ok()) << text;
    EXPECT_EQ(spec.command, CommandKind::kYcsb);
    EXPECT_EQ(CommandLabel(spec), text);
  }
  WorkloadSpec spec;
  EXPECT_TRUE(ParseCommand("ycsb:a", &spec).ok());
  EXPECT_EQ(spec.ycsb, YcsbWorkload::kA);
  EXPECT_FALSE(ParseCommand("ycsb:G", &spec).ok());
  EXPECT_FALSE(ParseCommand("ycsb:", &spec).ok());
}

TEST(YcsbKeysTest, CommandLineSetsYcsbsDefaults) {
  CommandLineOptions options;
  ASSERT_TRUE(
      ParseCommandLine({"kvlab-load", "--target", "tcp://127.0.0.1:1", "--ycsb", "D"}, &options)
          .ok());
  const WorkloadSpec& spec = options.config.workload;
  EXPECT_EQ(spec.command, CommandKind::kYcsb);
  EXPECT_EQ(spec.ycsb, YcsbWorkload::kD);
  EXPECT_EQ(spec.value_size_min, 100u);
  EXPECT_EQ(spec.distribution, KeyDistribution::kZipf);
  EXPECT_DOUBLE_EQ(spec.zipf_theta, 0.99);
  ASSERT_TRUE(ParseCommandLine({"kvlab-load", "--target", "tcp://127.0.0.1:1", "--command",
                                "ycsb:E", "--key-dist", "uniform", "--value-size", "10"},
                               &options)
                  .ok());
  EXPECT_EQ(options.config.workload.distribution, KeyDistribution::kUniform);
  EXPECT_EQ(options.config.workload.value_size_max, 10u);
  EXPECT_FALSE(ParseCommandLine({"kvlab-load", "--target", "tcp://127.0.0.1:1", "--ycsb", "A",
                                 "--command", "get"},
                                &options)
                   .ok());
  EXPECT_FALSE(ParseCommandLine({"kvlab-load", "--target", "tcp://127.0.0.1:1", "--ycsb", "A",
                                 "--key-dist", "sequential"},
                                &options)
                   .ok());
  EXPECT_FALSE(ParseCommandLine({"kvlab-load", "--target", "tcp://127.0.0.1:1", "--ycsb", "A",
                                 "--loadgen", "redis-benchmark"},
                                &options)
                   .ok());
}

// ---- operation mixes --------------------------------------------------------

class YcsbMixTest : public ::testing::TestWithParam<YcsbWorkload> {};

TEST_P(YcsbMixTest, MixIsWithinFiveBinomialDeviationsOfTheProportionsOver100kOperations) {
  constexpr int kOperations = 100000;
  WorkloadGenerator generator(YcsbSpec(GetParam(), 1000), 7, 0);
  int counts[kYcsbOperationKinds] = {};
  std::string out;
  for (int i = 0; i < kOperations; ++i) {
    out.clear();
    const RequestInfo info = generator.AppendNext(&out);
    ++counts[static_cast<int>(info.ycsb_operation)];
    // Each operation begins with the request YCSB's Redis binding sends first.
    const std::string command = Words(out)[0];
    switch (info.ycsb_operation) {
      case YcsbOperation::kRead:
      case YcsbOperation::kReadModifyWrite:
        EXPECT_EQ(command, "HGETALL");
        break;
      case YcsbOperation::kUpdate:
      case YcsbOperation::kInsert:
        EXPECT_EQ(command, "HMSET");
        break;
      case YcsbOperation::kScan:
        EXPECT_EQ(command, "ZRANGEBYSCORE");
        break;
    }
  }
  const YcsbMix mix = MixOf(GetParam());
  double sum = 0;
  for (int op = 0; op < kYcsbOperationKinds; ++op) {
    sum += mix.proportion[op];
    const double share = static_cast<double>(counts[op]) / kOperations;
    // A count of independent draws is binomial: its share has standard deviation
    // sqrt(p (1 - p) / n), 0.00069 for 5% of 100k, so 4% or 6% inserts for a 5% mix
    // fail (a fixed +-0.01 let them through); chance alone is 5 deviations out once in
    // 1.7 million.
    const double p = mix.proportion[op];
    EXPECT_NEAR(share, p, 5 * std::sqrt(p * (1 - p) / kOperations))
        << YcsbOperationName(static_cast<YcsbOperation>(op)) << " in "
        << YcsbWorkloadName(GetParam());
    if (mix.proportion[op] == 0) {
      EXPECT_EQ(counts[op], 0);
    }
  }
  EXPECT_DOUBLE_EQ(sum, 1.0);
}

INSTANTIATE_TEST_SUITE_P(Workloads, YcsbMixTest,
                         ::testing::Values(YcsbWorkload::kLoad, YcsbWorkload::kA, YcsbWorkload::kB,
                                           YcsbWorkload::kC, YcsbWorkload::kD, YcsbWorkload::kE,
                                           YcsbWorkload::kF),
                         [](const auto& info) {
                           return std::string(YcsbWorkloadName(info.param));
                         });

TEST(YcsbMixTest, TheWorkloadFilesProportions) {
  auto share = [](YcsbWorkload w, YcsbOperation op) {
    return MixOf(w).proportion[static_cast<int>(op)];
  };
  EXPECT_EQ(share(YcsbWorkload::kA, YcsbOperation::kRead), 0.5);
  EXPECT_EQ(share(YcsbWorkload::kA, YcsbOperation::kUpdate), 0.5);
  EXPECT_EQ(share(YcsbWorkload::kB, YcsbOperation::kRead), 0.95);
  EXPECT_EQ(share(YcsbWorkload::kB, YcsbOperation::kUpdate), 0.05);
  EXPECT_EQ(share(YcsbWorkload::kC, YcsbOperation::kRead), 1.0);
  EXPECT_EQ(share(YcsbWorkload::kD, YcsbOperation::kRead), 0.95);
  EXPECT_EQ(share(YcsbWorkload::kD, YcsbOperation::kInsert), 0.05);
  EXPECT_EQ(share(YcsbWorkload::kE, YcsbOperation::kScan), 0.95);
  EXPECT_EQ(share(YcsbWorkload::kE, YcsbOperation::kInsert), 0.05);
  EXPECT_EQ(share(YcsbWorkload::kF, YcsbOperation::kRead), 0.5);
  EXPECT_EQ(share(YcsbWorkload::kF, YcsbOperation::kReadModifyWrite), 0.5);
  EXPECT_TRUE(UsesLatest(YcsbWorkload::kD));
  EXPECT_FALSE(UsesLatest(YcsbWorkload::kA));
}

TEST(YcsbMixTest, LoadInsertsEveryRecordInKeyOrderAcrossThreads) {
  constexpr uint64_t kRecords = 50;
  WorkloadSpec spec = YcsbSpec(YcsbWorkload::kLoad, kRecords);
  auto shared = MakeYcsbSequences(spec);
  WorkloadGenerator a(spec, 1, 0, shared), b(spec, 2, 0, shared);
  std::vector<uint64_t> keynums;
  std::string out;
  for (uint64_t i = 0; i < kRecords; ++i) {
    keynums.push_back((i % 2 == 0 ? a : b).AppendNext(&out).keynum);
  }
  for (uint64_t i = 0; i < kRecords; ++i) EXPECT_EQ(keynums[i], i);
  EXPECT_TRUE(shared->LoadedAll());
}

// ---- key distributions ------------------------------------------------------

// H(n, theta) = sum_{k=1..n} k^-theta: exactly up to m, then Euler-Maclaurin.
double GeneralisedHarmonic(uint64_t n, double theta) {
  const uint64_t m = std::min<uint64_t>(n, 1'000'000);
  double sum = 0;
  for (uint64_t k = m; k >= 1; --k) sum += std::pow(static_cast<double>(k), -theta);
  if (n == m) return sum;
  const double N = static_cast<double>(n), M = static_cast<double>(m);
  return sum + (std::pow(N, 1 - theta) - std::pow(M, 1 - theta)) / (1 - theta) +
         (std::pow(N, -theta) - std::pow(M, -theta)) / 2 -
         theta / 12 * (std::pow(N, -theta - 1) - std::pow(M, -theta - 1));
}

TEST(YcsbDistributionTest, ScrambledZipfianUsesYcsbsZetaOverTenBillionItems) {
  // ScrambledZipfianGenerator.ZETAN, YCSB's precomputed zeta(10^10, 0.99): the
  // test's own harmonic sum, which the frequency test below builds on, agrees ...
  EXPECT_NEAR(GeneralisedHarmonic(kYcsbScrambledItems, 0.99), 26.46902820178302, 1e-8);
  // ... and the chooser draws rank 1 with probability 1 / ZETAN = 3.778%. Over 10^9
  // records no other of the first ranks shares rank 1's key (fnvhash64(0) mod 10^9 + 1)
  // and the rest put about 1e-9 each on it, so that key's share is rank 1's. A zeta over
  // the records instead (10^9 items: 23.6, 4.24%) is 24 deviations away.
  constexpr uint64_t kRecords = 1'000'000'000;
  constexpr int kDraws = 1'000'000;
  YcsbKeyChooser chooser(YcsbKeyDistribution::kScrambledZipfian, 0.99, kRecords);
  const uint64_t rank_one_key = FnvHash64(0) % (kRecords + 1);
  std::mt19937_64 random(41);
  int hits = 0;
  for (int i = 0; i < kDraws; ++i) hits += chooser.Next(random, kRecords - 1) == rank_one_key;
  const double p = 1 / 26.46902820178302;
  EXPECT_NEAR(static_cast<double>(hits) / kDraws, p, 5 * std::sqrt(p * (1 - p) / kDraws));
}

// The scrambled zipfian's key frequencies against its formula: rank r (over
// 10^10 + 1 items) has P = r^-0.99 / H, and lands on key fnvhash64(r - 1) mod
// (records + 1) (ScrambledZipfianGenerator: min + fnvhash64(rank) % itemcount, the
// upper bound inclusive), computed here with YCSB's hash (pinned above by Java's
// answers), not by the chooser's own mapping; a key number beyond the last record is
// drawn again. The
// first million ranks are placed exactly, the rest (1.4% of the mass, each
// rank under 1e-7) spread evenly.
TEST(YcsbDistributionTest, ScrambledZipfianKeyFrequenciesMatchTheFormula) {
  constexpr uint64_t kRecords = 1000;
  constexpr uint64_t kExactRanks = 1'000'000;
  constexpr int kDraws = 2'000'000;
  const double theta = kYcsbZipfianConstant;
  const double total = GeneralisedHarmonic(kYcsbScrambledItems + 1, theta);
  YcsbKeyChooser chooser(YcsbKeyDistribution::kScrambledZipfian, theta, kRecords);
  std::vector<double> expected(kRecords + 1, 0.0);
  double placed = 0;
  for (uint64_t rank = 1; rank <= kExactRanks; ++rank) {
    const double p = std::pow(static_cast<double>(rank), -theta) / total;
    expected[FnvHash64(rank - 1) % (kRecords + 1)] += p;
    placed += p;
  }
  for (double& p : expected) p += (1 - placed) / (kRecords + 1);
  const double kept = 1 - expected[kRecords];  // key number `records` is drawn again
  for (double& p : expected) p /= kept;

  std::mt19937_64 random(99);
  std::vector<uint64_t> observed(kRecords + 1, 0);
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t keynum = chooser.Next(random, kRecords - 1);
    ASSERT_LT(keynum, kRecords);
    ++observed[keynum];
  }
  // The hottest key is rank 1's, and it holds 1/zeta of the draws (3.8%) plus its share of the
  // rest.
  const uint64_t hottest =
      static_cast<uint64_t>(std::max_element(observed.begin(), observed.end()) - observed.begin());
  EXPECT_EQ(hottest, FnvHash64(0) % (kRecords + 1));
  EXPECT_GT(expected[hottest], 1 / total);
  // Every key within 5 standard deviations; chi-square over the 1000 keys.
  double chi_square = 0;
  for (uint64_t key = 0; key < kRecords; ++key) {
    const double mean = expected[key] * kDraws;
    const double sigma = std::sqrt(mean * (1 - expected[key]));
    EXPECT_NEAR(static_cast<double>(observed[key]), mean, 5 * sigma + 1) << "key " << key;
    chi_square += (observed[key] - mean) * (observed[key] - mean) / mean;
  }
  // 999 degrees of freedom: mean 999, sd 44.7; 1200 is 4.5 sd out.
  EXPECT_LT(chi_square, 1200);
  // The check has power: against a plain (unscrambled) Zipf the same draws fail.
  double plain_chi = 0;
  const double plain_total = GeneralisedHarmonic(kRecords, theta);
  for (uint64_t key = 0; key < kRecords; ++key) {
    const double mean = kDraws * std::pow(static_cast<double>(key + 1), -theta) / plain_total;
    plain_chi += (observed[key] - mean) * (observed[key] - mean) / mean;
  }
  EXPECT_GT(plain_chi, 10000);
}

TEST(YcsbDistributionTest, LatestFavoursTheNewestRecordAsZipf) {
  constexpr uint64_t kLast = 1999;  // records 0..1999 inserted
  constexpr int kDraws = 1'000'000;
  YcsbKeyChooser chooser(YcsbKeyDistribution::kLatest, 0.99, 1000);
  std::mt19937_64 random(5);
  std::map<uint64_t, int> observed;
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t keynum = chooser.Next(random, kLast);
    ASSERT_LE(keynum, kLast);
    ++observed[keynum];
  }
  const double total = GeneralisedHarmonic(kLast + 1, 0.99);
  for (uint64_t age = 0; age < 10; ++age) {
    const double p = std::pow(static_cast<double>(age + 1), -0.99) / total;
    const double sigma = std::sqrt(kDraws * p * (1 - p));
    EXPECT_NEAR(observed[kLast - age], kDraws * p, 5 * sigma) << "age " << age;
  }
}

TEST(YcsbDistributionTest, UniformCoversTheLoadedRecordsEvenly) {
  constexpr uint64_t kRecords = 100;
  YcsbKeyChooser chooser(YcsbKeyDistribution::kUniform, 0.99, kRecords);
  std::mt19937_64 random(3);
  std::vector<int> observed(kRecords, 0);
  for (int i = 0; i < 200000; ++i) ++observed[chooser.Next(random, kRecords + 50)];
  for (int count : observed) EXPECT_NEAR(count, 2000, 5 * std::sqrt(2000.0));
}

// ---- against redis-server ---------------------------------------------------

class YcsbServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<TestServer>(RedisServer());
    ASSERT_TRUE(server_->started()) << server_->start_error();
    ASSERT_TRUE(ServerControl::Open(server_->unix_target(), {}, &control_).ok());
    ASSERT_TRUE(Connection::Open(server_->unix_target(), {}, &connection_).ok());
  }

  ReplyPtr Call(std::initializer_list<std::string_view> words) {
    std::string request;
    AppendCommand(&request, words);
    ReplyPtr reply;
    EXPECT_TRUE(connection_->Call(request, &reply).ok());
    return reply;
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<ServerControl> control_;
  std::unique_ptr<Connection> connection_;
};

TEST_F(YcsbServerTest, PrefillStoresRecordsAsYcsbsRedisBindingDoes) {
  constexpr uint64_t kRecords = 300;
  uint64_t written = 0;
  const Status loaded = control_->Prefill(YcsbSpec(YcsbWorkload::kC, kRecords), &written);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  EXPECT_EQ(written, kRecords);
  EXPECT_EQ(Call({"DBSIZE"})->integer, static_cast<long long>(kRecords + 1));  // + _indices
  EXPECT_EQ(Call({"ZCARD", "_indices"})->integer, static_cast<long long>(kRecords));
  for (uint64_t keynum : {uint64_t{0}, uint64_t{17}, kRecords - 1}) {
    const std::string key = YcsbKeyName(keynum);
    ReplyPtr hash = Call({"HGETALL", key});
    ASSERT_EQ(hash->type, REDIS_REPLY_ARRAY);
    ASSERT_EQ(hash->elements, 2u * kYcsbFieldCount);
    std::set<std::string> fields;  // a hash of 100-byte values is a hash table: any order
    for (size_t i = 0; i < hash->elements; i += 2) {
      fields.insert(hash->element[i]->str);
      EXPECT_EQ(hash->element[i + 1]->len, kYcsbFieldLength);
    }
    EXPECT_EQ(fields, (std::set<std::string>{"field0", "field1", "field2", "field3", "field4",
                                             "field5", "field6", "field7", "field8", "field9"}));
    ReplyPtr score = Call({"ZSCORE", "_indices", key});
    ASSERT_EQ(score->type, REDIS_REPLY_STRING);
    EXPECT_EQ(std::string(score->str, score->len), std::to_string(JavaStringHash(key)));
  }
}

// Runs one operation to its end against the server, as a client strategy
// does; returns every request it sent and the operation's verdict.
std::vector<std::vector<std::string>> RunOperation(WorkloadGenerator& generator,
                                                   Connection& connection, const RequestInfo& first,
                                                   std::string request, ReplyVerdict* verdict) {
  std::vector<std::vector<std::string>> sent;
  RequestInfo info = first;
  for (;;) {
    sent.push_back(Words(request));
    ReplyPtr reply;
    EXPECT_TRUE(connection.Call(request, &reply).ok());
    request.clear();
    const ReplyOutcome outcome = generator.OnReply(*reply, &info, &request);
    if (outcome.done) {
      *verdict = outcome.verdict;
      return sent;
    }
  }
}

TEST_F(YcsbServerTest, ScanReadsTheRecordsYcsbWould) {
  constexpr uint64_t kRecords = 2000;
  uint64_t written = 0;
  ASSERT_TRUE(control_->Prefill(YcsbSpec(YcsbWorkload::kE, kRecords), &written).ok());
  // What YCSB's scan returns, computed here from the records alone: the
  // keys in _indices order (score, then the key's bytes, as Redis orders
  // ties), from the first whose score is at least the start key's, `length` of them.
  std::vector<std::pair<int32_t, std::string>> index;
  for (uint64_t keynum = 0; keynum < kRecords; ++keynum) {
    const std::string key = YcsbKeyName(keynum);
    index.emplace_back(JavaStringHash(key), key);
  }
  std::sort(index.begin(), index.end());

  WorkloadGenerator generator(YcsbSpec(YcsbWorkload::kE, kRecords), 11, 0);
  int scans = 0;
  int empty_tails = 0;
  for (int attempt = 0; attempt < 400 && scans < 60; ++attempt) {
    std::string request;
    const RequestInfo first = generator.AppendNext(&request);
    if (first.ycsb_operation != YcsbOperation::kScan)
      continue;  // the 5% inserts: records beyond kRecords
    ++scans;
    const std::vector<std::string> words = Words(request);
    ASSERT_EQ(words.size(), 7u);
    EXPECT_EQ(words[1], "_indices");
    const std::string start_key = YcsbKeyName(first.keynum);
    EXPECT_EQ(words[2], std::to_string(JavaStringHash(start_key)));
    EXPECT_EQ(words[3], "+inf");
    const size_t length = std::stoul(words[6]);
    ASSERT_GE(length, 1u);
    ASSERT_LE(length, 100u);
    std::vector<std::string> expected;
    auto it = std::lower_bound(index.begin(), index.end(),
                               std::make_pair(JavaStringHash(start_key), std::string()));
    for (; it != index.end() && expected.size() < length; ++it) expected.push_back(it->second);
    if (expected.size() < length) ++empty_tails;

    ReplyVerdict verdict;
    const auto sent = RunOperation(generator, *connection_, first, request, &verdict);
    EXPECT_EQ(verdict, ReplyVerdict::kOk);
    ASSERT_EQ(sent.size(), 1 + expected.size());  // ZRANGEBYSCORE, then one HGETALL per record
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(sent[i + 1].size(), 2u);
      EXPECT_EQ(sent[i + 1][0], "HGETALL");
      EXPECT_EQ(sent[i + 1][1], expected[i]) << "record " << i << " of the scan";
    }
  }
  EXPECT_GE(scans, 50);
  EXPECT_LT(empty_tails, scans);  // most scans start well before the index's end
}

TEST_F(YcsbServerTest, InsertReadModifyWriteAndMissesBehaveAsYcsbs) {
  constexpr uint64_t kRecords = 100;
  uint64_t written = 0;
  ASSERT_TRUE(control_->Prefill(YcsbSpec(YcsbWorkload::kF, kRecords), &written).ok());
  WorkloadGenerator generator(YcsbSpec(YcsbWorkload::kF, kRecords), 4, 0);
  int rmw = 0;
  for (int i = 0; i < 200; ++i) {
    std::string request;
    const RequestInfo first = generator.AppendNext(&request);
    ReplyVerdict verdict;
    const auto sent = RunOperation(generator, *connection_, first, request, &verdict);
    EXPECT_EQ(verdict, ReplyVerdict::kOk);
    if (first.ycsb_operation == YcsbOperation::kReadModifyWrite) {
      ++rmw;
      ASSERT_EQ(sent.size(), 2u);
      EXPECT_EQ(sent[0][0], "HGETALL");
      EXPECT_EQ(sent[1][0], "HMSET");
      EXPECT_EQ(sent[1][1], sent[0][1]);
      EXPECT_EQ(sent[1].size(), 4u);  // one field: writeallfields=false
    } else {
      EXPECT_EQ(sent.size(), 1u);
    }
  }
  EXPECT_GT(rmw, 60);

  // D's inserts: HMSET of every field, then ZADD; the next key number after the records.
  WorkloadGenerator d(YcsbSpec(YcsbWorkload::kD, kRecords), 8, 0);
  int inserts = 0;
  for (int i = 0; i < 400; ++i) {
    std::string request;
    const RequestInfo first = d.AppendNext(&request);
    ReplyVerdict verdict;
    const auto sent = RunOperation(d, *connection_, first, request, &verdict);
    EXPECT_EQ(verdict, ReplyVerdict::kOk);  // latest reads only acknowledged records
    if (first.ycsb_operation != YcsbOperation::kInsert) continue;
    EXPECT_EQ(first.keynum, kRecords + inserts);
    ++inserts;
    ASSERT_EQ(sent.size(), 2u);
    EXPECT_EQ(sent[0].size(), 2u + 2 * kYcsbFieldCount);
    EXPECT_EQ(sent[1][0], "ZADD");
    EXPECT_EQ(sent[1][3], YcsbKeyName(first.keynum));
  }
  EXPECT_GT(inserts, 5);
  EXPECT_EQ(d.ycsb()->sequences().LastInserted(), kRecords - 1 + inserts);
  EXPECT_EQ(Call({"ZCARD", "_indices"})->integer, static_cast<long long>(kRecords + inserts));

  // A record that is not there: a read is a miss; read-modify-write then writes nothing.
  Call({"FLUSHALL"});
  WorkloadGenerator empty(YcsbSpec(YcsbWorkload::kF, kRecords), 9, 0);
  for (int i = 0; i < 20; ++i) {
    std::string request;
    const RequestInfo first = empty.AppendNext(&request);
    ReplyVerdict verdict;
    const auto sent = RunOperation(empty, *connection_, first, request, &verdict);
    EXPECT_EQ(verdict, ReplyVerdict::kMiss);
    EXPECT_EQ(sent.size(), 1u);
  }
  EXPECT_EQ(Call({"DBSIZE"})->integer, 0);
}

// Every strategy, closed and open loop, runs every workload without an
// error; an operation counts once however many requests it took.
TEST_F(YcsbServerTest, EveryStrategyAndOpenLoopRunEveryWorkload) {
  struct Setup {
    ClientKind client;
    int pipeline;
    IoModel io;
    double rate;
  };
  const Setup setups[] = {{ClientKind::kDedicated, 4, IoModel::kDirect, 0},
                          {ClientKind::kDedicated, 2, IoModel::kDirect, 2000},
                          {ClientKind::kPooled, 1, IoModel::kDirect, 0},
                          {ClientKind::kPooled, 1, IoModel::kEventLoop, 0},
                          {ClientKind::kShared, 1, IoModel::kDirect, 0},
                          {ClientKind::kShared, 1, IoModel::kEventLoop, 1000}};
#if defined(__SANITIZE_THREAD__)
  // Under ThreadSanitizer every strategy still runs, over the workloads that take its
  // threads through each kind of operation (inserts, reads with updates, scans, and
  // read-modify-write: two requests for one operation); B, C and D add no new path
  // between threads, and each costs ~2 s under TSan.
  const std::vector<YcsbWorkload> workloads = {YcsbWorkload::kLoad, YcsbWorkload::kA,
                                               YcsbWorkload::kE, YcsbWorkload::kF};
#else
  const std::vector<YcsbWorkload> workloads = {
      YcsbWorkload::kLoad, YcsbWorkload::kA, YcsbWorkload::kB, YcsbWorkload::kC,
      YcsbWorkload::kD,    YcsbWorkload::kE, YcsbWorkload::kF};
#endif
  for (const YcsbWorkload workload : workloads) {
    for (const Setup& setup : setups) {
      SCOPED_TRACE(std::string(YcsbWorkloadName(workload)) + " " + ClientKindName(setup.client) +
                   (setup.io == IoModel::kEventLoop ? " event-loop" : "") +
                   (setup.rate > 0 ? " open loop" : ""));
      LoadConfig config;
      config.target = server_->unix_target();
      config.client = setup.client;
      config.pipeline = setup.pipeline;
      config.io.model = setup.io;
      config.io.loop_threads = 1;
      config.rate = setup.rate;
      config.threads = {2};
      config.duration_s = 0.2;  // a window long enough that a busy machine still answers in it
      config.warmup_s = 0.02;
      config.repetitions = 1;
      config.workload = YcsbSpec(workload, 500);
      config.prefill = true;
      config.flush = true;
      std::vector<PointResult> points;
      const Status status = RunSweep(config, {}, &points);
      ASSERT_TRUE(status.ok()) << status.message();
      ASSERT_EQ(points.size(), 1u);
      ASSERT_EQ(points[0].repetitions.size(), 1u);
      const RepetitionResult& r = points[0].repetitions[0];
      EXPECT_GT(r.ops, 0u);
      EXPECT_EQ(r.errors, 0u);
      EXPECT_EQ(r.misses, 0u);  // every record read was loaded or inserted first
      // Open loop adds the latencies of the backlog drained after the window.
      if (setup.rate > 0) {
        EXPECT_GE(r.latency.count(), r.ops);
      } else {
        EXPECT_EQ(r.latency.count(), r.ops);
      }
    }
  }
}

}  // namespace
}  // namespace kvlab::harness
