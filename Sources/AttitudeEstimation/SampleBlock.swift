import Geometry

/// The block of samples (0.2 s) over which the inclination filter and the housekeeping run
/// once: owns the block's sums — the specific force mapped into the reference frame, the time
/// it stands for, the correction applied and the correction accrued in the attitude.
///
/// The per-sample path only adds to these; `AttitudeEstimator` reads them at the block's end
/// and resets them.
struct SampleBlock: Sendable {
  /// Housekeeping runs once per block of about this length, seconds. 0.2 s: the filters it
  /// runs have time constants of seconds (the inclination filter's τ = 3 s, the motion-bias
  /// row filters', the rejection detector's), so five updates a second lose nothing they could
  /// see, at half the block work of 0.1 s blocks (issue 23: about 60 instructions per update;
  /// BROAD's dev mean 0.7342° / 2.3722° at 0.1 s, 0.7351° / 2.3730° at 0.2 s).
  static let nominalSeconds = 0.2

  /// The block's length in samples (at the current period estimate).
  private(set) var limit: Int = 1
  /// Samples taken in the block.
  private(set) var samples: Int = 0
  /// The block's duration so far, seconds.
  private(set) var seconds: Double = 0
  /// Sum of the specific forces mapped into the reference frame, m/s² (clipped samples left
  /// out).
  private(set) var force = Vector3(0, 0, 0)
  /// Clipped samples in the block (their specific force is not used).
  private(set) var clippedSamples: Int = 0
  /// The block's time the accelerometer did not observe: clipped samples' intervals, and a
  /// gap's beyond the sample after it (whose reading stands for one period, not for the gap).
  private(set) var unobservedSeconds: Double = 0
  /// The correction applied to the attitude in this block, radians about the reference x and y
  /// axes.
  private(set) var correctionX: Double = 0
  private(set) var correctionY: Double = 0
  /// The time over which the correction accrued in this block (samples propagated), seconds,
  /// and its sum over the block's summed specific forces (each was mapped with the correction
  /// accrued by then).
  private(set) var accruedSeconds: Double = 0
  private(set) var accruedSecondsSum: Double = 0

  /// The block's samples whose specific force is summed.
  var forceSamples: Int { samples - clippedSamples }
  /// The time the block's readings stand for, seconds (the inclination filter's step).
  var filterSeconds: Double { seconds - unobservedSeconds }
  /// Whether the block is complete.
  var isFull: Bool { samples >= limit }
  /// Whether the next sample completes the block.
  var nextSampleCompletes: Bool { samples &+ 1 >= limit }

  /// Sets the block's length for a sample period of `period` seconds; returns the block's
  /// period, seconds.
  mutating func setLength(samplePeriod period: Double) -> Double {
    limit = max(1, Int((Self.nominalSeconds / period).rounded()))
    return Double(limit) * period
  }

  /// The correction accrued in the attitude for `dt` more seconds (a sample propagated).
  @inline(__always)
  mutating func accrue(_ dt: Double) { accruedSeconds += dt }

  /// One sample's specific force, mapped into the reference frame.
  @inline(__always)
  mutating func add(force x: Vector3) {
    force = Vector3(force.x + x.x, force.y + x.y, force.z + x.z)
    accruedSecondsSum += accruedSeconds
  }

  /// One clipped sample of `dt` seconds: its reading is not used.
  @inline(__always)
  mutating func addClipped(interval dt: Double) {
    clippedSamples &+= 1
    unobservedSeconds += dt
  }

  /// Counts one sample of `dt` seconds.
  @inline(__always)
  mutating func count(interval dt: Double) {
    seconds += dt
    samples &+= 1
  }

  /// `seconds` of the block the accelerometer did not observe (a gap).
  mutating func addUnobserved(_ seconds: Double) { unobservedSeconds += seconds }

  /// Counts a correction δ = (dx, dy, 0) applied in the block.
  mutating func addCorrection(_ dx: Double, _ dy: Double) {
    correctionX += dx
    correctionY += dy
  }

  /// The time the correction accrued over so far, seconds, and starts it again from zero.
  mutating func takeAccruedSeconds() -> Double {
    let seconds = accruedSeconds
    guard seconds > 0 else { return seconds }
    accruedSeconds = 0
    accruedSecondsSum = 0
    return seconds
  }

  /// Empties the block.
  mutating func reset() {
    correctionX = 0
    correctionY = 0
    force = Vector3(0, 0, 0)
    clippedSamples = 0
    unobservedSeconds = 0
    seconds = 0
    samples = 0
    accruedSeconds = 0
    accruedSecondsSum = 0
  }
}
