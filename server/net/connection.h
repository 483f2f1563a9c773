// Connection: one client socket (TCP or Unix) driving one Session.
//
// The loop (Redis's): the EventLoop reports the socket readable -> one recv()
// -> Session::Process(out, resume) -> send everything the read produced with
// non-blocking send() calls -> wait for the next readiness report. Only when
// the socket is full does the connection also watch for writability, then
// send again. Input keeps being read while replies wait, until the unsent
// replies pass the output-buffer limit: the Session then stops parsing (the
// limit is passed into Session::Process()) and the connection stops reading
// the client until they have left, so a client that pipelines without
// reading holds about one limit's worth of replies, its later requests
// waiting in its own socket. One reply larger than the limit (a 100 MB GET)
// is sent whole: Redis limits no normal client's replies. Before AUTH the
// limit is small and crossing it closes the client; a subscriber whose
// pushed messages pass it is closed too (Redis's pubsub limit: other clients
// publish them, so pausing this one would not bound them). Unparsed input
// past the query-buffer limit closes the client. When the engine runs
// a batch asynchronously (sharded), `resume` arrives on a shard thread and is
// posted back to this connection's loop; bytes that arrive meanwhile are
// staged, because the pending batch points into the session's input. The
// engine's threads are woken once per round of this I/O thread, not once per
// batch (Engine::WakeDeferred(), run after the round). With --appendonly yes
// the replies of a round are held until one write (and under appendfsync
// always one fsync) after the round covers every write they may show
// (HoldUntilDurable()).
//
// INFO stages: every Nth read of the I/O thread (StageStats::sample_every)
// starts a sampled request, timed from the loop's wake-up to the send that
// carries its reply; one at a time per connection. A read while a batch is
// pending cannot start one (its bytes belong to a later request): its
// sample starts when the batch returns, with the request processed next,
// timed from the wake-up that ran the return.
//
// Thread-safety: every member runs on the connection's EventLoop thread;
// only the resume callback is invoked elsewhere, and it only posts, and
// Kill() (CLIENT KILL on another connection), which shuts the socket down
// under kill_mutex_ and posts the close.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "base/mutex.h"
#include "server/net/event_loop.h"
#include "server/server_settings.h"
#include "server/session.h"
#include "server/stage_sample.h"
#include "server/stage_stats.h"

namespace kvlab {

class ConnectionRegistry;

// Before AUTH a client's unsent replies may hold what Redis's 16 KiB reply
// buffer plus 1 KiB of reply list hold (CVE-2025-21605): one that sends
// commands and never reads their NOAUTH errors is closed, not buffered for.
inline constexpr uint64_t kUnauthenticatedOutputBufferLimit = 17 * 1024;

struct ConnectionLimits {
  uint64_t output_buffer_bytes = kDefaultClientOutputBufferLimit;
  uint64_t query_buffer_bytes = kDefaultClientQueryBufferLimit;
};

class Connection final : public EventLoop::Watcher,
                         public std::enable_shared_from_this<Connection> {
 public:
  // Takes ownership of `socket_fd` (a connected stream socket). REQUIRES:
  // `loop`, `context` and `registry` outlive the connection.
  Connection(EventLoop& loop, int socket_fd, ServerContext& context, ClientInfo info,
             ConnectionLimits limits, ConnectionRegistry& registry);
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  uint64_t id() const { return id_; }
  EventLoop& loop() { return loop_; }

  // Both must run on the connection's loop thread.
  void Start();
  void CloseNow();
  // CLIENT KILL from any thread: shuts the socket down now, closes on the
  // connection's thread.
  void Kill();

  void OnReady(uint32_t events) override;
  // A blocked client's registry woke it (posted to this loop).
  void OnBlockWake();
  // Pub/Sub messages arrived for this client (posted to this loop).
  void OnPushWake();

 private:
  void Read();
  void Drive();
  void ResumeIfDrained();
  // Renders the waiting Pub/Sub messages and sends them. REQUIRES: no batch pending.
  void DeliverPushes();
  void Flush();
  // Flush(), or with the log on HoldUntilDurable() first.
  void FlushOrHold();
  void HoldUntilDurable();
  void ReleaseHeld();  // the held replies join out_
  uint32_t WantedEvents() const;
  void UpdateInterest();
  uint64_t UnsentBytes() const { return out_.size() - out_sent_; }
  // client-output-buffer-limit, or far less before AUTH (OutputLimit()).
  uint64_t OutputLimit() const;
  void Unregister();
  void WakeEngineAfterThisRound();
  uint64_t UnparsedBytes() { return session_.input().size() + staged_input_.size(); }
  // INFO stages: whether this read starts a sampled request, and its end.
  void MaybeSampleThisRead(uint32_t every, int64_t received_ns);
  void StartOwedSample();
  void StartSample(int64_t wake, int64_t received_ns);
  void FinishSample();

  EventLoop& loop_;
  int fd_;  // -1 once closed
  const uint64_t id_;
  Session session_;
  const ConnectionLimits limits_;
  ConnectionRegistry& registry_;
  ServerStats& stats_;
  StageStats& stages_;
  Engine& engine_;

  std::array<char, 16 * 1024> read_buffer_;
  std::string staged_input_;  // received while a batch is pending
  std::string out_;           // replies not yet sent; the first out_sent_ bytes are sent
  size_t out_sent_ = 0;

  bool write_blocked_ = false;  // the socket was full: waiting for it to drain
  bool session_done_ = false;   // Process() said kClose (QUIT, protocol error)
  bool peer_done_ = false;      // the client sent EOF: answer what it sent, then close
  bool closed_ = false;
  bool unregistered_ = false;
  bool pending_batch_ = false;  // an engine batch is running (held as the loop's work)
  bool blocked_ = false;        // the client waits in BLPOP or its kin (Session kBlocked)
  // The unsent replies passed the output limit (Session kOutputLimit): the
  // client is not read until they have left (ResumeIfDrained()).
  bool output_full_ = false;
  // Keeps this connection alive while a batch is pending: the resume
  // callback holds only `this`, so the std::function that carries it fits
  // its small buffer and costs no allocation per read.
  std::shared_ptr<Connection> keep_alive_;
  // Last, so that the members above keep their offsets (read_buffer_'s
  // alignment sets the cost of every copy out of it, counted by `make regress`).
  // --appendonly yes: the log whose write (fsync under always) replies
  // wait for; else null.
  DurableLog* const durable_log_;
  std::string held_;  // with the log: replies waiting for the round's write
  // The sampled request in flight (stage_sample.h), while `sampling_`.
  StageSample sample_;
  bool sampling_ = false;
  bool sample_on_resume_ = false;  // a read owed a sample while a batch was away
  // Pub/Sub messages arrived while a batch was away: delivered on its return.
  bool pushes_owed_ = false;
  // The socket as Kill() may shut it down: -1 once CloseNow() closes it.
  Mutex kill_mutex_;
  int killable_fd_ GUARDED_BY(kill_mutex_);
};

}  // namespace kvlab
