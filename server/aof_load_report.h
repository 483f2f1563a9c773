// AppendLogLoad: what loading the append-only file at start found, kept for
// INFO persistence (aof_loader.h does the loading).
//
// A plain value type; written once before the first client is accepted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvlab {

struct AppendLogLoad {
  uint64_t loaded_bytes = 0;   // the whole units replayed
  uint64_t dropped_bytes = 0;  // a truncated tail left out (and cut off)
  uint64_t commands = 0;
  double seconds = 0;

  // The files, as found: one segment of one file for a log without a
  // manifest (when the file exists), else the manifest's (aof_manifest.h).
  struct File {
    std::string name;          // relative to the log's folder
    uint64_t valid_bytes = 0;  // what the replay kept: the file is cut there
  };
  struct Segment {
    std::string layout;
    std::vector<File> files;
  };
  bool has_manifest = false;
  uint64_t next_generation = 1;
  std::vector<Segment> segments;
  uint64_t max_group = 0;          // the largest group id in the lanes' files
  uint64_t incomplete_groups = 0;  // groups a lane stopped at: left out
};

}  // namespace kvlab
