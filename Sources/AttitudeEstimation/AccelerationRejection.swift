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
/// accelerating does not. A rejection lasts as long as the gyro can carry the attitude — while
/// 3σ of the horizontal bias times the time rejected stays within the tilt of the smallest
/// rejected acceleration, atan(a_low/g) — and at least the recovery time; then it switches to
/// recovery (the accelerometer is trusted again), Fusion-style, and says so (`.recovering`).
struct AccelerationRejection: Sendable {
  /// The accelerometer's weight: the inclination filter's clock runs at this rate (1: full
  /// trust, 0: stopped). Fixed for a block.
  private(set) var weight = 1.0
  /// Rejecting for longer than the gyro can carry the attitude: the accelerometer is trusted
  /// again, though the detector still sees an acceleration, until it stops seeing one.
  private(set) var isRecovering = false
  /// The specific force's slow mean (reference frame, m/s²), the detector's reference.
  private(set) var slowMean = Vector3(0, 0, 0)
  /// The detector's low-pass filter states, x and y (direct form II transposed).
  private var sustainedX = (0.0, 0.0)
  private var sustainedY = (0.0, 0.0)
  /// The same filter on the vertical deviation: with the horizontal one it says whether the
  /// reading grew longer (an acceleration began) or shorter (one the reference held ended).
  private var sustainedZ = (0.0, 0.0)
  /// Corrections applied recently (leaky), radians about the reference x and y axes: turned
  /// back when a sustained acceleration is detected.
  private(set) var recentCorrectionX: Double = 0
  private(set) var recentCorrectionY: Double = 0
  /// Blocks rejected, counted down by `recoveryRatio` per block accepted.
  private var rejectionBlocks: Int = 0
  /// Whether a rejection (or the recovery from one) is under way: it is followed to its end
  /// even when the bias's uncertainty no longer allows a rejection to start.
  var isActive: Bool { rejectionBlocks > 0 }
  private var wasRejecting = false
  /// Over the current rejection: the sums of the squared horizontal deviation and of the
  /// reading's lengthening, (m/s²)² (see `update`).
  private var turnedSum: Double = 0
  private var lengthenedSum: Double = 0
  /// The blocks a rejection lasts before its reading is judged turned or lengthened (2 s).
  private var turnCheckBlocks: Int = 20
  /// The previous block stopped the filter (weight 0).
  private var wasStopped = false

  // Coefficients (set for the block period).
  private var detectorLowPass = LowPassCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)
  private var slowMeanGain: Double = 0
  /// The recent corrections' retention per block: a memory of 4 detector time constants,
  /// which covers a 2 s ramp and the detector's lag behind it.
  private var recentRetention: Double = 1
  private var blockPeriod: Double = 0.1
  private let recoveryRatio: Int
  private let detectorTimeConstantSeconds: Double
  private let referenceTimeConstantSeconds: Double
  private let recoverySeconds: Double
  // The thresholds' squares, m²/s⁴, and what follows from them (`setThresholds`).
  private var lowSquared: Double = 0
  private var highSquared: Double = 0
  /// 1 / (high² − low²); zero when rejection is switched off.
  private var slope: Double = 0
  /// atan(a_low/g), radians: the tilt the smallest rejected acceleration would cause, and so
  /// the most the gyro may drift while a rejection lasts (3σ of the horizontal bias × the time
  /// rejected, `update`), and the most the bias may tilt the estimate before a rejection may
  /// start (3σ × T_recovery, `gyroCanCarry`).
  private var tiltBudget: Double = 0

  init(settings r: AttitudeEstimator.AccelerationRejectionSettings, gravity: Double) {
    recoveryRatio = r.recoveryRatio
    detectorTimeConstantSeconds = r.detectorTimeConstantSeconds
    referenceTimeConstantSeconds = r.referenceTimeConstantSeconds
    recoverySeconds = r.recoverySeconds
    setThresholds(r, gravity: gravity)
  }

  /// Whether rejection is switched on.
  var isEnabled: Bool { slope > 0 }

  /// Takes `r`'s switch and thresholds (at start, or a retune between two samples). Switched
  /// off, a rejection or recovery under way ends at once and the detector starts afresh (`reset`:
  /// switched on again later, it starts from zero, not from the stale states it stopped with);
  /// the slow mean and the recent corrections keep following the blocks meanwhile. New
  /// thresholds apply from the next block's weight; a rejection under way goes on with them
  /// (its duration, bounded by atan(a_low/g), with the new lower threshold).
  mutating func setThresholds(
    _ r: AttitudeEstimator.AccelerationRejectionSettings, gravity: Double
  ) {
    let wasEnabled = isEnabled
    lowSquared = r.lowerThresholdMetersPerSecondSquared * r.lowerThresholdMetersPerSecondSquared
    highSquared = r.upperThresholdMetersPerSecondSquared * r.upperThresholdMetersPerSecondSquared
    slope = r.isEnabled ? 1 / max(highSquared - lowSquared, 1e-12) : 0
    tiltBudget = atan(r.lowerThresholdMetersPerSecondSquared / gravity)
    if wasEnabled && !isEnabled { reset() }
  }

  /// Sets the coefficients for blocks of `blockPeriod` seconds.
  mutating func setBlockPeriod(_ blockPeriod: Double) {
    detectorLowPass = .butterworth(
      timeConstantSeconds: detectorTimeConstantSeconds, periodSeconds: blockPeriod)
    slowMeanGain = blockPeriod / referenceTimeConstantSeconds
    recentRetention = 1 - blockPeriod / (4 * detectorTimeConstantSeconds)
    self.blockPeriod = blockPeriod
    turnCheckBlocks = max(1, Int((2 / blockPeriod).rounded()))
  }

  /// Whether a rejection may start: the bias's uncertainty now must allow at least the
  /// shortest rejection, the recovery time — a gyro whose bias is known to σ drifts by up to
  /// 3σ·T_recovery, which must stay within the tilt the smallest rejected acceleration would
  /// cause (atan(a_low/g): 8.7° at the default 1.5 m/s²), i.e. σ_h < 0.29 °/s with the
  /// defaults. The rejection then lasts as long as the uncertainty allows (`update`): 40 s and
  /// more with a calibration file's bias (σ ≈ 0.05 °/s), a minute after a rest.
  ///
  /// Why not a shorter rejection for a less known bias (the allowed time, atan(a_low/g)/3σ_h,
  /// is 0.4 s at an uncalibrated gyro's σ = 6.7 °/s per axis)? Such a bias tilts the estimate by
  /// up to 3σ_h·τ, which is more than the detector's lower threshold once the allowed time is
  /// shorter than τ, and the detector takes the bias's tilt, turning with the body, for a
  /// sustained acceleration; rejected, the bias carries the attitude away and the motion-bias
  /// estimation (which takes only blocks at full weight) is left without measurements. A
  /// rejection shorter than the recovery time, even where the bias allows it, was measured to
  /// be worse than none: BROAD's trials started in motion (`plumb-broad --start-in-motion`)
  /// gave 0.889° with this gate, 0.994° with a 6 s one and 1.129° with a 3 s one (the bias being
  /// learnt in motion meanwhile). So an uncalibrated gyro before its first rest trusts the
  /// accelerometer, and says nothing: there is no rejection to give up. Only the bias's
  /// horizontal part tilts the estimate: the variance counted is that of the two horizontal
  /// directions together (`GyroBiasEstimator.horizontalVariance`), so a vertical bias nothing
  /// observes during a long level drive does not switch the rejection off. (A bias that is
  /// wrong but claims to be known is caught by what its tilt does to the reading — turned, not
  /// lengthened: `update` — not here: the motion's evidence against the bias, tried here too,
  /// also grew with a car's real accelerations before each rejection and kept them from being
  /// rejected, `plumb-hil run car --unit noisy` 2.1° → 3.1° RMS.)
  @inline(__always)
  func gyroCanCarry(horizontalBiasVariance horizontal: Double) -> Bool {
    9 * horizontal * recoverySeconds * recoverySeconds <= tiltBudget * tiltBudget
  }

  /// Decides this block's weight from its mean horizontal specific force (reference frame);
  /// returns whether a rejection starts here or first stops the filter, whose recent
  /// corrections must be turned back (`undoRecentCorrections`).
  ///
  /// A rejection lasts as long as the gyro can carry the attitude: while 3σ of the horizontal
  /// bias (now: it grows with the random walk while rejecting, and nothing measures it) times
  /// the time rejected, at least the recovery time, stays within the smallest rejected
  /// acceleration's tilt (atan(a_low/g)). With a bias a rest measured (σ ≈ 0.01 °/s) that is
  /// about a minute; then recovery, flagged. A rejection under way when the uncertainty no
  /// longer allows the recovery time (it grew) recovers at once. The time counts rejected
  /// blocks up and trusted ones down `recoveryRatio` times faster.
  ///
  /// The onset's corrections are turned back twice: when the weight first falls below 1 (the
  /// last ~4 s of corrections, leaky) and again when it first reaches 0 (those made at partial
  /// weight since). Without the second, the filter's memory of the partial-weight blocks
  /// stayed in the estimate for the whole rejection and was replayed when it ended
  /// (`plumb-hil run long-push --unit noisy`: 1.05° while held, 2.3° as the push ended;
  /// with it 0.6° and 0.7°, and 0.43° and 0.49° with the memory lengthened from 2 s to 4 s).
  mutating func update(meanForce f: Vector3, horizontalBiasVariance horizontal: Double) -> Bool {
    let c = detectorLowPass
    let ux = f.x - slowMean.x
    let uy = f.y - slowMean.y
    let uz = f.z - slowMean.z
    let ax = ux * c.b0 + sustainedX.0
    sustainedX = (ux * c.b1 - ax * c.a1 + sustainedX.1, ux * c.b2 - ax * c.a2)
    let ay = uy * c.b0 + sustainedY.0
    sustainedY = (uy * c.b1 - ay * c.a1 + sustainedY.1, uy * c.b2 - ay * c.a2)
    let az = uz * c.b0 + sustainedZ.0
    sustainedZ = (uz * c.b1 - az * c.a1 + sustainedZ.1, uz * c.b2 - az * c.a2)
    let v2 = ax * ax + ay * ay
    var w = 1.0
    if v2 > lowSquared { w = max(0, (highSquared - v2) * slope) }
    // How much longer the reading got, |s + d|² − |s|² = 2 s·d + |d|², with d the filtered
    // deviation. An acceleration added across gravity lengthens it by its square (v2); a
    // reading that only turned — the estimate tilted, by a bias it got wrong, not the body
    // accelerating — keeps its length.
    let lengthening = 2 * (slowMean.x * ax + slowMean.y * ay + slowMean.z * az) + v2 + az * az
    if w < 1 && rejectionBlocks == 0 {
      turnedSum = 0
      lengthenedSum = 0
      if lengthening < 0 {
        // Shorter than the reference: the reference held an acceleration (taken for gravity:
        // a recovery, or a start or rest while accelerating) that has now ended.
        isRecovering = true
      } else if lengthening < 0.5 * v2 {
        // Turned, not lengthened: a tilt error, which the accelerometer must correct (and the
        // motion's evidence against the bias see), not an acceleration to reject.
        w = 1
      }
    }
    if w < 1 {
      // Over the rejection (a vertical shake moves the lengthening both ways, and averages
      // out): a reading that turned by more than it lengthened is the estimate tilting, and
      // the gyro, which tilted it, cannot carry the attitude: recovery.
      turnedSum += v2
      lengthenedSum += lengthening
      if rejectionBlocks >= turnCheckBlocks && lengthenedSum < 0.5 * turnedSum {
        isRecovering = true
      }
      rejectionBlocks += 1
      let t = Double(rejectionBlocks) * blockPeriod
      let carried = max(t, recoverySeconds)
      if 9 * horizontal * carried * carried > tiltBudget * tiltBudget {
        isRecovering = true
      }
    } else if rejectionBlocks > 0 {
      rejectionBlocks = max(0, rejectionBlocks - recoveryRatio)
      if rejectionBlocks == 0 { isRecovering = false }
    }
    if isRecovering { w = 1 }
    // A rejection starts, or stops the filter for the first time.
    let starts = (w < 1 && !wasRejecting) || (w == 0 && !wasStopped)
    wasRejecting = w < 1
    wasStopped = w == 0
    weight = w
    return starts
  }

  /// The accelerometer trusted for this block (rest, start-up, no reading, a bias too
  /// uncertain for the gyro to carry the attitude). Trusted, it is not recovering from a
  /// rejection either: a recovery left standing would keep the blocks from teaching the bias —
  /// and when the bias itself tilted the estimate (a wrong bias, re-opened), the detector sees
  /// that tilt as an acceleration that never ends, and nothing would ever correct it.
  mutating func trust() {
    weight = 1
    if isRecovering {
      isRecovering = false
      rejectionBlocks = 0
    }
  }

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
    sustainedZ = (0, 0)
  }

  /// Starts afresh after a reacquisition: `restart`, and no onset or recent corrections either.
  mutating func reset() {
    restart()
    wasRejecting = false
    wasStopped = false
    recentCorrectionX = 0
    recentCorrectionY = 0
  }
}
