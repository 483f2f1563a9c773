#include "server/net/server_options.h"

#include <charconv>
#include <filesystem>
#include <cstdint>
#include <limits>
#include <sstream>
#include <vector>

#include <boost/program_options.hpp>

#include "base/ascii_case.h"
#include "engines/engine_kind.h"
#include "server/stage_stats.h"
#include "server/version.h"

namespace kvlab {
namespace {

namespace po = boost::program_options;

constexpr uint64_t kMaxPort = 65535;

// A choice option's spellings, in the order usage messages and --kinds list them.
template <typename Value>
struct Choice {
  std::string_view name;
  Value value;
};
constexpr Choice<HopMode> kHops[] = {{"command", HopMode::kCommand}, {"batch", HopMode::kBatch}};
constexpr Choice<MultiKey> kMultiKeys[] = {{"atomic", MultiKey::kAtomic},
                                           {"split", MultiKey::kSplit}};
constexpr Choice<bool> kYesNo[] = {{"yes", true}, {"no", false}};
constexpr Choice<AppendFsync> kAppendFsyncs[] = {{"always", AppendFsync::kAlways},
                                                 {"everysec", AppendFsync::kEverySec},
                                                 {"no", AppendFsync::kNo}};

template <typename Value, size_t N>
std::string ChoiceNames(const Choice<Value> (&choices)[N], std::string_view separator) {
  std::string names;
  for (const Choice<Value>& choice : choices) {
    names += (names.empty() ? "" : std::string(separator)) + std::string(choice.name);
  }
  return names;
}

template <typename Value, size_t N>
std::string_view NameOf(const Choice<Value> (&choices)[N], Value value) {
  for (const Choice<Value>& choice : choices) {
    if (choice.value == value) return choice.name;
  }
  return "?";
}

// Sets *out to the value `option`'s text names, or says what it allows.
template <typename Value, size_t N>
Status ParseChoice(const po::variables_map& vm, const char* option,
                   const Choice<Value> (&choices)[N], Value* out) {
  const std::string text = vm[option].as<std::string>();
  for (const Choice<Value>& choice : choices) {
    if (choice.name == text) {
      *out = choice.value;
      return Status::Ok();
    }
  }
  return Status::InvalidArgument(std::string("--") + option + " '" + text + "' is not one of " +
                                 ChoiceNames(choices, "|"));
}

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
    return Status::InvalidArgument("--engine '" + kind + "' is not one of " + EngineKindChoices());
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
        vm.count("io-threads") ? count("io-threads", 1, kMaxIoThreads, io_threads) : Status::Ok(),
        count("port", 0, kMaxPort, port), count("maxclients", 1, kMaxMaxClients, out.max_clients),
        bytes("maxmemory", out.engine.max_memory_bytes),
        bytes("client-output-buffer-limit", out.client_output_buffer_limit),
        bytes("client-query-buffer-limit", out.client_query_buffer_limit)}) {
    if (!parsed.ok()) return parsed;
  }
  uint64_t stage_sample = 0;
  if (Status parsed = count("stage-sample", 0, UINT32_MAX, stage_sample); !parsed.ok())
    return parsed;
  out.stage_sample = static_cast<uint32_t>(stage_sample);
  if (vm.count("stage-spin")) {
    for (const std::string& spin : vm["stage-spin"].as<std::vector<std::string>>()) {
      const size_t equals = spin.find('=');
      const std::string stage = spin.substr(0, equals);
      const auto usec = equals == std::string::npos
                            ? std::nullopt
                            : ParseUnsigned(std::string_view(spin).substr(equals + 1));
      constexpr uint64_t kMaxSpinUsec = 1'000'000;
      if (!usec || *usec > kMaxSpinUsec || (stage != "parse" && stage != "execute")) {
        return Status::InvalidArgument("--stage-spin '" + spin +
                                       "' must be parse=USEC or execute=USEC, USEC <= 1000000");
      }
      (stage == "parse" ? out.stage_spin_parse_us : out.stage_spin_execute_us) =
          static_cast<int64_t>(*usec);
    }
  }
  if (out.client_query_buffer_limit == 0) {
    return Status::InvalidArgument("--client-query-buffer-limit must be > 0");
  }
  out.engine.shards = static_cast<unsigned>(shards);
  out.engine.stripes = static_cast<unsigned>(stripes);
  out.port = static_cast<uint16_t>(port);

  for (const Status& parsed : {ParseChoice(vm, "hop", kHops, &out.engine.hop),
                               ParseChoice(vm, "multikey", kMultiKeys, &out.engine.multikey),
                               ParseChoice(vm, "appendonly", kYesNo, &out.append_only),
                               ParseChoice(vm, "appendfsync", kAppendFsyncs, &out.append_fsync)}) {
    if (!parsed.ok()) return parsed;
  }
  if (out.append_only && out.engine.multikey == MultiKey::kSplit) {
    // A torn multi-key command has no one place in the log's order.
    return Status::InvalidArgument("--appendonly yes needs --multikey atomic");
  }
  std::error_code cwd_error;
  out.dir = vm.count("dir") ? vm["dir"].as<std::string>()
                            : std::filesystem::current_path(cwd_error).string();
  out.dir = std::filesystem::absolute(out.dir, cwd_error).lexically_normal().string();
  if (out.dir.size() > 1 && out.dir.back() == '/') out.dir.pop_back();
  if (out.append_only && !std::filesystem::is_directory(out.dir, cwd_error)) {
    return Status::InvalidArgument("--dir '" + out.dir + "' is not a directory");
  }
  out.append_filename = vm["appendfilename"].as<std::string>();
  if (out.append_filename.empty() || out.append_filename.find('/') != std::string::npos) {
    return Status::InvalidArgument("--appendfilename '" + out.append_filename +
                                   "' must be a file name, without a directory");
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
    if (Status parsed = count("shard-ports", 1, kMaxPort, base); !parsed.ok()) return parsed;
    if (!engine_kind.thread_per_core) {
      return Status::InvalidArgument(
          "--shard-ports needs an engine whose shards are its I/O "
          "threads (owner), not " +
          kind);
    }
    if (base + out.io_threads - 1 > kMaxPort) {
      return Status::InvalidArgument("--shard-ports " + std::to_string(base) + " + " +
                                     std::to_string(out.io_threads) +
                                     " I/O threads runs past port 65535");
    }
    out.shard_ports = static_cast<uint16_t>(base);
  }
  return Status::Ok();
}

}  // namespace

namespace {

struct MemoryUnit {
  const char* suffix;
  uint64_t multiplier;
};
// Longest suffixes first so "kb" is not read as "k" followed by "b"; the
// binary ones, largest first, are also how MemorySizeText writes.
constexpr MemoryUnit kMemoryUnits[] = {{"gb", 1ull << 30}, {"mb", 1ull << 20},
                                       {"kb", 1ull << 10}, {"k", 1000ull},
                                       {"m", 1000000ull},  {"g", 1000000000ull}};
constexpr size_t kBinaryMemoryUnits = 3;

}  // namespace

std::optional<uint64_t> ParseMemorySize(std::string_view text) {
  const std::string lower = AsciiLowercase(text);
  std::string_view digits = lower;
  uint64_t multiplier = 1;
  for (const MemoryUnit& unit : kMemoryUnits) {
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

std::string MemorySizeText(uint64_t bytes) {
  for (size_t i = 0; i < kBinaryMemoryUnits; ++i) {
    const MemoryUnit& unit = kMemoryUnits[i];
    if (bytes != 0 && bytes % unit.multiplier == 0) {
      return std::to_string(bytes / unit.multiplier) + unit.suffix;
    }
  }
  return std::to_string(bytes);
}

ParsedCommandLine ParseServerCommandLine(int argc, const char* const* argv) {
  ParsedCommandLine result;
  po::options_description visible("Options");
  // Numbers are taken as text and validated by hand so messages say what is allowed.
  visible.add_options()("help,h", "print this help and exit")("version",
                                                              "print the version and exit")(
      "kinds",
      "print the engines, their options and traits and the server's limits as JSON "
      "and exit")("engine", po::value<std::string>()->default_value(EngineConfig{}.kind),
                  ("keyspace engine: " + EngineKindChoices()).c_str())(
      "shards", po::value<std::string>(),
      "sharded: shard threads (default: cores); owner has one per I/O thread")(
      "stripes", po::value<std::string>(),
      ("striped: lock stripes (default: " + std::to_string(kDefaultStripes) + ")").c_str())(
      "hop",
      po::value<std::string>()->default_value(std::string(NameOf(kHops, EngineConfig{}.hop))),
      ("sharded: one channel hop per command or per read batch: " + ChoiceNames(kHops, "|"))
          .c_str())(
      "multikey",
      po::value<std::string>()->default_value(
          std::string(NameOf(kMultiKeys, EngineConfig{}.multikey))),
      ("multi-key commands and MULTI/EXEC: atomic (as Redis) or split into independent "
       "single-key operations (to measure what atomicity costs): " +
       ChoiceNames(kMultiKeys, "|"))
          .c_str())("io-threads", po::value<std::string>(),
                    "I/O threads, one event loop each (default: cores; always 1 for single)")(
      "port", po::value<std::string>()->default_value(std::to_string(kDefaultPort)),
      "TCP port; 0 = no TCP listener")("bind", po::value<std::string>()->default_value("127.0.0.1"),
                                       "TCP address to listen on")(
      "unixsocket", po::value<std::string>(), "also listen on this Unix socket path")(
      "shard-ports", po::value<std::string>(),
      "owner: I/O thread i also listens on BASE+i and owns the hash slots CLUSTER SLOTS "
      "reports for it (keys of other threads get -MOVED there)")(
      "requirepass", po::value<std::string>(), "clients must AUTH with this password")(
      "maxclients", po::value<std::string>()->default_value(std::to_string(kDefaultMaxClients)),
      "connections beyond this get -ERR max number of clients reached")(
      "maxmemory", po::value<std::string>()->default_value("0"),
      "refuse writes with -OOM past this many bytes (100mb, 1gb; 0 = unlimited)")(
      "protected-mode", po::value<std::string>()->default_value("yes"),
      "yes: without --requirepass, refuse non-loopback clients")(
      "appendonly", po::value<std::string>()->default_value("no"),
      "yes: log every write to DIR/APPENDFILENAME and replay it at start")(
      "appendfsync", po::value<std::string>()->default_value("everysec"),
      ("when the log is fsynced: " + ChoiceNames(kAppendFsyncs, "|") +
       " (always: a write is acknowledged only once on disk)")
          .c_str())("dir", po::value<std::string>(),
                    "folder of the append-only file (default: working folder)")(
      "appendfilename", po::value<std::string>()->default_value("appendonly.aof"),
      "the append-only file's name in --dir")(
      "client-output-buffer-limit",
      po::value<std::string>()->default_value(MemorySizeText(kDefaultClientOutputBufferLimit)),
      "stop reading a client whose unsent replies exceed this until they drain")(
      "client-query-buffer-limit",
      po::value<std::string>()->default_value(MemorySizeText(kDefaultClientQueryBufferLimit)),
      "disconnect a client whose unparsed input exceeds this")(
      "stage-sample", po::value<std::string>()->default_value(std::to_string(kDefaultStageSample)),
      "time every Nth read of each I/O thread stage by stage (INFO stages; 0 = off)")(
      "stage-spin", po::value<std::vector<std::string>>()->composing(),
      "test-only known answer: STAGE=USEC (parse or execute) spins that long inside the "
      "stage of every sampled request");

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
  if (vm.count("kinds")) {
    result.outcome = ParsedCommandLine::Outcome::kPrintAndExit;
    result.message = KindsJson();
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
    line << " shards=" << settings.engine.shards << " hop=" << NameOf(kHops, settings.engine.hop);
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

namespace {

// A JSON string; the table's texts are ASCII.
std::string Quoted(std::string_view text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

template <typename Value, size_t N>
std::string ChoiceList(const Choice<Value> (&choices)[N]) {
  std::string list;
  for (const Choice<Value>& choice : choices)
    list += (list.empty() ? "" : ", ") + Quoted(choice.name);
  return "[" + list + "]";
}

std::string RangeOption(std::string_view flag, std::string_view default_text, uint64_t min,
                        uint64_t max) {
  return "{\"flag\": " + Quoted(flag) + ", \"default\": " + Quoted(default_text) +
         ", \"min\": " + std::to_string(min) + ", \"max\": " + std::to_string(max) + "}";
}

template <typename Value, size_t N>
std::string ChoiceOption(std::string_view flag, const Choice<Value> (&choices)[N], Value value) {
  return "{\"flag\": " + Quoted(flag) + ", \"default\": " + Quoted(NameOf(choices, value)) +
         ", \"choices\": " + ChoiceList(choices) + "}";
}

// The options that apply to `kind` only (the rest apply to every engine).
std::string EngineOptionsJson(const EngineKind& kind) {
  std::vector<std::string> options;
  if (kind.uses_shards) {
    options.push_back(RangeOption("shards", "cores", 1, kMaxShards));
    options.push_back(ChoiceOption("hop", kHops, EngineConfig{}.hop));
  }
  if (kind.uses_stripes) {
    options.push_back(RangeOption("stripes", std::to_string(kDefaultStripes), 1, kMaxStripes));
  }
  if (kind.thread_per_core) options.push_back(RangeOption("shard-ports", "none", 1, kMaxPort));
  std::string list;
  for (const std::string& option : options) list += (list.empty() ? "" : ", ") + option;
  return "[" + list + "]";
}

std::string Flag(bool value) { return value ? "true" : "false"; }

std::string EngineJson(const EngineKind& kind) {
  return "    {\"name\": " + Quoted(kind.name) + ", \"summary\": " + Quoted(kind.summary) +
         ",\n     \"options\": " + EngineOptionsJson(kind) +
         ",\n     \"traits\": {\"single_threaded\": " + Flag(kind.single_threaded) +
         ", \"uses_shards\": " + Flag(kind.uses_shards) +
         ", \"uses_stripes\": " + Flag(kind.uses_stripes) +
         ", \"thread_per_core\": " + Flag(kind.thread_per_core) + "}}";
}

std::string Limit(std::string_view name, uint64_t default_value, uint64_t min, uint64_t max) {
  return "    " + Quoted(name) + ": {\"default\": " + std::to_string(default_value) +
         ", \"min\": " + std::to_string(min) + ", \"max\": " + std::to_string(max) + "}";
}

}  // namespace

std::string KindsJson() {
  std::string json = "{\n  \"format\": \"kvlab-server-kinds/1\",\n  \"engines\": [\n";
  bool first = true;
  for (const EngineKind& kind : AllEngineKinds()) {
    json += (first ? "" : ",\n") + EngineJson(kind);
    first = false;
  }
  const uint64_t no_cap = std::numeric_limits<uint64_t>::max();
  json += "\n  ],\n  \"default_engine\": " + Quoted(EngineConfig{}.kind) +
          ",\n  \"multikey\": " + ChoiceOption("multikey", kMultiKeys, EngineConfig{}.multikey) +
          ",\n  \"limits\": {\n" + Limit("port", kDefaultPort, 0, kMaxPort) + ",\n" +
          Limit("io_threads", HardwareThreads(), 1, kMaxIoThreads) + ",\n" +
          Limit("maxclients", kDefaultMaxClients, 1, kMaxMaxClients) + ",\n" +
          Limit("maxmemory", 0, 0, no_cap) + ",\n" +
          Limit("client_output_buffer_limit", kDefaultClientOutputBufferLimit, 0, no_cap) + ",\n" +
          Limit("client_query_buffer_limit", kDefaultClientQueryBufferLimit, 1, no_cap) +
          "\n  }\n}\n";
  return json;
}

}  // namespace kvlab
