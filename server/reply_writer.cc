#include "server/reply_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace kvlab {

void ReplyWriter::Line(char type, int64_t value) {
  char digits[24];
  auto result = std::to_chars(digits, digits + sizeof digits, value);
  out_->push_back(type);
  out_->append(digits, result.ptr);
  out_->append("\r\n", 2);
}

void ReplyWriter::SimpleString(std::string_view text) {
  out_->push_back('+');
  out_->append(text);
  out_->append("\r\n", 2);
}

void ReplyWriter::StatusLines(std::span<const std::string_view> lines) {
  ArrayHeader(lines.size());
  for (const std::string_view line : lines) SimpleString(line);
}

void ReplyWriter::Error(std::string_view text) {
  out_->push_back('-');
  size_t start = out_->size();
  out_->append(text);
  for (size_t i = start; i < out_->size(); ++i) {
    if ((*out_)[i] == '\r' || (*out_)[i] == '\n') (*out_)[i] = ' ';
  }
  out_->append("\r\n", 2);
}

void ReplyWriter::Integer(int64_t value) { Line(':', value); }

void ReplyWriter::Bulk(std::string_view value) {
  Line('$', static_cast<int64_t>(value.size()));
  out_->append(value);
  out_->append("\r\n", 2);
}

void ReplyWriter::ArrayHeader(uint64_t count) { Line('*', static_cast<int64_t>(count)); }

void ReplyWriter::MapHeader(uint64_t pairs) {
  if (resp3()) {
    Line('%', static_cast<int64_t>(pairs));
  } else {
    ArrayHeader(pairs * 2);
  }
}

void ReplyWriter::SetHeader(uint64_t count) {
  Line(resp3() ? '~' : '*', static_cast<int64_t>(count));
}

void ReplyWriter::PushHeader(uint64_t count) {
  Line(resp3() ? '>' : '*', static_cast<int64_t>(count));
}

void ReplyWriter::ArrayOfPairsHeader(uint64_t pairs) { ArrayHeader(resp3() ? pairs : pairs * 2); }

// Redis spells infinities itself ("inf", not libc's choice); everything
// else is printf's %.17g, which round-trips every double.
void ReplyWriter::HumanDouble(std::string_view text) {
  if (!resp3()) {
    Bulk(text);
    return;
  }
  out_->push_back(',');
  out_->append(text);
  out_->append("\r\n");
}

void ReplyWriter::Double(double value) {
  char text[64];
  std::string_view digits;
  if (std::isinf(value)) {
    digits = value > 0 ? "inf" : "-inf";
  } else {
    const int length = std::snprintf(text, sizeof text, "%.17g", value);
    digits = std::string_view(text, static_cast<size_t>(length));
  }
  if (!resp3()) {
    Bulk(digits);
    return;
  }
  out_->push_back(',');
  out_->append(digits);
  out_->append("\r\n", 2);
}

void ReplyWriter::Verbatim(std::string_view text) {
  if (!resp3()) {
    Bulk(text);
    return;
  }
  Line('=', static_cast<int64_t>(text.size() + 4));
  out_->append("txt:");
  out_->append(text);
  out_->append("\r\n", 2);
}

}  // namespace kvlab
