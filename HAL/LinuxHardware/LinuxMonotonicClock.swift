import Glibc
import HardwareAbstraction
import POSIXSupport

/// The board's clock: `CLOCK_MONOTONIC`, the clock the kernel stamps GPIO edge events with.
///
/// Not Swift's `ContinuousClock`, which is `CLOCK_BOOTTIME` on Linux (it keeps counting through
/// suspend) and so is not comparable with edge timestamps. `sleep(until:)` uses
/// `clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)`: an absolute deadline does not accumulate
/// the drift of repeated relative sleeps, and a signal that interrupts it simply sleeps again
/// until the same deadline.
public struct LinuxMonotonicClock: MonotonicClock, Sendable {
  public init() {}

  /// `clock_gettime(CLOCK_MONOTONIC)`. Does not allocate.
  public func now() -> Timestamp {
    LinuxClocks.read(CLOCK_MONOTONIC)
  }

  /// Sleeps until `deadline` on `CLOCK_MONOTONIC`; returns at once when it has passed.
  public func sleep(until deadline: Timestamp) {
    // The kernel rejects negative times with EINVAL; before the epoch has passed anyway.
    var target = timespec(nanoseconds: max(0, deadline.nanoseconds))
    _ = try? retryingOnInterrupt {
      // clock_nanosleep returns its error number instead of setting errno.
      let result = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil)
      if result == 0 { return CInt(0) }
      Glibc.errno = result
      return CInt(-1)
    }
  }
}

/// Reading the kernel's clocks.
public enum LinuxClocks {
  /// `clock_gettime(clock)` as a `Timestamp`. Does not allocate (a vDSO call, no syscall).
  public static func read(_ clock: clockid_t) -> Timestamp {
    var time = timespec()
    _ = clock_gettime(clock, &time)
    return Timestamp(time)
  }
}
