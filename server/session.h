// Session: one client connection's RESP conversation — it parses the bytes
// the connection received, runs the commands (through the engine when they
// touch keys) and appends the replies, in command order, to the connection's
// output buffer. It knows nothing of sockets.
//
// Thread-safety: a Session is used from its connection's thread only. The one
// exception is the `resume` callback given to Process(), which the engine may
// invoke from any thread (the sharded engine's shard threads); the connection
// must post it back to its own thread before touching the Session again.
//
// How a connection drives it:
//   1. append received bytes to input();
//   2. call Process(out, resume) and act on the Progress it returns:
//      kNeedInput — every buffered command is answered; write `out`, read more.
//      kPending   — an engine batch is running asynchronously, or its replies
//                   wait until the blocked clients it woke are served
//                   (AwaitWaitersServed()). `resume` will be
//                   called exactly once, from any thread; post it to the
//                   connection's thread and call Process() again from there.
//                   Until then do not touch input() or call Process(); `out`
//                   may be written and cleared (the Session only appends).
//      kClose     — write `out`, then close (QUIT, or a protocol error whose
//                   reply is in `out`).
//      kBlocked   — the client waits in a blocking command (BLPOP, ...): call
//                   Process() again only once the function given to
//                   SetBlockingWake() has been called (from any thread:
//                   post it to the connection's thread). Meanwhile keep
//                   received bytes aside, not in input(), and call
//                   CancelBlocking() if the client goes away.
//      kOutputLimit — `out` grew past the `out_limit` given to Process(): the
//                   Session rendered every command it ran (a batch's
//                   replies are never cut) and parses nothing more; the
//                   rest of input() waits. Call Process() again once the
//                   replies have drained (the connection stops reading the
//                   client meanwhile), or close the connection.
//   Replies of commands answered before a kPending are already in `out`, so a
//   connection may flush them while it waits.
#pragma once

#include <atomic>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engines/engine.h"
#include "server/blocking_command.h"
#include "server/client_info.h"
#include "server/command.h"
#include "server/aof_record.h"
#include "server/resp_parser.h"
#include "server/server_context.h"
#include "server/stage_sample.h"

namespace kvlab {

class CommandTable;
struct CommandSpec;

class Session {
 public:
  enum class Progress { kNeedInput, kPending, kClose, kOutputLimit, kBlocked };

  Session(ServerContext& ctx, ClientInfo info);
  // REQUIRES: no batch pending (Process() did not last return kPending).
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Every read becomes one engine batch, whatever the engine's
  // Traits().batch_per_read: for a session whose commands' order is all that
  // matters and nobody waits between them (the append-only log's replay; a
  // batch keeps the commands' order on every key).
  void BatchEveryRead() {
    batch_every_read_ = true;
    per_read_batches_ = true;
  }

  // The read buffer: the connection appends received bytes here. The Session
  // erases what it has parsed and keeps an incomplete command's tail.
  std::string& input() { return input_; }

  // Parses and executes as many complete commands as are buffered, appending
  // their replies to `out`, and stops once out.size() exceeds `out_limit`.
  // See the header comment for the Progress contract.
  Progress Process(std::string& out, std::function<void()> resume,
                   size_t out_limit = std::numeric_limits<size_t>::max());

  const ClientState& client() const { return client_; }

  // How a blocked client is woken (see kBlocked): called with the
  // registry's lock held, so it must only post. Without one (a Session
  // driven in a test), blocking commands answer at once as inside EXEC.
  void SetBlockingWake(std::function<void()> wake) { wake_ = std::move(wake); }
  // The client went away while blocked: it stops waiting, and what it was
  // offered goes to the next waiter. Safe to call when not blocked.
  void CancelBlocking();
  // Pub/Sub: how the connection learns that messages arrived for this
  // client (called from the publisher's thread, so it must only post);
  // set before the first command. Without one, messages wait for the
  // client's next (un)subscribe or PING.
  void SetPushWake(std::function<void()> wake);
  // Whether messages wait to be rendered (a hint; any thread may add more).
  bool HasPushes() const { return client_.pubsub.HasMessages(); }
  // Appends the waiting messages to `out`. REQUIRES: no batch pending (its
  // replies would follow messages published after it ran).
  void RenderPushes(std::string& out);
  // Leaves every channel and pattern (the client goes away); also done by
  // the destructor. Safe to call more than once.
  void LeavePubSub();
  // CLIENT LIST and CLIENT KILL: lists this client in the server's
  // directory; `close` (called from any thread, so it must only post)
  // closes its connection. Unlist() takes it out (closing; the destructor
  // does it too).
  void ListAs(std::function<void()> close);
  void Unlist();
  // The next Process() call is a sampled request's (stage_sample.h): it
  // notes when the first command is parsed, when its batch is handed to the
  // engine (pointing the batch at sample->engine), when the result comes
  // back after a hop and when the batch's replies are queued, then forgets
  // `sample`. A read without a complete command leaves `queued` 0.
  // REQUIRES: no batch pending; `sample` outlives the Session's use of it.
  void SampleNextRequest(StageSample* sample) { sample_ = sample; }

 private:
  enum class Phase : int { kIdle, kExecuting, kCompleted, kReturned };
  // One reply in command order: written already (in `text`), or deferred.
  // EXEC's reply is a header slot followed by one member slot per queued
  // command; an aborted EXEC (WATCH) renders "*-1" and drops its members.
  struct ReplySlot {
    std::string text;
    DeferredReply deferred;
    bool exec_header = false;
    bool exec_member = false;
    bool silent = false;  // CLIENT REPLY OFF|SKIP: rendered as nothing
    // A deferred reply's command (its CommandTable index), for INFO
    // commandstats' failed_calls once rendered; -1 for none.
    int32_t command = -1;
    uint32_t exec_count = 0;  // header: how many members follow
    int32_t exec_group = -1;  // header: its AtomicGroup in the batch, -1 if none
    // The connection's protocol when the command ran: a HELLO later in the
    // same read must not change how an earlier deferred reply is written.
    RespVersion protocol = RespVersion::kResp2;
  };

  // Process() for a request that is sampled (kSampled: notes its stage
  // times) or not; the helpers below come in the same two copies.
  template <bool kSampled>
  Progress ProcessWith(std::string& out, std::function<void()>& resume, size_t out_limit);
  // Parses and dispatches commands until the input is exhausted, the client
  // must close, or (per-command dispatch) one engine command is queued.
  template <bool kSampled>
  void ParseAndDispatch(std::string& out);
  void Dispatch(const CommandSpec* spec, std::string& out);
  void DispatchWithPushesOrSilence(const CommandSpec* spec, std::string& out);
  // What became of a command (INFO commandstats): unknown, refused before it
  // ran (arity, NOAUTH, MOVED, OOM...), queued in MULTI, or run.
  enum class Outcome : uint8_t { kUnknown, kRejected, kQueued, kRan };
  void DispatchCommand(const CommandSpec* spec, std::string& out);
  // An error reply at the front of `reply` (from the command at table
  // index `command`, when known): INFO errorstats, and that command's
  // failed (kRan) or rejected calls.
  void CountError(std::optional<size_t> command, Outcome outcome, std::string_view reply);
  // This thread's INFO commandstats counters (made at the first command).
  CommandStats::Block& Stats() {
    if (stats_ == nullptr) [[unlikely]]
      FindStats();
    return *stats_;
  }
  void FindStats();
  // EXEC: the queued commands into the batch as one AtomicGroup.
  void RunExec(std::string& immediate, const CommandSpec& exec);
  void FeedMonitors(const CommandSpec& spec, std::span<const std::string_view> args);

  // Whether this Session applies the maxmemory rule to `spec` (kDenyOom).
  // Such a command is dispatched only once the batch queued before it has
  // run, so each one is decided on the memory its predecessors left.
  bool DecidesMemory(const CommandSpec& spec) const;
  // Runs the queued batch. True when it completed synchronously.
  template <bool kSampled>
  bool ExecuteBatch();
  // --appendonly: hangs the record of the write command that queued ops
  // [first_op, end) on its group (made one if it has none), for the engine
  // to append as it runs (write_log.h).
  void LogCommand(uint32_t first_op, std::span<const std::string_view> args);
  // A blocking command's look is logged as the twin it ran (LMPOP, LMOVE,
  // ZMPOP): replayed, it pops what the look popped, or nothing, and never
  // blocks the start.
  void LogBlockingAttempt(uint32_t first_op);
  // EXEC's record: MULTI, the writes among `commands` (whose reply slots
  // follow slots_[header]), EXEC, on group `group`.
  void LogTransaction(const std::vector<std::vector<std::string>>& commands, size_t header,
                      AtomicGroup& group);
  void OnBatchDone();
  template <bool kSampled>
  void RenderSlots(std::string& out);
  // After a blocking command's handler: registers the client if its look
  // may leave it waiting.
  void StartBlocking();
  // A batch finished while some blocked client is being served (a waiter
  // this batch, or another, woke): true when its replies must wait until
  // those are served, as Redis serves them before the next command
  // (blocking_registry.h); `resume` is then taken, and called once they
  // are, and Process() must return kPending.
  bool AwaitWaitersServed(std::function<void()>& resume);
  // After a batch: renders its replies, unless it was a blocking command's
  // look that found nothing (the client then waits).
  template <bool kSampled>
  void FinishBatch(std::string& out);
  // A blocking command's look just ran alone in the batch: whether it
  // answers the client (else it is forgotten and the client waits).
  bool BlockingLookAnswers();
  // The client waits: queues the next look, or answers a timeout or
  // CLIENT UNBLOCK. False when it must sleep until woken.
  bool ResumeBlocked(std::string& out);
  void EndBlocking();
  void NoteParsed();
  void FinishSample();

  ServerContext& ctx_;
  const CommandTable& table_;
  ClientState client_;
  std::string input_;
  RespParser parser_;
  std::vector<std::string_view> args_;
  bool per_read_batches_ = true;   // engine Traits().batch_per_read
  bool batch_every_read_ = false;  // BatchEveryRead()
  bool protocol_error_ = false;
  bool input_exhausted_ = false;
  bool holding_command_ = false;  // args_ holds a parsed command not yet dispatched
  bool awaiting_ = false;         // Process() returned kPending or kBlocked
  bool awaiting_served_ = false;  // ... kPending for AwaitWaitersServed()
  size_t out_limit_ = std::numeric_limits<size_t>::max();  // of this Process() call
  bool over_limit_ = false;  // `out` passed out_limit_ in this Process(): stop and report it
  std::string scratch_;      // an immediate reply that must wait its turn

  Batch batch_;
  // The argument bytes of EXECs in the batch: its operations point into them.
  std::vector<std::vector<std::vector<std::string>>> exec_storage_;
  // Their WATCHes, registered until the batch has run (transaction.h).
  std::vector<std::unique_ptr<WatchRegistry::Watcher>> exec_watchers_;
  // CommandCall::KeepForRender(), and the batch's log records (AofRecord):
  // both live until the batch has run and its replies are rendered.
  std::vector<std::shared_ptr<const void>> render_state_;
  std::vector<ReplySlot> slots_;      // non-empty only while a batch is queued
  std::vector<ReplySlot> rendering_;  // the slots being rendered (RenderSlots only)
  std::atomic<Phase> phase_{Phase::kIdle};
  std::function<void()> resume_;

  // A blocking command in progress (null otherwise): what it is, its
  // registration, the keys it was handed and has not looked at yet, and
  // whether the running look is a retry.
  std::shared_ptr<BlockingCommand> block_;
  std::shared_ptr<BlockingRegistry::Waiter> waiter_;
  std::vector<std::string> retry_keys_;
  bool block_retry_ = false;
  std::function<void()> wake_;
  // Last, so that the members above keep their offsets. The append-only
  // file, or null (also while the file is replayed: the replaying Session
  // exists before the log does).
  DurableLog* const append_log_;
  StageSample* sample_ = nullptr;         // SampleNextRequest(); null for all but sampled requests
  CommandStats::Block* stats_ = nullptr;  // this thread's INFO commandstats (Stats())
};

}  // namespace kvlab
