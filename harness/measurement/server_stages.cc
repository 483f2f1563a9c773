#include "harness/measurement/server_stages.h"

#include <cmath>

#include "harness/measurement/info_fields.h"

namespace kvlab::harness {

const std::array<const char*, kServerStageCount>& ServerStageNames() {
  static const std::array<const char*, kServerStageCount> kNames = {
      "read", "parse", "dispatch", "queue", "execute", "return", "render", "write", "total"};
  return kNames;
}

StageFigures::StageFigures() : io_busy_share(NAN), other_busy_share(NAN), busy_us_per_op(NAN) {
  us_per_request.fill(NAN);
}

namespace {

// Adds a "thread_<name>:busy_usec=B,wait_usec=W" line to its group.
void AddThreadLine(std::string_view line, StageTotals* totals) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return;
  double busy = 0, wait = 0;
  const std::string_view fields = line.substr(colon + 1);
  if (!InfoFieldValue(fields, "busy_usec", &busy) || !InfoFieldValue(fields, "wait_usec", &wait)) {
    return;
  }
  const bool io = line.substr(7, 2) == "io";
  ThreadTimeTotals& group = io ? totals->io_threads : totals->other_threads;
  group.threads += 1;
  group.busy_usec += busy;
  group.wait_usec += wait;
}

// The group's busy and waiting time in the window; false when there is no
// such figure (see StageFigures).
bool ThreadTimeBetween(const ThreadTimeTotals& start, const ThreadTimeTotals& end, double* busy,
                       double* wait) {
  if (start.threads == 0 || start.threads != end.threads) return false;
  *busy = end.busy_usec - start.busy_usec;
  *wait = end.wait_usec - start.wait_usec;
  return *busy >= 0 && *wait >= 0 && *busy + *wait > 0;
}

}  // namespace

StageTotals ParseStageTotals(std::string_view info) {
  StageTotals totals;
  const auto& names = ServerStageNames();
  ForEachInfoLine(info, [&](std::string_view line) {
    if (line.substr(0, 7) == "thread_") AddThreadLine(line, &totals);
    if (line.substr(0, 6) != "stage_") return;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    const std::string_view name = line.substr(6, colon - 6);
    for (size_t i = 0; i < names.size(); ++i) {
      if (name != names[i]) continue;
      double calls = 0, usec = 0;
      const std::string_view fields = line.substr(colon + 1);
      if (InfoFieldValue(fields, "calls", &calls) && InfoFieldValue(fields, "usec", &usec)) {
        totals.calls[i] = static_cast<uint64_t>(calls);
        totals.usec[i] = usec;
        totals.reported = true;
      }
    }
  });
  return totals;
}

StageFigures StagesBetween(const StageTotals& start, const StageTotals& end, uint64_t ops) {
  StageFigures figures;
  double io_busy = 0, io_wait = 0, other_busy = 0, other_wait = 0;
  const bool io = ThreadTimeBetween(start.io_threads, end.io_threads, &io_busy, &io_wait);
  const bool other =
      ThreadTimeBetween(start.other_threads, end.other_threads, &other_busy, &other_wait);
  if (io) figures.io_busy_share = io_busy / (io_busy + io_wait);
  if (other) figures.other_busy_share = other_busy / (other_busy + other_wait);
  // Every thread or no figure: a group that went back or stopped would
  // leave only part of the server's busy time.
  const bool every_group = io && (other || end.other_threads.threads == 0);
  if (every_group && ops > 0) {
    figures.busy_us_per_op = (io_busy + (other ? other_busy : 0)) / static_cast<double>(ops);
  }
  if (!start.reported || !end.reported) return figures;
  const size_t total = kServerStageCount - 1;
  // A CONFIG RESETSTAT inside the window makes the totals go back: no figure.
  if (end.calls[total] <= start.calls[total]) return figures;
  figures.samples = end.calls[total] - start.calls[total];
  for (size_t i = 0; i < kServerStageCount; ++i) {
    if (end.calls[i] <= start.calls[i]) continue;  // not recorded in the window: absent
    figures.us_per_request[i] =
        (end.usec[i] - start.usec[i]) / static_cast<double>(figures.samples);
  }
  return figures;
}

}  // namespace kvlab::harness
