// Mutex, SharedMutex and their scoped holders: std::mutex and
// std::shared_mutex with clang's thread-safety annotations
// (base/thread_annotations.h). libstdc++'s own locks carry none, so clang
// could not check a GUARDED_BY against them.
//
//   Mutex mutex_;
//   int count_ GUARDED_BY(mutex_) = 0;
//   std::condition_variable changed_;
//   ...
//   MutexLock lock(mutex_);
//   lock.Wait(changed_, [&]() REQUIRES(mutex_) { return count_ > 0; });
//
// MutexLock holds a std::unique_lock<std::mutex>, so waits use a plain
// std::condition_variable. A wait's predicate runs with the lock held; say so
// with REQUIRES(the mutex) on the lambda, or the analysis (which checks a
// lambda as a function of its own) reports its reads.
//
// Same costs as the std types they wrap; thread-safe as those are.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#include "base/thread_annotations.h"

namespace kvlab {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  // std::mutex's names, so std::lock and the like take it too.
  void lock() ACQUIRE() { mutex_.lock(); }
  void unlock() RELEASE() { mutex_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mutex_.try_lock(); }

 private:
  friend class MutexLock;
  std::mutex mutex_;
};

// Holds a Mutex from construction to destruction; Unlock() and Lock() give it
// back and take it again in between.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) ACQUIRE(mutex) : lock_(mutex.mutex_) {}
  ~MutexLock() RELEASE() = default;
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() { lock_.unlock(); }
  void Lock() ACQUIRE() { lock_.lock(); }

  // Waits for a notification of `signal` (the lock given back meanwhile);
  // wakes spuriously too, as std::condition_variable::wait does.
  void Wait(std::condition_variable& signal) { signal.wait(lock_); }
  // Until ready() is true, which it checks with the lock held.
  template <class Predicate>
  void Wait(std::condition_variable& signal, Predicate ready) {
    signal.wait(lock_, ready);
  }
  // As Wait, giving up after `timeout`; returns ready()'s last answer.
  template <class Rep, class Period, class Predicate>
  bool WaitFor(std::condition_variable& signal, std::chrono::duration<Rep, Period> timeout,
               Predicate ready) {
    return signal.wait_for(lock_, timeout, ready);
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

// A reader-writer lock: many holders of the shared side or one of the
// exclusive side.
class CAPABILITY("shared_mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  // std::shared_mutex's names, so std::unique_lock and std::shared_lock
  // take it too: where a run-time set of locks is held (which the analysis
  // cannot follow, so the function says NO_THREAD_SAFETY_ANALYSIS).
  void lock() ACQUIRE() { mutex_.lock(); }
  void unlock() RELEASE() { mutex_.unlock(); }
  void lock_shared() ACQUIRE_SHARED() { mutex_.lock_shared(); }
  void unlock_shared() RELEASE_SHARED() { mutex_.unlock_shared(); }

 private:
  std::shared_mutex mutex_;
};

// Holds a SharedMutex's exclusive side for its lifetime.
class SCOPED_CAPABILITY WriterLock {
 public:
  explicit WriterLock(SharedMutex& mutex) ACQUIRE(mutex) : mutex_(mutex) { mutex_.lock(); }
  ~WriterLock() RELEASE() { mutex_.unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  SharedMutex& mutex_;
};

// Holds a SharedMutex's shared side for its lifetime.
class SCOPED_CAPABILITY ReaderLock {
 public:
  explicit ReaderLock(SharedMutex& mutex) ACQUIRE_SHARED(mutex) : mutex_(mutex) {
    mutex_.lock_shared();
  }
  ~ReaderLock() RELEASE() { mutex_.unlock_shared(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  SharedMutex& mutex_;
};

}  // namespace kvlab
