// BGREWRITEAOF: compacts the append-only file on every engine.
//
// Redis forks and writes the child's point-in-time view of the keyspace;
// kvlab cannot fork a multithreaded server, so it takes the view while it
// holds the whole keyspace, in one group: kHoldKeyspace, kCollectKeys, then
// a kReadKeys that serializes every live key as the record that recreates
// it — RESTORE key <deadline> <DUMP payload> ABSTTL, after a clock
// annotation of the group's own clock (aof_record.h) — and marks where the
// log's later records begin (DurableLog::MarkRewriteStart). No write runs
// while it is held, so the snapshot and the records after the mark are one
// consistent history: one file's log (append_log.h) becomes the snapshot
// and then every record appended since the mark, copied in the background
// and renamed over the old file; a log of lanes (lane_log.h) switches to
// new lane files at the mark and lists the snapshot before them in its
// manifest. Writers wait for the hold (it
// grows with the keyspace: INFO aof_last_rewrite_hold_us) and for the
// switch (aof_last_rewrite_switch_us), not for the copying.
//
// Differences from Redis, said as errors: without --appendonly yes there is
// no file to rewrite; inside MULTI it is refused (Redis would queue it).
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "engines/calls/atomic_group.h"
#include "engines/containers/dump_payload.h"
#include "server/aof_record.h"
#include "server/durable_log.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"
#include "server/server_context.h"

namespace kvlab {
namespace {

// The snapshot is written in pieces of about this size: none is copied
// again as it grows (a piece may pass it by its last record).
constexpr size_t kPieceBytes = 4 << 20;

// The keys the engine offers, then the snapshot made of them. Offer() may
// be called from several engine threads; Read() and the render run one at a
// time after every Offer().
class KeyspaceSnapshot final : public KeyCollector {
 public:
  explicit KeyspaceSnapshot(DurableLog& log) : log_(log) {}
  // A command whose reply was never rendered (its client left) still ends
  // the rewrite it claimed.
  ~KeyspaceSnapshot() override {
    if (finished_) return;
    if (read_) {
      Finish();
    } else {
      log_.AbandonRewrite();
    }
  }

  void Offer(std::string_view key) override {
    MutexLock lock(mutex_);
    if (keys_.empty()) held_since_ = std::chrono::steady_clock::now();
    keys_.emplace_back(key);
  }

  // kReadKeys, with the whole keyspace held.
  static OpResult Read(const Operation& op, KeyReader& reader,
                       GroupState& group) NO_THREAD_SAFETY_ANALYSIS {
    auto& self = *static_cast<KeyspaceSnapshot*>(op.collect);
    if (self.keys_.empty()) self.held_since_ = std::chrono::steady_clock::now();
    self.start_ = self.log_.MarkRewriteStart();
    self.head_.emplace_back().reserve(kPieceBytes);
    AppendClockAnnotation(group.now_ms, self.head_.back());
    for (const std::string& key : self.keys_) {
      const std::optional<EntryView> entry = reader.Live(key);
      if (!entry) continue;
      const std::string payload = DumpPayload(*entry);
      const std::string deadline = std::to_string(entry->expire_at_ms);
      const std::string_view args[] = {"RESTORE", key, deadline, payload, "ABSTTL"};
      if (self.head_.back().size() >= kPieceBytes)
        self.head_.emplace_back().reserve(2 * kPieceBytes);
      AppendRespCommand(entry->expire_at_ms != 0 ? std::span(args) : std::span(args, 4),
                        self.head_.back());
    }
    self.keys_ = {};
    self.read_ = true;
    self.hold_us_ = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::steady_clock::now() - self.held_since_)
                        .count();
    return OpResult::Ok();
  }

  // After the group: the file's work goes to the background.
  void Finish() const {
    finished_ = true;
    log_.NoteRewriteHold(static_cast<uint64_t>(hold_us_));
    log_.FinishRewrite(std::move(head_), start_);
  }

 private:
  DurableLog& log_;
  Mutex mutex_;
  std::vector<std::string> keys_ GUARDED_BY(mutex_);
  std::chrono::steady_clock::time_point held_since_;
  // Written by Read() inside the group; the render moves the head out.
  mutable std::vector<std::string> head_;
  uint64_t start_ = 0;
  int64_t hold_us_ = 0;
  bool read_ = false;              // Read() ran: there is a snapshot
  mutable bool finished_ = false;  // Finish() handed it to the log
};

void RenderRewriteStarted(const DeferredReply& deferred, std::span<const OpResult>,
                          ReplyWriter& writer, ServerContext&) {
  static_cast<const KeyspaceSnapshot*>(deferred.state)->Finish();
  writer.SimpleString("Background append only file rewriting started");
}

void BgRewriteAof(CommandCall& call) {
  DurableLog* log = call.server.append_log;
  if (log == nullptr) {
    call.reply().Error(
        "ERR kvlab-server rewrites only its own append-only file: start it with "
        "--appendonly yes");
    return;
  }
  if (!log->TryBeginRewrite()) {
    call.reply().Error("ERR Background append only file rewriting already in progress");
    return;
  }
  auto snapshot = std::make_shared<KeyspaceSnapshot>(*log);
  call.Add(MakeOp(OpCode::kHoldKeyspace, {}));
  Operation collect = MakeOp(OpCode::kCollectKeys, {});
  collect.collect = snapshot.get();
  call.Add(collect);
  Operation read = MakeOp(OpCode::kReadKeys, {});
  read.read_keys = KeyspaceSnapshot::Read;
  read.collect = snapshot.get();
  call.Add(read);
  call.Defer(RenderRewriteStarted);
  call.KeepForRender(std::move(snapshot));
  call.GroupQueued();
}

}  // namespace

void RegisterRewriteCommand(CommandTable& table) {
  table.Add({.name = "bgrewriteaof",
             .arity = 1,
             .flags = CommandSpec::kRefusedInMulti,
             .handler = BgRewriteAof,
             .group = "server",
             .summary = "Asynchronously rewrite the append-only file"});
}

}  // namespace kvlab
