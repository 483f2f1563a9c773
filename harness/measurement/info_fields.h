// Reading INFO's text: its lines, and the numbers of a "k=v,k=v" field list
// ("stage_queue:calls=3,usec=12", "cmdstat_set:calls=5,usec=9,..."). The
// harness speaks RESP only; this is how it reads what a server reports.
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

namespace kvlab::harness {

// Calls `each(line)` for every line of `info`, without its "\r\n".
template <class Each>
void ForEachInfoLine(std::string_view info, Each&& each) {
  size_t at = 0;
  while (at < info.size()) {
    size_t end = info.find('\n', at);
    if (end == std::string_view::npos) end = info.size();
    std::string_view line = info.substr(at, end - at);
    at = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    each(line);
  }
}

// The number after `key=` in a "k=v,k=v" list; false when it is absent or
// not a number.
bool InfoFieldValue(std::string_view fields, std::string_view key, double* value);

}  // namespace kvlab::harness
