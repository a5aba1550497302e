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
/// **Temperature, learnt online.** A MEMS gyro's zero-rate output moves with the die
/// temperature (PS §6.1: up to ±20 °/s over −40…+85 °C), and a board warms for minutes after
/// power-up. So each axis has a second state: the bias is `b(T) = bias + c · (T − T_ref)` with
/// `bias` the bias at `referenceTemperatureCelsius` and `c` the temperature coefficient, and the
/// pair (bias, c) carries a 2 × 2 covariance per axis. A rest at temperature T measures
/// `b(T)`, the row `[1, T − T_ref]`: rests at one temperature pin the bias there, rests at
/// different temperatures separate the slope from the offset, and between rests — in motion,
/// while the chip keeps warming — the bias is *predicted* from the temperature instead of
/// standing at the last rest's value. The random walk of the bias competes with the slope for
/// every change seen between rests, in proportion to their variances (time elapsed against
/// temperature change), so a bias that wanders at constant temperature teaches no slope, and a
/// slope is believed once rests at several temperatures agree on it. The coefficient starts at
/// the bench calibration's (zero without one) with `temperatureCoefficientUncertainty`; set
/// that to zero to freeze it (no online learning). Motion measurements update the bias only
/// (the slope is a "consider" state there: they are weak and short-lived).
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
    /// Bias change per degree Celsius, rad/s/°C, per axis: the starting value of the learnt
    /// coefficient. Default zero.
    public var temperatureCoefficientRadiansPerSecondPerCelsius: Vector3
    /// One standard deviation of that starting coefficient, rad/s/°C; zero freezes it (no
    /// online learning). Default 0.03 °/s/°C: MPU-6050 units typically drift 0.01–0.05 °/s per
    /// °C; the datasheet's worst case (±20 °/s over the range, PS §6.1, about 0.3 °/s/°C) is
    /// still learnt, only more slowly. A wider prior would let the first two rests, a degree
    /// apart, mistake the bias's random walk for a slope. With a bench temperature fit applied
    /// upstream, the residual's: see `FirmwareSettings.apply(calibration:)`.
    public var temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius: Double
    /// The largest learnt coefficient magnitude per axis, rad/s/°C. Default 0.5 °/s/°C, beyond
    /// the datasheet's worst case.
    public var maximumTemperatureCoefficientRadiansPerSecondPerCelsius: Double
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
      referenceTemperatureCelsius: Double = 25,
      temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius: Double = 0.03 * .pi / 180,
      maximumTemperatureCoefficientRadiansPerSecondPerCelsius: Double = 0.5 * .pi / 180
    ) {
      self.temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius =
        temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius
      self.maximumTemperatureCoefficientRadiansPerSecondPerCelsius =
        maximumTemperatureCoefficientRadiansPerSecondPerCelsius
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
      if !(temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius >= 0
        && temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius.isFinite)
      {
        return "gyro-bias temperature coefficient uncertainty must be zero or positive"
      }
      if !(maximumTemperatureCoefficientRadiansPerSecondPerCelsius > 0) {
        return "maximum gyro-bias temperature coefficient must be positive"
      }
      return nil
    }
  }

  public let settings: Settings
  /// The bias estimate at the reference temperature, rad/s, body axes.
  public private(set) var bias: Vector3
  /// The variance of the estimate per axis, (rad/s)².
  public private(set) var variance: Vector3
  /// The temperature coefficient c per axis, rad/s/°C: learnt from rests at different
  /// temperatures, starting from the settings' value.
  public private(set) var temperatureCoefficient: Vector3
  /// Its variance per axis, (rad/s/°C)².
  public private(set) var temperatureCoefficientVariance: Vector3
  /// The covariance of bias and coefficient per axis, (rad/s)²/°C.
  public private(set) var biasCoefficientCovariance: Vector3
  /// T_ref, °C: the temperature at which `bias` holds (see `moveReference(toCelsius:)`).
  public private(set) var referenceTemperatureCelsius: Double
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
    temperatureCoefficient = settings.temperatureCoefficientRadiansPerSecondPerCelsius
    let u = settings.temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius
    temperatureCoefficientVariance = Vector3(u * u, u * u, u * u)
    biasCoefficientCovariance = .zero
    referenceTemperatureCelsius = settings.referenceTemperatureCelsius
  }

  /// Whether the bias depends on temperature at all (a coefficient, or one being learnt).
  public var hasTemperatureModel: Bool {
    temperatureCoefficient != .zero || temperatureCoefficientVariance != .zero
  }

  /// `c · (T − T_ref)`: the bias at `temperatureCelsius` less the bias at the reference, rad/s;
  /// zero when the temperature is not finite.
  @inline(__always)
  public func temperatureTerm(atCelsius temperatureCelsius: Double) -> Vector3 {
    let d = temperatureCelsius - referenceTemperatureCelsius
    return d.isFinite ? temperatureCoefficient * d : Vector3(0, 0, 0)
  }

  /// Starts the model at `celsius`, the first sample's temperature: the bias moves along the
  /// starting coefficient to the bias there, and its variance grows by the coefficient's over
  /// the distance, because the configured uncertainty holds at the configured reference
  /// temperature, not wherever the unit happens to start. For a datasheet tolerance (±20 °/s)
  /// that is nothing; for a bench calibration's residual (0.01 °/s at the bench's 25.7 °C, say)
  /// started at 20 °C it is the slope's uncertainty over 5.7 °C. (Were the configured
  /// uncertainty taken to hold at the start, a calibrated unit started away from its bench
  /// temperature would be certain of a bias 0.9 °/s off, and refuse every rest as a slow turn.) The two states
  /// start uncorrelated, so a board that never changes temperature never learns a slope:
  /// nothing couples them until rests at different temperatures do.
  public mutating func start(atCelsius celsius: Double) {
    let d = celsius - referenceTemperatureCelsius
    guard d.isFinite else { return }
    bias += temperatureCoefficient * d
    variance += temperatureCoefficientVariance * (d * d)
    biasCoefficientCovariance = .zero
    referenceTemperatureCelsius = celsius
    limit()
  }

  /// Moves T_ref to `celsius` without changing what the model says: the bias becomes the bias
  /// there, and its variance that of the bias there. The estimator moves it to every rest's
  /// temperature, so that `bias` and `variance` describe the bias where it was last measured.
  public mutating func moveReference(toCelsius celsius: Double) {
    let d = celsius - referenceTemperatureCelsius
    guard d.isFinite, d != 0 else { return }
    let c = temperatureCoefficient
    let pcc = temperatureCoefficientVariance
    let pbc = biasCoefficientCovariance
    bias += c * d
    variance = Vector3(
      variance.x + 2 * d * pbc.x + d * d * pcc.x, variance.y + 2 * d * pbc.y + d * d * pcc.y,
      variance.z + 2 * d * pbc.z + d * d * pcc.z)
    biasCoefficientCovariance = pbc + pcc * d
    referenceTemperatureCelsius = celsius
    limit()
  }

  /// One standard deviation per axis, rad/s.
  public var uncertainty: Vector3 {
    Vector3(variance.x.squareRoot(), variance.y.squareRoot(), variance.z.squareRoot())
  }

  /// The bias at `temperatureCelsius` (the estimate when the temperature is not finite).
  @inline(__always)
  public func bias(atTemperature temperatureCelsius: Double) -> Vector3 {
    bias + temperatureTerm(atCelsius: temperatureCelsius)
  }

  /// Time passes without a measurement: the variance grows like a random walk's, up to the
  /// initial uncertainty (a variance `widen` took beyond it stays until a measurement).
  @inline(__always)
  public mutating func predict(seconds: Double) {
    let dv = randomWalkVariancePerSecond * seconds
    let m = maximumVariance
    let v = variance
    variance = Vector3(
      max(v.x, min(v.x + dv, m)), max(v.y, min(v.y + dv, m)), max(v.z, min(v.z + dv, m)))
    if biasCoefficientCovariance != .zero { keepPositive() }
  }

  /// A direct measurement of the bias at rest, at `temperatureOffsetCelsius` = T − T_ref:
  /// `meanRate` is the mean of `samples` raw gyro samples less the model's temperature term
  /// there (`temperatureTerm(atCelsius:)`), each with noise variance `sampleVariance`,
  /// (rad/s)². Updates the bias and, when T differs from T_ref, the temperature coefficient.
  public mutating func observeAtRest(
    meanRate: Vector3, samples: Int = 1, sampleVariance: Double, temperatureOffsetCelsius d: Double
  ) {
    // Without a temperature difference or a bias–slope correlation the slope cannot move:
    // the one-state update is the same arithmetic, cheaper.
    guard d.isFinite, temperatureCoefficientVariance != .zero,
      d != 0 || biasCoefficientCovariance != .zero
    else {
      observeAtRest(meanRate: meanRate, samples: samples, sampleVariance: sampleVariance)
      return
    }
    let r = sampleVariance / Double(max(samples, 1))
    let e = meanRate - bias
    var b = bias
    var c = temperatureCoefficient
    var pbb = variance
    var pbc = biasCoefficientCovariance
    var pcc = temperatureCoefficientVariance
    // Per axis: x = (bias, c), H = [1, d], K = P Hᵀ / (H P Hᵀ + r), P ← P − K (P Hᵀ)ᵀ.
    func update(
      _ e: Double, _ b: inout Double, _ c: inout Double, _ pbb: inout Double,
      _ pbc: inout Double, _ pcc: inout Double
    ) {
      let h0 = pbb + d * pbc
      let h1 = pbc + d * pcc
      let s = h0 + d * h1 + r
      guard s > 0 else { return }
      let k0 = h0 / s
      let k1 = h1 / s
      b += k0 * e
      c += k1 * e
      pbb -= k0 * h0
      pbc -= k0 * h1
      pcc -= k1 * h1
    }
    update(e.x, &b.x, &c.x, &pbb.x, &pbc.x, &pcc.x)
    update(e.y, &b.y, &c.y, &pbb.y, &pbc.y, &pcc.y)
    update(e.z, &b.z, &c.z, &pbb.z, &pbc.z, &pcc.z)
    bias = b
    variance = pbb
    biasCoefficientCovariance = pbc
    temperatureCoefficientVariance = pcc
    let m = settings.maximumTemperatureCoefficientRadiansPerSecondPerCelsius
    temperatureCoefficient = Vector3(
      max(-m, min(m, c.x)), max(-m, min(m, c.y)), max(-m, min(m, c.z)))
    limit()
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
    if biasCoefficientCovariance != .zero { shrinkCovariance(k) }
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
    // A clipped innovation moved the estimate by only part of what the gain would have: the
    // variance shrinks by the same part. (Shrinking it fully would make the estimate confident
    // of a bias it has not reached: an uncalibrated gyro switched on in motion, 10 °/s off,
    // would be certain of its vertical bias to 2 °/s while 11 °/s off, and its first rest
    // would be refused as a slow turn.)
    let used = abs(innovation) > limit ? limit / abs(innovation) : 1
    variance = variance - k.scaled(by: ph) * used
    if biasCoefficientCovariance != .zero { shrinkCovariance(k.scaled(by: h) * used) }
    self.limit()
  }

  /// A measurement of the bias alone with per-axis gain `k` (the coefficient held): the
  /// cross-covariance shrinks with the bias's variance, (1 − k)·P_bc, keeping P positive.
  @inline(never)
  mutating func shrinkCovariance(_ k: Vector3) {
    let p = biasCoefficientCovariance
    biasCoefficientCovariance = Vector3(p.x * (1 - k.x), p.y * (1 - k.y), p.z * (1 - k.z))
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
  ///
  /// Evidence may take the variance past the initial uncertainty, which caps only the random
  /// walk's prediction: a calibration that claimed 0.05 °/s and is 1 °/s off must become
  /// 1 °/s uncertain, or its rests are refused for ever. The cap here is
  /// `maximumBiasRadiansPerSecond`, the largest bias there can be.
  public mutating func widen(by variance: Double) {
    guard variance > 0 else { return }
    let largest = settings.maximumBiasRadiansPerSecond
    let m = max(maximumVariance, largest * largest)
    self.variance = Vector3(
      min(self.variance.x + variance, m), min(self.variance.y + variance, m),
      min(self.variance.z + variance, m))
    if biasCoefficientCovariance != .zero { keepPositive() }
  }

  /// After a variance was capped: |P_bc| ≤ √(P_bb · P_cc), so the covariance stays positive.
  @inline(never)
  mutating func keepPositive() {
    func clamp(_ pbc: Double, _ pbb: Double, _ pcc: Double) -> Double {
      let m = (pbb * pcc).squareRoot() * 0.999
      return max(-m, min(m, pbc))
    }
    let p = biasCoefficientCovariance
    let b = variance
    let c = temperatureCoefficientVariance
    biasCoefficientCovariance = Vector3(
      clamp(p.x, b.x, c.x), clamp(p.y, b.y, c.y), clamp(p.z, b.z, c.z))
  }

  /// Replaces the estimate (for instance with a stored value at start-up).
  public mutating func reset(bias: Vector3, uncertaintyRadiansPerSecond: Double) {
    self.bias = bias
    let v = uncertaintyRadiansPerSecond * uncertaintyRadiansPerSecond
    variance = Vector3(v, v, v)
    biasCoefficientCovariance = .zero
    limit()
  }
}
