// Shared pieces of the kvlab-server process tests: a GoogleTest fixture,
// parameterised by engine kind, that owns one running kvlab-server, and the
// healthy-client check every hostile test ends with.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/server/redis_connection.h"
#include "tests/server/server_process.h"

namespace kvlab::test {

class ServerTest : public ::testing::TestWithParam<std::string> {
 protected:
  // Starts kvlab-server with this test's engine and `extra_args`.
  void StartServer(const std::vector<std::string>& extra_args = {}) {
    const Status started = ServerProcess::Start(GetParam(), extra_args, &server_);
    ASSERT_TRUE(started.ok()) << started.message();
  }

  std::unique_ptr<RedisConnection> Connect() {
    auto connection = RedisConnection::Tcp(server_->port());
    EXPECT_NE(connection, nullptr) << "cannot connect to port " << server_->port();
    return connection;
  }

  // A fresh client can still write, read and ping: the server survived and
  // nobody else's misbehaviour stalls it.
  void ExpectHealthy() {
    ASSERT_TRUE(server_->Running()) << "kvlab-server died";
    auto client = Connect();
    ASSERT_NE(client, nullptr);
    EXPECT_TRUE(client->Command({"PING"}).IsStatus("PONG"));
    EXPECT_TRUE(client->Command({"SET", "healthy:key", "v"}).IsStatus("OK"));
    EXPECT_TRUE(client->Command({"GET", "healthy:key"}).IsBulk("v"));
    auto unix_client = RedisConnection::Unix(server_->unix_path());
    ASSERT_NE(unix_client, nullptr);
    EXPECT_TRUE(unix_client->Command({"GET", "healthy:key"}).IsBulk("v"));
  }

  std::unique_ptr<ServerProcess> server_;
};

inline std::string EngineName(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

}  // namespace kvlab::test
