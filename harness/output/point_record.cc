#include "harness/output/point_record.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <set>

#include "harness/clients/event_loop.h"
#include "harness/output/json_writer.h"

namespace kvlab::harness {
namespace {

using K = ColumnKind;

// A figure's cell in its column's cell format (PointColumn::cell_format):
// a printf format, "count" (an integer) or "flag" (true | false). NaN: a
// figure the load generator does not report; the cell stays blank.
template <typename T>
std::string CellOf(const char* format, T value) {
  if constexpr (std::is_same_v<T, bool>) {
    return CellOf(format, value ? 1 : 0);
  } else if constexpr (std::is_integral_v<T>) {
    if (std::strcmp(format, "count") == 0) return std::to_string(value);
    if (std::strcmp(format, "flag") == 0) return value != 0 ? "true" : "false";
    return CellOf(format, static_cast<double>(value));
  } else {
    const double number = static_cast<double>(value);
    if (std::isnan(number)) return "";
    if (std::strcmp(format, "count") == 0) return std::to_string(static_cast<int64_t>(number));
    if (std::strcmp(format, "flag") == 0) return number != 0 ? "true" : "false";
    char text[64];
    std::snprintf(text, sizeof(text), format, number);
    return text;
  }
}

// A whole-window total per operation of the window; "n/a" when the total
// was not measured (< 0) or nothing was done.
std::string PerOp(const char* format, double total, const RepetitionResult& r) {
  if (total < 0 || r.ops == 0) return "n/a";
  return CellOf(format, total / static_cast<double>(r.ops));
}
// INFO stages' stage `I` (ServerStageNames()): microseconds per sampled
// request in the window; blank where the server did not record it.
template <size_t I>
std::string StageCell(const RowSource& s, const char* format) {
  return CellOf(format, s.repetition.stages.us_per_request[I]);
}
#define KVLAB_STAGE_COLUMN(I, NAME, MEANING)                                                       \
  {                                                                                                \
    "stage_" NAME "_us", K::kNumber,                                                               \
        "INFO stages: " MEANING ", microseconds per sampled request; empty: not recorded", "%.3f", \
        StageCell<I>                                                                               \
  }

// kvlab-load's own phase `I` (ClientPhaseNames()): microseconds per op of
// its threads' time; blank where the strategy does not measure phases.
template <size_t I>
std::string ClientPhaseCell(const RowSource& s, const char* format) {
  return CellOf(format, s.repetition.client_phase_us[I]);
}
#define KVLAB_CLIENT_PHASE_COLUMN(I, NAME, MEANING)                                        \
  {                                                                                        \
    "client_" NAME "_us", K::kNumber,                                                      \
        "kvlab-load's threads: " MEANING                                                   \
        ", microseconds per op summed over threads (the four "                             \
        "add up to threads x window / ops); empty: not measured (another load generator)", \
        "%.3f", ClientPhaseCell<I>                                                         \
  }

std::string Cores(const char* format, double cores) {
  return cores < 0 ? "n/a" : CellOf(format, cores);
}

// The JSON file, when the window has a histogram to be read there.
std::string HistogramFile(const RowSource& s) {
  return s.repetition.latency.count() > 0 ? s.histogram : "";
}

std::string DisturbanceNote(const RowSource& s) {
  const WindowFigures& w = s.repetition.watched;
  if (!w.disturbed) return "";
  char text[160];
  std::snprintf(text, sizeof(text),
                "disturbed: foreign CPU %.2f cores, steal %.2f on the measured CPUs (above %.2f)",
                w.foreign_cores, w.steal_cores, s.config.watch.disturbed_above_cores);
  return text;
}

// clang-format off
const std::vector<PointColumn> kColumns = {
  {"threads", K::kNumber, "application threads of the load generator", "count",
   [](const RowSource& s, const char* f) { return CellOf(f, s.point.threads); }},
  {"client", K::kText, "client strategy: dedicated | pooled | shared", "",
   [](const RowSource& s, const char*) { return std::string(ClientKindName(s.point.client)); }},
  {"transport", K::kText, "unix | tcp (as the load generator connected)", "",
   [](const RowSource& s, const char*) { return std::string(TransportName(s.config.target.transport)); }},
  {"pipeline", K::kNumber, "requests in flight per connection", "count",
   [](const RowSource& s, const char* f) { return CellOf(f, s.point.pipeline); }},
  {"connections", K::kNumber, "connections the point used", "count",
   [](const RowSource& s, const char* f) { return CellOf(f, s.point.connections); }},
  {"repetition", K::kNumber, "1-based window of the point (a round in an experiment run)", "count",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.repetition); }},
  {"ops", K::kNumber, "replies of the expected kind in the window (GET misses included)", "count",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.ops); }},
  {"seconds", K::kNumber, "steady-clock length of the window", "%.6f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.seconds); }},
  {"ops_per_s", K::kNumber, "ops / seconds", "%.1f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.ops_per_s); }},
  {"errors", K::kNumber, "error replies and replies of the wrong type", "count",
   [](const RowSource& s, const char* f) { return s.repetition.errors_counted ? CellOf(f, s.repetition.errors) : std::string(); }},
  {"p50_us", K::kNumber, "latency median, microseconds (open loop: from intended send times)", "%.2f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.p50_us); }},
  {"p90_us", K::kNumber, "latency 90th percentile, microseconds", "%.2f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.p90_us); }},
  {"p99_us", K::kNumber, "latency 99th percentile, microseconds", "%.2f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.p99_us); }},
  {"p999_us", K::kNumber, "latency 99.9th percentile, microseconds", "%.2f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.p999_us); }},
  {"max_us", K::kNumber, "largest latency, microseconds", "%.2f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.max_us); }},
  {"client_cpu", K::kNumber, "cores' worth of CPU the load generator used", "%.4f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.client_cpu); }},
  {"client_bound", K::kFlag, "the load generator saturated its cores or one thread a core", "flag",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.client_bound); }},
  {"mean_us", K::kNumber, "mean latency, microseconds", "%.2f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.mean_us); }},
  {"busiest_thread_cpu", K::kNumber, "the largest share of a core one load-generator thread used", "%.4f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.busiest_thread_cpu); }},
  {"usable_cores", K::kNumber, "cores the load generator may run on (affinity, --cpus)", "count",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.usable_cores); }},
  {"allowed_cores", K::kNumber, "usable_cores, or the cgroup CPU quota when smaller", "%.2f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.allowed_cores); }},
  {"command", K::kText, "get | set | incrby | ping | mix | mset:N | mget:N | multi-incr:N", "",
   [](const RowSource& s, const char*) { return CommandLabel(s.config.workload); }},
  {"keys", K::kNumber, "key space size", "count",
   [](const RowSource& s, const char* f) { return CellOf(f, s.config.workload.keys); }},
  {"key_dist", K::kText, "uniform | zipf:THETA | sequential", "",
   [](const RowSource& s, const char*) { return KeyDistributionName(s.config.workload); }},
  {"value_size", K::kText, "SET value bytes: N or MIN-MAX", "",
   [](const RowSource& s, const char*) { return ValueSizeName(s.config.workload); }},
  {"rate", K::kNumber, "offered ops/s in open loop; 0: closed loop", "%.1f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.config.rate); }},
  {"arrival", K::kText, "open loop: uniform | poisson", "",
   [](const RowSource& s, const char*) { return std::string(ArrivalKindName(s.config.arrival)); }},
  {"refill", K::kText, "closed loop, pipelined: steady | burst", "",
   [](const RowSource& s, const char*) { return std::string(RefillModeName(s.config.refill)); }},
  {"nodelay", K::kText, "TCP_NODELAY: on | off", "",
   [](const RowSource& s, const char*) { return std::string(s.config.tcp_nodelay ? "on" : "off"); }},
  {"io", K::kText, "pooled, shared: direct | event-loop", "",
   [](const RowSource& s, const char*) { return std::string(IoModelName(s.config.io.model)); }},
  {"loop_threads", K::kNumber, "event-loop threads; 0: direct I/O", "count",
   [](const RowSource& s, const char* f) { return CellOf(f, LoopThreadsOf(s.config)); }},
  {"io_flush", K::kText, "event loop: command | batch; empty: direct I/O", "",
   [](const RowSource& s, const char*) {
     return std::string(LoopFlushOf(s.config));
   }},
  {"misses", K::kNumber, "GET replies that found no key", "count",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.misses); }},
  {"wrong_type", K::kNumber, "replies of an unexpected type (counted in errors too)", "count",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.wrong_type); }},
  {"achieved_rate", K::kNumber, "open loop: answers per second; 0 in closed loop", "%.1f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.achieved_rate); }},
  {"behind", K::kFlag, "open loop: under 95% of the requests due were answered", "flag",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.behind); }},
  {"backlog", K::kNumber, "open loop: requests due and unanswered at the window's end", "count",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.backlog); }},
  {"server_cpu", K::kNumber, "cores' worth of CPU the server used (INFO cpu); empty: not reported", "%.4f",
   [](const RowSource& s, const char* f) {
     return s.repetition.server_cpu < 0 ? std::string() : CellOf(f, s.repetition.server_cpu);
   }},
  {"foreign_cpu", K::kNumber, "cores' worth others used on the measured CPUs (--measured-cpus)", "%.3f",
   [](const RowSource& s, const char* f) { return Cores(f, s.repetition.watched.foreign_cores); }},
  {"steal_cpu", K::kNumber, "cores' worth the hypervisor took from the measured CPUs", "%.3f",
   [](const RowSource& s, const char* f) { return Cores(f, s.repetition.watched.steal_cores); }},
  {"server_cpu_us_per_op", K::kNumber, "server CPU microseconds per operation", "%.4g",
   [](const RowSource& s, const char* f) {
     const RepetitionResult& r = s.repetition;
     return PerOp(f, r.server_cpu < 0 ? -1 : r.server_cpu * r.seconds * 1e6, r);
   }},
  {"client_cpu_us_per_op", K::kNumber, "load-generator CPU microseconds per operation", "%.4g",
   [](const RowSource& s, const char* f) {
     const RepetitionResult& r = s.repetition;
     return PerOp(f, r.client_cpu * r.seconds * 1e6, r);
   }},
  {"server_ctx_switches_per_op", K::kNumber, "the server's context switches per operation (local server)", "%.4g",
   [](const RowSource& s, const char* f) {
     return PerOp(f, static_cast<double>(s.repetition.watched.server_context_switches), s.repetition);
   }},
  {"server_instructions_per_op", K::kNumber, "the server's instructions per operation (perf_event_open)", "%.4g",
   [](const RowSource& s, const char* f) {
     return PerOp(f, static_cast<double>(s.repetition.watched.server_instructions), s.repetition);
   }},
  {"server_cycles_per_op", K::kNumber, "the server's CPU cycles per operation (perf_event_open)", "%.4g",
   [](const RowSource& s, const char* f) {
     return PerOp(f, static_cast<double>(s.repetition.watched.server_cycles), s.repetition);
   }},
  {"client_cs_per_op", K::kNumber, "the load generator's context switches per operation", "%.3f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.client_cs_per_op); }},
  {"loop_wakeups_per_op", K::kNumber, "event loops woken per operation; empty: no event loop", "%.3f",
   [](const RowSource& s, const char* f) {
     const double wakeups = s.repetition.loop_wakeups_per_op;
     return wakeups < 0 ? std::string() : CellOf(f, wakeups);
   }},
  {"route", K::kText, "none | slots (--route: each request sent to its key's owner)", "",
   [](const RowSource& s, const char*) { return std::string(s.config.route_slots ? "slots" : "none"); }},
  {"moved", K::kNumber, "--route slots: -MOVED replies followed in the window; empty: not routed", "count",
   [](const RowSource& s, const char* f) {
     return s.repetition.moved < 0 ? std::string() : CellOf(f, s.repetition.moved);
   }},
  {"stage_samples", K::kNumber, "INFO stages: requests the server timed stage by stage in the window (kvlab-server --stage-sample); empty: none", "count",
   [](const RowSource& s, const char* f) {
     return s.repetition.stages.samples == 0 ? std::string() : CellOf(f, s.repetition.stages.samples);
   }},
  // In ServerStageNames()' order; what each stage spans: docs/server.md.
  KVLAB_STAGE_COLUMN(0, "read", "loop wake-up to recv()"),
  KVLAB_STAGE_COLUMN(1, "parse", "recv() to the first command parsed"),
  KVLAB_STAGE_COLUMN(2, "dispatch", "parsed to handed to the engine"),
  KVLAB_STAGE_COLUMN(3, "queue", "handed to picked up by another thread (a hop)"),
  KVLAB_STAGE_COLUMN(4, "execute", "picked up to executed"),
  KVLAB_STAGE_COLUMN(5, "return", "executed to back on the connection's thread (a hop)"),
  KVLAB_STAGE_COLUMN(6, "render", "executed or returned to the reply queued"),
  KVLAB_STAGE_COLUMN(7, "write", "reply queued to the send() that carried it"),
  KVLAB_STAGE_COLUMN(8, "total", "loop wake-up to send(), the sum of the stages"),
  {"server_io_busy_share", K::kNumber, "INFO stages: the server's I/O threads' (owner: the owners') busy time over their busy plus waiting time in the window, 0..1; empty: not reported", "%.4f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.stages.io_busy_share); }},
  {"server_shard_busy_share", K::kNumber, "INFO stages: the same for its other threads (sharded: the shard threads); empty: none or not reported", "%.4f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.stages.other_busy_share); }},
  {"server_busy_us_per_op", K::kNumber, "INFO stages: every server thread's busy microseconds per operation (time working, not waiting for work; a polling thread shows here, not in CPU%); empty: not reported", "%.3f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.stages.busy_us_per_op); }},
  {"server_calls", K::kNumber, "INFO commandstats: commands the server ran in the window, every one but INFO (redis-server's; of a cluster the entry node's); empty: not reported", "count",
   [](const RowSource& s, const char* f) {
     return s.repetition.commands.calls == 0 ? std::string() : CellOf(f, s.repetition.commands.calls);
   }},
  // In ClientPhaseNames()' order (client_phases.h).
  KVLAB_CLIENT_PHASE_COLUMN(0, "build", "building requests"),
  KVLAB_CLIENT_PHASE_COLUMN(1, "send", "in write()"),
  KVLAB_CLIENT_PHASE_COLUMN(2, "wait", "in poll, waiting for replies or a send time"),
  KVLAB_CLIENT_PHASE_COLUMN(3, "receive", "reading, parsing, checking and recording replies"),
  {"server_usec_per_call", K::kNumber, "INFO commandstats: the server's own microseconds inside a command, per call (Redis's usec / calls over the window); empty: not reported", "%.3f",
   [](const RowSource& s, const char* f) { return CellOf(f, s.repetition.commands.usec_per_call); }},
  {"histogram", K::kText, "the JSON file holding the window's latency histogram (--json)", "",
   [](const RowSource& s, const char*) { return HistogramFile(s); }},
  {"status", K::kText, "ok | disturbed (--disturbed-above); a runner adds failed | skipped", "",
   [](const RowSource& s, const char*) { return std::string(s.repetition.watched.disturbed ? "disturbed" : "ok"); }},
  {"note", K::kText, "why the status is not ok", "",
   [](const RowSource& s, const char*) { return DisturbanceNote(s); }},
};
// clang-format on

bool LabelTakes(const std::vector<Label>& labels, std::string_view name) {
  return std::any_of(labels.begin(), labels.end(), [&](const Label& l) { return l.name == name; });
}

std::string JoinFields(const std::vector<std::string>& fields) {
  std::string line;
  for (const std::string& field : fields) {
    if (!line.empty()) line += ',';
    line += CsvField(field);
  }
  return line;
}

}  // namespace

int LoopThreadsOf(const LoadConfig& config) {
  if (config.io.model != IoModel::kEventLoop) return 0;
  return EffectiveLoopThreads(config.io.loop_threads, config.cpus);
}
const char* LoopFlushOf(const LoadConfig& config) {
  return config.io.model == IoModel::kEventLoop ? FlushModeName(config.io.flush) : "";
}

const char* ColumnKindName(ColumnKind kind) {
  switch (kind) {
    case ColumnKind::kNumber:
      return "number";
    case ColumnKind::kText:
      return "text";
    case ColumnKind::kFlag:
      return "flag";
  }
  return "text";
}

const std::vector<PointColumn>& PointColumns() { return kColumns; }

Status ParseLabel(std::string_view text, Label* out) {
  const size_t equals = text.find('=');
  const std::string_view name = text.substr(0, equals);
  const bool named = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
  if (equals == std::string_view::npos || !named) {
    return Status::InvalidArgument("bad --label '" + std::string(text) +
                                   "' (allowed: NAME=VALUE, NAME of a-z, 0-9 and _)");
  }
  *out = {std::string(name), std::string(text.substr(equals + 1))};
  return Status::Ok();
}

Status ValidateLabels(const std::vector<Label>& labels) {
  std::set<std::string> seen;
  for (const Label& label : labels) {
    if (!seen.insert(label.name).second) {
      return Status::InvalidArgument("--label " + label.name + " is given twice");
    }
  }
  return Status::Ok();
}

std::vector<std::string> RowColumns(const std::vector<Label>& labels) {
  std::vector<std::string> names;
  for (const Label& label : labels) names.push_back(label.name);
  for (const PointColumn& column : kColumns) {
    if (!LabelTakes(labels, column.name)) names.push_back(column.name);
  }
  return names;
}

std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string CsvHeader(const std::vector<Label>& labels) { return JoinFields(RowColumns(labels)); }

std::string CsvRow(const std::vector<Label>& labels, const RowSource& source) {
  std::vector<std::string> cells;
  for (const Label& label : labels) cells.push_back(label.value);
  for (const PointColumn& column : kColumns) {
    if (!LabelTakes(labels, column.name)) cells.push_back(column.cell(source, column.cell_format));
  }
  return JoinFields(cells);
}

std::string SchemaJson() {
  JsonWriter json;
  json.BeginObject();
  json.Key("format").String(kPointSchema);
  json.Key("columns").BeginArray();
  for (const PointColumn& column : kColumns) {
    json.BeginObject();
    json.Key("name").String(column.name);
    json.Key("kind").String(ColumnKindName(column.kind));
    json.Key("meaning").String(column.meaning);
    json.Key("cell_format").String(column.cell_format);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  return json.text() + "\n";
}

}  // namespace kvlab::harness
