// Status: the outcome of an operation that can fail — made an engine, bound a
// listener, connected to a server — carried as a value (LevelDB style)
// instead of exceptions or `std::string* error` out-parameters. It sits in
// base/, below every component: the engines, the server and the harness
// (harness/status.h names it there) share it without including each other.
//
// A plain value; copies are independent and thread-compatible.
#pragma once

#include <string>
#include <utility>

namespace kvlab {

class [[nodiscard]] Status {
 public:
  enum class Code {
    kOk,
    kInvalidArgument,   // the request or configuration is wrong: say what is allowed
    kUnavailable,       // the system refused (address in use, socket path taken, ...)
    kConnectionFailed,  // a client could not reach or lost its server
    kIoError,           // a read or write on an open connection or file failed
    kCancelled,         // stopped on request (Interrupt) before it completed
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string message) {
    return Status(Code::kInvalidArgument, std::move(message));
  }
  static Status Unavailable(std::string message) {
    return Status(Code::kUnavailable, std::move(message));
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
  // Empty when ok(); otherwise a sentence for the user.
  const std::string& message() const { return message_; }

  // A copy whose message is "<context>: <message>".
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(code_, context + ": " + message_);
  }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace kvlab
