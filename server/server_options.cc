#include "server/server_options.h"

#include <charconv>
#include <limits>
#include <sstream>

#include <boost/program_options.hpp>

#include "base/ascii_case.h"
#include "engines/engine_kind.h"
#include "server/version.h"

namespace kvlab {
namespace {

namespace po = boost::program_options;

// "single|sharded|concurrent|striped", from engine_kind.h's table.
std::string EngineKindChoices() {
  std::string choices;
  for (const std::string& kind : EngineKinds()) choices += (choices.empty() ? "" : "|") + kind;
  return choices;
}

std::optional<uint64_t> ParseUnsigned(std::string_view text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::string Usage(const po::options_description& visible) {
  std::ostringstream usage;
  usage << "Usage: kvlab-server [options]\n\n"
        << "A RESP (Redis protocol) server whose keyspace engine is chosen at start.\n\n"
        << visible;
  return usage.str();
}

// Fills `out`, or says which option is bad and what it allows.
Status Validate(const po::variables_map& vm, ServerSettings& out) {
  const std::string kind = vm["engine"].as<std::string>();
  if (FindEngineKind(kind) == nullptr) {
    return Status::InvalidArgument("--engine '" + kind + "' is not one of " +
                                   EngineKindChoices());
  }
  out.engine.kind = kind;

  auto count = [&](const char* name, uint64_t min, uint64_t max, uint64_t& value) {
    const std::string text = vm[name].as<std::string>();
    auto parsed = ParseUnsigned(text);
    if (!parsed || *parsed < min || *parsed > max) {
      return Status::InvalidArgument(std::string("--") + name + " '" + text +
                                     "' must be an integer in [" + std::to_string(min) + ", " +
                                     std::to_string(max) + "]");
    }
    value = *parsed;
    return Status::Ok();
  };
  auto bytes = [&](const char* name, uint64_t& value) {
    const std::string text = vm[name].as<std::string>();
    auto parsed = ParseMemorySize(text);
    if (!parsed) {
      return Status::InvalidArgument(std::string("--") + name + " '" + text +
                                     "' must be a byte count such as 1048576, 100mb or 1gb");
    }
    value = *parsed;
    return Status::Ok();
  };

  uint64_t shards = HardwareThreads(), stripes = kDefaultStripes, io_threads = HardwareThreads();
  uint64_t port = 0;
  for (const Status& parsed :
       {vm.count("shards") ? count("shards", 1, kMaxShards, shards) : Status::Ok(),
        vm.count("stripes") ? count("stripes", 1, kMaxStripes, stripes) : Status::Ok(),
        vm.count("io-threads") ? count("io-threads", 1, 1024, io_threads) : Status::Ok(),
        count("port", 0, 65535, port),
        count("maxclients", 1, 1'000'000, out.max_clients),
        bytes("maxmemory", out.engine.max_memory_bytes),
        bytes("client-output-buffer-limit", out.client_output_buffer_limit),
        bytes("client-query-buffer-limit", out.client_query_buffer_limit)}) {
    if (!parsed.ok()) return parsed;
  }
  if (out.client_query_buffer_limit == 0) {
    return Status::InvalidArgument("--client-query-buffer-limit must be > 0");
  }
  out.engine.shards = static_cast<unsigned>(shards);
  out.engine.stripes = static_cast<unsigned>(stripes);
  out.port = static_cast<uint16_t>(port);

  const std::string hop = vm["hop"].as<std::string>();
  if (hop == "command") {
    out.engine.hop = HopMode::kCommand;
  } else if (hop == "batch") {
    out.engine.hop = HopMode::kBatch;
  } else {
    return Status::InvalidArgument("--hop '" + hop + "' is not one of command|batch");
  }

  const std::string multikey = vm["multikey"].as<std::string>();
  if (multikey == "atomic") {
    out.engine.multikey = MultiKey::kAtomic;
  } else if (multikey == "split") {
    out.engine.multikey = MultiKey::kSplit;
  } else {
    return Status::InvalidArgument("--multikey '" + multikey + "' is not one of atomic|split");
  }

  const std::string protected_mode = AsciiLowercase(vm["protected-mode"].as<std::string>());
  if (protected_mode == "yes") {
    out.protected_mode = true;
  } else if (protected_mode == "no") {
    out.protected_mode = false;
  } else {
    return Status::InvalidArgument("--protected-mode '" + protected_mode +
                                   "' is not one of yes|no");
  }

  out.bind = vm["bind"].as<std::string>();
  if (out.bind.empty()) {
    return Status::InvalidArgument("--bind needs an address such as 127.0.0.1 or 0.0.0.0");
  }
  if (vm.count("unixsocket")) out.unix_socket = vm["unixsocket"].as<std::string>();
  if (vm.count("requirepass")) out.requirepass = vm["requirepass"].as<std::string>();
  if (out.port == 0 && out.unix_socket.empty()) {
    return Status::InvalidArgument("--port 0 disables TCP, so --unixsocket PATH is required");
  }
  // A single-threaded engine (the Redis model) needs one thread to run everything.
  out.io_threads = TraitsOf(out.engine).single_threaded ? 1u : static_cast<unsigned>(io_threads);
  const EngineKind& engine_kind = *FindEngineKind(kind);
  // Its shards are the I/O threads, one each: --shards does not apply.
  if (engine_kind.thread_per_core) out.engine.shards = out.io_threads;
  if (vm.count("shard-ports")) {
    uint64_t base = 0;
    if (Status parsed = count("shard-ports", 1, 65535, base); !parsed.ok()) return parsed;
    if (!engine_kind.thread_per_core) {
      return Status::InvalidArgument("--shard-ports needs an engine whose shards are its I/O "
                                     "threads (owner), not " + kind);
    }
    if (base + out.io_threads - 1 > 65535) {
      return Status::InvalidArgument("--shard-ports " + std::to_string(base) + " + " +
                                     std::to_string(out.io_threads) +
                                     " I/O threads runs past port 65535");
    }
    out.shard_ports = static_cast<uint16_t>(base);
  }
  return Status::Ok();
}

}  // namespace

std::optional<uint64_t> ParseMemorySize(std::string_view text) {
  const std::string lower = AsciiLowercase(text);
  struct Unit { const char* suffix; uint64_t multiplier; };
  // Longest suffixes first so "kb" is not read as "k" followed by "b".
  static constexpr Unit kUnits[] = {{"kb", 1ull << 10}, {"mb", 1ull << 20}, {"gb", 1ull << 30},
                                    {"k", 1000ull},     {"m", 1000000ull},  {"g", 1000000000ull}};
  std::string_view digits = lower;
  uint64_t multiplier = 1;
  for (const Unit& unit : kUnits) {
    if (digits.ends_with(unit.suffix)) {
      digits.remove_suffix(std::string_view(unit.suffix).size());
      multiplier = unit.multiplier;
      break;
    }
  }
  auto value = ParseUnsigned(digits);
  if (!value || *value > std::numeric_limits<uint64_t>::max() / multiplier) return std::nullopt;
  return *value * multiplier;
}

ParsedCommandLine ParseServerCommandLine(int argc, const char* const* argv) {
  ParsedCommandLine result;
  po::options_description visible("Options");
  // Numbers are taken as text and validated by hand so messages say what is allowed.
  visible.add_options()
      ("help,h", "print this help and exit")
      ("version", "print the version and exit")
      ("engine", po::value<std::string>()->default_value(EngineConfig{}.kind),
       ("keyspace engine: " + EngineKindChoices()).c_str())
      ("shards", po::value<std::string>(),
       "sharded: shard threads (default: cores); owner has one per I/O thread")
      ("stripes", po::value<std::string>(),
       ("striped: lock stripes (default: " + std::to_string(kDefaultStripes) + ")").c_str())
      ("hop", po::value<std::string>()->default_value("command"),
       "sharded: one channel hop per command or per read batch: command|batch")
      ("multikey", po::value<std::string>()->default_value("atomic"),
       "multi-key commands and MULTI/EXEC: atomic (as Redis) or split into independent "
       "single-key operations (to measure what atomicity costs): atomic|split")
      ("io-threads", po::value<std::string>(),
       "I/O threads, one event loop each (default: cores; always 1 for single)")
      ("port", po::value<std::string>()->default_value("6379"), "TCP port; 0 = no TCP listener")
      ("bind", po::value<std::string>()->default_value("127.0.0.1"), "TCP address to listen on")
      ("unixsocket", po::value<std::string>(), "also listen on this Unix socket path")
      ("shard-ports", po::value<std::string>(),
       "owner: I/O thread i also listens on BASE+i and owns the hash slots CLUSTER SLOTS "
       "reports for it (keys of other threads get -MOVED there)")
      ("requirepass", po::value<std::string>(), "clients must AUTH with this password")
      ("maxclients", po::value<std::string>()->default_value("10000"),
       "connections beyond this get -ERR max number of clients reached")
      ("maxmemory", po::value<std::string>()->default_value("0"),
       "refuse writes with -OOM past this many bytes (100mb, 1gb; 0 = unlimited)")
      ("protected-mode", po::value<std::string>()->default_value("yes"),
       "yes: without --requirepass, refuse non-loopback clients")
      ("client-output-buffer-limit", po::value<std::string>()->default_value("64mb"),
       "disconnect a client whose unsent replies exceed this")
      ("client-query-buffer-limit", po::value<std::string>()->default_value("1gb"),
       "disconnect a client whose unparsed input exceeds this");

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(visible).run(), vm);
    po::notify(vm);
  } catch (const po::error& error) {
    result.outcome = ParsedCommandLine::Outcome::kBadArguments;
    result.message = std::string("kvlab-server: ") + error.what() + "\n\n" + Usage(visible);
    return result;
  }
  if (vm.count("help")) {
    result.outcome = ParsedCommandLine::Outcome::kPrintAndExit;
    result.message = Usage(visible);
    return result;
  }
  if (vm.count("version")) {
    result.outcome = ParsedCommandLine::Outcome::kPrintAndExit;
    result.message = VersionLine() + "\n";
    return result;
  }
  if (const Status valid = Validate(vm, result.settings); !valid.ok()) {
    result.outcome = ParsedCommandLine::Outcome::kBadArguments;
    result.message = "kvlab-server: " + valid.message() + "\n(see kvlab-server --help)\n";
  }
  return result;
}

std::string ReadyLine(const ServerSettings& settings, long pid) {
  std::ostringstream line;
  line << "kvlab-server ready engine=" << settings.engine.kind;
  const EngineKind& kind = *FindEngineKind(settings.engine.kind);
  if (kind.uses_shards) {
    line << " shards=" << settings.engine.shards
         << " hop=" << (settings.engine.hop == HopMode::kBatch ? "batch" : "command");
  }
  if (kind.uses_stripes) line << " stripes=" << settings.engine.stripes;
  if (kind.thread_per_core) line << " owners=" << settings.engine.shards;
  if (settings.engine.multikey == MultiKey::kSplit) line << " multikey=split";
  line << " io-threads=" << settings.io_threads << " tcp=";
  if (settings.port == 0) {
    line << "none";
  } else {
    line << settings.bind << ":" << settings.port;
  }
  line << " unix=" << (settings.unix_socket.empty() ? "none" : settings.unix_socket);
  if (settings.shard_ports != 0) line << " shard-ports=" << settings.shard_ports;
  line << " pid=" << pid;
  return line.str();
}

}  // namespace kvlab
