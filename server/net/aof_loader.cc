#include "server/net/aof_loader.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <future>
#include <iterator>
#include <memory>
#include <sstream>

#include "engines/clock.h"
#include "server/aof_manifest.h"
#include "server/aof_record.h"
#include "server/net/lane_merge.h"
#include "server/commands/arguments.h"
#include "server/session.h"

namespace kvlab {
namespace {

// Replayed in pieces of about this many bytes of whole units: the Session
// queues one engine batch per piece, not one for the whole log.
constexpr uint64_t kReplayPieceBytes = 1 << 20;

// A strict reader of RESP command arrays. Running out of bytes is a
// truncation; a wrong byte is corruption.
class Framing {
 public:
  enum class Outcome { kOk, kTruncated, kCorrupt };
  explicit Framing(std::string_view bytes) : bytes_(bytes) {}

  // One command at `pos_`; its first argument in *name.
  Outcome Next(std::string_view* name) {
    int64_t count = 0;
    if (Outcome got = Number('*', &count); got != Outcome::kOk) return got;
    if (count < 1) return Corrupt("a command of no arguments");
    for (int64_t i = 0; i < count; ++i) {
      int64_t length = 0;
      if (Outcome got = Number('$', &length); got != Outcome::kOk) return got;
      if (length < 0) return Corrupt("a negative bulk length");
      const uint64_t need = static_cast<uint64_t>(length) + 2;
      if (bytes_.size() - pos_ < need) return Outcome::kTruncated;
      if (bytes_.compare(pos_ + length, 2, "\r\n") != 0) {
        return Corrupt("a bulk string not followed by CRLF");
      }
      if (i == 0) *name = bytes_.substr(pos_, static_cast<size_t>(length));
      pos_ += need;
    }
    return Outcome::kOk;
  }
  // An annotation line at `pos_` (it starts with '#'), without its CRLF;
  // false if the bytes end before its CRLF.
  bool Annotation(std::string_view* line) {
    const size_t crlf = bytes_.find("\r\n", pos_);
    if (crlf == std::string_view::npos) return false;
    *line = bytes_.substr(pos_, crlf - pos_);
    pos_ = crlf + 2;
    return true;
  }
  uint64_t pos() const { return pos_; }
  bool done() const { return pos_ == bytes_.size(); }
  const std::string& error() const { return error_; }

 private:
  // `marker`, a decimal number, CRLF.
  Outcome Number(char marker, int64_t* value) {
    const uint64_t start = pos_;
    if (pos_ >= bytes_.size()) return Outcome::kTruncated;
    if (bytes_[pos_] != marker) {
      return Corrupt(std::string("expected '") + marker + "' at byte " + std::to_string(start));
    }
    uint64_t at = pos_ + 1;
    int64_t number = 0;
    bool negative = false, digits = false;
    if (at < bytes_.size() && bytes_[at] == '-') {
      negative = true;
      ++at;
    }
    while (at < bytes_.size() && bytes_[at] >= '0' && bytes_[at] <= '9') {
      if (number > (int64_t{1} << 40)) return Corrupt("a length too large");
      number = number * 10 + (bytes_[at] - '0');
      digits = true;
      ++at;
    }
    if (at >= bytes_.size()) return Outcome::kTruncated;
    if (!digits || bytes_[at] != '\r') return Corrupt("a malformed length");
    if (at + 1 >= bytes_.size()) return Outcome::kTruncated;
    if (bytes_[at + 1] != '\n') return Corrupt("a malformed length");
    pos_ = at + 2;
    *value = negative ? -number : number;
    return Outcome::kOk;
  }
  Outcome Corrupt(std::string what) {
    error_ = std::move(what);
    return Outcome::kCorrupt;
  }

  std::string_view bytes_;
  uint64_t pos_ = 0;
  std::string error_;
};

// Drives a Session through the log's pieces on the loop's thread: Process()
// again whenever the engine resumes it, the next piece once it is done.
// Each piece runs at its clock (engines/clock.h); the clock is the real one
// again once the replay ends, however it ends.
class Replayer : public std::enable_shared_from_this<Replayer> {
 public:
  Replayer(ServerContext& server, EventLoop& loop, std::vector<ReplayPiece> pieces)
      : server_(server), loop_(loop), session_(server, ClientInfo{}), pieces_(std::move(pieces)) {
    // A piece at a time, not a command at a time on an engine that hops per
    // command: sharded --hop command loaded 1M RESTOREs in 77 s so (a hop
    // and a wake-up each), one engine batch per piece keeps their order.
    session_.BatchEveryRead();
  }

  std::future<Status> Start() {
    loop_.Post([self = shared_from_this()] { self->Step(); });
    return finished_.get_future();
  }

 private:
  void Step() {
    while (next_ < pieces_.size()) {
      if (!fed_) {
        // Every batch of the previous piece has completed (Process said so).
        SetReplayClock(pieces_[next_].clock_ms);
        session_.input().append(pieces_[next_].bytes);
        fed_ = true;
      }
      auto resume = [self = shared_from_this()] { self->loop_.Post([self] { self->Step(); }); };
      const Session::Progress progress = session_.Process(out_, std::move(resume));
      out_.clear();  // the replies of a replay go nowhere
      if (progress == Session::Progress::kPending) {
        server_.engine.WakeDeferred();
        return;
      }
      if (progress != Session::Progress::kNeedInput) {
        SetReplayClock(std::nullopt);
        finished_.set_value(Status::InvalidArgument("the server refused a command it ran itself"));
        return;
      }
      ++next_;
      fed_ = false;
    }
    SetReplayClock(std::nullopt);
    finished_.set_value(Status::Ok());
  }

  ServerContext& server_;
  EventLoop& loop_;
  Session session_;
  std::vector<ReplayPiece> pieces_;
  size_t next_ = 0;
  bool fed_ = false;
  std::string out_;
  std::promise<Status> finished_;
};

}  // namespace

Status RunCommandsOnLoop(ServerContext& server, EventLoop& loop, std::vector<ReplayPiece> pieces) {
  if (!server.settings.requirepass.empty()) {
    const std::string_view auth[] = {"AUTH", server.settings.requirepass};
    ReplayPiece login;
    AppendRespCommand(auth, login.bytes);
    pieces.insert(pieces.begin(), std::move(login));
  }
  auto replayer = std::make_shared<Replayer>(server, loop, std::move(pieces));
  return replayer->Start().get();
}

AppendLogScan ScanAppendLog(std::string_view bytes, uint32_t lane) {
  AppendLogScan scan;
  Framing framing(bytes);
  bool in_multi = false;
  uint64_t commands = 0;
  uint64_t unit_begin = 0;
  uint64_t unit_commands_begin = 0;
  std::optional<int64_t> clock_ms;
  // A group annotation in its first lane: the unit after it is the group's.
  std::optional<GroupMark> lead;
  uint64_t lead_begin = 0;
  while (!framing.done()) {
    const uint64_t start = framing.pos();
    if (!in_multi && bytes[start] == '#') {
      std::string_view line;
      if (!framing.Annotation(&line)) break;  // cut short: truncated
      std::optional<int64_t> annotated;
      std::optional<GroupMark> group;
      Status parsed = ParseClockAnnotation(line, &annotated);
      if (parsed.ok()) parsed = ParseGroupAnnotation(line, &group);
      if (parsed.ok() && group &&
          (lead ||
           std::find(group->lanes.begin(), group->lanes.end(), lane) == group->lanes.end())) {
        parsed = Status::InvalidArgument(lead ? "a group annotation without its record"
                                              : "a group annotation of other lanes");
      }
      if (!parsed.ok()) {
        scan.corruption =
            "bad annotation at byte " + std::to_string(start) + ": " + parsed.message();
        return scan;
      }
      if (annotated) clock_ms = annotated;
      if (group && group->lanes.front() == lane) {
        lead = std::move(group);
        lead_begin = start;
        continue;  // valid only once its record is whole
      }
      if (group) {
        AppendLogUnit marker{framing.pos(), framing.pos(),           clock_ms, start,
                             group->id,     std::move(group->lanes), true};
        scan.units.push_back(std::move(marker));
      }
      if (!lead) scan.valid_bytes = framing.pos();
      continue;
    }
    std::string_view name;
    const Framing::Outcome outcome = framing.Next(&name);
    if (outcome == Framing::Outcome::kTruncated) break;
    if (outcome == Framing::Outcome::kCorrupt) {
      scan.corruption = "bad record at byte " + std::to_string(start) + ": " + framing.error();
      return scan;
    }
    if (!in_multi) {
      unit_begin = start;
      unit_commands_begin = commands;
    }
    ++commands;
    if (EqualsIgnoreCase(name, "multi")) {
      if (in_multi) {
        scan.corruption = "MULTI inside MULTI at byte " + std::to_string(start);
        return scan;
      }
      in_multi = true;
    } else if (EqualsIgnoreCase(name, "exec")) {
      if (!in_multi) {
        scan.corruption = "EXEC without MULTI at byte " + std::to_string(start);
        return scan;
      }
      in_multi = false;
    }
    if (!in_multi) {
      AppendLogUnit unit{unit_begin, framing.pos(), clock_ms, unit_begin};
      unit.commands = commands - unit_commands_begin;
      if (lead) {
        unit.cut = lead_begin;
        unit.group = lead->id;
        unit.group_lanes = std::move(lead->lanes);
        lead.reset();
      }
      scan.units.push_back(std::move(unit));
      scan.valid_bytes = framing.pos();
      scan.commands = commands;
    }
  }
  scan.dropped_bytes = bytes.size() - scan.valid_bytes;
  return scan;
}

namespace {

// Whole units of one clock make a piece, the annotations left out.
void AddUnit(const std::string& bytes, const AppendLogUnit& unit,
             std::vector<ReplayPiece>& pieces) {
  if (pieces.empty() || pieces.back().clock_ms != unit.clock_ms ||
      pieces.back().bytes.size() >= kReplayPieceBytes) {
    pieces.push_back(ReplayPiece{{}, unit.clock_ms});
  }
  pieces.back().bytes.append(bytes, unit.begin, unit.end - unit.begin);
}

// Reads `path` whole into *bytes; *found false for a missing file.
Status ReadLogFile(const std::string& path, std::string* bytes, bool* found) {
  std::ifstream file(path, std::ios::binary);
  *found = static_cast<bool>(file);
  if (!file) {
    if (errno == ENOENT) return Status::Ok();
    return Status::InvalidArgument("cannot read the append-only file " + path + ": " +
                                   std::strerror(errno));
  }
  bytes->assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  return Status::Ok();
}

Status Corrupt(const std::string& path, const std::string& what) {
  return Status::InvalidArgument("the append-only file " + path + " is corrupt (" + what +
                                 "); refusing to start");
}

// One segment's files (lanes) scanned, merged and turned into pieces;
// what it keeps of each file goes to *loaded.
Status LoadSegment(const std::string& folder, AppendLogLoad::Segment* loaded, AppendLogLoad* load,
                   std::vector<ReplayPiece>& pieces) {
  std::vector<std::string> bytes(loaded->files.size());
  std::vector<AppendLogScan> scans(loaded->files.size());
  for (uint32_t lane = 0; lane < loaded->files.size(); ++lane) {
    const std::string path = folder + loaded->files[lane].name;
    bool found = false;
    if (Status read = ReadLogFile(path, &bytes[lane], &found); !read.ok()) return read;
    if (!found) {
      return Status::InvalidArgument("the append-only manifest names " + path +
                                     ", which is missing; refusing to start");
    }
    scans[lane] = ScanAppendLog(bytes[lane], lane);
    if (!scans[lane].corruption.empty()) return Corrupt(path, scans[lane].corruption);
  }
  const LaneMerge merge = MergeLanes(scans);
  if (!merge.corruption.empty()) return Corrupt(folder + loaded->files[0].name, merge.corruption);
  for (const auto& [lane, unit] : merge.order) {
    AddUnit(bytes[lane], scans[lane].units[unit], pieces);
    load->commands += scans[lane].units[unit].commands;
  }
  for (uint32_t lane = 0; lane < scans.size(); ++lane) {
    const AppendLogScan& scan = scans[lane];
    const size_t kept = merge.replayed[lane];
    const uint64_t valid = kept < scan.units.size() ? scan.units[kept].cut : scan.valid_bytes;
    loaded->files[lane].valid_bytes = valid;
    load->loaded_bytes += valid;
    load->dropped_bytes += bytes[lane].size() - valid;
  }
  load->max_group = std::max(load->max_group, merge.max_group);
  load->incomplete_groups += merge.incomplete_groups;
  return Status::Ok();
}

}  // namespace

Status ReplayAppendLog(const std::string& path, ServerContext& server, EventLoop& loop,
                       AppendLogLoad* load) {
  const auto started = std::chrono::steady_clock::now();
  *load = AppendLogLoad{};
  const std::string folder = FolderOf(path);
  AofManifest manifest;
  if (Status read = AofManifest::Read(ManifestPath(path), &manifest, &load->has_manifest);
      !read.ok()) {
    return Status::InvalidArgument(read.message() + "; refusing to start");
  }
  if (load->has_manifest) {
    load->next_generation = manifest.next_generation;
    for (const AofSegment& segment : manifest.segments) {
      AppendLogLoad::Segment& loaded = load->segments.emplace_back();
      loaded.layout = segment.layout;
      for (const std::string& file : segment.files) loaded.files.push_back({file, 0});
    }
  } else {
    std::ifstream probe(path, std::ios::binary);
    if (probe) {
      load->segments.push_back({"one", {{path.substr(folder.size()), 0}}});
    } else if (errno != ENOENT) {  // no log yet is an empty keyspace; anything else an error
      return Status::InvalidArgument("cannot read the append-only file " + path + ": " +
                                     std::strerror(errno));
    }
  }
  std::vector<ReplayPiece> pieces;
  for (AppendLogLoad::Segment& segment : load->segments) {
    if (Status loaded = LoadSegment(folder, &segment, load, pieces); !loaded.ok()) return loaded;
  }
  if (!RunCommandsOnLoop(server, loop, std::move(pieces)).ok()) {
    return Status::InvalidArgument(
        "the append-only file holds a command the server refused to replay");
  }
  load->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return Status::Ok();
}

}  // namespace kvlab
