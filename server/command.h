// Command: how one Redis command is described (name, arity) and executed.
//
// A handler receives the parsed arguments and either answers at once through
// `call.reply()` (PING, ECHO, AUTH, syntax errors, ...) or adds single-key
// Operations to the connection's Batch and names a Render function that turns
// their OpResults into the reply once the engine has executed the batch. The
// Session keeps replies in command order whichever way they were produced.
// A command of several operations calls GroupQueued() so that the engine
// runs them as one atomic step, as Redis runs every command.
//
// Not thread-safe: a CommandCall lives on its connection's thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engines/calls/atomic_group.h"
#include "engines/engine.h"
#include "server/client_directory.h"
#include "server/client_info.h"
#include "server/client_subscriptions.h"
#include "server/reply_writer.h"
#include "server/server_context.h"
#include "server/transaction.h"

namespace kvlab {

struct BlockingCommand;  // server/blocking_command.h

// CLIENT REPLY: kOff drops every reply; SKIP sets kSkipNext, which the
// next command turns into kSkip (its replies dropped) and then back to kOn.
// Pushes (Pub/Sub) are never dropped.
enum class ReplyMode : uint8_t { kOn, kOff, kSkipNext, kSkip };

// Per-connection state commands read and change.
struct ClientState {
  ClientInfo info;
  bool authenticated = false;
  bool close_after_reply = false;              // QUIT
  std::string name;                            // CLIENT SETNAME
  RespVersion protocol = RespVersion::kResp2;  // HELLO 2 | HELLO 3
  ReplyMode reply_mode = ReplyMode::kOn;       // CLIENT REPLY
  Transaction transaction;                     // MULTI ... EXEC, WATCH
  // Set by a blocking command (CommandSpec::kBlocking) that may wait for
  // its keys, outside EXEC: the Session blocks the client if its first
  // look finds nothing, and takes it back.
  std::shared_ptr<BlockingCommand> may_block;
  ClientSubscriptions pubsub;  // SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE
  // What other clients' CLIENT LIST shows of this one (null: a Session with
  // no connection, listed nowhere). Commands that change what it shows
  // call RefreshListing().
  std::shared_ptr<ClientDirectory::Listing> listing;
};

struct DeferredReply;
class CommandCall;
// Renders a deferred reply from the results of the operations it queued.
using RenderFn = void (*)(const DeferredReply& deferred, std::span<const OpResult> results,
                          ReplyWriter& writer, ServerContext& server);
// A reply that waits for the engine: which operations of the batch are its,
// how to render them, and what its command must remember until then (set
// through CommandCall::deferred_reply() after Defer()).
// Trivially copyable: one is moved per command on the hot path.
struct DeferredReply {
  RenderFn render = nullptr;
  uint32_t first_op = 0;
  uint32_t op_count = 0;
  int64_t flags = 0;  // a command's options, for its render (COPY, LCS, ...)
  // What a render needs beyond the results (INFO's sections, SCAN's keys),
  // kept alive by the Session until the reply is rendered (KeepForRender()).
  const void* state = nullptr;
};

class CommandCall {
 public:
  // `render_state` keeps what KeepForRender() is given until the replies
  // of the batch are rendered.
  CommandCall(std::span<const std::string_view> args, ServerContext& server, ClientState& client,
              Batch& batch, std::string& immediate_out,
              std::vector<std::shared_ptr<const void>>& render_state, bool in_exec = false)
      : args(args),
        server(server),
        client(client),
        batch_(batch),
        immediate_(immediate_out),
        render_state_(render_state),
        in_exec_(in_exec) {}

  // Answer now. Must not be combined with Defer() in one call.
  ReplyWriter reply() { return ReplyWriter(immediate_, client.protocol); }

  // Queue an operation; its result goes to the render function given to Defer().
  void Add(const Operation& op) {
    if (!deferred_) first_op_ = static_cast<uint32_t>(batch_.ops.size());
    batch_.Add(op);
    deferred_ = true;
  }
  // Queue `op` with a copy of this command's arguments in the batch's pool
  // (a container command reads them when it runs).
  void AddWithArgs(Operation op) {
    op.arg_pool = &batch_.arg_pool;
    op.arg_first = static_cast<uint32_t>(batch_.arg_pool.size());
    op.arg_count = static_cast<uint32_t>(args.size());
    batch_.arg_pool.insert(batch_.arg_pool.end(), args.begin(), args.end());
    Add(op);
  }
  // Queue `op` with the copy of the arguments the previous AddWithArgs()
  // made (a command's steps share one copy). REQUIRES: the last arguments
  // added to the pool are that copy.
  void AddWithSharedArgs(Operation op) {
    op.arg_pool = &batch_.arg_pool;
    op.arg_first = static_cast<uint32_t>(batch_.arg_pool.size() - args.size());
    op.arg_count = static_cast<uint32_t>(args.size());
    Add(op);
  }
  // Render the reply from the queued operations' results once they are done.
  void Defer(RenderFn render) {
    if (!deferred_) first_op_ = static_cast<uint32_t>(batch_.ops.size());
    deferred_ = true;
    deferred_reply_.render = render;
    deferred_reply_.first_op = first_op_;
    deferred_reply_.op_count = static_cast<uint32_t>(batch_.ops.size()) - first_op_;
  }

  // The operations this command queued run as one atomic step (an
  // AtomicGroup). Inside EXEC the whole transaction is already one group.
  void GroupQueued() {
    if (!deferred_ || in_exec_) return;
    const uint32_t count = static_cast<uint32_t>(batch_.ops.size()) - first_op_;
    bool needs_state = false;
    for (uint32_t i = first_op_; i < batch_.ops.size(); ++i) {
      needs_state |= NeedsGroupState(batch_.ops[i]);
    }
    if (count > 1 || needs_state) batch_.GroupFrom(first_op_);
  }

  // Keeps `state` alive for the render and points deferred_reply().state at
  // it. REQUIRES: Defer() was called.
  template <typename T>
  const T* KeepForRender(std::shared_ptr<T> state) {
    const T* kept = state.get();
    render_state_.push_back(std::move(state));
    deferred_reply_.state = kept;
    return kept;
  }

  bool deferred() const { return deferred_; }
  DeferredReply& deferred_reply() { return deferred_reply_; }
  // Whether the command runs inside EXEC (a blocking command may not block).
  bool in_exec() const { return in_exec_; }

  // A call with other arguments that queues into this one's batch and
  // answers into its reply: a blocking command runs its non-blocking twin
  // through it, then Adopt()s what that queued.
  CommandCall WithArgs(std::span<const std::string_view> other) {
    return CommandCall(other, server, client, batch_, immediate_, render_state_, in_exec_);
  }
  void Adopt(const CommandCall& other) {
    deferred_ = other.deferred_;
    first_op_ = other.first_op_;
    deferred_reply_ = other.deferred_reply_;
  }

  const std::span<const std::string_view> args;
  ServerContext& server;
  ClientState& client;

 private:
  Batch& batch_;
  std::string& immediate_;
  std::vector<std::shared_ptr<const void>>& render_state_;
  const bool in_exec_;
  bool deferred_ = false;
  uint32_t first_op_ = 0;
  DeferredReply deferred_reply_;
};

using CommandHandler = void (*)(CommandCall& call);

}  // namespace kvlab
