#include "harness/measurement/info_fields.h"

#include <cstdlib>
#include <string>

namespace kvlab::harness {

bool InfoFieldValue(std::string_view fields, std::string_view key, double* value) {
  size_t at = 0;
  while (at < fields.size()) {
    const size_t comma = fields.find(',', at);
    const std::string_view field =
        fields.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    if (field.size() > key.size() && field.substr(0, key.size()) == key &&
        field[key.size()] == '=') {
      const std::string text(field.substr(key.size() + 1));
      char* end = nullptr;
      const double parsed = std::strtod(text.c_str(), &end);
      if (end == text.c_str()) return false;
      *value = parsed;
      return true;
    }
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  return false;
}

}  // namespace kvlab::harness
