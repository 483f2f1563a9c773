#include "server/reply_writer.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <string>
#include <string_view>

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
  EXPECT_EQ(out,
            "+OK\r\n+PONG\r\n-ERR syntax error\r\n:0\r\n"
            ":-9223372036854775808\r\n:9223372036854775807\r\n"
            "$4\r\na\0\r\n\r\n$0\r\n\r\n$-1\r\n*2\r\n*-1\r\n"s);
}

TEST(ReplyWriter, TypedRepliesKeepTheirRespTwoForm) {
  std::string out;
  ReplyWriter writer(out);
  writer.MapHeader(2);
  writer.SetHeader(3);
  writer.Double(1.5);
  writer.Double(-HUGE_VAL);
  writer.Verbatim("a:1\r\n");
  writer.ArrayOfPairsHeader(2);
  writer.PairHeader();
  EXPECT_EQ(out, "*4\r\n*3\r\n$3\r\n1.5\r\n$4\r\n-inf\r\n$5\r\na:1\r\n\r\n*4\r\n");
}

TEST(ReplyWriter, WritesRespThreeTypesAfterHelloThree) {
  std::string out;
  ReplyWriter writer(out, RespVersion::kResp3);
  writer.Nil();
  writer.NilArray();
  writer.MapHeader(2);
  writer.SetHeader(3);
  writer.Double(0.1);
  writer.Double(HUGE_VAL);
  writer.Double(-HUGE_VAL);
  writer.Double(-0.0);
  writer.Double(1e300);
  writer.Verbatim("a:1\r\n");
  writer.ArrayOfPairsHeader(2);
  writer.PairHeader();
  writer.Bulk("m");
  writer.Integer(1);
  EXPECT_EQ(out,
            "_\r\n_\r\n%2\r\n~3\r\n,0.10000000000000001\r\n,inf\r\n,-inf\r\n,-0\r\n"
            ",1.0000000000000001e+300\r\n=9\r\ntxt:a:1\r\n\r\n*2\r\n*2\r\n$1\r\nm\r\n:1\r\n");
}

TEST(ReplyWriter, ErrorsNeverCarryLineBreaks) {
  std::string out;
  ReplyWriter(out).Error("ERR unknown command 'a\r\nb'");
  EXPECT_EQ(out, "-ERR unknown command 'a  b'\r\n");
}

TEST(ReplyWriter, StatusLinesAreAnArrayOfSimpleStrings) {
  static constexpr std::string_view kLines[] = {"X <subcommand>", "HELP", "    Prints this help."};
  for (const RespVersion version : {RespVersion::kResp2, RespVersion::kResp3}) {
    std::string out;
    ReplyWriter(out, version).StatusLines(kLines);
    EXPECT_EQ(out, "*3\r\n+X <subcommand>\r\n+HELP\r\n+    Prints this help.\r\n");
  }
  std::string empty;
  ReplyWriter(empty).StatusLines({});
  EXPECT_EQ(empty, "*0\r\n");
}

TEST(ReplyWriter, AppendsToExistingBytes) {
  std::string out = "+OK\r\n";
  ReplyWriter(out).Integer(7);
  EXPECT_EQ(out, "+OK\r\n:7\r\n");
}

}  // namespace
}  // namespace kvlab
