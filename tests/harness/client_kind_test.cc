// The client-kind table (harness/clients/client_kind.h) and `kvlab-load --kinds`:
// every listed kind is one the command line accepts and an unlisted one is
// refused, the defaults are the ones a point uses, the one option checker
// refuses with the messages users see, and the JSON parses and lists what
// the parsers accept.
#include "harness/clients/client_kind.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/command_line.h"
#include "harness/sweep.h"
#include "harness/workloads/workload.h"
#include "tests/harness/test_server.h"

namespace kvlab::harness {
namespace {

Status ParseArgs(std::vector<std::string> args, CommandLineOptions* out) {
  args.insert(args.begin(), {"kvlab-load", "--target", "tcp://127.0.0.1:1"});
  return ParseCommandLine(args, out);
}

TEST(ClientKindTest, EveryListedKindIsAcceptedAndNamesItself) {
  ASSERT_EQ(AllClientKinds().size(), 3u);
  for (const ClientKindInfo& info : AllClientKinds()) {
    SCOPED_TRACE(std::string(info.name));
    CommandLineOptions options;
    ASSERT_TRUE(ParseArgs({"--client", std::string(info.name)}, &options).ok());
    EXPECT_EQ(options.config.client, info.kind);
    EXPECT_EQ(ClientKindName(info.kind), info.name);
    EXPECT_EQ(&InfoOf(info.kind), FindClientKind(info.name));
  }
  EXPECT_EQ(FindClientKind("async"), nullptr);
  CommandLineOptions options;
  const Status refused = ParseArgs({"--client", "async"}, &options);
  EXPECT_EQ(refused.message(), "bad --client 'async' (allowed: dedicated, pooled, shared)");
  EXPECT_EQ(AllClientKinds().front().kind, LoadConfig{}.client);  // the first is the default
}

TEST(ClientKindTest, DefaultConnectionsAreWhatAPointOpens) {
  EXPECT_EQ(InfoOf(ClientKind::kPooled).default_connections, 8);  // commons-pool2 maxTotal
  for (const ClientKindInfo& info : AllClientKinds()) {
    SCOPED_TRACE(std::string(info.name));
    LoadConfig config;
    config.client = info.kind;
    const int per_thread = info.connections_per_thread ? 6 : 1;
    EXPECT_EQ(EffectiveConnections(config, 6), info.default_connections * per_thread);
    EXPECT_EQ(StrategyOptionsOf(config, 6).connections, EffectiveConnections(config, 6));
  }
  EXPECT_EQ(ConnectionsOf(ClientKind::kDedicated, 2, 4), 4);  // at least one per thread
  EXPECT_EQ(ConnectionsOf(ClientKind::kDedicated, 10, 4), 10);
  EXPECT_EQ(ConnectionsOf(ClientKind::kPooled, 3, 4), 3);
  EXPECT_EQ(ConnectionsOf(ClientKind::kShared, 0, 4), 1);
}

TEST(ClientKindTest, TheCheckerRefusesOptionsTheKindDoesNotTake) {
  auto message = [](ClientOptionUse use) { return CheckClientOptions(use).message(); };
  ClientOptionUse pooled{.client = ClientKind::kPooled};
  EXPECT_TRUE(CheckClientOptions(pooled).ok());
  pooled.pipeline = 4;
  EXPECT_EQ(message(pooled),
            "--pipeline applies to --client dedicated only (pooled and shared do "
            "one synchronous round trip per operation)");
  EXPECT_EQ(message({.client = ClientKind::kShared, .connections = 3}),
            "--client shared uses exactly one connection (leave --connections out)");
  EXPECT_TRUE(CheckClientOptions({.client = ClientKind::kShared, .connections = 1}).ok());
  EXPECT_EQ(message({.client = ClientKind::kDedicated, .event_loop = true}),
            "--io event-loop applies to --client pooled and shared only");
  EXPECT_EQ(message({.client = ClientKind::kShared, .refill = true}),
            "--refill applies to --client dedicated only");
  EXPECT_EQ(message({.client = ClientKind::kPooled, .own_connection_command = "multi-incr:4"}),
            "--command multi-incr:4 needs --client dedicated, --io direct and one connection per "
            "thread (--connections at most the thread count)");
  EXPECT_FALSE(CheckClientOptions({.client = ClientKind::kDedicated,
                                   .connections = 3,
                                   .fewest_threads = 2,
                                   .own_connection_command = "multi-incr:2"})
                   .ok());
  EXPECT_TRUE(CheckClientOptions({.client = ClientKind::kDedicated,
                                  .connections = 2,
                                  .fewest_threads = 2,
                                  .own_connection_command = "multi-incr:2"})
                  .ok());
  EXPECT_EQ(message({.client = ClientKind::kPooled, .redis_benchmark = true}),
            "--loadgen redis-benchmark: --client must be dedicated");
  for (const ClientKindInfo& info : AllClientKinds()) {  // the table decides, kind by kind
    SCOPED_TRACE(std::string(info.name));
    EXPECT_EQ(CheckClientOptions({.client = info.kind, .pipeline = 2}).ok(), info.pipelines);
    EXPECT_EQ(CheckClientOptions({.client = info.kind, .event_loop = true}).ok(), info.event_loop);
    EXPECT_EQ(
        CheckClientOptions({.client = info.kind, .own_connection_command = "multi-incr:1"}).ok(),
        info.transactions);
    EXPECT_EQ(CheckClientOptions({.client = info.kind, .redis_benchmark = true}).ok(),
              info.redis_benchmark);
  }
}

TEST(ClientKindTest, TheSweepAndTheCommandLineUseTheChecker) {
  LoadConfig config;
  config.client = ClientKind::kPooled;
  config.refill = RefillMode::kBurst;
  EXPECT_EQ(ValidateConfig(config).message(), "--refill applies to --client dedicated only");
  CommandLineOptions options;
  // Given at all, --refill needs a kind that pipelines (steady is the default).
  EXPECT_EQ(ParseArgs({"--client", "pooled", "--refill", "steady"}, &options).message(),
            "--refill applies to --client dedicated only");
}

// Runs `program` over the --kinds JSON with Python's json module.
std::string OverKindsJson(const std::string& program) {
  std::string output;
  const int status = testing::RunProcess(
      {KVLAB_PYTHON, "-c", "import json,sys; d=json.loads(sys.argv[1]); " + program, KindsJson()},
      &output);
  EXPECT_EQ(status, 0) << output;
  return output;
}

TEST(ClientKindTest, KindsJsonParsesAndListsTheTable) {
  EXPECT_EQ(OverKindsJson("print(d['format'], d['default_client'], "
                          "','.join(c['name'] for c in d['clients']))"),
            "kvlab-load-kinds/1 dedicated dedicated,pooled,shared\n");
  EXPECT_EQ(OverKindsJson("print(*[(c['name'], c['default_connections'], c['max_connections'], "
                          "c['pipelines'], c['event_loop'], c['options']) for c in d['clients']])"),
            "('dedicated', 1, 100000, True, False, ['pipeline', 'refill']) "
            "('pooled', 8, 100000, False, True, ['io', 'loop-threads', 'io-flush']) "
            "('shared', 1, 1, False, True, ['io', 'loop-threads', 'io-flush'])\n");
  EXPECT_EQ(OverKindsJson("print(d['limits']['threads'], d['commands']['max_keys_per_command'], "
                          "d['commands']['own_connection'], d['choices']['loadgen'])"),
            "{'min': 1, 'max': 4096} 1000 ['multi-incr'] ['kvlab-load', 'redis-benchmark']\n");
}

TEST(ClientKindTest, EveryChoiceAndCommandInTheJsonIsAccepted) {
  // Each line: an option and a value the JSON lists; every one must parse.
  const std::string lines = OverKindsJson(
      "c=d['choices']; cm=d['commands']\n"
      "for k in ('io','io_flush','refill','route','arrival'):\n"
      "  for v in c[k]: print(k.replace('_','-'), v)\n"
      "for v in c['loadgen']: print('loadgen', v)\n"
      "for v in cm['single']: print('command', v)\n"
      "for v in cm['multi_key']: print('command', v+':1'); print('command', "
      "v+':'+str(cm['max_keys_per_command']))\n"
      "for v in cm['ycsb']: print('command', 'ycsb:'+v)\n"
      "for v in cm['redis_benchmark_tests']: print('command', 'rb:'+v)");
  size_t start = 0, checked = 0;
  for (size_t end; (end = lines.find('\n', start)) != std::string::npos;
       start = end + 1, ++checked) {
    const std::string line = lines.substr(start, end - start);
    const std::string option = line.substr(0, line.find(' '));
    const std::string value = line.substr(line.find(' ') + 1);
    SCOPED_TRACE(line);
    Status parsed;
    if (option == "command") {
      WorkloadSpec spec;
      parsed = ParseCommand(value, &spec);
    } else {
      // The options that need another to apply get it.
      CommandLineOptions options;
      std::vector<std::string> args = {"--" + option, value};
      if (option == "io" || option == "io-flush") args.insert(args.end(), {"--client", "pooled"});
      if (option == "io-flush") args.insert(args.end(), {"--io", "event-loop"});
      if (option == "arrival") args.insert(args.end(), {"--rate", "10"});
      if (option == "loadgen") args.insert(args.end(), {"--command", "get"});
      parsed = ParseArgs(args, &options);
    }
    EXPECT_TRUE(parsed.ok()) << parsed.message();
  }
  EXPECT_GT(checked, 40u);
  WorkloadSpec spec;
  EXPECT_FALSE(ParseCommand("mset:" + std::to_string(kMaxKeysPerCommand + 1), &spec).ok());
}

}  // namespace
}  // namespace kvlab::harness
