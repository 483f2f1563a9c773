#include "server/command_keys.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "base/ascii_case.h"
#include "engines/rules/redis_integer.h"
#include "server/command_table.h"

namespace kvlab {
namespace {

// A command whose key count is an argument: `numkeys_at` holds it, the keys
// follow it, and a store command's destination comes first (`dest_at`, 0
// when there is none). Redis 7.0's key specs for these, and their getkeys
// procedures (genericGetKeys()) for when a spec finds the count invalid.
struct NumkeysRule {
  std::string_view name;
  size_t numkeys_at;
  size_t dest_at;
};
constexpr std::array<NumkeysRule, 12> kNumkeysRules = {{
    {"zunionstore", 2, 1},
    {"zinterstore", 2, 1},
    {"zdiffstore", 2, 1},
    {"zunion", 1, 0},
    {"zinter", 1, 0},
    {"zdiff", 1, 0},
    {"zintercard", 1, 0},
    {"sintercard", 1, 0},
    {"lmpop", 1, 0},
    {"zmpop", 1, 0},
    {"blmpop", 2, 0},
    {"bzmpop", 2, 0},
}};

const NumkeysRule* NumkeysRuleOf(std::string_view name) {
  for (const NumkeysRule& rule : kNumkeysRules) {
    if (rule.name == name) return &rule;
  }
  return nullptr;
}

// A container whose subcommand takes a key (Redis looks the subcommand up
// and uses its key specs): OBJECT ENCODING key, MEMORY USAGE key [...].
struct KeyedSubcommand {
  std::string_view container;
  std::string_view sub;
  int arity;
};
constexpr std::array<KeyedSubcommand, 5> kKeyedSubcommands = {{
    {"object", "encoding", 3},
    {"object", "freq", 3},
    {"object", "idletime", 3},
    {"object", "refcount", 3},
    {"memory", "usage", -3},
}};

// A range of key positions as a key spec gives it, or nothing where Redis
// finds it out of bounds (getKeysUsingKeySpecs(): "first or last is out of
// bounds, which indicates a syntax error"): the spec is then invalid.
std::optional<std::vector<size_t>> SpecRange(int64_t first, int64_t last, int64_t step,
                                             size_t argc) {
  const auto count = static_cast<int64_t>(argc);
  if (last >= count || last < first || first >= count) return std::nullopt;
  std::vector<size_t> positions;
  for (int64_t i = first; i <= last; i += std::max<int64_t>(step, 1)) {
    positions.push_back(static_cast<size_t>(i));
  }
  return positions;
}

// The key specs of a numkeys command: the destination, then the count's
// keys (KEYNUM, the count narrowed to an int as Redis narrows it); nullopt
// where the count is not an integer >= 0 or its keys do not all fit.
std::optional<std::vector<size_t>> KeysBySpec(const NumkeysRule& rule,
                                              std::span<const std::string_view> args) {
  const std::optional<int64_t> numkeys = ParseRedisInt64(args[rule.numkeys_at]);
  if (!numkeys || *numkeys < 0) return std::nullopt;
  const int64_t first = static_cast<int64_t>(rule.numkeys_at) + 1;
  const int64_t last = first + static_cast<int32_t>(static_cast<uint64_t>(*numkeys)) - 1;
  std::optional<std::vector<size_t>> keys = SpecRange(first, last, 1, args.size());
  if (keys && rule.dest_at != 0) keys->insert(keys->begin(), rule.dest_at);
  return keys;
}

// genericGetKeys(): the count read as atoi() reads it, and all or nothing:
// no keys where it is below 1 or more than the arguments after it; the
// destination last.
std::vector<size_t> KeysByProcedure(const NumkeysRule& rule,
                                    std::span<const std::string_view> args) {
  const std::string text(args[rule.numkeys_at]);
  const auto count = static_cast<int>(std::strtol(text.c_str(), nullptr, 10));
  const size_t first = rule.numkeys_at + 1;
  if (count < 1 || static_cast<size_t>(count) > args.size() - first) return {};
  std::vector<size_t> positions;
  for (size_t i = 0; i < static_cast<size_t>(count); ++i) positions.push_back(first + i);
  if (rule.dest_at != 0) positions.push_back(rule.dest_at);
  return positions;
}

// sortGetKeys(): the key, then the last STORE's destination; LIMIT skips
// two arguments, GET and BY one each.
std::vector<size_t> SortKeys(std::span<const std::string_view> args) {
  std::vector<size_t> positions = {1};
  std::optional<size_t> store;
  for (size_t i = 2; i < args.size(); ++i) {
    const std::string option = AsciiLowercase(args[i]);
    if (option == "limit") {
      i += 2;
    } else if (option == "get" || option == "by") {
      i += 1;
    } else if (option == "store" && i + 1 < args.size()) {
      store = i + 1;
    }
  }
  if (store) positions.push_back(*store);
  return positions;
}

// GEORADIUS's and GEORADIUSBYMEMBER's key specs, which Redis 7 reads before
// their getkeys procedure: the key, then the argument after the first STORE,
// then the one after the first STOREDIST, each keyword looked for from the
// sixth argument (GEORADIUS) or the fifth (GEORADIUSBYMEMBER) up to the last
// but one.
std::vector<size_t> GeoRadiusKeys(std::span<const std::string_view> args, size_t search_from) {
  std::vector<size_t> positions = {1};
  for (const std::string_view keyword : {"store", "storedist"}) {
    for (size_t i = search_from; i + 1 < args.size(); ++i) {
      if (AsciiLowercase(args[i]) == keyword) {
        positions.push_back(i + 1);
        break;
      }
    }
  }
  return positions;
}

bool IsGeoRadius(std::string_view name) {
  return name == "georadius" || name == "georadiusbymember";
}

// A command of fixed key positions: COMMAND INFO's first, last and step
// (the ranges of its key specs, joined), empty where out of bounds.
std::vector<size_t> FixedKeys(const KeyPositions& keys, size_t argc) {
  const int64_t last = keys.last >= 0 ? keys.last : static_cast<int64_t>(argc) + keys.last;
  return SpecRange(keys.first, last, keys.step, argc).value_or(std::vector<size_t>{});
}

}  // namespace

CommandKeys FindCommandKeys(std::span<const std::string_view> command) {
  using Outcome = CommandKeys::Outcome;
  CommandKeys found;
  const CommandSpec* spec = command.empty() ? nullptr : CommandTable::Instance().Find(command[0]);
  if (spec == nullptr) return {Outcome::kUnknownCommand, {}};
  const std::string name = AsciiLowercase(command[0]);
  if (command.size() >= 2) {
    const std::string sub = AsciiLowercase(command[1]);
    for (const KeyedSubcommand& keyed : kKeyedSubcommands) {
      if (keyed.container != name || keyed.sub != sub) continue;
      if (!ArityMatches(keyed.arity, command.size())) return {Outcome::kWrongArity, {}};
      return {Outcome::kKeys, {2}};
    }
  }
  const NumkeysRule* numkeys = NumkeysRuleOf(name);
  const bool sort = name == "sort";
  if (numkeys == nullptr && !sort && spec->keys.first == 0) return {Outcome::kNoKeyArguments, {}};
  if (!ArityMatches(spec->arity, command.size())) return {Outcome::kWrongArity, {}};
  if (numkeys != nullptr) {
    std::optional<std::vector<size_t>> by_spec = KeysBySpec(*numkeys, command);
    found.positions = by_spec ? std::move(*by_spec) : KeysByProcedure(*numkeys, command);
  } else if (sort) {
    found.positions = SortKeys(command);
  } else if (IsGeoRadius(name)) {
    found.positions = GeoRadiusKeys(command, name == "georadius" ? 6 : 5);
  } else {
    found.positions = FixedKeys(spec->keys, command.size());
  }
  if (found.positions.empty()) found.outcome = Outcome::kInvalidArguments;
  return found;
}

bool HasMovableKeys(std::string_view name) {
  return NumkeysRuleOf(name) != nullptr || name == "sort" || name == "sort_ro" || IsGeoRadius(name);
}

std::string_view CommandKeysError(CommandKeys::Outcome outcome) {
  switch (outcome) {
    case CommandKeys::Outcome::kUnknownCommand:
      return "Invalid command specified";
    case CommandKeys::Outcome::kNoKeyArguments:
      return "The command has no key arguments";
    case CommandKeys::Outcome::kWrongArity:
      return "Invalid number of arguments specified for command";
    case CommandKeys::Outcome::kInvalidArguments:
    case CommandKeys::Outcome::kKeys:
      break;
  }
  return "Invalid arguments specified for command";
}

}  // namespace kvlab
