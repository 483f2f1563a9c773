// Status: the outcome of an engine or server operation that can fail — made
// an engine, bound a listener — carried as a value (LevelDB style) instead
// of exceptions or `std::string* error` out-parameters. The engines and the
// server share it; the harness keeps its own (harness/status.h), since it
// includes nothing of theirs.
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
    kInvalidArgument,  // the request or configuration is wrong: say what is allowed
    kUnavailable,      // the system refused (address in use, socket path taken, ...)
  };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string message) {
    return Status(Code::kInvalidArgument, std::move(message));
  }
  static Status Unavailable(std::string message) {
    return Status(Code::kUnavailable, std::move(message));
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  // Empty when ok(); otherwise a sentence for the user.
  const std::string& message() const { return message_; }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  Code code_ = Code::kOk;
  std::string message_;
};

}  // namespace kvlab
