// RedisConnection: a hiredis connection for tests, with replies copied into
// a plain value type so assertions read naturally.
//
// Not thread-safe: one per thread.
#pragma once

#include <hiredis/hiredis.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kvlab::test {

struct Reply {
  int type = 0;  // REDIS_REPLY_STRING, _STATUS, _ERROR, _INTEGER, _NIL, _ARRAY
  std::string text;
  long long integer = 0;
  std::vector<Reply> elements;
  bool ok = false;  // false: the connection failed (error in text)

  bool IsStatus(const std::string& expected) const {
    return type == REDIS_REPLY_STATUS && text == expected;
  }
  bool IsBulk(const std::string& expected) const {
    return type == REDIS_REPLY_STRING && text == expected;
  }
  bool IsInteger(long long expected) const {
    return type == REDIS_REPLY_INTEGER && integer == expected;
  }
  bool IsNil() const { return type == REDIS_REPLY_NIL; }
  bool IsError() const { return type == REDIS_REPLY_ERROR; }
};

Reply CopyReply(const redisReply* reply);

class RedisConnection {
 public:
  static std::unique_ptr<RedisConnection> Tcp(uint16_t port);
  static std::unique_ptr<RedisConnection> Unix(const std::string& path);
  ~RedisConnection();
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;

  Reply Command(const std::vector<std::string>& args);
  // Queues commands without waiting; GetReply() collects them in order.
  void Append(const std::vector<std::string>& args);
  // Sends what Append() queued without waiting for replies (a client that
  // blocks). False when the connection failed.
  bool Flush();
  Reply GetReply();

 private:
  explicit RedisConnection(redisContext* context) : context_(context) {}
  redisContext* context_;
};

// Parses a byte stream of RESP replies (as a raw client received them).
std::vector<Reply> ParseReplies(const std::string& bytes, bool* complete);

}  // namespace kvlab::test
