import HardwareAbstraction

/// The chip's sample clock as seen through FIFO drains: hard bounds on its period and on when it
/// produced the newest record, from nothing but drain times and record counts.
///
/// **Why.** When nobody reads the FIFO for longer than it holds (1024 B, 73 records of 14 B, about
/// 0.73 s at 100 Hz), the chip drops its oldest bytes and the driver must reset the FIFO. How
/// many samples were lost then follows only from time: the samples produced between the newest
/// record read before the stall and the first record after the reset. Both of those are sample
/// instants, so their distance is a whole number of periods; if both are known to a fraction of a
/// period and the period to a fraction of a period over the gap, the count is exact.
///
/// **How.** The chip produces sample k at s(k) = φ + k·P. A drain at time t that finds records
/// up to index N (after a drain at t′) tells: t′ < s(N) ≤ t, and s(N + 1) > t (with the clock
/// read just before and just after the FIFO_COUNT transfer, so the time a transfer takes on
/// the wire widens the bounds instead of breaking them). Bounds on s(N)
/// are carried from drain to drain (propagated by the new records' periods) and intersected with
/// each new constraint; bounds on P follow from an early "anchor" bound and the current one, N − Nₐ
/// periods apart. Because the loop's poll timer and the chip's oscillator are never exactly
/// commensurate (the oscillator is off by up to a few percent, PS §7.15), successive drains
/// catch the newest record at ever different delays and the bounds close in to a fraction of a
/// millisecond. (A poll timer that is an exact multiple of the chip's period would teach
/// nothing, and the count then falls back to a rounded estimate.)
///
/// Pure: no bus, no clock; the driver feeds it drains. Allocation-free.
struct FIFOClock {
  /// Bounds on the period, ns.
  private(set) var periodLow: Double
  private(set) var periodHigh: Double
  /// The index of the newest record seen, counted from the last `restartPhase`.
  private(set) var index = 0
  /// Bounds on when record `index` was produced, ns; `nil` before the first record.
  private(set) var newest: (low: Double, high: Double)?
  /// An earlier bound, for the period.
  private var anchor: (index: Int, low: Double, high: Double)?
  /// The last drain's time, ns.
  private var lastDrain: Double?
  /// Bounds on *some* sample instant, kept across FIFO resets: the chip's phase. Records of
  /// different stretches are k periods apart for an unknown k, but their instants share it.
  private(set) var phase: (low: Double, high: Double)?
  private let nominalPeriod: Double

  /// A clock for a nominal period of `nominalPeriod` ns, trusted to within ±5 %.
  init(nominalPeriod: Int64) {
    self.nominalPeriod = Double(max(1, nominalPeriod))
    periodLow = self.nominalPeriod * 0.95
    periodHigh = self.nominalPeriod * 1.05
  }

  /// The best single value for the period, ns.
  var period: Double { (periodLow + periodHigh) / 2 }

  /// The best single value for when the newest record was produced, ns.
  var newestEstimate: Double? { newest.map { ($0.low + $0.high) / 2 } }

  /// Narrows the period to `measured` ± `tolerance` (a fraction) when that is consistent.
  mutating func suggestPeriod(_ measured: Int64, tolerance: Double = 1e-4) {
    let value = Double(measured)
    let low = max(periodLow, value * (1 - tolerance))
    let high = min(periodHigh, value * (1 + tolerance))
    if low <= high {
      periodLow = low
      periodHigh = high
    }
  }

  /// Starts counting records afresh (the FIFO was reset or just enabled): the next record seen
  /// is index 1, produced after `time`. The period and the phase are kept (same oscillator,
  /// same sample clock).
  mutating func restartCount(at time: Timestamp) {
    index = 0
    newest = nil
    anchor = nil
    lastDrain = Double(time.nanoseconds)
  }

  /// Forgets the phase too (the chip was reset: its sample clock restarted).
  mutating func restartClock(at time: Timestamp) {
    restartCount(at: time)
    phase = nil
  }

  /// Narrows the period with two instants known to be `periods` apart (a gap bridged exactly).
  mutating func constrainPeriod(
    from earlier: (low: Double, high: Double), to later: (low: Double, high: Double), periods: Int
  ) {
    guard periods > 0 else { return }
    let low = max(periodLow, (later.low - earlier.high) / Double(periods))
    let high = min(periodHigh, (later.high - earlier.low) / Double(periods))
    if low <= high {
      periodLow = low
      periodHigh = high
    }
  }

  /// The bounds `interval` can be narrowed to, knowing that its instant is a whole number of
  /// periods from the phase's: `nil` when that is ambiguous (more than one candidate) or
  /// inconsistent (none).
  func alignedWithPhase(_ interval: (low: Double, high: Double))
    -> (low: Double, high: Double)?
  {
    guard let phase else { return nil }
    let guess = (((interval.low + interval.high) - (phase.low + phase.high)) / 2 / period).rounded()
    guard guess.isFinite, abs(guess) < 1e9 else { return nil }
    var found: (low: Double, high: Double)?
    var candidates = 0
    for j in (Int(guess) - 2)...(Int(guess) + 2) {
      let k = Double(j)
      let low = phase.low + k * (k >= 0 ? periodLow : periodHigh)
      let high = phase.high + k * (k >= 0 ? periodHigh : periodLow)
      let narrowedLow = max(low, interval.low)
      let narrowedHigh = min(high, interval.high)
      if narrowedLow <= narrowedHigh {
        candidates += 1
        found = (narrowedLow, narrowedHigh)
      }
    }
    return candidates == 1 ? found : nil
  }

  /// A drain found `records` new records in a FIFO_COUNT read that started after `before` and
  /// ended before `after` (the clock read around the transfer): every record counted was
  /// produced by `after`, and the next one after `before`.
  mutating func observe(records: Int, between before: Timestamp, and after: Timestamp) {
    let t = Double(after.nanoseconds)
    let start = Double(before.nanoseconds)
    defer { lastDrain = start }
    if records == 0 {
      // No new sample yet: the next one comes after the count was taken.
      if var bounds = newest {
        bounds.low = max(bounds.low, start - periodHigh)
        if bounds.low <= bounds.high {
          newest = bounds
          phase = bounds
        }
      }
      return
    }
    index += records
    // Fresh constraints: after the previous count was taken, no later than this one, and the
    // next one after this count was taken.
    var low = max(lastDrain ?? -Double.infinity, start - periodHigh)
    var high = t
    if let previous = newest {
      let propagatedLow = previous.low + Double(records) * periodLow
      let propagatedHigh = previous.high + Double(records) * periodHigh
      if max(low, propagatedLow) <= min(high, propagatedHigh) {
        low = max(low, propagatedLow)
        high = min(high, propagatedHigh)
      } else {
        // Inconsistent (a record count off, or timing jitter): start over from this drain.
        anchor = nil
      }
    }
    if let aligned = alignedWithPhase((low, high)) {
      low = aligned.low
      high = aligned.high
    }
    newest = (low, high)
    phase = (low, high)
    if let anchor, index > anchor.index {
      let span = Double(index - anchor.index)
      let candidateLow = max(periodLow, (low - anchor.high) / span)
      let candidateHigh = min(periodHigh, (high - anchor.low) / span)
      if candidateLow <= candidateHigh {
        periodLow = candidateLow
        periodHigh = candidateHigh
      } else {
        periodLow = nominalPeriod * 0.95
        periodHigh = nominalPeriod * 1.05
        self.anchor = nil
      }
    }
    // Keep the tightest bound as the anchor: it bounds the period best.
    if self.anchor == nil || (high - low) < (self.anchor!.high - self.anchor!.low) {
      self.anchor = (index, low, high)
    }
  }

  /// Bounds on when the record `back` records before the newest was produced, ns.
  func bounds(recordsBeforeNewest back: Int) -> (low: Double, high: Double)? {
    newest.map { bounds(back, recordsBefore: $0) }
  }

  /// Bounds on an instant `back` periods before one known by `reference`, with the period
  /// bounds as they are now (so a reference kept from earlier sharpens as the period does).
  func bounds(_ back: Int, recordsBefore reference: (low: Double, high: Double))
    -> (low: Double, high: Double)
  {
    (reference.low - Double(back) * periodHigh, reference.high - Double(back) * periodLow)
  }

  /// How many whole periods separate two sample instants known by their bounds: exact when
  /// the bounds allow only one number, else the rounded estimate (`isExact` false).
  func periods(from earlier: (low: Double, high: Double), to later: (low: Double, high: Double))
    -> (count: Int, isExact: Bool)
  {
    let gapLow = later.low - earlier.high
    let gapHigh = later.high - earlier.low
    let fewest = (gapLow / periodHigh).rounded(.up)
    let most = (gapHigh / periodLow).rounded(.down)
    let estimate = (((later.low + later.high) - (earlier.low + earlier.high)) / 2 / period)
      .rounded()
    guard fewest.isFinite, most.isFinite, estimate.isFinite else { return (0, false) }
    if fewest == most { return (Int(fewest), true) }
    return (Int(max(0, estimate)), false)
  }
}
