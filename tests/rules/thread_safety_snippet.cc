// Compiled by thread_safety_test.py with clang's -Wthread-safety: clean as
// it stands, and each KVLAB_BREAK_* variant must fail to compile, so the
// analysis behind `make check-thread-safety` cannot pass without checking.
#include <condition_variable>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace {

class Counter {
 public:
  void Add(int n) EXCLUDES(mutex_) {
    kvlab::MutexLock lock(mutex_);
    count_ += n;
    changed_.notify_all();
  }
  int WaitForPositive() EXCLUDES(mutex_) {
    kvlab::MutexLock lock(mutex_);
    lock.Wait(changed_, [this]() REQUIRES(mutex_) { return count_ > 0; });
    return count_;
  }
  int Read() const EXCLUDES(mutex_) {
#ifdef KVLAB_BREAK_UNLOCKED_READ
    return count_;
#else
    kvlab::MutexLock lock(mutex_);
    return count_;
#endif
  }
  int ReadLocked() const REQUIRES(mutex_) { return count_; }
  int ReadViaHelper() const EXCLUDES(mutex_) {
#ifdef KVLAB_BREAK_MISSING_REQUIRES
    return ReadLocked();
#else
    kvlab::MutexLock lock(mutex_);
    return ReadLocked();
#endif
  }

 private:
  mutable kvlab::Mutex mutex_;
  std::condition_variable changed_;
  int count_ GUARDED_BY(mutex_) = 0;
};

class Table {
 public:
  int Get() EXCLUDES(mutex_) {
    kvlab::ReaderLock reader(mutex_);
    return value_;
  }
  void Set(int value) EXCLUDES(mutex_) {
#ifdef KVLAB_BREAK_WRITE_UNDER_READER
    kvlab::ReaderLock writer(mutex_);
#else
    kvlab::WriterLock writer(mutex_);
#endif
    value_ = value;
  }

 private:
  kvlab::SharedMutex mutex_;
  int value_ GUARDED_BY(mutex_) = 0;
};

}  // namespace

int main() {
  Counter counter;
  counter.Add(1);
  Table table;
  table.Set(counter.WaitForPositive() + counter.Read() + counter.ReadViaHelper());
  return table.Get() == 3 ? 0 : 1;
}
