#include "engines/calls/sort_options.h"

#include "engines/calls/call_support.h"
#include "engines/rules/redis_integer.h"

namespace kvlab {

std::string_view PatternCString(std::string_view pattern) {
  return pattern.substr(0, pattern.find('\0'));
}

bool SortOptions::ReadsOtherKeys() const {
  auto substitutes = [](std::string_view pattern) {
    const std::string_view text = PatternCString(pattern);
    return text != "#" && text.find('*') != std::string_view::npos;
  };
  if (!dont_sort && by && substitutes(*by)) return true;
  for (const std::string_view get : gets) {
    if (substitutes(get)) return true;
  }
  return false;
}

std::optional<std::string_view> ParseSortOptions(std::span<const std::string_view> args,
                                                 bool read_only, SortOptions* options) {
  *options = SortOptions{};
  options->key = args[1];
  for (size_t j = 2; j < args.size(); ++j) {
    const size_t left = args.size() - j - 1;
    const std::string_view arg = args[j];
    if (OptionIs(arg, "asc")) {
      options->desc = false;
    } else if (OptionIs(arg, "desc")) {
      options->desc = true;
    } else if (OptionIs(arg, "alpha")) {
      options->alpha = true;
    } else if (OptionIs(arg, "limit") && left >= 2) {
      const std::optional<int64_t> start = ParseRedisInt64(args[j + 1]);
      if (!start) return kContainerNotIntegerError;
      const std::optional<int64_t> count = ParseRedisInt64(args[j + 2]);
      if (!count) return kContainerNotIntegerError;
      options->limit_start = *start;
      options->limit_count = *count;
      j += 2;
    } else if (!read_only && OptionIs(arg, "store") && left >= 1) {
      options->store = args[++j];
    } else if (OptionIs(arg, "by") && left >= 1) {
      options->by = args[++j];
      if (PatternCString(*options->by).find('*') == std::string_view::npos) {
        options->dont_sort = true;
      }
    } else if (OptionIs(arg, "get") && left >= 1) {
      options->gets.push_back(args[++j]);
    } else {
      return kContainerSyntaxError;
    }
  }
  return std::nullopt;
}

}  // namespace kvlab
