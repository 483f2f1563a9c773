#include "tests/harness/test_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <memory>
#include <thread>

#include "harness/clients/connection.h"
#include "harness/clients/resp_encoding.h"
#include "tests/test_ports.h"

namespace kvlab::harness::testing {
namespace {}  // namespace

pid_t SpawnProcess(const std::vector<std::string>& argv, const std::string& output_path) {
  std::vector<char*> raw;
  for (const std::string& arg : argv) raw.push_back(const_cast<char*>(arg.c_str()));
  raw.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int out = ::open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out >= 0) {
      ::dup2(out, STDOUT_FILENO);
      ::dup2(out, STDERR_FILENO);
    }
    ::execvp(raw[0], raw.data());
    ::_exit(127);
  }
  return pid;
}

int WaitForExit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

ServerKind RedisServer() {
  return {"redis", {"redis-server", "--save", "", "--appendonly", "no", "--daemonize", "no"}};
}

std::vector<ServerKind> AvailableServers() {
  std::vector<ServerKind> servers{RedisServer()};
  servers.push_back({"kvlab_single", {KVLAB_SERVER_PATH, "--engine", "single"}});
  servers.push_back({"kvlab_sharded", {KVLAB_SERVER_PATH, "--engine", "sharded"}});
  return servers;
}

TestServer::TestServer(const ServerKind& kind) {
  char pattern[] = "/tmp/kvlab-harness-test-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) {
    start_error_ = "mkdtemp failed";
    return;
  }
  directory_ = pattern;
  socket_path_ = directory_ + "/server.sock";
  for (int attempt = 0; attempt < 5 && !started(); ++attempt) {
    if (!TryStart(kind, test_ports::FreeTcpPort())) Kill();
  }
}

bool TestServer::TryStart(const ServerKind& kind, int port) {
  port_ = port;
  std::vector<std::string> argv = kind.argv;
  argv.insert(argv.end(), {"--port", std::to_string(port), "--unixsocket", socket_path_});
  pid_ = SpawnProcess(argv, directory_ + "/server.log");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::string request;
  AppendCommand(&request, {"PING"});
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {  // exited: port taken?
      pid_ = -1;
      std::ifstream log(directory_ + "/server.log");
      std::stringstream text;
      text << log.rdbuf();
      start_error_ = kind.name + " exited at start: " + text.str();
      return false;
    }
    std::unique_ptr<Connection> connection;
    ConnectionOptions options;
    options.reply_timeout_s = 2;
    ReplyPtr reply;
    if (Connection::Open(unix_target(), options, &connection).ok() &&
        connection->Call(request, &reply).ok() &&
        Connection::Open(tcp_target(), options, &connection).ok()) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  start_error_ = kind.name + " did not answer PING within 10 s";
  return false;
}

void TestServer::Kill() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

void TestServer::Signal(int signal) {
  if (pid_ > 0) ::kill(pid_, signal);
}

TestServer::~TestServer() {
  Kill();
  if (!directory_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
  }
}

Target TestServer::unix_target() const {
  Target target;
  target.transport = Transport::kUnix;
  target.path = socket_path_;
  return target;
}

Target TestServer::tcp_target() const {
  Target target;
  target.transport = Transport::kTcp;
  target.host = "127.0.0.1";
  target.port = port_;
  return target;
}

int RunProcess(const std::vector<std::string>& argv, std::string* output) {
  char pattern[] = "/tmp/kvlab-harness-run-XXXXXX";
  const int fd = ::mkstemp(pattern);
  ::close(fd);
  const int status = WaitForExit(SpawnProcess(argv, pattern));
  output->clear();
  if (std::FILE* file = std::fopen(pattern, "r")) {
    char buffer[4096];
    size_t got;
    while ((got = std::fread(buffer, 1, sizeof(buffer), file)) > 0) output->append(buffer, got);
    std::fclose(file);
  }
  ::unlink(pattern);
  return status;
}

}  // namespace kvlab::harness::testing
