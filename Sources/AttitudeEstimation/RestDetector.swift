import Geometry

/// Decides, sample by sample, whether the body is at rest.
///
/// **Why not "small gyro".** An MPU-6050's zero-rate output may be ±20 °/s at room temperature
/// (PS §6.1) and moves with temperature, so a raw gyro magnitude compared with a small threshold
/// says "moving" forever on one unit and "still" while turning slowly on another. The test here
/// is the gyro's deviation from **its own recent mean**, which no constant offset affects, and
/// the same for the accelerometer:
///
/// 1. A sample is **quiet** when `|ω − ω̄| < gyroDeviationThreshold` and
///    `|f − f̄| < accelerationDeviationThreshold`, where ω̄ and f̄ are the means of the current
///    window (a running mean over the window's first `meanTimeConstantSeconds`, then an
///    exponential window of that time constant). A sample that is not quiet **restarts the
///    window** from itself, so a rest that follows motion is not held back by the motion's
///    memory.
/// 2. Quiet samples are counted; after `minimumDurationSeconds` of them (a sample count,
///    recomputed only when the sample period estimate changes) the window must also be
///    **stationary**: the mean rates of its three thirds agree within `stationaritySigmas`
///    standard deviations of the noise measured from successive differences. A rotation whose
///    rate drifts slowly through or near zero is quiet, but it has a trend or a curvature.
///    And **gravity must stay put**: the accelerometer's means over the first and the last third
///    must point the same way within the accelerometer's noise (`gravityTurnSigmas`) and never
///    further apart than `maximumGravityTurnRate` allows. A steady rotation about a horizontal
///    axis has a constant gyro rate (quiet and stationary) and moves the accelerometer slowly
///    enough to stay quiet, but it turns gravity in the body: 0.5 °/s over the second between
///    the thirds' middles is 0.086 m/s², eleven times the noise of the difference of two thirds'
///    means of an MPU-6050 (400 µg/√Hz, PS §6.2). Without this test such a rotation at power-on
///    was a rest, and the rest wrote the rotation into the bias with a tight uncertainty.
/// 3. **Consistency with the bias** (supplied by the caller): a steady rotation is quiet and
///    stationary too, and about the vertical the accelerometer cannot see it. So the window
///    mean must lie within `biasConsistencySigmas` standard deviations (bias uncertainty plus
///    the mean's own noise) of the bias estimate about the vertical, twice that about
///    horizontal axes. While the bias is unknown (at start-up, ±20 °/s) only faster rotations
///    are refused. A stationary window that misses by less than `maximumBiasJump` reports
///    `.inconsistent` (the caller widens the bias uncertainty: the bias may have jumped) and the
///    next such window is a rest; a bigger miss is a steady turn.
/// 4. **Rest ends on the same sample** that breaks either threshold — there is no hold-off, or
///    the estimator's heading hold would swallow the start of a real rotation — and also when,
///    during the rest, the window mean drifts away from the bias measured when it began (a slow
///    turn starting mid-rest).
public struct RestDetector: Hashable, Sendable {
  /// Thresholds and timing. The defaults are VQF's published rest-detection defaults (Laidig &
  /// Seel 2023), which were tuned on real recordings; `init(noise:samplePeriodSeconds:)` derives
  /// tighter ones from a unit's measured noise.
  public struct Settings: Hashable, Sendable {
    /// Turn rest detection on or off. Off: never at rest (no bias re-estimation, no hold).
    public var isEnabled: Bool
    /// Largest deviation of one gyro sample from the window mean that still counts as quiet,
    /// rad/s. Default 2 °/s: about 10 σ of a noisy MPU-6050 sample (0.1–0.2 °/s per axis), so
    /// noise never ends a rest, while a hand starting to move exceeds it within a few samples.
    public var gyroDeviationThresholdRadiansPerSecond: Double
    /// Largest deviation of one accelerometer sample from the window mean, m/s². Default
    /// 0.5 m/s² (0.05 g): about 5 σ of the MPU-6050's noise at 44 Hz bandwidth (PS §6.2)
    /// summed over three axes; a tilt of 3° or a push of 0.05 g ends a rest.
    public var accelerationDeviationThresholdMetersPerSecondSquared: Double
    /// Time constant of the window mean, seconds. Default 0.5 s.
    public var meanTimeConstantSeconds: Double
    /// Quiet time needed before rest is declared, seconds (converted to a sample count).
    /// Default 1.5 s (seed 000, VQF): long enough that a pause in a gesture is not a rest.
    public var minimumDurationSeconds: Double
    /// How many standard deviations the window mean may differ from the bias estimate about
    /// the vertical (twice as many about horizontal axes, which the accelerometer also
    /// watches). Default 4: a slow turn about the vertical is refused unless it is within
    /// the bias's own uncertainty; a true rest is refused with probability 6 · 10⁻⁵ (a normal
    /// variable beyond 4σ), and then only until the uncertainty has grown.
    public var biasConsistencySigmas: Double
    /// The smallest difference between the window mean and the bias that may refuse a rest,
    /// rad/s: below it a slow rotation cannot be told from bias anyway. Default 0.05 °/s (3°
    /// per minute). Because the bias uncertainty grows between rests like a random walk, a bias
    /// that jumped (a temperature step) is accepted again after a while; it is never accepted
    /// by a timeout, which would let a long slow turn be taken for rest.
    public var biasConsistencyFloorRadiansPerSecond: Double
    /// A quiet, stationary dwell whose mean differs from the bias (about the vertical) by less
    /// than this beyond the bias's own consistency bound (`biasConsistencySigmas` standard
    /// deviations), rad/s, widens the bias uncertainty so that the next such dwell is a rest: a
    /// bias can jump (a temperature step, a knock) beyond its random-walk prediction. Beyond
    /// this it is taken for a steady turn. Default 0.5 °/s.
    public var maximumBiasJumpRadiansPerSecond: Double
    /// A rest is declared only if the gyro's means over the three thirds of the quiet window
    /// agree pairwise within this many standard deviations (of their difference, from the
    /// window's own noise), per axis. A rotation whose rate drifts slowly through or near zero
    /// is quiet and may match the bias, but it has a trend or a curvature; a rest is stationary.
    /// Default 3.
    public var stationaritySigmas: Double
    /// The estimator refuses a rest whose mean acceleration points further than this from the
    /// gravity it expects, radians, plus the tilt error the bias uncertainty allows (3σ · τ):
    /// a sustained push or a vehicle accelerating steadily is quiet too, but it is not rest,
    /// and taking the tilt from it would be wrong. Default 5° (a 0.09 g push).
    public var maximumTiltDisagreementRadians: Double
    /// How many standard deviations of the accelerometer's noise the gravity direction may turn
    /// between the dwell's first and last thirds (their means, m/s², compared as directions).
    /// The noise is the configured one (`SensorNoise`'s density, set by the estimator). Default
    /// 4: the angle's two components are Gaussian, so a true rest is refused with probability
    /// e^(−4²/2) = 3 · 10⁻⁴ per dwell; at the MPU-6050's noise and 100 Hz (σ = 0.039 m/s² per
    /// sample, thirds of 50 samples) that is 0.18° over the 1 s between the thirds' middles. A
    /// unit noisier than configured has more of its rests refused (3 % of dwells at 1.5 times
    /// the noise, 14 % at twice), each of which only delays the rest by a dwell.
    public var gravityTurnSigmas: Double
    /// The fastest gravity may turn in the body during a dwell that is a rest, rad/s, whatever
    /// the noise: the noise bound above is capped at this rate times the time between the
    /// thirds' middles. Default 0.25 °/s, half of 0.5 °/s, the slowest steady rotation about a
    /// horizontal axis that must never be a rest: with the default noise the cap does not bind
    /// (0.18 °/s), with an accelerometer noisier than 540 µg/√Hz or a vibrating mount it does,
    /// and a rotation of 0.5 °/s still turns gravity by twice what is allowed.
    public var maximumGravityTurnRateRadiansPerSecond: Double

    public init(
      isEnabled: Bool = true,
      gyroDeviationThresholdRadiansPerSecond: Double = 2 * .pi / 180,
      accelerationDeviationThresholdMetersPerSecondSquared: Double = 0.5,
      meanTimeConstantSeconds: Double = 0.5, minimumDurationSeconds: Double = 1.5,
      biasConsistencySigmas: Double = 4,
      biasConsistencyFloorRadiansPerSecond: Double = 0.05 * .pi / 180,
      maximumBiasJumpRadiansPerSecond: Double = 0.5 * .pi / 180, stationaritySigmas: Double = 3,
      maximumTiltDisagreementRadians: Double = 5 * .pi / 180, gravityTurnSigmas: Double = 4,
      maximumGravityTurnRateRadiansPerSecond: Double = 0.25 * .pi / 180
    ) {
      self.maximumTiltDisagreementRadians = maximumTiltDisagreementRadians
      self.gravityTurnSigmas = gravityTurnSigmas
      self.maximumGravityTurnRateRadiansPerSecond = maximumGravityTurnRateRadiansPerSecond
      self.isEnabled = isEnabled
      self.gyroDeviationThresholdRadiansPerSecond = gyroDeviationThresholdRadiansPerSecond
      self.accelerationDeviationThresholdMetersPerSecondSquared =
        accelerationDeviationThresholdMetersPerSecondSquared
      self.meanTimeConstantSeconds = meanTimeConstantSeconds
      self.minimumDurationSeconds = minimumDurationSeconds
      self.biasConsistencySigmas = biasConsistencySigmas
      self.biasConsistencyFloorRadiansPerSecond = biasConsistencyFloorRadiansPerSecond
      self.stationaritySigmas = stationaritySigmas
      self.maximumBiasJumpRadiansPerSecond = maximumBiasJumpRadiansPerSecond
    }

    /// VQF-like defaults (see each property).
    public static let `default` = Settings()

    /// Thresholds derived from a unit's own noise figures (a calibration file's Allan
    /// analysis): `sigmas` standard deviations of the three-axis norm of one sample's noise,
    /// never below `floor` (the default's fraction), so that vibration the Allan recording did
    /// not see does not end every rest.
    /// - Parameters:
    ///   - sigmas: default 8, which a 3-axis Gaussian norm exceeds with probability < 10⁻¹².
    ///   - floorFraction: the smallest thresholds, as a fraction of the defaults; default 0.25.
    public init(
      noise: SensorNoise, samplePeriodSeconds: Double, sigmas: Double = 8,
      floorFraction: Double = 0.25
    ) {
      let base = Settings()
      let gyroSample = noise.gyroNoiseDensity / samplePeriodSeconds.squareRoot()
      let accelSample = noise.accelerometerNoiseDensity / samplePeriodSeconds.squareRoot()
      let three = Double(3).squareRoot()
      self.init(
        gyroDeviationThresholdRadiansPerSecond: max(
          sigmas * three * gyroSample,
          floorFraction * base.gyroDeviationThresholdRadiansPerSecond),
        accelerationDeviationThresholdMetersPerSecondSquared: max(
          sigmas * three * accelSample,
          floorFraction * base.accelerationDeviationThresholdMetersPerSecondSquared))
    }

    /// What is wrong with these settings, or `nil`.
    public var problem: String? {
      if !(gyroDeviationThresholdRadiansPerSecond > 0) {
        return "rest gyro deviation threshold must be positive"
      }
      if !(accelerationDeviationThresholdMetersPerSecondSquared > 0) {
        return "rest acceleration deviation threshold must be positive"
      }
      if !(meanTimeConstantSeconds > 0) { return "rest mean time constant must be positive" }
      if !(minimumDurationSeconds >= 0) { return "rest minimum duration must not be negative" }
      if !(biasConsistencySigmas > 0) { return "rest bias consistency must be positive" }
      if !(gravityTurnSigmas > 0) { return "rest gravity turn sigmas must be positive" }
      if !(maximumGravityTurnRateRadiansPerSecond > 0) {
        return "rest maximum gravity turn rate must be positive"
      }
      return nil
    }
  }

  /// What one sample did to the detector.
  public enum Transition: UInt8, Hashable, Sendable {
    /// Nothing changed.
    case none
    /// Rest was declared on this sample, after `quietSamples` quiet samples (this one
    /// included); the window's sums are in `stretchGyroSum` and `stretchAccelerationSum`.
    case started
    /// Rest ended on this sample.
    case ended
    /// A whole dwell was quiet and stationary but its mean rate disagreed with the bias by
    /// what a bias may have jumped by (or, about horizontal axes, by what the accelerometer
    /// showed to be bias); `excessVariance` (rad/s)² would have made it consistent.
    case inconsistent
    /// A whole dwell was quiet and stationary but its mean rate disagreed with the bias by
    /// more than a bias could explain: taken for a slow steady turn, not a rest.
    /// `refusedRate` is the disagreement.
    case refused
  }

  /// With `.inconsistent`: the variance, (rad/s)², that would have made the dwell consistent.
  public private(set) var excessVariance: Double = 0
  /// With `.refused`: how far the dwell's mean rate was from the bias, rad/s.
  public private(set) var refusedRate: Double = 0
  /// With `.refused`: the dwell's mean rate less the bias, body axes, rad/s.
  public private(set) var refusedDifference = Vector3(0, 0, 0)
  /// With `.refused`: whether the body moved (a sample that was not quiet) since the previous
  /// refused dwell — whether this one belongs to another quiet stretch.
  public private(set) var refusedInNewStretch = true
  /// A sample that was not quiet came since the last refused dwell.
  private var movedSinceRefusal = true

  public let settings: Settings
  /// `settings.isEnabled`, at hand.
  let isEnabled: Bool

  /// Whether the body is at rest after the last sample.
  public private(set) var isAtRest: Bool = false
  /// Consecutive quiet and bias-consistent samples, this rest's included.
  public private(set) var quietSamples: Int = 0
  /// The window mean of the gyro, rad/s.
  public private(set) var gyroMean: Vector3 = .zero
  /// The window mean of the gyro when the last rest ended, rad/s: the mean of the samples
  /// before the one that ended it (an exponential window of `meanTimeConstantSeconds`, so
  /// `(gyroMeanAtEnd − bias) · meanTimeConstantSeconds` is the rotation of the rest's last
  /// moments, weighted as a leaky integral with that time constant would weigh it).
  public private(set) var gyroMeanAtEnd: Vector3 = .zero
  /// The window mean of the accelerometer, m/s².
  public private(set) var accelerationMean: Vector3 = .zero
  /// Samples in the window (saturates at the time constant's sample count).
  public private(set) var windowSamples: Int = 0
  /// Samples for the dwell.
  public private(set) var dwellSamples: Int = 1
  /// Sums over the current quiet stretch: gyro, accelerometer, the gyro's first half, and
  /// the squared deviations of the gyro from the window mean (its noise), per axis.
  public private(set) var stretchGyroSum: Vector3 = .zero
  public private(set) var stretchAccelerationSum: Vector3 = .zero
  private var firstThirdGyroSum: Vector3 = .zero
  private var twoThirdsGyroSum: Vector3 = .zero
  /// The accelerometer's sum over the dwell's first third and first two thirds: the direction
  /// of gravity at the start and the end of the dwell tells a real horizontal rotation from
  /// a gyro bias (`horizontalRotationIsBias`).
  private var firstThirdAccelerationSum: Vector3 = .zero
  private var twoThirdsAccelerationSum: Vector3 = .zero
  /// The configured accelerometer noise density squared, (m/s²)²/Hz (`SensorNoise`).
  private var accelerometerNoiseDensitySquared: Double
  private var samplePeriodSeconds: Double = 0.01
  /// The bias when the rest began, and its variance: during a rest the window mean is held
  /// against it (not against the estimate the rest is refining, which would follow a slow
  /// rotation).
  private var restBias: Vector3 = .zero
  private var restBiasVarianceMaximum: Double = 0
  /// Σ of squared successive differences of the gyro over the quiet stretch, per axis, and the
  /// stretch's previous gyro sample.
  private var deviationSquares: Vector3 = .zero
  private(set) var previousGyro: Vector3 = .zero
  private var sampleVariance: Double = 0
  private var trendSquared: Double

  private var gyroThresholdSquared: Double
  private var accelThresholdSquared: Double
  private var consistencySquared: Double
  private var floorSquared: Double
  private var windowLimit: Int = 1
  private var windowGain: Double = 1
  /// The quiet-sample counts at one and two thirds of the dwell.
  private var firstThirdSamples: Int = 0
  private var twoThirdsSamples: Int = 0
  /// The quiet samples in the stretch's first third and first two thirds as its snapshots took
  /// them (0: not yet taken in this stretch). Normally `firstThirdSamples` and
  /// `twoThirdsSamples`; a period change in the stretch can move those below the count before
  /// the snapshot was due, and `setSamplePeriod` then takes it late, at the count it finds.
  private var firstThirdCount: Int = 0
  private var twoThirdsCount: Int = 0

  public init(settings: Settings = .default, samplePeriodSeconds: Double = 0.01) {
    self.settings = settings
    isEnabled = settings.isEnabled
    let g = settings.gyroDeviationThresholdRadiansPerSecond
    let a = settings.accelerationDeviationThresholdMetersPerSecondSquared
    gyroThresholdSquared = g * g
    accelThresholdSquared = a * a
    consistencySquared = settings.biasConsistencySigmas * settings.biasConsistencySigmas
    let f = settings.biasConsistencyFloorRadiansPerSecond
    floorSquared = f * f
    trendSquared = settings.stationaritySigmas * settings.stationaritySigmas
    let density = SensorNoise.mpu6050.accelerometerNoiseDensity
    accelerometerNoiseDensitySquared = density * density
    setSamplePeriod(samplePeriodSeconds)
  }

  /// The accelerometer's configured white noise, m/s²/√Hz (`SensorNoise`; the MPU-6050's
  /// 400 µg/√Hz until set): the gravity test's noise is never taken below it.
  public mutating func setAccelerometerNoiseDensity(_ density: Double) {
    accelerometerNoiseDensitySquared = density * density
  }

  /// Converts the durations into sample counts for this period. Call when the period estimate
  /// changes; it does not disturb a rest in progress.
  public mutating func setSamplePeriod(_ seconds: Double) {
    guard seconds > 0 else { return }
    samplePeriodSeconds = seconds
    dwellSamples = max(1, Int((settings.minimumDurationSeconds / seconds).rounded()))
    windowLimit = max(1, Int((settings.meanTimeConstantSeconds / seconds).rounded()))
    firstThirdSamples = dwellSamples / 3
    twoThirdsSamples = 2 * dwellSamples / 3
    // A quiet stretch under way keeps what it has: a snapshot whose point the new counts moved
    // below the stretch's count before it fell due is taken now (it would never be taken, and
    // the thirds test would compare a stale sum). Called before the sample's `step`.
    if quietSamples > 0 && !isAtRest {
      if firstThirdCount == 0 && quietSamples >= firstThirdSamples {
        firstThirdGyroSum = stretchGyroSum
        firstThirdAccelerationSum = stretchAccelerationSum
        firstThirdCount = quietSamples
      }
      if twoThirdsCount == 0 && quietSamples >= twoThirdsSamples {
        twoThirdsGyroSum = stretchGyroSum
        twoThirdsAccelerationSum = stretchAccelerationSum
        twoThirdsCount = quietSamples
      }
    }
  }

  /// Takes one sample.
  /// - Parameters:
  ///   - gyro: raw angular rate, rad/s (offset included; only deviations matter).
  ///   - acceleration: specific force, m/s².
  ///   - bias: the current gyro-bias estimate, rad/s.
  ///   - biasVariance: its variance per axis, (rad/s)².
  ///   - gyroSampleVariance: the variance of one gyro sample's noise, (rad/s)².
  ///   - up: the estimated up direction in body axes (unit).
  ///   - usable: `false` for a sample that must not count as rest (clipped).
  public mutating func update(
    gyro: Vector3, acceleration: Vector3, bias: Vector3, biasVariance: Vector3,
    gyroSampleVariance: Double, up: Vector3, usable: Bool = true
  ) -> Transition {
    sampleVariance = gyroSampleVariance
    switch step(gyro: gyro, acceleration: acceleration, up: up, usable: usable) {
    case .none: return .none
    case .ended: return .ended
    case .dwellCompleted: return completeDwell(bias: bias, biasVariance: biasVariance, up: up)
    }
  }

  /// What one sample did, on the per-sample path: a completed dwell still needs the bias to
  /// decide (`completeDwell`), which is fetched only then.
  enum Step {
    case none
    case ended
    case dwellCompleted
  }

  /// The variance of one gyro sample's noise, (rad/s)²: `update` passes it with every sample;
  /// callers of `step` set it when it changes.
  mutating func setGyroSampleVariance(_ variance: Double) {
    sampleVariance = variance
  }

  /// The per-sample part of `update`.
  @inline(__always)
  mutating func step(gyro: Vector3, acceleration: Vector3, up: Vector3, usable: Bool) -> Step {
    guard isEnabled else { return .none }
    let dg = gyro - gyroMean
    let da = acceleration - accelerationMean
    guard
      usable && dg.x * dg.x + dg.y * dg.y + dg.z * dg.z < gyroThresholdSquared
        && da.x * da.x + da.y * da.y + da.z * da.z < accelThresholdSquared
    else {
      // Restart the window from this sample.
      let meanBeforeRestart = gyroMean
      gyroMean = gyro
      accelerationMean = acceleration
      windowSamples = 1
      windowGain = 1
      quietSamples = 0
      movedSinceRefusal = true
      if isAtRest {
        isAtRest = false
        gyroMeanAtEnd = meanBeforeRestart
        return .ended
      }
      return .none
    }
    if windowSamples < windowLimit {
      windowSamples &+= 1
      windowGain = 1 / Double(windowSamples)
    }
    let w = windowGain
    gyroMean = Vector3(gyroMean.x + dg.x * w, gyroMean.y + dg.y * w, gyroMean.z + dg.z * w)
    accelerationMean = Vector3(
      accelerationMean.x + da.x * w, accelerationMean.y + da.y * w,
      accelerationMean.z + da.z * w)
    if isAtRest {
      // During a rest the bias is being measured and its uncertainty is small: a window mean
      // drifting away from it is a slow rotation starting, and ends the rest.
      if isConsistentDuringRest(up: up) {
        quietSamples &+= 1
        return .none
      }
      isAtRest = false
      quietSamples = 0
      // The mean before this sample, which the caller integrates itself.
      gyroMeanAtEnd = Vector3(gyroMean.x - dg.x * w, gyroMean.y - dg.y * w, gyroMean.z - dg.z * w)
      return .ended
    }
    quietSamples &+= 1
    // Successive differences measure the noise without the trend a slow turn would add; they
    // are needed only between consecutive quiet samples of a stretch (a sample that is not
    // quiet restarts the stretch), so the previous gyro sample is kept only here.
    let step = gyro - previousGyro
    previousGyro = gyro
    if quietSamples == 1 {
      stretchGyroSum = gyro
      stretchAccelerationSum = acceleration
      deviationSquares = Vector3(0, 0, 0)
      firstThirdCount = 0
      twoThirdsCount = 0
    } else {
      stretchGyroSum = Vector3(
        stretchGyroSum.x + gyro.x, stretchGyroSum.y + gyro.y, stretchGyroSum.z + gyro.z)
      stretchAccelerationSum = Vector3(
        stretchAccelerationSum.x + acceleration.x, stretchAccelerationSum.y + acceleration.y,
        stretchAccelerationSum.z + acceleration.z)
      deviationSquares = Vector3(
        deviationSquares.x + step.x * step.x, deviationSquares.y + step.y * step.y,
        deviationSquares.z + step.z * step.z)
    }
    if quietSamples == firstThirdSamples {
      firstThirdGyroSum = stretchGyroSum
      firstThirdAccelerationSum = stretchAccelerationSum
      firstThirdCount = quietSamples
    }
    if quietSamples == twoThirdsSamples {
      twoThirdsGyroSum = stretchGyroSum
      twoThirdsAccelerationSum = stretchAccelerationSum
      twoThirdsCount = quietSamples
    }
    return quietSamples >= dwellSamples ? .dwellCompleted : .none
  }

  /// A whole dwell was quiet: rest if it is stationary and consistent with the bias.
  @inline(never)
  mutating func completeDwell(bias: Vector3, biasVariance: Vector3, up: Vector3) -> Transition {
    // A rate that drifts, or a steady rotation that turns gravity, is motion: the stretch
    // starts again, as after a sample that is not quiet.
    guard isStationary() && gravityStaysPut() else {
      quietSamples = 0
      return .none
    }
    let (consistent, vertical, horizontal) = consistency(
      reference: bias, variance: biasVariance, up: up)
    guard consistent else {
      // Stationary and quiet for a whole dwell, yet not the bias we expected: either a slow
      // steady turn, or the bias moved further than its uncertainty said. Report what would
      // make it consistent (the estimator widens the uncertainty) and try again: a second
      // such dwell is a rest. About the vertical only the gyro sees rotation, so a difference
      // there is taken for a bias only up to `maximumBiasJump`; about horizontal axes the
      // accelerometer decides, whatever the size: if gravity did not turn in the body, the
      // gyro's horizontal rate is bias (a calibration that no longer holds).
      let c = consistencySquared * max(biasVariance.x, biasVariance.y, biasVariance.z)
      let tilts = horizontal > 4 * c + floorSquared
      let tiltIsBias = tilts && horizontalRotationIsBias(horizontalSquared: horizontal)
      quietSamples = 0
      // A jump is counted beyond what the bias's own uncertainty allows (its consistency
      // bound): a bias known only to 0.17 °/s (a bench value 5.7 °C from its temperature) may
      // be 0.68 °/s off before it jumps at all.
      let jump = settings.maximumBiasJumpRadiansPerSecond + c.squareRoot()
      guard vertical * vertical <= jump * jump, !tilts || tiltIsBias else {
        refusedRate = (vertical * vertical + horizontal).squareRoot()
        refusedDifference = gyroMean - bias
        refusedInNewStretch = movedSinceRefusal
        movedSinceRefusal = false
        return .refused
      }
      var excess = vertical * vertical / consistencySquared
      // A horizontal difference the accelerometer showed to be bias is a measured bias error:
      // the uncertainty becomes at least that error (1σ), not just the consistency bound, so
      // that the tilt it caused meanwhile (`tiltAgrees`, 3σ·τ) does not refuse the rest.
      if tilts { excess = max(excess, horizontal) }
      excessVariance = excess
      return .inconsistent
    }
    isAtRest = true
    return .started
  }

  /// Whether two refused dwells' differences from the bias (`refusedDifference`) are the same
  /// difference, within the noise of two window means, the bias's uncertainty (its largest
  /// per-axis variance, `biasVariance`) and the consistency floor.
  public func refusalsAgree(_ a: Vector3, _ b: Vector3, biasVariance v: Vector3) -> Bool {
    let variance = 2 * sampleVariance * windowGain + max(v.x, v.y, v.z)
    return (a - b).squaredLength <= consistencySquared * variance + floorSquared
  }

  /// During a rest: the window mean must stay consistent with the bias measured when the rest
  /// began (see `consistency`; the variance is fixed for the rest).
  @inline(__always)
  private func isConsistentDuringRest(up: Vector3) -> Bool {
    let d = gyroMean - restBias
    let vertical = d.x * up.x + d.y * up.y + d.z * up.z
    let horizontal = d.x * d.x + d.y * d.y + d.z * d.z - vertical * vertical
    let allowance = consistencySquared * (restBiasVarianceMaximum + sampleVariance * windowGain)
    return vertical * vertical <= allowance + floorSquared
      && horizontal <= 4 * allowance + floorSquared
  }

  /// Is the window mean a plausible bias? Its variance: the bias uncertainty plus the mean's
  /// own noise (one sample's variance over the samples averaged). The part about the vertical
  /// is held to `biasConsistencySigmas`: only the gyro sees rotation about the vertical. The
  /// horizontal part gets twice the allowance, since the accelerometer also watches it.
  @inline(__always)
  private func consistency(reference: Vector3, variance rv: Vector3, up: Vector3) -> (
    isConsistent: Bool, vertical: Double, horizontalSquared: Double
  ) {
    let d = gyroMean - reference
    let variance = max(rv.x, rv.y, rv.z) + sampleVariance * windowGain
    let vertical = d.dot(up)
    let horizontal = d.squaredLength - vertical * vertical
    let allowance = consistencySquared * variance
    let consistent =
      vertical * vertical <= allowance + floorSquared
      && horizontal <= 4 * allowance + floorSquared
    return (consistent, vertical, horizontal)
  }

  /// The samples in the quiet stretch's three thirds, as its snapshots divided it: the dwell's
  /// thirds (`dwellSamples / 3`, `2 · dwellSamples / 3`), unless a period change moved them.
  private var thirds: (Double, Double, Double) {
    (
      Double(firstThirdCount), Double(twoThirdsCount - firstThirdCount),
      Double(quietSamples - twoThirdsCount)
    )
  }

  /// The three thirds of the quiet stretch have the same mean rate, within the noise.
  private func isStationary() -> Bool {
    let (n1, n2, n3) = thirds
    // Too short a dwell to split (under six samples) is taken as it is; a longer one that a
    // period change left without a third of two samples is not a rest untested: its stretch
    // starts again.
    guard n1 >= 2, n2 >= 2, n3 >= 2 else { return dwellSamples < 6 }
    let m1 = firstThirdGyroSum / n1
    let m2 = (twoThirdsGyroSum - firstThirdGyroSum) / n2
    let m3 = (stretchGyroSum - twoThirdsGyroSum) / n3
    // The noise: measured from successive differences, but never below the configured figure
    // (a low-pass filtered gyro has smaller differences than its noise suggests).
    let measured = deviationSquares * (0.5 / Double(max(quietSamples - 1, 1)))
    let variance = Vector3(
      max(measured.x, sampleVariance), max(measured.y, sampleVariance),
      max(measured.z, sampleVariance))
    let k = trendSquared
    func agree(_ a: Vector3, _ b: Vector3, _ na: Double, _ nb: Double) -> Bool {
      let d = a - b
      let s = k * (1 / na + 1 / nb)
      return d.x * d.x <= s * variance.x && d.y * d.y <= s * variance.y
        && d.z * d.z <= s * variance.z
    }
    return agree(m1, m2, n1, n2) && agree(m2, m3, n2, n3) && agree(m1, m3, n1, n3)
  }

  /// Whether gravity pointed the same way, within the accelerometer's noise, at the start and
  /// the end of the dwell: the directions of the accelerometer's means over the first and the
  /// last third. Each component of the angle between them has the variance
  /// `σ² · (1/n₁ + 1/n₃) / g²`, σ² one sample's noise per axis: the configured density²/dt
  /// (the means' noise at any rate, also when a low-pass filter correlates the samples, which
  /// lowers the per-sample figure but not the means'). The angle must lie within
  /// `gravityTurnSigmas` of that, and within `maximumGravityTurnRate` times the time between
  /// the thirds' middles. Cost: a few dozen operations once per completed dwell, nothing per
  /// sample.
  private func gravityStaysPut() -> Bool {
    let (n1, n2, n3) = thirds
    // Too short a dwell to split is taken as `isStationary` takes it.
    guard n1 >= 2, n3 >= 2 else { return true }
    let start = firstThirdAccelerationSum / n1
    let end = (stretchAccelerationSum - twoThirdsAccelerationSum) / n3
    let norms = start.squaredLength * end.squaredLength
    guard norms > 0 else { return false }
    // sin² of the angle between them.
    let turnedSquared = start.cross(end).squaredLength / norms
    let sampleVariance = accelerometerNoiseDensitySquared / samplePeriodSeconds
    let k = settings.gravityTurnSigmas
    let noise = k * k * sampleVariance * (1 / n1 + 1 / n3) / norms.squareRoot()
    let seconds = (0.5 * n1 + n2 + 0.5 * n3) * samplePeriodSeconds
    let cap = settings.maximumGravityTurnRateRadiansPerSecond * seconds
    return turnedSquared <= min(noise, cap * cap)
  }

  /// Whether a horizontal difference between the dwell's mean rate and the bias,
  /// `horizontalSquared` (rad/s)², is bias rather than rotation: over the dwell (from the
  /// middle of its first third to the middle of its last) the difference would have turned
  /// gravity in the body by `√horizontalSquared · Δt`; the accelerometer's means over those
  /// thirds show by how much it did turn. Less than half of it is a bias; a real slow tilt
  /// turns gravity by all of it. (At the MPU-6050's noise the thirds' directions are known to
  /// 0.03°, so a difference of 0.1 °/s over the default 1 s is already 3σ.)
  private func horizontalRotationIsBias(horizontalSquared: Double) -> Bool {
    let (n1, n2, n3) = thirds
    guard n1 >= 2, n3 >= 2 else { return false }
    let start = firstThirdAccelerationSum / n1
    let end = (stretchAccelerationSum - twoThirdsAccelerationSum) / n3
    let norms = (start.squaredLength * end.squaredLength).squareRoot()
    guard norms > 0 else { return false }
    // |sin| of the angle between them.
    let turned = (start.cross(end).squaredLength / (norms * norms)).squareRoot()
    let seconds = (0.5 * n1 + n2 + 0.5 * n3) * samplePeriodSeconds
    return turned < 0.5 * horizontalSquared.squareRoot() * seconds
  }

  /// Tells the detector the bias that the rest just declared has measured (the estimator's
  /// estimate after the window's batch update), and its variance; during the rest the window
  /// mean must stay consistent with it.
  public mutating func setRestBias(_ bias: Vector3, variance: Vector3) {
    restBias = bias
    restBiasVarianceMaximum = max(variance.x, variance.y, variance.z)
  }

  /// Withdraws a rest just declared (the caller found it implausible): the dwell starts again,
  /// the window means are kept.
  public mutating func cancelRest() {
    isAtRest = false
    quietSamples = 0
  }

  /// Forgets everything (a restart of the estimator).
  public mutating func reset() {
    isAtRest = false
    quietSamples = 0
    gyroMean = .zero
    accelerationMean = .zero
    windowSamples = 0
  }
}
