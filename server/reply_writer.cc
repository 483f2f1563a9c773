#include "server/reply_writer.h"

#include <charconv>

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

}  // namespace kvlab
