import Geometry

/// The bias measurements taken at rest and not yet applied to the `GyroBiasEstimator`: owns
/// their sum and count.
///
/// Every sample at rest measures the bias; they are applied as one batch per block (a Kalman
/// update with n measurements of equal variance and no process noise between them is exactly
/// one update with their mean at variance r/n). Each measures the bias at the rest's
/// temperature, which is the model's reference: a rest moves the reference to its temperature
/// when it starts (`AttitudeEstimator.reanchor`), and the model holds the bias constant in time
/// within a rest, so a temperature creeping during one must not turn the random walk of those
/// seconds into a slope; slopes come from rests at different temperatures. The raw samples are
/// therefore summed as they are.
///
/// It also keeps the current rest's totals — the quiet window that declared it and every batch
/// applied since — so that the mean rate over the whole rest is at hand when a gyro-bias
/// capture asks for it (`AttitudeEstimator.captureGyroBias`). They grow once per block, never
/// per sample.
struct RestBiasMeasurements: Sendable {
  /// Sum of the measurements, rad/s, and their count.
  private var sum = Vector3(0, 0, 0)
  private var samples: Int = 0
  /// The current rest's raw gyro samples, summed (rad/s), and their count: the window that
  /// declared it and every batch applied since (`startRest`, `apply`).
  private var restSum = Vector3(0, 0, 0)
  private var restSamples: Int = 0
  /// Whether rests measure the bias (`GyroBiasEstimator.Settings.restEstimationEnabled`).
  let isEnabled: Bool

  init(isEnabled: Bool) { self.isEnabled = isEnabled }

  /// A rest was declared after a quiet window of `samples` raw gyro samples summing to
  /// `windowSum`, rad/s: the rest's totals start from it.
  mutating func startRest(windowSum: Vector3, samples n: Int) {
    restSum = windowSum
    restSamples = n
  }

  /// The current rest's raw gyro samples, summed (rad/s), and their count, including those not
  /// yet applied — which are dropped, without being applied: the caller adopts the rest's mean,
  /// in which they already count.
  mutating func takeRestTotals() -> (sum: Vector3, samples: Int) {
    restSum += sum
    restSamples &+= samples
    sum = Vector3(0, 0, 0)
    samples = 0
    return (restSum, restSamples)
  }

  /// One raw gyro sample at rest, rad/s.
  @inline(__always)
  mutating func add(gyro: Vector3) {
    sum = Vector3(sum.x + gyro.x, sum.y + gyro.y, sum.z + gyro.z)
    samples &+= 1
  }

  /// Applies the measurements collected so far to `bias` (one batch), each with the variance
  /// of one gyro sample's noise, (rad/s)², as measurements of the bias at the model's
  /// reference temperature.
  mutating func apply(to bias: inout GyroBiasEstimator, sampleVariance: Double) {
    let n = samples
    guard n > 0 else { return }
    let batch = sum
    restSum += batch
    restSamples &+= n
    sum = Vector3(0, 0, 0)
    samples = 0
    bias.observeAtRest(
      meanRate: batch * (1 / Double(n)), samples: n, sampleVariance: sampleVariance,
      temperatureOffsetCelsius: 0)
  }
}

/// The bias measurement in motion (VQF's motion bias estimation): owns the low-pass filters over
/// the first two rows of the rotation matrix and over R·b̂ that model it, and its noise.
///
/// A bias about a horizontal axis tilts the estimate and the inclination correction pulls it
/// back, so the correction rate plus LP(R b̂) measures LP(R) b. Once per block, two sequential
/// scalar updates of the full covariance.
///
/// It also keeps the evidence against the bias: the innovations of both rows, as a body-axes
/// vector (e₀·h₀ + e₁·h₁, the horizontal part of the bias error), low-pass filtered over
/// `motionEvidenceTimeConstant`. The Kalman filter explains an innovation by the uncertainty
/// it claims; when the low-passed error stays beyond `motionEvidenceSigmas` standard deviations
/// of the horizontal bias (and `motionEvidenceFloor`), the claim is wrong — a calibration that
/// no longer holds, a bias that jumped — and the bias is re-opened: its variance grows by the
/// error squared on every axis. The vertical too, though motion does not see it: whatever moved
/// the horizontal bias (a knock, a temperature step, another unit's file) moved the vertical
/// as well, and the next rest, no longer refused as a slow turn, measures it.
///
/// Re-opened, the bias is *relearnt*: until the evidence falls below half its floor (or a rest
/// measures the bias), the measurement's noise is `motionRelearningNoise`, a block's innovation
/// noise, instead of VQF's long-run figure, which assumes the bias known to
/// `motionUncertainty` and averages over minutes (its gain would take two minutes to undo a
/// few degrees per second; the loop-speed cap still holds the bias loop at ≥ 10 s).
struct MotionBiasMeasurement: Sendable {
  private var rowFilter = RowFilter()
  /// The low-passed innovations, body axes, rad/s.
  private var evidence = Vector3(0, 0, 0)
  private var evidenceGain: Double = 0
  private let evidenceTimeConstantSeconds: Double
  private let evidenceSigmasSquared: Double
  private let evidenceFloorSquared: Double
  private let relearningNoise: Double
  private var lowPass = LowPassCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)
  /// The measurement's noise variance, (rad/s)², and the largest gain it may have.
  private var noiseVariance: Double = 0
  /// How long the evidence has stood beyond its threshold, seconds.
  private var contradictedSeconds: Double = 0
  /// Re-opened and still contradicted: the measurement noise is `relearningNoiseVariance`.
  private(set) var isRelearning = false
  private var relearningNoiseVariance: Double = 0
  private var maximumGain: Double = 0
  private let isEnabled: Bool
  /// τ of the inclination filter, seconds, which the row filters model.
  private var timeConstantSeconds: Double
  /// The block period the coefficients are set for, seconds.
  private var blockPeriod: Double = 0
  private let randomWalk: Double
  private let uncertainty: Double
  private let minimumTimeConstantSeconds: Double

  init(bias: GyroBiasEstimator.Settings, noise: SensorNoise, timeConstantSeconds: Double) {
    isEnabled = bias.motionEstimationEnabled
    self.timeConstantSeconds = timeConstantSeconds
    randomWalk = noise.gyroBiasRandomWalk
    uncertainty = bias.motionUncertaintyRadiansPerSecond
    minimumTimeConstantSeconds = bias.motionMinimumTimeConstantSeconds
    evidenceTimeConstantSeconds = bias.motionEvidenceTimeConstantSeconds
    evidenceSigmasSquared = bias.motionEvidenceSigmas * bias.motionEvidenceSigmas
    evidenceFloorSquared =
      bias.motionEvidenceFloorRadiansPerSecond * bias.motionEvidenceFloorRadiansPerSecond
    relearningNoise = bias.motionRelearningNoiseRadiansPerSecond
  }

  /// Sets the coefficients for blocks of `blockPeriod` seconds.
  mutating func setBlockPeriod(_ blockPeriod: Double) {
    self.blockPeriod = blockPeriod
    lowPass = .butterworth(timeConstantSeconds: timeConstantSeconds, periodSeconds: blockPeriod)
    // VQF's choice of motion noise: with the random walk's variance growth V per block, a
    // measurement noise p²/V + p makes the long-run uncertainty settle at p.
    let k = randomWalk
    let v = max(k * k * blockPeriod, 1e-30)
    let p = uncertainty * uncertainty
    noiseVariance = p * p / v + p
    let relearning = relearningNoise
    relearningNoiseVariance = min(noiseVariance, relearning * relearning)
    maximumGain = min(1, blockPeriod / minimumTimeConstantSeconds)
    evidenceGain = min(1, blockPeriod / evidenceTimeConstantSeconds)
  }

  /// The inclination filter's τ changed (a retune): the row filters take its new cutoff and
  /// start again from the next block's rows, as after a rest. Their memory was the old filter's
  /// response, and a second-order section's states belong to its coefficients: kept under new
  /// ones they would replay a transient of several percent of the rows. In motion the next
  /// blocks' row is R itself instead of LP(R) until the filters have filled, and the
  /// innovation's term LP(R·b̂) − LP(R)·b̂, non-zero only while the bias moves, restarts at
  /// zero; the evidence against the bias is kept (it is a rate, not a filter state).
  mutating func setTimeConstant(_ seconds: Double) {
    timeConstantSeconds = seconds
    if blockPeriod > 0 {
      lowPass = .butterworth(timeConstantSeconds: seconds, periodSeconds: blockPeriod)
    }
    rowFilter = RowFilter()
  }

  /// A rejection turned back the corrections `dx`, `dy` (radians about the reference x and y
  /// axes, `r0` and `r1` in body axes) of the moments before it: an acceleration's doing, not
  /// the bias's. The evidence counted them as innovations (−dx per block's seconds along `r0`,
  /// through the low-pass: dx / T in all); they are taken back out.
  mutating func withdraw(correctionX dx: Double, _ dy: Double, rows r0: Vector3, _ r1: Vector3) {
    guard isEnabled else { return }
    evidence += (r0 * dx + r1 * dy) * (1 / evidenceTimeConstantSeconds)
  }

  /// A rest measured the bias: the motion's evidence against the old estimate is spent, and
  /// the filters start again from the rest's rows and the new bias. (Left running, the filtered
  /// R·b̂ held the bias from before the rest — up to 20 °/s before an uncalibrated unit's
  /// first — and the next seconds' innovations were that step, not the bias's error. At rest
  /// the rows do not change, so their filters lose nothing.)
  mutating func resetEvidence() {
    rowFilter = RowFilter()
    evidence = Vector3(0, 0, 0)
    contradictedSeconds = 0
    isRelearning = false
  }

  /// One block in motion: `r0`, `r1`, `r2` the rows of R (body → reference) at its end (`r2`
  /// is up in body axes), `dx`, `dy` the correction applied over its `seconds`. The filters
  /// always run; the bias learns only from a `trusted` block (the inclination filter ran at
  /// full speed). The evidence also counts a `corrected` block — the filter ran, slowed by a
  /// rejection or recovering from one: a wrong bias tilts the estimate steadily, which the
  /// rejection would otherwise take for a sustained acceleration and hide from the bias
  /// estimation for as long as the bias claims it can carry the attitude. Returns whether the
  /// evidence re-opened the bias.
  @inline(__always)
  mutating func measure(
    rows r0: Vector3, _ r1: Vector3, _ r2: Vector3, correction dx: Double, _ dy: Double,
    seconds: Double, trusted: Bool, corrected: Bool, bias estimator: inout GyroBiasEstimator
  ) -> Bool {
    let b = estimator.bias
    let (h0, h1, rb0, rb1) = rowFilter.update(
      r0, r1, r0.dot(b), r1.dot(b), coefficients: lowPass)
    guard corrected || trusted, isEnabled else { return false }
    // The correction rate plus LP(R b̂) measures LP(R) b; innovation e = y − LP(R) b̂.
    let perSecond = -1 / seconds
    let rate0 = dx * perSecond
    let rate1 = dy * perSecond
    let e0 = rate0 + rb0 - h0.dot(b)
    evidence += (h0 * e0 + h1 * (rate1 + rb1 - h1.dot(b)) - evidence) * evidenceGain
    let error = evidence.squaredLength
    var reopened = false
    if error > evidenceFloorSquared
      && error > evidenceSigmasSquared * estimator.horizontalVariance(up: r2)
    {
      // Persistent, not a passing correction: a one-off angle error (a gyro's scale error
      // over a fast turn, an accelerometer offset seen from a new pose) raises the evidence
      // by its angle over the time constant and lets it decay; a bias error holds it up.
      contradictedSeconds += seconds
      if contradictedSeconds >= 0.5 * evidenceTimeConstantSeconds {
        estimator.widen(by: error)
        reopened = true
        isRelearning = true
        contradictedSeconds = 0
      }
    } else {
      contradictedSeconds = 0
      if isRelearning && 4 * error < evidenceFloorSquared { isRelearning = false }
    }
    let r = isRelearning ? relearningNoiseVariance : noiseVariance
    guard trusted else { return reopened }
    estimator.observe(
      row: h0, innovation: e0, noiseVariance: r, maximumGain: maximumGain)
    estimator.observe(
      row: h1, innovation: rate1 + rb1 - h1.dot(estimator.bias),
      noiseVariance: r, maximumGain: maximumGain)
    return reopened
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
