// Clang thread-safety annotations (-Wthread-safety): which mutex guards a
// member, which locks a function needs, takes or gives back. Under clang they
// are checked at compile time (`make check-thread-safety`); under GCC they
// expand to nothing.
//
// The names and meanings are clang's own
// (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html), as LevelDB and
// Abseil spell them without a prefix. Lock types that carry them:
// base/mutex.h.
#pragma once

#if defined(__clang__)
#define KVLAB_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define KVLAB_THREAD_ANNOTATION(x)
#endif

// On a class: its objects are locks ("mutex", "shared_mutex").
#define CAPABILITY(name) KVLAB_THREAD_ANNOTATION(capability(name))
// On a class: an RAII holder; its constructor acquires, its destructor releases.
#define SCOPED_CAPABILITY KVLAB_THREAD_ANNOTATION(scoped_lockable)

// On a member: read and written only with the lock held (shared for reads).
#define GUARDED_BY(lock) KVLAB_THREAD_ANNOTATION(guarded_by(lock))
// On a pointer member: what it points to is guarded by the lock.
#define PT_GUARDED_BY(lock) KVLAB_THREAD_ANNOTATION(pt_guarded_by(lock))
// On a lock member: the order in which locks may be taken.
#define ACQUIRED_BEFORE(...) KVLAB_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) KVLAB_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))

// On a function: the caller holds the lock(s) (exclusively / at least shared).
#define REQUIRES(...) KVLAB_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) KVLAB_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
// On a function: the caller must not hold the lock(s) (it takes them itself).
#define EXCLUDES(...) KVLAB_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

// On a function: it takes / gives back the lock(s); with no argument, `this`.
#define ACQUIRE(...) KVLAB_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) KVLAB_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) KVLAB_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) KVLAB_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
// On a function: it takes the lock(s) when it returns `result`.
#define TRY_ACQUIRE(...) KVLAB_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define TRY_ACQUIRE_SHARED(...) KVLAB_THREAD_ANNOTATION(try_acquire_shared_capability(__VA_ARGS__))
// On a function: it checks that the lock is held (the analysis assumes it after).
#define ASSERT_CAPABILITY(lock) KVLAB_THREAD_ANNOTATION(assert_capability(lock))
// On a function: it returns a reference to this lock.
#define RETURN_CAPABILITY(lock) KVLAB_THREAD_ANNOTATION(lock_returned(lock))

// On a function: not analysed (say why beside it: locks the analysis cannot
// follow, such as a run-time set of them taken in a loop).
#define NO_THREAD_SAFETY_ANALYSIS KVLAB_THREAD_ANNOTATION(no_thread_safety_analysis)
