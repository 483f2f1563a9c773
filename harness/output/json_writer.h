// JsonWriter: builds a JSON text incrementally with correct commas and string
// escaping (the harness has no JSON library dependency). Non-finite numbers
// are written as null, so the output is always valid JSON.
//
// Thread safety: not thread-safe; one writer per document.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvlab::harness {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  // Inside an object: the next value's key.
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Number(double value);
  JsonWriter& Integer(int64_t value);
  JsonWriter& Unsigned(uint64_t value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();

  const std::string& text() const { return text_; }

 private:
  void BeforeValue();

  std::string text_;
  // One entry per open object/array: true while it has no element yet.
  std::vector<bool> first_in_scope_;
  bool after_key_ = false;
};

}  // namespace kvlab::harness
