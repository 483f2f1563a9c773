// RedisReference: a real redis-server on a Unix socket in a temp dir, for
// differential tests. Started in the constructor, killed in the destructor
// (even when a test fails). available() is false when redis-server is not
// installed or does not start.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/resp_reply_reader.h"

namespace kvlab::test {

class RedisReference {
 public:
  explicit RedisReference(std::vector<std::string> extra_args = {}) {
    char dir_template[] = "/tmp/kvlab-redis-XXXXXX";
    if (mkdtemp(dir_template) == nullptr) return;
    dir_ = dir_template;
    socket_path_ = dir_ + "/redis.sock";
    // --hz 500: a blocking command's timeout (BLPOP k 0.001) ends only on
    // Redis's next cron tick, 100 ms apart at its default hz of 10; the
    // container streams send hundreds of them, and one case took 3.5 s of
    // which 0.4 s was CPU. At Redis's highest hz the tick is 2 ms apart:
    // the same replies (the streams compare byte for byte), 0.4 s a case.
    std::vector<std::string> args = {
        "redis-server", "--port", "0",     "--unixsocket", socket_path_,  "--save", "",
        "--appendonly", "no",     "--dir", dir_,           "--daemonize", "no",     "--loglevel",
        "warning",      "--hz",   "500"};
    args.insert(args.end(), extra_args.begin(), extra_args.end());
    pid_ = fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      // Dies with the test process even if it crashes, and holds none of its
      // output pipes (ctest waits for those to close).
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      freopen("/dev/null", "w", stdout);
      freopen("/dev/null", "w", stderr);
      execvp("redis-server", argv.data());
      _exit(127);
    }
    for (int attempt = 0; attempt < 200 && fd_ < 0; ++attempt) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      fd_ = Connect();
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
    }
  }

  ~RedisReference() {
    if (fd_ >= 0) close(fd_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (!dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
    }
  }

  bool available() const { return fd_ >= 0; }
  const std::string& socket_path() const { return socket_path_; }

  // A fresh connection (the reference keeps its own for Exchange()).
  int Connect() const {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path_.c_str());
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      close(fd);
      return -1;
    }
    return fd;
  }

  // Sends `bytes` and reads until `replies` whole replies (or EOF) arrived.
  static std::string Exchange(int fd, std::string_view bytes, size_t replies) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    std::string in;
    char buf[65536];
    while (SplitCount(in) < replies) {
      ssize_t n = read(fd, buf, sizeof buf);
      if (n <= 0) break;
      in.append(buf, static_cast<size_t>(n));
    }
    return in;
  }

  std::string Exchange(std::string_view bytes, size_t replies) {
    return Exchange(fd_, bytes, replies);
  }

 private:
  static size_t SplitCount(std::string_view bytes) {
    size_t count = 0, pos = 0;
    while (size_t len = CompleteReplyLength(bytes, pos)) {
      pos += len;
      ++count;
    }
    return count;
  }

  std::string dir_;
  std::string socket_path_;
  pid_t pid_ = -1;
  int fd_ = -1;
};

}  // namespace kvlab::test
