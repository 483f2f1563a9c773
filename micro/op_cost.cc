// kvlab-opcost: the regression gate's driver. Runs GET, SET and INCR through a
// server Session on each engine, one command at a time on one thread — the
// whole "parse -> execute -> reply" path a connection takes, including, on the
// sharded engine, the hop to the shard thread and back — and marks each
// counted region with callgrind client requests so `python3 -m kvlab regress`
// (analysis/kvlab/tracking/regress.py) can read the exact number of instructions per
// operation.
//
// Deterministic by construction: fixed keys and values, every key written
// before counting starts (no map growth, no first-touch allocations inside a
// region), values of constant length (INCR counters start at 1000000), and
// nothing in a region reads a clock to decide anything.
//
// Each case is counted in kRegions regions of n operations each (kvlab regress
// takes the median, which drops a region where the threads happened to
// interleave unusually). Prints the case list as JSON on stdout. Outside valgrind the client
// requests do nothing, and the driver still checks every reply of its warm-up pass, so a broken
// path fails here rather than being measured.
//
// The pseudo-engine `shell` counts the network shell instead: a `single`
// engine behind a real Connection on its own EventLoop thread, the client
// writing each command into a Unix socketpair and reading the reply. Its
// count is the connection's work per request (Connection::OnReady: the
// recv, the reply's send, the interest bookkeeping), the Session excluded,
// which the engine cases count.
//
// MSET8 and EXEC4 count a multi-key command and a transaction (the engine
// cases only); --multikey split counts them torn, the price of atomicity.
//
// Usage: kvlab-opcost [--ops N] [--engines single,sharded,...,shell] [--multikey atomic|split]
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_DUMP_STATS_AT(name) ((void)(name))
#endif

#include "engines/engine.h"
#include "harness/clients/resp_encoding.h"
#include "server/client_info.h"
#include "server/net/connection.h"
#include "server/net/connection_registry.h"
#include "server/net/event_loop.h"
#include "server/server_context.h"
#include "server/session.h"

namespace kvlab {
namespace {

constexpr int kKeys = 1000;  // distinct keys each case cycles through
constexpr std::string_view kValue = "v0123456789abcdef0123456789abcdef";  // 33 bytes
constexpr int kRegions = 5;              // counted regions per case
constexpr long kCounterStart = 1000000;  // INCR keeps a 7-digit value for 8 999 999 ops per key

std::string Command(std::initializer_list<std::string_view> args) {
  std::string out;
  harness::AppendCommand(&out, args);
  return out;
}

std::string Key(std::string_view prefix, int i) {
  char digits[8];
  std::snprintf(digits, sizeof digits, "%06d", i % kKeys);
  return std::string(prefix) + digits;
}

// EXEC4's counters: their own, so that each is first touched in the warm-up.
std::string TransactionCounter(int i, int k) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%06d:%d", i % kKeys, k);
  return std::string("txcounter:") + digits;
}

std::string BulkReply(std::string_view v) {
  return "$" + std::to_string(v.size()) + "\r\n" + std::string(v) + "\r\n";
}

// Sends one command and returns its reply, which stays valid until the next call.
class Requester {
 public:
  virtual ~Requester() = default;
  virtual const std::string& Run(const std::string& command) = 0;
};

ClientInfo DriverClientInfo(ServerContext& ctx) {
  ClientInfo info;
  info.id = ctx.NextClientId();
  info.peer_address = "127.0.0.1:40000";
  info.local_address = "127.0.0.1:6379";
  return info;
}

// One client on one thread: feeds one command, drives the Session until the
// reply is complete (waiting for the shard thread when the batch is pending).
class Client final : public Requester {
 public:
  explicit Client(ServerContext& ctx) : session_(ctx, DriverClientInfo(ctx)) {
    resume_ = [this] {
      done_.store(true, std::memory_order_release);
      done_.notify_one();
    };
  }

  const std::string& Run(const std::string& command) override {
    out_.clear();
    session_.input().append(command);
    for (;;) {
      Session::Progress status = session_.Process(out_, resume_);
      if (status == Session::Progress::kNeedInput) return out_;
      if (status == Session::Progress::kClose) {
        std::fprintf(stderr, "kvlab-opcost: session closed on %s", command.c_str());
        std::exit(1);
      }
      done_.wait(false, std::memory_order_acquire);
      done_.store(false, std::memory_order_relaxed);
    }
  }

 private:
  Session session_;
  std::string out_;
  std::atomic<bool> done_{false};
  std::function<void()> resume_;
};

// True once `reply` holds one whole RESP reply (simple, integer, error or bulk).
bool WholeReply(const std::string& reply) {
  const size_t line_end = reply.find("\r\n");
  if (line_end == std::string::npos) return false;
  if (reply[0] != '$') return true;
  const long length = std::strtol(reply.c_str() + 1, nullptr, 10);
  return length < 0 || reply.size() >= line_end + 2 + static_cast<size_t>(length) + 2;
}

// The client end of a Unix socketpair whose other end is a Connection on an
// EventLoop thread of its own: every command crosses the network shell.
class SocketClient final : public Requester {
 public:
  explicit SocketClient(ServerContext& ctx) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
      std::perror("kvlab-opcost: socketpair");
      std::exit(1);
    }
    fd_ = fds[0];
    ClientInfo info = DriverClientInfo(ctx);
    info.is_unix = true;
    info.fd = fds[1];
    const uint64_t id = info.id;
    auto connection = std::make_shared<Connection>(loop_, fds[1], ctx, std::move(info),
                                                   ConnectionLimits{}, registry_);
    registry_.Add(id, connection);
    loop_.Post([connection] { connection->Start(); });
    loop_thread_ = std::thread([this] { loop_.Run(); });
  }
  ~SocketClient() override {
    ::close(fd_);  // the connection reads end-of-file, closes, and the loop goes idle
    loop_.ReleaseWhenIdle();
    loop_thread_.join();
  }

  const std::string& Run(const std::string& command) override {
    for (size_t sent = 0; sent < command.size();) {
      const ssize_t n = ::send(fd_, command.data() + sent, command.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) Fail("send");
      sent += static_cast<size_t>(n);
    }
    reply_.clear();
    while (reply_.empty() || !WholeReply(reply_)) {
      char buffer[4096];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) Fail("recv");
      reply_.append(buffer, static_cast<size_t>(n));
    }
    return reply_;
  }

 private:
  [[noreturn]] static void Fail(const char* what) {
    std::perror((std::string("kvlab-opcost: shell ") + what).c_str());
    std::exit(1);
  }

  ConnectionRegistry registry_;
  EventLoop loop_;
  std::thread loop_thread_;
  int fd_ = -1;
  std::string reply_;
};

struct Case {
  const char* op;
  std::vector<std::string> commands;  // kKeys commands, cycled
  std::vector<std::string> expected;  // the reply of each, checked in the warm-up pass
};

// The multi-key cases: MSET of 8 keys (one atomic group), and a pipelined
// MULTI, 4 INCRs of their own counters, EXEC (one group of 4). Each counts
// per command as sent (one MSET; one transaction), not per key.
constexpr int kMsetKeys = 8;
constexpr int kExecIncrs = 4;

std::vector<Case> MakeCases(bool multi_key) {
  Case get{"GET", {}, {}}, set{"SET", {}, {}}, incr{"INCR", {}, {}};
  Case mset{"MSET8", {}, {}}, exec{"EXEC4", {}, {}};
  for (int i = 0; i < kKeys; ++i) {
    get.commands.push_back(Command({"GET", Key("key:", i)}));
    get.expected.push_back(BulkReply(kValue));
    set.commands.push_back(Command({"SET", Key("key:", i), kValue}));
    set.expected.push_back("+OK\r\n");
    incr.commands.push_back(Command({"INCR", Key("counter:", i)}));
    incr.expected.push_back(":" + std::to_string(kCounterStart + 1) + "\r\n");
    std::vector<std::string> keys;
    for (int k = 0; k < kMsetKeys; ++k) keys.push_back(Key("key:", i * kMsetKeys + k));
    mset.commands.push_back(
        Command({"MSET", keys[0], kValue, keys[1], kValue, keys[2], kValue, keys[3], kValue,
                 keys[4], kValue, keys[5], kValue, keys[6], kValue, keys[7], kValue}));
    mset.expected.push_back("+OK\r\n");
    std::string transaction = Command({"MULTI"});
    std::string replies = "+OK\r\n";
    for (int k = 0; k < kExecIncrs; ++k) {
      transaction += Command({"INCR", TransactionCounter(i, k)});
      replies += "+QUEUED\r\n";
    }
    transaction += Command({"EXEC"});
    replies += "*" + std::to_string(kExecIncrs) + "\r\n";
    for (int k = 0; k < kExecIncrs; ++k)
      replies += ":" + std::to_string(kCounterStart + 1) + "\r\n";
    exec.commands.push_back(transaction);
    exec.expected.push_back(replies);
  }
  if (!multi_key) return {get, set, incr};
  return {get, set, incr, mset, exec};
}

void Populate(Requester& client) {
  for (int i = 0; i < kKeys; ++i) {
    client.Run(Command({"SET", Key("key:", i), kValue}));
    client.Run(Command({"SET", Key("counter:", i), std::to_string(kCounterStart)}));
    for (int k = 0; k < kExecIncrs; ++k) {
      client.Run(Command({"SET", TransactionCounter(i, k), std::to_string(kCounterStart)}));
    }
  }
}

// Runs `ops` commands of the case; `check` compares replies (the warm-up pass
// only: it is each key's first command of the case, so INCR answers start + 1).
void Drive(Requester& client, const Case& c, long ops, bool check) {
  for (long i = 0; i < ops; ++i) {
    const std::string& reply = client.Run(c.commands[i % kKeys]);
    if (check && reply != c.expected[i % kKeys]) {
      std::fprintf(stderr, "kvlab-opcost: %s: expected %s got %s\n", c.op,
                   c.expected[i % kKeys].c_str(), reply.c_str());
      std::exit(1);
    }
  }
}

int Main(int argc, char** argv) {
  long ops = 1000;
  std::string engines = "single,sharded,concurrent,striped";
  MultiKey multikey = MultiKey::kAtomic;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--ops" && i + 1 < argc) {
      ops = std::strtol(argv[++i], nullptr, 10);
    } else if (arg == "--engines" && i + 1 < argc) {
      engines = argv[++i];
    } else if (arg == "--multikey" && i + 1 < argc &&
               (std::string_view(argv[i + 1]) == "atomic" ||
                std::string_view(argv[i + 1]) == "split")) {
      multikey = std::string_view(argv[++i]) == "split" ? MultiKey::kSplit : MultiKey::kAtomic;
    } else {
      std::fprintf(stderr,
                   "usage: kvlab-opcost [--ops N] [--engines single,sharded,...] "
                   "[--multikey atomic|split]\n");
      return 2;
    }
  }
  if (ops < 1 || ops > 1000000) {
    std::fprintf(stderr, "kvlab-opcost: --ops must be between 1 and 1000000\n");
    return 2;
  }

  std::string manifest = "{\"cases\": [";
  bool first = true;
  size_t start = 0;
  while (start <= engines.size()) {
    size_t comma = engines.find(',', start);
    if (comma == std::string::npos) comma = engines.size();
    std::string kind = engines.substr(start, comma - start);
    start = comma + 1;

    // `shell`: the single engine behind a Connection (see the top of the file).
    const bool shell = kind == "shell";
    EngineConfig config;
    config.kind = shell ? "single" : kind;
    config.shards = 2;  // two shard threads: a real hop, the same for every run
    config.hop = HopMode::kCommand;
    config.multikey = multikey;
    std::unique_ptr<Engine> engine;
    if (const Status made = MakeEngine(config, &engine); !made.ok()) {
      std::fprintf(stderr, "kvlab-opcost: engine %s: %s\n", kind.c_str(), made.message().c_str());
      return 2;
    }
    ServerSettings settings;
    settings.engine = config;
    ServerContext ctx(*engine, settings);
    std::unique_ptr<Requester> requester;
    if (shell) {
      requester = std::make_unique<SocketClient>(ctx);
    } else {
      requester = std::make_unique<Client>(ctx);
    }
    Requester& client = *requester;
    Populate(client);

    // The socket client reads one reply per command: the shell counts the
    // single-key cases only.
    for (const Case& c : MakeCases(/*multi_key=*/!shell)) {
      // The warm-up pass touches every key once, checks every reply, and
      // brings every buffer to the size the counted regions need.
      Drive(client, c, kKeys, /*check=*/true);
      const std::string region = kind + "/" + c.op + "/";
      // Named strings: the client request reads the pointer after the macro's
      // own statements, so a temporary would already be gone.
      const std::string before_name = region + "warm-up";
      // A dump, unlike CALLGRIND_ZERO_STATS, resets every thread's counters,
      // the shard threads' included: the counted regions start from zero.
      CALLGRIND_DUMP_STATS_AT(before_name.c_str());
      std::string names;
      for (int r = 0; r < kRegions; ++r) {
        const std::string name = region + std::to_string(r);
        Drive(client, c, ops, false);
        CALLGRIND_DUMP_STATS_AT(name.c_str());
        names += std::string(r ? ", " : "") + "\"" + name + "\"";
      }
      manifest += std::string(first ? "" : ",") + "\n  {\"engine\": \"" + kind + "\", \"op\": \"" +
                  c.op + "\", \"ops\": " + std::to_string(ops) + ", \"regions\": [" + names + "]}";
      first = false;
    }
  }
  std::printf("%s\n]}\n", manifest.c_str());
  return 0;
}

}  // namespace
}  // namespace kvlab

int main(int argc, char** argv) { return kvlab::Main(argc, argv); }
