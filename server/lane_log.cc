#include "server/lane_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>

#include "server/aof_record.h"
#include "server/file_writes.h"

namespace kvlab {
namespace {

void AddTotals(const DurableLog::Counters& from, DurableLog::Counters& into) {
  into.appended_bytes += from.appended_bytes;
  into.written_bytes += from.written_bytes;
  into.durable_bytes += from.durable_bytes;
  into.fsyncs += from.fsyncs;
  into.write_errors += from.write_errors;
}

}  // namespace

Status LaneLog::Open(const std::string& path, const AppendLogLoad& loaded,
                     const std::string& layout, unsigned lanes, AppendFsync policy,
                     std::unique_ptr<LaneLog>* log) {
  const std::string folder = FolderOf(path);
  AofManifest manifest;
  manifest.next_generation = loaded.has_manifest ? loaded.next_generation : 1;
  uint64_t earlier = 0;
  for (const AppendLogLoad::Segment& segment : loaded.segments) {
    AofSegment& listed = manifest.segments.emplace_back();
    listed.layout = segment.layout;
    for (const AppendLogLoad::File& file : segment.files) {
      listed.files.push_back(file.name);
      // Cut where the replay stopped, so that nothing it left out is
      // replayed later behind what follows.
      if (::truncate((folder + file.name).c_str(), static_cast<off_t>(file.valid_bytes)) != 0) {
        return Status::InvalidArgument("cannot cut the append-only file " + folder + file.name +
                                       ": " + std::strerror(errno));
      }
      earlier += file.valid_bytes;
    }
  }
  std::unique_ptr<LaneLog> made(
      new LaneLog(path, lanes == 1 ? "one" : layout, policy, manifest, loaded.max_group + 1));
  const bool go_on = loaded.has_manifest && !manifest.segments.empty() &&
                     manifest.segments.back().files.size() == lanes &&
                     manifest.segments.back().layout == made->layout_;
  if (go_on) {
    std::vector<uint64_t> valid;
    for (const AppendLogLoad::File& file : loaded.segments.back().files) {
      valid.push_back(file.valid_bytes);
      earlier -= file.valid_bytes;
    }
    if (Status opened = made->OpenLanes(manifest.segments.back(), valid); !opened.ok())
      return opened;
  } else {
    std::lock_guard lock(made->mu_);
    if (Status started = made->StartSegment(lanes); !started.ok()) return started;
  }
  {
    std::lock_guard lock(made->mu_);
    made->earlier_bytes_ = earlier;
    made->base_bytes_ = made->CountersLocked().file_bytes;
  }
  *log = std::move(made);
  return Status::Ok();
}

LaneLog::LaneLog(std::string path, std::string layout, AppendFsync policy, AofManifest manifest,
                 uint64_t next_group)
    : path_(std::move(path)),
      folder_(FolderOf(path_)),
      layout_(std::move(layout)),
      policy_(policy),
      next_group_(next_group),
      manifest_(std::move(manifest)) {}

LaneLog::~LaneLog() {
  {
    std::lock_guard lock(rewriter_mu_);
    if (rewriter_.joinable()) rewriter_.join();
  }
  // Every lane's buffer written and fsynced, in any order: each is whole.
  std::lock_guard lock(mu_);
  for (auto& lanes : all_lanes_) {
    for (auto& log : lanes->logs) log->Close();
  }
}

std::string LaneLog::FileName(uint64_t generation, const std::string& suffix) const {
  return path_.substr(folder_.size()) + "." + std::to_string(generation) + "." + suffix;
}

Status LaneLog::OpenLanes(const AofSegment& segment, const std::vector<uint64_t>& valid_bytes) {
  auto lanes = std::make_unique<Lanes>();
  for (size_t i = 0; i < segment.files.size(); ++i) {
    std::unique_ptr<AppendLog> log;
    if (Status opened = AppendLog::Open(folder_ + segment.files[i], valid_bytes[i], policy_, &log);
        !opened.ok())
      return opened;
    lanes->logs.push_back(std::move(log));
  }
  std::lock_guard lock(mu_);
  current_.store(lanes.get(), std::memory_order_release);
  all_lanes_.push_back(std::move(lanes));
  return Status::Ok();
}

Status LaneLog::StartSegment(unsigned lanes) {
  AofSegment segment;
  segment.layout = layout_;
  const uint64_t generation = manifest_.next_generation++;
  for (unsigned i = 0; i < lanes; ++i)
    segment.files.push_back(FileName(generation, std::to_string(i)));
  auto opened = std::make_unique<Lanes>();
  for (const std::string& file : segment.files) {
    std::unique_ptr<AppendLog> log;
    if (Status made = AppendLog::Open(folder_ + file, 0, policy_, &log); !made.ok()) return made;
    opened->logs.push_back(std::move(log));
  }
  AofManifest next = manifest_;
  next.segments.push_back(segment);
  if (Status written = next.Write(ManifestPath(path_)); !written.ok()) {
    for (auto& log : opened->logs) log->Close();
    for (const std::string& file : segment.files) ::unlink((folder_ + file).c_str());
    return written;
  }
  manifest_ = std::move(next);
  // The lanes appended to until now belong to an earlier segment from here on.
  if (Lanes* old = current_.load(std::memory_order_relaxed); old != nullptr) {
    for (auto& log : old->logs) {
      log->Close();  // written and fsynced whole before a record goes to the new files
      const Counters closed = log->counters();
      AddTotals(closed, retired_);
      earlier_bytes_ += closed.file_bytes;
    }
  }
  current_.store(opened.get(), std::memory_order_release);
  all_lanes_.push_back(std::move(opened));
  return Status::Ok();
}

void LaneLog::Append(const LogEntry& entry, std::span<const OpResult> results, int64_t now_ms,
                     LogPlace place) {
  Lanes& lanes = *current_.load(std::memory_order_acquire);
  if (lanes.logs.size() == 1 || place.lanes.size() <= 1) {
    const uint32_t lane = place.lanes.empty() || lanes.logs.size() == 1 ? 0 : place.lanes[0];
    lanes.logs[lane]->Append(entry, results, now_ms, place);
    return;
  }
  // Every lane of the group is held while this runs: the annotation has the
  // same place in each lane's order.
  const uint64_t id = next_group_.fetch_add(1, std::memory_order_relaxed);
  const std::string annotation = GroupAnnotation(id, place.lanes);
  lanes.logs[place.lanes[0]]->AppendAnnotated(entry, results, now_ms, annotation);
  for (size_t i = 1; i < place.lanes.size(); ++i) {
    lanes.logs[place.lanes[i]]->AppendAnnotation(annotation);
  }
}

void LaneLog::WaitForAppended() {
  // Lanes retired meanwhile were fsynced whole before the new ones were
  // published: waiting on either set covers every record appended before.
  Lanes& lanes = *current_.load(std::memory_order_acquire);
  for (auto& log : lanes.logs) log->WaitReleasable(log->appended());
}

DurableLog::Counters LaneLog::CountersLocked() const {
  Counters counters = rewrite_;
  AddTotals(retired_, counters);
  counters.file_bytes = earlier_bytes_;
  const Lanes& lanes = *current_.load(std::memory_order_acquire);
  for (const auto& log : lanes.logs) {
    const Counters lane = log->counters();
    AddTotals(lane, counters);
    counters.last_write_ok = counters.last_write_ok && lane.last_write_ok;
    counters.file_bytes += lane.file_bytes;
  }
  counters.base_bytes = base_bytes_;
  counters.lanes = lanes.logs.size();
  return counters;
}

DurableLog::Counters LaneLog::counters() const {
  std::lock_guard lock(mu_);
  return CountersLocked();
}

bool LaneLog::TryBeginRewrite() {
  std::lock_guard lock(mu_);
  if (rewrite_.rewrite_in_progress) return false;
  rewrite_.rewrite_in_progress = true;
  return true;
}

uint64_t LaneLog::MarkRewriteStart() {
  const auto began = std::chrono::steady_clock::now();
  std::lock_guard lock(mu_);
  base_generation_ = manifest_.next_generation++;
  const Status started =
      StartSegment(static_cast<unsigned>(current_.load(std::memory_order_relaxed)->logs.size()));
  if (!started.ok()) {
    std::cerr << "kvlab-server: rewriting the append-only file: " << started.message() << "\n";
    base_generation_ = 0;  // FinishRewrite() fails the rewrite
  }
  rewrite_.last_rewrite_switch_us =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::steady_clock::now() - began)
                                .count());
  return 0;
}

void LaneLog::FinishRewrite(std::vector<std::string> head, uint64_t) {
  std::lock_guard lock(rewriter_mu_);
  if (rewriter_.joinable()) rewriter_.join();  // the previous one has ended
  rewriter_ = std::thread([this, head = std::move(head)]() mutable { Rewrite(std::move(head)); });
}

void LaneLog::Rewrite(std::vector<std::string> head) {
  const auto began = std::chrono::steady_clock::now();
  uint64_t generation;
  {
    std::lock_guard lock(mu_);
    generation = base_generation_;
  }
  bool ok = generation != 0;
  const std::string base = FileName(generation, "base");
  uint64_t base_bytes = 0;
  if (ok) {
    const int fd = ::open((folder_ + base).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ok = fd >= 0;
    for (const std::string& piece : head) {
      ok = ok && WriteFully(fd, piece);
      base_bytes += piece.size();
    }
    head = {};
    ok = ok && ::fdatasync(fd) == 0;
    if (fd >= 0) ::close(fd);
  }
  std::vector<std::string> obsolete;
  std::lock_guard lock(mu_);
  if (ok) {
    // The snapshot, then the lanes opened at the mark: every older segment goes.
    AofManifest next = manifest_;
    next.segments = {AofSegment{"one", {base}}, manifest_.segments.back()};
    const Status written = next.Write(ManifestPath(path_));
    ok = written.ok();
    if (ok) {
      for (size_t s = 0; s + 1 < manifest_.segments.size(); ++s) {
        for (const std::string& file : manifest_.segments[s].files) obsolete.push_back(file);
      }
      manifest_ = std::move(next);
      earlier_bytes_ = base_bytes;
      base_bytes_ = CountersLocked().file_bytes;
    } else {
      std::cerr << "kvlab-server: rewriting the append-only file: " << written.message() << "\n";
    }
  }
  if (!ok) {
    if (generation != 0) ::unlink((folder_ + base).c_str());
    std::cerr << "kvlab-server: rewriting the append-only file failed\n";
  }
  for (const std::string& file : obsolete) ::unlink((folder_ + file).c_str());
  rewrite_.rewrite_in_progress = false;
  rewrite_.last_rewrite_ok = ok;
  if (ok) ++rewrite_.rewrites;
  rewrite_.last_rewrite_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
}

void LaneLog::AbandonRewrite() {
  std::lock_guard lock(mu_);
  rewrite_.rewrite_in_progress = false;
}

void LaneLog::NoteRewriteHold(uint64_t micros) {
  std::lock_guard lock(mu_);
  rewrite_.last_rewrite_hold_us = micros;
}

}  // namespace kvlab
