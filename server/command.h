// Command: how one Redis command is described (name, arity) and executed.
//
// A handler receives the parsed arguments and either answers at once through
// `call.reply()` (PING, ECHO, AUTH, syntax errors, ...) or adds single-key
// Operations to the connection's Batch and names a Render function that turns
// their OpResults into the reply once the engine has executed the batch. The
// Session keeps replies in command order whichever way they were produced.
//
// Not thread-safe: a CommandCall lives on its connection's thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "engines/engine.h"
#include "server/client_info.h"
#include "server/reply_writer.h"
#include "server/server_context.h"

namespace kvlab {

// Per-connection state commands read and change.
struct ClientState {
  ClientInfo info;
  bool authenticated = false;
  bool close_after_reply = false;  // QUIT
  std::string name;                // CLIENT SETNAME
};

struct DeferredReply;
class CommandCall;
// Renders a deferred reply from the results of the operations it queued.
using RenderFn = void (*)(const DeferredReply& deferred, std::span<const OpResult> results,
                          ReplyWriter& writer, ServerContext& server);
// A second step for commands that must read before they write (EXPIRE NX/XX/
// GT/LT): gets the first step's results and answers or queues more work
// through `call`, exactly like a handler.
using FollowUpFn = void (*)(const DeferredReply& deferred, std::span<const OpResult> results,
                            CommandCall& call);

// A reply that waits for the engine: which operations of the batch are its,
// how to render them, and what its command must remember until then (set
// through CommandCall::deferred_reply() after Defer()/DeferFollowUp()).
struct DeferredReply {
  RenderFn render = nullptr;
  FollowUpFn follow_up = nullptr;  // set instead of `render` for two-step commands
  uint32_t first_op = 0;
  uint32_t op_count = 0;
  int64_t expire_conditions = 0;   // EXPIRE/PEXPIRE: its NX/XX/GT/LT options, as bits
  int64_t expire_deadline_ms = 0;  // EXPIRE/PEXPIRE: the absolute deadline it would set
  std::string info_sections;       // INFO: the sections asked for, lower case, space-separated
};

class CommandCall {
 public:
  CommandCall(std::span<const std::string_view> args, ServerContext& server, ClientState& client,
              Batch& batch, std::string& immediate_out)
      : args(args), server(server), client(client), batch_(batch), immediate_(immediate_out) {}

  // Answer now. Must not be combined with Defer() in one call.
  ReplyWriter reply() { return ReplyWriter(immediate_); }

  // Queue an operation; its result goes to the render function given to Defer().
  void Add(const Operation& op) {
    if (!deferred_) first_op_ = static_cast<uint32_t>(batch_.ops.size());
    batch_.Add(op);
    deferred_ = true;
  }
  // Render the reply from the queued operations' results once they are done.
  void Defer(RenderFn render) {
    if (!deferred_) first_op_ = static_cast<uint32_t>(batch_.ops.size());
    deferred_ = true;
    deferred_reply_.render = render;
    deferred_reply_.first_op = first_op_;
    deferred_reply_.op_count = static_cast<uint32_t>(batch_.ops.size()) - first_op_;
  }

  // Like Defer(), but hand the results to `follow_up` instead of rendering;
  // the follow-up's CommandCall has the same args.
  // REQUIRES: the command was dispatched alone (CommandSpec::kTwoStep).
  void DeferFollowUp(FollowUpFn follow_up) {
    Defer(nullptr);
    deferred_reply_.follow_up = follow_up;
  }

  bool deferred() const { return deferred_; }
  DeferredReply& deferred_reply() { return deferred_reply_; }

  const std::span<const std::string_view> args;
  ServerContext& server;
  ClientState& client;

 private:
  Batch& batch_;
  std::string& immediate_;
  bool deferred_ = false;
  uint32_t first_op_ = 0;
  DeferredReply deferred_reply_;
};

using CommandHandler = void (*)(CommandCall& call);

}  // namespace kvlab
