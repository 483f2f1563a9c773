// Result files of a sweep, both written as each repetition completes so
// that nothing measured is lost if the run later fails or is interrupted:
//
// CsvResultFile — one row per point and repetition, flushed per row:
//   threads,client,transport,pipeline,connections,repetition,ops,seconds,
//   ops_per_s,errors,p50_us,p90_us,p99_us,p999_us,max_us,client_cpu,
//   client_bound,command,keys,key_dist,value_size,rate,nodelay,mean_us,
//   misses,wrong_type,usable_cores,server_cpu,arrival,refill,achieved_rate,
//   behind,backlog,busiest_thread_cpu,allowed_cores
// (client_cpu/server_cpu/busiest_thread_cpu in cores' worth of CPU;
// server_cpu empty when the server does not report INFO cpu; achieved_rate,
// behind and backlog are 0/false in closed loop).
//
// JsonResultFile — one self-explaining document, rewritten atomically
// (temp file + rename) after each repetition, so it is valid JSON on disk at
// every moment: {"format", "status", "error", "command_line", "config",
// "machine", "server_info", "points": [{..., "repetitions": [{...,
// "slices": {"nominal_s": 0.1, "columns": ["start_s", "seconds", "ops"],
// "rows": [[...], ...]}, "histogram": {"unit": "ns", "count", "min", "max",
// "buckets": [[lower, upper, count], ...]}}], "merged": {"repetitions",
// "ops", "errors", "seconds", "ops_per_s", "backlog", "p50_us" .. "mean_us",
// "histogram"}}]} — "merged" is the point over all repetitions, its
// percentiles from the merged histogram.
//
// Thread safety: not thread-safe; owned by the thread running the sweep.
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "harness/machine_info.h"
#include "harness/status.h"
#include "harness/sweep.h"

namespace kvlab::harness {

class CsvResultFile {
 public:
  static Status Create(const std::string& path, const LoadConfig& config,
                       std::unique_ptr<CsvResultFile>* out);
  ~CsvResultFile();
  CsvResultFile(const CsvResultFile&) = delete;
  CsvResultFile& operator=(const CsvResultFile&) = delete;

  static const char* Header();
  Status Append(const PointResult& point, const RepetitionResult& repetition);

 private:
  CsvResultFile(std::FILE* file, const LoadConfig& config) : file_(file), config_(config) {}

  std::FILE* file_;
  const LoadConfig config_;
};

// Everything the JSON document says besides the points.
struct RunDescription {
  std::vector<std::string> command_line;
  LoadConfig config;
  MachineInfo machine;
  std::map<std::string, std::string> server_info;  // INFO server
};

class JsonResultFile {
 public:
  JsonResultFile(std::string path, RunDescription description)
      : path_(std::move(path)), description_(std::move(description)) {}

  // Rewrites the whole document. `status` is "running", "complete",
  // "failed" or "cancelled"; `error` is empty unless failed/cancelled.
  Status Write(const std::vector<PointResult>& points, const std::string& status,
               const std::string& error) const;

  // The document as Write would store it.
  std::string Render(const std::vector<PointResult>& points, const std::string& status,
                     const std::string& error) const;

 private:
  std::string path_;
  RunDescription description_;
};

}  // namespace kvlab::harness
