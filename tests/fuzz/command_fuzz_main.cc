// The command fuzzer as a deterministic CTest run (`fuzz.commands`): fixed
// seeds, each a sequence of generated commands (command_fuzz.h) run on every
// engine kind from a freshly seeded keyspace, under the per-command
// watchdog. Prints how many commands ran; any violation aborts with the
// seed, engine and command, so it reproduces with --seeds SEED..SEED.
//
// Usage: command_fuzz_run [--seeds FIRST..LAST] [--commands-per-seed N]
//                         [--max-seconds S] [--bound-ms MS]
// --max-seconds stops early (after a whole seed) on a slow machine, and says
// so; what ran was still checked.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tests/fuzz/command_fuzz.h"

int main(int argc, char** argv) {
  using namespace kvlab::fuzz;
  uint64_t first_seed = 1, last_seed = 400;
  size_t commands_per_seed = 300;
  double max_seconds = 50;
  long bound_ms = 10000;  // CPU per command: command_fuzzer.cc's kCommandBound says why
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--seeds" && std::strstr(value, "..")) {
      first_seed = std::strtoull(value, nullptr, 10);
      last_seed = std::strtoull(std::strstr(value, "..") + 2, nullptr, 10);
    } else if (flag == "--commands-per-seed") {
      commands_per_seed = std::strtoull(value, nullptr, 10);
    } else if (flag == "--max-seconds") {
      max_seconds = std::strtod(value, nullptr);
    } else if (flag == "--bound-ms") {
      bound_ms = std::strtol(value, nullptr, 10);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--seeds FIRST..LAST] [--commands-per-seed N] "
                   "[--max-seconds S] [--bound-ms MS]\n",
                   argv[0]);
      return 2;
    }
  }

  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  };
  CommandGenerator generator;
  CommandWatchdog watchdog{std::chrono::milliseconds(bound_ms)};
  std::vector<std::unique_ptr<CommandFuzzEngine>> engines;
  for (const std::string& kind : FuzzEngineKinds()) {
    engines.push_back(std::make_unique<CommandFuzzEngine>(kind));
  }
  uint64_t commands = 0, skipped_unbounded = 0, seeds_run = 0;
  for (uint64_t seed = first_seed; seed <= last_seed; ++seed) {
    if (elapsed() > max_seconds) {
      std::printf("command_fuzz_run: stopped after %.0f s (--max-seconds), before seed %llu\n",
                  elapsed(), static_cast<unsigned long long>(seed));
      break;
    }
    std::fprintf(stderr, "seed %llu\n", static_cast<unsigned long long>(seed));
    SeededChoices choices(seed);
    std::vector<Command> sequence;
    while (sequence.size() < commands_per_seed) {
      Command command = generator.Next(choices);
      if (CommandGenerator::KnownUnbounded(command)) {
        ++skipped_unbounded;
        continue;
      }
      sequence.push_back(std::move(command));
    }
    for (auto& engine : engines) {
      engine->Reseed();
      for (const Command& command : sequence) engine->Run(command, &watchdog);
      commands += sequence.size();
    }
    ++seeds_run;
  }
  uint64_t errors = 0;
  for (const auto& engine : engines) errors += engine->error_replies();
  std::printf(
      "command_fuzz_run: %llu commands (%llu seeds x %zu per seed x %zu engines, "
      "%llu answered with an error) passed in %.1f s; %llu known-unbounded commands "
      "not run\n",
      static_cast<unsigned long long>(commands), static_cast<unsigned long long>(seeds_run),
      commands_per_seed, engines.size(), static_cast<unsigned long long>(errors), elapsed(),
      static_cast<unsigned long long>(skipped_unbounded));
  std::fflush(stdout);
  // Engine threads are stopped by their destructors; exit without waiting
  // on anything else.
  return 0;
}
