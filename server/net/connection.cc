#include "server/net/connection.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "base/stage_clock.h"
#include "server/net/connection_registry.h"
#include "server/server_context.h"

namespace kvlab {
namespace {

// While a batch is pending, read ahead at most this much: enough to batch the
// next commands, little enough that a fast pipeliner waits in its own socket
// buffer rather than in our memory.
constexpr size_t kStagedInputHighWater = 64 * 1024;

// Output buffer capacity kept after it empties; larger ones are released.
constexpr size_t kRetainedOutputCapacity = 64 * 1024;

// Whether this I/O thread has asked for its engine wake-up this round.
thread_local bool engine_wake_requested = false;

// --appendonly: this I/O thread's connections whose replies wait for the
// round's writes to reach the log (HoldUntilDurable()).
thread_local std::vector<std::shared_ptr<Connection>> awaiting_durability;
// Reads of this I/O thread left until the next sampled one (INFO stages).
thread_local uint32_t reads_until_sample = 1;

}  // namespace

Connection::Connection(EventLoop& loop, int socket_fd, ServerContext& context, ClientInfo info,
                       ConnectionLimits limits, ConnectionRegistry& registry)
    : loop_(loop),
      fd_(socket_fd),
      id_(info.id),
      session_(context, std::move(info)),
      limits_(limits),
      registry_(registry),
      stats_(context.stats),
      stages_(context.stages),
      engine_(context.engine),
      durable_log_(context.append_log),
      killable_fd_(socket_fd) {
  stats_.connected_clients.fetch_add(1, std::memory_order_relaxed);
}

Connection::~Connection() {
  if (fd_ >= 0) ::close(fd_);  // never started (the loop ended first)
  Unregister();
}

void Connection::Unregister() {
  if (unregistered_) return;
  unregistered_ = true;
  registry_.Remove(id_);
  stats_.connected_clients.fetch_sub(1, std::memory_order_relaxed);
}

void Connection::Start() {
  engine_.DeferWakeupsOnThisThread();  // this thread calls WakeDeferred(): see Drive()
  session_.SetBlockingWake([weak = weak_from_this(), loop = &loop_] {
    loop->Post([weak] {
      if (std::shared_ptr<Connection> self = weak.lock()) self->OnBlockWake();
    });
  });
  session_.SetPushWake([weak = weak_from_this(), loop = &loop_] {
    loop->Post([weak] {
      if (std::shared_ptr<Connection> self = weak.lock()) self->OnPushWake();
    });
  });
  session_.ListAs([weak = weak_from_this()] {  // CLIENT KILL, on the killer's thread
    if (std::shared_ptr<Connection> self = weak.lock()) self->Kill();
  });
  if (!loop_.Watch(fd_, shared_from_this(), WantedEvents())) CloseNow();
}

// What the loop should report for this socket now. Input is wanted until the
// client or the session is done, and, while a batch is pending, until the
// staged input reaches its high-water mark (the client then waits in its own
// socket buffer); not while the unsent replies are past the output limit
// (output_full_: the client's next requests wait in its socket until they
// drain). Writability is wanted only while replies wait for room.
uint32_t Connection::WantedEvents() const {
  uint32_t wanted = 0;
  const bool input_wanted =
      !session_done_ && !peer_done_ && !output_full_ &&
      !((pending_batch_ || blocked_) && staged_input_.size() >= kStagedInputHighWater);
  if (input_wanted) wanted |= EPOLLIN;
  if (write_blocked_) wanted |= EPOLLOUT;
  return wanted;
}

// Tells the loop; no system call unless the wanted events changed.
void Connection::UpdateInterest() {
  if (closed_) return;
  if (!loop_.Change(fd_, WantedEvents())) CloseNow();
}

void Connection::OnReady(uint32_t events) {
  if (closed_) return;
  const bool failed = (events & (EPOLLERR | EPOLLHUP)) != 0;
  if (write_blocked_ && (events & EPOLLOUT || failed)) {
    write_blocked_ = false;
    Flush();  // a failed socket reports its error here and closes
    ResumeIfDrained();
  }
  if (!closed_ && (WantedEvents() & EPOLLIN) && (events & EPOLLIN || failed)) Read();
  UpdateInterest();
}

// One recv() per readiness report, as Redis reads once per event: the set is
// level-triggered, so input left in the socket is reported again next round.
void Connection::Read() {
  const ssize_t bytes = ::recv(fd_, read_buffer_.data(), read_buffer_.size(), MSG_DONTWAIT);
  if (bytes == 0) {
    // The client finished sending: answer what it sent, then close.
    peer_done_ = true;
    Drive();
    return;
  }
  if (bytes < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    CloseNow();  // reset, mid-bulk or otherwise: nothing can be delivered any more
    return;
  }
  if (session_done_) return;  // after QUIT or a protocol error, input is ignored
  if (const uint32_t every = stages_.sample_every.load(std::memory_order_relaxed); every != 0)
      [[unlikely]] {
    MaybeSampleThisRead(every, StageClockNs());
  }
  stats_.total_net_input_bytes.fetch_add(static_cast<uint64_t>(bytes), std::memory_order_relaxed);
  // Bytes go to the session unless a pending batch still points into its
  // input, or the client is blocked (its later commands wait, as in Redis).
  (pending_batch_ || blocked_ ? staged_input_ : session_.input())
      .append(read_buffer_.data(), static_cast<size_t>(bytes));
  if (UnparsedBytes() > limits_.query_buffer_bytes) {
    CloseNow();  // Redis: "closing client that reached max query buffer length"
    return;
  }
  Drive();
}

void Connection::OnBlockWake() {
  if (closed_ || !blocked_) return;
  blocked_ = false;
  Drive();
  UpdateInterest();
}

// Messages wait while a batch is away: its replies are rendered when it
// returns, and a message published after it ran must follow them.
void Connection::OnPushWake() {
  if (closed_) return;
  if (pending_batch_) {
    pushes_owed_ = true;
    return;
  }
  DeliverPushes();
}

void Connection::DeliverPushes() {
  pushes_owed_ = false;
  if (session_done_) return;  // after QUIT nothing more is written (Redis: close-after-reply)
  session_.RenderPushes(durable_log_ == nullptr ? out_ : held_);
  if (UnsentBytes() > OutputLimit()) {
    CloseNow();  // a subscriber that does not read: client-output-buffer-limit
    return;
  }
  FlushOrHold();
  UpdateInterest();
}

// Counts the read; every `every`-th one on this thread becomes a sampled
// request. When this connection cannot time it (one in flight already, a
// round not timed), the sample is owed to the next read on this thread that
// can. A read while this connection's batch is away owes it to the batch's
// return instead (StartOwedSample()): owed to the thread, it waited for a
// connection with no batch away, which with a hop per command and 50
// pipelining clients gave sharded-hop-command a fifth of the others'
// samples per request (204 against 976 per million at every 64th read).
void Connection::MaybeSampleThisRead(uint32_t every, int64_t received_ns) {
  if (reads_until_sample > every) reads_until_sample = every;  // the rate was lowered
  if (--reads_until_sample != 0) return;
  const int64_t wake = loop_.RoundWokeNs();
  if (sampling_ || wake == 0) {
    reads_until_sample = 1;  // owed: the next read tries again
    return;
  }
  reads_until_sample = every;
  if (pending_batch_) {
    sample_on_resume_ = true;
    return;
  }
  StartSample(wake, received_ns);
}

// The batch is back and a read owed a sample meanwhile: the request
// processed next is sampled, its `read` stage from the wake-up that ran
// this return to now (its bytes arrived earlier; their wait behind its own
// connection's batch is not a server stage).
void Connection::StartOwedSample() {
  sample_on_resume_ = false;
  const int64_t wake = loop_.RoundWokeNs();
  if (sampling_ || wake == 0 || stages_.sample_every.load(std::memory_order_relaxed) == 0) return;
  StartSample(wake, StageClockNs());
}

void Connection::StartSample(int64_t wake, int64_t received_ns) {
  sampling_ = true;
  sample_.spin_parse_ns = stages_.spin_parse_ns;
  sample_.engine.spin_ns = stages_.spin_execute_ns;
  sample_.Start(wake, received_ns);
  session_.SampleNextRequest(&sample_);
}

// After a Flush() that emptied the output: the sampled reply is sent, or
// the read held no complete command (nothing was queued) and the sample is
// dropped.
void Connection::FinishSample() {
  if (sample_.queued != 0) {
    sample_.sent = StageClockNs();
    stages_.Record(sample_);
    sampling_ = false;
  } else if (!pending_batch_) {
    sampling_ = false;
  }
}

// Processes what the client sent, as far as the output limit allows, and
// goes on at once where the socket took every reply of a paused client
// (nothing else would wake it: its input is not watched while paused).
void Connection::Drive() {
  while (true) {
    if (closed_ || pending_batch_) return;
    if (blocked_) {
      // A client that went away stops waiting (Redis frees it).
      if (peer_done_) CloseNow();
      return;
    }
    if (session_done_) {
      FlushOrHold();
      return;
    }
    if (!staged_input_.empty()) {
      session_.input().append(staged_input_);
      staged_input_.clear();
    }
    auto resume = [this] {
      // Any thread (a shard thread for `sharded`): hop back to ours. keep_alive_
      // holds the connection until the posted function has run.
      loop_.Post([this] {
        std::shared_ptr<Connection> self = std::move(keep_alive_);
        pending_batch_ = false;
        loop_.ReleaseWork();
        if (sample_on_resume_) [[unlikely]]
          StartOwedSample();
        Drive();
        if (pushes_owed_ && !pending_batch_) [[unlikely]]
          DeliverPushes();
        UpdateInterest();
      });
    };
    // Bytes already sent stay at the front of out_ until it empties.
    const size_t out_limit = out_sent_ + OutputLimit();
    // With the log, replies wait in held_ for their writes to reach it.
    std::string& replies = durable_log_ == nullptr ? out_ : held_;
    switch (session_.Process(replies, std::move(resume), out_limit)) {
      case Session::Progress::kPending:
        pending_batch_ = true;
        loop_.HoldWork();
        keep_alive_ = shared_from_this();  // before the posted resume can run (same thread)
        WakeEngineAfterThisRound();
        break;
      case Session::Progress::kClose:
        session_done_ = true;
        break;
      case Session::Progress::kOutputLimit:
        // Before AUTH a client gets a few replies' worth and is closed, as Redis
        // closes an unauthenticated client past its small limit. After it,
        // the client waits until its replies have left: Redis puts no limit
        // on a normal client's replies (client-output-buffer-limit normal 0 0
        // 0), so a 100 MB GET is answered whole, and a client that pipelines
        // without reading holds one limit's worth of memory, not more.
        if (!session_.client().authenticated) {
          CloseNow();
          return;
        }
        output_full_ = true;
        break;
      case Session::Progress::kBlocked:
        blocked_ = true;
        break;
      case Session::Progress::kNeedInput:
        break;
    }
    if (!session_.client().authenticated && UnsentBytes() > OutputLimit()) {
      CloseNow();
      return;
    }
    if (!pending_batch_ && UnparsedBytes() > limits_.query_buffer_bytes) {
      CloseNow();
      return;
    }
    FlushOrHold();
    if (!output_full_ || closed_ || pending_batch_ || UnsentBytes() != 0 || !held_.empty())
        [[likely]] {
      return;
    }
    output_full_ = false;
  }
}

// The replies that paused the client have all left: it goes on.
void Connection::ResumeIfDrained() {
  if (output_full_ && !closed_ && !pending_batch_ && UnsentBytes() == 0 && held_.empty()) {
    output_full_ = false;
    Drive();
  }
}

void Connection::FlushOrHold() {
  if (durable_log_ != nullptr && !held_.empty()) {
    HoldUntilDurable();
  } else {
    Flush();
  }
}

// With the log on, no reply leaves before every write it may show is in the
// file (fsynced under appendfsync always), as Redis's beforeSleep() writes
// (and fsyncs) the AOF before it writes to clients: the replies of the round
// wait for one WaitReleasable() after the round, which covers every record
// appended so far (this thread's and any other's whose effect a reply here
// could have read), so one write and one fsync serve the whole round.
void Connection::HoldUntilDurable() {
  const bool first = awaiting_durability.empty();
  awaiting_durability.push_back(shared_from_this());
  if (!first) return;
  loop_.AfterRound([log = durable_log_] {
    log->WaitForAppended();
    std::vector<std::shared_ptr<Connection>> ready;
    ready.swap(awaiting_durability);
    for (const std::shared_ptr<Connection>& connection : ready) {
      if (connection->closed_) continue;
      connection->ReleaseHeld();
      connection->Flush();
      connection->ResumeIfDrained();
    }
  });
}

uint64_t Connection::OutputLimit() const {
  if (session_.client().authenticated) return limits_.output_buffer_bytes;
  return std::min(limits_.output_buffer_bytes, kUnauthenticatedOutputBufferLimit);
}

// The batch is queued to the engine's threads, not yet woken: one callback
// per round of this I/O thread wakes them, after the round's ready sockets,
// so every batch they send shares that wake-up (at P1 with 50 clients, one
// futex wake instead of one per request).
void Connection::WakeEngineAfterThisRound() {
  if (engine_wake_requested) return;
  engine_wake_requested = true;
  loop_.AfterRound([&engine = engine_] {
    engine_wake_requested = false;
    engine.WakeDeferred();
  });
}

// Sends the replies straight away with non-blocking send() calls, as Redis
// does in beforeSleep(). Only a full socket makes the connection watch for
// writability (UpdateInterest()).
// out_ += held_, spelled as resize and memcpy: a second append() call in
// this file makes GCC outline append() for Read() too (+20 instructions per
// request, counted by `make regress`).
void Connection::ReleaseHeld() {
  const size_t at = out_.size();
  out_.resize(at + held_.size());
  std::memcpy(out_.data() + at, held_.data(), held_.size());
  held_.clear();
}

void Connection::Flush() {
  if (closed_ || write_blocked_) return;
  while (out_sent_ < out_.size()) {
    const ssize_t sent =
        ::send(fd_, out_.data() + out_sent_, out_.size() - out_sent_, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        write_blocked_ = true;
        UpdateInterest();
        return;
      }
      CloseNow();
      return;
    }
    stats_.total_net_output_bytes.fetch_add(static_cast<uint64_t>(sent), std::memory_order_relaxed);
    out_sent_ += static_cast<size_t>(sent);
  }
  if (sampling_) [[unlikely]]
    FinishSample();
  out_.clear();
  out_sent_ = 0;
  // A burst of large replies should not pin its buffer for the connection's life.
  if (out_.capacity() > kRetainedOutputCapacity) std::string().swap(out_);
  if ((session_done_ || peer_done_) && !pending_batch_ && !blocked_ && !output_full_ &&
      held_.empty()) {
    CloseNow();
  }
}

// Any thread: the socket is shut down at once, so the client sees the close
// before the killer's reply (Redis frees a killed client synchronously);
// the rest of the close runs on this connection's thread.
void Connection::Kill() {
  {
    MutexLock lock(kill_mutex_);
    if (killable_fd_ >= 0) ::shutdown(killable_fd_, SHUT_RDWR);
  }
  loop_.Post([self = shared_from_this()] { self->CloseNow(); });
}

void Connection::CloseNow() {
  if (closed_) return;
  closed_ = true;
  {
    MutexLock lock(kill_mutex_);  // no Kill() may shut down a reused number
    killable_fd_ = -1;
  }
  // Forget before close: the descriptor number may be reused at once.
  loop_.Forget(fd_);
  ::shutdown(fd_, SHUT_RDWR);
  ::close(fd_);
  fd_ = -1;
  out_.clear();
  out_.shrink_to_fit();
  out_sent_ = 0;
  staged_input_.clear();
  staged_input_.shrink_to_fit();
  session_.CancelBlocking();  // what it was offered goes to the next waiter
  session_.LeavePubSub();     // no more messages for it
  session_.Unlist();          // gone from CLIENT LIST
  std::string().swap(held_);
  Unregister();  // the slot counts against --maxclients no longer
}

}  // namespace kvlab
