#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

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
///    blended toward the expected gravity when it disagrees too much (acceleration rejection,
///    with recovery after prolonged rejection), low-pass filtered there (second-order
///    Butterworth, τ = 3 s), and the attitude is turned about a horizontal axis so that the
///    filtered vector points straight up. Because the filter runs in the (almost inertial)
///    reference frame, the body's rotation does not smear it, and a hand's back-and-forth
///    accelerations average out, as in VQF (Laidig & Seel 2023). The filter's memory is
///    rotated with every correction, so it stays consistent with the corrected frame.
/// 6. **Rest start** re-anchors: the bias takes the mean rate of the whole quiet window, the
///    heading drift integrated during the window is undone, and the tilt is taken from the
///    window's mean acceleration.
///
/// ## Frames and what yaw means
///
/// The attitude maps body-frame vectors into the reference frame: right-handed, z up, x along
/// the body's x axis at start (projected on the horizontal). With no magnetometer nothing
/// measures heading: it is relative to the start and drifts by the residual vertical gyro bias
/// times the time spent moving (about 0.01 °/s after a rest, so ~0.6° per minute of motion;
/// nothing while at rest).
///
/// ## Cost
///
/// All state is stored inline (a value type: no heap, no exclusivity checks). Filter
/// coefficients are recomputed only when the period estimate moves by more than 0.5 %. The
/// motion-bias measurement runs every 50 ms, not every sample.
public struct AttitudeEstimator: Sendable {
  public let settings: Settings

  /// The sample clock (period estimate, gap and missed-sample counters).
  public private(set) var clock: SampleClock
  /// The rest detector.
  public private(set) var restDetector: RestDetector
  /// The gyro-bias estimate.
  public private(set) var biasEstimator: GyroBiasEstimator

  // MARK: State

  /// Body → reference attitude (normalised every update).
  var q: Quaternion = .identity
  /// Inclination filter memory (reference frame, m/s²).
  var s1: Vector3 = .zero
  var s2: Vector3 = .zero
  /// Start-up running sum (reference frame) and count.
  var initialSum: Vector3 = .zero
  var initialCount: Int = 0
  var isInitialising = true
  /// Sustained-acceleration detector: the horizontal specific force relative to its slow mean,
  /// low-pass filtered (second order), reference frame, m/s²; filter memory.
  var sustainedX = (0.0, 0.0)
  var sustainedY = (0.0, 0.0)
  var detectorLowPass = LowPassCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)
  /// Corrections applied recently (leaky sum over the detector's time constant), reference
  /// frame horizontal rotation vector, rad: undone when a sustained acceleration is detected.
  var recentCorrectionX: Double = 0
  var recentCorrectionY: Double = 0
  var recentRetention: Double = 1
  var wasRejecting = false
  /// Slow mean of the specific force in the reference frame (the sustained-acceleration
  /// detector's reference), m/s².
  var slowMean: Vector3 = .zero
  var slowMeanGain: Double = 0
  /// Acceleration-rejection counter (samples) and state.
  var rejectionCounter: Int = 0
  var isRecovering = false
  /// Rotation integrated (leaky, over the rest window's time constant) while the attitude is
  /// held at rest: applied when the rest ends.
  var restRotation: Vector3 = .zero
  var restRotationRetention: Double = 1
  /// The heading drift model of the motion since the last rest: Σ up·t·Δt (body axes, s²),
  /// the motion's duration, and whether a rest has measured the bias before it.
  var driftWeights: Vector3 = .zero
  var segmentSeconds: Double = 0
  var hasMeasuredRest = false
  /// Sums over the rest candidate window.
  var temperatureOffsetNow: Vector3 = .zero
  var windowRotation: Vector3 = .zero
  /// Motion-bias block: correction accumulated (reference x, y), time, samples.
  var blockCorrectionX: Double = 0
  var blockCorrectionY: Double = 0
  var blockSeconds: Double = 0
  var blockSamples: Int = 0
  var blockTrusted = true
  /// Low-pass filtered first two rows of the rotation matrix and of R·b̂ (block rate).
  var rowFilter = RowFilter()
  /// The last estimate, returned (flagged) for a rejected sample.
  public private(set) var lastEstimate: AttitudeEstimate

  // MARK: Coefficients (recomputed when the period estimate changes)

  var coefficientPeriod: Double = 0
  var lowPass = LowPassCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)
  /// The second-order inclination filter's step (this sample's interval, s) and cutoff
  /// (ω_c = √2/τ, rad/s).
  var filterStep: Double = 0.01

  var filterRate: Double = 0.47
  var blockLowPass = LowPassCoefficients(b0: 1, b1: 0, b2: 0, a1: 0, a2: 0)
  var gyroSampleVariance: Double = 0
  var initialLimit: Int = 1
  var blockLimit: Int = 1
  var motionNoiseVariance: Double = 0
  var motionMaximumGain: Double = 0
  var recoveryLimit: Int = 1
  let gravity: Double
  let inverseGravity: Double
  let rejectLowSquared: Double
  let rejectHighSquared: Double
  let rejectSlope: Double

  /// The time between motion-bias measurements, seconds.
  static let motionBlockSeconds = 0.05

  /// A new estimator. Check `settings.problem` first when the settings come from a person.
  public init(settings: Settings = .default) {
    self.settings = settings
    clock = SampleClock(settings: settings.sampleClock)
    let period = settings.sampleClock.nominalPeriodSeconds ?? 0.01
    restDetector = RestDetector(settings: settings.rest, samplePeriodSeconds: period)
    biasEstimator = GyroBiasEstimator(settings: settings.bias, noise: settings.noise)
    gravity = settings.gravityMetersPerSecondSquared
    inverseGravity = 1 / settings.gravityMetersPerSecondSquared
    let r = settings.accelerationRejection
    rejectLowSquared = r.lowerThresholdMetersPerSecondSquared * r.lowerThresholdMetersPerSecondSquared
    rejectHighSquared = r.upperThresholdMetersPerSecondSquared * r.upperThresholdMetersPerSecondSquared
    rejectSlope = r.isEnabled ? 1 / max(rejectHighSquared - rejectLowSquared, 1e-12) : 0
    lastEstimate = AttitudeEstimate(
      timestampNanoseconds: 0, attitude: .identity, gravityInBody: Vector3(0, 0, -1),
      linearAccelerationMetersPerSecondSquared: .zero, angularRateRadiansPerSecond: .zero,
      gyroBiasRadiansPerSecond: settings.bias.initialBiasRadiansPerSecond,
      gyroBiasVariance: biasEstimator.variance, flags: .initialising, missedSamples: 0,
      integrationIntervalSeconds: 0, samplePeriodSeconds: period)
    setCoefficients(period: period)
  }

  /// The current attitude (body → reference).
  public var attitude: Quaternion { q }

  /// Takes one sample and returns the estimate after it. Exactly one estimate per sample;
  /// a sample that cannot be used (non-increasing timestamp, NaN) returns the previous
  /// attitude with `.timestampRejected` or `.invalidInput`.
  public mutating func update(_ sample: InertialSample) -> AttitudeEstimate {
    let gyro = sample.angularRateRadiansPerSecond
    let accel = sample.specificForceMetersPerSecondSquared
    guard (gyro.x + gyro.y + gyro.z + accel.x + accel.y + accel.z).isFinite else {
      return rejected(sample, flag: .invalidInput)
    }
    let step = clock.advance(toNanoseconds: sample.timestampNanoseconds)
    if step.isRejected { return rejected(sample, flag: .timestampRejected) }
    if step.isFirst { return start(sample) }

    var flags: EstimateFlags = []
    if step.isGap { flags.insert(.gap) }
    if sample.isClipped { flags.insert(.clippedInput) }
    let period = clock.periodSeconds
    if abs(period - coefficientPeriod) > 0.005 * coefficientPeriod {
      setCoefficients(period: period)
    }
    let dt = step.intervalSeconds

    // Bias: predict, then compensate temperature.
    biasEstimator.predict(seconds: dt)
    let temperatureTerm = temperatureOffset(sample.temperatureCelsius)
    temperatureOffsetNow = temperatureTerm
    let bias = biasEstimator.bias + temperatureTerm
    let omega = gyro - bias

    // Rest.
    let transition = restDetector.update(
      gyro: gyro, acceleration: accel, bias: bias, biasVariance: biasEstimator.variance,
      gyroSampleVariance: gyroSampleVariance, up: -lastEstimate.gravityInBody,
      usable: !sample.isClipped)
    var atRest = restDetector.isAtRest
    if !atRest {
      // The rotation integrated over the quiet stretch (undone if it turns out to be a rest).
      let n = restDetector.quietSamples
      if n == 1 {
        windowRotation = omega * dt
      } else if n > 1 {
        windowRotation += omega * dt
      }
    }
    if case .inconsistent(let excess) = transition { biasEstimator.widen(by: excess) }
    if transition == .ended {
      // The rest has ended: the last moments' rotation, held back while the heading was held,
      // was probably the start of this motion; give it back.
      resetBlock()
      driftWeights = .zero
      segmentSeconds = 0
      if settings.holdsAttitudeAtRest { propagate(restRotation) }
      restRotation = .zero
    }
    if case .started(let samples) = transition {
      if tiltAgrees(meanAcceleration: restDetector.stretchAccelerationSum / Double(samples)) {
        reanchor(samples: samples)
        restRotation = .zero
        flags.insert(.restStarted)
      } else {
        restDetector.cancelRest()
        atRest = false
      }
    }
    atRest = atRest && settings.holdsAttitudeAtRest

    // Propagation (none at rest: the heading is held).
    if atRest {
      restRotation = restRotation * restRotationRetention + omega * dt
      if settings.bias.restEstimationEnabled {
        biasEstimator.observeAtRest(
          meanRate: gyro - temperatureTerm, sampleVariance: gyroSampleVariance)
      }
    } else {
      propagate(omega * dt)
    }

    // Inclination correction.
    let x = q.rotate(accel)
    var weight = 1.0
    if atRest {
      sustainedX = (0, 0)
      sustainedY = (0, 0)
    } else if rejectSlope > 0 {
      // Sustained acceleration: the horizontal specific force relative to its slow mean,
      // filtered with a one-second time constant. A hand's back-and-forth accelerations mostly
      // cancel in it; a push or a vehicle accelerating does not.
      let c = detectorLowPass
      let ux = x.x - slowMean.x
      let uy = x.y - slowMean.y
      let ax = ux * c.b0 + sustainedX.0
      sustainedX = (ux * c.b1 - ax * c.a1 + sustainedX.1, ux * c.b2 - ax * c.a2)
      let ay = uy * c.b0 + sustainedY.0
      sustainedY = (uy * c.b1 - ay * c.a1 + sustainedY.1, uy * c.b2 - ay * c.a2)
      let v2 = ax * ax + ay * ay
      if v2 > rejectLowSquared || sample.isClipped {
        weight = sample.isClipped ? 0 : max(0, (rejectHighSquared - v2) * rejectSlope)
      }
      weight = rejectionRule(weight, flags: &flags)
      if weight < 1 && !wasRejecting { undoRecentCorrections() }
      wasRejecting = weight < 1
    } else if sample.isClipped {
      weight = 0
    }
    slowMean += (x - slowMean) * (slowMeanGain * weight)
    filterStep = dt
    correct(toward: x, weight: weight)

    // Motion-bias measurement, every block.
    if !atRest {
      blockSamples += 1
      blockSeconds += dt
      blockTrusted = blockTrusted && weight == 1 && !isRecovering
      if blockSamples >= blockLimit { motionBiasUpdate() }
    }
    if isInitialising { flags.insert(.initialising) }
    if restDetector.isAtRest { flags.insert(.atRest) }
    if biasEstimator.isLimited { flags.insert(.biasLimited) }

    // Outputs.
    let gravityInBody = q.gravityInBody
    let estimate = AttitudeEstimate(
      timestampNanoseconds: sample.timestampNanoseconds, attitude: q,
      gravityInBody: gravityInBody,
      linearAccelerationMetersPerSecondSquared: accel + gravityInBody * gravity,
      angularRateRadiansPerSecond: atRest ? gyro - biasEstimator.bias - temperatureTerm : omega,
      gyroBiasRadiansPerSecond: atRest ? biasEstimator.bias + temperatureTerm : bias,
      gyroBiasVariance: biasEstimator.variance, flags: flags,
      missedSamples: step.missedSamples, integrationIntervalSeconds: dt,
      samplePeriodSeconds: period)
    lastEstimate = estimate
    return estimate
  }

  // MARK: - Steps

  @inline(__always)
  func temperatureOffset(_ celsius: Double) -> Vector3 {
    let c = settings.bias.temperatureCoefficientRadiansPerSecondPerCelsius
    let t = celsius - settings.bias.referenceTemperatureCelsius
    return t.isFinite ? c * t : .zero
  }

  /// Turns the attitude by the body-frame rotation vector `r` (rad): `q ← q ⊗ exp(r)`, with the
  /// exponential map's series to third order (relative angle error below θ⁴/1920, 4 × 10⁻⁹ at
  /// 1000 °/s and 100 Hz), then normalises.
  @inline(__always)
  mutating func propagate(_ r: Vector3) {
    let t2 = r.squaredLength
    let w = 1 - t2 * (1.0 / 8) + t2 * t2 * (1.0 / 384)
    let s = 0.5 - t2 * (1.0 / 48)
    q = q * Quaternion(w: w, x: r.x * s, y: r.y * s, z: r.z * s)
  }

  /// Filters `x` (the accelerometer in the reference frame, possibly blended) and turns the
  /// attitude so the filtered vector points up; rotates the filter memory with it.
  @inline(__always)
  mutating func correct(toward x: Vector3, weight: Double = 1) {
    var y: Vector3
    if isInitialising {
      initialSum += x
      initialCount += 1
      y = initialSum / Double(initialCount)
    } else if settings.inclination.order == .second {
      // Second-order low-pass in state-space form: y is the filtered vector, s2 its rate of
      // change. ω_c = √2/τ and damping 1/√2 (Butterworth); rejection slows its clock.
      let h = min(filterStep * weight, 0.5 / filterRate)
      let a = filterRate * filterRate * h
      let b = 2.0.squareRoot() * filterRate * h
      s2 = s2 + (x - s1) * a - s2 * b
      s1 = s1 + s2 * h
      y = s1
    } else {
      let c = lowPass
      y = x * c.b0 + s1
      let n1 = x * c.b1 - y * c.a1 + s2
      let n2 = x * c.b2 - y * c.a2
      if weight == 1 {
        s1 = n1
        s2 = n2
      } else {
        // Rejection slows the filter's clock: a weight of 0 freezes its memory (no sample is
        // substituted, so nothing pulls it toward the current estimate).
        s1 += (n1 - s1) * weight
        s2 += (n2 - s2) * weight
        y = Vector3(y.x * weight, y.y * weight, y.z)
      }
    }
    // The small rotation (about a horizontal axis) that takes y onto +z: δ ≈ (y_y, −y_x, 0)/|y|.
    // |y| ≈ g; the snap repeats every sample, so a gain a few percent off is immaterial.
    var dx = y.y * inverseGravity
    var dy = -y.x * inverseGravity
    if dx * dx + dy * dy > 1e-4 {
      // A large correction (start-up, recovery): exact shortest arc.
      largeCorrection(y)
      dx = 0
      dy = 0
    } else {
      // q ← (1, δ/2) ⊗ q, states ← states + δ × states.
      let hx = 0.5 * dx
      let hy = 0.5 * dy
      let p = q
      q = Quaternion(
        w: p.w - hx * p.x - hy * p.y, x: p.x + hx * p.w + hy * p.z,
        y: p.y - hx * p.z + hy * p.w, z: p.z + hx * p.y - hy * p.x)
      if isInitialising {
        initialSum = rotateSmall(initialSum, dx, dy)
      } else {
        s1 = rotateSmall(s1, dx, dy)
        s2 = rotateSmall(s2, dx, dy)
      }
      slowMean = rotateSmall(slowMean, dx, dy)
    }
    // Normalise: one Newton step is exact to rounding for the tiny norm errors of one update.
    let n2 = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z
    let f = 1.5 - 0.5 * n2
    if abs(n2 - 1) < 1e-6 {
      q = Quaternion(w: q.w * f, x: q.x * f, y: q.y * f, z: q.z * f)
    } else {
      q = q.normalized
    }
    blockCorrectionX += dx
    blockCorrectionY += dy
    recentCorrectionX = recentCorrectionX * recentRetention + dx
    recentCorrectionY = recentCorrectionY * recentRetention + dy
    if isInitialising && initialCount >= initialLimit { finishInitialisation(at: y) }
  }

  @inline(__always)
  /// A sustained acceleration was just detected: the corrections of the last moments were its
  /// doing, so turn them back, and restart the filter memory from the restored estimate (it
  /// holds the acceleration's onset, which would otherwise keep pulling).
  mutating func undoRecentCorrections() {
    let undo = Quaternion(rotationVector: Vector3(-recentCorrectionX, -recentCorrectionY, 0))
    q = (undo * q).normalized
    recentCorrectionX = 0
    recentCorrectionY = 0
    (s1, s2) = steadyFilterStates(Vector3(0, 0, slowMean.length))
    slowMean = undo.rotate(slowMean)
  }

  /// Filter memory that passes a constant `x` unchanged.
  func steadyFilterStates(_ x: Vector3) -> (Vector3, Vector3) {
    settings.inclination.order == .second ? (x, .zero) : lowPass.steadyStates(x)
  }

  func rotateSmall(_ v: Vector3, _ dx: Double, _ dy: Double) -> Vector3 {
    Vector3(v.x + dy * v.z, v.y - dx * v.z, v.z + dx * v.y - dy * v.x)
  }

  mutating func largeCorrection(_ y: Vector3) {
    let d = Quaternion(from: y, to: .unitZ)
    q = (d * q).normalized
    if isInitialising {
      initialSum = d.rotate(initialSum)
    } else {
      s1 = d.rotate(s1)
      s2 = d.rotate(s2)
    }
    slowMean = d.rotate(slowMean)
  }

  mutating func finishInitialisation(at y: Vector3) {
    isInitialising = false
    let up = Vector3(0, 0, y.length)
    (s1, s2) = steadyFilterStates(up)
    slowMean = up
  }

  /// Acceleration rejection with recovery; returns the weight actually used.
  @inline(__always)
  mutating func rejectionRule(_ weight: Double, flags: inout EstimateFlags) -> Double {
    if isInitialising { return 1 }
    if weight < 1 {
      flags.insert(.accelerationRejected)
      if rejectionCounter < recoveryLimit { rejectionCounter += 1 }
      if rejectionCounter >= recoveryLimit { isRecovering = true }
    } else if rejectionCounter > 0 {
      rejectionCounter = max(0, rejectionCounter - settings.accelerationRejection.recoveryRatio)
      if rejectionCounter == 0 { isRecovering = false }
    }
    if isRecovering {
      flags.insert(.recovering)
      return 1
    }
    return weight
  }

  /// The first sample: tilt from the accelerometer, heading zero.
  mutating func start(_ sample: InertialSample) -> AttitudeEstimate {
    let a = sample.specificForceMetersPerSecondSquared
    q = Quaternion(from: a, to: .unitZ)
    isInitialising = true
    initialSum = .zero
    initialCount = 0
    let x = q.rotate(a)
    correct(toward: x)
    var flags: EstimateFlags = []
    if isInitialising { flags.insert(.initialising) }
    if sample.isClipped { flags.insert(.clippedInput) }
    let bias = biasEstimator.bias + temperatureOffset(sample.temperatureCelsius)
    let g = q.gravityInBody
    let estimate = AttitudeEstimate(
      timestampNanoseconds: sample.timestampNanoseconds, attitude: q, gravityInBody: g,
      linearAccelerationMetersPerSecondSquared: a + g * gravity,
      angularRateRadiansPerSecond: sample.angularRateRadiansPerSecond - bias,
      gyroBiasRadiansPerSecond: bias, gyroBiasVariance: biasEstimator.variance, flags: flags,
      missedSamples: 0, integrationIntervalSeconds: 0, samplePeriodSeconds: clock.periodSeconds)
    lastEstimate = estimate
    return estimate
  }

  mutating func rejected(_ sample: InertialSample, flag: EstimateFlags) -> AttitudeEstimate {
    var e = lastEstimate
    e.timestampNanoseconds = sample.timestampNanoseconds
    e.flags = lastEstimate.flags.intersection([.initialising, .atRest]).union(flag)
    e.missedSamples = 0
    e.integrationIntervalSeconds = 0
    return e
  }

  /// Whether a rest window's mean specific force points where the estimate expects gravity's
  /// reaction, within the settings' angle plus what the bias uncertainty allows.
  func tiltAgrees(meanAcceleration a: Vector3) -> Bool {
    let up = -q.gravityInBody
    let n = a.length
    guard n > 0 else { return false }
    let sine = a.cross(up).length / n
    let v = biasEstimator.variance
    let sigma = max(v.x, v.y, v.z).squareRoot()
    let allowed = settings.rest.maximumTiltDisagreementRadians
      + 3 * sigma * settings.inclination.timeConstantSeconds
    return allowed >= .pi / 2 || (sine <= sin(allowed) && a.dot(up) > 0)
  }

  /// A rest has just been declared after `samples` quiet samples (sums in the window fields).
  mutating func reanchor(samples: Int) {
    let n = Double(samples)
    let biasBefore = biasEstimator.bias
    if settings.bias.restEstimationEnabled {
      biasEstimator.observeAtRest(
        meanRate: restDetector.stretchGyroSum / n - temperatureOffsetNow, samples: samples,
        sampleVariance: gyroSampleVariance)
    }
    restDetector.setRestBias(
      biasEstimator.bias + temperatureOffsetNow,
      variance: biasEstimator.variance + Vector3(1, 1, 1) * (gyroSampleVariance / n))
    if settings.holdsAttitudeAtRest {
      // The window was still: the rotation integrated over it was bias, so undo it; keep the
      // heading that leaves, and take the tilt from the window's mean acceleration.
      let undone = q * Quaternion(rotationVector: -windowRotation)
      let twistNorm = (undone.w * undone.w + undone.z * undone.z).squareRoot()
      var twist =
        twistNorm > 1e-9
        ? Quaternion(w: undone.w / twistNorm, x: 0, y: 0, z: undone.z / twistNorm) : .identity
      // The bias this rest measured differs from the one the motion was integrated with. Had
      // it drifted there steadily (the expected path of a random walk between two known
      // points), the heading gained Δb · Σ up·t·Δt / T; take that back.
      if hasMeasuredRest && segmentSeconds > 0 && settings.bias.restEstimationEnabled {
        let change = biasEstimator.bias - biasBefore
        let heading = -change.dot(driftWeights) / segmentSeconds
        twist = Quaternion(axis: .unitZ, angle: heading) * twist
      }
      let meanAcceleration = restDetector.stretchAccelerationSum / n
      q = (twist * Quaternion(from: meanAcceleration, to: .unitZ)).normalized
      let up = Vector3(0, 0, meanAcceleration.length)
      (s1, s2) = steadyFilterStates(up)
      slowMean = up
      hasMeasuredRest = settings.bias.restEstimationEnabled
      if isInitialising {
        isInitialising = false
      }
    }
    rejectionCounter = 0
    isRecovering = false
    resetBlock()
  }

  @inline(__always)
  mutating func resetBlock() {
    blockCorrectionX = 0
    blockCorrectionY = 0
    blockSeconds = 0
    blockSamples = 0
    blockTrusted = true
  }

  /// Every `motionBlockSeconds`: the correction accumulated over the block measures the
  /// horizontal part of the bias error (VQF's motion bias estimation, with a diagonal
  /// covariance and sequential scalar updates).
  mutating func motionBiasUpdate() {
    let seconds = blockSeconds
    let rate0 = -blockCorrectionX / seconds
    let rate1 = -blockCorrectionY / seconds
    let trusted = blockTrusted && !isInitialising
    resetBlock()
    // Rows 0 and 1 of R(q) (body → reference), and R·b̂.
    let (w, x, y, z) = (q.w, q.x, q.y, q.z)
    let r0 = Vector3(1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y))
    let r1 = Vector3(2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x))
    let r2 = Vector3(2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y))
    segmentSeconds += seconds
    driftWeights += r2 * ((segmentSeconds - 0.5 * seconds) * seconds)
    let b = biasEstimator.bias
    let (h0, h1, rb0, rb1) = rowFilter.update(
      r0, r1, r0.dot(b), r1.dot(b), coefficients: blockLowPass)
    guard trusted, settings.bias.motionEstimationEnabled else { return }
    // y = correction rate + LP(R b̂) measures LP(R) b; innovation e = y − LP(R) b̂.
    biasEstimator.observe(
      row: h0, innovation: rate0 + rb0 - h0.dot(biasEstimator.bias),
      noiseVariance: motionNoiseVariance, maximumGain: motionMaximumGain)
    biasEstimator.observe(
      row: h1, innovation: rate1 + rb1 - h1.dot(biasEstimator.bias),
      noiseVariance: motionNoiseVariance, maximumGain: motionMaximumGain)
  }

  /// Recomputes everything that depends on the sample period.
  mutating func setCoefficients(period: Double) {
    guard period > 0 else { return }
    coefficientPeriod = period
    let inclination = settings.inclination
    switch inclination.order {
    case .second:
      lowPass = .butterworth(
        timeConstantSeconds: inclination.timeConstantSeconds, periodSeconds: period)

    case .first:
      lowPass = .firstOrder(
        timeConstantSeconds: inclination.timeConstantSeconds, periodSeconds: period)
    }
    restDetector.setSamplePeriod(period)
    restRotationRetention = 1 - period / settings.rest.meanTimeConstantSeconds
    let n = settings.noise.gyroNoiseDensity
    gyroSampleVariance = n * n / period
    initialLimit = max(1, Int((inclination.initialisationSeconds / period).rounded()))
    blockLimit = max(1, Int((Self.motionBlockSeconds / period).rounded()))
    let blockPeriod = Double(blockLimit) * period
    blockLowPass = .butterworth(
      timeConstantSeconds: inclination.timeConstantSeconds, periodSeconds: blockPeriod)
    // VQF's choice of motion noise: with the random walk's variance growth V per block, a
    // measurement noise p²/V + p makes the long-run uncertainty settle at p.
    let k = settings.noise.gyroBiasRandomWalk
    let v = max(k * k * blockPeriod, 1e-30)
    let p = settings.bias.motionUncertaintyRadiansPerSecond
      * settings.bias.motionUncertaintyRadiansPerSecond
    motionNoiseVariance = p * p / v + p
    motionMaximumGain = min(1, blockPeriod / settings.bias.motionMinimumTimeConstantSeconds)
    detectorLowPass = .butterworth(
      timeConstantSeconds: settings.accelerationRejection.detectorTimeConstantSeconds,
      periodSeconds: period)
    slowMeanGain = period / settings.accelerationRejection.referenceTimeConstantSeconds
    filterStep = period
    filterRate = 2.0.squareRoot() / inclination.timeConstantSeconds
    recentRetention = 1 - period / (2 * settings.accelerationRejection.detectorTimeConstantSeconds)
    recoveryLimit = max(
      1, Int((settings.accelerationRejection.recoverySeconds / period).rounded()))
  }
}

/// Low-pass filters (second-order, block rate) over the first two rows of the rotation matrix
/// and over R·b̂, for the motion-bias measurement model.
struct RowFilter: Hashable, Sendable {
  var started = false
  var r0s1: Vector3 = .zero
  var r0s2: Vector3 = .zero
  var r1s1: Vector3 = .zero
  var r1s2: Vector3 = .zero
  var b0s1: Double = 0
  var b0s2: Double = 0
  var b1s1: Double = 0
  var b1s2: Double = 0

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
