/// An instant on the system's `CLOCK_MONOTONIC` clock, in nanoseconds.
///
/// Plumb has exactly one clock domain (see DESIGN.md): the kernel stamps GPIO edge events on
/// `CLOCK_MONOTONIC`, the loop sleeps on it with `clock_nanosleep(TIMER_ABSTIME)`, and the
/// simulated hardware's `ManualClock` counts on the same scale. Swift's `ContinuousClock` is
/// `CLOCK_BOOTTIME` on Linux and is *not* comparable with these values; never mix them.
///
/// The value is a plain count, so arithmetic is exact and deterministic. Intervals between
/// instants are Swift `Duration`s.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// Nanoseconds since the clock's epoch (for `CLOCK_MONOTONIC`, an unspecified point at boot).
  public var nanoseconds: Int64

  @inlinable
  public init(nanoseconds: Int64) {
    self.nanoseconds = nanoseconds
  }

  /// The clock's epoch, `0 ns`.
  public static let zero = Timestamp(nanoseconds: 0)

  /// The instant in seconds since the epoch, for display and for estimators that take `Double`.
  @inlinable
  public var seconds: Double { Double(nanoseconds) * 1e-9 }

  @inlinable
  public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
    lhs.nanoseconds < rhs.nanoseconds
  }

  /// The instant `nanoseconds` later (earlier when negative).
  @inlinable
  public func advanced(byNanoseconds nanoseconds: Int64) -> Timestamp {
    Timestamp(nanoseconds: self.nanoseconds + nanoseconds)
  }

  /// The signed number of nanoseconds from `earlier` to `self`.
  @inlinable
  public func nanoseconds(since earlier: Timestamp) -> Int64 {
    nanoseconds - earlier.nanoseconds
  }

  @inlinable
  public static func + (lhs: Timestamp, rhs: Duration) -> Timestamp {
    lhs.advanced(byNanoseconds: rhs.nanosecondsValue)
  }

  @inlinable
  public static func - (lhs: Timestamp, rhs: Duration) -> Timestamp {
    lhs.advanced(byNanoseconds: -rhs.nanosecondsValue)
  }

  /// The interval from `rhs` to `lhs`.
  @inlinable
  public static func - (lhs: Timestamp, rhs: Timestamp) -> Duration {
    .nanoseconds(lhs.nanoseconds - rhs.nanoseconds)
  }

  /// `seconds.nnnnnnnnn`, exact.
  public var description: String {
    let sign = nanoseconds < 0 ? "-" : ""
    let magnitude = nanoseconds.magnitude
    let fraction = String(magnitude % 1_000_000_000)
    let padded = String(repeating: "0", count: 9 - fraction.count) + fraction
    return "\(sign)\(magnitude / 1_000_000_000).\(padded)"
  }
}

extension Duration {
  /// The duration as a whole number of nanoseconds, truncated toward zero.
  ///
  /// Saturates at `Int64.max`/`Int64.min` (about 292 years), which no deadline in Plumb reaches.
  @inlinable
  public var nanosecondsValue: Int64 {
    let (seconds, attoseconds) = components
    let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
    if overflow { return seconds < 0 ? .min : .max }
    let (sum, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
    if overflow2 { return seconds < 0 ? .min : .max }
    return sum
  }
}
