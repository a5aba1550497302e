import HardwareAbstraction

/// The clock a kernel stamps GPIO edge events with (libgpiod v1 `struct gpiod_line_event.ts`,
/// v2 `gpiod_edge_event_get_timestamp_ns`).
///
/// Kernels since 5.7 stamp `CLOCK_MONOTONIC`; older ones stamped `CLOCK_REALTIME` for the v1
/// uAPI, which jumps whenever NTP or a person sets the date and is not the loop's clock. The v1
/// API does not say which, so `LinuxDataReadyLine` decides at the first event with `detect(…)`
/// and converts realtime stamps with `monotonicInstant(…)`. libgpiod v2 asks for
/// `CLOCK_MONOTONIC` explicitly; the check costs nothing and stays.
public enum EdgeClockDomain: String, Hashable, Sendable {
  case monotonic
  case realtime

  /// How far an event stamp may lie after the clocks read just after it (clock reads are not
  /// atomic, and NTP slews `CLOCK_REALTIME`).
  public static let tolerance: Duration = .seconds(1)

  /// Decides which clock `eventStamp` is on, from both clocks read right after the event was
  /// read; `nil` when it cannot tell.
  ///
  /// An edge happened after boot and before the clocks were read. On `CLOCK_MONOTONIC` that is
  /// the interval [0, monotonicNow]; on `CLOCK_REALTIME` it is [boot, realtimeNow], where boot =
  /// realtimeNow − monotonicNow. With a set clock the second interval lies around 1.7e9 s and
  /// the first within the uptime, so exactly one contains the stamp, however long the event
  /// waited in the kernel's queue. The answer is `nil` when neither does (a stamp from the
  /// future, or negative), or when both do, which happens only when the realtime clock was
  /// never set (it then counts from 1970 alongside the uptime) — a board without RTC, network or
  /// systemd's build-time floor — and the two clocks cannot be told apart.
  public static func detect(
    eventStamp: Timestamp, monotonicNow: Timestamp, realtimeNow: Timestamp
  ) -> EdgeClockDomain? {
    let slack = tolerance.nanosecondsValue
    let boot = realtimeNow.nanoseconds - monotonicNow.nanoseconds
    let stamp = eventStamp.nanoseconds
    let monotonic = stamp >= 0 && stamp <= monotonicNow.nanoseconds + slack
    let realtime = stamp >= boot - slack && stamp <= realtimeNow.nanoseconds + slack
    switch (monotonic, realtime) {
    case (true, false): return .monotonic
    case (false, true): return .realtime
    default: return nil
    }
  }

  /// A `CLOCK_REALTIME` stamp moved to `CLOCK_MONOTONIC` by the offset between the two clocks,
  /// read (as close together as possible) just after the event. Measured per event, so a date
  /// change between events does not shift later samples.
  public static func monotonicInstant(
    ofRealtimeStamp stamp: Timestamp, monotonicNow: Timestamp, realtimeNow: Timestamp
  ) -> Timestamp {
    Timestamp(nanoseconds: stamp.nanoseconds - (realtimeNow.nanoseconds - monotonicNow.nanoseconds))
  }
}
