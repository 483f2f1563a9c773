// kvlab-load as a user runs it: exit status 2 with usage for bad arguments,
// 1 for an unreachable server, 0 with CSV/JSON for a good run; a server
// killed mid-sweep gives status 1, a message naming the point, and every
// completed repetition valid on disk; SIGINT gives 130 and the same.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/harness/test_server.h"

namespace kvlab::harness {
namespace {

using testing::RedisServer;
using testing::RunProcess;
using testing::SpawnProcess;
using testing::TestServer;
using testing::WaitForExit;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int CountLines(const std::string& path) {
  const std::string text = ReadFile(path);
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// Parses the JSON with Python (so "valid" means a real parser accepts it)
// and prints `expression` of it.
std::string PythonOnJson(const std::string& path, const std::string& expression) {
  std::string output;
  const int status = RunProcess(
      {KVLAB_PYTHON, "-c",
       "import json,sys; d=json.load(open(sys.argv[1])); print(" + expression + ")", path},
      &output);
  return status == 0 ? output : "INVALID: " + output;
}

class KvlabLoadCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/kvlab-cli-test-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    directory_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  std::vector<std::string> Load(std::vector<std::string> args) const {
    args.insert(args.begin(), KVLAB_LOAD_PATH);
    return args;
  }

  std::string directory_;
};

TEST_F(KvlabLoadCliTest, BadArgumentsExitTwoWithUsage) {
  const std::vector<std::vector<std::string>> cases = {
      {},
      {"--target", "localhost:6379"},
      {"--target", "tcp://127.0.0.1:1", "--client", "async"},
      {"--target", "tcp://127.0.0.1:1", "--threads", "two"},
      {"--target", "tcp://127.0.0.1:1", "--client", "shared", "--pipeline", "8"},
      {"--target", "tcp://127.0.0.1:1", "--unknown-option"},
      {"--target", "tcp://127.0.0.1:1", "--label", "no-equals"},
      {"--target", "tcp://127.0.0.1:1", "--label", "a=1", "--label", "a=2"},
      {"--target", "tcp://127.0.0.1:1", "--own-pids", "12,x"},
  };
  for (const auto& args : cases) {
    std::string output;
    EXPECT_EQ(RunProcess(Load(args), &output), 2) << output;
    EXPECT_NE(output.find("usage: kvlab-load"), std::string::npos) << output;
  }
}

TEST_F(KvlabLoadCliTest, HelpExitsZero) {
  std::string output;
  EXPECT_EQ(RunProcess(Load({"--help"}), &output), 0);
  EXPECT_NE(output.find("--client"), std::string::npos);
}

TEST_F(KvlabLoadCliTest, UnreachableServerExitsOneWithAMessage) {
  std::string output;
  EXPECT_EQ(RunProcess(Load({"--target", "unix://" + directory_ + "/none.sock", "--duration", "0.1",
                             "--json", directory_ + "/r.json"}),
                       &output),
            1);
  EXPECT_NE(output.find("cannot connect"), std::string::npos) << output;
  EXPECT_EQ(PythonOnJson(directory_ + "/r.json", "d['status'], len(d['points'])"), "failed 0\n");
}

TEST_F(KvlabLoadCliTest, GoodRunWritesEveryRepetitionAndExitsZero) {
  TestServer server(RedisServer());
  ASSERT_TRUE(server.started()) << server.start_error();
  const std::string csv = directory_ + "/r.csv";
  const std::string json = directory_ + "/r.json";
  std::string output;
  ASSERT_EQ(RunProcess(Load({"--target",   server.tcp_target().ToUrl(),
                             "--client",   "shared",
                             "--threads",  "1,2",
                             "--command",  "incrby",
                             "--keys",     "1",
                             "--duration", "0.2",
                             "--warmup",   "0.05",
                             "--repeat",   "2",
                             "--flush",    "--csv",
                             csv,          "--json",
                             json}),
                       &output),
            0)
      << output;
  EXPECT_EQ(CountLines(csv), 1 + 2 * 2);
  EXPECT_EQ(PythonOnJson(json,
                         "d['status'], [len(p['repetitions']) for p in d['points']], "
                         "'redis_version' in d['server_info']"),
            "complete [2, 2] True\n");
  EXPECT_NE(output.find("| 2 | shared | tcp |"), std::string::npos) << output;
  EXPECT_NE(output.find("incrby_sum threads=2:"), std::string::npos) << output;
}

TEST_F(KvlabLoadCliTest, SchemaNeedsNoTargetAndListsTheCsvColumns) {
  std::string output;
  ASSERT_EQ(RunProcess(Load({"--schema"}), &output), 0) << output;
  std::ofstream(directory_ + "/schema.json") << output;
  EXPECT_EQ(PythonOnJson(directory_ + "/schema.json",
                         "d['format'], [c['name'] for c in d['columns']][:2], "
                         "'status' in [c['name'] for c in d['columns']]"),
            "kvlab-points/2 ['threads', 'client'] True\n");
}

TEST_F(KvlabLoadCliTest, RowsCarryTheLabelsAndTheLocalServersCosts) {
  TestServer server(RedisServer());
  ASSERT_TRUE(server.started()) << server.start_error();
  const std::string csv = directory_ + "/r.csv";
  std::string output;
  ASSERT_EQ(RunProcess(Load({"--target",        server.unix_target().ToUrl(),
                             "--duration",      "0.2",
                             "--warmup",        "0.05",
                             "--repeat",        "1",
                             "--label",         "sweep=s1",
                             "--label",         "server=redis, the reference",
                             "--label",         "transport=remote",
                             "--measured-cpus", "0",
                             "--own-pids",      std::to_string(getpid()),
                             "--csv",           csv,
                             "--json",          directory_ + "/r.json",
                             "--quiet"}),
                       &output),
            0)
      << output;
  std::string fields;
  ASSERT_EQ(RunProcess({KVLAB_PYTHON, "-c",
                        "import csv,json,sys; r=list(csv.DictReader(open(sys.argv[1])))[0]; "
                        "print(list(r)[:3], r['transport'], r['status'] in ('ok', 'disturbed'), "
                        "float(r['server_cpu']) > 0, float(r['server_ctx_switches_per_op']) >= 0, "
                        "float(r['foreign_cpu']) >= 0, r['histogram'].endswith('r.json'), "
                        "json.load(open(sys.argv[2]))['machine']['wake_cost_us'] >= 0)",
                        csv, directory_ + "/r.json"},
                       &fields),
            0)
      << fields;
  // redis answers INFO cpu and runs here: its CPU and context switches are measured; the
  // wake-up cost was calibrated (no --wake-cost-us) and is recorded.
  EXPECT_EQ(fields, "['sweep', 'server', 'transport'] remote True True True True True True\n");
  EXPECT_NE(output.find("wake-up cost on the measured CPUs"), std::string::npos) << output;
}

TEST_F(KvlabLoadCliTest, RedisBenchmarkRowsAreThePointRecordWithItsFiguresAndBlanks) {
  TestServer server(RedisServer());
  ASSERT_TRUE(server.started()) << server.start_error();
  const std::string csv = directory_ + "/rb.csv";
  std::string output;
  ASSERT_EQ(RunProcess(Load({"--loadgen",       "redis-benchmark",
                             "--target",        server.unix_target().ToUrl(),
                             "--command",       "set",
                             "--keys",          "50",
                             "--pipeline",      "2",
                             "--connections",   "2",
                             "--duration",      "0.2",
                             "--repeat",        "2",
                             "--label",         "loadgen=redis-benchmark",
                             "--measured-cpus", "0",
                             "--wake-cost-us",  "0",
                             "--csv",           csv,
                             "--quiet"}),
                       &output),
            0)
      << output;
  EXPECT_EQ(CountLines(csv), 1 + 2);
  std::string fields;
  ASSERT_EQ(RunProcess({KVLAB_PYTHON, "-c",
                        "import csv,sys; r=list(csv.DictReader(open(sys.argv[1])))[-1]; "
                        "print(r['loadgen'], r['repetition'], float(r['ops_per_s']) > 0, "
                        "float(r['p50_us']) > 0, float(r['server_cpu']) > 0, "
                        "float(r['client_cpu_us_per_op']) > 0, float(r['foreign_cpu']) >= 0, "
                        "repr((r['p90_us'], r['p999_us'], r['errors'], r['histogram'])))",
                        csv},
                       &fields),
            0)
      << fields;
  // Its own figures, measured around it like kvlab-load's; what it does not report is blank.
  EXPECT_EQ(fields, "redis-benchmark 2 True True True True True ('', '', '', '')\n");
}

// Starts kvlab-load with many short repetitions and waits until `rows`
// repetitions are in its CSV.
pid_t StartLongSweep(const std::string& load, const TestServer& server, const std::string& csv,
                     const std::string& json, const std::string& log, int rows) {
  const pid_t pid = SpawnProcess({load, "--target", server.unix_target().ToUrl(), "--client",
                                  "pooled", "--threads", "2,4", "--duration", "0.2", "--warmup",
                                  "0", "--repeat", "50", "--csv", csv, "--json", json, "--quiet"},
                                 log);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (CountLines(csv) < 1 + rows && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pid;
}

TEST_F(KvlabLoadCliTest, ServerKilledMidSweepExitsOneAndKeepsCompletedRepetitions) {
  TestServer server(RedisServer());
  ASSERT_TRUE(server.started()) << server.start_error();
  const std::string csv = directory_ + "/r.csv", json = directory_ + "/r.json";
  const pid_t load = StartLongSweep(KVLAB_LOAD_PATH, server, csv, json, directory_ + "/log", 2);
  server.Kill();
  EXPECT_EQ(WaitForExit(load), 1);
  const std::string log = ReadFile(directory_ + "/log");
  EXPECT_NE(log.find("point threads=2 client=pooled repetition"), std::string::npos) << log;
  const int rows = CountLines(csv) - 1;
  EXPECT_GE(rows, 2);
  EXPECT_EQ(PythonOnJson(json, "d['status'], sum(len(p['repetitions']) for p in d['points'])"),
            "failed " + std::to_string(rows) + "\n");
  // Every CSV row is whole (a crash mid-row would leave a short one).
  std::istringstream lines(ReadFile(csv));
  std::string header;
  std::getline(lines, header);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(std::count(line.begin(), line.end(), ','),
              std::count(header.begin(), header.end(), ','));
  }
}

TEST_F(KvlabLoadCliTest, InterruptExits130AndKeepsCompletedRepetitions) {
  TestServer server(RedisServer());
  ASSERT_TRUE(server.started()) << server.start_error();
  const std::string csv = directory_ + "/r.csv", json = directory_ + "/r.json";
  const pid_t load = StartLongSweep(KVLAB_LOAD_PATH, server, csv, json, directory_ + "/log", 1);
  ::kill(load, SIGINT);
  EXPECT_EQ(WaitForExit(load), 130);
  const int rows = CountLines(csv) - 1;
  EXPECT_GE(rows, 1);
  EXPECT_EQ(PythonOnJson(json, "d['status'], sum(len(p['repetitions']) for p in d['points'])"),
            "cancelled " + std::to_string(rows) + "\n");
}

// A server with a password: every connection of every client kind (and the
// prefill's, the flush's, redis-benchmark's) authenticates; a wrong or missing
// password fails the run with status 1 and a message naming AUTH; the password
// is in no file kvlab-load writes.
TEST_F(KvlabLoadCliTest, PasswordAuthenticatesEveryConnectionAndARefusalExitsOne) {
  const std::string password = "kvlab-test-pass-7f3a";
  testing::ServerKind kind = RedisServer();
  kind.argv.insert(kind.argv.end(), {"--requirepass", password});
  TestServer server(kind);
  ASSERT_TRUE(server.started()) << server.start_error();
  const std::string target = server.tcp_target().ToUrl();
  const std::vector<std::string> timing = {"--duration", "0.1", "--warmup", "0.02",
                                           "--repeat",   "1",   "--quiet"};
  const std::vector<std::vector<std::string>> clients = {
      {"--client", "dedicated", "--threads", "2", "--pipeline", "4", "--prefill", "--flush",
       "--keys", "50"},
      {"--client", "pooled", "--threads", "2", "--connections", "2"},
      {"--client", "pooled", "--threads", "2", "--io", "event-loop", "--loop-threads", "1"},
      {"--client", "shared", "--threads", "2"},
      {"--client", "shared", "--threads", "2", "--io", "event-loop", "--loop-threads", "1"},
      {"--loadgen", "redis-benchmark", "--command", "set", "--requests", "2000"},
  };
  int index = 0;
  for (const auto& client : clients) {
    const std::string csv = directory_ + "/ok" + std::to_string(index) + ".csv";
    const std::string json = directory_ + "/ok" + std::to_string(index++) + ".json";
    std::vector<std::string> args = {"--target", target, "--password", password,
                                     "--csv",    csv,    "--json",     json};
    args.insert(args.end(), client.begin(), client.end());
    args.insert(args.end(), timing.begin(), timing.end());
    std::string output;
    ASSERT_EQ(RunProcess(Load(args), &output), 0) << client[1] << ": " << output;
    EXPECT_EQ(CountLines(csv), 2) << client[1];
    EXPECT_EQ(PythonOnJson(json, "d['status'], '(redacted)' in d['command_line']"),
              "complete True\n");
    EXPECT_EQ(ReadFile(csv).find(password), std::string::npos) << csv;
    EXPECT_EQ(ReadFile(json).find(password), std::string::npos) << json;
    EXPECT_EQ(output.find(password), std::string::npos) << output;
  }
  std::string output;
  EXPECT_EQ(RunProcess(Load({"--target", target, "--password", "not-it", "--duration", "0.1",
                             "--repeat", "1"}),
                       &output),
            1);
  EXPECT_NE(output.find("AUTH refused: WRONGPASS"), std::string::npos) << output;
  EXPECT_NE(output.find("--password"), std::string::npos) << output;
  EXPECT_EQ(RunProcess(Load({"--target", server.unix_target().ToUrl(), "--duration", "0.1",
                             "--repeat", "1"}),
                       &output),
            1);
  EXPECT_NE(output.find("requires AUTH"), std::string::npos) << output;
  EXPECT_EQ(RunProcess(Load({"--target", target, "--loadgen", "redis-benchmark", "--command", "set",
                             "--requests", "100", "--repeat", "1"}),
                       &output),
            1);
  EXPECT_NE(output.find("requires AUTH"), std::string::npos) << output;
}

}  // namespace
}  // namespace kvlab::harness
