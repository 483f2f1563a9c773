#include "server/command_table.h"

#include "server/commands/register.h"

namespace kvlab {
namespace {

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return lower;
}

}  // namespace

const CommandTable& CommandTable::Instance() {
  static const CommandTable* table = [] {
    auto* built = new CommandTable();
    RegisterConnectionCommands(*built);
    RegisterStringCommands(*built);
    RegisterKeyspaceCommands(*built);
    RegisterServerCommands(*built);
    return built;
  }();
  return *table;
}

void CommandTable::Add(CommandSpec spec) {
  index_.emplace(Lower(spec.name), commands_.size());
  commands_.push_back(std::move(spec));
}

const CommandSpec* CommandTable::Find(std::string_view name) const {
  // Command names are short; a name too long for any command is unknown.
  if (name.size() > 32) return nullptr;
  char lower[32];
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    lower[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  auto it = index_.find(std::string(lower, name.size()));
  return it == index_.end() ? nullptr : &commands_[it->second];
}

std::string WrongArityError(std::string_view command_name) {
  return "ERR wrong number of arguments for '" + std::string(command_name) + "' command";
}

}  // namespace kvlab
