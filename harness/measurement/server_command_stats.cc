#include "harness/measurement/server_command_stats.h"

#include <cmath>

#include "harness/measurement/info_fields.h"

namespace kvlab::harness {

CommandStatFigures::CommandStatFigures() : usec_per_call(NAN), boundary_lag_s(NAN) {}

CommandStatTotals ParseCommandStatTotals(std::string_view info) {
  constexpr std::string_view kPrefix = "cmdstat_";
  CommandStatTotals totals;
  ForEachInfoLine(info, [&](std::string_view line) {
    if (line.substr(0, kPrefix.size()) != kPrefix) return;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    const std::string_view name = line.substr(kPrefix.size(), colon - kPrefix.size());
    const std::string_view fields = line.substr(colon + 1);
    double calls = 0, usec = 0, failed = 0;
    if (!InfoFieldValue(fields, "calls", &calls) || !InfoFieldValue(fields, "usec", &usec)) return;
    totals.reported = true;
    // The harness's own INFO at every boundary is not the workload's.
    if (name == "info") return;
    totals.calls += static_cast<uint64_t>(calls);
    totals.usec += usec;
    if (InfoFieldValue(fields, "failed_calls", &failed)) {
      totals.failed_calls += static_cast<uint64_t>(failed);
    }
  });
  return totals;
}

namespace {

// A reply read before its boundary (a clock step, a fake) lags by nothing.
double LagSeconds(uint64_t boundary_ns, uint64_t read_at_ns) {
  return read_at_ns > boundary_ns ? static_cast<double>(read_at_ns - boundary_ns) / 1e9 : 0.0;
}

}  // namespace

CommandStatFigures CommandStatsBetween(const CommandStatTotals& start, uint64_t start_at_ns,
                                       const CommandStatTotals& end, uint64_t end_at_ns) {
  CommandStatFigures figures;
  if (!start.reported || !end.reported || end.calls <= start.calls || end.usec < start.usec) {
    return figures;
  }
  figures.calls = end.calls - start.calls;
  figures.usec_per_call = (end.usec - start.usec) / static_cast<double>(figures.calls);
  figures.boundary_lag_s =
      LagSeconds(start_at_ns, start.read_at_ns) + LagSeconds(end_at_ns, end.read_at_ns);
  if (end.failed_calls >= start.failed_calls) {
    figures.failed_calls = end.failed_calls - start.failed_calls;
  }
  return figures;
}

}  // namespace kvlab::harness
