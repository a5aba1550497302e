import Geometry

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
/// The estimator orchestrates stages, each a type in its own file that owns its state:
///
/// 1. **Timing** (`SampleClock`): the real interval since the last sample; the period estimate;
///    gaps and missed samples. A non-increasing timestamp is rejected and not integrated.
/// 2. **Rest** (`RestDetector`): quiet gyro and accelerometer (deviations from their own window
///    means) for 1.5 s, consistent with the bias estimate. Rest ends on the sample that moves.
/// 3. **Bias** (`GyroBiasEstimator`): predicted as a random walk; at rest measured by every
///    sample (`RestBiasMeasurements`); in motion, its horizontal part measured by the
///    inclination correction (`MotionBiasMeasurement`).
/// 4. **Propagation** (`AttitudePropagation`): the attitude turns by the bias-corrected rate
///    over the real interval (third-order series of the exponential map, no trigonometry). At
///    rest it does not turn: the heading is held (seed 000's zero-velocity update).
/// 5. **Inclination correction** (`InclinationFilter`, over a `SampleBlock`): the specific
///    force is mapped into the reference frame, low-pass filtered there (second-order
///    Butterworth, τ = 3 s), and the attitude is turned about a horizontal axis so that the
///    filtered vector points straight up. The filter runs once per block (0.2 s); within a
///    block the correction accrues in the attitude at the rate the filter's output drifts
///    (added to the propagated rate, in body axes), and the block's end applies what that
///    prediction missed.
/// 6. **Acceleration rejection** (`AccelerationRejection`): a *sustained* horizontal
///    acceleration slows the inclination filter's clock down to a stop, after turning back the
///    corrections its onset caused; rejecting for more than 10 s switches to recovery (the
///    accelerometer is trusted again).
/// 7. **Gaps** (`GapReacquisition`): a gap is integrated with the rate after it (and the
///    inclination filter does not run over it); after one of 0.2 s or more in which the body
///    may have tilted the tilt restarts as at start (`reacquire`). A gap counts in full even
///    where its integration is capped (missed samples, the bias's random walk), and one that
///    may have moved the heading by 1° or more is flagged `.headingUncertain` until a rest or
///    for as long as `GapSettings` says (`accountForGap`).
/// 8. **Rest start** re-anchors (`RestAnchoring`): the bias takes the mean rate of the whole
///    quiet window, the heading drift integrated during the window is undone, the heading
///    drift implied by the bias change since the last rest is taken back, and the tilt is taken
///    from the window's mean acceleration.
/// 9. **Outputs** (`EstimateOutput`): gravity, linear acceleration, the bias-corrected rate,
///    the bias, the flags.
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
/// detector, the inclination filter, the rest bias measurements — runs once per 0.2 s block,
/// not every sample; so does everything derived from state that changes only there or at rest
/// transitions (the state flags, the up direction the rest detector checks at rest). Per sample
/// remain: the sample clock, the rest detector's quiet test and window means, the propagation,
/// the specific force mapped into the reference frame, and the outputs. The measured cost and
/// where it goes are in this target's README.md (Cost).
public struct AttitudeEstimator: Sendable {
  /// The settings in effect: those it was built with, and the tunable ones as the last
  /// `retune(_:)` left them.
  public private(set) var settings: Settings

  /// The sample clock (period estimate, gap and missed-sample counters).
  public private(set) var clock: SampleClock
  /// The rest detector.
  public private(set) var restDetector: RestDetector
  /// The gyro-bias estimate.
  public private(set) var biasEstimator: GyroBiasEstimator
  /// What the rest detector decided so far (see `RestStatistics`).
  public private(set) var restStatistics = RestStatistics()

  private var propagation = AttitudePropagation()
  private var inclination: InclinationFilter
  private var block = SampleBlock()
  private var rejection: AccelerationRejection
  private var restMeasurements: RestBiasMeasurements
  private var motionBias: MotionBiasMeasurement
  /// Refused rests that may show the bias wrong.
  private var refusedRests = RefusedRestEvidence()
  /// The last whole dwell the rest detector did not take for a rest, and the timestamp of the
  /// sample that completed it (nanoseconds): why a gyro-bias capture is refused.
  private var lastRefusedDwell: (refusal: GyroBiasCaptureRefusal.DwellRefusal, timestamp: Int64)?
  private var anchoring: RestAnchoring
  private var reacquisition: GapReacquisition
  private var output: EstimateOutput
  /// The attitude's uncertainty, propagated once per block (`uncertainty`).
  private var uncertaintyTracker = AttitudeUncertaintyTracker()
  /// The up direction (body axes) for the rest detector's checks during a rest; +z otherwise.
  /// At rest the attitude changes only at block ends and transitions, so it is computed there;
  /// in motion the detector's consistency check is not made.
  private var restUp = Vector3(0, 0, 1)
  /// The bias the per-sample path subtracts, rad/s: the estimate at the temperature of the
  /// sample that last took the slow path (a block's last, a rest transition, a gap), computed
  /// there (`refreshBlockState`) with the bias as it then stands. The bias changes only at
  /// block ends and events; the die's temperature moves by hundredths of a degree in a block,
  /// a few thousandths of a degree per second of bias through the model's slope.
  private var sampleBias = Vector3(0, 0, 0)
  /// The temperature `sampleBias` is taken at, °C (NaN: none yet).
  private var sampleBiasCelsius = Double.nan
  /// The variance of one gyro sample's noise at the current period, (rad/s)².
  private var gyroSampleVariance: Double = 0
  /// The coefficients are recomputed when the period estimate leaves this band (±0.5 %),
  /// seconds.
  private var coefficientPeriodLow: Double = 0
  private var coefficientPeriodHigh: Double = 0
  private let hasTemperatureModel: Bool

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

  /// The bias uncertainty about the vertical (1σ) above which estimates are flagged
  /// `.headingUncertain`: 0.1 °/s, 6° of heading a minute of motion.
  public static let headingUncertainBiasRadiansPerSecond = 0.1 * Double.pi / 180

  /// A new estimator. Check `settings.problem` first when the settings come from a person.
  public init(settings: Settings = .default) {
    self.settings = settings
    clock = SampleClock(settings: settings.sampleClock)
    let period = settings.sampleClock.nominalPeriodSeconds ?? 0.01
    restDetector = RestDetector(settings: settings.rest, samplePeriodSeconds: period)
    restDetector.setAccelerometerNoiseDensity(settings.noise.accelerometerNoiseDensity)
    biasEstimator = GyroBiasEstimator(settings: settings.bias, noise: settings.noise)
    hasTemperatureModel = biasEstimator.hasTemperatureModel
    let gravity = settings.gravityMetersPerSecondSquared
    inclination = InclinationFilter(settings: settings.inclination, gravity: gravity)
    rejection = AccelerationRejection(settings: settings.accelerationRejection, gravity: gravity)
    restMeasurements = RestBiasMeasurements(isEnabled: settings.bias.restEstimationEnabled)
    motionBias = MotionBiasMeasurement(
      bias: settings.bias, noise: settings.noise,
      timeConstantSeconds: settings.inclination.timeConstantSeconds)
    anchoring = RestAnchoring(settings: settings)
    reacquisition = GapReacquisition(settings: settings)
    output = EstimateOutput(gravity: gravity)
    setCoefficients(period: period)
  }

  /// The current attitude (body → reference), as the last estimate gave it.
  public var attitude: Quaternion { propagation.attitude }

  /// Gaps after which the tilt was restarted (`InclinationSettings.reacquisitionGapSeconds`),
  /// and stretches of suspect samples after which it was (`distrustRecentSamples`).
  public var gapReacquisitions: Int { reacquisition.count }

  // MARK: - One sample

  /// Takes one sample and returns the estimate after it. Exactly one estimate per sample;
  /// a sample that cannot be used (non-increasing timestamp, NaN) returns the current attitude
  /// with `.timestampRejected` or `.invalidInput` and changes nothing.
  ///
  /// This is the common sample — plausible, a settled clock's interval inside its window, a
  /// period inside the coefficients' band, no rest transition, not a block's last — taken
  /// without a call, so that nothing is held (spilled to the stack) across one. Every other
  /// sample leaves for `updateInFull` (an invalid sample, the clock's other cases, a gap, a
  /// coefficient change) or `finishSample` (a rest transition, a block's end).
  public mutating func update(_ sample: InertialSample) -> AttitudeEstimate {
    guard let (dt, period) = steadyInterval(sample) else { return updateInFull(sample) }
    let restStep = detectRest(sample)
    guard restStep == .none && !block.nextSampleCompletes else {
      return finishSample(
        sample, restStep: restStep, interval: dt, missedSamples: 0, flags: 0, period: period)
    }
    let bias = sampleBias
    let omega = sample.angularRateRadiansPerSecond - bias
    _ = propagate(sample, omega: omega, interval: dt)
    return output.estimate(
      sample, attitude: propagation.attitude, omega: omega, bias: bias,
      biasVariance: biasEstimator.variance, flags: 0, interval: dt, missedSamples: 0,
      period: period)
  }

  /// `update` for any sample: an invalid one, the clock's every case, a gap, suspect samples,
  /// a coefficient change; then the rest.
  @inline(never)
  private mutating func updateInFull(_ sample: InertialSample) -> AttitudeEstimate {
    guard
      Self.isPlausible(
        gyro: sample.angularRateRadiansPerSecond, accel: sample.specificForceMetersPerSecondSquared)
    else { return rejected(sample, flag: .invalidInput) }
    sampleBiasCelsius = sample.temperatureCelsius
    let previousTimestamp = clock.lastTimestamp
    let step = clock.advance(toNanoseconds: sample.timestampNanoseconds)
    if step.isRejected { return rejected(sample, flag: .timestampRejected) }
    if step.isFirst { return start(sample) }
    if step.isGap || reacquisition.suspectSeconds > 0 {
      accountForGap(sample, step: step, previousTimestamp: previousTimestamp)
    }
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
    updateCoefficients(period: period)
    let restStep = detectRest(sample)
    return finishSample(
      sample, restStep: restStep, interval: step.intervalSeconds,
      missedSamples: step.missedSamples,
      flags: step.isGap ? EstimateFlags.gap.rawValue : 0, period: period)
  }

  /// The rest of `update` after the rest detector's step, with any transition it reported.
  @inline(never)
  private mutating func finishSample(
    _ sample: InertialSample, restStep: RestDetector.Step, interval dt: Double,
    missedSamples: Int, flags sampleFlags: UInt16, period: Double
  ) -> AttitudeEstimate {
    // A rest that starts here measured the bias (and moved the model's reference to this
    // temperature): this sample's outputs already carry it.
    sampleBiasCelsius = sample.temperatureCelsius
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
    if missedSamples > 0 && !sample.isClipped { block.addUnobserved(max(0, dt - period)) }
    if block.isFull { endBlock(atRest: atRest) }
    return output.estimate(
      sample, attitude: propagation.attitude, omega: omega, bias: bias,
      biasVariance: biasEstimator.variance, flags: flags.rawValue, interval: dt,
      missedSamples: missedSamples, period: period)
  }

  /// The interval since the last sample and the period estimate, seconds, for a plausible
  /// sample whose interval the settled clock accepts as steady and whose period stays inside
  /// the coefficients' band; nil for any other sample (which `updateInFull` takes).
  @inline(__always)
  private mutating func steadyInterval(_ sample: InertialSample) -> (Double, Double)? {
    guard
      Self.isPlausible(
        gyro: sample.angularRateRadiansPerSecond,
        accel: sample.specificForceMetersPerSecondSquared),
      let (interval, newPeriod) = clock.steadyInterval(toNanoseconds: sample.timestampNanoseconds),
      newPeriod * 1e-9 >= coefficientPeriodLow && newPeriod * 1e-9 <= coefficientPeriodHigh
    else { return nil }
    clock.acceptSteady(sample.timestampNanoseconds, periodNanoseconds: newPeriod)
    return (interval * 1e-9, clock.periodSeconds)
  }

  /// The rest detector's step for this sample.
  @inline(__always)
  private mutating func detectRest(_ sample: InertialSample) -> RestDetector.Step {
    restDetector.step(
      gyro: sample.angularRateRadiansPerSecond,
      acceleration: sample.specificForceMetersPerSecondSquared, up: restUp,
      usable: !sample.isClipped)
  }

  /// Propagation and the block's sums for one sample; whether the attitude is held at rest
  /// (then the sample measures the bias instead).
  @inline(__always)
  private mutating func propagate(
    _ sample: InertialSample, omega: Vector3, interval dt: Double
  ) -> Bool {
    let atRest = anchoring.holdsAtRest && restDetector.isAtRest
    block.count(interval: dt)
    if atRest {
      if restMeasurements.isEnabled {
        restMeasurements.add(gyro: sample.angularRateRadiansPerSecond)
      }
    } else {
      propagation.step(omega: omega, interval: dt)
      block.accrue(dt)
    }
    // Inclination: the specific force in the reference frame, summed over the block; the
    // low-pass filter and the correction run once per block (`endBlock`).
    if sample.isClipped {
      block.addClipped(interval: dt)
    } else {
      block.add(
        force: rotateToReference(
          sample.specificForceMetersPerSecondSquared, by: propagation.attitude))
    }
    return atRest
  }

  // MARK: - The block's end

  /// The end of a block: the rest measurements are applied, the inclination filter takes the
  /// block's mean specific force and the attitude is corrected toward its output, then the
  /// block's housekeeping runs.
  @inline(never)
  private mutating func endBlock(atRest: Bool) {
    if reacquisition.elapse(seconds: block.seconds) { output.setHeadingGuessed(false) }
    applyRestMeasurements()
    correctInclination()
    blockHousekeeping(atRest: atRest)
    refreshBlockState()
  }

  /// Feeds the block so far to the inclination filter and applies the correction it implies.
  /// Each sample's specific force was mapped with that sample's own attitude, so the timing of
  /// accelerometer against gyro is kept to the sample.
  private mutating func correctInclination() {
    let n = block.forceSamples
    // The block's forces were mapped with the correction accrued by their sample, on average
    // (cx, cy)·t̄; the memory is turned by all of it (`accountAccruedCorrection`): the mean is
    // turned by the difference, so that both are in the frame of the block's end.
    let lag = n > 0 ? block.accruedSeconds - block.accruedSecondsSum / Double(n) : 0
    accountAccruedCorrection()
    var drift = Vector3(0, 0, 0)
    if n > 0 {
      drift = inclination.step(
        force: block.force, samples: n, lag: lag, seconds: block.filterSeconds,
        weight: rejection.weight)
    }
    applyCorrection()
    inclination.setCorrectionRate(drift: drift)
    if inclination.hasInitialised { finishInitialisation(at: inclination.output) }
  }

  /// The correction that accrued in the attitude during the block (through the propagation)
  /// turned the reference frame the block's specific forces were mapped into: the filter
  /// memory turns with it, and it counts as the block's correction (the motion-bias
  /// measurement and the rejection's undo use the total).
  private mutating func accountAccruedCorrection() {
    let seconds = block.takeAccruedSeconds()
    guard seconds > 0 else { return }
    turnMemory(inclination.correctionRateX * seconds, inclination.correctionRateY * seconds)
  }

  /// The attitude was turned by δ = (dx, dy, 0) about reference axes: the filter memory turns
  /// with it, and δ counts as this block's correction.
  @inline(never)
  private mutating func turnMemory(_ dx: Double, _ dy: Double) {
    inclination.turnMemory(dx, dy)
    block.addCorrection(dx, dy)
  }

  /// Applies the correction the filter's output implies now: a small one turns the attitude
  /// and the memory by it, a large one (start-up, after a long rejection) rotates them.
  private mutating func applyCorrection() {
    let (dx, dy) = inclination.correction
    if dx * dx + dy * dy < 1e-4 {
      propagation.turn(dx, dy)
      turnMemory(dx, dy)
    } else {
      largeCorrection(inclination.output)
    }
  }

  /// Turns the attitude, the filter memory and the rejection's slow mean by the rotation that
  /// takes the filter's output `y` onto +z.
  @inline(never)
  private mutating func largeCorrection(_ y: Vector3) {
    guard y.squaredLength > 0 else { return }
    let d = Quaternion(from: y, to: .unitZ)
    propagation.turn(by: d)
    inclination.rotateMemory(by: d)
    rejection.rotate(by: d)
  }

  /// Once per block: bias prediction, the sustained-acceleration detector, the drift model and
  /// the motion-bias measurement.
  private mutating func blockHousekeeping(atRest: Bool) {
    let seconds = block.seconds
    let count = block.forceSamples
    let force = count > 0 ? block.force * (1 / Double(count)) : Vector3(0, 0, 0)
    let dx = block.correctionX
    let dy = block.correctionY
    // The corrections measure the bias only where the filter ran at full speed: a rejection
    // stops them, and a stopped correction says nothing about the bias (it would only shrink
    // the bias's uncertainty without information).
    let corrected = !inclination.isInitialising && !atRest && count > 0 && rejection.weight > 0
    // A recovery teaches the bias only while it is relearnt after a re-opening: then the tilt
    // the detector still sees is the bias's own doing, and only learning it ends the recovery.
    var trusted =
      corrected && rejection.weight >= 1 && (!rejection.isRecovering || motionBias.isRelearning)
    block.reset()
    if !atRest { biasEstimator.predict(seconds: seconds) }
    // The corrections of this block turn the slow mean too, and count as recent — before the
    // detector looks, so that a rejection starting here turns back this block's corrections
    // with the earlier ones: the block before the detection pulls the most (the pull of a
    // ramping acceleration grows until it is detected), and a 0.2 s block's share left
    // standing was 0.25° of the 0.75° a push's onset left (`long-push`, noisy unit).
    rejection.recordCorrection(dx, dy)
    // Acceleration rejection decides this block's weight: a rejection starts only while the
    // bias is known well enough for the gyro to carry the attitude through the recovery time
    // (`gyroCanCarry`), and one under way runs to its end (recovery, when the bias no longer
    // allows it).
    let horizontal = biasEstimator.horizontalVariance(up: propagation.up)
    if rejection.isEnabled && !atRest && !inclination.isInitialising && count > 0
      && (rejection.isActive || rejection.gyroCanCarry(horizontalBiasVariance: horizontal))
    {
      if rejection.update(meanForce: force, horizontalBiasVariance: horizontal) {
        undoRecentCorrections()
        // This block's corrections were turned back as an acceleration's doing: they teach
        // the bias nothing (the evidence took them back out with the rest).
        trusted = false
      }
    } else {
      rejection.trust()
    }
    if count > 0 { rejection.followMean(force, weight: rejection.weight) }
    uncertaintyTracker.block(
      seconds: seconds, meanForce: force, hasForce: count > 0, weight: rejection.weight,
      timeConstantSeconds: inclination.timeConstantSeconds,
      initialising: inclination.isInitialising, atRest: atRest, noise: settings.noise,
      gravity: settings.gravityMetersPerSecondSquared, horizontalBiasVariance: horizontal,
      verticalBiasVariance: biasEstimator.verticalVariance(up: propagation.up))
    guard !atRest else { return }
    let (r0, r1, r2) = propagation.rows
    anchoring.accumulateDrift(up: r2, seconds: seconds)
    if motionBias.measure(
      rows: r0, r1, r2, correction: dx, dy, seconds: seconds, trusted: trusted,
      corrected: corrected, bias: &biasEstimator)
    {
      restStatistics.biasReopenedInMotion &+= 1
    }
  }

  /// A sustained acceleration was just detected, or has just stopped the filter: the
  /// corrections of the last moments were its doing, so turn them back, and restart the filter
  /// memory from the restored estimate (it holds the acceleration's onset, which would
  /// otherwise keep pulling, or be replayed when the rejection ends).
  private mutating func undoRecentCorrections() {
    // The motion's evidence against the bias counted those corrections too: they go with them.
    let (r0, r1, _) = propagation.rows
    motionBias.withdraw(
      correctionX: rejection.recentCorrectionX, rejection.recentCorrectionY, rows: r0, r1)
    let undo = rejection.undoRecentCorrections()
    propagation.turn(by: undo)
    inclination.restart(at: Vector3(0, 0, rejection.slowMean.length))
  }

  /// The start-up running mean is complete: the filter settles at its length, straight up.
  private mutating func finishInitialisation(at y: Vector3) {
    let up = Vector3(0, 0, y.length)
    inclination.settle(at: up)
    rejection.restartMean(at: up)
    refreshBlockState()
  }

  /// Applies the bias measurements collected at rest since the last block (one batch).
  @inline(__always)
  private mutating func applyRestMeasurements() {
    restMeasurements.apply(to: &biasEstimator, sampleVariance: gyroSampleVariance)
  }

  /// Recomputes what changes only at block ends and events — the state flags, the up direction
  /// the rest detector checks against, the bias the per-sample path subtracts (at the
  /// temperature of the sample that brought the change), the correction's rate in body axes —
  /// after that state changed. Called at every block end, rest transition, start, gap and
  /// coefficient change, so the per-sample path only reads them.
  private mutating func refreshBlockState() {
    let up = propagation.up
    output.refreshStateFlags(
      isRejecting: rejection.weight < 1, isRecovering: rejection.isRecovering,
      isInitialising: inclination.isInitialising, isAtRest: restDetector.isAtRest,
      isBiasLimited: biasEstimator.isLimited,
      verticalBiasVariance: biasEstimator.verticalVariance(up: up))
    restUp = restDetector.isAtRest ? up : Vector3(0, 0, 1)
    sampleBias = currentBias(atCelsius: sampleBiasCelsius)
    propagation.setCorrectionRate(inclination.correctionRateX, inclination.correctionRateY)
  }

  // MARK: - The bias

  /// The bias at `celsius` less the bias at the reference (zero without a model or a
  /// temperature).
  @inline(never)
  private func temperatureTerm(_ celsius: Double) -> Vector3 {
    hasTemperatureModel ? biasEstimator.temperatureTerm(atCelsius: celsius) : Vector3(0, 0, 0)
  }

  /// The bias at `celsius` with the model as it stands (its reference where it is now).
  private func bias(atCelsius celsius: Double) -> Vector3 {
    biasEstimator.bias + temperatureTerm(celsius)
  }

  /// The bias at T_ref + `temperatureOffset` with the model as it stands now (a rest
  /// measurement may just have moved both the bias and the coefficient).
  private func biasNow(temperatureOffset d: Double) -> Vector3 {
    d.isFinite && d != 0
      ? biasEstimator.bias + biasEstimator.temperatureCoefficient * d : biasEstimator.bias
  }

  /// The bias at `celsius` with the model as it stands, as the per-sample path takes it (the
  /// temperature term only when the temperature is known).
  @inline(__always)
  private func currentBias(atCelsius celsius: Double) -> Vector3 {
    var bias = biasEstimator.bias
    if hasTemperatureModel {
      let offset = celsius - biasEstimator.referenceTemperatureCelsius
      if offset.isFinite { bias += biasEstimator.temperatureCoefficient * offset }
    }
    return bias
  }

  // MARK: - Rest transitions

  /// The rest detector's step ended a rest or completed a dwell: handles it and returns the
  /// bias at `celsius` after it (a rest that starts here measured the bias and moved the
  /// model's reference to this temperature: this sample's outputs already carry it).
  @inline(never)
  private mutating func restTransition(
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
  private mutating func completeDwell(
    bias: Vector3, flags: inout EstimateFlags, temperatureOffset: Double
  ) {
    defer { refreshBlockState() }
    let transition = restDetector.completeDwell(
      bias: bias, biasVariance: biasEstimator.variance, up: propagation.up)
    if transition != .none {
      handle(transition, flags: &flags, temperatureOffset: temperatureOffset)
    } else {
      // Not stationary, or gravity turned: the stretch starts again.
      noteRefusedDwell(.notSteady)
    }
  }

  /// A whole dwell was not a rest (for `captureGyroBias`'s refusal).
  private mutating func noteRefusedDwell(_ refusal: GyroBiasCaptureRefusal.DwellRefusal) {
    lastRefusedDwell = (refusal, clock.lastTimestamp)
  }

  /// Rest began, ended, or was refused.
  @inline(never)
  private mutating func handle(
    _ transition: RestDetector.Transition, flags: inout EstimateFlags, temperatureOffset: Double
  ) {
    defer { refreshBlockState() }
    switch transition {
    case .none:
      break
    case .inconsistent:
      biasEstimator.widen(by: restDetector.excessVariance)
      restStatistics.biasJumps &+= 1
      noteRefusedDwell(.biasJump)
    case .refused:
      restStatistics.refusedAsTurning &+= 1
      restStatistics.lastRefusedRateRadiansPerSecond = restDetector.refusedRate
      noteRefusedDwell(.slowTurn(rateRadiansPerSecond: restDetector.refusedRate))
      let detector = restDetector
      let variance = biasEstimator.variance
      let widening = refusedRests.refused(
        difference: restDetector.refusedDifference,
        newStretch: restDetector.refusedInNewStretch
      ) { detector.refusalsAgree($0, $1, biasVariance: variance) }
      if widening > 0 {
        biasEstimator.widen(by: widening)
        restStatistics.biasReopenedAfterRefusals &+= 1
      }
    case .ended:
      endRest(temperatureOffset: temperatureOffset)
    case .started:
      let samples = restDetector.quietSamples
      if anchoring.tiltAgrees(
        meanAcceleration: restDetector.stretchAccelerationSum / Double(samples),
        up: propagation.up, biasVariance: biasEstimator.variance)
      {
        if anchoring.holdsAtRest && reacquisition.isHeadingGuessed {
          reacquisition.headingReanchored()
          output.setHeadingGuessed(false)
        }
        reanchor(samples: samples, temperatureOffset: temperatureOffset)
        flags.insert(.restStarted)
        restStatistics.rests &+= 1
      } else {
        restDetector.cancelRest()
        restStatistics.refusedAsAccelerating &+= 1
        noteRefusedDwell(.accelerating)
      }
    }
  }

  /// A rest ended: the block so far is filtered and the motion starts afresh. The last
  /// moments' rotation, held back while the heading was held, was probably the start of this
  /// motion: it is given back.
  private mutating func endRest(temperatureOffset: Double) {
    correctInclination()
    block.reset()
    applyRestMeasurements()
    anchoring.motionStarted()
    if anchoring.holdsAtRest {
      let bias = biasNow(temperatureOffset: temperatureOffset)
      propagation.turnBody(
        by: anchoring.releasedRotation(gyroMeanAtEnd: restDetector.gyroMeanAtEnd, bias: bias))
    }
  }

  /// A rest has just been declared after `samples` quiet samples: the bias is measured over
  /// them, and the attitude re-anchored (`RestAnchoring`).
  private mutating func reanchor(samples: Int, temperatureOffset: Double) {
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
    refusedRests.reset()
    motionBias.resetEvidence()
    // The rest's totals start from its window. Its last sample, this one, is measured again
    // as the rest's first held sample (`propagate`): counted once.
    let windowSum = restDetector.stretchGyroSum
    if anchoring.holdsAtRest && restMeasurements.isEnabled && samples > 1 {
      restMeasurements.startRest(
        windowSum: windowSum - restDetector.previousGyro, samples: samples - 1)
    } else {
      restMeasurements.startRest(windowSum: windowSum, samples: samples)
    }
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
      propagation.restart(
        at: anchoring.anchoredAttitude(
          propagation.attitude, samples: samples, periodSeconds: clock.periodSeconds,
          gyroSum: restDetector.stretchGyroSum,
          accelerationSum: restDetector.stretchAccelerationSum, biasBefore: biasBefore,
          biasAfter: biasAfter))
      let level = Vector3(0, 0, (restDetector.stretchAccelerationSum / n).length)
      inclination.settle(at: level)
      rejection.restartMean(at: level)
    }
    rejection.restart()
    block.reset()
    refreshBlockState()
  }

  // MARK: - Start, gaps, suspect samples, invalid samples

  /// The first sample: tilt from the accelerometer, heading zero.
  @inline(never)
  private mutating func start(_ sample: InertialSample) -> AttitudeEstimate {
    let a = sample.specificForceMetersPerSecondSquared
    propagation.restart(at: Quaternion(from: a, to: .unitZ))
    // The temperature model starts at this temperature (`GyroBiasEstimator.start(atCelsius:)`).
    if hasTemperatureModel { biasEstimator.start(atCelsius: sample.temperatureCelsius) }
    startInitialising(with: a)
    return output.restartEstimate(
      sample, attitude: propagation.attitude, bias: bias(atCelsius: sample.temperatureCelsius),
      biasVariance: biasEstimator.variance, flags: [], missedSamples: 0,
      period: clock.periodSeconds)
  }

  /// The inclination filter starts as at start-up from the reading `a` (body axes), with the
  /// attitude as it stands.
  private mutating func startInitialising(with a: Vector3) {
    inclination.startInitialising(with: rotateToReference(a, by: propagation.attitude))
    refreshBlockState()
    if inclination.initialisesAtOnce { finishInitialisation(at: inclination.output) }
  }

  /// Whether the tilt may have changed in the `seconds` before this sample by more than the
  /// gyro carried over them gives (`GapReacquisition.mayHaveTilted`), when they are long enough
  /// to restart it (`reacquisitionGapSeconds`).
  private func mayHaveTilted(
    _ sample: InertialSample, inSeconds seconds: Double, usesRates: Bool = true,
    lengthShare: Double = 0.5
  ) -> Bool {
    seconds >= reacquisition.gapSeconds
      && reacquisition.mayHaveTilted(
        gapSeconds: seconds,
        rates: usesRates ? (restDetector.gyroMean, sample.angularRateRadiansPerSecond) : nil,
        bias: biasEstimator.bias, up: propagation.up, expected: inclination.output,
        reading: rotateToReference(
          sample.specificForceMetersPerSecondSquared, by: propagation.attitude),
        lengthShare: lengthShare)
  }

  /// A gap before this sample (its whole length: `step` integrates at most
  /// `maximumIntegrationIntervalSeconds` of it), or samples before it reported suspect: the
  /// bias walked over all of the time, and the heading may have moved unseen
  /// (`GapSettings`): flagged `.headingUncertain` when by `headingStepRadians` or more.
  @inline(never)
  private mutating func accountForGap(
    _ sample: InertialSample, step: SampleClock.Step, previousTimestamp: Int64
  ) {
    var unobserved = 0.0
    var notIntegrated = 0.0
    if step.isGap {
      let interval = Double(sample.timestampNanoseconds &- previousTimestamp) * 1e-9
      unobserved = max(0, interval - clock.periodSeconds)
      notIntegrated = max(0, interval - step.intervalSeconds)
      // The bias walked over the whole gap. In motion the blocks predict it over the time
      // integrated, and this the rest; at rest they do not (the rest measures it), and
      // nothing measured it while no sample came.
      let walked =
        anchoring.holdsAtRest && restDetector.isAtRest ? unobserved : notIntegrated
      if walked > 0 { biasEstimator.predict(seconds: walked) }
    }
    // Suspect samples were integrated with rates that may be wrong: as if not at all.
    let suspect = reacquisition.suspectSeconds
    unobserved += suspect
    notIntegrated += suspect
    let rate = sample.angularRateRadiansPerSecond - bias(atCelsius: sample.temperatureCelsius)
    uncertaintyTracker.gap(
      unobservedSeconds: unobserved, notIntegratedSeconds: notIntegrated,
      verticalRate: rate.dot(propagation.up), noise: settings.noise,
      horizontalBiasVariance: biasEstimator.horizontalVariance(up: propagation.up),
      verticalBiasVariance: biasEstimator.verticalVariance(up: propagation.up))
    if reacquisition.headingMayHaveStepped(
      unobservedSeconds: unobserved, notIntegratedSeconds: notIntegrated,
      verticalRate: rate.dot(propagation.up))
    {
      output.setHeadingGuessed(true)
    }
    // The bias's variance may have grown past `headingUncertainBiasRadiansPerSecond`.
    refreshBlockState()
  }

  /// Whether samples before this one were reported suspect (`distrustRecentSamples`) and the
  /// tilt may have changed over them. No rate can be trusted here: the rate before is the
  /// suspect samples' own, and the bias the rate after is measured against may have learnt
  /// from them. And the attitude they carried may be off, which widens the angle an
  /// acceleration shows without lengthening it: the reading must be nearer gravity's length by
  /// twice as much.
  private mutating func suspectSamplesMayHaveTilted(_ sample: InertialSample) -> Bool {
    guard reacquisition.suspectSeconds > 0 else { return false }
    let seconds = reacquisition.takeSuspectSeconds()
    return mayHaveTilted(sample, inSeconds: seconds, usesRates: false, lengthShare: 0.25)
  }

  /// The first sample after a gap of `reacquisitionGapSeconds` or more (or suspect samples):
  /// the tilt restarts as at start-up (this reading, then the running mean of the
  /// accelerometer carried by the gyro), keeping the heading and the bias; the acceleration
  /// rejection starts afresh. The gap itself is integrated with the rate after it over
  /// `interval` seconds (zero: not at all).
  @inline(never)
  private mutating func reacquire(
    _ sample: InertialSample, missedSamples: Int, gap: Bool, carrying interval: Double = 0
  ) -> AttitudeEstimate {
    let a = sample.specificForceMetersPerSecondSquared
    let period = clock.periodSeconds
    updateCoefficients(period: period)
    applyRestMeasurements()
    reacquisition.countReacquisition()
    let bias = self.bias(atCelsius: sample.temperatureCelsius)
    if interval > 0 {
      // Carry the attitude over the gap with the rate after it (its length as integrated,
      // `SampleClock`'s cap included) before the heading is taken from it: the turn made
      // meanwhile is the best guess there is.
      let w = sample.angularRateRadiansPerSecond - bias
      propagation.carry(Vector3(w.x * interval, w.y * interval, w.z * interval))
    }
    if a.squaredLength > 0 {
      // Keep the twist about the vertical (the heading), take the tilt from this reading.
      let q = propagation.attitude
      let n = (q.w * q.w + q.z * q.z).squareRoot()
      let twist =
        n > 1e-9 ? Quaternion(w: q.w / n, x: 0, y: 0, z: q.z / n) : Quaternion.identity
      propagation.restart(at: (twist * Quaternion(from: a, to: .unitZ)).normalized)
    }
    block.reset()
    inclination.restart(at: Vector3(0, 0, 0))
    rejection.reset()
    startInitialising(with: a)
    return output.restartEstimate(
      sample, attitude: propagation.attitude, bias: bias, biasVariance: biasEstimator.variance,
      flags: gap ? .gap : [], missedSamples: missedSamples, period: period)
  }

  /// One standard deviation of the attitude's error, from the estimator's state: tilt and
  /// heading (`AttitudeUncertaintyTracker` states the model). Changes once per block (0.2 s)
  /// and at gaps.
  public var uncertainty: AttitudeUncertainty { uncertaintyTracker.current }

  /// The heading was redefined where it stands (a tare): its uncertainty starts again at 0.
  public mutating func resetHeadingUncertainty() {
    uncertaintyTracker.resetHeading()
  }

  /// Tells the estimator that the samples of the last `seconds` may have been misread — a
  /// configuration register the driver's read-back found changed (a full-scale setting that
  /// made the gyro read 8× small), whatever was converted with the wrong scale until then. The
  /// next sample is judged as after a gap of that length (`reacquisitionGapSeconds`): when the
  /// body may have tilted meanwhile, the tilt restarts from the accelerometer, keeping the
  /// heading and the bias; and the heading, carried by rates that may have been misread, is
  /// flagged `.headingUncertain` as after a gap whose time was not integrated (`GapSettings`).
  /// Costs the next sample the out-of-line path, nothing else.
  public mutating func distrustRecentSamples(seconds: Double) {
    guard seconds.isFinite, seconds > 0 else { return }
    reacquisition.distrust(seconds: seconds)
    // The next sample takes `updateInFull`, which judges it: its band check fails, and
    // `updateInFull` puts the band back (`setCoefficients`).
    coefficientPeriodHigh = -.infinity
  }

  // MARK: - Retune and gyro-bias capture (between two samples)

  /// The tunable settings in effect (`settings`' tunable part).
  public var tunables: Tunables { Tunables(settings: settings) }

  /// Changes the tunable settings between two samples: from the next sample on, the estimator
  /// runs as if it had been built with them, from the state it is in (`Tunables` says what
  /// each change does, and why the other settings are not tunable). `settings` says what is in
  /// effect afterwards. Values that did not change cost nothing and change nothing: retuning
  /// to `tunables` leaves every later estimate bit-identical. A value that changes must lie in
  /// its range (`Tunables.refusal(from:)`); refused, nothing is changed and the refusal names
  /// the setting, the value given and its range with units.
  ///
  /// Deterministic: the same retune between the same two samples gives the same estimates, so
  /// a recording of the samples and the command replays it. Not on the per-sample path: it
  /// recomputes coefficients (`atan` for the rejection's tilt budget, `tan` for the row
  /// filters), as a change of the sample period does.
  public mutating func retune(_ new: Tunables) -> Result<Void, TunableRefusal> {
    let current = tunables
    if let refusal = new.refusal(from: current) { return .failure(refusal) }
    guard new != current else { return .success(()) }
    if new.timeConstantSeconds != current.timeConstantSeconds {
      let tau = new.timeConstantSeconds
      settings.inclination.timeConstantSeconds = tau
      inclination.setTimeConstant(tau)
      motionBias.setTimeConstant(tau)
      anchoring.inclinationTimeConstantSeconds = tau
    }
    if new.rejectsAccelerations != current.rejectsAccelerations
      || new.rejectionLowerThresholdMetersPerSecondSquared
        != current.rejectionLowerThresholdMetersPerSecondSquared
      || new.rejectionUpperThresholdMetersPerSecondSquared
        != current.rejectionUpperThresholdMetersPerSecondSquared
    {
      settings.accelerationRejection.isEnabled = new.rejectsAccelerations
      settings.accelerationRejection.lowerThresholdMetersPerSecondSquared =
        new.rejectionLowerThresholdMetersPerSecondSquared
      settings.accelerationRejection.upperThresholdMetersPerSecondSquared =
        new.rejectionUpperThresholdMetersPerSecondSquared
      rejection.setThresholds(
        settings.accelerationRejection, gravity: settings.gravityMetersPerSecondSquared)
      reacquisition.setTiltAngle(settings)
    }
    if new.holdsAttitudeAtRest != current.holdsAttitudeAtRest {
      settings.holdsAttitudeAtRest = new.holdsAttitudeAtRest
      anchoring.holdsAtRest = new.holdsAttitudeAtRest
    }
    // The flags (a rejection switched off ends), the correction rate.
    refreshBlockState()
    return .success(())
  }

  /// Adopts the gyro bias measured over the current rest, at once (a ground station's
  /// MAV_CMD_PREFLIGHT_CALIBRATION, a host's command): when the estimator says the board is at
  /// rest, the bias becomes the mean raw rate of the rest's samples — the quiet window that
  /// declared the rest and every sample measured since (with the attitude held at rest; with
  /// it not held, the window alone) — with the variance of that mean, N²/T per axis (N the
  /// configured gyro noise density, T the time averaged). Whatever the bias was before (a
  /// calibration file, earlier rests) is dropped rather than weighed against it: the user asks
  /// for this rest's bias. The rest's later samples go on measuring it, so a capture after a
  /// longer rest is the mean over all of it.
  ///
  /// The estimate's `gyroBiasRadiansPerSecond` is the captured bias from the next sample on
  /// (plus the temperature model's term, zero at the rest's temperature). Refused, with what
  /// to do, when the board is not at rest (moving, still for less than a dwell, or its last
  /// dwell refused by the rest detector), while initialising, or when rest detection is off;
  /// nothing is changed then. Deterministic, like `retune`.
  public mutating func captureGyroBias() -> Result<GyroBiasCapture, GyroBiasCaptureRefusal> {
    if let refusal = gyroBiasCaptureRefusal() { return .failure(refusal) }
    let (sum, n) = restMeasurements.takeRestTotals()
    let mean = sum * (1 / Double(n))
    let sigma = (gyroSampleVariance / Double(n)).squareRoot()
    biasEstimator.reset(bias: mean, uncertaintyRadiansPerSecond: sigma)
    refreshBlockState()
    return .success(
      GyroBiasCapture(
        biasRadiansPerSecond: biasEstimator.bias, standardDeviationRadiansPerSecond: sigma,
        restSeconds: Double(n) * capturePeriodSeconds, samples: n,
        referenceTemperatureCelsius: biasEstimator.referenceTemperatureCelsius))
  }

  /// The sample period for a capture's durations, seconds: the estimate, or before one the
  /// nominal period the estimator started with.
  private var capturePeriodSeconds: Double {
    let period = clock.periodSeconds
    return period > 0 ? period : settings.sampleClock.nominalPeriodSeconds ?? 0.01
  }

  /// Why a gyro-bias capture cannot be made now, or `nil` when it can.
  private func gyroBiasCaptureRefusal() -> GyroBiasCaptureRefusal? {
    let period = capturePeriodSeconds
    let dwell = restDetector.dwellSamples
    let quiet = restDetector.isAtRest ? dwell : min(restDetector.quietSamples, dwell)
    let toRest = dwell - quiet
    func refusal(_ reason: GyroBiasCaptureRefusal.Reason, hold: Int) -> GyroBiasCaptureRefusal {
      GyroBiasCaptureRefusal(
        reason: reason, stillSeconds: Double(quiet) * period,
        holdSeconds: Double(hold) * period, dwellSeconds: Double(dwell) * period)
    }
    guard restDetector.settings.isEnabled else {
      return refusal(.restDetectionOff, hold: 0)
    }
    if inclination.isInitialising {
      return refusal(
        .initialising, hold: max(inclination.initialisationSamplesRemaining, toRest))
    }
    if restDetector.isAtRest { return nil }
    // Did a dwell decision start this quiet stretch (the board still since), or motion?
    if let (dwellRefusal, timestamp) = lastRefusedDwell,
      Double(clock.lastTimestamp &- timestamp) * 1e-9 < (Double(quiet) + 0.5) * period
    {
      if case .slowTurn = dwellRefusal {
        return refusal(.dwellRefused(dwellRefusal), hold: 2 * dwell)
      }
      return refusal(.dwellRefused(dwellRefusal), hold: toRest)
    }
    return refusal(quiet == 0 ? .moving : .movedRecently, hold: toRest)
  }

  /// A sample that cannot be used: the current state, flagged.
  @inline(never)
  private func rejected(_ sample: InertialSample, flag: EstimateFlags) -> AttitudeEstimate {
    output.rejectedEstimate(
      sample, attitude: propagation.attitude, bias: bias(atCelsius: sample.temperatureCelsius),
      biasVariance: biasEstimator.variance, flag: flag, period: clock.periodSeconds)
  }

  // MARK: - Coefficients

  /// Recomputes the coefficients when `period` left their band.
  private mutating func updateCoefficients(period: Double) {
    if !(period >= coefficientPeriodLow && period <= coefficientPeriodHigh) {
      setCoefficients(period: period)
    }
  }

  /// Recomputes everything that depends on the sample period.
  @inline(never)
  private mutating func setCoefficients(period: Double) {
    guard period > 0 else { return }
    applyRestMeasurements()
    coefficientPeriodLow = period * (1 - 0.005)
    coefficientPeriodHigh = period * (1 + 0.005)
    inclination.setSamplePeriod(period)
    restDetector.setSamplePeriod(period)
    let n = settings.noise.gyroNoiseDensity
    gyroSampleVariance = n * n / period
    restDetector.setGyroSampleVariance(gyroSampleVariance)
    let blockPeriod = block.setLength(samplePeriod: period)
    motionBias.setBlockPeriod(blockPeriod)
    rejection.setBlockPeriod(blockPeriod)
    refreshBlockState()
  }
}
