/// Tracks the true sample period from sample timestamps, finds gaps, counts missed samples and
/// hands the filter the real interval to integrate over.
///
/// The MPU-6050's sample clock is its own internal oscillator, accurate only to a few percent,
/// and the host stamps each data-ready edge with some jitter; a busy host can also miss edges.
/// Integrating every sample over the *nominal* interval then loses angle: seed 000's 90 °/s turn
/// with 1 ms jitter and three dropped samples lost 2.7° that way. So:
///
/// - **The integration interval is the real one**: the time since the previous accepted sample,
///   whatever it is (limited to `maximumIntegrationIntervalSeconds`).
/// - **The period estimate is jitter-gated**, as Linux IIO's `inv_sensors_timestamp` does: an
///   interval within ±`jitterTolerance` of the current estimate is averaged into it; others (gaps,
///   doubled edges) are not. If the estimate is lost — `reacquisitionSamples` consecutive
///   intervals outside the window that agree with each other, with no in-window interval
///   between them — it is re-acquired from them. Isolated gaps, however many, never are.
/// - **A gap** is an interval longer than `gapFactor` (1.5) × the period; it missed
///   `round(interval / period) − 1` samples.
/// - **A timestamp that does not increase is rejected**, flagged, and never integrated; the
///   next sample is measured from the last accepted one.
///
/// Time enters only as timestamps and counts: no clock is read, so the result is bit-for-bit
/// repeatable.
public struct SampleClock: Hashable, Sendable {
  /// How the clock judges intervals. Defaults suit a 100 Hz MPU-6050 read on its data-ready
  /// interrupt.
  public struct Settings: Hashable, Sendable {
    /// The expected sample period, seconds, or `nil` to learn it from the first interval (for
    /// recordings of unknown rate). Default 0.01 s: 100 Hz, the 1 kHz gyro output rate with
    /// the DLPF on divided by 1 + SMPLRT_DIV = 10 (RM §4.2).
    public var nominalPeriodSeconds: Double?
    /// Half-width of the acceptance window around the current period estimate, as a fraction.
    /// Default 0.25: wide enough for the internal oscillator's few-percent error plus edge
    /// jitter of a couple of milliseconds at 100 Hz, narrow enough to refuse a single missed
    /// sample (2×) or a doubled edge (0.5×).
    public var jitterTolerance: Double
    /// An interval longer than this many periods is a gap. Default 1.5 (seed 000).
    public var gapFactor: Double
    /// Accepted intervals are averaged over about this many samples (a running mean at first,
    /// then an exponential window of this length). Default 64: the estimate's noise is the
    /// interval jitter divided by about 8.
    public var averagingSamples: Int
    /// After this many consecutive out-of-window intervals that agree with each other, the
    /// period is re-acquired from them (a rate change, or a wrong nominal period). Default 16.
    public var reacquisitionSamples: Int
    /// The longest interval integrated, seconds. Longer gaps (a suspended host, a bus that stays
    /// stuck) are integrated over this much only: the rate after them is no guide to minutes
    /// before. Default 3 s, so that a driver's recovery of a few seconds is integrated whole: a
    /// shorter cap loses the rate × (gap − cap) of heading for good when the board turns
    /// steadily through a bus lock-up. The cap shortens only the integration: the gap is still
    /// a gap of its real length — its missed samples counted from it, and in
    /// `AttitudeEstimator` the bias's random walk over all of it and the heading flagged
    /// (`AttitudeEstimator.GapSettings`).
    public var maximumIntegrationIntervalSeconds: Double

    public init(
      nominalPeriodSeconds: Double? = 0.01, jitterTolerance: Double = 0.25,
      gapFactor: Double = 1.5, averagingSamples: Int = 64, reacquisitionSamples: Int = 16,
      maximumIntegrationIntervalSeconds: Double = 3
    ) {
      self.nominalPeriodSeconds = nominalPeriodSeconds
      self.jitterTolerance = jitterTolerance
      self.gapFactor = gapFactor
      self.averagingSamples = averagingSamples
      self.reacquisitionSamples = reacquisitionSamples
      self.maximumIntegrationIntervalSeconds = maximumIntegrationIntervalSeconds
    }

    /// 100 Hz, ±25 % window, gaps at 1.5 periods.
    public static let `default` = Settings()

    /// What is wrong with these settings, or `nil` when they are usable.
    public var problem: String? {
      if let p = nominalPeriodSeconds, !(p > 0 && p.isFinite) {
        return "nominalPeriodSeconds must be a positive number of seconds (got \(p))"
      }
      if !(jitterTolerance > 0 && jitterTolerance < 0.5) {
        return "jitterTolerance must be between 0 and 0.5 (got \(jitterTolerance))"
      }
      if !(gapFactor > 1 + jitterTolerance) {
        return "gapFactor must exceed 1 + jitterTolerance (got \(gapFactor))"
      }
      if averagingSamples < 1 { return "averagingSamples must be at least 1" }
      if reacquisitionSamples < 2 { return "reacquisitionSamples must be at least 2" }
      if !(maximumIntegrationIntervalSeconds > 0) {
        return "maximumIntegrationIntervalSeconds must be positive"
      }
      return nil
    }
  }

  /// What the clock concluded about one timestamp.
  public struct Step: Hashable, Sendable {
    /// The interval to integrate this sample over, seconds: the real time since the previous
    /// accepted sample, limited to the maximum; 0 for the first sample and for a rejected one.
    public var intervalSeconds: Double
    /// Samples missing immediately before this one.
    public var missedSamples: Int
    /// The interval exceeded `gapFactor` periods.
    public var isGap: Bool
    /// The timestamp did not increase; the sample must not be integrated.
    public var isRejected: Bool
    /// The first sample seen: it defines the start, there is nothing to integrate.
    public var isFirst: Bool
  }

  public let settings: Settings

  /// The current estimate of the true sample period, nanoseconds (0 until known).
  public private(set) var periodNanoseconds: Double
  /// Accepted intervals averaged so far (saturates at `averagingSamples`).
  public private(set) var averagedCount: Int
  /// The last accepted timestamp (meaningful once a sample has been seen).
  public private(set) var lastTimestamp: Int64
  private var hasStarted: Bool
  private var averagingGain: Double
  private var windowHalfWidth: Double
  private var gapThreshold: Double
  /// The longest interval the inlined path takes: below the gap threshold and the longest
  /// interval integrated, nanoseconds.
  private var fastLimit: Double
  /// `fastLimit` once the period estimate has started and its averaging window is full (its
  /// gain no longer changes), −∞ before: the longest interval `steadyInterval` takes.
  private var steadyLimit: Double
  /// Samples counted missing since the start.
  public private(set) var totalMissedSamples: Int
  /// Gaps seen since the start.
  public private(set) var gapCount: Int
  /// Non-increasing timestamps rejected since the start.
  public private(set) var rejectedCount: Int
  /// Times the period was re-acquired.
  public private(set) var reacquisitionCount: Int

  private var streakCount: Int
  private var streakMeanNanoseconds: Double
  private let maximumIntervalNanoseconds: Int64

  public init(settings: Settings = .default) {
    self.settings = settings
    periodNanoseconds = (settings.nominalPeriodSeconds ?? 0) * 1e9
    averagedCount = 0
    lastTimestamp = 0
    hasStarted = false
    averagingGain = 1
    windowHalfWidth = 0
    gapThreshold = .infinity
    totalMissedSamples = 0
    gapCount = 0
    rejectedCount = 0
    reacquisitionCount = 0
    streakCount = 0
    streakMeanNanoseconds = 0
    maximumIntervalNanoseconds = Int64(settings.maximumIntegrationIntervalSeconds * 1e9)
    windowHalfWidth = settings.jitterTolerance * periodNanoseconds
    gapThreshold = periodNanoseconds > 0 ? settings.gapFactor * periodNanoseconds : .infinity
    fastLimit = 0
    steadyLimit = -.infinity
    updateFastLimit()
  }

  /// The current period estimate, seconds (0 until known).
  @inlinable
  public var periodSeconds: Double { periodNanoseconds * 1e-9 }

  /// Takes the next sample's timestamp.
  @inline(__always)
  public mutating func advance(toNanoseconds timestamp: Int64) -> Step {
    let interval = timestamp &- lastTimestamp
    let iv = Double(interval)
    let period = periodNanoseconds
    // The common case, inlined: an interval inside the jitter window that is no gap and is
    // integrated whole. Everything else takes `unusualAdvance`.
    if abs(iv - period) <= windowHalfWidth && iv <= fastLimit && hasStarted {
      lastTimestamp = timestamp
      // Averaged in: a running mean, then an exponential window.
      periodNanoseconds = period + (iv - period) * averagingGain
      if averagedCount < settings.averagingSamples { countAccepted() }
      // The estimate holds: any out-of-window intervals before were isolated (see below).
      streakCount = 0
      return Step(
        intervalSeconds: iv * 1e-9, missedSamples: 0, isGap: false, isRejected: false,
        isFirst: false)
    }
    return unusualAdvance(timestamp)
  }

  /// The common case of `advance` once the estimate has settled, in two halves so that the
  /// caller can decide between them before anything changes: for an interval inside the
  /// jitter window that is no gap and is integrated whole, the interval and the period
  /// estimate after it, nanoseconds; `nil` for anything else (then call `advance`). Changes
  /// nothing.
  @inline(__always)
  func steadyInterval(toNanoseconds timestamp: Int64) -> (
    intervalNanoseconds: Double, periodNanoseconds: Double
  )? {
    let iv = Double(timestamp &- lastTimestamp)
    let period = periodNanoseconds
    guard abs(iv - period) <= windowHalfWidth && iv <= steadyLimit else { return nil }
    return (iv, period + (iv - period) * averagingGain)
  }

  /// Takes a timestamp that `steadyInterval` accepted, with the period it returned: exactly
  /// what `advance` would have done.
  @inline(__always)
  mutating func acceptSteady(_ timestamp: Int64, periodNanoseconds period: Double) {
    lastTimestamp = timestamp
    periodNanoseconds = period
    streakCount = 0
  }

  /// Any interval outside the jitter window: the first sample, a non-increasing timestamp,
  /// a gap, a doubled edge, a changed rate.
  @inline(never)
  private mutating func unusualAdvance(_ timestamp: Int64) -> Step {
    let interval = timestamp &- lastTimestamp
    if interval <= 0 || !hasStarted { return unusual(timestamp) }
    lastTimestamp = timestamp
    let iv = Double(interval)
    let period = periodNanoseconds
    if abs(iv - period) <= windowHalfWidth {
      periodNanoseconds = period + (iv - period) * averagingGain
      if averagedCount < settings.averagingSamples { countAccepted() }
      // The estimate holds: out-of-window intervals before this one were isolated events
      // (gaps, doubled edges), not a new rate, so they never add up to a re-acquisition.
      streakCount = 0
    } else {
      outsideWindow(iv)
    }
    var missed = 0
    var isGap = false
    if iv > gapThreshold {
      isGap = true
      missed = Int((iv / periodNanoseconds).rounded()) - 1
      gapCount += 1
      totalMissedSamples += missed
    }
    let integrated = interval <= maximumIntervalNanoseconds ? interval : maximumIntervalNanoseconds
    return Step(
      intervalSeconds: Double(integrated) * 1e-9, missedSamples: missed, isGap: isGap,
      isRejected: false, isFirst: false)
  }

  /// The first timestamp, or one that does not increase.
  private mutating func unusual(_ timestamp: Int64) -> Step {
    if !hasStarted {
      hasStarted = true
      lastTimestamp = timestamp
      updateFastLimit()
      return Step(
        intervalSeconds: 0, missedSamples: 0, isGap: false, isRejected: false, isFirst: true)
    }
    rejectedCount += 1
    return Step(
      intervalSeconds: 0, missedSamples: 0, isGap: false, isRejected: true, isFirst: false)
  }

  @inline(never)
  private mutating func countAccepted() {
    averagedCount += 1
    averagingGain = 1 / Double(averagedCount + 1)
    if averagedCount >= settings.averagingSamples {
      averagingGain = 1 / Double(settings.averagingSamples)
    }
    updateWindow()
  }

  private mutating func updateWindow() {
    windowHalfWidth = settings.jitterTolerance * periodNanoseconds
    gapThreshold = settings.gapFactor * periodNanoseconds
    updateFastLimit()
  }

  private mutating func updateFastLimit() {
    fastLimit = min(gapThreshold, Double(maximumIntervalNanoseconds))
    steadyLimit =
      hasStarted && averagedCount >= settings.averagingSamples ? fastLimit : -.infinity
  }

  /// An interval outside the window: the first one when the period is unknown, a gap, a doubled
  /// edge, or the start of a new rate.
  private mutating func outsideWindow(_ iv: Double) {
    if periodNanoseconds <= 0 {
      periodNanoseconds = iv
      averagedCount = 1
      averagingGain = 0.5
      updateWindow()
      return
    }
    trackStreak(iv)
    updateWindow()
  }

  /// Out-of-window intervals that agree with each other for long enough replace the estimate.
  private mutating func trackStreak(_ iv: Double) {
    if streakCount > 0,
      abs(iv - streakMeanNanoseconds) > settings.jitterTolerance * streakMeanNanoseconds
    {
      streakCount = 0
    }
    streakCount += 1
    streakMeanNanoseconds += (iv - streakMeanNanoseconds) / Double(streakCount)
    if streakCount >= settings.reacquisitionSamples {
      periodNanoseconds = streakMeanNanoseconds
      averagedCount = min(streakCount, settings.averagingSamples)
      averagingGain = 1 / Double(averagedCount + 1)
      reacquisitionCount += 1
      streakCount = 0
    }
  }
}
