// AofManifest: the list of files that together make a log of several lanes
// (lane_log.h), in replay order — what Redis 7's appendonly.aof.manifest is
// to its base and incremental files.
//
// A manifest is a short text file beside the log, `<appendfilename>.manifest`:
//   kvlab-aof-manifest 1
//   next-generation 7
//   segment one appendonly.aof.5.base
//   segment sharded/4 appendonly.aof.6.0 appendonly.aof.6.1 appendonly.aof.6.2 appendonly.aof.6.3
// A segment is replayed whole before the next. Its layout says how its
// files split the keyspace: `one` for a single file (a rewrite's snapshot,
// an older log of one file), `<engine>/<lanes>` for one file per lane of
// that engine (each key's writes in one lane's file, so the lanes may be
// replayed side by side). Files are named relative to the manifest's folder.
// Written whole to a temporary file, fsynced and renamed over the old one,
// so a crash leaves the old manifest or the new one, never half of either.
//
// A plain value type; not synchronised.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace kvlab {

struct AofSegment {
  std::string layout;  // "one", or "<engine>/<lanes>"
  std::vector<std::string> files;
};

struct AofManifest {
  uint64_t next_generation = 1;
  std::vector<AofSegment> segments;

  std::string Render() const;
  // InvalidArgument for anything but a well-formed manifest (the loader
  // refuses to start on it, as on a corrupt log).
  static Status Parse(const std::string& text, AofManifest* manifest);
  // Reads `path`: *found false (and an empty manifest) when it does not exist.
  static Status Read(const std::string& path, AofManifest* manifest, bool* found);
  // Replaces `path` atomically (a temporary file, fsync, rename, the folder fsynced).
  Status Write(const std::string& path) const;
};

// The manifest of the log `<folder>/<name>`.
std::string ManifestPath(const std::string& log_path);
// The folder part of `path`, with its trailing slash ("" for a bare name).
std::string FolderOf(const std::string& path);

}  // namespace kvlab
