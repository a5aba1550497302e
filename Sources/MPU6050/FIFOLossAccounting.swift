import HardwareAbstraction

/// FIFO loss accounting: how many samples the FIFO fallback lost to overflows and failed reads,
/// counted exactly once the drains date both ends of each gap.
///
/// Owns the chip's sample clock as the drains reveal it (`FIFOClock`: bounds on its period and
/// phase from drain times and record counts), the FIFO resets whose losses are not counted yet,
/// and when the FIFO was last drained or restarted. It does no I/O and touches no counter: each
/// call returns the samples it counted, for the driver to add to `counters.samplesLost`.
struct FIFOLossAccounting {
  /// The chip's sample clock as the FIFO drains reveal it.
  var clock: FIFOClock
  /// FIFO resets whose losses are not counted yet (at most `capacity`; reserved up front, so
  /// recording a reset never allocates).
  private var pending: [PendingFIFOLoss] = []
  /// When the FIFO was last drained, or its count restarted.
  var lastDrain = Timestamp.zero
  private static var capacity: Int { 8 }

  init(nominalPeriod: Int64) {
    clock = FIFOClock(nominalPeriod: nominalPeriod)
    pending.reserveCapacity(Self.capacity)
  }

  /// Whether some FIFO reset's losses are still to be counted.
  var lossPending: Bool { !pending.isEmpty }

  /// Records a FIFO reset at `now`: the samples lost are those between the newest record read
  /// before (`newestReadBack` records before the newest counted) and the first record after,
  /// left pending until the drains date them. Returns the losses counted now: an old pending
  /// loss pushed out, or, when no record was read since counting restarted, the time since
  /// then in periods (of `measuredPeriodNanoseconds` when the loop measured one, else of the
  /// clock's). Restarts the record count.
  mutating func recordReset(
    at now: Timestamp, newestReadBack: Int, measuredPeriodNanoseconds: Int64?
  )
    -> Int
  {
    var counted = 0
    for index in pending.indices { pending[index].isOpen = false }
    if let newest = clock.newest {
      if pending.count >= Self.capacity {
        counted += countEstimated(pending.removeFirst(), at: now)
      }
      pending.append(
        PendingFIFOLoss(
          before: .init(newest: newest, back: newestReadBack), after: nil, resetAt: now,
          isOpen: true))
    } else {
      // Nothing read since counting restarted: the time since then, in periods.
      let period = measuredPeriodNanoseconds ?? Int64(clock.period.rounded())
      let elapsed = Double(now.nanoseconds(since: lastDrain))
      let lost = Int((elapsed / Double(max(1, period))).rounded()) + newestReadBack
      counted += max(0, lost)
    }
    clock.restartCount(at: now)
    lastDrain = now
    return counted
  }

  /// Tries to date every pending FIFO loss: the first record after its reset is taken from the
  /// drains since (while they last), both ends are recomputed with the period as now known and
  /// aligned with the chip's phase, and the gap is counted when only one whole number of
  /// periods fits. Losses older than 30 s, or all of them when `all`, are counted with the
  /// best estimate. Returns the samples counted.
  mutating func resolve(at now: Timestamp, all: Bool) -> Int {
    var counted = 0
    var index = 0
    while index < pending.count {
      if pending[index].isOpen, let newest = clock.newest, clock.index > 0 {
        // Keep whichever dating of the first record after the reset is sharpest.
        let candidate = PendingFIFOLoss.Reference(newest: newest, back: clock.index - 1)
        if let kept = pending[index].after {
          let keptBounds = clock.bounds(kept.back, recordsBefore: kept.newest)
          let newBounds = clock.bounds(candidate.back, recordsBefore: candidate.newest)
          if newBounds.high - newBounds.low < keptBounds.high - keptBounds.low {
            pending[index].after = candidate
          }
        } else {
          pending[index].after = candidate
        }
      }
      let loss = pending[index]
      let expired = all || now.nanoseconds(since: loss.resetAt) > 30_000_000_000
      guard let (periods, exact) = gap(of: loss) else {
        if expired {
          pending.remove(at: index)
          counted += countEstimated(loss, at: now)
        } else {
          index += 1
        }
        continue
      }
      if exact || expired {
        pending.remove(at: index)
        let lost = max(0, periods - 1)
        counted += lost
      } else {
        index += 1
      }
    }
    return counted
  }

  /// The periods between the newest record before a reset and the first after it, and whether
  /// that number is certain; `nil` before a record came after the reset.
  private mutating func gap(of loss: PendingFIFOLoss) -> (periods: Int, exact: Bool)? {
    guard let after = loss.after else { return nil }
    let rawBefore = clock.bounds(loss.before.back, recordsBefore: loss.before.newest)
    let rawAfter = clock.bounds(after.back, recordsBefore: after.newest)
    let before = clock.alignedWithPhase(rawBefore) ?? rawBefore
    let first = clock.alignedWithPhase(rawAfter) ?? rawAfter
    let result = clock.periods(from: before, to: first)
    if result.isExact {
      clock.constrainPeriod(from: before, to: first, periods: result.count)
    }
    return (result.count, result.isExact)
  }

  /// Counts a pending loss with the best estimate available now.
  private mutating func countEstimated(_ loss: PendingFIFOLoss, at now: Timestamp) -> Int {
    let lost: Int
    if let (periods, _) = gap(of: loss) {
      lost = max(0, periods - 1)
    } else {
      let before = clock.bounds(loss.before.back, recordsBefore: loss.before.newest)
      let elapsed = Double(now.nanoseconds) - (before.low + before.high) / 2
      lost = max(0, Int(elapsed / clock.period))
    }
    return lost
  }
}

/// A FIFO reset whose lost samples are not counted yet: when the newest record read before it
/// and the first record after it were produced.
struct PendingFIFOLoss {
  /// A record instant kept as the bounds of a newest record then and how many records before
  /// it, so that it sharpens as the period becomes better known.
  struct Reference {
    var newest: (low: Double, high: Double)
    var back: Int
  }
  var before: Reference
  var after: Reference?
  var resetAt: Timestamp
  /// Whether the records since its reset are still being counted (no reset since).
  var isOpen: Bool
}
