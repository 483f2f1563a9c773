// CommandStats: INFO commandstats and errorstats (Redis's per-command
// calls, rejected_calls and failed_calls, and its error replies counted by
// their code), kept per I/O thread: each thread counts in a Block of its
// own, with plain loads and stores, so counting costs a command no shared
// cache line and no locked instruction; INFO adds the blocks up.
//
// What Redis also reports and kvlab does not: usec and usec_per_call (the
// time inside a command: kvlab reads no clock per command, and an engine
// command runs on another thread, in a batch). Those fields are left out,
// not written as zero.
//
// CONFIG RESETSTAT cannot clear another thread's counters without a race
// (its next increment would store the old count plus one), so it records
// the sums as a baseline that INFO subtracts.
//
// Thread-safe: a Block's counters are written by its own thread only and
// read by any; the blocks, the error codes and the baseline are behind
// mutexes, taken only on the rare paths (a thread's first command, an
// error reply's first sight of a code, INFO, RESETSTAT).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace kvlab {

class CommandStats {
 public:
  class Block {
   public:
    explicit Block(size_t commands) : per_command_(commands) {}
    void Called(size_t command) { Bump(per_command_[command].calls); }
    void Rejected(size_t command) { Bump(per_command_[command].rejected); }
    void Failed(size_t command) { Bump(per_command_[command].failed); }
    // An error reply whose first line is `line` ("ERR ...", "WRONGTYPE ...").
    void ErrorReply(std::string_view line);

   private:
    friend class CommandStats;
    struct Counters {
      std::atomic<uint64_t> calls{0}, rejected{0}, failed{0};
    };
    static void Bump(std::atomic<uint64_t>& counter) {
      counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    std::vector<Counters> per_command_;
    Mutex errors_mutex_;
    std::map<std::string, uint64_t> errors_ GUARDED_BY(errors_mutex_);
  };

  // The calling thread's block, made on its first call; `commands`: how
  // many commands the table has (the indexes the block counts).
  Block& ForThisThread(size_t commands);

  struct CommandTotals {
    uint64_t calls = 0, rejected = 0, failed = 0;
  };
  // Since the last Reset(): per command index, and per error code.
  std::vector<CommandTotals> Commands() const;
  std::map<std::string, uint64_t> Errors() const;
  // CONFIG RESETSTAT.
  void Reset();

 private:
  std::vector<CommandTotals> RawCommands() const REQUIRES(mutex_);
  std::map<std::string, uint64_t> RawErrors() const REQUIRES(mutex_);

  mutable Mutex mutex_;
  size_t commands_ GUARDED_BY(mutex_) = 0;
  std::map<std::thread::id, std::unique_ptr<Block>> blocks_ GUARDED_BY(mutex_);
  std::vector<CommandTotals> command_baseline_ GUARDED_BY(mutex_);
  std::map<std::string, uint64_t> error_baseline_ GUARDED_BY(mutex_);
};

}  // namespace kvlab
