#include "tests/server/redis_connection.h"

namespace kvlab::test {
namespace {

std::vector<const char*> Argv(const std::vector<std::string>& args, std::vector<size_t>* lengths) {
  std::vector<const char*> argv;
  for (const auto& arg : args) {
    argv.push_back(arg.data());
    lengths->push_back(arg.size());
  }
  return argv;
}

}  // namespace

Reply CopyReply(const redisReply* reply) {
  Reply copy;
  copy.ok = true;
  copy.type = reply->type;
  copy.integer = reply->integer;
  if (reply->str != nullptr) copy.text.assign(reply->str, reply->len);
  for (size_t i = 0; i < reply->elements; ++i)
    copy.elements.push_back(CopyReply(reply->element[i]));
  return copy;
}

std::unique_ptr<RedisConnection> RedisConnection::Tcp(uint16_t port) {
  redisContext* context = redisConnect("127.0.0.1", port);
  if (context == nullptr || context->err) {
    if (context) redisFree(context);
    return nullptr;
  }
  return std::unique_ptr<RedisConnection>(new RedisConnection(context));
}

std::unique_ptr<RedisConnection> RedisConnection::Unix(const std::string& path) {
  redisContext* context = redisConnectUnix(path.c_str());
  if (context == nullptr || context->err) {
    if (context) redisFree(context);
    return nullptr;
  }
  return std::unique_ptr<RedisConnection>(new RedisConnection(context));
}

RedisConnection::~RedisConnection() { redisFree(context_); }

Reply RedisConnection::Command(const std::vector<std::string>& args) {
  std::vector<size_t> lengths;
  auto argv = Argv(args, &lengths);
  auto* reply = static_cast<redisReply*>(
      redisCommandArgv(context_, static_cast<int>(argv.size()), argv.data(), lengths.data()));
  if (reply == nullptr) return Reply{.text = context_->errstr};
  Reply copy = CopyReply(reply);
  freeReplyObject(reply);
  return copy;
}

void RedisConnection::Append(const std::vector<std::string>& args) {
  std::vector<size_t> lengths;
  auto argv = Argv(args, &lengths);
  redisAppendCommandArgv(context_, static_cast<int>(argv.size()), argv.data(), lengths.data());
}

bool RedisConnection::Flush() {
  int done = 0;
  while (done == 0) {
    if (redisBufferWrite(context_, &done) != REDIS_OK) return false;
  }
  return true;
}

Reply RedisConnection::GetReply() {
  void* raw = nullptr;
  if (redisGetReply(context_, &raw) != REDIS_OK || raw == nullptr) {
    return Reply{.text = context_->errstr};
  }
  Reply copy = CopyReply(static_cast<redisReply*>(raw));
  freeReplyObject(raw);
  return copy;
}

std::vector<Reply> ParseReplies(const std::string& bytes, bool* complete) {
  std::vector<Reply> replies;
  redisReader* reader = redisReaderCreate();
  redisReaderFeed(reader, bytes.data(), bytes.size());
  *complete = true;
  while (true) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader, &raw) != REDIS_OK) {
      *complete = false;
      break;
    }
    if (raw == nullptr) break;
    replies.push_back(CopyReply(static_cast<redisReply*>(raw)));
    freeReplyObject(raw);
  }
  redisReaderFree(reader);
  return replies;
}

}  // namespace kvlab::test
