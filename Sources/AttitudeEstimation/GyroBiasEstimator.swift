import Geometry

/// The gyroscope-bias estimate and its uncertainty: a small Kalman filter over the bias in body
/// axes, with a full 3 × 3 covariance, fed by two kinds of measurement.
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
/// capped so the bias loop stays slower than the inclination filter it listens to. The rows are
/// horizontal directions in body axes; with the full covariance a measurement shrinks the
/// uncertainty only along what it sees, so after long motion at a constant tilt the vertical
/// bias is still as uncertain as the random walk has made it.
///
/// **Evidence against the estimate** widens the covariance (`widen(by:)`):
/// a rest that disagrees by more than the uncertainty allows, rests refused one after another
/// with the same rate, motion innovations of one sign for tens of seconds. Without that a bias
/// that was once wrong and tight would never be corrected.
///
/// **Temperature, learnt online.** A MEMS gyro's zero-rate output moves with the die
/// temperature (PS §6.1: up to ±20 °/s over −40…+85 °C), and a board warms for minutes after
/// power-up. So each axis has a second state: the bias is `b(T) = bias + c · (T − T_ref)` with
/// `bias` the bias at `referenceTemperatureCelsius` and `c` the temperature coefficient, and the
/// six states (bias, c) carry a 6 × 6 covariance (three 3 × 3 blocks). A rest at temperature T measures
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
    /// Motion innovations that contradict the bias for this long re-open it: their low-pass
    /// (this time constant, seconds) is the horizontal bias error the motion shows. Default
    /// 10 s: an error shows in the inclination correction within a few of its time constants,
    /// and the low-pass averages out what a manoeuvre adds.
    public var motionEvidenceTimeConstantSeconds: Double
    /// The motion's evidence re-opens the bias when it exceeds this many standard deviations
    /// of the bias's horizontal part, and `motionEvidenceFloor`. Default 3.
    public var motionEvidenceSigmas: Double
    /// The smallest evidence that re-opens the bias, rad/s; it must also stand for half the
    /// time constant. Default 0.5 °/s: a one-off angle error (a 3 % gyro scale error over a
    /// fast 60° turn, an uncalibrated accelerometer seen from a new pose) raises the evidence by
    /// its angle over the time constant, 5° to reach the floor, and lets it decay; a bias error
    /// holds it up.
    public var motionEvidenceFloorRadiansPerSecond: Double
    /// The motion measurement's noise while the bias is relearnt after a re-opening, rad/s
    /// (one block's innovation). Default 0.5 °/s: about what a hand's motion leaves in the
    /// inclination correction over 0.1 s (chosen with 0.1 s blocks; a 0.2 s block averages the
    /// hand's motion more, so the figure errs on the slow side).
    public var motionRelearningNoiseRadiansPerSecond: Double
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
      motionEvidenceTimeConstantSeconds: Double = 10, motionEvidenceSigmas: Double = 3,
      motionEvidenceFloorRadiansPerSecond: Double = 0.5 * .pi / 180,
      motionRelearningNoiseRadiansPerSecond: Double = 0.5 * .pi / 180,
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
      self.motionEvidenceTimeConstantSeconds = motionEvidenceTimeConstantSeconds
      self.motionEvidenceSigmas = motionEvidenceSigmas
      self.motionEvidenceFloorRadiansPerSecond = motionEvidenceFloorRadiansPerSecond
      self.motionRelearningNoiseRadiansPerSecond = motionRelearningNoiseRadiansPerSecond
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
      if !(motionEvidenceTimeConstantSeconds > 0) {
        return "motion evidence time constant must be positive"
      }
      if !(motionEvidenceSigmas > 0) || !(motionEvidenceFloorRadiansPerSecond >= 0) {
        return "motion evidence threshold must be positive"
      }
      if !(motionRelearningNoiseRadiansPerSecond > 0) {
        return "motion relearning noise must be positive"
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
  /// The covariance of the bias estimate, (rad/s)², body axes: a full 3 × 3 matrix. Motion
  /// measures only the bias's horizontal part, which on a tilted board is a combination of
  /// body axes; a per-axis (diagonal) covariance would let those measurements shrink every
  /// axis they touch and claim, after long motion at a constant tilt, a vertical bias nothing
  /// has observed.
  public var biasCovariance: Matrix3 { pbb.matrix }
  /// `biasCovariance`, as stored.
  private var pbb: SymmetricMatrix3
  /// The temperature coefficient c per axis, rad/s/°C: learnt from rests at different
  /// temperatures, starting from the settings' value.
  public private(set) var temperatureCoefficient: Vector3
  /// The covariance of the coefficients, (rad/s/°C)².
  public var temperatureCoefficientCovariance: Matrix3 { pcc.matrix }
  /// `temperatureCoefficientCovariance`, as stored.
  private var pcc: SymmetricMatrix3
  /// The cross-covariance of bias (rows) and coefficient (columns), (rad/s)²/°C.
  public private(set) var biasCoefficientCrossCovariance: Matrix3
  /// Whether the cross-covariance is not zero (it is zero until rests at two temperatures).
  private var hasCrossCovariance = false
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
    pbb = SymmetricMatrix3(diagonal: Vector3(v, v, v))
    maximumVariance = v
    randomWalkVariancePerSecond = noise.gyroBiasRandomWalk * noise.gyroBiasRandomWalk
    temperatureCoefficient = settings.temperatureCoefficientRadiansPerSecondPerCelsius
    let u = settings.temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius
    pcc = SymmetricMatrix3(diagonal: Vector3(u * u, u * u, u * u))
    biasCoefficientCrossCovariance = Self.zeroMatrix
    referenceTemperatureCelsius = settings.referenceTemperatureCelsius
  }

  private static let zeroMatrix = Matrix3(diagonal: .zero)

  /// The variance of the estimate per axis (the covariance's diagonal), (rad/s)².
  @inline(__always)
  public var variance: Vector3 { pbb.diagonal }

  /// The coefficients' variance per axis, (rad/s/°C)².
  public var temperatureCoefficientVariance: Vector3 { pcc.diagonal }

  /// The covariance of each axis's bias and its own coefficient, (rad/s)²/°C.
  public var biasCoefficientCovariance: Vector3 { biasCoefficientCrossCovariance.diagonal }

  /// The variance of the bias about `up` (a unit vector, body axes): uᵀ P u, (rad/s)². The
  /// heading drifts with this part; only a rest measures it.
  @inline(__always)
  public func verticalVariance(up u: Vector3) -> Double { pbb.quadraticForm(u) }

  /// The variance of the bias's horizontal part, both directions together: trace(P) − uᵀ P u,
  /// (rad/s)². The tilt drifts with this part; rests and motion measure it.
  @inline(__always)
  public func horizontalVariance(up u: Vector3) -> Double {
    pbb.trace - pbb.quadraticForm(u)
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
  /// temperature would be certain of a bias 0.9 °/s off, and refuse every rest as a slow turn.)
  /// The two states start uncorrelated, so a board that never changes temperature never learns
  /// a slope: nothing couples them until rests at different temperatures do.
  public mutating func start(atCelsius celsius: Double) {
    let d = celsius - referenceTemperatureCelsius
    guard d.isFinite else { return }
    bias += temperatureCoefficient * d
    pbb = pbb + pcc * (d * d)
    biasCoefficientCrossCovariance = Self.zeroMatrix
    hasCrossCovariance = false
    referenceTemperatureCelsius = celsius
    limit()
  }

  /// Moves T_ref to `celsius` without changing what the model says: the bias becomes the bias
  /// there, and its covariance that of the bias there. The estimator moves it to every rest's
  /// temperature, so that `bias` and `biasCovariance` describe the bias where it was last
  /// measured.
  public mutating func moveReference(toCelsius celsius: Double) {
    let d = celsius - referenceTemperatureCelsius
    guard d.isFinite, d != 0 else { return }
    let pcc = temperatureCoefficientCovariance
    let pbc = biasCoefficientCrossCovariance
    bias += temperatureCoefficient * d
    // b' = b + d·c: P_bb' = P_bb + d (P_bc + P_bcᵀ) + d² P_cc, P_bc' = P_bc + d P_cc.
    pbb = SymmetricMatrix3(
      symmetrizing: biasCovariance + (pbc + pbc.transposed) * d + pcc * (d * d))
    biasCoefficientCrossCovariance = pbc + pcc * d
    hasCrossCovariance = biasCoefficientCrossCovariance != Self.zeroMatrix
    referenceTemperatureCelsius = celsius
    limit()
  }

  /// One standard deviation per axis, rad/s.
  public var uncertainty: Vector3 {
    let v = variance
    return Vector3(v.x.squareRoot(), v.y.squareRoot(), v.z.squareRoot())
  }

  /// The bias at `temperatureCelsius` (the estimate when the temperature is not finite).
  @inline(__always)
  public func bias(atTemperature temperatureCelsius: Double) -> Vector3 {
    bias + temperatureTerm(atCelsius: temperatureCelsius)
  }

  /// Time passes without a measurement: each axis's variance grows like a random walk's, up
  /// to the initial uncertainty (a variance `widen` took beyond it stays until a measurement).
  /// Only the diagonal grows, by a non-negative amount, so the covariance stays positive.
  @inline(__always)
  public mutating func predict(seconds: Double) {
    let dv = randomWalkVariancePerSecond * seconds
    let m = maximumVariance
    let v = variance
    let grow = Vector3(
      max(0, min(dv, m - v.x)), max(0, min(dv, m - v.y)), max(0, min(dv, m - v.z)))
    if grow != .zero { pbb = pbb.addingDiagonal(grow) }
  }

  /// A direct measurement of the bias at rest, at `temperatureOffsetCelsius` = T − T_ref:
  /// `meanRate` is the mean of `samples` raw gyro samples less the model's temperature term
  /// there (`temperatureTerm(atCelsius:)`), each with noise variance `sampleVariance`,
  /// (rad/s)². Updates the bias and, when T differs from T_ref or the two are correlated, the
  /// temperature coefficient.
  ///
  /// The state is (bias, c), six numbers; the measurement `H = [I, d·I]` with noise
  /// `r·I` (r = sampleVariance / samples): K = P Hᵀ S⁻¹, S = H P Hᵀ + r I, one 3 × 3 solve.
  public mutating func observeAtRest(
    meanRate: Vector3, samples: Int = 1, sampleVariance: Double, temperatureOffsetCelsius d: Double
  ) {
    let d = d.isFinite && self.pcc.diagonal != .zero ? d : 0
    let r = sampleVariance / Double(max(samples, 1))
    let e = meanRate - bias
    let pbb = biasCovariance
    let pbc = biasCoefficientCrossCovariance
    let pcc = temperatureCoefficientCovariance
    // P Hᵀ: its bias rows A = P_bb + d·P_bc, its coefficient rows C = P_bcᵀ + d·P_cc.
    let coupled = d != 0 || hasCrossCovariance
    let a = d == 0 ? pbb : pbb + pbc * d
    let c = coupled ? pbc.transposed + pcc * d : Self.zeroMatrix
    let s = (a + c * d + Matrix3(diagonal: Vector3(r, r, r))).symmetrized
    guard let sInverse = Self.positiveDefiniteInverse(s) else { return }
    let kb = a * sInverse
    bias += kb * e
    self.pbb = SymmetricMatrix3(symmetrizing: pbb - kb * a.transposed)
    if coupled {
      let kc = c * sInverse
      let coefficient = temperatureCoefficient + kc * e
      biasCoefficientCrossCovariance = pbc - kb * c.transposed
      hasCrossCovariance = biasCoefficientCrossCovariance != Self.zeroMatrix
      self.pcc = SymmetricMatrix3(symmetrizing: pcc - kc * c.transposed)
      let m = settings.maximumTemperatureCoefficientRadiansPerSecondPerCelsius
      temperatureCoefficient = Vector3(
        max(-m, min(m, coefficient.x)), max(-m, min(m, coefficient.y)),
        max(-m, min(m, coefficient.z)))
    }
    limit()
  }

  /// A direct measurement of the bias at rest: `meanRate` is the mean of `samples` raw gyro
  /// samples (temperature-compensated to the reference), each with noise variance
  /// `sampleVariance`, (rad/s)².
  public mutating func observeAtRest(meanRate: Vector3, samples: Int = 1, sampleVariance: Double) {
    observeAtRest(
      meanRate: meanRate, samples: samples, sampleVariance: sampleVariance,
      temperatureOffsetCelsius: 0)
  }

  /// The inverse of a symmetric positive-definite 3 × 3 matrix (the adjugate over the
  /// determinant), or `nil` when it is not positive definite. No absolute threshold: after a
  /// long rest the covariance is of order 10⁻¹⁰ (rad/s)², and its determinant 10⁻³⁰.
  @inline(__always)
  static func positiveDefiniteInverse(_ m: Matrix3) -> Matrix3? {
    let c0 = m.row1.cross(m.row2)
    let det = m.row0.dot(c0)
    guard det > 0, det.isFinite, m.row0.x > 0 else { return nil }
    let c1 = m.row2.cross(m.row0)
    let c2 = m.row0.cross(m.row1)
    // For a symmetric matrix the adjugate is symmetric: its rows are these cross products.
    return Matrix3(rows: c0, c1, c2) * (1 / det)
  }

  /// One scalar measurement in motion: `innovation` ≈ `row · (b − b̂)`, rad/s, with noise
  /// variance `noiseVariance`. `maximumGain` caps the fraction of the innovation applied
  /// (the loop-speed limit for this update interval). The coefficient is a "consider" state
  /// here (Schmidt): it is not updated, but its correlation with the bias is.
  @inline(__always)
  public mutating func observe(
    row h: Vector3, innovation: Double, noiseVariance: Double, maximumGain: Double
  ) {
    let ph = pbb * h
    let hph = ph.dot(h)
    guard hph > 0 else { return }
    // S ≥ hph / maximumGain keeps hᵀK ≤ maximumGain.
    let s = max(hph + noiseVariance, hph / maximumGain)
    let limit = settings.motionInnovationLimitRadiansPerSecond
    let e = max(-limit, min(limit, innovation))
    let k = ph * (1 / s)
    bias += k * e
    // A clipped innovation moved the estimate by only part of what the gain would have: the
    // covariance shrinks by the same part. (Shrinking it fully would make the estimate confident
    // of a bias it has not reached: an uncalibrated gyro switched on in motion, 10 °/s off,
    // would be certain of its bias to 2 °/s while 11 °/s off, and its first rest would be
    // refused as a slow turn.) Only along P·h: a direction the row does not see keeps its
    // variance.
    let used = abs(innovation) > limit ? limit / abs(innovation) : 1
    pbb = pbb.subtractingOuter(ph, scaledBy: used / s)
    if hasCrossCovariance { shrinkCrossCovariance(k * used, h) }
    self.limit()
  }

  /// A measurement of the bias alone with gain `k` on row `h` (the coefficient held): the
  /// cross-covariance becomes (I − k hᵀ)·P_bc, and stays within what keeps P positive.
  @inline(never)
  mutating func shrinkCrossCovariance(_ k: Vector3, _ h: Vector3) {
    let p = biasCoefficientCrossCovariance
    biasCoefficientCrossCovariance = p - Matrix3.outer(k, p.transposed * h)
    keepPositive()
  }

  @inline(__always)
  mutating func limit() {
    let m = settings.maximumBiasRadiansPerSecond
    let clipped = Vector3(
      max(-m, min(m, bias.x)), max(-m, min(m, bias.y)), max(-m, min(m, bias.z)))
    isLimited = clipped != bias
    bias = clipped
  }

  /// The largest a variance may become through `widen`: `maximumBiasRadiansPerSecond`
  /// squared (the largest bias there can be), or the initial variance if larger.
  private var widestVariance: Double {
    let largest = settings.maximumBiasRadiansPerSecond
    return max(maximumVariance, largest * largest)
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
    let m = widestVariance
    let v = self.variance
    let grow = Vector3(
      max(0, min(variance, m - v.x)), max(0, min(variance, m - v.y)),
      max(0, min(variance, m - v.z)))
    pbb = pbb.addingDiagonal(grow)
  }

  /// After an approximate update: |P_bc[i][j]| ≤ √(P_bb[i][i] · P_cc[j][j]), a bound every
  /// positive covariance meets.
  @inline(never)
  mutating func keepPositive() {
    let b = variance
    let c = temperatureCoefficientVariance
    let p = biasCoefficientCrossCovariance
    func clamp(_ row: Vector3, _ pbb: Double) -> Vector3 {
      func one(_ x: Double, _ pcc: Double) -> Double {
        let m = (pbb * pcc).squareRoot() * 0.999
        return max(-m, min(m, x))
      }
      return Vector3(one(row.x, c.x), one(row.y, c.y), one(row.z, c.z))
    }
    biasCoefficientCrossCovariance = Matrix3(
      rows: clamp(p.row0, b.x), clamp(p.row1, b.y), clamp(p.row2, b.z))
  }

  /// Replaces the estimate (for instance with a stored value at start-up).
  public mutating func reset(bias: Vector3, uncertaintyRadiansPerSecond: Double) {
    self.bias = bias
    let v = uncertaintyRadiansPerSecond * uncertaintyRadiansPerSecond
    pbb = SymmetricMatrix3(diagonal: Vector3(v, v, v))
    biasCoefficientCrossCovariance = Self.zeroMatrix
    hasCrossCovariance = false
    limit()
  }
}
