// Result files of a sweep, both written as each repetition completes so
// that nothing measured is lost if the run later fails or is interrupted:
//
// CsvResultFile — one row per point and repetition, flushed per row: the
//   point record (harness/output/point_record.h: the caller's labels, then the
//   measured columns).
//
// JsonResultFile — one self-explaining document, rewritten atomically
// (temp file + rename) after each repetition, so it is valid JSON on disk at
// every moment: {"format", "points_schema", "status", "error", "command_line", "config",
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

#include "harness/output/json_writer.h"
#include "harness/measurement/latency_histogram.h"
#include "harness/measurement/machine_info.h"
#include "harness/output/point_record.h"
#include "harness/status.h"
#include "harness/sweep.h"

namespace kvlab::harness {

// A histogram as the documents hold it: {"unit": "ns", "count", "min", "max",
// "buckets": [[lower, upper, count], ...]} (non-empty buckets only).
void WriteHistogram(JsonWriter& json, const LatencyHistogram& latency);

class CsvResultFile {
 public:
  // `histogram`: the JSON file's path as the rows name it ("" when none).
  static Status Create(const std::string& path, const LoadConfig& config, std::vector<Label> labels,
                       std::string histogram, std::unique_ptr<CsvResultFile>* out);
  ~CsvResultFile();
  CsvResultFile(const CsvResultFile&) = delete;
  CsvResultFile& operator=(const CsvResultFile&) = delete;

  Status Append(const PointResult& point, const RepetitionResult& repetition);

 private:
  CsvResultFile(std::FILE* file, const LoadConfig& config, std::vector<Label> labels,
                std::string histogram)
      : file_(file),
        config_(config),
        labels_(std::move(labels)),
        histogram_(std::move(histogram)) {}

  std::FILE* file_;
  const LoadConfig config_;
  const std::vector<Label> labels_;
  const std::string histogram_;
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
