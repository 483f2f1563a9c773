#include "harness/command_line.h"

#include <algorithm>

#include <boost/program_options.hpp>
#include <charconv>
#include <limits>
#include <span>
#include <sstream>

#include "harness/alternation.h"
#include "harness/clients/client_kind.h"
#include "harness/measurement/cpu_usage.h"
#include "harness/output/json_writer.h"
#include "harness/output/point_record.h"
#include "harness/redis_benchmark.h"

namespace kvlab::harness {
namespace po = boost::program_options;
namespace {

// --loadgen's and --route's spellings, in LoadGenerator's order and none first.
constexpr std::string_view kLoadGenerators[] = {"kvlab-load", "redis-benchmark"};
constexpr std::string_view kRoutes[] = {"none", "slots"};
const std::string kThreadsAllowed =
    "a list like 1,2,4,8 of counts from 1 to " + std::to_string(kMaxThreads);

std::string Joined(std::span<const std::string_view> names) {
  std::string text;
  for (std::string_view name : names) text += (text.empty() ? "" : ", ") + std::string(name);
  return text;
}

// A default as the usage text states it.
std::string Seconds(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

po::options_description Describe() {
  po::options_description options("kvlab-load options");
  auto text = [] { return po::value<std::string>(); };
  // clang-format off
  options.add_options()
    ("target", text(), "server: tcp://HOST:PORT or unix:///PATH (required)")
    ("requests", text(), "--loadgen redis-benchmark: exactly this many requests per repetition, no calibration run (default: as many as last --duration)")
    ("loadgen", text(), "kvlab-load (its own clients) | redis-benchmark (run as a child per repetition, measured alike; dedicated, closed loop, get|set|ping) (default kvlab-load)")
    ("client", text(), "dedicated | pooled | shared (default dedicated)")
    ("threads", text(), "application threads, a sweep: 1,2,4,8 (default 1)")
    ("connections", text(), ("dedicated: total over threads (default 1 per thread); pooled: pool size (default " + std::to_string(InfoOf(ClientKind::kPooled).default_connections) + ")").c_str())
    ("pipeline", text(), "dedicated: requests in flight per connection (default 1)")
    ("refill", text(), "dedicated closed loop: steady (refill a slot as soon as its reply arrives) | burst (send the next pipeline once all are answered) (default steady)")
    ("command", text(), "get | set | incrby | ping | mix | lpush | mset:N | mget:N | multi-incr:N (default set)")
    ("ycsb", text(), "YCSB core workload instead of --command: load | A | B | C | D | E | F (same as --command ycsb:W); --keys is its recordcount, --value-size its field length (default 100), --key-dist zipf:THETA its zipfian, latest for D (default zipf:0.99) or uniform; --prefill loads the records first")
    ("ratio", text(), "SET:GET for --command mix (default 1:10)")
    ("keys", text(), ("key space size: keys are <prefix>0..N-1 (default " + std::to_string(WorkloadSpec{}.keys) + ")").c_str())
    ("key-prefix", text(), "key prefix (default key:)")
    ("key-dist", text(), "uniform | zipf:THETA | sequential (default uniform)")
    ("value-size", text(), "SET value bytes: N or MIN-MAX (default 64)")
    ("increment", text(), "INCRBY amount (default 7)")
    ("seed", text(), "random seed of the workload (default 1)")
    ("prefill", po::bool_switch(), "SET every key once before measuring (INCRBY: to 0)")
    ("value-shape", text(), "what --prefill stores per key: string (default) | hash:N | list:N | set:N | zset:N (N elements of --value-size bytes)")
    ("flush", po::bool_switch(), "FLUSHALL before each point")
    ("duration", text(), "seconds per repetition (default 10)")
    ("warmup", text(), "seconds of warm-up per point (default 2)")
    ("repeat", text(), "repetitions per point (default 3)")
    ("rate", text(), "open loop: total ops/s, latency from intended send times (default 0: closed loop)")
    ("arrival", text(), "open loop: uniform | poisson inter-arrival times (default uniform)")
    ("nodelay", text(), "on | off: TCP_NODELAY (default on)")
    ("io", text(), "pooled, shared: direct | event-loop (default direct)")
    ("route", text(), "none | slots: read the cluster's slot map (CLUSTER SLOTS) once, keep --connections per owner and send each request to its first key's owner, following -MOVED (default none)")
    ("loop-threads", text(), "--io event-loop: event-loop threads (default: usable cores)")
    ("io-flush", text(), "--io event-loop: command (a send per command) | batch (default command)")
    ("cpus", text(), "pin harness threads to these CPUs, e.g. 1,2-3")
    ("csv", text(), "CSV file: one row per point and repetition (the point record: see --schema)")
    ("label", po::value<std::vector<std::string>>()->composing(), "NAME=VALUE: a leading column of every CSV row, in the order given (repeatable; a label named like a measured column replaces it)")
    ("schema", po::bool_switch(), "print the measured columns of the CSV (name, kind, meaning) as JSON and exit")
    ("calibrate-wake-cost", po::bool_switch(), "measure what each sleep of our threads costs the --measured-cpus uncharged (three 1-second ping-pong windows), print it as JSON and exit; a run passes the figure to each kvlab-load as --wake-cost-us")
    ("kinds", po::bool_switch(), "print the client strategies, what applies to each, and the commands and ranges kvlab-load accepts as JSON and exit")
    ("measured-cpus", text(), "CPUs watched for interference: others' CPU time on them and steal, e.g. 0-3")
    ("server-pids", text(), "the server's processes on this machine (a server of several: every one): its CPU is read from /proc over their process trees (threads and children) instead of INFO cpu, and counts as ours: 12,34 (none: INFO cpu)")
    ("own-pids", text(), "processes whose CPU on the measured CPUs is ours, not others' (a link forwarder): 12,34")
    ("wake-cost-us", text(), "microseconds of the measured CPUs' time each sleep of our threads costs uncharged, subtracted from others' work (default: calibrated at start, as --calibrate-wake-cost, about 3 s; 0: none)")
    ("disturbed-above", text(), ("a window whose foreign or steal CPU exceeds this many cores is disturbed (default " + Seconds(kDefaultDisturbedAboveCores) + ")").c_str())
    ("json", text(), "JSON file: config, machine, server INFO, histograms")
    ("password", text(), "AUTH with this password on every connection right after it connects (redis-benchmark: -a); a refusal fails the run (status 1); never written to --json or --csv")
    ("user", text(), "AUTH as this ACL user (needs --password; default: the default user)")
    ("connect-timeout", text(), ("seconds (default " + Seconds(kDefaultConnectTimeoutS) + ")").c_str())
    ("timeout", text(), ("seconds to wait for a reply before failing (default " + Seconds(kDefaultReplyTimeoutS) + ")").c_str())
    ("quiet", po::bool_switch(), "no live line per second")
    ("start-at", text(), "begin the run (warm-up included) at this CLOCK_REALTIME instant, ns since the epoch; connects first (several hosts start together)")
    ("alternate-with", text(), "measure two sides alternately (harness/alternation.h): side B is these options over side A's, e.g. \"--target tcp://127.0.0.1:7001\" or \"--client pooled\" (values without spaces); --duration is then the measured time of both sides, --json gets every slice")
    ("slice", text(), "--alternate-with: seconds per slice, ramp included (default 0.1)")
    ("ramp", text(), "--alternate-with: seconds dropped at the start of every slice (default 0.01)")
    ("help", po::bool_switch(), "show this help");
  // clang-format on
  return options;
}

template <typename Number>
Status ParseNumberOption(const po::variables_map& values, const char* name, Number low, Number high,
                         Number* out) {
  if (!values.count(name)) return Status::Ok();
  const std::string& text = values[name].as<std::string>();
  Number parsed{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (error != std::errc() || end != text.data() + text.size() || parsed < low || parsed > high) {
    std::ostringstream message;
    message << "bad --" << name << " '" << text << "' (allowed: a number from " << low << " to "
            << high << ")";
    return Status::InvalidArgument(message.str());
  }
  *out = parsed;
  return Status::Ok();
}

// A comma-separated list of integers in [low, high]; `what` says what the
// option allows when the text is bad.
template <typename Integer>
Status ParseIntegerList(const std::string& text, const char* option, Integer low, Integer high,
                        const char* what, std::vector<Integer>* out) {
  std::vector<Integer> values;
  std::string_view rest(text);
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    Integer value = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || error != std::errc() || end != item.data() + item.size() || value < low ||
        value > high) {
      return Status::InvalidArgument(std::string("bad --") + option + " '" + text +
                                     "' (allowed: " + what + ")");
    }
    values.push_back(value);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  *out = std::move(values);
  return Status::Ok();
}

// Splits `text` at whitespace.
std::vector<std::string> Words(const std::string& text) {
  std::istringstream stream(text);
  std::vector<std::string> words;
  for (std::string word; stream >> word;) words.push_back(word);
  return words;
}

// The option an argument names ("--name" or "--name=value"), or "" for a value.
std::string OptionName(const std::string& argument) {
  if (argument.rfind("--", 0) != 0) return "";
  return argument.substr(
      2, argument.find('=') == std::string::npos ? std::string::npos : argument.find('=') - 2);
}

// Side B's argv: side A's, without --alternate-with and without every option
// that `overrides` sets, then `overrides`.
Status SideBArguments(const std::vector<std::string>& args, const std::string& overrides,
                      std::vector<std::string>* out) {
  const po::options_description options = Describe();
  const std::vector<std::string> words = Words(overrides);
  std::vector<std::string> replaced = {"alternate-with", "slice", "ramp"};
  for (const std::string& word : words) {
    const std::string name = OptionName(word);
    if (name == "alternate-with" || name == "slice" || name == "ramp") {
      return Status::InvalidArgument("--alternate-with cannot set --" + name);
    }
    if (!name.empty()) replaced.push_back(name);
    // Credentials belong to a server: side B of another --target has its own
    // (or none), never side A's.
    if (name == "target") replaced.insert(replaced.end(), {"password", "user"});
  }
  out->assign(args.begin(), args.begin() + (args.empty() ? 0 : 1));
  for (size_t i = args.empty() ? 0 : 1; i < args.size(); ++i) {
    const std::string name = OptionName(args[i]);
    const bool drop =
        !name.empty() && std::find(replaced.begin(), replaced.end(), name) != replaced.end();
    const po::option_description* known =
        name.empty() ? nullptr : options.find_nothrow(name, false);
    const bool takes_value = known != nullptr && known->semantic()->max_tokens() > 0 &&
                             args[i].find('=') == std::string::npos;
    if (!drop) out->push_back(args[i]);
    if (takes_value && i + 1 < args.size()) {
      ++i;
      if (!drop) out->push_back(args[i]);
    }
  }
  out->insert(out->end(), words.begin(), words.end());
  return Status::Ok();
}

}  // namespace

std::vector<std::string> RedactedArguments(const std::vector<std::string>& args) {
  std::vector<std::string> redacted;
  bool value_next = false;
  for (const std::string& arg : args) {
    if (value_next) {
      redacted.push_back(kRedacted);
      value_next = false;
      continue;
    }
    std::vector<std::string> words = Words(arg);
    if (words.size() > 1 && arg.find("--password") != std::string::npos) {  // --alternate-with's
      std::string joined;
      for (const std::string& word : RedactedArguments(words))
        joined += (joined.empty() ? "" : " ") + word;
      redacted.push_back(joined);
      continue;
    }
    if (arg == "--password") {
      value_next = true;
    } else if (arg.rfind("--password=", 0) == 0) {
      redacted.push_back("--password=" + std::string(kRedacted));
      continue;
    }
    redacted.push_back(arg);
  }
  return redacted;
}

std::string UsageText() {
  std::ostringstream text;
  text << "usage: kvlab-load --target tcp://HOST:PORT|unix:///PATH [options]\n\n"
       << Describe()
       << "\nexit status: 0 ok, 1 run failed (completed repetitions are kept), 2 usage error, "
          "130 interrupted\n";
  return text.str();
}

namespace {

Status ParseAlternation(const std::vector<std::string>& args, const po::variables_map& values,
                        CommandLineOptions* options) {
  if (options->loadgen != LoadGenerator::kKvlabLoad) {
    return Status::InvalidArgument("--alternate-with needs --loadgen kvlab-load");
  }
  if (values.count("repeat") || values.count("csv")) {
    return Status::InvalidArgument(
        "--alternate-with measures one alternation into --json; "
        "--repeat and --csv do not apply");
  }
  std::vector<std::string> side_b;
  Status status = SideBArguments(args, values["alternate-with"].as<std::string>(), &side_b);
  CommandLineOptions b;
  if (status.ok()) status = ParseCommandLine(side_b, &b);
  if (!status.ok()) return status.WithContext("--alternate-with");
  AlternationConfig& alternation = options->alternation;
  alternation.a = options->config;
  alternation.b = b.config;
  alternation.duration_s = options->config.duration_s;
  alternation.warmup_s = values.count("warmup") ? options->config.warmup_s : 1.0;
  status = ParseNumberOption(values, "slice", 0.001, 60.0, &alternation.slice_s);
  if (status.ok()) status = ParseNumberOption(values, "ramp", 0.0, 60.0, &alternation.ramp_s);
  if (status.ok()) status = ValidateAlternation(alternation);
  options->alternate = status.ok();
  return status;
}

}  // namespace

namespace {

// Boost's parse of argv (after the program): unknown options and stray
// words are refused.
Status StoreArguments(const std::vector<std::string>& args, po::variables_map* values) {
  try {
    std::vector<std::string> rest(args.begin() + (args.empty() ? 0 : 1), args.end());
    const po::positional_options_description no_positionals;
    po::store(po::command_line_parser(rest).options(Describe()).positional(no_positionals).run(),
              *values);
    po::notify(*values);
  } catch (const po::error& error) {
    return Status::InvalidArgument(error.what());
  }
  return Status::Ok();
}

// YCSB's own defaults (fieldlength=100, requestdistribution=zipfian), which
// the options that follow --ycsb may override.
void UseYcsbDefaults(WorkloadSpec* workload) {
  workload->value_size_min = workload->value_size_max = kYcsbFieldLength;
  workload->distribution = KeyDistribution::kZipf;
  workload->zipf_theta = kYcsbZipfianConstant;
}

std::string TextOf(const po::variables_map& values, const char* name) {
  return values[name].as<std::string>();
}

// kvlab-load's options: the target, the client kind and its connections.
Status ParseConnectionOptions(const po::variables_map& values, CommandLineOptions& options) {
  LoadConfig& config = options.config;
  Status status;
  status = ParseTarget(TextOf(values, "target"), &config.target);
  if (status.ok() && values.count("client"))
    status = ParseClientKind(TextOf(values, "client"), &config.client);
  if (status.ok() && values.count("threads"))
    status = ParseIntegerList(TextOf(values, "threads"), "threads", 1, kMaxThreads,
                              kThreadsAllowed.c_str(), &config.threads);
  if (status.ok())
    status = ParseNumberOption(values, "connections", 1, kMaxConnections, &config.connections);
  if (status.ok())
    status = ParseNumberOption(values, "pipeline", 1, kMaxPipeline, &config.pipeline);
  return status;
}

// kvlab-load's options: what each operation sends and to which keys.
Status ParseWorkloadOptions(const po::variables_map& values, CommandLineOptions& options) {
  LoadConfig& config = options.config;
  Status status;
  if (status.ok() && values.count("command")) {
    status = ParseCommand(TextOf(values, "command"), &config.workload);
  }
  if (status.ok() && values.count("ycsb")) {
    status = values.count("command")
                 ? Status::InvalidArgument(
                       "--ycsb and --command exclude each other (--ycsb W is --command ycsb:W)")
                 : ParseCommand("ycsb:" + TextOf(values, "ycsb"), &config.workload);
  }
  if (config.workload.command == CommandKind::kYcsb) UseYcsbDefaults(&config.workload);
  if (status.ok() && values.count("ratio"))
    status = ParseRatio(TextOf(values, "ratio"), &config.workload);
  if (status.ok() && values.count("ratio") && config.workload.command != CommandKind::kMix) {
    status = Status::InvalidArgument("--ratio applies to --command mix only");
  }
  if (status.ok()) {
    status =
        ParseNumberOption<uint64_t>(values, "keys", 1, uint64_t{1} << 40, &config.workload.keys);
  }
  if (status.ok() && values.count("key-prefix"))
    config.workload.key_prefix = TextOf(values, "key-prefix");
  if (status.ok() && values.count("key-dist")) {
    status = ParseKeyDistribution(TextOf(values, "key-dist"), &config.workload);
  }
  if (status.ok() && values.count("value-size")) {
    status = ParseValueSize(TextOf(values, "value-size"), &config.workload);
  }
  if (status.ok()) {
    status = ParseNumberOption<int64_t>(values, "increment", -(int64_t{1} << 40), int64_t{1} << 40,
                                        &config.workload.increment);
  }
  if (status.ok())
    status = ParseNumberOption<uint64_t>(values, "seed", 0, UINT64_MAX, &config.workload.seed);
  if (status.ok() && values.count("value-shape")) {
    status = ParseValueShape(TextOf(values, "value-shape"), &config.workload);
  }
  config.prefill = values["prefill"].as<bool>();
  config.flush = values["flush"].as<bool>();
  return status;
}

// kvlab-load's options: how long, how often, at which rate.
Status ParseTimingOptions(const po::variables_map& values, CommandLineOptions& options) {
  LoadConfig& config = options.config;
  Status status;
  if (status.ok())
    status = ParseNumberOption(values, "duration", 0.001, 86400.0, &config.duration_s);
  if (status.ok()) status = ParseNumberOption(values, "warmup", 0.0, 86400.0, &config.warmup_s);
  if (status.ok())
    status = ParseNumberOption(values, "repeat", 1, kMaxRepetitions, &config.repetitions);
  if (status.ok()) status = ParseNumberOption(values, "rate", 0.0, 1e9, &config.rate);
  if (status.ok() && values.count("arrival"))
    status = ParseArrivalKind(TextOf(values, "arrival"), &config.arrival);
  if (status.ok() && values.count("arrival") && config.rate <= 0) {
    status = Status::InvalidArgument("--arrival applies to open loop only (set --rate)");
  }
  return status;
}

// kvlab-load's options: the I/O model and the one check of what applies to the client kind.
Status ParseIoOptions(const po::variables_map& values, CommandLineOptions& options) {
  LoadConfig& config = options.config;
  Status status;
  if (status.ok() && values.count("refill"))
    status = ParseRefillMode(TextOf(values, "refill"), &config.refill);
  if (status.ok() && values.count("io"))
    status = ParseIoModel(TextOf(values, "io"), &config.io.model);
  if (status.ok())
    status = ParseNumberOption(values, "loop-threads", 1, kMaxLoopThreads, &config.io.loop_threads);
  if (status.ok() && values.count("io-flush"))
    status = ParseFlushMode(TextOf(values, "io-flush"), &config.io.flush);
  if (status.ok() && (values.count("loop-threads") || values.count("io-flush")) &&
      config.io.model != IoModel::kEventLoop) {
    status = Status::InvalidArgument("--loop-threads and --io-flush apply to --io event-loop only");
  }
  if (status.ok()) {
    ClientOptionUse use = ClientOptionUseOf(config);
    use.refill = values.count("refill") > 0;  // --refill steady is refused too
    status = CheckClientOptions(use);
  }
  return status;
}

// kvlab-load's options: TCP_NODELAY and --route slots with what it cannot send.
Status ParseRoutingOptions(const po::variables_map& values, CommandLineOptions& options) {
  LoadConfig& config = options.config;
  Status status;
  if (status.ok() && values.count("nodelay")) {
    const std::string nodelay = TextOf(values, "nodelay");
    if (nodelay == "on")
      config.tcp_nodelay = true;
    else if (nodelay == "off")
      config.tcp_nodelay = false;
    else
      status = Status::InvalidArgument("bad --nodelay '" + nodelay + "' (allowed: on, off)");
  }
  if (status.ok() && values.count("route")) {
    const std::string route = TextOf(values, "route");
    if (route == kRoutes[1])
      config.route_slots = true;
    else if (route != kRoutes[0])
      status =
          Status::InvalidArgument("bad --route '" + route + "' (allowed: " + Joined(kRoutes) + ")");
  }
  if (status.ok() && config.route_slots && NeedsOwnConnection(config.workload.command)) {
    status = Status::InvalidArgument("--route slots cannot send --command " +
                                     CommandLabel(config.workload) +
                                     ": a transaction's MULTI has no key to route by");
  }
  if (status.ok() && config.route_slots && config.workload.command == CommandKind::kYcsb) {
    // Its records and their one index key are loaded through one control connection.
    status = Status::InvalidArgument("--route slots does not apply to YCSB's workloads");
  }
  if (status.ok() && config.route_slots &&
      config.workload.shape.kind != ValueShape::Kind::kString) {
    // Containers are filled through one control connection.
    status = Status::InvalidArgument("--route slots does not apply to --value-shape " +
                                     ValueShapeName(config.workload.shape));
  }
  if (status.ok() && config.route_slots && config.target.transport != Transport::kTcp) {
    status = Status::InvalidArgument("--route slots needs a tcp:// target");
  }
  return status;
}

// kvlab-load's options: CPUs, timeouts, the start instant, what is watched, where results go.
Status ParseWatchAndOutputOptions(const po::variables_map& values, CommandLineOptions& options) {
  LoadConfig& config = options.config;
  Status status;
  if (status.ok() && values.count("cpus"))
    status = ParseCpuList(TextOf(values, "cpus"), &config.cpus);
  if (status.ok()) {
    status = ParseNumberOption(values, "connect-timeout", 0.001, 3600.0, &config.connect_timeout_s);
  }
  if (status.ok())
    status = ParseNumberOption(values, "timeout", 0.001, 3600.0, &config.reply_timeout_s);
  if (status.ok() && values.count("password")) config.password = TextOf(values, "password");
  if (status.ok() && values.count("user")) config.user = TextOf(values, "user");
  if (status.ok() && values.count("password") && config.password.empty()) {
    status = Status::InvalidArgument("--password is empty (leave it out for a server without one)");
  }
  if (status.ok() && !config.user.empty() && config.password.empty()) {
    status = Status::InvalidArgument("--user needs --password (AUTH user password)");
  }
  if (status.ok()) {
    status = ParseNumberOption<uint64_t>(values, "start-at", 1, UINT64_MAX, &options.start_at_ns);
  }
  if (status.ok() && values.count("measured-cpus")) {
    status = ParseCpuList(TextOf(values, "measured-cpus"), &config.watch.measured_cpus);
  }
  // "none": no processes (side B of an alternation whose side A names some).
  if (status.ok() && values.count("server-pids") && TextOf(values, "server-pids") != "none") {
    status = ParseIntegerList<pid_t>(TextOf(values, "server-pids"), "server-pids", 1,
                                     std::numeric_limits<pid_t>::max(), "process ids like 12,34",
                                     &config.server_pids);
  }
  if (status.ok()) config.watch.trees = !config.server_pids.empty();
  if (status.ok() && values.count("own-pids"))
    status = ParseIntegerList<pid_t>(TextOf(values, "own-pids"), "own-pids", 1,
                                     std::numeric_limits<pid_t>::max(), "process ids like 12,34",
                                     &config.watch.own_pids);
  if (status.ok()) {
    status = ParseNumberOption(values, "disturbed-above", 0.0, 4096.0,
                               &config.watch.disturbed_above_cores);
  }
  if (status.ok() && values.count("wake-cost-us")) {
    double micros = 0;
    status = ParseNumberOption(values, "wake-cost-us", 0.0, 1e6, &micros);
    config.watch.wake_cost_seconds = micros / 1e6;
  }
  if (values.count("label")) {
    for (const std::string& text : values["label"].as<std::vector<std::string>>()) {
      Label label;
      if (status.ok()) status = ParseLabel(text, &label);
      if (status.ok()) options.labels.push_back(std::move(label));
    }
    if (status.ok()) status = ValidateLabels(options.labels);
  }
  if (values.count("csv")) options.csv_path = TextOf(values, "csv");
  if (values.count("json")) options.json_path = TextOf(values, "json");
  options.quiet = values["quiet"].as<bool>();
  return status;
}

// kvlab-load's options: who generates the load.
Status ParseLoadGeneratorOptions(const po::variables_map& values, CommandLineOptions& options) {
  Status status;
  if (status.ok() && values.count("loadgen")) {
    const std::string loadgen = TextOf(values, "loadgen");
    if (loadgen == kLoadGenerators[1])
      options.loadgen = LoadGenerator::kRedisBenchmark;
    else if (loadgen != kLoadGenerators[0])
      status = Status::InvalidArgument("bad --loadgen '" + loadgen +
                                       "' (allowed: " + Joined(kLoadGenerators) + ")");
  }
  if (status.ok())
    status =
        ParseNumberOption<uint64_t>(values, "requests", 1, uint64_t{1} << 40, &options.requests);
  if (status.ok() && values.count("requests") &&
      options.loadgen != LoadGenerator::kRedisBenchmark) {
    status = Status::InvalidArgument("--requests applies to --loadgen redis-benchmark only");
  }
  return status;
}

}  // namespace

Status ParseCommandLine(const std::vector<std::string>& args, CommandLineOptions* out) {
  po::variables_map values;
  Status stored = StoreArguments(args, &values);
  if (!stored.ok()) return stored;
  CommandLineOptions options;
  options.help = values["help"].as<bool>();
  options.schema = values["schema"].as<bool>();
  options.kinds = values["kinds"].as<bool>();
  options.calibrate_wake_cost = values["calibrate-wake-cost"].as<bool>();
  if (options.calibrate_wake_cost) {
    Status status;
    if (values.count("measured-cpus")) {
      status = ParseCpuList(TextOf(values, "measured-cpus"), &options.config.watch.measured_cpus);
    }
    if (status.ok() && options.config.watch.measured_cpus.empty()) {
      status = Status::InvalidArgument("--calibrate-wake-cost needs --measured-cpus");
    }
    if (!status.ok()) return status;
    *out = options;
    return Status::Ok();
  }
  if (options.help || options.schema || options.kinds) {
    *out = options;
    return Status::Ok();
  }
  if (!values.count("target")) {
    return Status::InvalidArgument("--target is required (tcp://HOST:PORT or unix:///PATH)");
  }
  Status status;
  for (auto step :
       {ParseConnectionOptions, ParseWorkloadOptions, ParseTimingOptions, ParseIoOptions,
        ParseRoutingOptions, ParseWatchAndOutputOptions, ParseLoadGeneratorOptions}) {
    status = step(values, options);
    if (!status.ok()) return status;
  }
  if (status.ok() && values.count("alternate-with")) {
    status = ParseAlternation(args, values, &options);
  } else if (status.ok() && (values.count("slice") || values.count("ramp"))) {
    status = Status::InvalidArgument("--slice and --ramp apply to --alternate-with only");
  }
  if (status.ok() && !options.alternate) {
    status = options.loadgen == LoadGenerator::kRedisBenchmark
                 ? ValidateRedisBenchmarkConfig(options.config)
                 : ValidateConfig(options.config);
  }
  if (!status.ok()) return status;
  *out = std::move(options);
  return Status::Ok();
}

namespace {

void ClientKindJson(const ClientKindInfo& info, JsonWriter& json) {
  json.BeginObject();
  json.Key("name").String(info.name);
  json.Key("summary").String(info.summary);
  json.Key("default_connections").Integer(info.default_connections);
  json.Key("connections_per_thread").Bool(info.connections_per_thread);
  json.Key("max_connections").Integer(info.max_connections);
  json.Key("pipelines").Bool(info.pipelines);
  json.Key("event_loop").Bool(info.event_loop);
  json.Key("transactions").Bool(info.transactions);
  json.Key("redis_benchmark").Bool(info.redis_benchmark);
  json.Key("options").BeginArray();
  if (info.pipelines) json.String("pipeline").String("refill");
  if (info.event_loop) json.String("io").String("loop-threads").String("io-flush");
  json.EndArray();
  json.EndObject();
}

template <typename Names>
void StringArray(JsonWriter& json, std::string_view key, const Names& names) {
  json.Key(key).BeginArray();
  for (const auto& name : names) json.String(name);
  json.EndArray();
}

void CommandsJson(JsonWriter& json) {
  std::vector<std::string_view> single, multi_key, own_connection, ycsb;
  for (CommandKind kind : {CommandKind::kGet, CommandKind::kSet, CommandKind::kIncrby,
                           CommandKind::kPing, CommandKind::kMix, CommandKind::kLpush}) {
    single.push_back(CommandName(kind));
  }
  for (CommandKind kind : {CommandKind::kMset, CommandKind::kMget, CommandKind::kMultiIncr}) {
    multi_key.push_back(CommandName(kind));
    if (NeedsOwnConnection(kind)) own_connection.push_back(CommandName(kind));
  }
  for (YcsbWorkload workload :
       {YcsbWorkload::kLoad, YcsbWorkload::kA, YcsbWorkload::kB, YcsbWorkload::kC, YcsbWorkload::kD,
        YcsbWorkload::kE, YcsbWorkload::kF}) {
    ycsb.push_back(YcsbWorkloadName(workload));
  }
  json.Key("commands").BeginObject();
  StringArray(json, "single", single);
  StringArray(json, "multi_key", multi_key);
  json.Key("max_keys_per_command").Integer(kMaxKeysPerCommand);
  StringArray(json, "own_connection", own_connection);
  StringArray(json, "ycsb", ycsb);
  StringArray(json, "redis_benchmark_tests", kRedisBenchmarkTests);
  json.EndObject();
}

void LimitsJson(JsonWriter& json) {
  json.Key("limits").BeginObject();
  for (const auto& [name, max] : {std::pair<const char*, int>{"threads", kMaxThreads},
                                  {"connections", kMaxConnections},
                                  {"pipeline", kMaxPipeline},
                                  {"repeat", kMaxRepetitions},
                                  {"loop_threads", kMaxLoopThreads}}) {
    json.Key(name).BeginObject().Key("min").Integer(1).Key("max").Integer(max).EndObject();
  }
  json.EndObject();
}

}  // namespace

std::string KindsJson() {
  JsonWriter json;
  json.BeginObject();
  json.Key("format").String("kvlab-load-kinds/1");
  json.Key("clients").BeginArray();
  for (const ClientKindInfo& info : AllClientKinds()) ClientKindJson(info, json);
  json.EndArray();
  json.Key("default_client").String(ClientKindName(LoadConfig{}.client));
  json.Key("choices").BeginObject();
  StringArray(json, "loadgen", kLoadGenerators);
  StringArray(json, "io",
              std::vector<std::string_view>{IoModelName(IoModel::kDirect),
                                            IoModelName(IoModel::kEventLoop)});
  StringArray(json, "io_flush",
              std::vector<std::string_view>{FlushModeName(FlushMode::kPerCommand),
                                            FlushModeName(FlushMode::kBatch)});
  StringArray(json, "refill",
              std::vector<std::string_view>{RefillModeName(RefillMode::kSteady),
                                            RefillModeName(RefillMode::kBurst)});
  StringArray(json, "route", kRoutes);
  StringArray(json, "arrival",
              std::vector<std::string_view>{ArrivalKindName(ArrivalKind::kUniform),
                                            ArrivalKindName(ArrivalKind::kPoisson)});
  json.EndObject();
  CommandsJson(json);
  LimitsJson(json);
  json.EndObject();
  return json.text() + "\n";
}

}  // namespace kvlab::harness
