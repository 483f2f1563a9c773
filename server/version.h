// The server's two versions, each written once: kvlab's own (the CMake
// project version, passed in as KVLAB_VERSION) and the Redis release whose
// replies kvlab reproduces, reported as redis_version so that clients that
// check the version take their 7.0 paths. INFO, HELLO and --version read them.
#pragma once

#include <string>

namespace kvlab {

inline constexpr const char* kKvlabVersion = KVLAB_VERSION;
inline constexpr const char* kRedisCompatVersion = "7.0.15";

// What `kvlab-server --version` prints (without the newline).
inline std::string VersionLine() {
  return std::string("kvlab-server ") + kKvlabVersion + " (RESP2, Redis " + kRedisCompatVersion +
         " compatible replies)";
}

}  // namespace kvlab
