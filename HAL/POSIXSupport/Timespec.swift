import Glibc
import HardwareAbstraction

extension Timestamp {
  /// The instant a `struct timespec` names (seconds and nanoseconds on the same clock).
  @inlinable
  public init(_ time: timespec) {
    self.init(nanoseconds: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
  }
}

extension timespec {
  /// The `struct timespec` for `nanoseconds` (an instant or a duration): whole seconds rounded
  /// toward minus infinity and `0 ≤ tv_nsec < 1e9`, as the kernel requires.
  @inlinable
  public init(nanoseconds: Int64) {
    var seconds = nanoseconds / 1_000_000_000
    var remainder = nanoseconds % 1_000_000_000
    if remainder < 0 {
      seconds -= 1
      remainder += 1_000_000_000
    }
    self.init(tv_sec: Int(seconds), tv_nsec: Int(remainder))
  }

  /// The `struct timespec` for an instant.
  @inlinable
  public init(_ instant: Timestamp) {
    self.init(nanoseconds: instant.nanoseconds)
  }
}
