import Geometry

/// The bias measurements taken at rest and not yet applied to the `GyroBiasEstimator`: owns
/// their sum and count.
///
/// Every sample at rest measures the bias; they are applied as one batch per block (a Kalman
/// update with n measurements of equal variance and no process noise between them is exactly
/// one update with their mean at variance r/n). Each measures the bias at the rest's
/// temperature: the model holds the bias constant in time within a rest, so a temperature
/// creeping during one must not turn the random walk of those seconds into a slope; slopes
/// come from rests at different temperatures.
struct RestBiasMeasurements: Sendable {
  /// Sum of the measurements, rad/s, and their count.
  private var sum = Vector3(0, 0, 0)
  private var samples: Int = 0
  /// T − T_ref when the current rest was declared, °C (0 without a temperature): every
  /// measurement of a rest is of the bias at this temperature.
  private var temperatureOffset: Double = 0
  /// Whether rests measure the bias (`GyroBiasEstimator.Settings.restEstimationEnabled`).
  let isEnabled: Bool
  private let hasTemperatureModel: Bool

  init(isEnabled: Bool, hasTemperatureModel: Bool) {
    self.isEnabled = isEnabled
    self.hasTemperatureModel = hasTemperatureModel
  }

  /// One raw gyro sample at rest, rad/s, measured against the model's slope `coefficient`.
  @inline(__always)
  mutating func add(gyro: Vector3, temperatureCoefficient: Vector3) {
    let m = hasTemperatureModel ? gyro - temperatureCoefficient * temperatureOffset : gyro
    sum = Vector3(sum.x + m.x, sum.y + m.y, sum.z + m.z)
    samples &+= 1
  }

  /// A rest was declared with the model's reference moved to its temperature.
  mutating func restAtReference() { temperatureOffset = 0 }

  /// Applies the measurements collected so far to `bias` (one batch), each with the variance
  /// of one gyro sample's noise, (rad/s)².
  mutating func apply(to bias: inout GyroBiasEstimator, sampleVariance: Double) {
    let n = samples
    guard n > 0 else { return }
    bias.observeAtRest(
      meanRate: sum * (1 / Double(n)), samples: n, sampleVariance: sampleVariance,
      temperatureOffsetCelsius: temperatureOffset)
    sum = Vector3(0, 0, 0)
    samples = 0
  }
}

/// The bias measurement in motion (VQF's motion bias estimation): owns the low-pass filters over
/// the first two rows of the rotation matrix and over R·b̂ that model it, and its noise.
///
/// A bias about a horizontal axis tilts the estimate and the inclination correction pulls it
/// back, so the correction rate plus LP(R b̂) measures LP(R) b. Once per block, with a diagonal
/// covariance and sequential scalar updates.
struct MotionBiasMeasurement: Sendable {
  private var rowFilter = RowFilter()
  private var lowPass = LowPassCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)
  /// The measurement's noise variance, (rad/s)², and the largest gain it may have.
  private var noiseVariance: Double = 0
  private var maximumGain: Double = 0
  private let isEnabled: Bool
  private let timeConstantSeconds: Double
  private let randomWalk: Double
  private let uncertainty: Double
  private let minimumTimeConstantSeconds: Double

  init(bias: GyroBiasEstimator.Settings, noise: SensorNoise, timeConstantSeconds: Double) {
    isEnabled = bias.motionEstimationEnabled
    self.timeConstantSeconds = timeConstantSeconds
    randomWalk = noise.gyroBiasRandomWalk
    uncertainty = bias.motionUncertaintyRadiansPerSecond
    minimumTimeConstantSeconds = bias.motionMinimumTimeConstantSeconds
  }

  /// Sets the coefficients for blocks of `blockPeriod` seconds.
  mutating func setBlockPeriod(_ blockPeriod: Double) {
    lowPass = .butterworth(timeConstantSeconds: timeConstantSeconds, periodSeconds: blockPeriod)
    // VQF's choice of motion noise: with the random walk's variance growth V per block, a
    // measurement noise p²/V + p makes the long-run uncertainty settle at p.
    let k = randomWalk
    let v = max(k * k * blockPeriod, 1e-30)
    let p = uncertainty * uncertainty
    noiseVariance = p * p / v + p
    maximumGain = min(1, blockPeriod / minimumTimeConstantSeconds)
  }

  /// One block in motion: `r0`, `r1` the first two rows of R (body → reference) at its end,
  /// `dx`, `dy` the correction applied over its `seconds`. The filters always run; the bias
  /// learns only from a `trusted` block (the inclination filter ran at full speed).
  @inline(__always)
  mutating func measure(
    rows r0: Vector3, _ r1: Vector3, correction dx: Double, _ dy: Double, seconds: Double,
    trusted: Bool, bias estimator: inout GyroBiasEstimator
  ) {
    let b = estimator.bias
    let (h0, h1, rb0, rb1) = rowFilter.update(
      r0, r1, r0.dot(b), r1.dot(b), coefficients: lowPass)
    guard trusted, isEnabled else { return }
    // The correction rate plus LP(R b̂) measures LP(R) b; innovation e = y − LP(R) b̂.
    let perSecond = -1 / seconds
    let rate0 = dx * perSecond
    let rate1 = dy * perSecond
    estimator.observe(
      row: h0, innovation: rate0 + rb0 - h0.dot(estimator.bias),
      noiseVariance: noiseVariance, maximumGain: maximumGain)
    estimator.observe(
      row: h1, innovation: rate1 + rb1 - h1.dot(estimator.bias),
      noiseVariance: noiseVariance, maximumGain: maximumGain)
  }
}

/// Low-pass filters (second-order, block rate) over the first two rows of the rotation matrix
/// and over R·b̂, for the motion-bias measurement model.
struct RowFilter: Hashable, Sendable {
  private var started = false
  private var r0s1: Vector3 = .zero
  private var r0s2: Vector3 = .zero
  private var r1s1: Vector3 = .zero
  private var r1s2: Vector3 = .zero
  private var b0s1: Double = 0
  private var b0s2: Double = 0
  private var b1s1: Double = 0
  private var b1s2: Double = 0

  init() {}

  @inline(__always)
  mutating func update(
    _ r0: Vector3, _ r1: Vector3, _ rb0: Double, _ rb1: Double, coefficients c: LowPassCoefficients
  ) -> (Vector3, Vector3, Double, Double) {
    if !started {
      started = true
      (r0s1, r0s2) = c.steadyStates(r0)
      (r1s1, r1s2) = c.steadyStates(r1)
      (b0s1, b0s2) = c.steadyStates(rb0)
      (b1s1, b1s2) = c.steadyStates(rb1)
    }
    let y0 = r0 * c.b0 + r0s1
    r0s1 = r0 * c.b1 - y0 * c.a1 + r0s2
    r0s2 = r0 * c.b2 - y0 * c.a2
    let y1 = r1 * c.b0 + r1s1
    r1s1 = r1 * c.b1 - y1 * c.a1 + r1s2
    r1s2 = r1 * c.b2 - y1 * c.a2
    let z0 = rb0 * c.b0 + b0s1
    b0s1 = rb0 * c.b1 - z0 * c.a1 + b0s2
    b0s2 = rb0 * c.b2 - z0 * c.a2
    let z1 = rb1 * c.b0 + b1s1
    b1s1 = rb1 * c.b1 - z1 * c.a1 + b1s2
    b1s2 = rb1 * c.b2 - z1 * c.a2
    return (y0, y1, z0, z1)
  }
}
