// ExpireCycle: Redis's active expiry (activeExpireCycle(), run by serverCron
// at hz 10). Without it an expired key that no command touches again keeps
// its memory for ever: a cache of keys with a TTL grows without bound, and
// a comparison with redis-server, which reclaims them, is not like for like.
//
// Ten times a second a thread of its own asks I/O thread 0's loop to run one
// OpCode::kReclaimExpired batch on the engine, and waits for it to finish.
// The keyless operation reaches every partition of the engine on whatever
// thread owns it (a shard thread, an owner's I/O thread, a stripe's lock),
// as DBSIZE does; a partition without keys that have deadlines does nothing.
// Until some write has stored a deadline (ModificationFeed::deadline_stored())
// it posts nothing at all, so a workload without TTLs wakes no engine thread
// and counts no operation for it (INFO kvlab's ops and hops stay the
// clients'). How much each call looks at, and how it adapts, is
// OpCode::kReclaimExpired's.
//
// Thread-safe; the destructor stops the thread once the batch in flight has
// finished (so it must run while the I/O threads still run their loops).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "engines/engine.h"
#include "server/net/event_loop.h"

namespace kvlab {

class ExpireCycle {
 public:
  // Places each partition looks at per call (before it adapts).
  static constexpr int64_t kPlacesPerCall = 1024;
  static constexpr std::chrono::milliseconds kPeriod{100};  // Redis's hz 10

  ExpireCycle(Engine& engine, EventLoop& loop);
  ~ExpireCycle();
  ExpireCycle(const ExpireCycle&) = delete;
  ExpireCycle& operator=(const ExpireCycle&) = delete;

 private:
  void Run();
  // One kReclaimExpired batch on the loop's thread; returns once it finished.
  void RunOnce();

  Engine& engine_;
  EventLoop& loop_;
  Batch batch_;  // touched by the loop's thread and the engine between post and done
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;      // guarded by mutex_
  bool finished_ = false;  // guarded by mutex_: the batch in flight is done
  std::thread thread_;
};

}  // namespace kvlab
