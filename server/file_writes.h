// Writing a file whole and making a rename durable: the two steps every
// file of the append-only log needs (append_log.h, lane_log.h,
// aof_manifest.h), in one place.
//
// Pure functions over file descriptors and paths; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace kvlab {

// Writes every byte of `bytes` to `fd`, again after EINTR and short
// writes; false (errno set) on an error.
bool WriteFully(int fd, std::string_view bytes);

// fsyncs the folder `folder` ("" for the working folder), so that a
// rename or a new file in it survives a crash; false if it cannot.
bool SyncFolder(const std::string& folder);

}  // namespace kvlab
