#include "link/link_options.h"

#include <boost/program_options.hpp>

#include <cmath>
#include <sstream>

namespace kvlab::link {

namespace po = boost::program_options;

LinkOptionsResult ParseLinkOptions(const std::vector<std::string>& arguments) {
  LinkOptionsResult result;
  LinkOptions& options = result.options;
  double rtt_us = -1;
  double rate_mbit = 0;
  long long queue_packets = 1000;
  std::string wait = "hybrid";
  double spin_us = 20;

  po::options_description description(
      "kvlab-link: forwards IP packets between two TUN devices in two network namespaces,\n"
      "delaying each by rtt/2 per direction (the emulated remote link). Usually started by\n"
      "scripts/remote-link. Options");
  description.add_options()("help", "show this help")(
      "rtt-us", po::value(&rtt_us)->required(), "round-trip time to add, µs (rtt/2 each way)")(
      "rate-mbit", po::value(&rate_mbit)->default_value(0),
      "link rate per direction, Mbit/s (0: unlimited)")(
      "queue-packets", po::value(&queue_packets)->default_value(1000),
      "packets held per direction before drop tail")(
      "wait", po::value(&wait)->default_value("hybrid"),
      "hybrid: sleep until due - spin window, then poll; sleep: never poll; busy: always poll")(
      "spin-us", po::value(&spin_us)->default_value(20), "hybrid mode's polling window, µs")(
      "rt-priority", po::value(&options.realtime_priority)->default_value(0),
      "SCHED_FIFO priority 1..99 (0: normal scheduling); not with --wait busy")(
      "client-netns", po::value(&options.client.namespace_name)->default_value("kvlab-client"),
      "namespace (under /var/run/netns) holding the client-side TUN device")(
      "client-tun", po::value(&options.client.device_name)->default_value("kvtun0"),
      "client-side TUN device (persistent, made by `ip tuntap add mode tun`)")(
      "server-netns", po::value(&options.server.namespace_name)->default_value("kvlab-server"),
      "namespace holding the server-side TUN device")(
      "server-tun", po::value(&options.server.device_name)->default_value("kvtun0"),
      "server-side TUN device")("pid-file", po::value(&options.pid_file),
                                "write the pid here once both TUN ends are attached");

  try {
    po::variables_map values;
    po::store(po::command_line_parser(arguments).options(description).run(), values);
    if (values.count("help")) {
      std::ostringstream text;
      text << description;
      result.help = text.str();
      return result;
    }
    po::notify(values);
  } catch (const po::error& e) {
    result.error = e.what();
    return result;
  }

  if (!(rtt_us >= 0) || rtt_us > 10e6) {
    result.error = "--rtt-us must be between 0 and 10000000";
  } else if (!(rate_mbit >= 0) || !std::isfinite(rate_mbit)) {
    result.error = "--rate-mbit must be >= 0";
  } else if (queue_packets < 1) {
    result.error = "--queue-packets must be >= 1";
  } else if (!(spin_us >= 0) || spin_us > 1e6) {
    result.error = "--spin-us must be between 0 and 1000000";
  } else if (wait != "hybrid" && wait != "sleep" && wait != "busy") {
    result.error = "--wait must be hybrid, sleep or busy, not '" + wait + "'";
  } else if (options.realtime_priority < 0 || options.realtime_priority > 99) {
    result.error = "--rt-priority must be between 0 and 99";
  } else if (wait == "busy" && options.realtime_priority > 0) {
    // A real-time task that never sleeps would take a whole core from the
    // server and client (the kernel only throttles it at 95%).
    result.error = "--wait busy cannot run with --rt-priority (it would monopolise a core)";
  }
  if (!result.error.empty()) return result;

  ForwarderConfig& forwarder = options.forwarder;
  forwarder.shape.one_way_delay = std::chrono::nanoseconds{std::llround(rtt_us * 1000.0 / 2.0)};
  forwarder.shape.rate_bits_per_second = rate_mbit * 1e6;
  forwarder.shape.queue_limit_packets = static_cast<std::size_t>(queue_packets);
  forwarder.wait_mode = wait == "busy"    ? WaitMode::kBusy
                        : wait == "sleep" ? WaitMode::kSleep
                                          : WaitMode::kHybrid;
  forwarder.spin_window = std::chrono::nanoseconds{std::llround(spin_us * 1000.0)};
  return result;
}

}  // namespace kvlab::link
