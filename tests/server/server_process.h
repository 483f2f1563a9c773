// ServerProcess: starts the build directory's kvlab-server for one test, on a
// free TCP port and a Unix socket in a fresh temp directory, waits for its
// ready line, and always kills it (destructor), even when the test fails.
//
// Also RawClient: a blocking POSIX socket client for sending exactly the
// bytes a hostile test wants (partial commands, garbage, resets), and
// small helpers shared by the server tests.
//
// Not thread-safe: one ServerProcess per test; one RawClient per thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace kvlab::test {

class ServerProcess {
 public:
  // Starts `kvlab-server --engine <engine> --port <free> --unixsocket <tmp>
  // <extra_args...>` into *started. Unavailable when it exits or does not
  // print its ready line within a few seconds.
  static Status Start(const std::string& engine, const std::vector<std::string>& extra_args,
                      std::unique_ptr<ServerProcess>* started);
  ~ServerProcess();  // SIGKILL if still running, reap, remove the temp dir
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  uint16_t port() const { return port_; }
  const std::string& unix_path() const { return unix_path_; }
  const std::string& ready_line() const { return ready_line_; }
  pid_t pid() const { return pid_; }

  bool Running();
  // Sends `signal` and waits (bounded) for the exit. Returns the exit status,
  // or nullopt when it did not exit normally.
  std::optional<int> StopWith(int signal);
  // Waits (bounded) for an exit it did not cause (SHUTDOWN): the same result.
  std::optional<int> WaitForExit() { return StopWith(0); }

 private:
  ServerProcess() = default;
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::string temp_dir_;
  std::string unix_path_;
  std::string ready_line_;
  bool reaped_ = false;
};

class RawClient {
 public:
  static std::unique_ptr<RawClient> Tcp(const std::string& host, uint16_t port,
                                        const std::string& source_host = "");
  static std::unique_ptr<RawClient> Unix(const std::string& path);
  ~RawClient();
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  int fd() const { return fd_; }
  // Sends every byte (blocking). False on a send error (peer gone).
  bool Send(std::string_view bytes);
  // Reads until `bytes` bytes arrived, the peer closed, or `timeout`.
  std::string ReadExactly(size_t bytes, std::chrono::milliseconds timeout = kTimeout);
  // Waits up to `timeout` for data and returns what one recv() got ("" on
  // timeout, EOF or error).
  std::string ReadSome(std::chrono::milliseconds timeout = kTimeout);
  // Reads until the peer closes (EOF or reset) or `timeout`. *closed says
  // whether it did close.
  std::string ReadUntilClosed(bool* closed, std::chrono::milliseconds timeout = kTimeout);
  // Closes with SO_LINGER 0 so the peer sees a reset.
  void Reset();

  static constexpr std::chrono::milliseconds kTimeout{5000};

 private:
  explicit RawClient(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// RESP encoding of one command as an array of bulk strings.
std::string EncodeCommand(const std::vector<std::string>& args);

// A non-loopback IPv4 address of this machine, if it has one.
std::optional<std::string> NonLoopbackAddress();

// Raises this process's RLIMIT_NOFILE soft limit towards `wanted`; returns
// the limit in force afterwards.
uint64_t RaiseOpenFileLimit(uint64_t wanted);

// Engine kinds kvlab-server accepts (from the engines library).
std::vector<std::string> ServerEngineKinds();

}  // namespace kvlab::test
