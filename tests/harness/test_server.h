// TestServer: starts a RESP server for a harness test — Debian's
// redis-server, or kvlab-server when the build has it — on a free TCP port
// and a Unix socket in a fresh temporary directory, waits until it answers
// PING, and kills it (and removes the directory) when destroyed, also when
// the test fails.
//
// Thread safety: not thread-safe; owned by one test.
#pragma once

#include <sys/types.h>

#include <ostream>
#include <string>
#include <vector>

#include "harness/clients/target.h"

namespace kvlab::harness::testing {

// Which server a test runs against: a display name plus argv (without the
// --port/--unixsocket arguments, which TestServer adds).
struct ServerKind {
  std::string name;
  std::vector<std::string> argv;
};
// Test names and failure messages show the server's name.
inline void PrintTo(const ServerKind& kind, std::ostream* out) { *out << kind.name; }

// redis-server and this build's kvlab-server (engines single and sharded).
std::vector<ServerKind> AvailableServers();
ServerKind RedisServer();

class TestServer {
 public:
  explicit TestServer(const ServerKind& kind);
  ~TestServer();
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  bool started() const { return pid_ > 0; }
  const std::string& start_error() const { return start_error_; }
  Target unix_target() const;
  Target tcp_target() const;
  const std::string& directory() const { return directory_; }

  // SIGKILLs the server now (for fault tests).
  void Kill();
  // Sends `signal` to the server (SIGSTOP/SIGCONT: a stalled server).
  void Signal(int signal);

 private:
  bool TryStart(const ServerKind& kind, int port);

  std::string directory_;
  std::string socket_path_;
  int port_ = 0;
  pid_t pid_ = -1;
  std::string start_error_;
};

// Starts `argv` with stdout and stderr going to `output_path`.
pid_t SpawnProcess(const std::vector<std::string>& argv, const std::string& output_path);
// Waits for `pid`; returns its exit status (128+signal if killed).
int WaitForExit(pid_t pid);

// Runs `argv` to completion; returns its exit status (128+signal if killed)
// and fills *output with stdout and stderr.
int RunProcess(const std::vector<std::string>& argv, std::string* output);

}  // namespace kvlab::harness::testing
