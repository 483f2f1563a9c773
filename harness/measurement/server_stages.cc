#include "harness/measurement/server_stages.h"

#include <cmath>

#include "harness/measurement/info_fields.h"

namespace kvlab::harness {

const std::array<const char*, kServerStageCount>& ServerStageNames() {
  static const std::array<const char*, kServerStageCount> kNames = {
      "read", "parse", "dispatch", "queue", "execute", "return", "render", "write", "total"};
  return kNames;
}

StageFigures::StageFigures() { us_per_request.fill(NAN); }

StageTotals ParseStageTotals(std::string_view info) {
  StageTotals totals;
  const auto& names = ServerStageNames();
  ForEachInfoLine(info, [&](std::string_view line) {
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

StageFigures StagesBetween(const StageTotals& start, const StageTotals& end) {
  StageFigures figures;
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
