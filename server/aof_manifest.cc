#include "server/aof_manifest.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "server/file_writes.h"

namespace kvlab {
namespace {

constexpr std::string_view kHeader = "kvlab-aof-manifest 1";

// A file name a manifest may hold: no folder, nothing a line could hide.
bool PlainName(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    if (c == '/' || c == ' ' || c == '\n' || c == '\r' || c == '\0') return false;
  }
  return true;
}

}  // namespace

std::string AofManifest::Render() const {
  std::string out(kHeader);
  out += "\nnext-generation " + std::to_string(next_generation) + "\n";
  for (const AofSegment& segment : segments) {
    out += "segment " + segment.layout;
    for (const std::string& file : segment.files) out += " " + file;
    out += "\n";
  }
  return out;
}

Status AofManifest::Parse(const std::string& text, AofManifest* manifest) {
  *manifest = AofManifest{};
  std::istringstream lines(text);
  std::string line;
  if (!std::getline(lines, line) || line != kHeader) {
    return Status::InvalidArgument("the manifest does not start with '" + std::string(kHeader) +
                                   "'");
  }
  bool generation_seen = false;
  int number = 1;
  while (std::getline(lines, line)) {
    ++number;
    std::istringstream words(line);
    std::string what;
    words >> what;
    const std::string where = " (manifest line " + std::to_string(number) + ")";
    if (what == "next-generation") {
      std::string value;
      words >> value;
      char* end = nullptr;
      errno = 0;
      const unsigned long long parsed = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno != 0 || parsed == 0) {
        return Status::InvalidArgument("a bad next-generation" + where);
      }
      manifest->next_generation = parsed;
      generation_seen = true;
    } else if (what == "segment") {
      AofSegment segment;
      words >> segment.layout;
      std::string file;
      while (words >> file) {
        if (!PlainName(file)) return Status::InvalidArgument("a bad file name" + where);
        segment.files.push_back(file);
      }
      size_t lanes = 1;
      if (segment.layout != "one") {
        const size_t slash = segment.layout.find('/');
        char* end = nullptr;
        const std::string count =
            slash == std::string::npos ? "" : segment.layout.substr(slash + 1);
        lanes = std::strtoul(count.c_str(), &end, 10);
        if (slash == 0 || count.empty() || *end != '\0' || lanes == 0) {
          return Status::InvalidArgument("a bad segment layout '" + segment.layout + "'" + where);
        }
      }
      if (segment.files.size() != lanes) {
        return Status::InvalidArgument("a segment whose files do not match its layout" + where);
      }
      manifest->segments.push_back(std::move(segment));
    } else if (!what.empty()) {
      return Status::InvalidArgument("an unknown line '" + what + "'" + where);
    }
  }
  if (!generation_seen) return Status::InvalidArgument("the manifest has no next-generation");
  return Status::Ok();
}

Status AofManifest::Read(const std::string& path, AofManifest* manifest, bool* found) {
  *manifest = AofManifest{};
  std::ifstream file(path, std::ios::binary);
  *found = static_cast<bool>(file);
  if (!file) {
    if (errno == ENOENT) return Status::Ok();
    return Status::InvalidArgument("cannot read " + path + ": " + std::strerror(errno));
  }
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (Status parsed = Parse(text, manifest); !parsed.ok()) {
    return Status::InvalidArgument("the append-only manifest " + path +
                                   " is corrupt: " + parsed.message());
  }
  return Status::Ok();
}

Status AofManifest::Write(const std::string& path) const {
  const std::string temp = path + ".tmp";
  const std::string text = Render();
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::InvalidArgument("cannot write " + temp + ": " + std::strerror(errno));
  bool ok = WriteFully(fd, text);
  ok = ok && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string error = std::strerror(errno);
    ::unlink(temp.c_str());
    return Status::InvalidArgument("cannot replace " + path + ": " + error);
  }
  if (!SyncFolder(FolderOf(path))) {
    return Status::InvalidArgument("cannot fsync the folder of " + path + ": " +
                                   std::strerror(errno));
  }
  return Status::Ok();
}

std::string ManifestPath(const std::string& log_path) { return log_path + ".manifest"; }

std::string FolderOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

}  // namespace kvlab
