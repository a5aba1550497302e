import Glibc
import HardwareAbstraction

/// The watchdog systemd asks for: `WATCHDOG_USEC` (set from the unit's `WatchdogSec=`) and,
/// when present, `WATCHDOG_PID` (the process it is meant for).
///
/// sd_watchdog_enabled(3): the service should send `WATCHDOG=1` "regularly"; the recommended
/// interval is half of `WATCHDOG_USEC`. If no ping arrives within `WATCHDOG_USEC`, systemd
/// kills the service (SIGABRT by default) and `Restart=on-failure` starts it again.
public struct WatchdogSettings: Hashable, Sendable {
  /// The watchdog timeout, µs (`WatchdogSec=2` gives 2 000 000).
  public var timeoutMicroseconds: UInt64

  public init(timeoutMicroseconds: UInt64) {
    self.timeoutMicroseconds = timeoutMicroseconds
  }

  /// The timeout, ns (saturating: no real timeout comes near 292 years).
  public var timeoutNanoseconds: Int64 {
    let (product, overflow) = timeoutMicroseconds.multipliedReportingOverflow(by: 1000)
    return overflow || product > UInt64(Int64.max) ? .max : Int64(product)
  }

  /// The settings the environment asks for, or `nil` when there is no watchdog for this
  /// process: `WATCHDOG_USEC` unset or empty, or `WATCHDOG_PID` naming another process (a
  /// child that inherited the environment). Throws `.invalidWatchdogInterval` for a value that
  /// is not a positive whole number, so a typo in a drop-in is reported, not ignored.
  public static func fromEnvironment(
    _ environment: (String) -> String? = environmentVariable, processID: Int32 = getpid()
  ) throws(NotifyError) -> WatchdogSettings? {
    guard let text = environment("WATCHDOG_USEC"), !text.isEmpty else { return nil }
    guard let microseconds = UInt64(text), microseconds > 0 else {
      throw NotifyError(.invalidWatchdogInterval, detail: text)
    }
    if let pid = environment("WATCHDOG_PID"), !pid.isEmpty, Int32(pid) != processID {
      return nil
    }
    return WatchdogSettings(timeoutMicroseconds: microseconds)
  }
}

/// Decides when to ping, on `CLOCK_MONOTONIC`: "given now, should I ping?".
///
/// The first call says yes (ping right after `READY=1`), and then once at least half the
/// timeout has passed since the last ping, which leaves the other half as margin for a late
/// loop iteration. Counting in time rather than samples keeps the pings going while the loop
/// polls on a timer (no edges), and a loop that stops iterating stops pinging, which is what
/// the watchdog is for. A plain value: no clock, no allocation.
public struct Watchdog: Hashable, Sendable {
  /// The timeout, ns.
  public let timeoutNanoseconds: Int64
  /// The ping interval: half the timeout, ns.
  public let pingIntervalNanoseconds: Int64
  /// When the last ping was due and taken.
  public private(set) var lastPing: Timestamp?

  /// A watchdog for a `timeoutNanoseconds` timeout (at least 2 ns).
  public init(timeoutNanoseconds: Int64) {
    self.timeoutNanoseconds = max(2, timeoutNanoseconds)
    pingIntervalNanoseconds = self.timeoutNanoseconds / 2
  }

  public init(_ settings: WatchdogSettings) {
    self.init(timeoutNanoseconds: settings.timeoutNanoseconds)
  }

  /// Whether a ping is due at `now`; when it is, `now` is recorded as the ping time, so call
  /// this once per iteration and send `WATCHDOG=1` when it returns `true`.
  public mutating func shouldPing(at now: Timestamp) -> Bool {
    if let lastPing, now.nanoseconds(since: lastPing) < pingIntervalNanoseconds { return false }
    lastPing = now
    return true
  }
}

/// The same decision counted in samples, for a loop that prefers counting to reading a clock:
/// ping on the first sample, then every `samplesPerPing` samples, where `samplesPerPing` is
/// the number of whole sample periods in half the timeout (at least 1). At 100 Hz with
/// `WatchdogSec=2` that is every 100 samples.
///
/// Samples only count while samples arrive: in the polling fallback the loop still produces
/// them on its timer, but a loop stuck waiting for an edge that never comes stops pinging.
public struct SampleWatchdog: Hashable, Sendable {
  public let samplesPerPing: Int
  private var samplesSincePing: Int?

  /// A counter for `settings` at a sample period of `samplePeriodNanoseconds` (> 0).
  public init(timeoutNanoseconds: Int64, samplePeriodNanoseconds: Int64) {
    let half = max(1, timeoutNanoseconds / 2)
    samplesPerPing = max(1, Int(half / max(1, samplePeriodNanoseconds)))
  }

  public init(_ settings: WatchdogSettings, samplePeriodNanoseconds: Int64) {
    self.init(
      timeoutNanoseconds: settings.timeoutNanoseconds,
      samplePeriodNanoseconds: samplePeriodNanoseconds)
  }

  /// Counts one sample; `true` when a ping is due now.
  public mutating func shouldPingAfterSample() -> Bool {
    guard let count = samplesSincePing else {
      samplesSincePing = 0
      return true
    }
    if count + 1 >= samplesPerPing {
      samplesSincePing = 0
      return true
    }
    samplesSincePing = count + 1
    return false
  }
}
