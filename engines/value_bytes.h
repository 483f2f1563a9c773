// ValueBytes: the bytes of a value an operation returns (OpResult::bulk),
// held inline when they are short, on the heap otherwise.
//
// Why: a GET's reply value is copied out of the keyspace before the record
// can change (a later SET in the same batch, another thread), and as a
// std::string every value past its 15-byte small buffer cost a malloc and a
// free per GET (~2% of the server's CPU at P16 GET, 64-byte values). Values
// up to kInlineBytes bytes now travel in the result itself.
//
// A value type: copyable and movable; not synchronised.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace kvlab {

class ValueBytes {
 public:
  static constexpr size_t kInlineBytes = 112;

  ValueBytes() = default;
  ValueBytes(std::string_view bytes) { assign(bytes); }  // NOLINT: a value converts
  ValueBytes(const ValueBytes& other) { assign(other.view()); }
  ValueBytes& operator=(const ValueBytes& other) {
    if (this != &other) assign(other.view());
    return *this;
  }
  ValueBytes(ValueBytes&& other) noexcept { Take(other); }
  ValueBytes& operator=(ValueBytes&& other) noexcept {
    if (this != &other) Take(other);
    return *this;
  }

  // Replaces the bytes; reuses the heap buffer when it is large enough.
  void assign(std::string_view bytes) {
    if (bytes.size() > kInlineBytes && bytes.size() > heap_capacity_) {
      heap_ = std::make_unique_for_overwrite<char[]>(bytes.size());
      heap_capacity_ = bytes.size();
    }
    size_ = bytes.size();
    if (size_ != 0) std::memcpy(mutable_data(), bytes.data(), size_);
  }

  const char* data() const { return size_ > kInlineBytes ? heap_.get() : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::string_view view() const { return {data(), size_}; }
  operator std::string_view() const { return view(); }  // NOLINT: reads as its bytes
  std::string str() const { return std::string(view()); }

  friend bool operator==(const ValueBytes& a, std::string_view b) { return a.view() == b; }
  friend std::ostream& operator<<(std::ostream& out, const ValueBytes& bytes) {
    return out << bytes.view();
  }

 private:
  char* mutable_data() { return size_ > kInlineBytes ? heap_.get() : inline_; }
  void Take(ValueBytes& other) {
    size_ = other.size_;
    if (size_ > kInlineBytes) {
      heap_ = std::move(other.heap_);
      heap_capacity_ = other.heap_capacity_;
      other.heap_capacity_ = 0;
    } else if (size_ != 0) {
      std::memcpy(inline_, other.inline_, size_);
    }
    other.size_ = 0;
  }

  size_t size_ = 0;
  size_t heap_capacity_ = 0;
  std::unique_ptr<char[]> heap_;  // holds the bytes when size_ > kInlineBytes
  char inline_[kInlineBytes];
};

}  // namespace kvlab
