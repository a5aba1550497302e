/// The loop's clock: `CLOCK_MONOTONIC` on a board, a `ManualClock` in tests.
///
/// **Contract for the loop.** `now()` never goes backwards. `sleep(until:)` returns at or after
/// the absolute `deadline` (immediately when it has passed); absolute deadlines do not
/// accumulate drift the way relative sleeps do. The loop sleeps only in the polling fallback:
/// while edges arrive, the chip is the metronome.
///
/// **Contract for implementers.** Use `CLOCK_MONOTONIC` (the GPIO edge timestamps' clock) and
/// `clock_nanosleep(TIMER_ABSTIME)`, retrying `EINTR` until the deadline. A simulated clock
/// moves its time to `deadline` instead of waiting.
public protocol MonotonicClock {
  /// The current instant.
  func now() -> Timestamp

  /// Sleeps until `deadline`; returns at once when it has passed.
  mutating func sleep(until deadline: Timestamp)
}
