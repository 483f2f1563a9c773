// Redis's glob matching (stringmatchlen in src/util.c): *, ?, [abc], [^a-z]
// and backslash escapes, optionally case-insensitive. KEYS, SCAN and the
// container scans (HSCAN, SSCAN, ZSCAN) match with it; CONFIG GET too.
//
// Pure function; thread-safe.
#pragma once

#include <string_view>

namespace kvlab {

bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase);

}  // namespace kvlab
