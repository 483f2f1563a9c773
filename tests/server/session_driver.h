// SessionDriver: runs a Session the way a connection does, minus the socket —
// append bytes, call Process() until every buffered command is answered, and
// wait for asynchronous engine completions (the sharded engine resumes from a
// shard thread; the driver then calls Process() again on its own thread).
//
// Test helper; one driver per thread.
#pragma once

#include <condition_variable>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "engines/engine.h"
#include "server/server_context.h"
#include "server/session.h"

namespace kvlab::test {

class SessionDriver {
 public:
  explicit SessionDriver(ServerContext& ctx, uint64_t client_id = 1)
      : session_(ctx, ClientInfo{client_id, "127.0.0.1:40000", "127.0.0.1:6379", false, 7}) {}

  // Feeds `bytes` and returns every reply they produced (up to the point
  // where they passed `out_limit`, if they did: see over_limit(); the next
  // Feed() goes on from there).
  std::string Feed(std::string_view bytes, size_t out_limit = std::numeric_limits<size_t>::max()) {
    session_.input().append(bytes);
    over_limit_ = false;
    std::string out;
    while (true) {
      Session::Progress status = session_.Process(
          out,
          [this] {
            std::lock_guard lock(mutex_);
            resumed_ = true;
            cv_.notify_one();
          },
          out_limit);
      if (status == Session::Progress::kPending) {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [this] { return resumed_; });
        resumed_ = false;
        continue;
      }
      if (status == Session::Progress::kClose) closed_ = true;
      if (status == Session::Progress::kOutputLimit) over_limit_ = true;
      return out;
    }
  }

  bool closed() const { return closed_; }
  bool over_limit() const { return over_limit_; }  // the last Feed() passed its out_limit
  Session& session() { return session_; }

 private:
  Session session_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool resumed_ = false;
  bool closed_ = false;
  bool over_limit_ = false;
};

// An engine plus the ServerContext around it, as kvlab-server builds them.
struct EngineUnderTest {
  std::unique_ptr<Engine> engine;
  std::unique_ptr<ServerContext> context;
};

// kind: single | sharded | sharded-batch | concurrent | striped | owner
inline EngineUnderTest MakeEngineUnderTest(const std::string& kind, ServerSettings settings = {}) {
  EngineConfig& config = settings.engine;
  config.kind = kind == "sharded-batch" ? "sharded" : kind;
  config.shards = 3;
  config.stripes = 4;
  config.hop = kind == "sharded-batch" ? HopMode::kBatch : HopMode::kCommand;
  EngineUnderTest built;
  if (!MakeEngine(config, &built.engine).ok()) return built;
  built.context = std::make_unique<ServerContext>(*built.engine, std::move(settings));
  return built;
}

inline const std::vector<std::string>& AllEngineKinds() {
  static const std::vector<std::string> kinds = {"single",     "sharded", "sharded-batch",
                                                 "concurrent", "striped", "owner"};
  return kinds;
}

// gtest parameter names may not contain '-'.
inline std::string EngineTestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

}  // namespace kvlab::test
