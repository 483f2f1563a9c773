// AppendLogLoad: what loading the append-only file at start found, kept for
// INFO persistence (aof_loader.h does the loading).
//
// A plain value type; written once before the first client is accepted.
#pragma once

#include <cstdint>

namespace kvlab {

struct AppendLogLoad {
  uint64_t loaded_bytes = 0;   // the whole units replayed
  uint64_t dropped_bytes = 0;  // a truncated tail left out (and cut off)
  uint64_t commands = 0;
  double seconds = 0;
};

}  // namespace kvlab
