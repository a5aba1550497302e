import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Acceleration rejection (adaptive gain), once per block: owns the sustained-acceleration
/// detector, the accelerometer's weight it decides, the recovery from a rejection that lasts
/// too long, and the recent corrections a rejection's onset turns back.
///
/// A *sustained* horizontal acceleration — the block's mean specific force against its slow
/// mean (reference frame), low-pass filtered with a one-second time constant — slows the
/// inclination filter's clock down to a stop (`weight` from 1 to 0 between the lower and upper
/// thresholds). A hand's back-and-forth accelerations mostly cancel in it; a push or a vehicle
/// accelerating does not. Rejecting for longer than the recovery time switches to recovery
/// (the accelerometer is trusted again), Fusion-style.
struct AccelerationRejection: Sendable {
  /// The accelerometer's weight: the inclination filter's clock runs at this rate (1: full
  /// trust, 0: stopped). Fixed for a block.
  private(set) var weight = 1.0
  /// Rejecting for longer than the recovery time: the accelerometer is trusted again.
  private(set) var isRecovering = false
  /// The specific force's slow mean (reference frame, m/s²), the detector's reference.
  private(set) var slowMean = Vector3(0, 0, 0)
  /// The detector's low-pass filter states, x and y (direct form II transposed).
  private var sustainedX = (0.0, 0.0)
  private var sustainedY = (0.0, 0.0)
  /// Corrections applied recently (leaky), radians about the reference x and y axes: turned
  /// back when a sustained acceleration is detected.
  private var recentCorrectionX: Double = 0
  private var recentCorrectionY: Double = 0
  /// Blocks rejected, counted down by `recoveryRatio` per block accepted.
  private var rejectionBlocks: Int = 0
  private var wasRejecting = false

  // Coefficients (set for the block period).
  private var detectorLowPass = LowPassCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)
  private var slowMeanGain: Double = 0
  private var recentRetention: Double = 1
  private var recoveryBlocks: Int = 1
  private var blockPeriod: Double = 0.1
  private let recoveryRatio: Int
  private let detectorTimeConstantSeconds: Double
  private let referenceTimeConstantSeconds: Double
  private let recoverySeconds: Double
  private let lowSquared: Double
  private let highSquared: Double
  /// 1 / (high² − low²); zero when rejection is switched off.
  private let slope: Double
  /// (atan(a_low/g) / T_recovery)²: the bias variance (times 9, for 3σ) up to which the gyro can
  /// carry the attitude through a rejection (`gyroCanCarry`).
  private let biasVarianceLimit: Double

  init(settings r: AttitudeEstimator.AccelerationRejectionSettings, gravity: Double) {
    recoveryRatio = r.recoveryRatio
    detectorTimeConstantSeconds = r.detectorTimeConstantSeconds
    referenceTimeConstantSeconds = r.referenceTimeConstantSeconds
    recoverySeconds = r.recoverySeconds
    lowSquared = r.lowerThresholdMetersPerSecondSquared * r.lowerThresholdMetersPerSecondSquared
    highSquared = r.upperThresholdMetersPerSecondSquared * r.upperThresholdMetersPerSecondSquared
    slope = r.isEnabled ? 1 / max(highSquared - lowSquared, 1e-12) : 0
    let carry =
      atan(r.lowerThresholdMetersPerSecondSquared / gravity) / max(r.recoverySeconds, 1e-9)
    biasVarianceLimit = carry * carry
  }

  /// Whether rejection is switched on.
  var isEnabled: Bool { slope > 0 }

  /// Sets the coefficients for blocks of `blockPeriod` seconds.
  mutating func setBlockPeriod(_ blockPeriod: Double) {
    detectorLowPass = .butterworth(
      timeConstantSeconds: detectorTimeConstantSeconds, periodSeconds: blockPeriod)
    slowMeanGain = blockPeriod / referenceTimeConstantSeconds
    recentRetention = 1 - blockPeriod / (2 * detectorTimeConstantSeconds)
    recoveryBlocks = max(1, Int((recoverySeconds / blockPeriod).rounded()))
    self.blockPeriod = blockPeriod
  }

  /// Whether rejecting the accelerometer is worth it: over the longest rejection (the recovery
  /// time) a gyro whose bias is known to σ drifts by up to 3σ·T_recovery; rejecting pays only
  /// when that is less than the tilt the smallest rejected acceleration would cause
  /// (atan(a_low/g): 8.7° at the default 1.5 m/s²), i.e. while σ < 0.29 °/s with the defaults.
  /// An uncalibrated gyro before its first rest (σ = 6.7 °/s by default) does not qualify:
  /// its bias tilts the estimate by several degrees a second, which the detector would take
  /// for a sustained acceleration and reject — leaving the gyro's bias to carry the attitude
  /// away and the motion-bias estimation without measurements. Until the bias is known well
  /// enough (a rest, the motion-bias estimation, or a calibration file), the accelerometer is
  /// always trusted. Only the bias's horizontal part tilts the estimate: the variance counted is
  /// that of the two horizontal directions together (the trace less the vertical's, with the
  /// per-axis variances), so a vertical bias nothing observes during a long level drive does
  /// not switch the rejection off.
  @inline(__always)
  func gyroCanCarry(horizontalBiasVariance horizontal: Double) -> Bool {
    9 * horizontal <= biasVarianceLimit
  }

  /// The variance of the bias's horizontal part: the trace less the vertical's, with the
  /// per-axis variances (rad²/s²).
  @inline(__always)
  static func horizontalVariance(_ v: Vector3, up u: Vector3) -> Double {
    v.x + v.y + v.z - (v.x * u.x * u.x + v.y * u.y * u.y + v.z * u.z * u.z)
  }

  /// Decides this block's weight from its mean horizontal specific force (reference frame);
  /// returns whether a rejection starts here, whose recent corrections must be turned back
  /// (`undoRecentCorrections`).
  ///
  /// A rejection lasts as long as the gyro can carry the attitude: while 3σ of the horizontal
  /// bias times the time rejected stays within the smallest rejected acceleration's tilt
  /// (atan(a_low/g)) — never shorter than the recovery time. With a bias a rest measured
  /// (σ ≈ 0.01 °/s) that is minutes; then recovery, flagged.
  mutating func update(
    meanForceX: Double, meanForceY: Double, horizontalBiasVariance horizontal: Double
  ) -> Bool {
    let c = detectorLowPass
    let ux = meanForceX - slowMean.x
    let uy = meanForceY - slowMean.y
    let ax = ux * c.b0 + sustainedX.0
    sustainedX = (ux * c.b1 - ax * c.a1 + sustainedX.1, ux * c.b2 - ax * c.a2)
    let ay = uy * c.b0 + sustainedY.0
    sustainedY = (uy * c.b1 - ay * c.a1 + sustainedY.1, uy * c.b2 - ay * c.a2)
    let v2 = ax * ax + ay * ay
    var w = 1.0
    if v2 > lowSquared { w = max(0, (highSquared - v2) * slope) }
    if w < 1 {
      rejectionBlocks += 1
      let t = Double(rejectionBlocks) * blockPeriod
      if rejectionBlocks >= recoveryBlocks
        && 9 * horizontal * t * t > biasVarianceLimit * recoverySeconds * recoverySeconds
      {
        isRecovering = true
      }
    } else if rejectionBlocks > 0 {
      rejectionBlocks = max(0, rejectionBlocks - recoveryRatio)
      if rejectionBlocks == 0 { isRecovering = false }
    }
    if isRecovering { w = 1 }
    let starts = w < 1 && !wasRejecting
    wasRejecting = w < 1
    weight = w
    return starts
  }

  /// The accelerometer trusted for this block (rest, start-up, no reading, a bias too
  /// uncertain for the gyro to carry the attitude).
  mutating func trust() { weight = 1 }

  /// The slow mean follows the block's mean specific force at the block's weight.
  @inline(__always)
  mutating func followMean(_ force: Vector3, weight w: Double) {
    let gain = slowMeanGain * w
    slowMean = Vector3(
      slowMean.x + (force.x - slowMean.x) * gain, slowMean.y + (force.y - slowMean.y) * gain,
      slowMean.z + (force.z - slowMean.z) * gain)
  }

  /// The block's corrections, δ = (dx, dy, 0) about reference axes, turn the slow mean too and
  /// count as recent.
  @inline(__always)
  mutating func recordCorrection(_ dx: Double, _ dy: Double) {
    slowMean = rotateSmall(slowMean, dx, dy)
    recentCorrectionX = recentCorrectionX * recentRetention + dx
    recentCorrectionY = recentCorrectionY * recentRetention + dy
  }

  /// A sustained acceleration was just detected: the corrections of the last moments were its
  /// doing. Returns the rotation that turns them back (the slow mean is turned with it).
  mutating func undoRecentCorrections() -> Quaternion {
    let undo = Quaternion(rotationVector: Vector3(-recentCorrectionX, -recentCorrectionY, 0))
    recentCorrectionX = 0
    recentCorrectionY = 0
    slowMean = undo.rotate(slowMean)
    return undo
  }

  /// The reference frame turned by `d` (a large correction): the slow mean turns with it.
  mutating func rotate(by d: Quaternion) { slowMean = d.rotate(slowMean) }

  /// The tilt was restarted from a level reading of length `level`: the slow mean starts there.
  mutating func restartMean(at level: Vector3) { slowMean = level }

  /// Starts afresh after a re-anchoring at rest: no rejection, no recovery, detector at zero.
  mutating func restart() {
    rejectionBlocks = 0
    isRecovering = false
    weight = 1
    sustainedX = (0, 0)
    sustainedY = (0, 0)
  }

  /// Starts afresh after a reacquisition: `restart`, and no onset or recent corrections either.
  mutating func reset() {
    restart()
    wasRejecting = false
    recentCorrectionX = 0
    recentCorrectionY = 0
  }
}
