import HardwareAbstraction
import SimulatedHardware

/// The clock of a replay (`plumb run --replay`, `plumb-bench`'s replay): the replay board's
/// manual clock, except that once armed a sleep to a fallback-timer deadline moves to the live
/// loop's recorded wake-up instead (a live loop that woke late is reproduced exactly).
/// Start-up's sleeps are not recorded wake-ups: arm it after start-up.
public final class ReplayClock: MonotonicClock {
  public let base: ManualClock
  public let chip: ReplayedMPU6050
  /// Whether sleeps go to the recorded wake-ups (set once start-up is over).
  public var armed = false

  public init(base: ManualClock, chip: ReplayedMPU6050) {
    self.base = base
    self.chip = chip
  }

  // Inlinable: the replayed loop asks for the time and sleeps every sample.
  @inlinable
  public func now() -> Timestamp { base.now() }

  @inlinable
  public func sleep(until deadline: Timestamp) {
    base.advance(to: armed ? chip.wakeTime(forDeadline: deadline) : deadline)
  }
}
