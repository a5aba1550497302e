import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Attitude from a gyroscope and an accelerometer: sample clock → rest detector → gyro-bias
/// estimator → complementary filter with adaptive gain → outputs.
///
/// Numbers in, numbers out: no hardware, no clock, no allocation, no Foundation. Time enters only
/// as the samples' timestamps, every timeout is a sample count, and the per-sample path uses
/// only `+ − × ÷` and square roots, so the same samples give bit-identical estimates on every
/// machine.
///
/// ## The algorithm, one sample
///
/// 1. **Timing** (`SampleClock`): the real interval since the last sample; the period estimate;
///    gaps and missed samples. A non-increasing timestamp is rejected and not integrated.
/// 2. **Rest** (`RestDetector`): quiet gyro and accelerometer (deviations from their own window
///    means) for 1.5 s, consistent with the bias estimate. Rest ends on the sample that moves.
/// 3. **Bias** (`GyroBiasEstimator`): predicted as a random walk; at rest measured by every
///    sample; in motion, its horizontal part measured by the inclination correction.
/// 4. **Propagation**: the attitude turns by the bias-corrected rate over the real interval
///    (third-order series of the exponential map, no trigonometry). At rest it does not turn:
///    the heading is held (seed 000's zero-velocity update).
/// 5. **Inclination correction**: the specific force is mapped into the reference frame,
///    low-pass filtered there (second-order Butterworth, τ = 3 s), and the attitude is turned
///    about a horizontal axis so that the filtered vector points straight up. Because the
///    filter runs in the (almost inertial) reference frame, the body's rotation does not smear
///    it, and a hand's back-and-forth accelerations average out, as in VQF (Laidig & Seel
///    2023). The filter's memory is rotated with every correction, so it stays consistent with
///    the corrected frame. The filter runs once per block; within a block the correction
///    accrues in the attitude at the rate the filter's output drifts (added to the propagated
///    rate, in body axes), and the block's end applies what that prediction missed.
/// 6. **Acceleration rejection** (adaptive gain): a *sustained* horizontal acceleration (the
///    specific force against its slow mean, filtered over a second) slows the inclination
///    filter's clock down to a stop, after turning back the corrections its onset caused;
///    rejecting for more than 10 s switches to recovery (the accelerometer is trusted again).
/// 7. **Gaps**: a gap is integrated with the rate after it (and the inclination filter does not
///    run over it); after one of 0.2 s or more in which the body may have tilted (it was
///    turning, or the reading after it is gravity alone pointing elsewhere) the tilt restarts
///    as at start (`reacquire`).
/// 8. **Rest start** re-anchors: the bias takes the mean rate of the whole quiet window, the
///    heading drift integrated during the window is undone, the heading drift implied by the
///    bias change since the last rest is taken back, and the tilt is taken from the window's
///    mean acceleration.
///
/// The full description, with every setting's default and the reason for it, is in this
/// target's README.md.
///
/// ## Frames and what yaw means
///
/// The attitude maps body-frame vectors into the reference frame: right-handed, z up, x where
/// the smallest rotation levelling the first accelerometer reading takes the body's x axis
/// (the body's x projected on the horizontal when it starts tilted about one axis; 8.2° from
/// that projection at 30° roll and 30° pitch). With no magnetometer nothing
/// measures heading: it is relative to the start and drifts by the residual vertical gyro bias
/// times the time spent moving (about 0.01 °/s after a rest, so ~0.6° per minute of motion;
/// nothing while at rest).
///
/// ## Cost
///
/// All state is stored inline (a value type: no heap, no exclusivity checks). Filter
/// coefficients are recomputed only when the period estimate moves by more than 0.5 %.
/// Housekeeping — bias prediction, the motion-bias measurement, the sustained-acceleration
/// detector, the inclination filter, the rest bias measurements — runs once per 0.1 s block,
/// not every sample; so does everything derived from state that changes only there or at rest
/// transitions (the state flags, the up direction the rest detector checks at rest). Per sample
/// remain: the sample clock, the rest detector's quiet test and window means, the propagation,
/// the specific force mapped into the reference frame, and the outputs. The measured cost and
/// where it goes are in this target's README.md (Cost).
public struct AttitudeEstimator: Sendable {
  public let settings: Settings

  /// The sample clock (period estimate, gap and missed-sample counters).
  public private(set) var clock: SampleClock
  /// The rest detector.
  public private(set) var restDetector: RestDetector
  /// The gyro-bias estimate.
  public private(set) var biasEstimator: GyroBiasEstimator
  /// What the rest detector decided so far (see `RestStatistics`).
  public private(set) var restStatistics = RestStatistics()

  // MARK: Per-sample state

  /// Body → reference attitude; renormalised whenever a block's correction is applied (the
  /// propagation keeps its norm to O(θ⁶) in between).
  var q = Quaternion(w: 1, x: 0, y: 0, z: 0)
  /// Inclination filter memory (reference frame): the filtered specific force (m/s²) and its
  /// rate of change (m/s³).
  var s1 = Vector3(0, 0, 0)
  var s2 = Vector3(0, 0, 0)
  /// Start-up running sum (reference frame) and count.
  var initialSum = Vector3(0, 0, 0)
  var initialCount: Int = 0
  var isInitialising = true
  /// The estimated up direction in body axes (the third row of the attitude's rotation
  /// matrix), for the rest detector's consistency checks; computed when needed.
  var up: Vector3 {
    Vector3(
      2 * (q.x * q.z - q.w * q.y), 2 * (q.y * q.z + q.w * q.x), 1 - 2 * (q.x * q.x + q.y * q.y))
  }
  /// Acceleration rejection: the accelerometer's weight, fixed for a block.
  var rejection: AccelerationRejection
  /// Bias measurements at rest not yet applied, and the bias measurement in motion.
  var restMeasurements: RestBiasMeasurements
  var motionBias: MotionBiasMeasurement
  /// Rest anchoring (heading hold).
  var anchoring: RestAnchoring
  /// Gap reacquisition.
  var reacquisition: GapReacquisition
  /// The flags that change only at block boundaries and events (rejection, recovery,
  /// start-up, rest, bias limited), as raw bits.
  var blockFlags: UInt16 = EstimateFlags.initialising.rawValue
  /// The up direction (body axes) for the rest detector's checks during a rest; +z otherwise.
  var restUp = Vector3(0, 0, 1)

  // MARK: Block state (every `blockSeconds`)

  var blockCorrectionX: Double = 0
  var blockCorrectionY: Double = 0
  /// The rate at which the filter's output turns away from vertical after the last block's
  /// correction, rad/s about the reference x and y axes: the correction that accrues within
  /// the block, turned into the attitude sample by sample.
  var correctionRateX: Double = 0
  var correctionRateY: Double = 0
  /// The same rate in body axes (Rᵀ(cx, cy, 0) with the attitude at the block's start), added to
  /// the propagated rate: the correction accrues through the propagation at no cost per sample.
  var bodyCorrectionRate = Vector3(0, 0, 0)
  /// The time over which the correction accrued in this block (samples propagated), seconds,
  /// and its sum over the block's summed specific forces (each was mapped with the correction
  /// accrued by then).
  var accruedSeconds: Double = 0
  var accruedSecondsSum: Double = 0
  var blockForce = Vector3(0, 0, 0)
  /// Clipped samples in the block (their specific force is not used).
  var blockClippedSamples: Int = 0
  /// The block's time the accelerometer did not observe: clipped samples' intervals, and a
  /// gap's beyond the sample after it (whose reading stands for one period, not for the gap).
  var blockUnobservedSeconds: Double = 0
  /// The block's samples whose specific force is summed.
  var blockForceSamples: Int { blockSamples - blockClippedSamples }
  var blockSeconds: Double = 0
  /// The time the block's readings stand for, seconds (the filter's step).
  var blockFilterSeconds: Double { blockSeconds - blockUnobservedSeconds }
  var blockSamples: Int = 0

  // MARK: Coefficients (recomputed when the period estimate moves by 0.5 %)

  var coefficientPeriod: Double = 0
  /// The coefficients are recomputed when the period estimate leaves this band (±0.5 %).
  var coefficientPeriodLow: Double = 0
  var coefficientPeriodHigh: Double = 0
  /// The second-order inclination filter's cutoff ω_c = √2/τ, rad/s, and its squares.
  var filterRate: Double = 0.47
  var filterRateSquared: Double = 0.22
  var filterDamping: Double = 0.67
  var firstOrderRate: Double = 1
  var gyroSampleVariance: Double = 0
  var initialLimit: Int = 1
  var blockLimit: Int = 1
  let gravity: Double
  let inverseGravity: Double
  let isSecondOrder: Bool
  let hasTemperatureModel: Bool

  /// Gaps after which the tilt was restarted (`InclinationSettings.reacquisitionGapSeconds`),
  /// and stretches of suspect samples after which it was (`distrustRecentSamples`).
  public var gapReacquisitions: Int { reacquisition.count }

  /// Housekeeping (bias prediction, motion-bias measurement, acceleration rejection) runs once
  /// per block of this length, seconds, not every sample.
  static let blockSeconds = 0.1

  /// The largest input a sample may carry: the rate (rad/s) and the specific force (m/s²)
  /// vectors together, √(|ω|² + |f|²) ≤ 10⁴ — far beyond any MEMS sensor (the MPU-6050's full
  /// scales are 35 rad/s and 157 m/s²; high-g accelerometers reach 4000 m/s²). A sample beyond
  /// it — a corrupt CSV row, a glitch — is refused like a NaN (`.invalidInput`), where it would
  /// otherwise turn the attitude to NaN for good. One sum of squares checks both: a NaN or an
  /// infinity fails the comparison too.
  public static let maximumInput = 10_000.0
  static let inputLimitSquared = maximumInput * maximumInput

  /// Whether a sample's rate and force are numbers a sensor can give (`maximumInput`; a NaN
  /// fails the comparison, an infinity or a square that overflows exceeds it).
  @inline(__always)
  static func isPlausible(gyro g: Vector3, accel a: Vector3) -> Bool {
    g.x * g.x + g.y * g.y + g.z * g.z + a.x * a.x + a.y * a.y + a.z * a.z <= inputLimitSquared
  }

  /// The largest rotation a step integrates with the third-order series, radians squared:
  /// 0.5 rad (2000 °/s at 70 Hz), where its relative angle error is 3 × 10⁻⁵. A longer step
  /// (a gap while turning) is integrated exactly (`largeStep`).
  static let seriesStepLimitSquared = 0.25

  /// The bias uncertainty about the vertical (1σ) above which estimates are flagged
  /// `.headingUncertain`: 0.1 °/s, 6° of heading a minute of motion.
  public static let headingUncertainBiasRadiansPerSecond = 0.1 * Double.pi / 180

  /// A new estimator. Check `settings.problem` first when the settings come from a person.
  public init(settings: Settings = .default) {
    self.settings = settings
    clock = SampleClock(settings: settings.sampleClock)
    let period = settings.sampleClock.nominalPeriodSeconds ?? 0.01
    restDetector = RestDetector(settings: settings.rest, samplePeriodSeconds: period)
    biasEstimator = GyroBiasEstimator(settings: settings.bias, noise: settings.noise)
    gravity = settings.gravityMetersPerSecondSquared
    inverseGravity = 1 / settings.gravityMetersPerSecondSquared
    isSecondOrder = settings.inclination.order == .second
    hasTemperatureModel = biasEstimator.hasTemperatureModel
    rejection = AccelerationRejection(
      settings: settings.accelerationRejection, gravity: settings.gravityMetersPerSecondSquared)
    restMeasurements = RestBiasMeasurements(
      isEnabled: settings.bias.restEstimationEnabled, hasTemperatureModel: hasTemperatureModel)
    motionBias = MotionBiasMeasurement(
      bias: settings.bias, noise: settings.noise,
      timeConstantSeconds: settings.inclination.timeConstantSeconds)
    anchoring = RestAnchoring(settings: settings)
    reacquisition = GapReacquisition(settings: settings)
    setCoefficients(period: period)
  }

  /// The current attitude (body → reference), as the last estimate gave it.
  public var attitude: Quaternion { q }

  /// The inclination filter's output: the reference-frame specific force it currently
  /// believes, m/s² (the running mean while initialising).
  var filterOutput: Vector3 {
    isInitialising ? initialSum * (1 / Double(max(initialCount, 1))) : s1
  }

  /// Takes one sample and returns the estimate after it. Exactly one estimate per sample;
  /// a sample that cannot be used (non-increasing timestamp, NaN) returns the current attitude
  /// with `.timestampRejected` or `.invalidInput` and changes nothing.
  ///
  /// The common sample — a settled clock's interval inside its window, a period inside the
  /// coefficients' band, no rest transition, not a block's last — is taken here without a
  /// single call, so that nothing is held (spilled to the stack) across one; everything else
  /// leaves for out-of-line paths that do the same work with the calls: `updateInFull` (an
  /// invalid sample, the clock's other cases, a coefficient change) and `finishSample` (a rest
  /// transition, a block's end: one sample in ten).
  public mutating func update(_ sample: InertialSample) -> AttitudeEstimate {
    let gyro = sample.angularRateRadiansPerSecond
    let accel = sample.specificForceMetersPerSecondSquared
    guard Self.isPlausible(gyro: gyro, accel: accel),
      let (interval, newPeriod) = clock.steadyInterval(toNanoseconds: sample.timestampNanoseconds),
      newPeriod * 1e-9 >= coefficientPeriodLow && newPeriod * 1e-9 <= coefficientPeriodHigh
    else { return updateInFull(sample) }
    clock.acceptSteady(sample.timestampNanoseconds, periodNanoseconds: newPeriod)
    let dt = interval * 1e-9
    let period = clock.periodSeconds
    let restStep = restDetector.step(
      gyro: gyro, acceleration: accel, up: restUp, usable: !sample.isClipped)
    // A rest transition, or the block's last sample (`propagate` counts this one in).
    guard restStep == .none && blockSamples &+ 1 < blockLimit else {
      return finishSample(
        sample, restStep: restStep, interval: dt, missedSamples: 0, flags: 0, period: period)
    }
    let bias = currentBias(atCelsius: sample.temperatureCelsius)
    let omega = gyro - bias
    _ = propagate(sample, omega: omega, interval: dt)
    return estimate(
      sample, omega: omega, bias: bias, flags: 0, interval: dt, missedSamples: 0,
      period: period)
  }

  /// `update` for any sample: an invalid one, the clock's every case, a coefficient change,
  /// then the rest.
  @inline(never)
  mutating func updateInFull(_ sample: InertialSample) -> AttitudeEstimate {
    let gyro = sample.angularRateRadiansPerSecond
    let accel = sample.specificForceMetersPerSecondSquared
    guard Self.isPlausible(gyro: gyro, accel: accel) else {
      return rejected(sample, flag: .invalidInput)
    }
    let step = clock.advance(toNanoseconds: sample.timestampNanoseconds)
    if step.isRejected { return rejected(sample, flag: .timestampRejected) }
    if step.isFirst { return start(sample) }
    if step.isGap
      && mayHaveTilted(sample, inSeconds: Double(step.missedSamples + 1) * clock.periodSeconds)
    {
      return reacquire(
        sample, missedSamples: step.missedSamples, gap: true, carrying: step.intervalSeconds)
    }
    if suspectSamplesMayHaveTilted(sample) {
      return reacquire(sample, missedSamples: step.missedSamples, gap: step.isGap)
    }

    let period = clock.periodSeconds
    if !(period >= coefficientPeriodLow && period <= coefficientPeriodHigh) {
      setCoefficients(period: period)
    }
    let restStep = restDetector.step(
      gyro: gyro, acceleration: accel, up: restUp, usable: !sample.isClipped)
    return finishSample(
      sample, restStep: restStep, interval: step.intervalSeconds,
      missedSamples: step.missedSamples,
      flags: step.isGap ? EstimateFlags.gap.rawValue : 0, period: period)
  }

  /// The rest of `update` after the rest detector's step, with any transition it reported.
  @inline(never)
  mutating func finishSample(
    _ sample: InertialSample, restStep: RestDetector.Step, interval dt: Double,
    missedSamples: Int, flags sampleFlags: UInt16, period: Double
  ) -> AttitudeEstimate {
    // A rest that starts here measured the bias (and moved the model's reference to this
    // temperature): this sample's outputs already carry it.
    var flags = EstimateFlags(rawValue: sampleFlags)
    let bias =
      restStep == .none
      ? currentBias(atCelsius: sample.temperatureCelsius)
      : restTransition(restStep, celsius: sample.temperatureCelsius, flags: &flags)
    let omega = sample.angularRateRadiansPerSecond - bias
    let atRest = propagate(sample, omega: omega, interval: dt)
    // Nothing was observed in a gap: the inclination filter does not run over it as if the
    // reading after it had held all along (a push that began in the gap would take a step
    // of the gap's length).
    if missedSamples > 0 && !sample.isClipped { blockUnobservedSeconds += max(0, dt - period) }
    if blockSamples >= blockLimit { endBlock(atRest: atRest) }
    return estimate(
      sample, omega: omega, bias: bias, flags: flags.rawValue, interval: dt,
      missedSamples: missedSamples, period: period)
  }

  /// Propagation and the block's sums for one sample; whether the attitude is held at rest.
  @inline(__always)
  mutating func propagate(_ sample: InertialSample, omega: Vector3, interval dt: Double) -> Bool {
    let atRest = anchoring.holdsAtRest && restDetector.isAtRest
    // Propagation: q ← q ⊗ exp(ω dt), third-order series (relative angle error below θ⁴/1920,
    // 4 × 10⁻⁹ at 1000 °/s and 100 Hz; the norm stays 1 to O(θ⁶)). None at rest: the heading
    // is held.
    if atRest {
      // Every sample at rest measures the bias (`RestBiasMeasurements`).
      if restMeasurements.isEnabled {
        restMeasurements.add(
          gyro: sample.angularRateRadiansPerSecond,
          temperatureCoefficient: biasEstimator.temperatureCoefficient)
      }
    } else {
      // The bias-corrected rate plus the inclination correction's rate (body axes).
      let k = bodyCorrectionRate
      let r = Vector3((omega.x + k.x) * dt, (omega.y + k.y) * dt, (omega.z + k.z) * dt)
      // The correction's axis is fixed in the reference frame: in body axes it turns against
      // the body's rotation, k ← k + k × r (dk/dt = −ω × k).
      bodyCorrectionRate = Vector3(
        k.x + (k.y * r.z - k.z * r.y), k.y + (k.z * r.x - k.x * r.z),
        k.z + (k.x * r.y - k.y * r.x))
      accruedSeconds += dt
      let t2 = r.x * r.x + r.y * r.y + r.z * r.z
      if t2 > Self.seriesStepLimitSquared {
        largeStep(r, squaredAngle: t2, correctionRate: k)
      } else {
        let step = Quaternion(smallRotationVector: r, squaredAngle: t2)
        q = multiply(q, step.w, step.x, step.y, step.z)
      }
    }

    // Inclination: the specific force in the reference frame, summed over the block; the
    // low-pass filter and the correction run once per block (`endBlock`).
    if sample.isClipped {
      blockClippedSamples &+= 1
      blockUnobservedSeconds += dt
    } else {
      let x = rotate(sample.specificForceMetersPerSecondSquared, by: q)
      blockForce = Vector3(blockForce.x + x.x, blockForce.y + x.y, blockForce.z + x.z)
      accruedSecondsSum += accruedSeconds
    }
    blockSeconds += dt
    blockSamples &+= 1
    return atRest
  }

  /// A step too long for the series (`seriesStepLimitSquared`): a gap while turning, a slow
  /// sample clock with a fast rotation (any step, in fact). `q ← q ⊗ exp(r)` exactly, without
  /// trigonometry: the
  /// series for r/2ⁿ (below 0.05 rad, relative error 3 × 10⁻⁹), normalised, squared n times,
  /// normalised. The correction's rate turns against the step exactly too (the per-sample
  /// `k + k × r` holds only for a small r). Off the per-sample path.
  @inline(never)
  mutating func largeStep(_ r: Vector3, squaredAngle t2: Double, correctionRate k: Vector3) {
    var n = 0
    var scale = 1.0
    while t2 * scale * scale > 0.0025 && n < 1100 {
      scale *= 0.5
      n += 1
    }
    let s = Vector3(r.x * scale, r.y * scale, r.z * scale)
    var step = Quaternion(smallRotationVector: s, squaredAngle: t2 * scale * scale).normalized
    for _ in 0..<n { step = (step * step).normalized }
    q = (q * step).normalized
    // dk/dt = −ω × k: k turns by −r, i.e. k ← step⁻¹ · k (the inverse rotation).
    bodyCorrectionRate = step.inverseRotate(k)
  }

  /// The estimate after a sample, from the attitude (which carries the correction accrued in
  /// the block) and what the sample's own steps gave.
  @inline(__always)
  func estimate(
    _ sample: InertialSample, omega: Vector3, bias: Vector3, flags: UInt16, interval: Double,
    missedSamples: Int, period: Double
  ) -> AttitudeEstimate {
    let o = q
    let g = Vector3(
      2 * (o.w * o.y - o.x * o.z), -2 * (o.y * o.z + o.w * o.x),
      -1 + 2 * (o.x * o.x + o.y * o.y))
    var raw = flags | blockFlags
    if sample.isClipped { raw |= EstimateFlags.clippedInput.rawValue }
    let f = sample.specificForceMetersPerSecondSquared
    return AttitudeEstimate(
      timestampNanoseconds: sample.timestampNanoseconds, attitude: o, gravityInBody: g,
      linearAccelerationMetersPerSecondSquared: Vector3(
        f.x + g.x * gravity, f.y + g.y * gravity, f.z + g.z * gravity),
      angularRateRadiansPerSecond: omega, gyroBiasRadiansPerSecond: bias,
      gyroBiasVariance: biasEstimator.variance, flags: EstimateFlags(rawValue: raw),
      missedSamples: missedSamples, integrationIntervalSeconds: interval,
      samplePeriodSeconds: period)
  }

  // MARK: - Steps

  /// `a ⊗ (w, x, y, z)`.
  @inline(__always)
  func multiply(_ a: Quaternion, _ w: Double, _ x: Double, _ y: Double, _ z: Double)
    -> Quaternion
  {
    Quaternion(
      w: a.w * w - a.x * x - a.y * y - a.z * z, x: a.w * x + a.x * w + a.y * z - a.z * y,
      y: a.w * y - a.x * z + a.y * w + a.z * x, z: a.w * z + a.x * y - a.y * x + a.z * w)
  }

  /// `(c, δ/2) ⊗ a` with `δ = (dx, dy, 0)` and `c = 1 − |δ|²/8`: a turns by the small angle δ
  /// about a horizontal axis of the reference frame; the result keeps a's norm to O(|δ|⁴).
  @inline(__always)
  func corrected(_ a: Quaternion, _ dx: Double, _ dy: Double) -> Quaternion {
    let hx = 0.5 * dx
    let hy = 0.5 * dy
    let c = 1 - 0.5 * (hx * hx + hy * hy)
    return Quaternion(
      w: c * a.w - hx * a.x - hy * a.y, x: c * a.x + hx * a.w + hy * a.z,
      y: c * a.y - hx * a.z + hy * a.w, z: c * a.z + hx * a.y - hy * a.x)
  }

  /// Applies the pending inclination correction δ = (dx, dy, 0) to the state: the attitude
  /// turns by it, the filter memory with it; then the attitude is renormalised. Once per
  /// block, and before anything else touches the attitude or the filter.
  mutating func applyCorrection(_ dx: Double, _ dy: Double) {
    q = corrected(q, dx, dy)
    turnFilterMemory(dx, dy)
    // Normalise: one Newton step is exact to rounding for the tiny norm error of one block.
    let n2 = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z
    if abs(n2 - 1) < 1e-6 {
      let f = 1.5 - 0.5 * n2
      q = Quaternion(w: q.w * f, x: q.x * f, y: q.y * f, z: q.z * f)
    } else {
      q = q.normalized
    }
  }

  /// The end of a block: the inclination filter takes the block's mean specific force, the
  /// attitude is corrected toward its output, then the block's housekeeping runs.
  @inline(never)
  mutating func endBlock(atRest: Bool) {
    applyRestMeasurements()
    filterBlock()
    if blockSamples >= blockLimit { blockUpdate(atRest: atRest) }
    refreshBlockFlags()
  }

  /// Feeds the block so far to the inclination filter and applies the correction it implies.
  ///
  /// The filter runs once per block on the block's mean specific force (reference frame), held
  /// over the block's duration: the exact discretisation of the continuous filter for an
  /// input constant over the block, whose mean over 0.1 s differs from the samples only above
  /// 5 Hz, where the filter (cutoff 0.075 Hz at τ = 3 s) passes nothing anyway. Each sample's
  /// specific force was mapped with that sample's own attitude, so the timing of accelerometer
  /// against gyro is kept to the sample.
  mutating func filterBlock() {
    let n = blockForceSamples
    // The block's forces were mapped with the correction accrued by their sample, on average
    // (cx, cy)·t̄; the memory is turned by all of it (`accountAccruedCorrection`): the mean is
    // turned by the difference, so that both are in the frame of the block's end.
    let lag = n > 0 ? accruedSeconds - accruedSecondsSum / Double(n) : 0
    accountAccruedCorrection()
    var rate = Vector3(0, 0, 0)
    if n > 0 {
      let mean = rotateSmall(
        blockForce * (1 / Double(n)), correctionRateX * lag, correctionRateY * lag)
      let weight = rejection.weight
      let seconds = blockFilterSeconds * weight
      if isInitialising {
        initialSum += blockForce
        initialCount &+= n
      } else if isSecondOrder {
        secondOrderStep(input: mean, seconds: seconds)
        // The filter's clock runs at `weight`: so does its output's drift.
        rate = s2 * weight
      } else {
        firstOrderStep(input: mean, seconds: seconds)
        rate = (mean - s1) * (firstOrderRate * weight)
      }
    }
    // The correction: the small rotation about a horizontal axis that takes the filter's
    // output y onto +z, δ ≈ (y_y, −y_x, 0)/|y| (|y| ≈ g; a gain a few percent off is
    // immaterial, the next block corrects the rest).
    flushCorrection()
    correctionRateX = rate.y * inverseGravity
    correctionRateY = -rate.x * inverseGravity
    if isInitialising && initialCount >= initialLimit { finishInitialisation(at: filterOutput) }
  }

  /// The second-order filter over `seconds`: e = s1 − x and s2 evolve as
  /// `ė = s2, ṡ2 = −ω²e − 2ζω s2` (ω = √2/τ, ζ = 1/√2), whose transition matrix Φ = exp(A h)
  /// is summed to the fourth power (error (ωh)⁵/120, 2 × 10⁻⁹ for a 0.1 s block at τ = 3 s);
  /// a long step (a gap) is split so that ωh ≤ 0.5.
  mutating func secondOrderStep(input x: Vector3, seconds: Double) {
    guard seconds > 0 else { return }
    let span = seconds * filterRate * 2
    // One step for a normal block (ωh ≈ 0.05); a gap is split.
    let steps = span <= 1 ? 1 : Int(span.rounded(.up))
    let h = seconds / Double(steps)
    // M = A h = [[0, h], [−ω²h, −2ζω h]]; Φ = I + M(I + M/2(I + M/3(I + M/4))), by
    // p ← I + (M p)/k for k = 4, 3, 2, 1 (p row-major 2 × 2, starting from I).
    let m10 = -filterRateSquared * h
    let m11 = -filterDamping * h
    var p0 = 1.0
    var p1 = 0.0
    var p2 = 0.0
    var p3 = 1.0
    for k in [0.25, 1.0 / 3, 0.5, 1.0] {
      let a = h * p2
      let b = h * p3
      let c = m10 * p0 + m11 * p2
      let d = m10 * p1 + m11 * p3
      p0 = 1 + a * k
      p1 = b * k
      p2 = c * k
      p3 = 1 + d * k
    }
    var e = s1 - x
    var r = s2
    for _ in 0..<steps {
      let e1 = Vector3(p0 * e.x + p1 * r.x, p0 * e.y + p1 * r.y, p0 * e.z + p1 * r.z)
      r = Vector3(p2 * e.x + p3 * r.x, p2 * e.y + p3 * r.y, p2 * e.z + p3 * r.z)
      e = e1
    }
    s1 = x + e
    s2 = r
  }

  /// The first-order filter over `seconds`: `s1 ← s1 + (x − s1)(1 − e^(−h/τ))`, the
  /// exponential by its (2, 2) Padé approximant (relative error below 10⁻³ up to h = 2τ;
  /// longer steps are split).
  mutating func firstOrderStep(input x: Vector3, seconds: Double) {
    guard seconds > 0 else { return }
    let steps = max(1, Int((seconds * firstOrderRate * 0.5).rounded(.up)))
    let u = seconds * firstOrderRate / Double(steps)
    let keep = (1 - u / 2 + u * u / 12) / (1 + u / 2 + u * u / 12)
    var e = s1 - x
    for _ in 0..<steps { e = e * keep }
    s1 = x + e
  }

  /// The correction that accrued in the attitude during the block (through the propagation,
  /// at `correctionRate`) turned the reference frame the block's specific forces were mapped
  /// into: turn the filter memory with it, and count it as the block's correction (the
  /// motion-bias measurement and the rejection's undo use the total).
  mutating func accountAccruedCorrection() {
    let seconds = accruedSeconds
    guard seconds > 0 else { return }
    accruedSeconds = 0
    accruedSecondsSum = 0
    let dx = correctionRateX * seconds
    let dy = correctionRateY * seconds
    turnFilterMemory(dx, dy)
  }

  /// The attitude turned by δ = (dx, dy, 0) about reference axes: the filter memory (or the
  /// start-up sum) turns with it, and δ counts as this block's correction.
  mutating func turnFilterMemory(_ dx: Double, _ dy: Double) {
    if isInitialising {
      initialSum = rotateSmall(initialSum, dx, dy)
    } else {
      s1 = rotateSmall(s1, dx, dy)
      s2 = rotateSmall(s2, dx, dy)
    }
    blockCorrectionX += dx
    blockCorrectionY += dy
  }

  /// Applies the bias measurements collected at rest since the last block (one batch).
  mutating func applyRestMeasurements() {
    restMeasurements.apply(to: &biasEstimator, sampleVariance: gyroSampleVariance)
  }

  /// Applies the correction the filter's output implies now.
  mutating func flushCorrection() {
    let y = filterOutput
    let dx = y.y * inverseGravity
    let dy = -y.x * inverseGravity
    if dx * dx + dy * dy < 1e-4 {
      applyCorrection(dx, dy)
    } else {
      largeCorrection(y)
    }
  }

  /// Recomputes what changes only at block ends and events — the flags that report state (not
  /// the sample) and the up direction the rest detector checks against — after that state
  /// changed. Called at every block end, rest transition, start and coefficient change, so the
  /// per-sample path only reads them.
  mutating func refreshBlockFlags() {
    var raw: UInt16 = 0
    if rejection.weight < 1 { raw |= EstimateFlags.accelerationRejected.rawValue }
    if rejection.isRecovering { raw |= EstimateFlags.recovering.rawValue }
    if isInitialising { raw |= EstimateFlags.initialising.rawValue }
    if restDetector.isAtRest { raw |= EstimateFlags.atRest.rawValue }
    if biasEstimator.isLimited { raw |= EstimateFlags.biasLimited.rawValue }
    // The bias's variance about the vertical (the heading's drift rate), per axis weighted by
    // the up direction's components.
    let v = biasEstimator.variance
    let u = up
    let vertical = v.x * u.x * u.x + v.y * u.y * u.y + v.z * u.z * u.z
    if vertical > Self.headingUncertainBiasRadiansPerSecond
      * Self.headingUncertainBiasRadiansPerSecond
    {
      raw |= EstimateFlags.headingUncertain.rawValue
    }
    blockFlags = raw
    // At rest the attitude changes only at block ends and transitions, so its up direction is
    // computed there; in motion the detector's consistency check is not made.
    restUp = restDetector.isAtRest ? up : Vector3(0, 0, 1)
    // The correction rate in body axes: Rᵀ(cx, cy, 0), R's first two rows' transposes.
    let (cx, cy) = (correctionRateX, correctionRateY)
    let (qw, qx, qy, qz) = (q.w, q.x, q.y, q.z)
    bodyCorrectionRate = Vector3(
      (1 - 2 * (qy * qy + qz * qz)) * cx + 2 * (qx * qy + qw * qz) * cy,
      2 * (qx * qy - qw * qz) * cx + (1 - 2 * (qx * qx + qz * qz)) * cy,
      2 * (qx * qz + qw * qy) * cx + 2 * (qy * qz - qw * qx) * cy)
  }

  /// `q ⊗ v ⊗ q*`: body → reference.
  @inline(__always)
  func rotate(_ v: Vector3, by q: Quaternion) -> Vector3 {
    // v + 2w (u × v) + 2 u × (u × v) with u the vector part.
    let tx = 2 * (q.y * v.z - q.z * v.y)
    let ty = 2 * (q.z * v.x - q.x * v.z)
    let tz = 2 * (q.x * v.y - q.y * v.x)
    return Vector3(
      v.x + q.w * tx + (q.y * tz - q.z * ty), v.y + q.w * ty + (q.z * tx - q.x * tz),
      v.z + q.w * tz + (q.x * ty - q.y * tx))
  }

  /// The bias at `celsius` less the bias at the reference (zero without a model or a
  /// temperature).
  @inline(never)
  func temperatureTerm(_ celsius: Double) -> Vector3 {
    hasTemperatureModel ? biasEstimator.temperatureTerm(atCelsius: celsius) : Vector3(0, 0, 0)
  }

  /// The bias at `celsius` with the model as it stands (its reference where it is now).
  func bias(atCelsius celsius: Double) -> Vector3 {
    biasEstimator.bias + temperatureTerm(celsius)
  }

  /// The bias at T_ref + `temperatureOffset` with the model as it stands now (a rest
  /// measurement may just have moved both the bias and the coefficient).
  func biasNow(temperatureOffset d: Double) -> Vector3 {
    d.isFinite && d != 0
      ? biasEstimator.bias + biasEstimator.temperatureCoefficient * d : biasEstimator.bias
  }

  /// The bias at `celsius` with the model as it stands, as the per-sample path takes it (the
  /// temperature term only when the temperature is known).
  @inline(__always)
  func currentBias(atCelsius celsius: Double) -> Vector3 {
    var bias = biasEstimator.bias
    if hasTemperatureModel {
      let offset = celsius - biasEstimator.referenceTemperatureCelsius
      if offset.isFinite { bias += biasEstimator.temperatureCoefficient * offset }
    }
    return bias
  }

  /// The rest detector's step ended a rest or completed a dwell: handles it and returns the
  /// bias at `celsius` after it (a rest that starts here measured the bias and moved the
  /// model's reference to this temperature: this sample's outputs already carry it).
  @inline(never)
  mutating func restTransition(
    _ restStep: RestDetector.Step, celsius: Double, flags: inout EstimateFlags
  ) -> Vector3 {
    let temperatureOffset =
      hasTemperatureModel ? celsius - biasEstimator.referenceTemperatureCelsius : 0
    switch restStep {
    case .none:
      break
    case .ended:
      handle(.ended, flags: &flags, temperatureOffset: temperatureOffset)
    case .dwellCompleted:
      completeDwell(
        bias: currentBias(atCelsius: celsius), flags: &flags, temperatureOffset: temperatureOffset)
    }
    return bias(atCelsius: celsius)
  }

  /// The rest detector saw a whole quiet dwell: it decides with the bias estimate.
  @inline(never)
  mutating func completeDwell(
    bias: Vector3, flags: inout EstimateFlags, temperatureOffset: Double
  ) {
    defer { refreshBlockFlags() }
    let transition = restDetector.completeDwell(
      bias: bias, biasVariance: biasEstimator.variance, up: up)
    if transition != .none {
      handle(transition, flags: &flags, temperatureOffset: temperatureOffset)
    }
  }

  /// Rest began, ended, or was refused.
  @inline(never)
  mutating func handle(
    _ transition: RestDetector.Transition, flags: inout EstimateFlags, temperatureOffset: Double
  ) {
    defer { refreshBlockFlags() }
    switch transition {
    case .none:
      break
    case .inconsistent:
      biasEstimator.widen(by: restDetector.excessVariance)
      restStatistics.biasJumps &+= 1
    case .refused:
      restStatistics.refusedAsTurning &+= 1
      restStatistics.lastRefusedRateRadiansPerSecond = restDetector.refusedRate
    case .ended:
      // The last moments' rotation, held back while the heading was held, was probably the
      // start of this motion: give it back.
      filterBlock()
      resetBlock()
      applyRestMeasurements()
      anchoring.motionStarted()
      if anchoring.holdsAtRest {
        let b = biasNow(temperatureOffset: temperatureOffset)
        let r = anchoring.releasedRotation(gyroMeanAtEnd: restDetector.gyroMeanAtEnd, bias: b)
        let t2 = r.squaredLength
        q = multiply(q, 1 - t2 / 8, r.x * 0.5, r.y * 0.5, r.z * 0.5).normalized
      }
    case .started:
      let samples = restDetector.quietSamples
      if anchoring.tiltAgrees(
        meanAcceleration: restDetector.stretchAccelerationSum / Double(samples), up: up,
        biasVariance: biasEstimator.variance)
      {
        reanchor(samples: samples, temperatureOffset: temperatureOffset)
        flags.insert(.restStarted)
        restStatistics.rests &+= 1
      } else {
        restDetector.cancelRest()
        restStatistics.refusedAsAccelerating &+= 1
      }
    }
  }

  @inline(never)
  mutating func largeCorrection(_ y: Vector3) {
    guard y.squaredLength > 0 else { return }
    let d = Quaternion(from: y, to: .unitZ)
    q = (d * q).normalized
    if isInitialising {
      initialSum = d.rotate(initialSum)
    } else {
      s1 = d.rotate(s1)
      s2 = d.rotate(s2)
    }
    rejection.rotate(by: d)
  }

  mutating func finishInitialisation(at y: Vector3) {
    isInitialising = false
    let up = Vector3(0, 0, y.length)
    restartFilter(at: up)
    rejection.restartMean(at: up)
    refreshBlockFlags()
  }

  /// Restarts the filter memory at a constant `x` (it passes it unchanged), with no
  /// correction accruing.
  mutating func restartFilter(at x: Vector3) {
    s1 = x
    s2 = Vector3(0, 0, 0)
    correctionRateX = 0
    correctionRateY = 0
  }

  /// The first sample: tilt from the accelerometer, heading zero.
  @inline(never)
  mutating func start(_ sample: InertialSample) -> AttitudeEstimate {
    let a = sample.specificForceMetersPerSecondSquared
    q = Quaternion(from: a, to: .unitZ)
    // The temperature model starts at this temperature (`GyroBiasEstimator.start(atCelsius:)`).
    if hasTemperatureModel { biasEstimator.start(atCelsius: sample.temperatureCelsius) }
    isInitialising = true
    initialSum = rotate(a, by: q)
    initialCount = 1
    refreshBlockFlags()
    if initialLimit <= 1 { finishInitialisation(at: initialSum) }
    var flags = EstimateFlags(rawValue: blockFlags)
    if sample.isClipped { flags.insert(.clippedInput) }
    let g = q.gravityInBody
    let bias = self.bias(atCelsius: sample.temperatureCelsius)
    return AttitudeEstimate(
      timestampNanoseconds: sample.timestampNanoseconds, attitude: q, gravityInBody: g,
      linearAccelerationMetersPerSecondSquared: a + g * gravity,
      angularRateRadiansPerSecond: sample.angularRateRadiansPerSecond - bias,
      gyroBiasRadiansPerSecond: bias, gyroBiasVariance: biasEstimator.variance, flags: flags,
      missedSamples: 0, integrationIntervalSeconds: 0, samplePeriodSeconds: clock.periodSeconds)
  }

  /// Whether the tilt may have changed in the `seconds` before this sample by more than the
  /// gyro carried over them gives (`GapReacquisition.mayHaveTilted`), when they are long enough
  /// to restart it (`reacquisitionGapSeconds`).
  func mayHaveTilted(
    _ sample: InertialSample, inSeconds seconds: Double, usesRates: Bool = true,
    lengthShare: Double = 0.5
  ) -> Bool {
    seconds >= reacquisition.gapSeconds
      && reacquisition.mayHaveTilted(
        gapSeconds: seconds,
        rates: usesRates ? (restDetector.gyroMean, sample.angularRateRadiansPerSecond) : nil,
        bias: biasEstimator.bias, up: up, expected: filterOutput,
        reading: rotate(sample.specificForceMetersPerSecondSquared, by: q),
        lengthShare: lengthShare)
  }

  /// Whether samples before this one were reported suspect (`distrustRecentSamples`) and the
  /// tilt may have changed over them. No rate can be trusted here: the rate before is the
  /// suspect samples' own, and the bias the rate after is measured against may have learnt
  /// from them. And the attitude they carried may be off, which widens the angle an
  /// acceleration shows without lengthening it: the reading must be nearer gravity's length by
  /// twice as much.
  mutating func suspectSamplesMayHaveTilted(_ sample: InertialSample) -> Bool {
    guard reacquisition.suspectSeconds > 0 else { return false }
    let seconds = reacquisition.takeSuspectSeconds()
    return mayHaveTilted(sample, inSeconds: seconds, usesRates: false, lengthShare: 0.25)
  }

  /// The first sample after a gap of `reacquisitionGapSeconds` or more: the tilt restarts as
  /// at start-up (this reading, then the running mean of the accelerometer carried by the
  /// gyro), keeping the heading and the bias; the acceleration rejection starts afresh. The
  /// gap itself is not integrated: the rate after it says nothing about what happened in it.
  @inline(never)
  mutating func reacquire(
    _ sample: InertialSample, missedSamples: Int, gap: Bool, carrying interval: Double = 0
  ) -> AttitudeEstimate {
    let a = sample.specificForceMetersPerSecondSquared
    let period = clock.periodSeconds
    if !(period >= coefficientPeriodLow && period <= coefficientPeriodHigh) {
      setCoefficients(period: period)
    }
    applyRestMeasurements()
    reacquisition.countReacquisition()
    let bias = self.bias(atCelsius: sample.temperatureCelsius)
    if interval > 0 {
      // Carry the attitude over the gap with the rate after it (its length as integrated,
      // `SampleClock`'s cap included) before the heading is taken from it: the turn made
      // meanwhile is the best guess there is.
      let w = sample.angularRateRadiansPerSecond - bias
      let r = Vector3(w.x * interval, w.y * interval, w.z * interval)
      largeStep(
        r, squaredAngle: r.x * r.x + r.y * r.y + r.z * r.z, correctionRate: bodyCorrectionRate)
    }
    if a.squaredLength > 0 {
      // Keep the twist about the vertical (the heading), take the tilt from this reading.
      let n = (q.w * q.w + q.z * q.z).squareRoot()
      let twist =
        n > 1e-9 ? Quaternion(w: q.w / n, x: 0, y: 0, z: q.z / n) : Quaternion.identity
      q = (twist * Quaternion(from: a, to: .unitZ)).normalized
    }
    resetBlock()
    restartFilter(at: Vector3(0, 0, 0))
    isInitialising = true
    initialSum = rotate(a, by: q)
    initialCount = 1
    rejection.reset()
    refreshBlockFlags()
    if initialLimit <= 1 { finishInitialisation(at: initialSum) }
    var flags = EstimateFlags(rawValue: blockFlags)
    if gap { flags.insert(.gap) }
    if sample.isClipped { flags.insert(.clippedInput) }
    let g = q.gravityInBody
    return AttitudeEstimate(
      timestampNanoseconds: sample.timestampNanoseconds, attitude: q, gravityInBody: g,
      linearAccelerationMetersPerSecondSquared: a + g * gravity,
      angularRateRadiansPerSecond: sample.angularRateRadiansPerSecond - bias,
      gyroBiasRadiansPerSecond: bias, gyroBiasVariance: biasEstimator.variance, flags: flags,
      missedSamples: missedSamples, integrationIntervalSeconds: 0, samplePeriodSeconds: period)
  }

  /// Tells the estimator that the samples of the last `seconds` may have been misread — a
  /// configuration register the driver's read-back found changed (a full-scale setting that
  /// made the gyro read 8× small), whatever was converted with the wrong scale until then. The
  /// next sample is judged as after a gap of that length (`reacquisitionGapSeconds`, step 9):
  /// when the body may have tilted meanwhile, the tilt restarts from the accelerometer, keeping
  /// the heading and the bias. Costs the next sample the out-of-line path, nothing else.
  public mutating func distrustRecentSamples(seconds: Double) {
    guard seconds.isFinite, seconds > 0 else { return }
    reacquisition.distrust(seconds: seconds)
    // Off the per-sample path for the next sample: its band check fails, and `updateInFull`
    // puts the band back (`setCoefficients`).
    coefficientPeriodHigh = -.infinity
  }

  /// A sample that cannot be used: the current state, flagged.
  @inline(never)
  mutating func rejected(_ sample: InertialSample, flag: EstimateFlags) -> AttitudeEstimate {
    let attitude = attitude
    let g = attitude.gravityInBody
    let bias = self.bias(atCelsius: sample.temperatureCelsius)
    let accel = sample.specificForceMetersPerSecondSquared
    let gyro = sample.angularRateRadiansPerSecond
    return AttitudeEstimate(
      timestampNanoseconds: sample.timestampNanoseconds, attitude: attitude, gravityInBody: g,
      linearAccelerationMetersPerSecondSquared: Self.isPlausible(gyro: .zero, accel: accel)
        ? accel + g * gravity : Vector3(0, 0, 0),
      angularRateRadiansPerSecond: Self.isPlausible(gyro: gyro, accel: .zero)
        ? gyro - bias : Vector3(0, 0, 0),
      gyroBiasRadiansPerSecond: bias, gyroBiasVariance: biasEstimator.variance,
      flags: EstimateFlags(rawValue: flag.rawValue | blockFlags), missedSamples: 0,
      integrationIntervalSeconds: 0, samplePeriodSeconds: clock.periodSeconds)
  }

  /// A rest has just been declared after `samples` quiet samples: re-anchor.
  mutating func reanchor(samples: Int, temperatureOffset: Double) {
    let n = Double(samples)
    // The bias at this temperature the motion was integrated with.
    let biasBefore = biasNow(temperatureOffset: temperatureOffset)
    if hasTemperatureModel && temperatureOffset.isFinite && temperatureOffset != 0 {
      // The model's reference follows the rests: its bias is the bias at this rest's
      // temperature, the one the rest measures directly, and its variance the one every
      // consumer of "the bias uncertainty" (rest consistency, tilt agreement, motion gain)
      // means. The slope still learns, through the bias–slope covariance the move creates.
      biasEstimator.moveReference(
        toCelsius: biasEstimator.referenceTemperatureCelsius + temperatureOffset)
    }
    restMeasurements.restAtReference()
    if settings.bias.restEstimationEnabled {
      biasEstimator.observeAtRest(
        meanRate: restDetector.stretchGyroSum / n, samples: samples,
        sampleVariance: gyroSampleVariance, temperatureOffsetCelsius: 0)
    }
    // The bias at this temperature, after the measurement: a change of the slope moves it as
    // much as a change of the offset.
    let biasAfter = biasEstimator.bias
    restDetector.setRestBias(
      biasAfter,
      variance: biasEstimator.variance + Vector3(1, 1, 1) * (gyroSampleVariance / n))
    if anchoring.holdsAtRest {
      q = anchoring.anchoredAttitude(
        q, samples: samples, periodSeconds: clock.periodSeconds,
        gyroSum: restDetector.stretchGyroSum, accelerationSum: restDetector.stretchAccelerationSum,
        biasBefore: biasBefore, biasAfter: biasAfter)
      let level = Vector3(0, 0, (restDetector.stretchAccelerationSum / n).length)
      restartFilter(at: level)
      rejection.restartMean(at: level)
      isInitialising = false
    }
    rejection.restart()
    resetBlock()
    refreshBlockFlags()
  }

  mutating func resetBlock() {
    blockCorrectionX = 0
    blockCorrectionY = 0
    blockForce = Vector3(0, 0, 0)
    blockClippedSamples = 0
    blockUnobservedSeconds = 0
    blockSeconds = 0
    blockSamples = 0
    accruedSeconds = 0
    accruedSecondsSum = 0
  }

  /// Once per block: the inclination filter and correction, bias prediction, the motion-bias
  /// measurement, the drift model and the sustained-acceleration detector.
  mutating func blockUpdate(atRest: Bool) {
    let seconds = blockSeconds
    let count = blockForceSamples
    let force = count > 0 ? blockForce * (1 / Double(count)) : Vector3(0, 0, 0)
    let correctionX = blockCorrectionX
    let correctionY = blockCorrectionY
    // The corrections measure the bias only where the filter ran at full speed: a rejection
    // stops them, and a stopped correction says nothing about the bias (it would only shrink
    // the bias's uncertainty without information).
    let trusted =
      !isInitialising && !rejection.isRecovering && !atRest && count > 0 && rejection.weight >= 1
    resetBlock()
    if !atRest { biasEstimator.predict(seconds: seconds) }

    // Acceleration rejection decides this block's weight; not while the bias is too uncertain
    // for the gyro to carry the attitude through a rejection (`gyroCanCarry`).
    if rejection.isEnabled && !atRest && !isInitialising && count > 0
      && rejection.gyroCanCarry(biasVariance: biasEstimator.variance, up: up)
    {
      if rejection.update(meanForceX: force.x, meanForceY: force.y) { undoRecentCorrections() }
    } else {
      rejection.trust()
    }
    if count > 0 { rejection.followMean(force, weight: rejection.weight) }
    // The corrections of this block turn the slow mean too, and count as recent.
    let dx = correctionX
    let dy = correctionY
    rejection.recordCorrection(dx, dy)
    guard !atRest else { return }

    // Rows of R(q) (body → reference).
    let (qw, qx, qy, qz) = (q.w, q.x, q.y, q.z)
    let r0 = Vector3(1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qw * qz), 2 * (qx * qz + qw * qy))
    let r1 = Vector3(2 * (qx * qy + qw * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qw * qx))
    let r2 = Vector3(2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), 1 - 2 * (qx * qx + qy * qy))
    anchoring.accumulateDrift(up: r2, seconds: seconds)
    motionBias.measure(
      rows: r0, r1, correction: dx, dy, seconds: seconds, trusted: trusted,
      bias: &biasEstimator)
  }

  /// A sustained acceleration was just detected: the corrections of the last moments were its
  /// doing, so turn them back, and restart the filter memory from the restored estimate (it
  /// holds the acceleration's onset, which would otherwise keep pulling).
  mutating func undoRecentCorrections() {
    let undo = rejection.undoRecentCorrections()
    q = (undo * q).normalized
    restartFilter(at: Vector3(0, 0, rejection.slowMean.length))
  }

  /// Recomputes everything that depends on the sample period.
  @inline(never)
  mutating func setCoefficients(period: Double) {
    guard period > 0 else { return }
    applyRestMeasurements()
    coefficientPeriod = period
    coefficientPeriodLow = period * (1 - 0.005)
    coefficientPeriodHigh = period * (1 + 0.005)

    let inclination = settings.inclination
    let tau = inclination.timeConstantSeconds
    filterRate = 2.0.squareRoot() / tau
    filterRateSquared = filterRate * filterRate
    filterDamping = 2.0.squareRoot() * filterRate
    firstOrderRate = 1 / tau
    restDetector.setSamplePeriod(period)
    let n = settings.noise.gyroNoiseDensity
    gyroSampleVariance = n * n / period
    restDetector.setGyroSampleVariance(gyroSampleVariance)
    initialLimit = max(1, Int((inclination.initialisationSeconds / period).rounded()))
    blockLimit = max(1, Int((Self.blockSeconds / period).rounded()))
    let blockPeriod = Double(blockLimit) * period
    motionBias.setBlockPeriod(blockPeriod)
    rejection.setBlockPeriod(blockPeriod)
    refreshBlockFlags()
  }
}

/// What the rest detector decided, counted since the estimator started: a user whose board
/// sits still yet never rests finds out why here (`plumb run` prints it at the end).
public struct RestStatistics: Hashable, Sendable {
  /// Rests declared.
  public var rests: Int = 0
  /// Quiet, stationary dwells whose mean rate disagreed with the bias by a plausible jump (or,
  /// about horizontal axes, by what the accelerometer showed to be bias): the bias uncertainty
  /// was widened, so the next such dwell is a rest.
  public var biasJumps: Int = 0
  /// Quiet, stationary dwells refused as a slow steady turn: the mean rate disagreed with the
  /// bias by more than a bias could explain (about the vertical, beyond
  /// `RestDetector.Settings.maximumBiasJumpRadiansPerSecond`; about horizontal axes, the
  /// accelerometer saw the rotation). A board that is really still and counts these has a bias
  /// far from what it was told (a calibration file from another unit or another temperature).
  public var refusedAsTurning: Int = 0
  /// The disagreement of the last such dwell, rad/s.
  public var lastRefusedRateRadiansPerSecond: Double = 0
  /// Quiet dwells refused because their mean acceleration disagreed with the expected gravity
  /// (a steady push, a vehicle accelerating).
  public var refusedAsAccelerating: Int = 0

  public init() {}
}

/// `v` turned by the small angle δ = (dx, dy, 0) about reference axes (first order).
@inline(__always)
func rotateSmall(_ v: Vector3, _ dx: Double, _ dy: Double) -> Vector3 {
  Vector3(v.x + dy * v.z, v.y - dx * v.z, v.z + dx * v.y - dy * v.x)
}
