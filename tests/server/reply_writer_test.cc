#include "server/reply_writer.h"

#include <gtest/gtest.h>

#include <climits>

namespace kvlab {
namespace {

TEST(ReplyWriter, WritesEveryRespTwoReplyType) {
  std::string out;
  ReplyWriter writer(out);
  writer.Ok();
  writer.SimpleString("PONG");
  writer.Error("ERR syntax error");
  writer.Integer(0);
  writer.Integer(LLONG_MIN);
  writer.Integer(LLONG_MAX);
  writer.Bulk(std::string("a\0\r\n", 4));
  writer.Bulk("");
  writer.Nil();
  writer.ArrayHeader(2);
  writer.NilArray();
  using namespace std::string_literals;
  EXPECT_EQ(out, "+OK\r\n+PONG\r\n-ERR syntax error\r\n:0\r\n"
                 ":-9223372036854775808\r\n:9223372036854775807\r\n"
                 "$4\r\na\0\r\n\r\n$0\r\n\r\n$-1\r\n*2\r\n*-1\r\n"s);
}

TEST(ReplyWriter, ErrorsNeverCarryLineBreaks) {
  std::string out;
  ReplyWriter(out).Error("ERR unknown command 'a\r\nb'");
  EXPECT_EQ(out, "-ERR unknown command 'a  b'\r\n");
}

TEST(ReplyWriter, AppendsToExistingBytes) {
  std::string out = "+OK\r\n";
  ReplyWriter(out).Integer(7);
  EXPECT_EQ(out, "+OK\r\n:7\r\n");
}

}  // namespace
}  // namespace kvlab
