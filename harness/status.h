// Status: the outcome of a harness operation that can fail, carried as a value
// (LevelDB style) across module borders instead of exceptions.
// A Status is a plain value; copies are independent and thread-compatible.
#pragma once

#include <string>
#include <utility>

namespace kvlab::harness {

class Status {
 public:
  enum class Code { kOk, kInvalidArgument, kConnectionFailed, kIoError, kCancelled };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string message) {
    return Status(Code::kInvalidArgument, std::move(message));
  }
  static Status ConnectionFailed(std::string message) {
    return Status(Code::kConnectionFailed, std::move(message));
  }
  static Status IoError(std::string message) { return Status(Code::kIoError, std::move(message)); }
  static Status Cancelled(std::string message) {
    return Status(Code::kCancelled, std::move(message));
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // Returns a copy whose message is "<context>: <message>".
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace kvlab::harness
