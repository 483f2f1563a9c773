// kvlab-link's command line: what each option becomes, and what is refused.
#include "link/link_options.h"

#include <gtest/gtest.h>

namespace kvlab::link {
namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;

TEST(LinkOptions, RoundTripIsSplitAcrossBothDirections) {
  const LinkOptionsResult parsed = ParseLinkOptions({"--rtt-us", "250"});
  ASSERT_EQ(parsed.error, "");
  EXPECT_EQ(parsed.options.forwarder.shape.one_way_delay, nanoseconds{125000});
  EXPECT_EQ(parsed.options.forwarder.shape.rate_bits_per_second, 0.0);
  EXPECT_EQ(parsed.options.forwarder.wait_mode, WaitMode::kHybrid);
  EXPECT_EQ(parsed.options.realtime_priority, 0);
  EXPECT_EQ(parsed.options.client.namespace_name, "kvlab-client");
  EXPECT_EQ(parsed.options.server.namespace_name, "kvlab-server");
}

TEST(LinkOptions, ShapeAndWaitOptions) {
  const LinkOptionsResult parsed =
      ParseLinkOptions({"--rtt-us", "1000", "--rate-mbit", "100", "--queue-packets", "64", "--wait",
                        "sleep", "--spin-us", "7", "--server-tun", "tunS", "--rt-priority", "3"});
  ASSERT_EQ(parsed.error, "");
  const ForwarderConfig& config = parsed.options.forwarder;
  EXPECT_EQ(config.shape.one_way_delay, microseconds{500});
  EXPECT_EQ(config.shape.rate_bits_per_second, 100e6);
  EXPECT_EQ(config.shape.queue_limit_packets, 64u);
  EXPECT_EQ(config.wait_mode, WaitMode::kSleep);
  EXPECT_EQ(config.spin_window, microseconds{7});
  EXPECT_EQ(parsed.options.realtime_priority, 3);
  EXPECT_EQ(parsed.options.server.device_name, "tunS");
}

TEST(LinkOptions, RefusesBadValues) {
  EXPECT_NE(ParseLinkOptions({}).error, "") << "--rtt-us is required";
  EXPECT_NE(ParseLinkOptions({"--rtt-us", "-1"}).error, "");
  EXPECT_NE(ParseLinkOptions({"--rtt-us", "abc"}).error, "");
  EXPECT_NE(ParseLinkOptions({"--rtt-us", "100", "--queue-packets", "0"}).error, "");
  EXPECT_NE(ParseLinkOptions({"--rtt-us", "100", "--rate-mbit", "-5"}).error, "");
  EXPECT_NE(ParseLinkOptions({"--rtt-us", "100", "--wait", "sometimes"}).error, "");
  EXPECT_NE(ParseLinkOptions({"--rtt-us", "100", "--bogus"}).error, "");
  EXPECT_NE(ParseLinkOptions({"--rtt-us", "100", "--rt-priority", "100"}).error, "");
  EXPECT_NE(ParseLinkOptions({"--rtt-us", "100", "--wait", "busy", "--rt-priority", "1"}).error, "")
      << "a real-time busy poller would monopolise a core";
  EXPECT_EQ(ParseLinkOptions({"--rtt-us", "100", "--wait", "busy"}).error, "");
}

TEST(LinkOptions, HelpIsNotAnError) {
  const LinkOptionsResult parsed = ParseLinkOptions({"--help"});
  EXPECT_EQ(parsed.error, "");
  EXPECT_NE(parsed.help.find("--rtt-us"), std::string::npos);
}

}  // namespace
}  // namespace kvlab::link
