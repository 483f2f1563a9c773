// PeekFirstKey(): the first command's key, straight from raw input, or
// nothing where the input does not start with a complete array whose first
// two elements are bulk strings.
#include "server/key_peek.h"

#include <string>

#include <gtest/gtest.h>

namespace kvlab {
namespace {

TEST(KeyPeek, FindsTheSecondElementOfTheFirstCommand) {
  EXPECT_EQ(PeekFirstKey("*2\r\n$3\r\nGET\r\n$5\r\nuser1\r\n"), "user1");
  EXPECT_EQ(PeekFirstKey("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$64\r\n"), "k");  // value not here yet
  // Two pipelined commands: the first one's key.
  EXPECT_EQ(PeekFirstKey("*2\r\n$3\r\nGET\r\n$1\r\na\r\n*2\r\n$3\r\nGET\r\n$1\r\nb\r\n"), "a");
}

TEST(KeyPeek, KeysAreBinarySafeAndMayBeEmpty) {
  const std::string input = std::string("*2\r\n$3\r\nGET\r\n$4\r\na\r\n\0\r\n", 23);
  EXPECT_EQ(PeekFirstKey(input), std::string_view("a\r\n\0", 4));
  EXPECT_EQ(PeekFirstKey("*2\r\n$3\r\nGET\r\n$0\r\n\r\n"), "");
}

TEST(KeyPeek, NothingWithoutACompleteKey) {
  EXPECT_EQ(PeekFirstKey(""), std::nullopt);
  EXPECT_EQ(PeekFirstKey("PING\r\n"), std::nullopt);                        // inline
  EXPECT_EQ(PeekFirstKey("*1\r\n$4\r\nPING\r\n"), std::nullopt);            // no argument
  EXPECT_EQ(PeekFirstKey("*2\r\n$3\r\nGET\r\n$5\r\nuse"), std::nullopt);    // partial key
  EXPECT_EQ(PeekFirstKey("*2\r\n$3\r\nGET\r\n$5\r\nuser1"), std::nullopt);  // no CRLF yet
  EXPECT_EQ(PeekFirstKey("*2\r\n$3\r\nGE"), std::nullopt);
  EXPECT_EQ(PeekFirstKey("*2\r"), std::nullopt);
  EXPECT_EQ(PeekFirstKey("*2\r\n:1\r\n$1\r\nk\r\n"), std::nullopt);         // not a bulk string
  EXPECT_EQ(PeekFirstKey("*2\r\n$3\r\nGET\r\n$-1\r\n"), std::nullopt);
  EXPECT_EQ(PeekFirstKey("*x\r\n"), std::nullopt);
  EXPECT_EQ(PeekFirstKey("*2\r\n$9999999999\r\nGET\r\n"), std::nullopt);   // 10 digits
}

}  // namespace
}  // namespace kvlab
