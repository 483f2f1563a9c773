#include "server/session.h"

#include <algorithm>
#include <cstring>
#include <iterator>

#include "base/ascii_case.h"
#include "base/stage_clock.h"
#include "engines/calls/keyspace_ops.h"
#include "server/cluster_routing.h"
#include "server/command_table.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {
namespace {

constexpr std::string_view kOomError = "OOM command not allowed when used memory > 'maxmemory'.";
constexpr std::string_view kNoAuthError = "NOAUTH Authentication required.";

// Redis prints arguments with %s: a NUL byte ends them.
std::string_view CString(std::string_view arg) { return arg.substr(0, arg.find('\0')); }

// Redis 7.0's commandCheckExistence() text.
std::string UnknownCommandError(std::span<const std::string_view> args) {
  std::string quoted;
  for (size_t i = 1; i < args.size() && quoted.size() < 128; ++i) {
    size_t room = 128 - quoted.size();
    std::string_view arg = CString(args[i]);
    quoted += '\'';
    quoted.append(arg.substr(0, room));
    quoted += "' ";
  }
  std::string_view name = CString(args[0]).substr(0, 128);
  return "ERR unknown command '" + std::string(name) + "', with args beginning with: " + quoted;
}

// The error every command answers the same way, whichever of its
// operations met it: the memory limit first, then a key of another type.
// kNone when there is neither (one pass: it runs for every reply).
EngineError SharedError(std::span<const OpResult> results) {
  EngineError found = EngineError::kNone;
  for (const OpResult& result : results) {
    if (result.kind != OpResult::Kind::kError) continue;
    if (result.error == EngineError::kOutOfMemory) return result.error;
    if (result.error == EngineError::kWrongType) found = result.error;
  }
  return found;
}

}  // namespace

Session::Session(ServerContext& ctx, ClientInfo info)
    : ctx_(ctx), table_(CommandTable::Instance()), append_log_(ctx.append_log) {
  client_.info = std::move(info);
  client_.authenticated = ctx_.settings.requirepass.empty();
  per_read_batches_ = ctx_.engine.Traits().batch_per_read;
}

// The registry holds a pointer to this session's watcher.
Session::~Session() {
  CancelBlocking();
  LeavePubSub();
  Unlist();
  ctx_.watches.UnwatchAll(client_.transaction.watcher());
  for (auto& watcher : exec_watchers_) ctx_.watches.UnwatchAll(*watcher);
}

void Session::SetPushWake(std::function<void()> wake) { client_.pubsub.wake = std::move(wake); }

void Session::RenderPushes(std::string& out) { out += RenderPubSubMessages(client_); }

void Session::LeavePubSub() {
  client_.pubsub.LeaveAll(ctx_.pubsub, ctx_.monitors, client_.info.id);
}

// MONITOR's line for a command that ran; Redis 7.0 leaves out its admin
// commands (CONFIG, SHUTDOWN, SAVE, BGREWRITEAOF, MONITOR, and CLIENT KILL,
// LIST, NO-EVICT, PAUSE, UNBLOCK, UNPAUSE).
void Session::FeedMonitors(const CommandSpec& spec, std::span<const std::string_view> args) {
  static constexpr std::string_view kAdmin[] = {"monitor", "config", "shutdown", "save",
                                                "bgrewriteaof"};
  static constexpr std::string_view kAdminClient[] = {"kill",  "list",    "no-evict",
                                                      "pause", "unblock", "unpause"};
  if (std::find(std::begin(kAdmin), std::end(kAdmin), spec.name) != std::end(kAdmin)) return;
  if (spec.name == "client" && args.size() >= 2 &&
      std::find(std::begin(kAdminClient), std::end(kAdminClient), AsciiLowercase(args[1])) !=
          std::end(kAdminClient)) {
    return;
  }
  ctx_.monitors.Feed(client_.info, args);
}

void Session::ListAs(std::function<void()> close) {
  client_.listing = ctx_.clients.Add(client_.info, std::move(close));
  RefreshListing(client_);
}

void Session::Unlist() {
  if (!client_.listing) return;
  ctx_.clients.Remove(client_.info.id);
  client_.listing.reset();
}

namespace {

// What a RESP2 client in Pub/Sub mode may still run (processCommand()).
bool AllowedWhileSubscribed(const CommandSpec& spec) {
  static constexpr std::string_view kAllowed[] = {"ping",         "subscribe",    "ssubscribe",
                                                  "unsubscribe",  "sunsubscribe", "psubscribe",
                                                  "punsubscribe", "quit",         "reset"};
  return std::find(std::begin(kAllowed), std::end(kAllowed), spec.name) != std::end(kAllowed);
}

// Redis names a container's subcommand in this error as "client|info".
std::string FullCommandName(const CommandSpec& spec, std::span<const std::string_view> args) {
  if (const std::string* name = NameAsRun(spec, args)) return *name;
  return spec.name + "|" + AsciiLowercase(args[1]);  // a subcommand kvlab does not answer
}

}  // namespace

// Sampling costs a request that is not sampled one branch, here: the loop
// and its helpers are compiled twice, and only the sampled copy notes times.
Session::Progress Session::Process(std::string& out, std::function<void()> resume,
                                   size_t out_limit) {
  if (sample_ != nullptr) [[unlikely]]
    return ProcessWith<true>(out, resume, out_limit);
  return ProcessWith<false>(out, resume, out_limit);
}

// `resume` by reference: one move, into resume_, as before the two copies.
template <bool kSampled>
Session::Progress Session::ProcessWith(std::string& out, std::function<void()>& resume,
                                       size_t out_limit) {
  out_limit_ = out_limit;
  over_limit_ = false;
  input_exhausted_ = false;
  if (awaiting_) {
    awaiting_ = false;
    if (awaiting_served_) [[unlikely]] {
      awaiting_served_ = false;  // the waiters the batch woke are served
      FinishBatch<kSampled>(out);
    } else if (block_ && batch_.ops.empty()) [[unlikely]] {
      input_exhausted_ = true;  // woken while blocked: parse nothing yet
    } else {
      // The engine finished on some thread; its completion published the
      // results with a release store that this acquire load pairs with.
      phase_.load(std::memory_order_acquire);
      if constexpr (kSampled) {
        if (sample_ != nullptr) sample_->resumed = StageClockNs();
      }
      if (AwaitWaitersServed(resume)) [[unlikely]]
        return Progress::kPending;
      FinishBatch<kSampled>(out);
    }
  }
  resume_ = std::move(resume);
  while (true) {
    if (!batch_.ops.empty()) {
      if (!ExecuteBatch<kSampled>()) {
        awaiting_ = true;
        return Progress::kPending;
      }
      if (AwaitWaitersServed(resume_)) [[unlikely]]
        return Progress::kPending;
      FinishBatch<kSampled>(out);
      continue;
    }
    if (!slots_.empty()) {  // deferred replies that needed no engine work
      RenderSlots<kSampled>(out);
      continue;
    }
    if (over_limit_ || out.size() > out_limit_) {
      over_limit_ = true;
      resume_ = nullptr;
      return Progress::kOutputLimit;
    }
    if (client_.close_after_reply || protocol_error_ || input_exhausted_) {
      // A blocked client parses nothing more (input_exhausted_ stays set).
      if (!block_) [[likely]]
        break;
      if (!ResumeBlocked(out)) {
        resume_ = nullptr;
        awaiting_ = true;  // the next Process() is a wake-up
        return Progress::kBlocked;
      }
      continue;
    }
    ParseAndDispatch<kSampled>(out);
  }
  parser_.Compact(input_);
  // What a command far larger than usual grew, given back once it has run
  // (RespParser::saw_large_command()).
  if (parser_.saw_large_command() && slots_.empty() && !holding_command_) [[unlikely]] {
    parser_.ReleaseLargeBuffers(input_);
    batch_.Release();
    std::vector<std::string_view>().swap(args_);
  }
  resume_ = nullptr;
  if constexpr (kSampled) {
    if (sample_ != nullptr) FinishSample();
  }
  return (client_.close_after_reply || protocol_error_) ? Progress::kClose : Progress::kNeedInput;
}

template <bool kSampled>
void Session::ParseAndDispatch(std::string& out) {
  while (true) {
    if (!holding_command_) {
      RespParser::Result result = parser_.Parse(input_, &args_, !client_.authenticated);
      if (result == RespParser::Result::kInputPending) {
        input_exhausted_ = true;
        return;
      }
      if (result != RespParser::Result::kOk) {
        // Commands before the bad bytes are answered first, then the error.
        std::string& target = slots_.empty() ? out : slots_.emplace_back().text;
        ReplyWriter(target, client_.protocol).Error(parser_.error());
        protocol_error_ = true;
        return;
      }
      if (args_.empty()) continue;  // "*0", "*-1" or a blank inline line
      if constexpr (kSampled) {
        if (sample_ != nullptr && sample_->parsed == 0) NoteParsed();
      }
    }
    holding_command_ = false;
    const CommandSpec* spec = table_.Find(args_[0]);
    if (spec != nullptr && (spec->flags & (CommandSpec::kAfterQueued | CommandSpec::kBlocking)) &&
        !batch_.ops.empty()) {
      holding_command_ = true;  // run what is queued first
      return;
    }
    if (spec != nullptr && DecidesMemory(*spec) && !batch_.ops.empty()) {
      // Redis decides maxmemory with every earlier command already run: the
      // writes queued before this one may be what fills the memory.
      holding_command_ = true;
      return;
    }
    Dispatch(spec, out);
    if (out.size() > out_limit_) {
      over_limit_ = true;
      return;
    }
    if (client_.close_after_reply) return;
    if (!per_read_batches_ && !batch_.ops.empty()) return;
  }
}

// Without --maxmemory nothing is refused, and the engine's own check never
// fires either: the rule costs nothing then.
bool Session::DecidesMemory(const CommandSpec& spec) const {
  return (spec.flags & CommandSpec::kDenyOom) && ctx_.engine.MemoryLimit() != 0;
}

void Session::Dispatch(const CommandSpec* spec, std::string& out) {
  if (client_.pubsub.mailbox || client_.reply_mode != ReplyMode::kOn) [[unlikely]] {
    DispatchWithPushesOrSilence(spec, out);
    return;
  }
  DispatchCommand(spec, out);
}

void Session::FindStats() { stats_ = &ctx_.command_stats.ForThisThread(table_.commands().size()); }

// An error reply at the front of `reply` (its command's, if known):
// INFO errorstats, and commandstats' failed or rejected calls.
void Session::CountError(std::optional<size_t> command, Outcome outcome, std::string_view reply) {
  CommandStats::Block& stats = Stats();
  stats.ErrorReply(reply.substr(1, reply.find('\r') - 1));
  if (!command) return;
  if (outcome == Outcome::kRan) stats.Failed(*command);
  if (outcome == Outcome::kRejected) stats.Rejected(*command);
}

// The rare cases around a command: Pub/Sub messages that wait (published
// before it runs, they come first, as in a Redis client's buffer) and
// CLIENT REPLY OFF|SKIP (its replies are dropped, pushes kept).
void Session::DispatchWithPushesOrSilence(const CommandSpec* spec, std::string& out) {
  if (slots_.empty() && client_.pubsub.HasMessages()) RenderPushes(out);
  ReplyMode& mode = client_.reply_mode;
  if (mode == ReplyMode::kSkipNext) mode = ReplyMode::kSkip;  // this command's
  const size_t out_mark = out.size();
  const size_t slots_before = slots_.size();
  DispatchCommand(spec, out);
  // Decided after the command: CLIENT REPLY ON's own +OK is sent.
  const bool silent = mode == ReplyMode::kOff || mode == ReplyMode::kSkip;
  if (mode == ReplyMode::kSkip) mode = ReplyMode::kOn;
  if (!silent || (spec != nullptr && (spec->flags & CommandSpec::kPushReply))) return;
  if (slots_before == 0 && out.size() > out_mark) out.resize(out_mark);
  for (size_t i = slots_before; i < slots_.size(); ++i) slots_[i].silent = true;
}

void Session::DispatchCommand(const CommandSpec* spec, std::string& out) {
  Outcome outcome = Outcome::kRejected;
  std::string& immediate = slots_.empty() ? out : scratch_;
  const size_t mark = immediate.size();
  ReplyWriter writer(immediate, client_.protocol);
  Transaction& transaction = client_.transaction;
  // What CLIENT LIST shows as cmd=: Redis's processCommand() names the
  // command before any check (NULL for one it could not look up).
  if (client_.listing) {
    client_.listing->set_last_command(spec != nullptr ? NameAsRun(*spec, args_) : nullptr);
  }
  const bool queueing =
      transaction.open() && (spec == nullptr || !(spec->flags & CommandSpec::kNoMulti));
  // Redis's rejectCommand(): inside MULTI these errors doom the EXEC, even
  // for commands that are never queued.
  if (spec == nullptr) {
    outcome = Outcome::kUnknown;
    writer.Error(UnknownCommandError(args_));
    if (transaction.open()) transaction.Doom();
  } else if (!ArityMatches(spec->arity, args_.size())) {
    writer.Error(WrongArityError(spec->name));
    if (transaction.open()) transaction.Doom();
  } else if (!client_.authenticated && !(spec->flags & CommandSpec::kNoAuth)) {
    writer.Error(kNoAuthError);
    if (transaction.open()) transaction.Doom();
  } else if (transaction.open() && (spec->flags & CommandSpec::kRefusedInMulti)) {
    writer.Error("ERR Command not allowed inside a transaction");
    transaction.Doom();
  } else if (auto moved = MovedError(*spec, args_, client_.info, ctx_.settings)) {
    // A shard port whose thread does not own the key: Redis Cluster's answer.
    writer.Error(*moved);
    if (transaction.open()) transaction.Doom();
  } else if (queueing && ctx_.engine.MemoryLimit() != 0 && ctx_.engine.OverMemoryLimit()) {
    // Redis's processCommand(): while at maxmemory, MULTI queues nothing.
    writer.Error(kOomError);
    transaction.Doom();
  } else if (client_.pubsub.active && client_.protocol == RespVersion::kResp2 &&
             !AllowedWhileSubscribed(*spec)) [[unlikely]] {
    writer.Error("ERR Can't execute '" + FullCommandName(*spec, args_) +
                 "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in "
                 "this context");
    if (transaction.open()) transaction.Doom();
  } else if (queueing) {
    outcome = Outcome::kQueued;
    transaction.Queue(args_);
    writer.SimpleString("QUEUED");
  } else if (DecidesMemory(*spec) && ctx_.engine.OverMemoryLimit()) {
    // Redis's processCommand(): a command that may grow the dataset is
    // refused whole, before it runs, once used memory reached maxmemory.
    // ParseAndDispatch ran every earlier command of the read first.
    writer.Error(kOomError);
  } else if (spec->flags & CommandSpec::kExec) {
    ctx_.stats.total_commands_processed.fetch_add(1, std::memory_order_relaxed);
    RunExec(immediate, *spec);
    Stats().Called(table_.IndexOf(*spec));
    if (ctx_.monitors.active()) [[unlikely]]
      FeedMonitors(*spec, args_);  // after the commands it ran, as Redis shows them
    return;
  } else {
    outcome = Outcome::kRan;
    ctx_.stats.total_commands_processed.fetch_add(1, std::memory_order_relaxed);
    const size_t index = table_.IndexOf(*spec);
    const size_t first_op = batch_.ops.size();
    CommandCall call(args_, ctx_, client_, batch_, immediate, render_state_);
    spec->handler(call);
    Stats().Called(index);  // after it, as Redis counts (CONFIG RESETSTAT counts itself)
    if (ctx_.monitors.active()) [[unlikely]]
      FeedMonitors(*spec, args_);
    if (DecidesMemory(*spec)) {
      for (size_t i = first_op; i < batch_.ops.size(); ++i) batch_.ops[i].memory_admitted = true;
    }
    if (spec->flags & CommandSpec::kBlocking) [[unlikely]]
      StartBlocking();
    if (call.deferred()) {
      ReplySlot& slot = slots_.emplace_back();
      slot.deferred = call.deferred_reply();
      slot.protocol = client_.protocol;
      slot.command = static_cast<int32_t>(index);  // failed_calls, once rendered
      // A command that queued operations deferred its reply: only such a
      // write has something to log.
      if (append_log_ != nullptr && (spec->flags & CommandSpec::kWrite) &&
          slot.deferred.op_count != 0) {
        if (spec->flags & CommandSpec::kBlocking) [[unlikely]] {
          LogBlockingAttempt(slot.deferred.first_op);
        } else {
          LogCommand(slot.deferred.first_op, args_);
        }
      }
      return;
    }
  }
  if (immediate.size() > mark && immediate[mark] == '-') [[unlikely]]
    CountError(spec ? std::optional(table_.IndexOf(*spec)) : std::nullopt, outcome,
               std::string_view(immediate).substr(mark));
  if (!slots_.empty()) {
    slots_.push_back(ReplySlot{std::move(scratch_), {}});
    scratch_.clear();
  }
}

void Session::RunExec(std::string& immediate, const CommandSpec& exec) {
  ReplyWriter writer(immediate, client_.protocol);
  Transaction& transaction = client_.transaction;
  WatchRegistry::Watcher& watching = transaction.watcher();
  auto answer_now = [&] {
    if (!slots_.empty()) {
      slots_.push_back(ReplySlot{std::move(scratch_), {}});
      scratch_.clear();
    }
  };
  if (!transaction.open()) {
    writer.Error("ERR EXEC without MULTI");
    CountError(table_.IndexOf(exec), Outcome::kRan, "-ERR");
    answer_now();
    return;
  }
  const bool doomed = transaction.doomed();
  std::vector<std::vector<std::string>> queued = transaction.TakeQueued();
  if (doomed) {
    ctx_.watches.UnwatchAll(watching);
    writer.Error("EXECABORT Transaction discarded because of previous errors.");
    CountError(table_.IndexOf(exec), Outcome::kRan, "-EXECABORT");
    answer_now();
    return;
  }
  if (watching.touched.load(std::memory_order_acquire)) {
    ctx_.watches.UnwatchAll(watching);
    writer.NilArray();
    answer_now();
    return;
  }
  // The header renders once the engine has run the group (it may abort);
  // until then every reply of this read waits in slots.
  const size_t header = slots_.size();
  ReplySlot header_slot;
  header_slot.exec_header = true;
  header_slot.exec_count = static_cast<uint32_t>(queued.size());
  header_slot.protocol = client_.protocol;
  slots_.push_back(std::move(header_slot));
  exec_storage_.push_back(std::move(queued));
  // This EXEC's watches stay registered until the engine has run it: its
  // group reads their flag. WATCHes after it in the pipeline are new ones.
  exec_watchers_.push_back(transaction.TakeWatcher());
  WatchRegistry::Watcher& watcher = *exec_watchers_.back();
  const std::vector<std::vector<std::string>>& commands = exec_storage_.back();

  const uint32_t first_op = static_cast<uint32_t>(batch_.ops.size());
  // The watched keys join the group first (their results unused): the
  // engine holds them too while it reads the flag, so a write to one of
  // them is wholly before the EXEC (it touched the flag) or wholly after; and
  // one that expired since its WATCH is reclaimed there, touching the flag
  // before it is read. On the sharded engine this also orders the EXEC after
  // this connection's earlier writes to them.
  for (const std::string& key : watcher.keys) batch_.Add(MakeOp(OpCode::kWatchedKey, key));
  std::vector<std::string_view> args;
  for (const std::vector<std::string>& command : commands) {
    args.assign(command.begin(), command.end());
    const CommandSpec* spec = table_.Find(args[0]);  // found and checked when queued
    ctx_.stats.total_commands_processed.fetch_add(1, std::memory_order_relaxed);
    ReplySlot member;
    member.exec_member = true;
    const size_t op_before = batch_.ops.size();
    CommandCall call(args, ctx_, client_, batch_, member.text, render_state_, /*in_exec=*/true);
    spec->handler(call);
    const size_t index = table_.IndexOf(*spec);
    Stats().Called(index);
    if (ctx_.monitors.active()) [[unlikely]]
      FeedMonitors(*spec, args);
    member.command = static_cast<int32_t>(index);
    if (!member.text.empty() && member.text[0] == '-') [[unlikely]]
      CountError(index, Outcome::kRan, member.text);
    // Redis decides maxmemory for EXEC as a whole, before it runs.
    for (size_t i = op_before; i < batch_.ops.size(); ++i) batch_.ops[i].memory_admitted = true;
    if (call.deferred()) member.deferred = call.deferred_reply();
    member.protocol = client_.protocol;  // a HELLO inside the EXEC changes those after it
    slots_.push_back(std::move(member));
  }
  if (batch_.ops.size() > first_op) {
    batch_.GroupFrom(first_op, watcher.keys.empty() ? nullptr : &watcher.touched);
    slots_[header].exec_group = static_cast<int32_t>(batch_.groups.size() - 1);
    if (append_log_ != nullptr) LogTransaction(commands, header, batch_.groups.back());
  }
}

void Session::LogBlockingAttempt(uint32_t first_op) {
  // StartBlocking() took the command (outside MULTI; inside, EXEC's record
  // holds the command itself, which replays in EXEC and so never blocks).
  if (!block_) return;
  const std::vector<std::string_view> twin(block_->attempt.begin(), block_->attempt.end());
  LogCommand(first_op, twin);
}

void Session::LogCommand(uint32_t first_op, std::span<const std::string_view> args) {
  const uint32_t count = static_cast<uint32_t>(batch_.ops.size()) - first_op;
  const Operation& op = batch_.ops[first_op];
  // GroupQueued() made a command of several operations a group starting here.
  const bool grouped = !batch_.groups.empty() && batch_.groups.back().first == first_op;
  // A lone operation that cannot change anything runs as a read: no record.
  if (!grouped && count == 1 && !IsKeyless(op.code) && IsReadOnly(op)) return;
  auto record = std::make_shared<AofRecord>(append_log_);
  record->AddCommand(args, std::span<const Operation>(batch_.ops).subspan(first_op, count), 0);
  if (record->empty()) return;
  // A group of one operation is appended with its key held like any other;
  // FLUSHALL's holds every key at once, so that its record has one place
  // among the writes of every shard.
  if (!grouped) batch_.GroupFrom(first_op);
  batch_.groups.back().log = record.get();
  render_state_.push_back(std::move(record));
}

void Session::LogTransaction(const std::vector<std::vector<std::string>>& commands, size_t header,
                             AtomicGroup& group) {
  auto record = std::make_shared<AofRecord>(append_log_);
  std::vector<std::string_view> args;
  for (size_t i = 0; i < commands.size(); ++i) {
    // The member slots after the header say which operations each queued.
    const DeferredReply& queued = slots_[header + 1 + i].deferred;
    const CommandSpec* spec = table_.Find(commands[i][0]);
    if (!(spec->flags & CommandSpec::kWrite) || queued.op_count == 0) continue;
    args.assign(commands[i].begin(), commands[i].end());
    record->AddCommand(
        args, std::span<const Operation>(batch_.ops).subspan(queued.first_op, queued.op_count),
        queued.first_op - group.first);
  }
  if (record->empty()) return;
  record->WrapInTransaction();
  group.log = record.get();
  render_state_.push_back(std::move(record));
}

// The sampled request's first command is parsed (after the test-only spin).
void Session::NoteParsed() {
  if (sample_->spin_parse_ns != 0) SpinStageClock(sample_->spin_parse_ns);
  sample_->parsed = StageClockNs();
}

// Its replies are queued (or, without a complete command, it had none).
void Session::FinishSample() {
  if (sample_->parsed != 0) sample_->queued = StageClockNs();
  batch_.stage_marks = nullptr;
  sample_ = nullptr;
}

template <bool kSampled>
bool Session::ExecuteBatch() {
  if constexpr (kSampled) {
    if (sample_ != nullptr && sample_->handed == 0) {
      sample_->handed = StageClockNs();
      batch_.stage_marks = &sample_->engine;
    }
  }
  phase_.store(Phase::kExecuting, std::memory_order_relaxed);
  ctx_.engine.Execute(batch_, [this] { OnBatchDone(); });
  Phase expected = Phase::kExecuting;
  if (phase_.compare_exchange_strong(expected, Phase::kReturned, std::memory_order_acq_rel)) {
    return false;  // still running on another thread; OnBatchDone() resumes us
  }
  phase_.store(Phase::kIdle, std::memory_order_relaxed);
  return true;
}

void Session::OnBatchDone() {
  Phase expected = Phase::kExecuting;
  if (phase_.compare_exchange_strong(expected, Phase::kCompleted, std::memory_order_acq_rel)) {
    return;  // completed before Execute() returned: Process() carries on itself
  }
  // Process() has returned kPending: hand control back to the connection.
  std::function<void()> resume = std::move(resume_);
  phase_.store(Phase::kIdle, std::memory_order_release);
  resume();
}

bool Session::AwaitWaitersServed(std::function<void()>& resume) {
  // A blocked client's own look is a waiter's service: it never waits.
  if (block_ || !ctx_.blocking.AwaitServed(resume)) [[likely]]
    return false;
  awaiting_ = true;
  awaiting_served_ = true;
  return true;
}

void Session::StartBlocking() {
  std::shared_ptr<BlockingCommand> command = std::move(client_.may_block);
  if (!command || !wake_) return;  // it answered, or it runs as inside EXEC
  // Registered before its first look at the keys (blocking_registry.h).
  block_ = std::move(command);
  block_retry_ = false;
  waiter_ = ctx_.blocking.Block(client_.info.id, block_->keys, block_->deadline, wake_);
  // Its look runs alone and the client's later commands wait for its
  // answer: ParseAndDispatch() returns after it as after any command of a
  // per-command engine (per_read_batches_ is restored by EndBlocking()),
  // and Process() parses nothing more while block_ is set. Nothing on the
  // path of other commands checks for blocking.
  per_read_batches_ = false;
  input_exhausted_ = true;
}

template <bool kSampled>
void Session::FinishBatch(std::string& out) {
  if (block_ && !BlockingLookAnswers()) [[unlikely]]
    return;
  RenderSlots<kSampled>(out);
}

bool Session::BlockingLookAnswers() {
  const DeferredReply& look = slots_.back().deferred;
  std::span<const OpResult> results =
      std::span<const OpResult>(batch_.results).subspan(look.first_op, look.op_count);
  if (AttemptAnswers(*block_, results, block_retry_)) {
    EndBlocking();  // keeps the command for the reply's render
    return true;
  }
  slots_.clear();
  batch_.Clear();
  render_state_.clear();
  input_exhausted_ = true;  // the client waits: nothing more is parsed
  return false;
}

bool Session::ResumeBlocked(std::string& out) {
  if (retry_keys_.empty()) {
    BlockingRegistry::Wake wake = ctx_.blocking.Arm(*waiter_);
    std::string dropped;  // CLIENT REPLY OFF since it blocked: the answer goes nowhere
    ReplyWriter writer(client_.reply_mode == ReplyMode::kOff ? dropped : out, client_.protocol);
    switch (wake.event) {
      case BlockingRegistry::Event::kNone:
        return false;
      case BlockingRegistry::Event::kReady:
        retry_keys_ = std::move(wake.keys);
        break;
      case BlockingRegistry::Event::kTimeout:
      case BlockingRegistry::Event::kUnblockTimeout:
        WriteBlockingTimeout(*block_, writer);
        EndBlocking();
        return true;
      case BlockingRegistry::Event::kUnblockError:
        writer.Error(kUnblockedError);
        EndBlocking();
        return true;
    }
  }
  // One key per look, in the order the keys got data, as Redis serves them.
  const std::string key = std::move(retry_keys_.front());
  retry_keys_.erase(retry_keys_.begin());
  CommandCall call({}, ctx_, client_, batch_, scratch_, render_state_);
  QueueBlockingAttempt(call, *block_, std::span<const std::string>(&key, 1));
  ReplySlot& slot = slots_.emplace_back();
  slot.deferred = call.deferred_reply();
  slot.protocol = client_.protocol;
  slot.silent = client_.reply_mode == ReplyMode::kOff;
  if (append_log_ != nullptr && slot.deferred.op_count != 0) {
    LogBlockingAttempt(slot.deferred.first_op);
  }
  block_retry_ = true;
  return true;
}

void Session::EndBlocking() {
  per_read_batches_ = batch_every_read_ || ctx_.engine.Traits().batch_per_read;
  input_exhausted_ = false;  // the commands after it may be parsed now
  if (waiter_) ctx_.blocking.Unblock(*waiter_);
  waiter_.reset();
  // A render, or a look still in the engine, may read it: it lives until
  // the next batch is rendered.
  render_state_.push_back(std::move(block_));
  retry_keys_.clear();
}

void Session::CancelBlocking() {
  if (block_) EndBlocking();
}

template <bool kSampled>
void Session::RenderSlots(std::string& out) {
  std::span<const OpResult> all(batch_.results);
  // Swap rather than move so both vectors keep their capacity across reads.
  std::vector<ReplySlot>& slots = rendering_;
  slots.swap(slots_);
  bool dropping_exec = false;
  for (ReplySlot& slot : slots) {
    ReplyWriter writer(out, slot.protocol);
    if (slot.exec_header) {
      dropping_exec = slot.exec_group >= 0 && batch_.groups[slot.exec_group].aborted;
      if (slot.silent) continue;  // CLIENT REPLY OFF|SKIP: its members are silent too
      if (dropping_exec) {
        writer.NilArray();
      } else {
        writer.ArrayHeader(slot.exec_count);
      }
      continue;
    }
    if ((slot.exec_member && dropping_exec) || slot.silent) continue;
    const DeferredReply& deferred = slot.deferred;
    if (deferred.render == nullptr) {
      out.append(slot.text);
      continue;
    }
    std::span<const OpResult> results = all.subspan(deferred.first_op, deferred.op_count);
    const size_t at = out.size();
    // Errors any command's operations may meet, answered the same for every
    // command: the memory limit, and a key holding another type of value.
    const EngineError shared = SharedError(results);
    if (shared == EngineError::kOutOfMemory) {
      writer.Error(kOomError);
    } else if (shared == EngineError::kWrongType) {
      writer.Error(kWrongTypeError);
    } else {
      deferred.render(deferred, results, writer, ctx_);
    }
    if (out.size() > at && out[at] == '-' && slot.command >= 0) [[unlikely]]
      CountError(static_cast<size_t>(slot.command), Outcome::kRan,
                 std::string_view(out).substr(at));
  }
  slots.clear();
  batch_.Clear();
  // The sampled batch's replies are queued: later batches of the read are not sampled.
  if constexpr (kSampled) {
    if (sample_ != nullptr && sample_->handed != 0) FinishSample();
  }
  if (!render_state_.empty()) render_state_.clear();
  exec_storage_.clear();
  // EXECs forget their WATCHes once they have run (Redis: unwatchAllKeys).
  for (auto& watcher : exec_watchers_) ctx_.watches.UnwatchAll(*watcher);
  exec_watchers_.clear();
}

}  // namespace kvlab
