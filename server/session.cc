#include "server/session.h"

#include <cstring>

#include "server/command_table.h"

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

bool HasOutOfMemory(std::span<const OpResult> results) {
  for (const OpResult& result : results) {
    if (result.kind == OpResult::Kind::kError && result.error == EngineError::kOutOfMemory) {
      return true;
    }
  }
  return false;
}

}  // namespace

Session::Session(ServerContext& ctx, ClientInfo info)
    : ctx_(ctx), table_(CommandTable::Instance()) {
  client_.info = std::move(info);
  client_.authenticated = ctx_.settings.requirepass.empty();
  per_read_batches_ = ctx_.engine.Traits().batch_per_read;
}

Session::~Session() = default;

Session::Progress Session::Process(std::string& out, std::function<void()> resume,
                                 size_t out_limit) {
  out_limit_ = out_limit;
  if (awaiting_) {
    // The engine finished on some thread; its completion published the
    // results with a release store that this acquire load pairs with.
    awaiting_ = false;
    phase_.load(std::memory_order_acquire);
    RenderSlots(out);
  }
  resume_ = std::move(resume);
  input_exhausted_ = false;
  while (true) {
    if (!batch_.ops.empty()) {
      if (!ExecuteBatch()) {
        awaiting_ = true;
        return Progress::kPending;
      }
      RenderSlots(out);
      continue;
    }
    if (!slots_.empty()) {  // deferred replies that needed no engine work
      RenderSlots(out);
      continue;
    }
    if (over_limit_ || out.size() > out_limit_) {
      over_limit_ = true;
      resume_ = nullptr;
      return Progress::kOutputLimit;
    }
    if (client_.close_after_reply || protocol_error_ || input_exhausted_) break;
    ParseAndDispatch(out);
  }
  parser_.Compact(input_);
  resume_ = nullptr;
  return (client_.close_after_reply || protocol_error_) ? Progress::kClose : Progress::kNeedInput;
}

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
        ReplyWriter(target).Error(parser_.error());
        protocol_error_ = true;
        return;
      }
      if (args_.empty()) continue;  // "*0", "*-1" or a blank inline line
    }
    holding_command_ = false;
    const CommandSpec* spec = table_.Find(args_[0]);
    if (spec != nullptr && (spec->flags & CommandSpec::kTwoStep) && !slots_.empty()) {
      // A two-step command runs alone: finish what is queued first.
      holding_command_ = true;
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
    if (!slots_.empty() && slots_.back().deferred.follow_up != nullptr) return;
    if (!per_read_batches_ && !batch_.ops.empty()) return;
  }
}

// Without --maxmemory nothing is refused, and the engine's own check never
// fires either: the rule costs nothing then.
bool Session::DecidesMemory(const CommandSpec& spec) const {
  return (spec.flags & CommandSpec::kDenyOom) && ctx_.settings.engine.max_memory_bytes != 0;
}

void Session::Dispatch(const CommandSpec* spec, std::string& out) {
  std::string& immediate = slots_.empty() ? out : scratch_;
  ReplyWriter writer(immediate);
  if (spec == nullptr) {
    writer.Error(UnknownCommandError(args_));
  } else if (!ArityMatches(spec->arity, args_.size())) {
    writer.Error(WrongArityError(spec->name));
  } else if (!client_.authenticated && !(spec->flags & CommandSpec::kNoAuth)) {
    writer.Error(kNoAuthError);
  } else if (DecidesMemory(*spec) && ctx_.engine.OverMemoryLimit()) {
    // Redis's processCommand(): a command that may grow the dataset is
    // refused whole, before it runs, once used memory reached maxmemory.
    // ParseAndDispatch ran every earlier command of the read first.
    writer.Error(kOomError);
  } else {
    ctx_.stats.total_commands_processed.fetch_add(1, std::memory_order_relaxed);
    const size_t first_op = batch_.ops.size();
    CommandCall call(args_, ctx_, client_, batch_, immediate);
    spec->handler(call);
    if (DecidesMemory(*spec)) {
      for (size_t i = first_op; i < batch_.ops.size(); ++i) batch_.ops[i].memory_admitted = true;
    }
    if (call.deferred()) {
      slots_.push_back(ReplySlot{{}, std::move(call.deferred_reply())});
      return;
    }
  }
  if (!slots_.empty()) {
    slots_.push_back(ReplySlot{std::move(scratch_), {}});
    scratch_.clear();
  }
}

bool Session::ExecuteBatch() {
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

void Session::RenderSlots(std::string& out) {
  ReplyWriter writer(out);
  std::span<const OpResult> all(batch_.results);
  // Swap rather than move so both vectors keep their capacity across reads.
  std::vector<ReplySlot>& slots = rendering_;
  slots.swap(slots_);
  for (ReplySlot& slot : slots) {
    if (out.size() > out_limit_) {
      over_limit_ = true;  // the connection closes: the rest is never rendered
      break;
    }
    const DeferredReply& deferred = slot.deferred;
    if (deferred.render == nullptr && deferred.follow_up == nullptr) {
      out.append(slot.text);
      continue;
    }
    std::span<const OpResult> results = all.subspan(deferred.first_op, deferred.op_count);
    if (HasOutOfMemory(results)) {
      writer.Error(kOomError);
    } else if (deferred.render != nullptr) {
      deferred.render(deferred, results, writer, ctx_);
    } else {
      // Two-step command (always alone in its batch): the follow-up answers
      // directly or queues the next batch.
      std::vector<OpResult> first_step(results.begin(), results.end());
      batch_.Clear();
      CommandCall call(args_, ctx_, client_, batch_, out);
      deferred.follow_up(deferred, first_step, call);
      if (call.deferred()) slots_.push_back(ReplySlot{{}, std::move(call.deferred_reply())});
      slots.clear();
      return;
    }
  }
  slots.clear();
  batch_.Clear();
}

}  // namespace kvlab
