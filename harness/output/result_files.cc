#include "harness/output/result_files.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "harness/clients/event_loop.h"
#include "harness/output/json_writer.h"
#include "harness/output/point_record.h"

namespace kvlab::harness {
namespace {

Status FileError(const std::string& what, const std::string& path) {
  return Status::IoError(what + " " + path + ": " + std::strerror(errno));
}

void WriteConfig(JsonWriter& json, const LoadConfig& config) {
  json.BeginObject();
  json.Key("target").String(config.target.ToUrl());
  json.Key("transport").String(TransportName(config.target.transport));
  json.Key("client").String(ClientKindName(config.client));
  json.Key("threads").BeginArray();
  for (int threads : config.threads) json.Integer(threads);
  json.EndArray();
  json.Key("connections").Integer(config.connections);
  json.Key("pipeline").Integer(config.pipeline);
  json.Key("command").String(CommandLabel(config.workload));
  json.Key("ratio").String(std::to_string(config.workload.mix_set_ratio) + ":" +
                           std::to_string(config.workload.mix_get_ratio));
  json.Key("keys").Unsigned(config.workload.keys);
  json.Key("key_prefix").String(config.workload.key_prefix);
  json.Key("key_dist").String(KeyDistributionName(config.workload));
  json.Key("value_size").String(ValueSizeName(config.workload));
  json.Key("increment").Integer(config.workload.increment);
  json.Key("seed").Unsigned(config.workload.seed);
  json.Key("duration_s").Number(config.duration_s);
  json.Key("warmup_s").Number(config.warmup_s);
  json.Key("repetitions").Integer(config.repetitions);
  json.Key("rate").Number(config.rate);
  json.Key("arrival").String(ArrivalKindName(config.arrival));
  json.Key("refill").String(RefillModeName(config.refill));
  json.Key("nodelay").Bool(config.tcp_nodelay);
  json.Key("cpus").BeginArray();
  for (int cpu : config.cpus) json.Integer(cpu);
  json.EndArray();
  json.Key("prefill").Bool(config.prefill);
  json.Key("flush").Bool(config.flush);
  json.Key("connect_timeout_s").Number(config.connect_timeout_s);
  json.Key("reply_timeout_s").Number(config.reply_timeout_s);
  json.Key("io").String(IoModelName(config.io.model));
  json.Key("loop_threads").Integer(LoopThreadsOf(config));
  json.Key("io_flush").String(LoopFlushOf(config));
  json.EndObject();
}

void WritePercentiles(JsonWriter& json, const RepetitionResult& r) {
  json.Key("p50_us").Number(r.p50_us);
  json.Key("p90_us").Number(r.p90_us);
  json.Key("p99_us").Number(r.p99_us);
  json.Key("p999_us").Number(r.p999_us);
  json.Key("max_us").Number(r.max_us);
  json.Key("mean_us").Number(r.mean_us);
}

// The point over all its repetitions: ops, seconds, and the percentiles of
// the merged histogram.
void WriteMerged(JsonWriter& json, const PointResult& point) {
  RepetitionResult merged;
  merged.latency = MergedLatency(point);
  SetPercentiles(&merged);
  uint64_t ops = 0, errors = 0, backlog = 0;
  double seconds = 0;
  for (const RepetitionResult& r : point.repetitions) {
    ops += r.ops;
    errors += r.errors;
    seconds += r.seconds;
    backlog += r.backlog;
  }
  json.BeginObject();
  json.Key("repetitions").Integer(static_cast<int64_t>(point.repetitions.size()));
  json.Key("ops").Unsigned(ops);
  json.Key("errors").Unsigned(errors);
  json.Key("seconds").Number(seconds);
  json.Key("ops_per_s").Number(seconds > 0 ? ops / seconds : 0);
  json.Key("backlog").Unsigned(backlog);
  WritePercentiles(json, merged);
  json.Key("histogram");
  WriteHistogram(json, merged.latency);
  json.EndObject();
}

void WriteRepetition(JsonWriter& json, const RepetitionResult& r) {
  json.BeginObject();
  json.Key("repetition").Integer(r.repetition);
  json.Key("ops").Unsigned(r.ops);
  json.Key("errors").Unsigned(r.errors);
  json.Key("wrong_type").Unsigned(r.wrong_type);
  json.Key("misses").Unsigned(r.misses);
  json.Key("seconds").Number(r.seconds);
  json.Key("ops_per_s").Number(r.ops_per_s);
  json.Key("offered_rate").Number(r.offered_rate);
  json.Key("achieved_rate").Number(r.achieved_rate);
  json.Key("behind").Bool(r.behind);
  json.Key("backlog").Unsigned(r.backlog);
  WritePercentiles(json, r);
  json.Key("client_cpu").Number(r.client_cpu);
  json.Key("busiest_thread_cpu").Number(r.busiest_thread_cpu);
  json.Key("usable_cores").Integer(r.usable_cores);
  json.Key("allowed_cores").Number(r.allowed_cores);
  json.Key("client_bound").Bool(r.client_bound);
  json.Key("server_cpu");
  if (r.server_cpu >= 0)
    json.Number(r.server_cpu);
  else
    json.Null();
  json.Key("client_cs_per_op").Number(r.client_cs_per_op);
  json.Key("loop_wakeups_per_op");
  if (r.loop_wakeups_per_op >= 0)
    json.Number(r.loop_wakeups_per_op);
  else
    json.Null();
  json.Key("slices").BeginObject();
  json.Key("nominal_s").Number(kSliceSeconds);
  json.Key("columns").BeginArray().String("start_s").String("seconds").String("ops").EndArray();
  json.Key("rows").BeginArray();
  for (const ThroughputSlice& slice : r.slices) {
    json.BeginArray().Number(slice.start_s).Number(slice.seconds).Unsigned(slice.ops).EndArray();
  }
  json.EndArray();
  json.EndObject();
  json.Key("histogram");
  WriteHistogram(json, r.latency);
  json.EndObject();
}

}  // namespace

void WriteHistogram(JsonWriter& json, const LatencyHistogram& latency) {
  json.BeginObject();
  json.Key("unit").String("ns");
  json.Key("count").Unsigned(latency.count());
  json.Key("min").Unsigned(latency.min_ns());
  json.Key("max").Unsigned(latency.max_ns());
  json.Key("buckets").BeginArray();
  for (const LatencyHistogram::Bucket& bucket : latency.NonEmptyBuckets()) {
    json.BeginArray()
        .Unsigned(bucket.lower_ns)
        .Unsigned(bucket.upper_ns)
        .Unsigned(bucket.count)
        .EndArray();
  }
  json.EndArray();
  json.EndObject();
}

Status CsvResultFile::Create(const std::string& path, const LoadConfig& config,
                             std::vector<Label> labels, std::string histogram,
                             std::unique_ptr<CsvResultFile>* out) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return FileError("cannot create", path);
  out->reset(new CsvResultFile(file, config, std::move(labels), std::move(histogram)));
  if (std::fprintf(file, "%s\n", CsvHeader((*out)->labels_).c_str()) < 0 ||
      std::fflush(file) != 0) {
    return FileError("cannot write", path);
  }
  return Status::Ok();
}

CsvResultFile::~CsvResultFile() { std::fclose(file_); }

Status CsvResultFile::Append(const PointResult& point, const RepetitionResult& r) {
  const std::string row = CsvRow(labels_, {config_, point, r, histogram_});
  if (std::fprintf(file_, "%s\n", row.c_str()) < 0 || std::fflush(file_) != 0) {
    return Status::IoError("cannot append to the CSV file");
  }
  return Status::Ok();
}

std::string JsonResultFile::Render(const std::vector<PointResult>& points,
                                   const std::string& status, const std::string& error) const {
  JsonWriter json;
  json.BeginObject();
  json.Key("format").String("kvlab-load/1");
  json.Key("points_schema").String(kPointSchema);
  json.Key("status").String(status);
  json.Key("error").String(error);
  json.Key("command_line").BeginArray();
  for (const std::string& arg : description_.command_line) json.String(arg);
  json.EndArray();
  json.Key("config");
  WriteConfig(json, description_.config);
  const MachineInfo& machine = description_.machine;
  json.Key("machine").BeginObject();
  json.Key("cpu_model").String(machine.cpu_model);
  json.Key("cores").Integer(machine.cores);
  json.Key("usable_cores").Integer(machine.usable_cores);
  json.Key("kernel").String(machine.kernel);
  json.Key("hostname").String(machine.hostname);
  json.Key("compiler").String(machine.compiler);
  json.Key("hiredis").String(machine.hiredis_version);
  json.Key("irq_time").String(machine.irq_time);
  // What the watch left out of others' work per sleep of ours (wake_cost.h); < 0: not measured.
  json.Key("wake_cost_us").Number(description_.config.watch.wake_cost_seconds * 1e6);
  json.EndObject();
  json.Key("server_info").BeginObject();
  for (const auto& [key, value] : description_.server_info) json.Key(key).String(value);
  json.EndObject();
  json.Key("points").BeginArray();
  for (const PointResult& point : points) {
    json.BeginObject();
    json.Key("threads").Integer(point.threads);
    json.Key("client").String(ClientKindName(point.client));
    json.Key("transport").String(TransportName(description_.config.target.transport));
    json.Key("connections").Integer(point.connections);
    json.Key("pipeline").Integer(point.pipeline);
    json.Key("complete").Bool(point.complete);
    json.Key("incrby_sum").Integer(point.incrby_sum);
    json.Key("repetitions").BeginArray();
    for (const RepetitionResult& repetition : point.repetitions) WriteRepetition(json, repetition);
    json.EndArray();
    json.Key("merged");
    WriteMerged(json, point);
    json.EndObject();
  }
  json.EndArray();
  json.EndObject();
  return json.text() + "\n";
}

Status JsonResultFile::Write(const std::vector<PointResult>& points, const std::string& status,
                             const std::string& error) const {
  const std::string text = Render(points, status, error);
  const std::string temporary = path_ + ".tmp";
  std::FILE* file = std::fopen(temporary.c_str(), "w");
  if (file == nullptr) return FileError("cannot create", temporary);
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const bool flushed = std::fflush(file) == 0 && fsync(fileno(file)) == 0;
  if (std::fclose(file) != 0 || !written || !flushed) return FileError("cannot write", temporary);
  if (std::rename(temporary.c_str(), path_.c_str()) != 0)
    return FileError("cannot rename to", path_);
  return Status::Ok();
}

}  // namespace kvlab::harness
