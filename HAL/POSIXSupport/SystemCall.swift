import ByteFormats
import Glibc
import HardwareAbstraction

/// A failed system call: the `errno` it left.
///
/// `Errno` (in HardwareAbstraction) is a plain value shared with the protocols' error types; this
/// wrapper is the `Error` that POSIXSupport's wrappers throw, so each Linux layer can map the code
/// to its own error vocabulary (`I2CError`, `SerialError`, `DataReadyError`) with context.
public struct SystemCallError: Error, Hashable, Sendable, CustomStringConvertible {
  public var errno: Errno

  @inlinable
  public init(_ errno: Errno) {
    self.errno = errno
  }

  public var description: String { errno.description }
}

extension Errno {
  /// The calling thread's `errno` right now. Read it immediately after the failing call: any
  /// later C call may overwrite it.
  @inlinable
  public static var current: Errno {
    Errno(rawValue: Glibc.errno)
  }
}

/// Calls `attempt` again for as long as it fails with `EINTR`, and returns its first other result.
///
/// This is the one place where Plumb handles `EINTR` (a signal arrived while the call was
/// blocked or before it transferred anything). `attempt` follows the C convention: a negative
/// result is a failure and `errno` says why. That covers POSIX calls (which return `-1`) and
/// libi2c's SMBus helpers (which return the negated errno and leave `errno` set). Calls that
/// return their error number instead (`clock_nanosleep`, `pthread_*`) set `errno` in the closure.
///
/// `attempt` runs again from scratch on every retry, so a call with a timeout recomputes the time
/// left inside the closure. The closure is the seam below which tests fake a system call.
///
/// Does not allocate.
@inlinable
public func retryingOnInterrupt<Result: FixedWidthInteger & SignedInteger>(
  _ attempt: () -> Result
) throws(SystemCallError) -> Result {
  // With no errno to turn into nil, the result is never nil.
  try retryingOnInterrupt(orNilOn: nil, attempt)!
}

/// `retryingOnInterrupt(_:)` for calls where one errno is an expected outcome rather than a
/// failure: returns `nil` when `attempt` fails with `expected`.
///
/// Non-blocking I/O uses it with `EAGAIN`: "nothing to read" and "buffer full" are the normal
/// case on the hot path, so they are answered with `nil`, not thrown (throwing does not allocate,
/// but a test harness's thrown-error hook may, and the loop should not look like it fails).
@inlinable
public func retryingOnInterrupt<Result: FixedWidthInteger & SignedInteger>(
  orNilOn expected: Errno?, _ attempt: () -> Result
) throws(SystemCallError) -> Result? {
  while true {
    let result = attempt()
    if result >= 0 { return result }
    let code = Errno.current
    if code == expected { return nil }
    if code != .interrupted { throw SystemCallError(code) }
  }
}
