// Container: a stored value that is not a string — a hash, a list, a set or
// a sorted set — as one heap object its entry points at.
//
// An entry's record holds the object's address as its value bytes and a
// flag that says so (entry_record.h); EntryView::container is that address.
// The keyspace semantics (keyspace_ops.h, container_call.h) own the object:
// they delete it when the entry is erased or overwritten, and each engine's
// FLUSHALL and destructor release what is left (ReleaseContainer()).
//
// Not synchronised: a container is read and changed only by whoever holds
// its entry (the engine's lock rules, in each engine's header). Const
// methods never change the object, so readers sharing a lock are safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

namespace kvlab {

enum class ValueType : uint8_t { kString, kHash, kList, kSet, kZSet };

// TYPE's reply for each value type.
inline std::string_view TypeNameOf(ValueType type) {
  switch (type) {
    case ValueType::kString:
      return "string";
    case ValueType::kHash:
      return "hash";
    case ValueType::kList:
      return "list";
    case ValueType::kSet:
      return "set";
    case ValueType::kZSet:
      return "zset";
  }
  return "none";
}

class Container {
 public:
  explicit Container(ValueType type) : type_(type) {}
  virtual ~Container() = default;
  Container(const Container&) = delete;
  Container& operator=(const Container&) = delete;

  ValueType type() const { return type_; }
  // Elements (fields, members); an empty container's key is removed, as
  // Redis removes it.
  virtual size_t Size() const = 0;
  // Approximate bytes the object and what it owns take (the maxmemory
  // estimate, as Footprint() is for a string).
  virtual size_t Bytes() const = 0;
  // OBJECT ENCODING's reply, by Redis 7.0's rules for this type.
  virtual std::string_view Encoding() const = 0;
  // A deep copy (COPY).
  virtual std::unique_ptr<Container> Clone() const = 0;

 private:
  const ValueType type_;
};

// The value bytes an entry holding `*container` stores: the address itself.
// The view points at `*slot`, which must outlive its use.
inline std::string_view AddressBytes(Container* const* slot) {
  return {reinterpret_cast<const char*>(slot), sizeof(Container*)};
}
inline Container* AddressFrom(std::string_view bytes) {
  Container* container = nullptr;
  std::memcpy(&container, bytes.data(), sizeof container);
  return container;
}

// Deletes a container an entry held (FLUSHALL, an engine's destructor).
inline void ReleaseContainer(Container* container) { delete container; }

}  // namespace kvlab
