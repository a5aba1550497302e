import HardwareAbstraction

/// When a fault strikes: which events (by index), during which stretch of simulated time, with
/// what probability, and how many times at most. All the conditions that are set must hold.
///
/// The same type schedules I2C faults (the event is a bus transaction; its index is the bus's
/// transaction counter and its time the clock's reading when the transfer starts) and
/// data-ready faults (the event is a rising edge the chip raised; its index counts the edges
/// the line has taken from the source, and its time is the edge's own time).
///
/// Examples:
/// - the 100th to 102nd transactions: `.events(100..<103)`;
/// - the first 3 matching events at or after t = 5 s: `.starting(at: t5, count: 3)`;
/// - everything between 10 s and 12 s: `.during(t10..<t12)`;
/// - each event with probability 0.001: `.randomly(probability: 0.001)`.
///
/// Deterministic: the probability is drawn from the owning plan's `SeededGenerator`, and only
/// for events that pass every other condition, so the draws depend on nothing but the event
/// sequence and the seed.
public struct FaultSchedule: Hashable, Sendable {
  /// The event indices that may be hit (0-based); `nil` means any.
  public var events: Range<UInt64>?
  /// The simulated-time window (start inclusive, end exclusive) in which events may be hit;
  /// `nil` means any time.
  public var window: Range<Timestamp>?
  /// The probability that an event passing the other conditions is hit, `0 … 1`.
  public var probability: Double
  /// The most events this schedule hits; `nil` means no limit.
  public var limit: UInt64?

  public init(
    events: Range<UInt64>? = nil, window: Range<Timestamp>? = nil, probability: Double = 1,
    limit: UInt64? = nil
  ) {
    self.events = events
    self.window = window
    self.probability = probability
    self.limit = limit
  }

  /// Every event.
  public static var always: FaultSchedule { FaultSchedule() }

  /// The events whose index is in `indices`.
  public static func events(_ indices: Range<UInt64>) -> FaultSchedule {
    FaultSchedule(events: indices)
  }

  /// The one event with index `index`.
  public static func event(_ index: UInt64) -> FaultSchedule {
    FaultSchedule(events: index..<(index + 1))
  }

  /// The first `count` events with index `index` or later (a burst that starts at an event).
  public static func starting(atEvent index: UInt64, count: UInt64) -> FaultSchedule {
    FaultSchedule(events: index..<UInt64.max, limit: count)
  }

  /// The first `count` events at or after `instant` (a burst that starts at a time).
  public static func starting(at instant: Timestamp, count: UInt64) -> FaultSchedule {
    FaultSchedule(window: instant..<Timestamp.distantFuture, limit: count)
  }

  /// Every event in the time window `window`.
  public static func during(_ window: Range<Timestamp>) -> FaultSchedule {
    FaultSchedule(window: window)
  }

  /// Every event from `start` on, for `duration` (for ever when `duration` is `nil`).
  public static func from(_ start: Timestamp, for duration: Duration? = nil) -> FaultSchedule {
    let end = duration.map { start.saturatingAdvanced(by: $0) } ?? .distantFuture
    return FaultSchedule(window: start..<max(start, end))
  }

  /// Each event independently with probability `probability` (for soak tests).
  public static func randomly(probability: Double) -> FaultSchedule {
    FaultSchedule(probability: probability)
  }

  /// Whether this schedule hits the event with `index` at `time`, given that it has hit
  /// `alreadyHit` events so far. Draws from `generator` only when every other condition holds
  /// and the probability is strictly between 0 and 1.
  func hits(
    index: UInt64, at time: Timestamp, alreadyHit: UInt64, generator: inout SeededGenerator
  ) -> Bool {
    if let limit, alreadyHit >= limit { return false }
    if let events, !events.contains(index) { return false }
    if let window, !window.contains(time) { return false }
    if probability >= 1 { return true }
    if probability <= 0 || probability.isNaN { return false }
    return generator.occurs(withProbability: probability)
  }
}

extension Timestamp {
  /// The instant `duration` later, stopping at the representable range instead of trapping
  /// (a fault window "for 300 years" simply never ends).
  func saturatingAdvanced(by duration: Duration) -> Timestamp {
    let (sum, overflow) = nanoseconds.addingReportingOverflow(duration.nanosecondsValue)
    if overflow { return Timestamp(nanoseconds: duration < .zero ? .min : .max) }
    return Timestamp(nanoseconds: sum)
  }

  /// The latest representable instant, about 292 years after the epoch: "never" as a window end.
  public static var distantFuture: Timestamp { Timestamp(nanoseconds: .max) }
}
