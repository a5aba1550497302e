import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

/// The angle turned by `time` and the rate then, through constant-rate segments (the last
/// rate continues after them).
func segmentAngle(
  atSeconds time: Double, _ segments: [(seconds: Double, rate: Double)]
) -> (angle: Double, rate: Double) {
  var t = max(time, 0)
  var angle = 0.0
  for segment in segments {
    if t <= segment.seconds { return (angle + segment.rate * t, segment.rate) }
    angle += segment.rate * segment.seconds
    t -= segment.seconds
  }
  let rate = segments.last?.rate ?? 0
  return (angle + rate * t, rate)
}

/// A level body that turns about the vertical at a constant rate per segment.
struct YawSegments: MotionSource {
  var segments: [(seconds: Double, rate: Double)]
  var durationSeconds: Double? { segments.map(\.seconds).reduce(0, +) }

  func truth(atSeconds time: Double) -> MotionTruth {
    let (heading, rate) = segmentAngle(atSeconds: time, segments)
    return MotionTruth(
      timeSeconds: time, attitude: Quaternion(axis: .unitZ, angle: heading),
      angularRateRadiansPerSecond: Vector3(0, 0, rate),
      specificForceMetersPerSecondSquared: Vector3(0, 0, 9.80665), temperatureCelsius: 25)
  }
}

/// A body tilted by `tiltDegrees` about x, then turning about its own x axis (horizontal) at a
/// constant rate per segment.
struct TiltSegments: MotionSource {
  var tiltDegrees: Double = 0
  var segments: [(seconds: Double, rate: Double)]
  var durationSeconds: Double? { segments.map(\.seconds).reduce(0, +) }

  func truth(atSeconds time: Double) -> MotionTruth {
    let (turned, rate) = segmentAngle(atSeconds: time, segments)
    let attitude = Quaternion(axis: .unitX, angle: radians(tiltDegrees) + turned)
    return MotionTruth(
      timeSeconds: time, attitude: attitude,
      angularRateRadiansPerSecond: Vector3(rate, 0, 0),
      specificForceMetersPerSecondSquared: attitude.inverseRotate(Vector3(0, 0, 9.80665)),
      temperatureCelsius: 25)
  }
}

/// An MPU-6050-like sensor: noise as seed 000's, the given raw gyro offset, no wander.
func mpuLike(offset: Vector3) -> InertialSensorModel.Settings {
  InertialSensorModel.Settings(
    gyroBiasRadiansPerSecond: offset, gyroNoiseRadiansPerSecond: 0.002,
    accelerometerNoiseMetersPerSecondSquared: 0.03)
}

func headingError(_ s: RunSample) -> Double {
  degrees(s.estimate.attitude.relative(to: s.truth.attitude).heading)
}

@Suite struct RestDetectionTests {
  /// A raw MPU-6050 offset of up to 20 °/s per axis, no bench calibration: the first rest is
  /// found from the gyro's deviation from its own mean, and the offset is measured there.
  @Test(arguments: [Vector3(0.1, -0.2, 0.35), Vector3(-0.3, 0.05, -0.1)])
  func rawOffsetIsLearnedAtTheFirstRest(offset: Vector3) {
    let motion = YawSegments(segments: [(5, 0), (10, radians(30)), (5, 0)])
    let samples = run(motion, sensor: mpuLike(offset: offset), seed: 21)
    let firstRest = samples.firstIndex { $0.estimate.isAtRest }
    #expect(firstRest != nil && firstRest! <= 160, "rest declared at sample \(firstRest ?? -1)")
    let afterRest = samples[400].estimate.gyroBiasRadiansPerSecond
    #expect(degrees((afterRest - offset).length) < 0.05)
    // The heading drifted by the raw offset for the 1.5 s before rest was declared; that was
    // undone, so the heading is right after the turn and the second rest.
    #expect(abs(headingError(samples.last!)) < 0.5)
  }

  /// The frame that declares a rest already carries the bias that rest measured, and every
  /// frame of the rest after it: a host that reads the bias when it sees `restStarted` (as
  /// the kernel test's check does) must not get the value from before the rest.
  @Test func theFrameThatStartsARestCarriesItsBias() {
    let offset = Vector3(radians(1.2), radians(-0.7), radians(0.4))
    let sensor = InertialSensorModel.Settings(gyroBiasRadiansPerSecond: offset)
    let samples = run(YawSegments(segments: [(6, 0)]), sensor: sensor, seed: 23)
    let first = samples.firstIndex { $0.estimate.flags.contains(.restStarted) }
    #expect(first != nil)
    for s in samples[(first ?? samples.count)...] {
      #expect(degrees((s.estimate.gyroBiasRadiansPerSecond - offset).length) < 0.003)
      #expect(s.estimate.angularRateRadiansPerSecond.length < 1e-6)
    }
  }

  /// Rest ends on the very sample a turn starts, so the heading hold swallows nothing.
  @Test func restEndsOnTheSampleMotionStarts() {
    let motion = YawSegments(segments: [(5, 0), (3, radians(10))])
    let samples = run(motion, sensor: mpuLike(offset: Vector3(0.02, -0.01, 0.03)), seed: 22)
    let start = samples.firstIndex { $0.truth.angularRateRadiansPerSecond.z != 0 }!
    #expect(samples[start - 1].estimate.isAtRest)
    #expect(!samples[start].estimate.isAtRest)
    #expect(abs(headingError(samples.last!)) < 0.1)
  }

  /// While at rest the heading does not move: no yaw integration (seed 000's zero-velocity
  /// update), whatever the gyro's noise and offset.
  @Test func headingIsHeldAtRest() {
    let motion = YawSegments(segments: [(60, 0)])
    let samples = run(motion, sensor: mpuLike(offset: Vector3(0.05, 0.08, -0.12)), seed: 23)
    let start = samples[300].estimate.attitude
    #expect(samples[300...].allSatisfy { $0.estimate.isAtRest })
    let end = samples.last!.estimate.attitude
    #expect(degrees(abs(end.relative(to: start).heading)) < 0.005)
    // The tilt is still refined from the accelerometer (its noise moves it a little).
    #expect(degrees(end.angle(to: start)) < 0.05)
  }

  /// Once the bias is known, a slow steady turn is not rest: it is refused, so it is neither
  /// swallowed by the heading hold nor absorbed into the bias.
  @Test(arguments: [1.0, 3.0])
  func slowTurnIsNotTakenForRest(degreesPerSecond: Double) {
    let offset = Vector3(0.01, -0.02, 0.015)
    let motion = YawSegments(segments: [(5, 0), (20, radians(degreesPerSecond))])
    let samples = run(motion, sensor: mpuLike(offset: offset), seed: 24)
    #expect(!samples[600...].contains { $0.estimate.isAtRest })
    #expect(degrees((samples.last!.estimate.gyroBiasRadiansPerSecond - offset).length) < 0.02)
    #expect(abs(headingError(samples.last!)) < 0.3)
  }

  /// A bench calibration that is wrong about the horizontal axes by far more than it claims
  /// (the bias shifted since: a knock, reflow, another unit's file): the board rests, the gyro
  /// says it turns about a horizontal axis, the accelerometer says it does not. That is bias,
  /// whatever its size: the first quiet dwell widens the uncertainty, the next is a rest,
  /// and the rest measures the bias.
  @Test(arguments: [
    (Vector3(1, -0.8, 0), 0.0), (Vector3(3, 0, 0.1), 30.0), (Vector3(0, 8, 0), 0.0),
  ])
  func aWrongCalibrationIsCorrectedAtTheFirstRest(offsetDegrees: Vector3, tiltDegrees: Double) {
    var settings = AttitudeEstimator.Settings.default
    settings.bias = .calibrated(
      biasRadiansPerSecond: .zero, uncertaintyRadiansPerSecond: radians(0.05))
    let offset = offsetDegrees * (Double.pi / 180)
    let motion = TiltSegments(tiltDegrees: tiltDegrees, segments: [(30, 0)])
    let samples = run(motion, sensor: mpuLike(offset: offset), seed: 26, settings: settings)
    let first = samples.firstIndex { $0.estimate.isAtRest }
    #expect(first != nil && first! <= 400, "rest declared at sample \(first ?? -1)")
    let bias = samples.last!.estimate.gyroBiasRadiansPerSecond
    #expect(degrees((bias - offset).length) < 0.01, "bias \(bias * (180 / Double.pi))")
    #expect(samples[1000...].allSatisfy { $0.gravityErrorDegrees < 0.3 })
    let statistics = samples.last!.restStatistics
    #expect(statistics.biasJumps >= 1 && statistics.rests == 1 && statistics.refusedAsTurning == 0)
  }

  /// About the vertical only the gyro sees rotation: a still board whose calibration is 1 °/s
  /// off about the vertical cannot be told from a slow turn, and is not taken for rest — but
  /// the refusals are counted, with the rate, so the user can tell what happened.
  @Test func aVerticalCalibrationErrorIsRefusedAndCounted() {
    var settings = AttitudeEstimator.Settings.default
    settings.bias = .calibrated(
      biasRadiansPerSecond: .zero, uncertaintyRadiansPerSecond: radians(0.05))
    let offset = Vector3(0, 0, radians(1))
    let samples = run(
      YawSegments(segments: [(20, 0)]), sensor: mpuLike(offset: offset), seed: 28,
      settings: settings)
    #expect(!samples.contains { $0.estimate.isAtRest })
    let statistics = samples.last!.restStatistics
    #expect(statistics.rests == 0 && statistics.refusedAsTurning >= 5)
    #expect(abs(degrees(statistics.lastRefusedRateRadiansPerSecond) - 1) < 0.05)
  }

  /// The other side of that rule: a slow steady turn about a horizontal axis is quiet and
  /// stationary too, but the accelerometer sees it — it is not taken for rest, however badly
  /// it disagrees with the calibration.
  @Test(arguments: [0.5, 2.0])
  func slowTiltIsNotTakenForRest(degreesPerSecond: Double) {
    var settings = AttitudeEstimator.Settings.default
    settings.bias = .calibrated(
      biasRadiansPerSecond: .zero, uncertaintyRadiansPerSecond: radians(0.05))
    let motion = TiltSegments(segments: [(20, radians(degreesPerSecond))])
    let samples = run(
      motion, sensor: mpuLike(offset: .zero), seed: 27, settings: settings)
    #expect(!samples.contains { $0.estimate.isAtRest })
    #expect(degrees(samples.last!.estimate.gyroBiasRadiansPerSecond.length) < 0.1)
  }

  /// A sustained push is quiet too, but not rest: the tilt it implies disagrees.
  @Test func sustainedPushIsNotRest() {
    let samples = run(
      PushScenario(startSeconds: 2, endSeconds: 9, totalSeconds: 9), sensor: .seed001)
    #expect(!samples[250...].contains { $0.estimate.isAtRest })
  }

  @Test func thresholdsFollowTheUnitsNoise() {
    let quiet = SensorNoise(gyroNoiseDensity: 0.003 * .pi / 180, accelerometerNoiseDensity: 1e-3)
    let noisy = SensorNoise(gyroNoiseDensity: 0.05 * .pi / 180, accelerometerNoiseDensity: 0.01)
    let a = RestDetector.Settings(noise: quiet, samplePeriodSeconds: 0.01)
    let b = RestDetector.Settings(noise: noisy, samplePeriodSeconds: 0.01)
    #expect(a.gyroDeviationThresholdRadiansPerSecond < b.gyroDeviationThresholdRadiansPerSecond)
    #expect(
      a.accelerationDeviationThresholdMetersPerSecondSquared
        < b.accelerationDeviationThresholdMetersPerSecondSquared)
    // Never below a quarter of the defaults.
    #expect(
      a.gyroDeviationThresholdRadiansPerSecond
        >= 0.25 * RestDetector.Settings.default.gyroDeviationThresholdRadiansPerSecond)
    // 8σ of the three-axis norm of one sample's noise.
    let sigma = 0.05 * .pi / 180 / 0.01.squareRoot()
    #expect(abs(b.gyroDeviationThresholdRadiansPerSecond - 8 * 3.0.squareRoot() * sigma) < 1e-12)
  }

  @Test func restDetectionCanBeTurnedOff() {
    var settings = AttitudeEstimator.Settings.default
    settings.rest.isEnabled = false
    let samples = run(YawSegments(segments: [(10, 0)]), sensor: .seed001, settings: settings)
    #expect(!samples.contains { $0.estimate.isAtRest })
  }
}

@Suite struct GyroBiasTests {
  @Test func calibrationSeedsTheEstimate() {
    let calibrated = Vector3(0.01, -0.02, 0.03)
    var settings = AttitudeEstimator.Settings.default
    settings.bias = .calibrated(
      biasRadiansPerSecond: calibrated, uncertaintyRadiansPerSecond: 0.001)
    settings.rest.isEnabled = false
    let samples = run(
      YawSegments(segments: [(2, radians(20))]), sensor: mpuLike(offset: calibrated),
      settings: settings)
    #expect(samples[1].estimate.gyroBiasRadiansPerSecond == calibrated)
    #expect(abs(samples[1].estimate.gyroBiasUncertaintyRadiansPerSecond.z - 0.001) < 1e-5)
    #expect(abs(headingError(samples.last!)) < 0.1)
  }

  /// The uncertainty grows between rests like a random walk and shrinks during them; the
  /// longer the rest, the smaller it gets.
  @Test func uncertaintyGrowsBetweenRestsAndShrinksAtRest() {
    let motion = YawSegments(segments: [(4, 0), (60, radians(20)), (8, 0)])
    let samples = run(motion, sensor: mpuLike(offset: Vector3(0.01, 0.01, 0.01)), seed: 25)
    let sigmaZ = samples.map { $0.estimate.gyroBiasUncertaintyRadiansPerSecond.z }
    #expect(sigmaZ[399] < sigmaZ[6399])  // end of the first rest < end of the turn
    #expect(sigmaZ[6399] > sigmaZ[6399 - 3000])  // growing during the turn
    #expect(sigmaZ[7199] < sigmaZ[6699])  // shrinking through the second rest
    // The random walk: K √t (K = 1e-4 rad/s/√s by default) for a vertical axis nothing sees.
    let grown = sigmaZ[6399] * sigmaZ[6399] - sigmaZ[3399] * sigmaZ[3399]
    #expect(abs(grown - 1e-8 * 30) < 0.3e-8 * 30)
  }

  /// In motion the inclination correction measures the horizontal part of the bias (VQF's
  /// motion bias estimation): a level body turning slowly, no rests allowed.
  @Test func horizontalBiasIsEstimatedInMotion() {
    var settings = AttitudeEstimator.Settings.default
    settings.rest.isEnabled = false
    settings.bias.initialUncertaintyRadiansPerSecond = radians(1)
    let offset = Vector3(radians(0.3), radians(-0.2), radians(0.1))
    let samples = run(
      YawSegments(segments: [(180, radians(5))]), sensor: mpuLike(offset: offset), seed: 26,
      settings: settings)
    let b = samples.last!.estimate.gyroBiasRadiansPerSecond
    #expect(abs(degrees(b.x - offset.x)) < 0.05)
    #expect(abs(degrees(b.y - offset.y)) < 0.05)
    // The vertical part is unobservable without a magnetometer: untouched.
    #expect(abs(degrees(b.z)) < 0.005)
    // The tilt stays right although the bias started unknown.
    #expect(samples.suffix(1000).map(\.gravityErrorDegrees).max()! < 0.2)
  }
}

/// An uncalibrated gyro that never rests: its bias must be learnt in motion, and the tilt it
/// causes must not be taken for a sustained acceleration and rejected (which would leave the
/// gyro's bias to carry the attitude away and stop the motion-bias measurement).
@Suite struct MotionBiasConsistencyTests {
  /// The motion measurement's innovation is clipped (one violent manoeuvre must not throw the
  /// estimate), so a bias 20 °/s away is approached 2 °/s of innovation at a time; its
  /// uncertainty must shrink no faster than the estimate approaches, or the estimate becomes
  /// sure of a bias it has not reached — and the first rest, which would measure it, is then
  /// refused as a slow turn. Checked: the error stays within 4σ all the way.
  @Test func clippedInnovationsDoNotMakeTheEstimateOverconfident() {
    let degree = Double.pi / 180
    var estimator = GyroBiasEstimator()  // uncalibrated: 0 ± 6.7 °/s
    let truth = 20 * degree
    var worst = 0.0
    for _ in 0..<3000 {
      estimator.predict(seconds: 0.1)
      estimator.observe(
        row: Vector3(1, 0, 0), innovation: truth - estimator.bias.x,
        noiseVariance: (0.5 * degree) * (0.5 * degree), maximumGain: 0.01)
      let error = abs(truth - estimator.bias.x)
      worst = max(worst, error / estimator.variance.x.squareRoot())
    }
    #expect(worst <= 4, "the error reached \(worst) σ")
    #expect(abs(estimator.bias.x - truth) < 0.05 * degree)
  }
}

@Suite struct UncalibratedGyroWithoutRestTests {
  @Test func theBiasIsLearntInMotionAndItsTiltIsNotRejected() {
    var settings = AttitudeEstimator.Settings.default
    settings.rest.isEnabled = false
    var estimator = AttitudeEstimator(settings: settings)
    let degree = Double.pi / 180
    let offset = Vector3(3 * degree, -2 * degree, 0)
    var rejected = 0
    var last: AttitudeEstimate?
    for i in 0..<12_000 {
      // A level board turning back and forth about the vertical, 20 °/s for 3.5 s each way
      // (so the body's axes sweep the horizontal).
      let yawRate = (i / 350) % 2 == 0 ? 20 * degree : -20 * degree
      let estimate = estimator.update(
        InertialSample(
          timestampNanoseconds: Int64(i) * 10_000_000,
          angularRateRadiansPerSecond: offset + Vector3(0, 0, yawRate),
          specificForceMetersPerSecondSquared: Vector3(0, 0, 9.80665)))
      if estimate.flags.contains(EstimateFlags.accelerationRejected) { rejected += 1 }
      last = estimate
    }
    #expect(rejected == 0, "\(rejected) samples rejected")
    let bias = last!.gyroBiasRadiansPerSecond
    #expect(
      abs(bias.x - offset.x) < 0.2 * degree && abs(bias.y - offset.y) < 0.2 * degree,
      "bias \(bias * (1 / degree)) °/s")
    let tilt = last!.gravityInBody.angle(to: Vector3(0, 0, -1)) / degree
    #expect(tilt < 1, "tilt \(tilt)°")
  }
}
