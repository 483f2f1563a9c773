#include "server/command_table.h"

#include <cassert>

#include "base/ascii_case.h"
#include "server/commands/arguments.h"
#include "server/commands/register.h"

namespace kvlab {
const CommandTable& CommandTable::Instance() {
  static const CommandTable* table = [] {
    auto* built = new CommandTable();
    RegisterConnectionCommands(*built);
    RegisterStringCommands(*built);
    RegisterKeyspaceCommands(*built);
    RegisterServerCommands(*built);
    RegisterConfigCommand(*built);
    RegisterMemoryCommand(*built);
    RegisterTransactionCommands(*built);
    RegisterContainerCommands(*built);
    RegisterSetAlgebraCommands(*built);
    RegisterZSetAlgebraCommands(*built);
    RegisterListMoveCommands(*built);
    RegisterSortCommands(*built);
    RegisterClusterCommands(*built);
    RegisterLifecycleCommands(*built);
    RegisterBitCommands(*built);
    RegisterHllCommands(*built);
    RegisterGeoCommands(*built);
    RegisterDumpRestoreCommands(*built);
    RegisterRewriteCommand(*built);
    RegisterBlockingCommands(*built);
    RegisterPubSubCommands(*built);
    RegisterMonitorCommand(*built);
    return built;
  }();
  return *table;
}

size_t CommandTable::Bucket(size_t length, char first) {
  return length * 26 + static_cast<size_t>(first - 'a');
}

void CommandTable::Add(CommandSpec spec) {
  // Names are lower-case ASCII letters (and '_') and at most kMaxNameLength long.
  assert(!spec.name.empty() && spec.name.size() <= kMaxNameLength);
  for ([[maybe_unused]] const std::string& sub : spec.subcommands) {
    assert(sub.size() > spec.name.size() + 1 && sub.starts_with(spec.name + "|"));
  }
  buckets_[Bucket(spec.name.size(), spec.name[0])].push_back(commands_.size());
  commands_.push_back(std::move(spec));
}

const CommandSpec* CommandTable::Find(std::string_view name) const {
  if (name.empty() || name.size() > kMaxNameLength) return nullptr;
  const char first = AsciiLower(name[0]);
  if (first < 'a' || first > 'z') return nullptr;
  for (size_t position : buckets_[Bucket(name.size(), first)]) {
    const std::string& candidate = commands_[position].name;
    bool equal = true;
    for (size_t i = 1; i < name.size() && equal; ++i) equal = AsciiLower(name[i]) == candidate[i];
    if (equal) return &commands_[position];
  }
  return nullptr;
}

const std::string* NameAsRun(const CommandSpec& spec, std::span<const std::string_view> args) {
  if (spec.subcommands.empty() || args.size() < 2) return &spec.name;
  for (const std::string& sub : spec.subcommands) {
    if (EqualsIgnoreCase(args[1], std::string_view(sub).substr(spec.name.size() + 1))) return &sub;
  }
  return nullptr;
}

std::string WrongArityError(std::string_view command_name) {
  return "ERR wrong number of arguments for '" + std::string(command_name) + "' command";
}

}  // namespace kvlab
