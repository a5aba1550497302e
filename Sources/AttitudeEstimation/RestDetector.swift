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
/// 2. Quiet samples are counted; the body is **at rest** once `minimumDurationSeconds` of
///    consecutive quiet (and consistent, below) samples are counted. The dwell is a sample count,
///    recomputed only when the sample period estimate changes.
/// 3. **Rest ends on the same sample** that breaks either threshold — there is no hold-off, or
///    the estimator's heading hold would swallow the start of a real rotation.
/// 4. **Consistency with the bias** (supplied by the caller): a constant rotation is quiet too,
///    and about the vertical the accelerometer cannot see it. Once the gyro bias is known, a
///    window mean that differs from the bias by more than `biasConsistencySigmas` standard
///    deviations (bias uncertainty and the mean's own noise) is a slow rotation, not rest. While
///    the bias is unknown (at start-up, uncertainty ±20 °/s) only rotations beyond that are
///    refused. A quiet but inconsistent stretch longer than `inconsistentRestTimeoutSeconds`
///    is accepted after all: nothing physical turns that smoothly for that long, but a bias can
///    jump (a temperature step) beyond its predicted uncertainty, and refusing every later rest
///    would freeze the estimate.
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
    /// How many standard deviations the window mean may differ from the bias estimate, per
    /// axis. Default 4: a true rest is refused with probability about 2 × 10⁻⁴ per axis.
    public var biasConsistencySigmas: Double
    /// A quiet but bias-inconsistent stretch this long is accepted as rest, seconds. Default
    /// 10 s.
    public var inconsistentRestTimeoutSeconds: Double
    /// The estimator refuses a rest whose mean acceleration points further than this from the
    /// gravity it expects, radians, plus the tilt error the bias uncertainty allows (3σ · τ):
    /// a sustained push or a vehicle accelerating steadily is quiet too, but it is not rest,
    /// and taking the tilt from it would be wrong. Default 5° (a 0.09 g push).
    public var maximumTiltDisagreementRadians: Double

    public init(
      isEnabled: Bool = true,
      gyroDeviationThresholdRadiansPerSecond: Double = 2 * .pi / 180,
      accelerationDeviationThresholdMetersPerSecondSquared: Double = 0.5,
      meanTimeConstantSeconds: Double = 0.5, minimumDurationSeconds: Double = 1.5,
      biasConsistencySigmas: Double = 4, inconsistentRestTimeoutSeconds: Double = 10,
      maximumTiltDisagreementRadians: Double = 5 * .pi / 180
    ) {
      self.maximumTiltDisagreementRadians = maximumTiltDisagreementRadians
      self.isEnabled = isEnabled
      self.gyroDeviationThresholdRadiansPerSecond = gyroDeviationThresholdRadiansPerSecond
      self.accelerationDeviationThresholdMetersPerSecondSquared =
        accelerationDeviationThresholdMetersPerSecondSquared
      self.meanTimeConstantSeconds = meanTimeConstantSeconds
      self.minimumDurationSeconds = minimumDurationSeconds
      self.biasConsistencySigmas = biasConsistencySigmas
      self.inconsistentRestTimeoutSeconds = inconsistentRestTimeoutSeconds
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
      return nil
    }
  }

  /// What one sample did to the detector.
  public enum Transition: Hashable, Sendable {
    /// Nothing changed.
    case none
    /// Rest was declared on this sample, after `samples` quiet samples (this one included).
    /// `consistent` is `false` when it was accepted only by the inconsistency timeout.
    case started(samples: Int, consistent: Bool)
    /// Rest ended on this sample.
    case ended
  }

  public let settings: Settings

  /// Whether the body is at rest after the last sample.
  public private(set) var isAtRest: Bool = false
  /// Consecutive quiet (and consistent) samples, this rest's included.
  public private(set) var quietSamples: Int = 0
  /// Consecutive quiet but bias-inconsistent samples.
  public private(set) var inconsistentSamples: Int = 0
  /// The window mean of the gyro, rad/s.
  public private(set) var gyroMean: Vector3 = .zero
  /// The window mean of the accelerometer, m/s².
  public private(set) var accelerationMean: Vector3 = .zero
  /// Samples in the window (saturates at the time constant's sample count).
  public private(set) var windowSamples: Int = 0

  private var gyroThresholdSquared: Double
  private var accelThresholdSquared: Double
  private var consistencySquared: Double
  /// Samples for the dwell, the window's time constant and the inconsistency timeout.
  public private(set) var dwellSamples: Int = 1
  private var windowLimit: Int = 1
  private var inconsistentLimit: Int = 1

  public init(settings: Settings = .default, samplePeriodSeconds: Double = 0.01) {
    self.settings = settings
    let g = settings.gyroDeviationThresholdRadiansPerSecond
    let a = settings.accelerationDeviationThresholdMetersPerSecondSquared
    gyroThresholdSquared = g * g
    accelThresholdSquared = a * a
    consistencySquared = settings.biasConsistencySigmas * settings.biasConsistencySigmas
    setSamplePeriod(samplePeriodSeconds)
  }

  /// Converts the durations into sample counts for this period. Call when the period estimate
  /// changes; it does not disturb a rest in progress.
  public mutating func setSamplePeriod(_ seconds: Double) {
    guard seconds > 0 else { return }
    dwellSamples = max(1, Int((settings.minimumDurationSeconds / seconds).rounded()))
    windowLimit = max(1, Int((settings.meanTimeConstantSeconds / seconds).rounded()))
    inconsistentLimit = max(
      1, Int((settings.inconsistentRestTimeoutSeconds / seconds).rounded()))
  }

  /// Takes one sample.
  /// - Parameters:
  ///   - gyro: raw angular rate, rad/s (offset included; only deviations matter).
  ///   - acceleration: specific force, m/s².
  ///   - bias: the current gyro-bias estimate, rad/s.
  ///   - biasVariance: its variance per axis, (rad/s)².
  ///   - gyroSampleVariance: the variance of one gyro sample's noise, (rad/s)².
  ///   - usable: `false` for a sample that must not count as rest (clipped).
  @inline(__always)
  public mutating func update(
    gyro: Vector3, acceleration: Vector3, bias: Vector3, biasVariance: Vector3,
    gyroSampleVariance: Double, usable: Bool = true
  ) -> Transition {
    let dg = gyro - gyroMean
    let da = acceleration - accelerationMean
    let quiet =
      usable && settings.isEnabled && dg.squaredLength < gyroThresholdSquared
      && da.squaredLength < accelThresholdSquared
    guard quiet else {
      // Restart the window from this sample.
      gyroMean = gyro
      accelerationMean = acceleration
      windowSamples = 1
      quietSamples = 0
      inconsistentSamples = 0
      if isAtRest {
        isAtRest = false
        return .ended
      }
      return .none
    }
    if windowSamples < windowLimit { windowSamples += 1 }
    let w = 1 / Double(windowSamples)
    gyroMean += dg * w
    accelerationMean += da * w
    if isAtRest {
      quietSamples += 1
      return .none
    }
    // Is the window mean a plausible bias? Variance of the mean: bias uncertainty plus the
    // mean's own noise (one sample's variance over the samples averaged).
    let d = gyroMean - bias
    let meanVariance = gyroSampleVariance * w
    let consistent =
      d.x * d.x <= consistencySquared * (biasVariance.x + meanVariance)
      && d.y * d.y <= consistencySquared * (biasVariance.y + meanVariance)
      && d.z * d.z <= consistencySquared * (biasVariance.z + meanVariance)
    var acceptedByTimeout = false
    if consistent {
      inconsistentSamples = 0
    } else {
      acceptedByTimeout = inconsistentSamples + 1 >= inconsistentLimit
      inconsistentSamples += 1
      if inconsistentSamples < inconsistentLimit {
        quietSamples = 0
        return .none
      }
    }
    quietSamples += 1
    if quietSamples >= dwellSamples {
      isAtRest = true
      return .started(samples: quietSamples, consistent: !acceptedByTimeout)
    }
    return .none
  }

  /// Withdraws a rest just declared (the caller found it implausible): the dwell starts again,
  /// the window means are kept.
  public mutating func cancelRest() {
    isAtRest = false
    quietSamples = 0
    inconsistentSamples = 0
  }

  /// Forgets everything (a restart of the estimator).
  public mutating func reset() {
    isAtRest = false
    quietSamples = 0
    inconsistentSamples = 0
    gyroMean = .zero
    accelerationMean = .zero
    windowSamples = 0
  }
}
