#include "server/command_stats.h"

#include <algorithm>

namespace kvlab {

void CommandStats::Block::ErrorReply(std::string_view line) {
  // Redis's errorstats key: the reply's first word, up to 127 characters.
  std::string code(line.substr(0, std::min(line.find(' '), size_t{127})));
  MutexLock lock(errors_mutex_);
  ++errors_[code];
}

CommandStats::Block& CommandStats::ForThisThread(size_t commands) {
  MutexLock lock(mutex_);
  commands_ = commands;  // the table's size, the same for every caller
  std::unique_ptr<Block>& block = blocks_[std::this_thread::get_id()];
  if (!block) block = std::make_unique<Block>(commands);
  return *block;
}

std::vector<CommandStats::CommandTotals> CommandStats::RawCommands() const {
  std::vector<CommandTotals> totals(commands_);
  for (const auto& [thread, block] : blocks_) {
    for (size_t i = 0; i < commands_; ++i) {
      const Block::Counters& counters = block->per_command_[i];
      totals[i].calls += counters.calls.load(std::memory_order_relaxed);
      totals[i].rejected += counters.rejected.load(std::memory_order_relaxed);
      totals[i].failed += counters.failed.load(std::memory_order_relaxed);
    }
  }
  return totals;
}

std::map<std::string, uint64_t> CommandStats::RawErrors() const {
  std::map<std::string, uint64_t> errors;
  for (const auto& [thread, block] : blocks_) {
    MutexLock lock(block->errors_mutex_);
    for (const auto& [code, count] : block->errors_) errors[code] += count;
  }
  return errors;
}

std::vector<CommandStats::CommandTotals> CommandStats::Commands() const {
  MutexLock lock(mutex_);
  std::vector<CommandTotals> totals = RawCommands();
  for (size_t i = 0; i < command_baseline_.size(); ++i) {
    totals[i].calls -= command_baseline_[i].calls;
    totals[i].rejected -= command_baseline_[i].rejected;
    totals[i].failed -= command_baseline_[i].failed;
  }
  return totals;
}

std::map<std::string, uint64_t> CommandStats::Errors() const {
  MutexLock lock(mutex_);
  std::map<std::string, uint64_t> errors = RawErrors();
  for (const auto& [code, count] : error_baseline_) errors[code] -= count;
  std::erase_if(errors, [](const auto& entry) { return entry.second == 0; });
  return errors;
}

void CommandStats::Reset() {
  MutexLock lock(mutex_);
  command_baseline_ = RawCommands();
  error_baseline_ = RawErrors();
}

}  // namespace kvlab
