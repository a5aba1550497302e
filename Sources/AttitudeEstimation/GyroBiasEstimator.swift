import Geometry

/// The gyroscope-bias estimate and its uncertainty: a small Kalman filter with one state per
/// body axis (a diagonal covariance), fed by two kinds of measurement.
///
/// **Model.** The bias is a random walk: between measurements its variance grows by
/// `K² · dt` per axis (K: `SensorNoise.gyroBiasRandomWalk`), up to the initial variance. So the
/// longer since the last rest, the less the estimate is trusted and the more the next rest
/// counts.
///
/// **At rest** every raw gyro sample measures the bias directly, with the variance of one
/// sample's noise (`N²/dt`). The Kalman gain then does what seed 000's running mean does, but
/// weighted: the first samples of a rest move the estimate a lot when it was uncertain, later
/// ones less and less ("weight grows with rest length"), and a long rest forgets the distant
/// past at the rate the random walk dictates. A whole window of samples can be applied at once
/// (`observeAtRest(meanRate:samples:…)`), which is how the samples that preceded the rest
/// decision are not lost.
///
/// **In motion** the inclination correction measures the horizontal part of the bias (a bias
/// about a horizontal axis tilts the estimate, and the accelerometer pulls it back); the
/// vertical part is unobservable without a magnetometer. `observe(row:innovation:…)` applies one
/// such scalar measurement `innovation ≈ row · (b − b̂)`. Its noise is set so that in long
/// motion the uncertainty settles at `motionUncertainty` (VQF's formulation), and its gain is
/// capped so the bias loop stays slower than the inclination filter it listens to.
///
/// **Temperature.** The estimate is of the bias at `referenceTemperatureCelsius`; the bias at
/// temperature T is `bias + temperatureCoefficient · (T − T_ref)`. The coefficient comes from a
/// bench calibration (issue 6) and is zero by default; learning it online from rests at
/// different temperatures only needs a second state per axis here.
public struct GyroBiasEstimator: Hashable, Sendable {
  public struct Settings: Hashable, Sendable {
    /// Re-estimate the bias during rests. Default on.
    public var restEstimationEnabled: Bool
    /// Estimate the horizontal part of the bias during motion. Default on.
    public var motionEstimationEnabled: Bool
    /// The bias to start from, rad/s (from a calibration file; zero without one).
    public var initialBiasRadiansPerSecond: Vector3
    /// One standard deviation of `initialBias`, rad/s, per axis; also the largest uncertainty
    /// the random walk grows to. Default 20/3 °/s: the MPU-6050's initial zero-rate tolerance
    /// of ±20 °/s (PS §6.1) as a 3σ bound, so an uncalibrated unit is handled, and the rest
    /// detector refuses only constant rotations faster than about 20 °/s before the first
    /// rest. With a calibration file, its own uncertainty.
    public var initialUncertaintyRadiansPerSecond: Double
    /// Where the uncertainty settles in long motion without rest, rad/s. Default 0.1 °/s
    /// (VQF's motion bias sigma): the motion measurement is trusted so that it tracks a drifting
    /// horizontal bias with a time constant of about a minute, not faster.
    public var motionUncertaintyRadiansPerSecond: Double
    /// The fastest the motion measurement may move the bias, as a time constant, seconds.
    /// Default 10 s, about three inclination time constants: the measurement is a filtered
    /// correction, and a bias loop faster than its filter would oscillate.
    public var motionMinimumTimeConstantSeconds: Double
    /// A motion innovation is limited to this, rad/s, so one violent manoeuvre cannot throw
    /// the estimate. Default 2 °/s (VQF's clip).
    public var motionInnovationLimitRadiansPerSecond: Double
    /// The largest bias magnitude per axis, rad/s. Default 30 °/s, beyond the MPU-6050's
    /// ±20 °/s zero-rate tolerance; reaching it is flagged.
    public var maximumBiasRadiansPerSecond: Double
    /// Bias change per degree Celsius, rad/s/°C, per axis. Default zero (no model).
    public var temperatureCoefficientRadiansPerSecondPerCelsius: Vector3
    /// The temperature at which `initialBias` and the estimate hold, °C. Default 25 °C.
    public var referenceTemperatureCelsius: Double

    public init(
      restEstimationEnabled: Bool = true, motionEstimationEnabled: Bool = true,
      initialBiasRadiansPerSecond: Vector3 = .zero,
      initialUncertaintyRadiansPerSecond: Double = 20.0 / 3 * .pi / 180,
      motionUncertaintyRadiansPerSecond: Double = 0.1 * .pi / 180,
      motionMinimumTimeConstantSeconds: Double = 10,
      motionInnovationLimitRadiansPerSecond: Double = 2 * .pi / 180,
      maximumBiasRadiansPerSecond: Double = 30 * .pi / 180,
      temperatureCoefficientRadiansPerSecondPerCelsius: Vector3 = .zero,
      referenceTemperatureCelsius: Double = 25
    ) {
      self.restEstimationEnabled = restEstimationEnabled
      self.motionEstimationEnabled = motionEstimationEnabled
      self.initialBiasRadiansPerSecond = initialBiasRadiansPerSecond
      self.initialUncertaintyRadiansPerSecond = initialUncertaintyRadiansPerSecond
      self.motionUncertaintyRadiansPerSecond = motionUncertaintyRadiansPerSecond
      self.motionMinimumTimeConstantSeconds = motionMinimumTimeConstantSeconds
      self.motionInnovationLimitRadiansPerSecond = motionInnovationLimitRadiansPerSecond
      self.maximumBiasRadiansPerSecond = maximumBiasRadiansPerSecond
      self.temperatureCoefficientRadiansPerSecondPerCelsius =
        temperatureCoefficientRadiansPerSecondPerCelsius
      self.referenceTemperatureCelsius = referenceTemperatureCelsius
    }

    public static let `default` = Settings()

    /// Seeded from a bench calibration: its bias and that bias's uncertainty (1σ), rad/s.
    public static func calibrated(
      biasRadiansPerSecond: Vector3, uncertaintyRadiansPerSecond: Double,
      temperatureCoefficientRadiansPerSecondPerCelsius: Vector3 = .zero,
      referenceTemperatureCelsius: Double = 25
    ) -> Settings {
      Settings(
        initialBiasRadiansPerSecond: biasRadiansPerSecond,
        initialUncertaintyRadiansPerSecond: uncertaintyRadiansPerSecond,
        temperatureCoefficientRadiansPerSecondPerCelsius:
          temperatureCoefficientRadiansPerSecondPerCelsius,
        referenceTemperatureCelsius: referenceTemperatureCelsius)
    }

    /// What is wrong with these settings, or `nil`.
    public var problem: String? {
      if !initialBiasRadiansPerSecond.isFinite { return "initial gyro bias must be finite" }
      if !(initialUncertaintyRadiansPerSecond > 0) {
        return "initial gyro-bias uncertainty must be positive"
      }
      if !(motionUncertaintyRadiansPerSecond > 0) {
        return "motion gyro-bias uncertainty must be positive"
      }
      if !(motionMinimumTimeConstantSeconds > 0) {
        return "motion bias time constant must be positive"
      }
      if !(maximumBiasRadiansPerSecond > 0) { return "maximum gyro bias must be positive" }
      if !temperatureCoefficientRadiansPerSecondPerCelsius.isFinite
        || !referenceTemperatureCelsius.isFinite
      {
        return "gyro-bias temperature model must be finite"
      }
      return nil
    }
  }

  public let settings: Settings
  /// The bias estimate at the reference temperature, rad/s, body axes.
  public private(set) var bias: Vector3
  /// The variance of the estimate per axis, (rad/s)².
  public private(set) var variance: Vector3
  /// The estimate reached `maximumBias` on some axis at the last update.
  public private(set) var isLimited: Bool = false

  private let maximumVariance: Double
  private let randomWalkVariancePerSecond: Double

  public init(settings: Settings = .default, noise: SensorNoise = .mpu6050) {
    self.settings = settings
    bias = settings.initialBiasRadiansPerSecond
    let v =
      settings.initialUncertaintyRadiansPerSecond * settings.initialUncertaintyRadiansPerSecond
    variance = Vector3(v, v, v)
    maximumVariance = v
    randomWalkVariancePerSecond = noise.gyroBiasRandomWalk * noise.gyroBiasRandomWalk
  }

  /// One standard deviation per axis, rad/s.
  public var uncertainty: Vector3 {
    Vector3(variance.x.squareRoot(), variance.y.squareRoot(), variance.z.squareRoot())
  }

  /// The bias at `temperatureCelsius` (the estimate when the temperature is not finite).
  @inline(__always)
  public func bias(atTemperature temperatureCelsius: Double) -> Vector3 {
    let c = settings.temperatureCoefficientRadiansPerSecondPerCelsius
    let offset = temperatureCelsius - settings.referenceTemperatureCelsius
    return offset.isFinite ? bias + c * offset : bias
  }

  /// Time passes without a measurement: the variance grows like a random walk's.
  @inline(__always)
  public mutating func predict(seconds: Double) {
    let dv = randomWalkVariancePerSecond * seconds
    let m = maximumVariance
    variance = Vector3(
      min(variance.x + dv, m), min(variance.y + dv, m), min(variance.z + dv, m))
  }

  /// A direct measurement of the bias at rest: `meanRate` is the mean of `samples` raw gyro
  /// samples (temperature-compensated to the reference), each with noise variance
  /// `sampleVariance`, (rad/s)².
  @inline(__always)
  public mutating func observeAtRest(meanRate: Vector3, samples: Int = 1, sampleVariance: Double) {
    let r = sampleVariance / Double(max(samples, 1))
    let k = Vector3(
      variance.x / (variance.x + r), variance.y / (variance.y + r), variance.z / (variance.z + r))
    bias += k.scaled(by: meanRate - bias)
    variance = variance - k.scaled(by: variance)
    limit()
  }

  /// One scalar measurement in motion: `innovation` ≈ `row · (b − b̂)`, rad/s, with noise
  /// variance `noiseVariance`. `maximumGain` caps the fraction of the innovation applied
  /// (the loop-speed limit for this update interval).
  @inline(__always)
  public mutating func observe(
    row h: Vector3, innovation: Double, noiseVariance: Double, maximumGain: Double
  ) {
    let ph = variance.scaled(by: h)
    let hph = ph.dot(h)
    guard hph > 0 else { return }
    // S ≥ hph / maximumGain keeps hᵀK ≤ maximumGain.
    let s = max(hph + noiseVariance, hph / maximumGain)
    let limit = settings.motionInnovationLimitRadiansPerSecond
    let e = max(-limit, min(limit, innovation))
    let k = ph * (1 / s)
    bias += k * e
    variance = variance - k.scaled(by: ph)
    self.limit()
  }

  @inline(__always)
  mutating func limit() {
    let m = settings.maximumBiasRadiansPerSecond
    let clipped = Vector3(
      max(-m, min(m, bias.x)), max(-m, min(m, bias.y)), max(-m, min(m, bias.z)))
    isLimited = clipped != bias
    bias = clipped
  }

  /// Adds `variance` (rad/s)² to every axis's variance: evidence that the bias moved more than
  /// the random walk predicted.
  public mutating func widen(by variance: Double) {
    guard variance > 0 else { return }
    let m = maximumVariance
    self.variance = Vector3(
      min(self.variance.x + variance, m), min(self.variance.y + variance, m),
      min(self.variance.z + variance, m))
  }

  /// Replaces the estimate (for instance with a stored value at start-up).
  public mutating func reset(bias: Vector3, uncertaintyRadiansPerSecond: Double) {
    self.bias = bias
    let v = uncertaintyRadiansPerSecond * uncertaintyRadiansPerSecond
    variance = Vector3(v, v, v)
    limit()
  }
}
