// kvlab-server as a process, per engine, through real clients: hiredis
// (every command family, TCP and Unix socket, a 1000-command pipeline in one
// write), Debian's redis-cli and redis-benchmark, and the process contract
// (ready line, exit codes, SIGTERM).
#include <signal.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <thread>

#include "tests/server/server_test_support.h"

namespace kvlab::test {
namespace {

// Runs a shell command; returns its exit status and stdout+stderr.
int RunCommand(const std::string& command, std::string* output) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output->append(buffer, n);
  const int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

using ServerIntegration = ServerTest;

TEST_P(ServerIntegration, ReadyLineNamesEngineListenersAndPid) {
  StartServer();
  const std::string& line = server_->ready_line();
  EXPECT_NE(line.find("engine=" + GetParam()), std::string::npos) << line;
  EXPECT_NE(line.find("tcp=127.0.0.1:" + std::to_string(server_->port())), std::string::npos)
      << line;
  EXPECT_NE(line.find("unix=" + server_->unix_path()), std::string::npos) << line;
  EXPECT_NE(line.find("pid=" + std::to_string(server_->pid())), std::string::npos) << line;
  if (GetParam() == "single") {
    EXPECT_NE(line.find("io-threads=1"), std::string::npos) << line;
  }
}

TEST_P(ServerIntegration, EveryCommandFamilyRoundTrips) {
  StartServer();
  auto c = Connect();
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->Command({"PING"}).IsStatus("PONG"));
  EXPECT_TRUE(c->Command({"PING", "hi"}).IsBulk("hi"));
  EXPECT_TRUE(c->Command({"ECHO", std::string("a\0b", 3)}).IsBulk(std::string("a\0b", 3)));
  EXPECT_TRUE(c->Command({"SELECT", "0"}).IsStatus("OK"));
  // Strings, binary-safe.
  const std::string binary("\x00\xff\r\n$*", 6);
  EXPECT_TRUE(c->Command({"SET", "s", binary}).IsStatus("OK"));
  EXPECT_TRUE(c->Command({"GET", "s"}).IsBulk(binary));
  EXPECT_TRUE(c->Command({"GET", "missing"}).IsNil());
  EXPECT_TRUE(c->Command({"SET", "s", "x", "NX"}).IsNil());
  EXPECT_TRUE(c->Command({"SET", "s", "y", "XX", "GET"}).IsBulk(binary));
  EXPECT_TRUE(c->Command({"SETNX", "s", "z"}).IsInteger(0));
  EXPECT_TRUE(c->Command({"GETSET", "s", "w"}).IsBulk("y"));
  EXPECT_TRUE(c->Command({"APPEND", "s", "123"}).IsInteger(4));
  EXPECT_TRUE(c->Command({"STRLEN", "s"}).IsInteger(4));
  // Counters.
  EXPECT_TRUE(c->Command({"INCR", "n"}).IsInteger(1));
  EXPECT_TRUE(c->Command({"INCRBY", "n", "41"}).IsInteger(42));
  EXPECT_TRUE(c->Command({"DECR", "n"}).IsInteger(41));
  EXPECT_TRUE(c->Command({"DECRBY", "n", "40"}).IsInteger(1));
  EXPECT_TRUE(c->Command({"INCR", "s"}).IsError());
  // Multi-key.
  EXPECT_TRUE(c->Command({"MSET", "a", "1", "b", "2", "c", "3"}).IsStatus("OK"));
  Reply values = c->Command({"MGET", "a", "missing", "c"});
  ASSERT_EQ(values.type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(values.elements.size(), 3u);
  EXPECT_TRUE(values.elements[0].IsBulk("1"));
  EXPECT_TRUE(values.elements[1].IsNil());
  EXPECT_TRUE(values.elements[2].IsBulk("3"));
  EXPECT_TRUE(c->Command({"EXISTS", "a", "b", "missing", "a"}).IsInteger(3));
  EXPECT_TRUE(c->Command({"DEL", "a", "b", "missing"}).IsInteger(2));
  // Expiry.
  EXPECT_TRUE(c->Command({"EXPIRE", "c", "100"}).IsInteger(1));
  Reply ttl = c->Command({"TTL", "c"});
  EXPECT_EQ(ttl.type, REDIS_REPLY_INTEGER);
  EXPECT_GT(ttl.integer, 0);
  EXPECT_LE(ttl.integer, 100);
  EXPECT_TRUE(c->Command({"PEXPIRE", "c", "100000"}).IsInteger(1));
  EXPECT_GT(c->Command({"PTTL", "c"}).integer, 0);
  EXPECT_TRUE(c->Command({"PERSIST", "c"}).IsInteger(1));
  EXPECT_TRUE(c->Command({"TTL", "c"}).IsInteger(-1));
  EXPECT_TRUE(c->Command({"TTL", "missing"}).IsInteger(-2));
  EXPECT_TRUE(c->Command({"SET", "gone", "v", "PX", "1"}).IsStatus("OK"));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(c->Command({"GET", "gone"}).IsNil());  // expired keys are never returned
  // Keyspace-wide.
  EXPECT_TRUE(c->Command({"DBSIZE"}).IsInteger(3));  // s, n, c
  EXPECT_TRUE(c->Command({"FLUSHDB"}).IsStatus("OK"));
  EXPECT_TRUE(c->Command({"DBSIZE"}).IsInteger(0));
  EXPECT_TRUE(c->Command({"SET", "x", "1"}).IsStatus("OK"));
  EXPECT_TRUE(c->Command({"FLUSHALL"}).IsStatus("OK"));
  EXPECT_TRUE(c->Command({"DBSIZE"}).IsInteger(0));
  // Connection commands.
  EXPECT_TRUE(c->Command({"CLIENT", "SETNAME", "tester"}).IsStatus("OK"));
  EXPECT_TRUE(c->Command({"CLIENT", "GETNAME"}).IsBulk("tester"));
  EXPECT_EQ(c->Command({"CLIENT", "ID"}).type, REDIS_REPLY_INTEGER);
  EXPECT_TRUE(c->Command({"NOSUCHCOMMAND"}).IsError());
  EXPECT_TRUE(c->Command({"QUIT"}).IsStatus("OK"));
  EXPECT_FALSE(c->Command({"PING"}).ok);  // QUIT closed the connection
}

TEST_P(ServerIntegration, UnixSocketAndTcpShareTheKeyspace) {
  StartServer();
  auto tcp = Connect();
  auto unix_client = RedisConnection::Unix(server_->unix_path());
  ASSERT_NE(tcp, nullptr);
  ASSERT_NE(unix_client, nullptr);
  EXPECT_TRUE(unix_client->Command({"SET", "shared", "1"}).IsStatus("OK"));
  EXPECT_TRUE(tcp->Command({"INCR", "shared"}).IsInteger(2));
  EXPECT_TRUE(unix_client->Command({"GET", "shared"}).IsBulk("2"));
}

TEST_P(ServerIntegration, ThousandPipelinedCommandsInOneWrite) {
  StartServer();
  auto client = RawClient::Tcp("127.0.0.1", server_->port());
  ASSERT_NE(client, nullptr);
  constexpr int kCommands = 1000;
  std::string pipeline;
  for (int i = 0; i < kCommands; i += 4) {
    const std::string key = "p:" + std::to_string(i % 37);
    pipeline += EncodeCommand({"SET", key, std::to_string(i)});
    pipeline += EncodeCommand({"GET", key});
    pipeline += EncodeCommand({"INCR", "p:counter"});
    pipeline += EncodeCommand({"MGET", key, "p:counter"});
  }
  ASSERT_TRUE(client->Send(pipeline));  // one send() of every command

  std::string bytes;
  std::vector<Reply> replies;
  bool complete = true;
  while (replies.size() < static_cast<size_t>(kCommands)) {
    std::string more = client->ReadSome();
    ASSERT_FALSE(more.empty()) << "got " << replies.size() << " replies";
    bytes += more;
    replies = ParseReplies(bytes, &complete);
    ASSERT_TRUE(complete);
  }
  ASSERT_EQ(replies.size(), static_cast<size_t>(kCommands));
  for (int i = 0; i < kCommands; i += 4) {
    EXPECT_TRUE(replies[i].IsStatus("OK")) << i;
    EXPECT_TRUE(replies[i + 1].IsBulk(std::to_string(i))) << i;  // replies keep command order
    EXPECT_TRUE(replies[i + 2].IsInteger(i / 4 + 1)) << i;
    ASSERT_EQ(replies[i + 3].elements.size(), 2u);
    EXPECT_TRUE(replies[i + 3].elements[0].IsBulk(std::to_string(i))) << i;
    EXPECT_TRUE(replies[i + 3].elements[1].IsBulk(std::to_string(i / 4 + 1))) << i;
  }
}

TEST_P(ServerIntegration, RedisCliPingAndInfo) {
  StartServer();
  const std::string port = std::to_string(server_->port());
  std::string output;
  ASSERT_EQ(RunCommand("redis-cli -p " + port + " PING", &output), 0) << output;
  EXPECT_EQ(output, "PONG\n");
  output.clear();
  ASSERT_EQ(RunCommand("redis-cli -s " + server_->unix_path() + " PING", &output), 0) << output;
  EXPECT_EQ(output, "PONG\n");
  output.clear();
  ASSERT_EQ(RunCommand("redis-cli -p " + port + " INFO", &output), 0) << output;
  EXPECT_NE(output.find("redis_version:"), std::string::npos) << output;
  EXPECT_NE(output.find("connected_clients:"), std::string::npos) << output;
  EXPECT_NE(output.find(GetParam()), std::string::npos) << output;  // the kvlab section
}

TEST_P(ServerIntegration, RedisBenchmarkCompletesAtP1AndP16) {
  StartServer();
  for (const char* pipeline : {"1", "16"}) {
    std::string output;
    const std::string command = "redis-benchmark -h 127.0.0.1 -p " +
                                std::to_string(server_->port()) +
                                " -t set,get -n 20000 -r 1000 -c 20 --csv -P " + pipeline;
    ASSERT_EQ(RunCommand(command, &output), 0) << command << "\n" << output;
    // --csv: a header, then one row per test; errors would be printed instead.
    EXPECT_NE(output.find("\"SET\","), std::string::npos) << output;
    EXPECT_NE(output.find("\"GET\","), std::string::npos) << output;
    EXPECT_EQ(output.find("ERR"), std::string::npos) << output;
    EXPECT_EQ(output.find("rror"), std::string::npos) << output;
  }
  ExpectHealthy();
}

// redis-benchmark's whole default list (`redis-benchmark -q`, no -t), as the
// docs/server.md says: every test completes without an error reply, on every engine.
TEST_P(ServerIntegration, RedisBenchmarkDefaultSuiteRunsWithoutErrors) {
  StartServer();
  std::string output;
  const std::string command = "redis-benchmark -h 127.0.0.1 -p " + std::to_string(server_->port()) +
                              " -q -n 2000 -r 1000 --csv";
  ASSERT_EQ(RunCommand(command, &output), 0) << command << "\n" << output;
  for (const char* test : {"\"PING_INLINE\",",
                           "\"PING_MBULK\",",
                           "\"SET\",",
                           "\"GET\",",
                           "\"INCR\",",
                           "\"LPUSH\",",
                           "\"RPUSH\",",
                           "\"LPOP\",",
                           "\"RPOP\",",
                           "\"SADD\",",
                           "\"HSET\",",
                           "\"SPOP\",",
                           "\"ZADD\",",
                           "\"ZPOPMIN\",",
                           "\"LPUSH (needed to benchmark LRANGE)\",",
                           "\"LRANGE_100 (first 100 elements)\",",
                           "\"LRANGE_300 (first 300 elements)\",",
                           "\"LRANGE_500 (first 500 elements)\",",
                           "\"LRANGE_600 (first 600 elements)\",",
                           "\"MSET (10 keys)\","}) {
    EXPECT_NE(output.find(test), std::string::npos) << test << " missing:\n" << output;
  }
  EXPECT_EQ(output.find("rror"), std::string::npos) << output;
  ExpectHealthy();
}

// The memory meter follows containers through every change: large forms
// (past the compact limits) grown and shrunk, then deleted, leave exactly
// the bytes they came with (dataset_bytes in INFO's kvlab section: 0).
TEST_P(ServerIntegration, ContainerBytesReturnToZeroWhenTheKeysGo) {
  StartServer();
  auto client = Connect();
  ASSERT_NE(client, nullptr);
  const std::string long_value(80, 'v');
  for (int i = 0; i < 600; ++i) {
    const std::string member = "member:" + std::to_string(i) + (i % 7 == 0 ? long_value : "");
    client->Append({"HSET", "h", member, i % 3 ? long_value : "x"});
    client->Append({"SADD", "s", member});
    client->Append({"ZADD", "z", std::to_string(i), member});
    client->Append({"RPUSH", "l", member});
  }
  for (int i = 0; i < 600 * 4; ++i) ASSERT_EQ(client->GetReply().type, REDIS_REPLY_INTEGER);
  for (int i = 0; i < 600; i += 2) {
    const std::string member = "member:" + std::to_string(i) + (i % 7 == 0 ? long_value : "");
    client->Append({"HSET", "h", member, "short"});  // a value shrinks in place
    client->Append({"HDEL", "h", member});
    client->Append({"SREM", "s", member});
    client->Append({"ZREM", "z", member});
    client->Append({"LPOP", "l"});
  }
  for (int i = 0; i < 300 * 5; ++i) client->GetReply();
  EXPECT_TRUE(client->Command({"OBJECT", "ENCODING", "h"}).IsBulk("hashtable"));
  EXPECT_TRUE(client->Command({"OBJECT", "ENCODING", "z"}).IsBulk("skiplist"));
  const Reply info = client->Command({"INFO", "kvlab"});
  EXPECT_EQ(info.text.find("dataset_bytes:0\r\n"), std::string::npos) << info.text;
  EXPECT_TRUE(client->Command({"DEL", "h", "s", "z", "l"}).IsInteger(4));
  const Reply after = client->Command({"INFO", "kvlab"});
  EXPECT_NE(after.text.find("dataset_bytes:0\r\n"), std::string::npos) << after.text;
}

TEST_P(ServerIntegration, SigtermExitsZeroAndRemovesSocketFile) {
  StartServer();
  auto idle = Connect();  // open clients must not hold up the shutdown
  ASSERT_NE(idle, nullptr);
  ASSERT_TRUE(idle->Command({"SET", "k", "v"}).IsStatus("OK"));
  auto half_sent = RawClient::Tcp("127.0.0.1", server_->port());
  ASSERT_TRUE(half_sent->Send("*2\r\n$3\r\nGET\r\n$1"));
  ASSERT_TRUE(std::filesystem::exists(server_->unix_path()));
  EXPECT_EQ(server_->StopWith(SIGTERM), std::optional<int>(0));
  EXPECT_FALSE(std::filesystem::exists(server_->unix_path()));
}

// SHUTDOWN stops the server as SIGTERM does; like Redis it sends no reply,
// the connection just closes.
TEST_P(ServerIntegration, ShutdownCommandExitsZeroWithoutReply) {
  StartServer();
  auto client = RawClient::Tcp("127.0.0.1", server_->port());
  ASSERT_NE(client, nullptr);
  ASSERT_TRUE(client->Send("SHUTDOWN NOSAVE\r\n"));
  bool closed = false;
  EXPECT_EQ(client->ReadUntilClosed(&closed), "");
  EXPECT_TRUE(closed);
  EXPECT_EQ(server_->WaitForExit(), std::optional<int>(0));
  EXPECT_FALSE(std::filesystem::exists(server_->unix_path()));
}

TEST_P(ServerIntegration, SigintExitsZero) {
  StartServer();
  EXPECT_EQ(server_->StopWith(SIGINT), std::optional<int>(0));
}

// Replies go out with direct sends; a reader slower than the server fills
// its socket, the connection waits for room and carries on where it stopped:
// every reply arrives, whole and in order.
TEST_P(ServerIntegration, SlowReaderGetsEveryReplyInOrderAfterItsSocketFills) {
  StartServer();
  auto setup = Connect();
  ASSERT_NE(setup, nullptr);
  std::string expected;
  std::string requests;
  // 200 x 64 KiB: 13 MB of replies, more than the kernel buffers both
  // sockets together (tcp_wmem and tcp_rmem maxima: 4 MB and 6 MB).
  for (int i = 0; i < 200; ++i) {
    const std::string value(64 * 1024, static_cast<char>('a' + i % 26));
    ASSERT_TRUE(setup->Command({"SET", "big" + std::to_string(i), value}).IsStatus("OK"));
    requests += EncodeCommand({"GET", "big" + std::to_string(i)});
    expected += "$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
  }
  auto reader = RawClient::Tcp("127.0.0.1", server_->port());
  ASSERT_NE(reader, nullptr);
  ASSERT_TRUE(reader->Send(requests));  // nothing is read until every request is sent
  const std::string received = reader->ReadExactly(expected.size());
  ASSERT_EQ(received.size(), expected.size());
  EXPECT_TRUE(received == expected) << "replies differ from the values, or are out of order";
  ExpectHealthy();
}

// INFO's text as Redis writes it: "# Section" headers, then "name:value"
// lines, CRLF-terminated. Maps "section.name" (section lower case) to value;
// a line of any other shape fails the test.
std::map<std::string, std::string> ParseInfo(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::string section;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find("\r\n", start);
    EXPECT_NE(end, std::string::npos) << "INFO line without CRLF";
    if (end == std::string::npos) break;
    const std::string line = text.substr(start, end - start);
    start = end + 2;
    if (line.empty()) continue;
    if (line.rfind("# ", 0) == 0) {
      section = line.substr(2);
      for (char& c : section) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      continue;
    }
    const size_t colon = line.find(':');
    EXPECT_NE(colon, std::string::npos) << line;
    if (colon == std::string::npos) continue;
    fields[section + "." + line.substr(0, colon)] = line.substr(colon + 1);
  }
  return fields;
}

// CPU seconds as Redis prints them: "<seconds>.<six digits>".
double CpuSeconds(const std::map<std::string, std::string>& info, const std::string& name) {
  const auto found = info.find(name);
  EXPECT_NE(found, info.end()) << name;
  if (found == info.end()) return -1;
  EXPECT_TRUE(std::regex_match(found->second, std::regex("[0-9]+\\.[0-9]{6}")))
      << name << "=" << found->second;
  return std::stod(found->second);
}

double ThreadCpuTotal(const std::map<std::string, std::string>& info, const std::string& prefix) {
  double total = 0;
  for (const auto& [name, value] : info) {
    if (name.rfind("kvlab." + prefix, 0) == 0 &&
        (name.ends_with("_cpu_user") || name.ends_with("_cpu_sys"))) {
      total += CpuSeconds(info, name);
    }
  }
  return total;
}

TEST_P(ServerIntegration, InfoCpuAndMemoryParseLikeRedisAndGrowUnderLoad) {
  StartServer();
  auto c = Connect();
  ASSERT_NE(c, nullptr);
  const auto before = ParseInfo(c->Command({"INFO", "cpu", "memory", "kvlab"}).text);
  for (const char* name : {"cpu.used_cpu_sys", "cpu.used_cpu_user", "cpu.used_cpu_sys_children",
                           "cpu.used_cpu_user_children"}) {
    EXPECT_GE(CpuSeconds(before, name), 0) << name;
  }
  EXPECT_TRUE(before.contains("kvlab.io_thread0_cpu_user"));
  EXPECT_TRUE(before.contains("kvlab.io_thread0_cpu_sys"));
  if (GetParam() == "sharded") {
    EXPECT_TRUE(before.contains("kvlab.shard0_cpu_user"));
  }
  const uint64_t used_before = std::stoull(before.at("memory.used_memory"));
  EXPECT_GT(used_before, 0u);
  EXPECT_GT(std::stoull(before.at("memory.used_memory_rss")), 0u);

  // 20,000 keys x 256-byte values: at least 5 MB the allocator must account for.
  constexpr int kKeys = 20'000;
  const std::string value(256, 'v');
  for (int i = 0; i < kKeys; ++i) c->Append({"SET", "grow:" + std::to_string(i), value});
  for (int i = 0; i < kKeys; ++i) ASSERT_TRUE(c->GetReply().IsStatus("OK")) << i;
  auto after = ParseInfo(c->Command({"INFO", "cpu", "memory", "kvlab"}).text);
  EXPECT_GE(std::stoull(after.at("memory.used_memory")), used_before + uint64_t{kKeys} * 256);
  EXPECT_GE(std::stoull(after.at("memory.used_memory_dataset")), uint64_t{kKeys} * 256);

  // CPU clocks tick coarsely (per-thread figures in 1/CLK_TCK steps): keep
  // loading until both have moved, bounded by work done, not by time.
  const double process_before =
      CpuSeconds(before, "cpu.used_cpu_user") + CpuSeconds(before, "cpu.used_cpu_sys");
  const double io_before = ThreadCpuTotal(before, "io_thread");
  for (int round = 0; round < 200; ++round) {
    const double process =
        CpuSeconds(after, "cpu.used_cpu_user") + CpuSeconds(after, "cpu.used_cpu_sys");
    if (process > process_before && ThreadCpuTotal(after, "io_thread") > io_before) break;
    for (int i = 0; i < kKeys; ++i) c->Append({"GET", "grow:" + std::to_string(i)});
    for (int i = 0; i < kKeys; ++i) ASSERT_TRUE(c->GetReply().IsBulk(value)) << i;
    after = ParseInfo(c->Command({"INFO", "cpu", "memory", "kvlab"}).text);
  }
  EXPECT_GT(CpuSeconds(after, "cpu.used_cpu_user") + CpuSeconds(after, "cpu.used_cpu_sys"),
            process_before);
  EXPECT_GT(ThreadCpuTotal(after, "io_thread"), io_before);
}

INSTANTIATE_TEST_SUITE_P(Engines, ServerIntegration, ::testing::ValuesIn(ServerEngineKinds()),
                         EngineName);

// The process contract that does not depend on the engine.
TEST(ServerProcessContract, BadArgumentsExitTwo) {
  for (const std::string args :
       {"--engine nosuch", "--port 70000", "--maxmemory 12xb", "--hop sometimes",
        "--protected-mode maybe", "--no-such-flag", "--port 0"}) {
    std::string output;
    // Built by appending: GCC 12 took `std::string(PATH) + " " + args` for an
    // overrun of the temporary (-Warray-bounds) once the path was long.
    std::string command = KVLAB_SERVER_PATH;
    command.append(" ").append(args);
    EXPECT_EQ(RunCommand(command, &output), 2) << args;
    EXPECT_NE(output.find("kvlab-server:"), std::string::npos) << args << ": " << output;
  }
}

TEST(ServerProcessContract, HelpAndVersionExitZero) {
  std::string output;
  EXPECT_EQ(RunCommand(std::string(KVLAB_SERVER_PATH) + " --help", &output), 0);
  EXPECT_NE(output.find("--engine"), std::string::npos) << output;
  output.clear();
  EXPECT_EQ(RunCommand(std::string(KVLAB_SERVER_PATH) + " --version", &output), 0);
  EXPECT_NE(output.find("kvlab-server"), std::string::npos) << output;
}

TEST(ServerProcessContract, PortInUseExitsOneWithMessage) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string port = std::to_string(ntohs(address.sin_port));
  std::string output;
  EXPECT_EQ(RunCommand(std::string(KVLAB_SERVER_PATH) + " --engine single --port " + port, &output),
            1);
  EXPECT_NE(output.find("cannot listen on 127.0.0.1:" + port), std::string::npos) << output;
  ::close(fd);
}

TEST(ServerProcessContract, SocketPathThatIsNotASocketExitsOne) {
  char dir_template[] = "/tmp/kvlab-server-test-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string path = std::string(dir_template) + "/regular-file";
  std::FILE* file = std::fopen(path.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fclose(file);
  std::string output;
  EXPECT_EQ(
      RunCommand(std::string(KVLAB_SERVER_PATH) + " --engine single --port 0 --unixsocket " + path,
                 &output),
      1);
  EXPECT_NE(output.find("is not a socket"), std::string::npos) << output;
  std::filesystem::remove_all(dir_template);
}

}  // namespace
}  // namespace kvlab::test
