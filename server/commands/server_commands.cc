// Server commands: INFO and COMMAND — what redis-cli,
// redis-benchmark and memtier_benchmark ask a server about itself — TIME,
// and FUNCTION FLUSH / SCRIPT FLUSH, which test harnesses send first and
// which kvlab (no scripting) answers as the no-ops they are here. Field
// names follow Redis 7.0's INFO; kvlab adds a `# kvlab` section from the
// engine.
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <array>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/allocated_bytes.h"
#include "engines/rules/glob.h"
#include "engines/threads/thread_cpu.h"
#include "server/command_keys.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"
#include "server/version.h"

namespace kvlab {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

std::string HumanBytes(uint64_t bytes) {
  const char* units[] = {"B", "K", "M", "G", "T"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  if (unit == 0) {
    snprintf(text, sizeof text, "%lluB", static_cast<unsigned long long>(bytes));
  } else {
    snprintf(text, sizeof text, "%.2f%s", value, units[unit]);
  }
  return text;
}

std::string EngineValue(const EngineInfo& info, std::string_view name) {
  for (const auto& [key, value] : info) {
    if (key == name) return value;
  }
  return {};
}

// The resident set, as used_memory_rss (/proc/self/statm's second field).
uint64_t ResidentBytes() {
  std::FILE* statm = std::fopen("/proc/self/statm", "r");
  if (statm == nullptr) return 0;
  unsigned long long total_pages = 0;
  unsigned long long resident_pages = 0;
  const int read = std::fscanf(statm, "%llu %llu", &total_pages, &resident_pages);
  std::fclose(statm);
  if (read != 2) return 0;
  return resident_pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

Fields ServerSection(const ServerContext& server) {
  utsname uts{};
  uname(&uts);
  int64_t uptime = server.UptimeSeconds();
  const ServerSettings& s = server.settings;
  return {{"redis_version", kRedisCompatVersion},
          {"kvlab_version", kKvlabVersion},
          {"redis_mode", "standalone"},
          {"os", std::string(uts.sysname) + " " + uts.release + " " + uts.machine},
          {"arch_bits", std::to_string(sizeof(void*) * 8)},
          {"multiplexing_api", "epoll"},
          {"process_id", std::to_string(getpid())},
          {"tcp_port", std::to_string(s.port)},
          {"uptime_in_seconds", std::to_string(uptime)},
          {"uptime_in_days", std::to_string(uptime / 86400)},
          {"io_threads_active", s.io_threads > 1 ? "1" : "0"},
          {"executable", s.executable},
          {"config_file", ""}};
}

Fields ClientsSection(const ServerContext& server) {
  return {{"connected_clients", std::to_string(server.stats.connected_clients.load())},
          {"maxclients", std::to_string(server.settings.max_clients)},
          {"blocked_clients", std::to_string(server.blocking.blocked_clients())}};
}

Fields MemorySection(const ServerContext& server, const EngineInfo& engine) {
  const uint64_t used = AllocatedBytes();
  const uint64_t resident = ResidentBytes();
  const uint64_t max = server.engine.MemoryLimit();
  // The engine's own estimate of its keys' bytes; --maxmemory is enforced
  // against it (a per-write mallinfo2() would cost far more than the write).
  std::string dataset = EngineValue(engine, "dataset_bytes");
  return {{"used_memory", std::to_string(used)},
          {"used_memory_human", HumanBytes(used)},
          {"used_memory_rss", std::to_string(resident)},
          {"used_memory_rss_human", HumanBytes(resident)},
          {"used_memory_dataset", dataset.empty() ? "0" : dataset},
          {"maxmemory", std::to_string(max)},
          {"maxmemory_human", HumanBytes(max)},
          {"maxmemory_policy", "noeviction"},
          // Every engine frees what UNLINK, FLUSHALL ASYNC and the lazyfree-*
          // settings would hand to Redis's background thread at once, on the
          // thread that runs the command: nothing is ever pending.
          {"lazyfree_pending_objects", "0"},
          {"lazyfreed_objects", "0"}};
}

// Redis's names; the aof_* counters come from the append-only file's writer.
Fields PersistenceSection(const ServerContext& server) {
  Fields fields = {{"loading", server.loading.load() ? "1" : "0"},
                   {"rdb_bgsave_in_progress", "0"},
                   {"aof_enabled", server.settings.append_only ? "1" : "0"},
                   {"aof_rewrite_scheduled", "0"}};
  if (server.append_log == nullptr) {
    fields.push_back({"aof_rewrite_in_progress", "0"});
    return fields;
  }
  const DurableLog::Counters log = server.append_log->counters();
  const AppendLogLoad& load = server.append_log_load;
  fields.insert(fields.end(),
                {{"aof_rewrite_in_progress", log.rewrite_in_progress ? "1" : "0"},
                 {"aof_rewrites", std::to_string(log.rewrites)},
                 {"aof_last_bgrewrite_status", log.last_rewrite_ok ? "ok" : "err"},
                 {"aof_last_rewrite_time_sec",
                  std::to_string(log.last_rewrite_seconds < 0
                                     ? -1
                                     : static_cast<int64_t>(log.last_rewrite_seconds + 0.5))},
                 {"aof_last_rewrite_hold_us", std::to_string(log.last_rewrite_hold_us)},
                 {"aof_last_rewrite_switch_us", std::to_string(log.last_rewrite_switch_us)}});
  fields.insert(fields.end(),
                {{"aof_last_write_status", log.last_write_ok ? "ok" : "err"},
                 {"aof_current_size", std::to_string(log.file_bytes)},
                 {"aof_base_size", std::to_string(log.base_bytes)},
                 {"aof_buffer_length", std::to_string(log.appended_bytes - log.written_bytes)},
                 {"aof_pending_fsync", log.durable_bytes < log.written_bytes ? "1" : "0"},
                 {"aof_fsyncs", std::to_string(log.fsyncs)},
                 {"aof_lanes", std::to_string(log.lanes)},
                 {"aof_write_errors", std::to_string(log.write_errors)},
                 {"aof_loaded_commands", std::to_string(load.commands)},
                 {"aof_loaded_truncated_bytes", std::to_string(load.dropped_bytes)},
                 {"aof_load_seconds", std::to_string(load.seconds)}});
  return fields;
}

uint64_t TotalErrorReplies(const ServerContext& server) {
  uint64_t total = 0;
  for (const auto& [code, count] : server.command_stats.Errors()) total += count;
  return total;
}

Fields StatsSection(const ServerContext& server) {
  const ServerStats& st = server.stats;
  return {{"total_connections_received", std::to_string(st.total_connections_received.load())},
          {"total_commands_processed", std::to_string(st.total_commands_processed.load())},
          {"total_net_input_bytes", std::to_string(st.total_net_input_bytes.load())},
          {"total_net_output_bytes", std::to_string(st.total_net_output_bytes.load())},
          {"rejected_connections", std::to_string(st.rejected_connections.load())},
          {"expired_keys", std::to_string(server.engine.modifications().expired())},
          {"evicted_keys", "0"},
          {"total_error_replies", std::to_string(TotalErrorReplies(server))},
          {"pubsub_channels",
           std::to_string(server.pubsub.ChannelCount(PubSubRegistry::Space::kGlobal))},
          {"pubsub_patterns", std::to_string(server.pubsub.Patterns())},
          {"pubsubshard_channels",
           std::to_string(server.pubsub.ChannelCount(PubSubRegistry::Space::kShard))}};
}

// A primary with no replicas and no backlog, in Redis 7.0's fields.
Fields ReplicationSection() {
  return {{"role", "master"},
          {"connected_slaves", "0"},
          {"master_failover_state", "no-failover"},
          {"master_repl_offset", "0"},
          {"second_repl_offset", "-1"},
          {"repl_backlog_active", "0"}};
}

// Redis's cmdstat_<name> lines for every command called, rejected or
// failed since the start or CONFIG RESETSTAT; without usec and
// usec_per_call, which kvlab does not measure (server/command_stats.h).
Fields CommandStatsSection(const ServerContext& server) {
  Fields fields;
  const std::vector<CommandStats::CommandTotals> totals = server.command_stats.Commands();
  const std::vector<CommandSpec>& commands = CommandTable::Instance().commands();
  for (size_t i = 0; i < totals.size() && i < commands.size(); ++i) {
    const CommandStats::CommandTotals& t = totals[i];
    if (t.calls == 0 && t.rejected == 0 && t.failed == 0) continue;
    fields.emplace_back("cmdstat_" + commands[i].name,
                        "calls=" + std::to_string(t.calls) +
                            ",rejected_calls=" + std::to_string(t.rejected) +
                            ",failed_calls=" + std::to_string(t.failed));
  }
  return fields;
}

Fields ErrorStatsSection(const ServerContext& server) {
  Fields fields;
  for (const auto& [code, count] : server.command_stats.Errors()) {
    fields.emplace_back("errorstat_" + code, "count=" + std::to_string(count));
  }
  return fields;
}

// Redis's CPU section: the whole process (getrusage), then its children
// (kvlab forks none, so they read 0, as Redis's do between saves).
Fields CpuSection() {
  auto seconds = [](const timeval& time) {
    return FormatCpuSeconds(static_cast<double>(time.tv_sec) + time.tv_usec / 1e6);
  };
  rusage self{};
  rusage children{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  return {{"used_cpu_sys", seconds(self.ru_stime)},
          {"used_cpu_user", seconds(self.ru_utime)},
          {"used_cpu_sys_children", seconds(children.ru_stime)},
          {"used_cpu_user_children", seconds(children.ru_utime)}};
}

// kvlab's own section: the engine's figures, then each I/O thread's CPU
// (the engine adds its own threads', e.g. each shard's).
Fields KvlabSection(const ServerContext& server, const EngineInfo& engine) {
  Fields fields(engine.begin(), engine.end());
  const std::vector<pid_t>& io_threads = server.settings.io_thread_ids;
  for (size_t i = 0; i < io_threads.size(); ++i) {
    const std::optional<ThreadCpuSeconds> cpu = ReadThreadCpu(io_threads[i]);
    if (!cpu) continue;
    const std::string prefix = "io_thread" + std::to_string(i) + "_";
    fields.emplace_back(prefix + "cpu_user", FormatCpuSeconds(cpu->user));
    fields.emplace_back(prefix + "cpu_sys", FormatCpuSeconds(cpu->system));
  }
  return fields;
}

// Redis lists only non-empty databases; kvlab's expiry counts are not tracked.
Fields KeyspaceSection(int64_t keys) {
  if (keys == 0) return {};
  return {{"db0", "keys=" + std::to_string(keys) + ",expires=0,avg_ttl=0"}};
}

// kvlab's per-stage time of sampled requests (server/stage_stats.h), then
// each thread's busy and waiting time: the I/O threads (io<i>; on `owner`
// they are the owners too) and the engine's own threads (shard<i>).
Fields StagesSection(const ServerContext& server) {
  std::vector<std::pair<std::string, BusyWaitTotals>> threads;
  for (size_t i = 0; i < server.io_thread_meters.size(); ++i) {
    threads.emplace_back("io" + std::to_string(i), server.io_thread_meters[i]->Totals());
  }
  for (auto& thread : server.engine.ThreadTimes()) threads.push_back(std::move(thread));
  return server.stages.InfoFields(threads);
}

// INFO's sections in Redis's order; `in_default` marks those INFO prints
// without arguments.
struct SectionName {
  const char* name;
  bool in_default;
};
constexpr std::array<SectionName, 12> kSections = {{{"server", true},
                                                    {"clients", true},
                                                    {"memory", true},
                                                    {"persistence", true},
                                                    {"stats", true},
                                                    {"replication", true},
                                                    {"cpu", true},
                                                    {"commandstats", false},
                                                    {"errorstats", true},
                                                    {"keyspace", true},
                                                    {"kvlab", true},
                                                    {"stages", false}}};

// deferred.state: a std::string of the requested section names, lower case,
// separated by spaces; empty means "default".
void RenderInfo(const DeferredReply& deferred, std::span<const OpResult> results,
                ReplyWriter& writer, ServerContext& server) {
  std::vector<std::string> wanted;
  std::string_view text = *static_cast<const std::string*>(deferred.state);
  while (!text.empty()) {
    size_t space = text.find(' ');
    wanted.emplace_back(text.substr(0, space));
    text = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
  }
  auto is_wanted = [&](const SectionName& section) {
    if (wanted.empty()) return section.in_default;
    for (const std::string& w : wanted) {
      if (w == section.name || w == "all" || w == "everything") return true;
      if (w == "default" && section.in_default) return true;
    }
    return false;
  };
  EngineInfo engine = server.engine.Info();
  int64_t keys = results.empty() ? 0 : results[0].integer;
  std::string body;
  int printed = 0;
  for (const SectionName& section : kSections) {
    if (!is_wanted(section)) continue;
    std::string_view name = section.name;
    Fields fields;
    if (name == "server")
      fields = ServerSection(server);
    else if (name == "clients")
      fields = ClientsSection(server);
    else if (name == "memory")
      fields = MemorySection(server, engine);
    else if (name == "persistence")
      fields = PersistenceSection(server);
    else if (name == "stats")
      fields = StatsSection(server);
    else if (name == "replication")
      fields = ReplicationSection();
    else if (name == "cpu")
      fields = CpuSection();
    else if (name == "keyspace")
      fields = KeyspaceSection(keys);
    else if (name == "commandstats")
      fields = CommandStatsSection(server);
    else if (name == "errorstats")
      fields = ErrorStatsSection(server);
    else if (name == "stages")
      fields = StagesSection(server);
    else
      fields = KvlabSection(server, engine);
    if (printed++) body += "\r\n";
    std::string title(name);
    if (name == "cpu") {
      title = "CPU";  // Redis's spelling
    } else if (name == "commandstats") {
      title = "Commandstats";
    } else if (name == "errorstats") {
      title = "Errorstats";
    } else {
      title[0] = static_cast<char>(title[0] - 'a' + 'A');
    }
    body += "# " + title + "\r\n";
    for (const auto& [key, value] : fields) body += key + ":" + value + "\r\n";
  }
  writer.Verbatim(body);
}

void Info(CommandCall& call) {
  std::string sections;
  for (size_t i = 1; i < call.args.size(); ++i) {
    if (!sections.empty()) sections += ' ';
    sections += AsciiLowercase(AsCString(call.args[i]));
  }
  // The key count comes from the engine, in order with this client's writes;
  // only INFO's keyspace section needs it (a DBSIZE visits every shard).
  bool keyspace_wanted = sections.empty();
  for (std::string_view rest = sections; !rest.empty();) {
    const size_t space = rest.find(' ');
    const std::string_view name = rest.substr(0, space);
    keyspace_wanted |=
        name == "keyspace" || name == "all" || name == "everything" || name == "default";
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  }
  if (keyspace_wanted) call.Add(MakeOp(OpCode::kDbSize, {}));
  call.Defer(RenderInfo);
  call.KeepForRender(std::make_shared<std::string>(std::move(sections)));
}

std::vector<std::string> CommandFlags(const CommandSpec& spec) {
  std::vector<std::string> flags;
  if (spec.flags & CommandSpec::kWrite) flags.push_back("write");
  if (spec.flags & CommandSpec::kReadOnly) flags.push_back("readonly");
  if (spec.flags & CommandSpec::kDenyOom) flags.push_back("denyoom");
  if (spec.flags & CommandSpec::kBlocking) flags.push_back("blocking");
  if (spec.flags & CommandSpec::kNoAuth) flags.push_back("no_auth");
  if (spec.flags & CommandSpec::kFast) flags.push_back("fast");
  if (HasMovableKeys(spec.name)) flags.push_back("movablekeys");
  return flags;
}

// One COMMAND INFO entry, in Redis 7.0's ten-element shape.
void WriteCommandInfo(ReplyWriter& reply, const CommandSpec& spec) {
  reply.ArrayHeader(10);
  reply.Bulk(spec.name);
  reply.Integer(spec.arity);
  std::vector<std::string> flags = CommandFlags(spec);
  reply.SetHeader(flags.size());
  for (const std::string& flag : flags) reply.SimpleString(flag);
  reply.Integer(spec.keys.first);
  reply.Integer(spec.keys.last);
  reply.Integer(spec.keys.step);
  reply.SetHeader(1);
  reply.SimpleString("@" + spec.group);
  reply.SetHeader(0);  // tips
  reply.SetHeader(0);  // key specs
  reply.SetHeader(0);  // subcommands
}

// One COMMAND DOCS entry: name, then a map of summary, since and group.
void WriteCommandDocs(ReplyWriter& reply, const CommandSpec& spec) {
  reply.Bulk(spec.name);
  reply.MapHeader(3);
  reply.Bulk("summary");
  reply.Bulk(spec.summary);
  reply.Bulk("since");
  reply.Bulk("1.0.0");
  reply.Bulk("group");
  reply.Bulk(spec.group);
}

// Redis's ACL categories (ACLCommandCategories): COMMAND LIST FILTERBY ACLCAT
// of any other name lists nothing, as in Redis.
constexpr std::array<std::string_view, 21> kAclCategories = {
    "keyspace", "read",   "write",       "set",       "sortedset",  "list",        "hash",
    "string",   "bitmap", "hyperloglog", "geo",       "stream",     "pubsub",      "admin",
    "fast",     "slow",   "blocking",    "dangerous", "connection", "transaction", "scripting"};

// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]
// (commandListCommand()): every command's name, each followed by its
// subcommands' ("client|list"); a filter applies to both, a pattern is a
// case-blind glob on the whole name. kvlab has no modules, so a module
// filter lists nothing; it classifies no command by ACL category, so a
// category filter of a real category is refused rather than answered
// wrongly (an unknown one lists nothing, as in Redis).
void CommandList(std::span<const std::string_view> args, ReplyWriter& reply) {
  enum class Filter { kNone, kModule, kAclCategory, kPattern } filter = Filter::kNone;
  std::string_view filter_arg;
  if (args.size() != 2) {
    if (args.size() != 5 || !EqualsIgnoreCase(args[2], "filterby")) {
      reply.Error(kSyntaxError);
      return;
    }
    if (EqualsIgnoreCase(args[3], "module")) {
      filter = Filter::kModule;
    } else if (EqualsIgnoreCase(args[3], "aclcat")) {
      filter = Filter::kAclCategory;
    } else if (EqualsIgnoreCase(args[3], "pattern")) {
      filter = Filter::kPattern;
    } else {
      reply.Error(kSyntaxError);
      return;
    }
    filter_arg = args[4];
  }
  if (filter == Filter::kAclCategory &&
      std::any_of(kAclCategories.begin(), kAclCategories.end(),
                  [&](std::string_view name) { return EqualsIgnoreCase(filter_arg, name); })) {
    reply.Error("ERR kvlab-server does not classify commands by ACL category");
    return;
  }
  std::vector<const std::string*> names;
  auto consider = [&](const std::string& name) {
    if (filter == Filter::kNone ||
        (filter == Filter::kPattern && GlobMatch(filter_arg, name, /*nocase=*/true))) {
      names.push_back(&name);
    }
  };
  for (const CommandSpec& spec : CommandTable::Instance().commands()) {
    consider(spec.name);
    for (const std::string& sub : spec.subcommands) consider(sub);
  }
  reply.ArrayHeader(names.size());
  for (const std::string* name : names) reply.Bulk(*name);
}

void Command(CommandCall& call) {
  const auto& commands = CommandTable::Instance().commands();
  const auto& args = call.args;
  ReplyWriter reply = call.reply();
  if (args.size() == 1) {
    reply.ArrayHeader(commands.size());
    for (const CommandSpec& spec : commands) WriteCommandInfo(reply, spec);
    return;
  }
  std::string_view sub = args[1];
  if (EqualsIgnoreCase(sub, "count") && args.size() == 2) {
    reply.Integer(static_cast<int64_t>(commands.size()));
  } else if (EqualsIgnoreCase(sub, "list")) {
    CommandList(args, reply);
  } else if (EqualsIgnoreCase(sub, "info")) {
    if (args.size() == 2) {
      reply.ArrayHeader(commands.size());
      for (const CommandSpec& spec : commands) WriteCommandInfo(reply, spec);
      return;
    }
    reply.ArrayHeader(args.size() - 2);
    for (size_t i = 2; i < args.size(); ++i) {
      const CommandSpec* spec = CommandTable::Instance().Find(args[i]);
      if (spec == nullptr) {
        reply.NilArray();
      } else {
        WriteCommandInfo(reply, *spec);
      }
    }
  } else if (EqualsIgnoreCase(sub, "docs")) {
    std::vector<const CommandSpec*> chosen;
    if (args.size() == 2) {
      for (const CommandSpec& spec : commands) chosen.push_back(&spec);
    } else {
      for (size_t i = 2; i < args.size(); ++i) {
        if (const CommandSpec* spec = CommandTable::Instance().Find(args[i]))
          chosen.push_back(spec);
      }
    }
    reply.MapHeader(chosen.size());
    for (const CommandSpec* spec : chosen) WriteCommandDocs(reply, *spec);
  } else if (EqualsIgnoreCase(sub, "getkeys")) {
    if (args.size() < 4) {
      reply.Error(WrongArityError("command|getkeys"));
      return;
    }
    const CommandKeys keys = FindCommandKeys(args.subspan(2));
    if (keys.outcome != CommandKeys::Outcome::kKeys) {
      reply.Error("ERR " + std::string(CommandKeysError(keys.outcome)));
      return;
    }
    reply.ArrayHeader(keys.positions.size());
    for (const size_t position : keys.positions) reply.Bulk(args[2 + position]);
  } else if (EqualsIgnoreCase(sub, "count")) {
    reply.Error(WrongArityError("command|count"));
  } else if (EqualsIgnoreCase(sub, "help")) {
    if (args.size() != 2) {
      reply.Error(WrongArityError("command|help"));
      return;
    }
    static constexpr std::string_view kHelp[] = {
        "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "(no subcommand)",
        "    Return details about all Redis commands.",
        "COUNT",
        "    Return the total number of commands in this Redis server.",
        "LIST",
        "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple Redis commands.",
        "    If no command names are given, documentation details for all",
        "    commands are returned.",
        "GETKEYS <full-command>",
        "    Return the keys from a full Redis command.",
        "HELP",
        "    Prints this help."};
    reply.StatusLines(kHelp);
  } else {
    reply.Error("ERR unknown subcommand '" + std::string(AsCString(sub).substr(0, 128)) +
                "'. Try COMMAND HELP.");
  }
}

void Time(CommandCall& call) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const int64_t micros = std::chrono::duration_cast<std::chrono::microseconds>(now).count();
  ReplyWriter reply = call.reply();
  reply.ArrayHeader(2);
  reply.Bulk(std::to_string(micros / 1'000'000));
  reply.Bulk(std::to_string(micros % 1'000'000));
}

bool IsFlushMode(std::string_view arg) {
  return EqualsIgnoreCase(arg, "sync") || EqualsIgnoreCase(arg, "async");
}

std::string UnknownSubcommand(std::string_view sub, std::string_view container) {
  return "ERR unknown subcommand '" + std::string(AsCString(sub).substr(0, 128)) + "'. Try " +
         std::string(container) + " HELP.";
}

// FUNCTION FLUSH [ASYNC|SYNC]: there are no functions to flush.
void Function(CommandCall& call) {
  if (!EqualsIgnoreCase(call.args[1], "flush")) {
    call.reply().Error(UnknownSubcommand(call.args[1], "FUNCTION"));
  } else if (call.args.size() > 3) {
    call.reply().Error(
        "ERR unknown subcommand or wrong number of arguments for 'FLUSH'. Try FUNCTION HELP.");
  } else if (call.args.size() == 3 && !IsFlushMode(call.args[2])) {
    call.reply().Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
  } else {
    call.reply().Ok();
  }
}

// SCRIPT FLUSH [ASYNC|SYNC]: there is no script cache to flush.
void Script(CommandCall& call) {
  if (!EqualsIgnoreCase(call.args[1], "flush")) {
    call.reply().Error(UnknownSubcommand(call.args[1], "SCRIPT"));
  } else if (call.args.size() > 3 || (call.args.size() == 3 && !IsFlushMode(call.args[2]))) {
    call.reply().Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
  } else {
    call.reply().Ok();
  }
}

}  // namespace

void RegisterServerCommands(CommandTable& table) {
  table.Add({.name = "time",
             .arity = 1,
             .flags = CommandSpec::kFast,
             .handler = Time,
             .group = "server",
             .summary = "Return the current server time"});
  table.Add({.name = "function",
             .arity = -2,
             .flags = CommandSpec::kNone,
             .handler = Function,
             .group = "scripting",
             .summary = "A container for function commands",
             .subcommands = {"function|flush"}});
  table.Add({.name = "script",
             .arity = -2,
             .flags = CommandSpec::kNone,
             .handler = Script,
             .group = "scripting",
             .summary = "A container for Lua scripts management commands",
             .subcommands = {"script|flush"}});
  using F = CommandSpec;
  table.Add({.name = "info",
             .arity = -1,
             .flags = F::kNone,
             .handler = Info,
             .group = "server",
             .summary = "Get information and statistics about the server"});
  table.Add({.name = "command",
             .arity = -1,
             .flags = F::kNone,
             .handler = Command,
             .group = "server",
             .summary = "Get array of Redis command details",
             .subcommands = {"command|count", "command|docs", "command|getkeys", "command|info",
                             "command|list", "command|help"}});
}

}  // namespace kvlab
