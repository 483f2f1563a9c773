#include "harness/measurement/server_stages.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace kvlab::harness {

const std::array<const char*, kServerStageCount>& ServerStageNames() {
  static const std::array<const char*, kServerStageCount> kNames = {
      "read", "parse", "dispatch", "queue", "execute", "return", "render", "write", "total"};
  return kNames;
}

StageFigures::StageFigures() { us_per_request.fill(NAN); }

namespace {

// The number after `key=` in a "k=v,k=v" list; false when it is absent.
bool FieldValue(std::string_view fields, std::string_view key, double* value) {
  size_t at = 0;
  while (at < fields.size()) {
    const size_t comma = fields.find(',', at);
    const std::string_view field =
        fields.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    if (field.size() > key.size() && field.substr(0, key.size()) == key &&
        field[key.size()] == '=') {
      *value = std::strtod(std::string(field.substr(key.size() + 1)).c_str(), nullptr);
      return true;
    }
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return false;
}

}  // namespace

StageTotals ParseStageTotals(std::string_view info) {
  StageTotals totals;
  const auto& names = ServerStageNames();
  size_t at = 0;
  while (at < info.size()) {
    size_t end = info.find('\n', at);
    if (end == std::string_view::npos) end = info.size();
    std::string_view line = info.substr(at, end - at);
    at = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, 6) != "stage_") continue;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(6, colon - 6);
    for (size_t i = 0; i < names.size(); ++i) {
      if (name != names[i]) continue;
      double calls = 0, usec = 0;
      const std::string_view fields = line.substr(colon + 1);
      if (FieldValue(fields, "calls", &calls) && FieldValue(fields, "usec", &usec)) {
        totals.calls[i] = static_cast<uint64_t>(calls);
        totals.usec[i] = usec;
        totals.reported = true;
      }
    }
  }
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
