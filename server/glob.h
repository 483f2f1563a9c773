// Redis's glob matching (stringmatchlen in src/util.c): *, ?, [abc], [^a-z]
// and backslash escapes, optionally case-insensitive. CONFIG GET uses it.
//
// Pure function; thread-safe.
#pragma once

#include <string_view>

namespace kvlab {

bool GlobMatch(std::string_view pattern, std::string_view text, bool nocase);

}  // namespace kvlab
