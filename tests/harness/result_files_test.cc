#include "harness/output/result_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/output/json_writer.h"
#include "harness/output/summary_table.h"
#include "tests/harness/test_server.h"

namespace kvlab::harness {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Validates JSON with Python's parser and evaluates `expression` on it (d).
std::string PythonOnJson(const std::string& path, const std::string& expression) {
  std::string output;
  const int status = testing::RunProcess(
      {KVLAB_PYTHON, "-c",
       "import json,sys; d=json.load(open(sys.argv[1])); print(" + expression + ")", path},
      &output);
  return status == 0 ? output : "INVALID: " + output;
}

// Evaluates `expression` on the first row (r) of a CSV file, with Python's csv module.
std::string PythonOnCsv(const std::string& path, const std::string& expression) {
  std::string output;
  const int status = testing::RunProcess(
      {KVLAB_PYTHON, "-c",
       "import csv,sys; r=next(csv.DictReader(open(sys.argv[1]))); print(" + expression + ")",
       path},
      &output);
  return status == 0 ? output : "INVALID: " + output;
}

class ResultFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/kvlab-results-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    directory_ = pattern;
    ASSERT_TRUE(ParseTarget("unix:///tmp/s.sock", &config_.target).ok());
    config_.client = ClientKind::kShared;
    config_.threads = {1, 2};
    point_.threads = 2;
    point_.client = ClientKind::kShared;
    point_.connections = 1;
    for (int i = 1; i <= 2; ++i) {
      RepetitionResult r;
      r.repetition = i;
      r.ops = 1000 * i;
      r.seconds = 1.0;
      r.ops_per_s = 1000.0 * i;
      r.p50_us = 10;
      r.p99_us = 30;
      r.client_cpu = 0.5;
      r.usable_cores = 2;
      r.latency.Record(10'000);
      r.latency.Record(30'000);
      point_.repetitions.push_back(r);
    }
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  std::string directory_;
  LoadConfig config_;
  PointResult point_;
};

TEST_F(ResultFilesTest, CsvHasTheIssuesColumnsFirstAndOneRowPerRepetition) {
  const std::string path = directory_ + "/r.csv";
  std::unique_ptr<CsvResultFile> csv;
  ASSERT_TRUE(CsvResultFile::Create(path, config_, {}, "", &csv).ok());
  for (const RepetitionResult& r : point_.repetitions) ASSERT_TRUE(csv->Append(point_, r).ok());
  // Flushed per row: readable before the writer is closed.
  std::istringstream lines(ReadFile(path));
  std::string header;
  std::getline(lines, header);
  EXPECT_TRUE(header.starts_with(
      "threads,client,transport,pipeline,connections,repetition,ops,seconds,ops_per_s,errors,"
      "p50_us,p90_us,p99_us,p999_us,max_us,client_cpu,client_bound"));
  const auto fields = [](const std::string& line) {
    return std::count(line.begin(), line.end(), ',') + 1;
  };
  int rows = 0;
  for (std::string line; std::getline(lines, line); ++rows) {
    EXPECT_EQ(fields(line), fields(header)) << line;
    EXPECT_TRUE(line.starts_with("2,shared,unix,1,1," + std::to_string(rows + 1) + ",")) << line;
  }
  EXPECT_EQ(rows, 2);
}

TEST_F(ResultFilesTest, CsvCarriesMissesWrongTypeAndTheOpenLoopColumns) {
  // An all-miss GET point must not look normal: misses and wrong_type reach
  // the CSV, and so do behind/backlog/achieved_rate of an open-loop point.
  RepetitionResult r = point_.repetitions[0];
  r.misses = 1000;
  r.wrong_type = 3;
  r.errors = 3;
  r.achieved_rate = 1500;
  r.behind = true;
  r.backlog = 42;
  r.busiest_thread_cpu = 0.97;
  r.allowed_cores = 1.5;
  config_.rate = 2000;
  config_.arrival = ArrivalKind::kPoisson;
  const std::string path = directory_ + "/r.csv";
  std::unique_ptr<CsvResultFile> csv;
  ASSERT_TRUE(CsvResultFile::Create(path, config_, {}, "", &csv).ok());
  ASSERT_TRUE(csv->Append(point_, r).ok());
  EXPECT_EQ(PythonOnCsv(path,
                        "r['misses'], r['wrong_type'], r['errors'], r['arrival'], r['refill'], "
                        "r['achieved_rate'], r['behind'], r['backlog'], "
                        "r['busiest_thread_cpu'], r['allowed_cores']"),
            "1000 3 3 poisson steady 1500.0 true 42 0.9700 1.50\n");
}

TEST_F(ResultFilesTest, CsvCreateFailsForAnUnwritablePath) {
  std::unique_ptr<CsvResultFile> csv;
  EXPECT_FALSE(CsvResultFile::Create(directory_ + "/missing/r.csv", config_, {}, "", &csv).ok());
}

TEST_F(ResultFilesTest, JsonIsValidAndCarriesConfigMachineInfoAndHistograms) {
  const std::string path = directory_ + "/r.json";
  RunDescription description{
      {"kvlab-load", "--target", "unix:///tmp/s.sock"},
      config_,
      CollectMachineInfo(),
      {{"redis_version", "7.0.15"}, {"weird", "quote\" back\\ tab\t ctl\x01"}}};
  JsonResultFile json(path, description);
  ASSERT_TRUE(json.Write({point_}, "running", "").ok());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  EXPECT_EQ(PythonOnJson(path, "d['status'], d['config']['client'], d['config']['threads']"),
            "running shared [1, 2]\n");
  EXPECT_EQ(PythonOnJson(path, "d['server_info']['weird']"), "quote\" back\\ tab\t ctl\x01\n");
  EXPECT_EQ(PythonOnJson(path,
                         "len(d['points'][0]['repetitions']), "
                         "d['points'][0]['repetitions'][1]['histogram']['buckets']"),
            "2 [[9984, 10047, 1], [29952, 30079, 1]]\n");
  EXPECT_EQ(PythonOnJson(path, "d['machine']['cores'] > 0, bool(d['machine']['kernel'])"),
            "True True\n");
  // The point over all repetitions: the merged histogram and its percentiles.
  EXPECT_EQ(
      PythonOnJson(path,
                   "d['points'][0]['merged']['repetitions'], d['points'][0]['merged']['ops'], "
                   "d['points'][0]['merged']['histogram']['count'], "
                   "round(d['points'][0]['merged']['p99_us'])"),
      "2 3000 4 30\n");
  EXPECT_EQ(PythonOnJson(path, "d['points'][0]['repetitions'][0]['slices']['columns']"),
            "['start_s', 'seconds', 'ops']\n");
  ASSERT_TRUE(json.Write({point_}, "failed", "point threads=2: connection closed").ok());
  EXPECT_EQ(PythonOnJson(path, "d['status'], d['error']"),
            "failed point threads=2: connection closed\n");
}

TEST(SummaryTableTest, StudentTDoesNotJumpPastThirtyDegreesOfFreedom) {
  // The half-width is t * s / sqrt(n): divide it out.
  auto half_width_over_t = [](size_t n, double* t) {
    std::vector<double> values;
    double mean = 0;
    for (size_t i = 0; i < n; ++i) {
      values.push_back(i % 2 == 0 ? 0.0 : 2.0);
      mean += values.back() / n;
    }
    double squares = 0;
    for (double v : values) squares += (v - mean) * (v - mean);
    const double standard_error = std::sqrt(squares / (n - 1)) / std::sqrt(static_cast<double>(n));
    *t = ConfidenceHalfWidth95(values) / standard_error;
  };
  double t30 = 0, t31 = 0, t120 = 0;
  half_width_over_t(31, &t30);    // 30 degrees: the table
  half_width_over_t(32, &t31);    // 31 degrees: t(0.975, 31) = 2.0395
  half_width_over_t(121, &t120);  // 120 degrees: t(0.975, 120) = 1.9799
  EXPECT_NEAR(t30, 2.042, 1e-3);
  EXPECT_NEAR(t31, 2.0395, 1e-3);
  EXPECT_NEAR(t120, 1.9799, 1e-3);
}

TEST(JsonWriterTest, CommasNestingEscapesAndNonFiniteNumbers) {
  JsonWriter json;
  json.BeginObject()
      .Key("a")
      .Integer(-1)
      .Key("b")
      .BeginArray()
      .Unsigned(1)
      .Bool(true)
      .Null()
      .String("x\ny")
      .EndArray()
      .Key("c")
      .Number(0.5)
      .Key("d")
      .Number(1.0 / 0.0)
      .Key("e")
      .BeginObject()
      .EndObject()
      .EndObject();
  EXPECT_EQ(json.text(), R"({"a":-1,"b":[1,true,null,"x\ny"],"c":0.5,"d":null,"e":{}})");
}

TEST(SummaryTableTest, OneRowPerPointWithMedianAndInterval) {
  LoadConfig config;
  ASSERT_TRUE(ParseTarget("tcp://127.0.0.1:1", &config.target).ok());
  PointResult point;
  point.threads = 4;
  point.client = ClientKind::kPooled;
  for (double ops : {100.0, 300.0, 200.0}) {
    RepetitionResult r;
    r.ops_per_s = ops;
    point.repetitions.push_back(r);
  }
  const std::string table = RenderSummaryTable(config, {point});
  EXPECT_NE(table.find("| 4 | pooled | tcp | 200 | 248 |"), std::string::npos) << table;
  // p99 of the merged histogram (9 ms), not the median of per-repetition p99s (1 ms).
  point.repetitions[0].latency.Record(9'000'000);
  point.repetitions[1].latency.Record(1'000'000);
  point.repetitions[2].latency.Record(1'000'000);
  for (int i = 0; i < 200; ++i) point.repetitions[0].latency.Record(9'000'000);
  for (int i = 0; i < 100; ++i) point.repetitions[1].latency.Record(1'000'000);
  const std::string merged_table = RenderSummaryTable(config, {point});
  EXPECT_NE(merged_table.find("| 9000.0 | 9000.0 |"), std::string::npos) << merged_table;
}

}  // namespace
}  // namespace kvlab::harness
