// StringHeapBytes: the heap a std::string holds beyond its own object, as
// the containers' memory accounting counts it. Stateless; thread-safe.
#pragma once

#include <cstddef>
#include <string>

namespace kvlab {

// libstdc++ keeps up to 15 characters inside the object (the small-string
// buffer); a longer string owns capacity() + 1 bytes on the heap, and
// malloc's chunk header and rounding add about 16 more.
inline size_t StringHeapBytes(const std::string& text) {
  return text.size() > 15 ? text.capacity() + 1 + 16 : 0;
}

}  // namespace kvlab
