import HardwareAbstraction

/// A clock whose time moves only when the code under test waits (`sleep(until:)`, a simulated
/// line's `waitForEdge`) or a test moves it (`advance`). A ten-minute run takes milliseconds and
/// is exactly repeatable.
///
/// It is a class because one clock is shared by everything in a simulated world: the loop, the
/// data-ready line and the simulated chip all read the same time. It is deliberately not
/// `Sendable`: a simulated world belongs to one thread, like the loop it stands in for.
public final class ManualClock: MonotonicClock {
  // `@exclusivity(unchecked)` (the runtime's dynamic check is about a hundred instructions on
  // every `now()` of a replay). Why two accesses cannot overlap: the clock is not `Sendable`,
  // so Swift 6's strict concurrency never lets two threads reach it at once; `current` is
  // private, and every access to it is a single load or store (`advance` compares, then
  // stores), so no access spans a call that could come back here.
  @exclusivity(unchecked) private var current: Timestamp

  /// A clock reading `start` (by default 1 s, so that `0` is never a valid sample time).
  public init(start: Timestamp = Timestamp(nanoseconds: 1_000_000_000)) {
    current = start
  }

  public func now() -> Timestamp { current }

  /// Moves the time to `deadline`, or leaves it when the deadline has passed.
  public func sleep(until deadline: Timestamp) {
    advance(to: deadline)
  }

  /// Moves the time forward to `instant`. Time never goes backwards: an earlier instant leaves
  /// the clock where it is and returns `false`.
  @discardableResult
  public func advance(to instant: Timestamp) -> Bool {
    guard instant >= current else { return false }
    current = instant
    return true
  }

  /// Moves the time forward by `interval` (negative intervals are ignored and return `false`).
  @discardableResult
  public func advance(by interval: Duration) -> Bool {
    advance(to: current + interval)
  }
}
