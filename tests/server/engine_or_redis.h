// A test's server: one of kvlab's engines run as kvlab-server, or, for the
// target named "redis", redis-server 7.0.15 (tests/server/redis_reference.h),
// so one parameterised test holds every engine to what Redis itself does.
//
// Not thread-safe; one per test.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/server/redis_connection.h"
#include "tests/server/redis_reference.h"
#include "tests/server/server_process.h"

namespace kvlab::test {

inline constexpr char kRedisTarget[] = "redis";

// Every engine kvlab-server has, then "redis".
inline std::vector<std::string> EnginesAndRedis() {
  std::vector<std::string> targets = ServerEngineKinds();
  targets.push_back(kRedisTarget);
  return targets;
}

class EngineOrRedis {
 public:
  // Starts `target`; an error names what failed (redis-server missing, a
  // kvlab-server that did not start).
  Status Start(const std::string& target) {
    if (target == kRedisTarget) {
      redis_ = std::make_unique<RedisReference>();
      if (!redis_->available()) return Status::Unavailable("redis-server is not installed");
      unix_path_ = redis_->socket_path();
      return Status::Ok();
    }
    const Status started = ServerProcess::Start(target, {}, &server_);
    if (started.ok()) unix_path_ = server_->unix_path();
    return started;
  }
  const std::string& unix_path() const { return unix_path_; }

 private:
  std::unique_ptr<RedisReference> redis_;
  std::unique_ptr<ServerProcess> server_;
  std::string unix_path_;
};

// A test parameterised by target (EnginesAndRedis()): the target started,
// and one client connected over its Unix socket.
class TargetTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const Status started = target_.Start(GetParam());
    ASSERT_TRUE(started.ok()) << started.message();
    client_ = RedisConnection::Unix(target_.unix_path());
    ASSERT_NE(client_, nullptr);
  }

  EngineOrRedis target_;
  std::unique_ptr<RedisConnection> client_;
};

}  // namespace kvlab::test
