// EntryRecord: key, value and optional expiry in one allocation — contents
// survive every change, in place or by replacement.
#include "engines/keyspace/entry_record.h"

#include <gtest/gtest.h>

#include <string>

namespace kvlab {
namespace {

// Frees whatever record it holds last.
struct Owned {
  EntryRecord* record;
  ~Owned() { EntryRecord::Free(record); }
};

TEST(EntryRecord, HoldsKeyValueAndExpiry) {
  Owned owned{EntryRecord::Make("key:1", "value", 0)};
  EXPECT_EQ(owned.record->key(), "key:1");
  EXPECT_EQ(owned.record->value(), "value");
  EXPECT_EQ(owned.record->expire_at_ms(), 0);
  Owned timed{EntryRecord::Make("k", std::string("\0v\r\n", 4), 1234)};
  EXPECT_EQ(timed.record->value(), std::string("\0v\r\n", 4));
  EXPECT_EQ(timed.record->expire_at_ms(), 1234);
}

TEST(EntryRecord, ExpiryIsAddedAndRemovedKeepingKeyAndValue) {
  const std::string value(100, 'v');
  Owned plain{EntryRecord::Make("key", value, 0)};
  Owned timed{EntryRecord::Make("key", value, 99)};
  timed.record = EntryRecord::SetExpiry(timed.record, 0);
  EXPECT_EQ(timed.record->expire_at_ms(), 0);
  EXPECT_EQ(timed.record->value(), value);
  EXPECT_EQ(timed.record->key(), "key");
  plain.record = EntryRecord::SetExpiry(plain.record, 77);
  EXPECT_EQ(plain.record->expire_at_ms(), 77);
  plain.record = EntryRecord::SetExpiry(plain.record, 78);  // in place
  EXPECT_EQ(plain.record->expire_at_ms(), 78);
  EXPECT_EQ(plain.record->value(), value);
}

TEST(EntryRecord, StoreAndAppendKeepTheKeyWhetherInPlaceOrReplaced) {
  Owned owned{EntryRecord::Make("the-key", "short", 0)};
  owned.record = EntryRecord::Store(owned.record, "tiny", 0);  // fits: in place
  EXPECT_EQ(owned.record->value(), "tiny");
  const std::string big(5000, 'b');
  owned.record = EntryRecord::Store(owned.record, big, 42);  // grows and gains an expiry
  EXPECT_EQ(owned.record->key(), "the-key");
  EXPECT_EQ(owned.record->value(), big);
  EXPECT_EQ(owned.record->expire_at_ms(), 42);
  owned.record = EntryRecord::Append(owned.record, "tail");
  EXPECT_EQ(owned.record->value(), big + "tail");
  EXPECT_EQ(owned.record->expire_at_ms(), 42);
  owned.record = EntryRecord::Store(owned.record, "", 0);
  EXPECT_EQ(owned.record->value(), "");
  EXPECT_EQ(owned.record->key(), "the-key");
  for (int i = 0; i < 100; ++i) owned.record = EntryRecord::Append(owned.record, "x");
  EXPECT_EQ(owned.record->value(), std::string(100, 'x'));
}

// The concurrent engine rewrites a record that other threads may be reading
// the key of: in place only, the key and the expiry slot's presence kept.
TEST(EntryRecord, OverwriteInPlaceKeepsKeyAndTheExpirySlot) {
  Owned owned{EntryRecord::Make("stable-key", std::string(40, 'a'), 5)};
  EntryRecord* const same = owned.record;
  ASSERT_TRUE(owned.record->CanHold(10, false));
  owned.record->Overwrite("0123456789", 0);  // "no expiry" goes into the slot as 0
  EXPECT_EQ(owned.record, same);
  EXPECT_EQ(owned.record->key(), "stable-key");
  EXPECT_EQ(owned.record->value(), "0123456789");
  EXPECT_EQ(owned.record->expire_at_ms(), 0);
  ASSERT_TRUE(owned.record->CanHold(40, true));
  owned.record->Overwrite(std::string(40, 'b'), 9);
  EXPECT_EQ(owned.record->expire_at_ms(), 9);
  EXPECT_FALSE(owned.record->CanHold(100'000, true));
  Owned plain{EntryRecord::Make("k", "v", 0)};
  EXPECT_FALSE(plain.record->CanHold(1, true)) << "no slot for an expiry";
}

// The value's form lives with its size: Store sets it, Append makes an
// edited string of a present record, SetExpiry keeps it, whether the
// record is rewritten in place or replaced.
TEST(EntryRecord, ValueFormIsKeptAndChangedByTheRightCalls) {
  Owned owned{EntryRecord::Make("k", "12", 0)};
  EXPECT_EQ(owned.record->form(), ValueForm::kString);
  owned.record = EntryRecord::Append(owned.record, "3");  // in place
  EXPECT_EQ(owned.record->form(), ValueForm::kEditedString);
  owned.record = EntryRecord::SetExpiry(owned.record, 77);  // replaced: a slot appears
  EXPECT_EQ(owned.record->form(), ValueForm::kEditedString);
  EXPECT_EQ(owned.record->value(), "123");
  owned.record = EntryRecord::Store(owned.record, "1.5", 77, ValueForm::kFloatString);
  EXPECT_EQ(owned.record->form(), ValueForm::kFloatString);
  owned.record = EntryRecord::Append(owned.record, std::string(500, 'x'));  // grows: replaced
  EXPECT_EQ(owned.record->form(), ValueForm::kEditedString);
  EXPECT_EQ(owned.record->value().size(), 503u);
  owned.record = EntryRecord::Store(owned.record, "v", 0);
  EXPECT_EQ(owned.record->form(), ValueForm::kString);
  EXPECT_FALSE(owned.record->holds_container());
}

}  // namespace
}  // namespace kvlab
