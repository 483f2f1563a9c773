#include "harness/clients/reply_check.h"

#include <string_view>

namespace kvlab::harness {
namespace {

bool IsStatus(const redisReply& reply, std::string_view text) {
  return reply.type == REDIS_REPLY_STATUS && std::string_view(reply.str, reply.len) == text;
}

}  // namespace

ReplyVerdict CheckReply(const redisReply& reply, ExpectedReply expected) {
  if (reply.type == REDIS_REPLY_ERROR) return ReplyVerdict::kErrorReply;
  switch (expected) {
    case ExpectedReply::kOk:
      return IsStatus(reply, "OK") ? ReplyVerdict::kOk : ReplyVerdict::kWrongType;
    case ExpectedReply::kPong:
      return IsStatus(reply, "PONG") ? ReplyVerdict::kOk : ReplyVerdict::kWrongType;
    case ExpectedReply::kArray:
      return reply.type == REDIS_REPLY_ARRAY ? ReplyVerdict::kOk : ReplyVerdict::kWrongType;
    case ExpectedReply::kQueued:
      return IsStatus(reply, "QUEUED") ? ReplyVerdict::kOk : ReplyVerdict::kWrongType;
    case ExpectedReply::kInteger:
      return reply.type == REDIS_REPLY_INTEGER ? ReplyVerdict::kOk : ReplyVerdict::kWrongType;
    case ExpectedReply::kHash:
      if (reply.type != REDIS_REPLY_ARRAY || reply.elements % 2 != 0)
        return ReplyVerdict::kWrongType;
      return reply.elements == 0 ? ReplyVerdict::kMiss : ReplyVerdict::kOk;
    case ExpectedReply::kBulkOrNil:
      if (reply.type == REDIS_REPLY_STRING) return ReplyVerdict::kOk;
      if (reply.type == REDIS_REPLY_NIL) return ReplyVerdict::kMiss;
      return ReplyVerdict::kWrongType;
  }
  return ReplyVerdict::kWrongType;
}

}  // namespace kvlab::harness
