// Unit tests of kvlab-server's command line and of the protected-mode
// decision (which the process test can only exercise where this machine has
// a non-loopback address).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "engines/engine_kind.h"

#include "server/net/connection.h"
#include "server/net/protected_mode.h"
#include "server/net/server_options.h"
#include "server/version.h"

namespace kvlab {
namespace {

ParsedCommandLine Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "kvlab-server");
  return ParseServerCommandLine(static_cast<int>(args.size()), args.data());
}

TEST(ServerOptions, DefaultsAreRedisLike) {
  const ParsedCommandLine parsed = Parse({});
  ASSERT_EQ(parsed.outcome, ParsedCommandLine::Outcome::kRun) << parsed.message;
  const ServerSettings& options = parsed.settings;
  EXPECT_EQ(options.engine.kind, "sharded");
  EXPECT_EQ(options.port, 6379);
  EXPECT_EQ(options.bind, "127.0.0.1");
  EXPECT_EQ(options.max_clients, 10000u);
  EXPECT_TRUE(options.protected_mode);
  EXPECT_EQ(options.engine.max_memory_bytes, 0u);
  EXPECT_EQ(options.client_query_buffer_limit, 1ull << 30);
  EXPECT_EQ(options.client_output_buffer_limit, 64ull << 20);
  EXPECT_GE(options.io_threads, 1u);
  EXPECT_GE(options.engine.shards, 1u);
}

TEST(ServerOptions, EveryOptionIsParsed) {
  const ParsedCommandLine parsed = Parse({"--engine",
                                          "striped",
                                          "--stripes",
                                          "16",
                                          "--io-threads",
                                          "3",
                                          "--port",
                                          "0",
                                          "--unixsocket",
                                          "/tmp/x.sock",
                                          "--bind",
                                          "0.0.0.0",
                                          "--requirepass",
                                          "pw",
                                          "--maxclients",
                                          "7",
                                          "--maxmemory",
                                          "100mb",
                                          "--protected-mode",
                                          "no",
                                          "--hop",
                                          "batch",
                                          "--client-output-buffer-limit",
                                          "1gb",
                                          "--client-query-buffer-limit",
                                          "2k"});
  ASSERT_EQ(parsed.outcome, ParsedCommandLine::Outcome::kRun) << parsed.message;
  const ServerSettings& options = parsed.settings;
  EXPECT_EQ(options.engine.kind, "striped");
  EXPECT_EQ(options.engine.stripes, 16u);
  EXPECT_EQ(options.engine.hop, HopMode::kBatch);
  EXPECT_EQ(options.io_threads, 3u);
  EXPECT_EQ(options.port, 0);
  EXPECT_EQ(options.unix_socket, "/tmp/x.sock");
  EXPECT_EQ(options.bind, "0.0.0.0");
  EXPECT_EQ(options.requirepass, "pw");
  EXPECT_EQ(options.max_clients, 7u);
  EXPECT_EQ(options.engine.max_memory_bytes, 100ull << 20);
  EXPECT_FALSE(options.protected_mode);
  EXPECT_EQ(options.client_output_buffer_limit, 1ull << 30);
  EXPECT_EQ(options.client_query_buffer_limit, 2000u);
}

TEST(ServerOptions, SingleEngineAlwaysRunsOneIoThread) {
  const ParsedCommandLine parsed = Parse({"--engine", "single", "--io-threads", "8"});
  ASSERT_EQ(parsed.outcome, ParsedCommandLine::Outcome::kRun) << parsed.message;
  EXPECT_EQ(parsed.settings.io_threads, 1u);
}

TEST(ServerOptions, BadArgumentsNameTheOptionAndWhatIsAllowed) {
  const std::vector<std::vector<const char*>> cases = {{"--engine", "bogus"},
                                                       {"--shards", "0"},
                                                       {"--shards", "two"},
                                                       {"--io-threads", "-1"},
                                                       {"--port", "65536"},
                                                       {"--maxmemory", "1tb"},
                                                       {"--maxclients", "0"},
                                                       {"--hop", "sometimes"},
                                                       {"--protected-mode", "maybe"},
                                                       {"--port", "0"},
                                                       {"--unknown"},
                                                       {"--port"},
                                                       {"--client-query-buffer-limit", "0"},
                                                       {"--bind", ""}};
  for (const auto& args : cases) {
    const ParsedCommandLine parsed = Parse(args);
    EXPECT_EQ(parsed.outcome, ParsedCommandLine::Outcome::kBadArguments) << args[0];
    EXPECT_NE(parsed.message.find(args[0]), std::string::npos) << parsed.message;
  }
}

TEST(ServerOptions, HelpAndVersionPrintAndExit) {
  EXPECT_EQ(Parse({"--help"}).outcome, ParsedCommandLine::Outcome::kPrintAndExit);
  EXPECT_NE(Parse({"--help"}).message.find("--client-output-buffer-limit"), std::string::npos);
  EXPECT_EQ(Parse({"--version"}).outcome, ParsedCommandLine::Outcome::kPrintAndExit);
  // The version INFO and HELLO report, which is CMake's project version.
  EXPECT_EQ(Parse({"--version"}).message, "kvlab-server " KVLAB_VERSION " (RESP2, Redis " +
                                              std::string(kRedisCompatVersion) +
                                              " compatible replies)\n");
}

TEST(ServerOptions, MemorySizesUseRedisUnits) {
  EXPECT_EQ(ParseMemorySize("0"), 0u);
  EXPECT_EQ(ParseMemorySize("1234"), 1234u);
  EXPECT_EQ(ParseMemorySize("1k"), 1000u);
  EXPECT_EQ(ParseMemorySize("1kb"), 1024u);
  EXPECT_EQ(ParseMemorySize("100mb"), 100ull << 20);
  EXPECT_EQ(ParseMemorySize("100MB"), 100ull << 20);
  EXPECT_EQ(ParseMemorySize("2m"), 2000000u);
  EXPECT_EQ(ParseMemorySize("1gb"), 1ull << 30);
  EXPECT_EQ(ParseMemorySize("3g"), 3000000000u);
  EXPECT_FALSE(ParseMemorySize(""));
  EXPECT_FALSE(ParseMemorySize("mb"));
  EXPECT_FALSE(ParseMemorySize("-1"));
  EXPECT_FALSE(ParseMemorySize("1.5gb"));
  EXPECT_FALSE(ParseMemorySize("99999999999999999999gb"));
}

TEST(ServerOptions, ReadyLineFormat) {
  ServerSettings options;
  options.engine.kind = "sharded";
  options.engine.shards = 2;
  options.engine.hop = HopMode::kCommand;
  options.io_threads = 2;
  options.unix_socket = "/tmp/k.sock";
  EXPECT_EQ(ReadyLine(options, 123),
            "kvlab-server ready engine=sharded shards=2 hop=command io-threads=2 "
            "tcp=127.0.0.1:6379 unix=/tmp/k.sock pid=123");
  options.engine.kind = "single";
  options.io_threads = 1;
  options.port = 0;
  options.unix_socket.clear();
  EXPECT_EQ(ReadyLine(options, 9),
            "kvlab-server ready engine=single io-threads=1 tcp=none unix=none pid=9");
  options.engine.kind = "striped";
  options.engine.stripes = 64;
  EXPECT_EQ(ReadyLine(options, 9),
            "kvlab-server ready engine=striped stripes=64 io-threads=1 tcp=none unix=none pid=9");
}

// owner's shards are its I/O threads; --shard-ports gives each its own port.
TEST(ServerOptions, OwnerHasOneShardPerIoThreadAndShardPorts) {
  ParsedCommandLine parsed =
      Parse({"--engine", "owner", "--io-threads", "3", "--shards", "8", "--shard-ports", "7000"});
  ASSERT_EQ(parsed.outcome, ParsedCommandLine::Outcome::kRun) << parsed.message;
  EXPECT_EQ(parsed.settings.engine.shards, 3u);
  EXPECT_EQ(parsed.settings.shard_ports, 7000);
  EXPECT_EQ(ReadyLine(parsed.settings, 5),
            "kvlab-server ready engine=owner owners=3 io-threads=3 tcp=127.0.0.1:6379 "
            "unix=none shard-ports=7000 pid=5");
  parsed = Parse({"--engine", "sharded", "--shard-ports", "7000"});
  EXPECT_EQ(parsed.outcome, ParsedCommandLine::Outcome::kBadArguments);
  EXPECT_NE(parsed.message.find("--shard-ports needs"), std::string::npos) << parsed.message;
  parsed = Parse({"--engine", "owner", "--io-threads", "4", "--shard-ports", "65533"});
  EXPECT_EQ(parsed.outcome, ParsedCommandLine::Outcome::kBadArguments);
  EXPECT_NE(parsed.message.find("past port 65535"), std::string::npos) << parsed.message;
}

// Runs `program` (Python, with `d` the parsed --kinds JSON); its output.
std::string OverKindsJson(const std::string& program) {
  // One file per process: CTest runs this binary's tests as parallel
  // processes, and a shared name let one truncate the file another read.
  const std::string path =
      ::testing::TempDir() + "server_kinds." + std::to_string(::getpid()) + ".json";
  std::ofstream(path) << KindsJson();
  const std::string command = std::string(KVLAB_PYTHON) + " -c \"import json; d=json.load(open('" +
                              path + "')); " + program + "\" 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string output;
  char buffer[4096];
  for (size_t got; pipe != nullptr && (got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
    output.append(buffer, got);
  }
  EXPECT_EQ(pipe == nullptr ? -1 : ::pclose(pipe), 0) << output;
  return output;
}

TEST(ServerKinds, KindsPrintsTheJsonAndExits) {
  const ParsedCommandLine parsed = Parse({"--kinds"});
  EXPECT_EQ(parsed.outcome, ParsedCommandLine::Outcome::kPrintAndExit);
  EXPECT_EQ(parsed.message, KindsJson());
}

TEST(ServerKinds, EveryListedEngineIsAcceptedAndNoOther) {
  const std::string names = OverKindsJson(
      "print(d['format'], d['default_engine']); print(*[e['name'] for e in d['engines']])");
  std::string expected = "kvlab-server-kinds/1 " + EngineConfig{}.kind + "\n";
  for (const std::string& kind : EngineKinds())
    expected += kind + (kind == EngineKinds().back() ? "\n" : " ");
  EXPECT_EQ(names, expected);
  for (const std::string& kind : EngineKinds()) {
    EXPECT_EQ(Parse({"--engine", kind.c_str()}).outcome, ParsedCommandLine::Outcome::kRun) << kind;
  }
  const ParsedCommandLine refused = Parse({"--engine", "dashmap"});
  EXPECT_EQ(refused.outcome, ParsedCommandLine::Outcome::kBadArguments);
  EXPECT_NE(refused.message.find("is not one of single|sharded|concurrent|striped|owner"),
            std::string::npos)
      << refused.message;
}

TEST(ServerKinds, OptionsAndTraitsFollowTheTable) {
  EXPECT_EQ(OverKindsJson("print(*[(e['name'], [o['flag'] for o in e['options']], "
                          "e['traits']['single_threaded'], e['traits']['thread_per_core']) "
                          "for e in d['engines']], sep='\\n')"),
            "('single', [], True, False)\n"
            "('sharded', ['shards', 'hop'], False, False)\n"
            "('concurrent', [], False, False)\n"
            "('striped', ['stripes'], False, False)\n"
            "('owner', ['shard-ports'], False, True)\n");
  EXPECT_EQ(OverKindsJson("e={e['name']: e for e in d['engines']}; "
                          "print(e['sharded']['options'], e['striped']['options'], d['multikey'])"),
            "[{'flag': 'shards', 'default': 'cores', 'min': 1, 'max': 1024}, "
            "{'flag': 'hop', 'default': 'command', 'choices': ['command', 'batch']}] "
            "[{'flag': 'stripes', 'default': '64', 'min': 1, 'max': 1048576}] "
            "{'flag': 'multikey', 'default': 'atomic', 'choices': ['atomic', 'split']}\n");
  // Every choice listed is accepted.
  for (const char* hop : {"command", "batch"}) {
    EXPECT_EQ(Parse({"--hop", hop}).outcome, ParsedCommandLine::Outcome::kRun) << hop;
  }
  EXPECT_EQ(Parse({"--multikey", "split"}).settings.engine.multikey, MultiKey::kSplit);
}

TEST(ServerKinds, LimitsAreTheDefaultsInUse) {
  const ServerSettings defaults = Parse({}).settings;
  EXPECT_EQ(
      OverKindsJson("l=d['limits']; print(*[(k, l[k]['default'], l[k]['min'], l[k]['max']) "
                    "for k in ('port', 'maxclients', 'client_output_buffer_limit', "
                    "'client_query_buffer_limit')], sep='\\n')"),
      "('port', " + std::to_string(defaults.port) + ", 0, 65535)\n" + "('maxclients', " +
          std::to_string(defaults.max_clients) + ", 1, 1000000)\n" +
          "('client_output_buffer_limit', " + std::to_string(defaults.client_output_buffer_limit) +
          ", 0, 18446744073709551615)\n" + "('client_query_buffer_limit', " +
          std::to_string(defaults.client_query_buffer_limit) + ", 1, 18446744073709551615)\n");
  EXPECT_EQ(ConnectionLimits{}.output_buffer_bytes, defaults.client_output_buffer_limit);
  EXPECT_EQ(ConnectionLimits{}.query_buffer_bytes, defaults.client_query_buffer_limit);
  EXPECT_EQ(Parse({"--maxclients", "1000001"}).outcome, ParsedCommandLine::Outcome::kBadArguments);
  EXPECT_EQ(Parse({"--maxclients", "1000000"}).outcome, ParsedCommandLine::Outcome::kRun);
  EXPECT_EQ(MemorySizeText(64ull << 20), "64mb");
  EXPECT_EQ(MemorySizeText(1ull << 30), "1gb");
  EXPECT_EQ(MemorySizeText(1000), "1000");
  EXPECT_EQ(MemorySizeText(0), "0");
}

TEST(ProtectedMode, RefusesOnlyNonLoopbackClientsWithoutPassword) {
  const auto address = [](const char* text) { return boost::asio::ip::make_address(text); };
  EXPECT_TRUE(ProtectedModeRefuses(true, false, address("192.0.2.7")));
  EXPECT_TRUE(ProtectedModeRefuses(true, false, address("2001:db8::1")));
  EXPECT_FALSE(ProtectedModeRefuses(true, false, address("127.0.0.1")));
  EXPECT_FALSE(ProtectedModeRefuses(true, false, address("127.8.9.10")));
  EXPECT_FALSE(ProtectedModeRefuses(true, false, address("::1")));
  EXPECT_FALSE(ProtectedModeRefuses(true, false, address("::ffff:127.0.0.1")));
  EXPECT_TRUE(ProtectedModeRefuses(true, false, address("::ffff:192.0.2.7")));
  EXPECT_FALSE(ProtectedModeRefuses(true, true, address("192.0.2.7")));    // password set
  EXPECT_FALSE(ProtectedModeRefuses(false, false, address("192.0.2.7")));  // mode off
  EXPECT_TRUE(kProtectedModeDenied.starts_with("-DENIED Redis is running in protected mode"));
  EXPECT_TRUE(kProtectedModeDenied.ends_with("from the outside.\r\n"));
}

}  // namespace
}  // namespace kvlab
