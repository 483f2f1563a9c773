// libFuzzer target: RESP-valid commands with adversarial arguments
// (command_fuzz.h) through a Session over every engine kind. The input's
// bytes are the generator's choices, so libFuzzer's mutations steer which
// commands and arguments run. Each input gets fresh engines over a seeded
// keyspace, destroyed after it, so LeakSanitizer's per-input check sees
// every byte freed (engines kept for the whole run would still own theirs
// at exit, behind the record table's tagged pointers, which LSan cannot
// follow). A command over the watchdog's bound, a malformed reply or a
// wrong reply count aborts with the command printed.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "tests/fuzz/command_fuzz.h"

namespace {

using namespace kvlab::fuzz;

// CPU time one command may use (command_fuzz.h's watchdog). Most take
// milliseconds; the largest the generator makes, a SETBIT at offset
// 2^32-1 (a 512 MiB string), used 3.0-3.9 s on every engine of the normal
// build on the 2-core VM after an hour of uptime (redis-server: 1.4 s),
// though the whole seeded run had passed a 1 s bound there that morning.
// Ten seconds of CPU is past any command's work and still catches a loop.
constexpr std::chrono::milliseconds kCommandBound{10000};
constexpr size_t kMaxCommandsPerInput = 64;

struct Fixture {
  CommandGenerator generator;
  CommandWatchdog watchdog{kCommandBound};
};

Fixture& TheFixture() {
  static Fixture* fixture = new Fixture();  // never destroyed: the watchdog outlives main
  return *fixture;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fixture& fixture = TheFixture();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  // Every engine runs the same commands: the choices are made once.
  std::vector<Command> commands;
  ByteChoices choices(input);
  while (choices.More() && commands.size() < kMaxCommandsPerInput) {
    Command command = fixture.generator.Next(choices);
    if (!CommandGenerator::KnownUnbounded(command)) commands.push_back(std::move(command));
  }
  for (const std::string& kind : FuzzEngineKinds()) {
    CommandFuzzEngine engine(kind);
    engine.Reseed();
    for (const Command& command : commands) engine.Run(command, &fixture.watchdog);
  }
  return 0;
}
