#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A value behind a `pthread_mutex_t`: what the server's thread and the serial loop share.
///
/// Not the standard library's `Synchronization.Mutex`: on Linux that locks with bare futex
/// calls and atomics compiled outside the sanitized code, so ThreadSanitizer cannot see it
/// order anything, and reported every access it guards as a race (`make test-tsan` failed on
/// the hub). ThreadSanitizer intercepts `pthread_mutex_lock`, and the lock costs the same: an
/// uncontended lock is one atomic exchange either way.
public final class Locked<Value>: @unchecked Sendable {
  // Both only touched with the mutex held (`value`) or through its stable address (`mutex`).
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private var value: Value

  public init(_ value: Value) {
    self.value = value
    mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    let status = pthread_mutex_init(mutex, nil)
    precondition(status == 0, "pthread_mutex_init failed: \(status)")
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deinitialize(count: 1)
    mutex.deallocate()
  }

  /// Runs `body` with the value, the lock held.
  public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body(&value)
  }
}
