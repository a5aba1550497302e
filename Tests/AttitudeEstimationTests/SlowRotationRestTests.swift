import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The MPU-6050's accelerometer noise density, 400 µg/√Hz (PS §6.2), m/s²/√Hz (restated).
private let mpu6050AccelerometerDensity = 400e-6 * 9.80665
/// Its typical gyro rate noise density, 0.005 °/s/√Hz (PS §6.1), rad/s/√Hz.
private let mpu6050GyroDensity = 0.005 * .pi / 180

/// A unit at `rateHertz` whose white noise is `noiseFactor` times the MPU-6050's densities
/// (per sample: density · √rate), with a raw gyro offset of a few °/s.
private func unit(rateHertz: Double, noiseFactor: Double) -> InertialSensorModel.Settings {
  InertialSensorModel.Settings(
    gyroBiasRadiansPerSecond: Vector3(radians(1.2), radians(-2.5), radians(0.8)),
    gyroNoiseRadiansPerSecond: noiseFactor * mpu6050GyroDensity * rateHertz.squareRoot(),
    accelerometerNoiseMetersPerSecondSquared: noiseFactor * mpu6050AccelerometerDensity
      * rateHertz.squareRoot())
}

/// Estimator settings for `rateHertz`: uncalibrated (the MPU-6050 defaults), or configured with
/// the unit's own noise as a calibration file's Allan analysis would (`noiseFactor`), rest
/// thresholds included.
private func settings(rateHertz: Double, configuredNoiseFactor: Double?)
  -> AttitudeEstimator.Settings
{
  var s = AttitudeEstimator.Settings.default
  s.sampleClock.nominalPeriodSeconds = 1 / rateHertz
  if let factor = configuredNoiseFactor {
    s.noise = SensorNoise(
      gyroNoiseDensity: factor * mpu6050GyroDensity,
      accelerometerNoiseDensity: factor * mpu6050AccelerometerDensity)
    s.rest = RestDetector.Settings(noise: s.noise, samplePeriodSeconds: 1 / rateHertz)
  }
  return s
}

/// Issue 23, item 1: a steady rotation is quiet (the gyro deviates from its window mean by its
/// noise alone) and stationary (its thirds agree), and from power-on it is consistent with a
/// bias known only to ±20 °/s — so it was a rest, and the rest wrote the rotation into the bias
/// with a tight uncertainty. About a horizontal axis the accelerometer sees it: gravity turns in
/// the body. A rest now needs gravity to stay put within the accelerometer's noise.
@Suite struct SlowRotationIsNotRestTests {
  /// 0.5 °/s about a horizontal axis, from power-on, uncalibrated: never a rest, at any rate
  /// from 50 Hz to 1 kHz, for a unit as noisy as the datasheet's, half that, or half as noisy
  /// again (which the estimator measures: it is configured with the datasheet's figure), and
  /// for a unit whose calibration file gives its own noise.
  @Test(
    arguments: [
      (50.0, 1.0, nil), (100, 0.5, nil), (100, 1, nil), (100, 1.5, nil), (200, 1, nil),
      (1000, 1, nil), (100, 1.5, 1.5), (1000, 0.5, 0.5),
    ] as [(Double, Double, Double?)])
  func halfADegreeASecondAboutAHorizontalAxisIsNeverARest(
    rateHertz: Double, noiseFactor: Double, configured: Double?
  ) {
    for axisTiltDegrees in [90.0, 60.0] {
      let motion = PowerOnInSlowRotation(
        rateRadiansPerSecond: radians(0.5) / sin(radians(axisTiltDegrees)),
        axisTiltRadians: radians(axisTiltDegrees), turnSeconds: 40, totalSeconds: 40)
      let samples = run(
        motion, sensor: unit(rateHertz: rateHertz, noiseFactor: noiseFactor), seed: 31,
        settings: settings(rateHertz: rateHertz, configuredNoiseFactor: configured),
        rateHertz: rateHertz)
      let rests = samples.last!.restStatistics.rests
      #expect(
        rests == 0 && !samples.contains { $0.estimate.isAtRest },
        "\(rateHertz) Hz, noise ×\(noiseFactor), axis \(axisTiltDegrees)°: \(rests) rests")
    }
  }

  /// The other side: a still unit is a rest at almost every dwell. Each dwell is decided and
  /// then withdrawn (`cancelRest`), so every 1.5 s is one independent decision, by two
  /// detectors in step on the same samples: one without the gravity test (its thresholds
  /// infinite), one with it. The gravity test refuses a true rest with probability 3 · 10⁻⁴
  /// (4σ) where the noise bound holds; a few per cent where the cap of 0.25 °/s binds instead
  /// (a unit twice as noisy as the datasheet), or where the unit is noisier than configured
  /// (an uncalibrated unit 1.5 times as noisy as the datasheet: e^(−(4/1.5)²/2) = 3 %).
  @Test(arguments: [
    (100.0, 1.0, 1.0, 0.005), (100, 0.5, 0.5, 0.005), (100, 0.5, 1, 0.005),
    (100, 1.25, 1.25, 0.005), (50, 1, 1, 0.005), (1000, 1, 1, 0.005), (100, 2, 2, 0.06),
    (100, 1.5, 1, 0.08),
  ])
  func aStillUnitIsARestAtAlmostEveryDwell(
    rateHertz: Double, noiseFactor: Double, configuredNoiseFactor: Double,
    refusedAtMost: Double
  ) {
    let period = 1 / rateHertz
    let noise = SensorNoise(
      gyroNoiseDensity: noiseFactor * mpu6050GyroDensity,
      accelerometerNoiseDensity: noiseFactor * mpu6050AccelerometerDensity)
    // Thresholds from the unit's noise, so that the quiet test itself passes at 1 kHz.
    let restSettings = RestDetector.Settings(noise: noise, samplePeriodSeconds: period)
    var withGravity = RestDetector(settings: restSettings, samplePeriodSeconds: period)
    withGravity.setAccelerometerNoiseDensity(
      configuredNoiseFactor * mpu6050AccelerometerDensity)
    var without = restSettings
    without.gravityTurnSigmas = .infinity
    without.maximumGravityTurnRateRadiansPerSecond = .infinity
    var baseline = RestDetector(settings: without, samplePeriodSeconds: period)
    var sensor = InertialSensorModel(
      settings: unit(rateHertz: rateHertz, noiseFactor: noiseFactor), seed: 32)
    let tilt = Quaternion(axis: Vector3(1, 1, 0), angle: radians(25))
    let truth = MotionTruth(
      timeSeconds: 0, attitude: tilt, angularRateRadiansPerSecond: .zero,
      specificForceMetersPerSecondSquared: tilt.inverseRotate(Vector3(0, 0, 9.80665)),
      temperatureCelsius: 25)
    let gyroVariance = noise.gyroNoiseDensity * noise.gyroNoiseDensity / period
    let up = tilt.inverseRotate(.unitZ)
    var rests = 0
    var refused = 0
    var extra = 0
    for _ in 0..<Int(1000 * rateHertz) {
      let reading = sensor.measure(truth, intervalSeconds: period)
      func step(_ detector: inout RestDetector) -> Bool {
        let transition = detector.update(
          gyro: reading.angularRateRadiansPerSecond,
          acceleration: reading.specificForceMetersPerSecondSquared,
          bias: reading.gyroBiasRadiansPerSecond, biasVariance: Vector3(1, 1, 1) * 1e-6,
          gyroSampleVariance: gyroVariance, up: up)
        // Every rest is withdrawn: the next 1.5 s are the next dwell.
        guard transition == .started else { return false }
        detector.cancelRest()
        return true
      }
      let a = step(&baseline)
      let b = step(&withGravity)
      if b && !a { extra += 1 }
      if a { rests += 1 }
      if a && !b { refused += 1 }
    }
    let fraction = Double(refused) / Double(max(rests, 1))
    #expect(rests > 500, "\(rests) rests, \(refused) refused")
    #expect(extra == 0, "\(extra) rests only with the gravity test")
    #expect(
      fraction <= refusedAtMost,
      "\(rateHertz) Hz, noise ×\(noiseFactor) (configured ×\(configuredNoiseFactor)): \(refused) of \(rests)"
    )
  }

  /// The scenario of the issue: switched on turning at 2 °/s about an axis 60° from the
  /// vertical, the die warming, for a minute; then a rest. No rest while it turns, and the bias
  /// uncertainty it reports meanwhile covers the bias's true error (no rest wrote the rotation
  /// into it); the rest that follows is found and measures the bias, and the heading holds.
  @Test(arguments: [1.0, 2.0, 3.0])
  func aBoardSwitchedOnWhileTurningSlowlyDoesNotRestUntilItStops(degreesPerSecond: Double) {
    let motion = PowerOnInSlowRotation(rateRadiansPerSecond: radians(degreesPerSecond))
    var sensor = mpuLike(offset: Vector3(radians(1.5), radians(-2), radians(0.7)))
    sensor.gyroBiasTemperatureCoefficient = Vector3(
      radians(0.02), radians(-0.03), radians(0.015))
    let samples = run(motion, sensor: sensor, seed: 33)
    let stop = Int((motion.turnSeconds + motion.stopSeconds) * 100)
    #expect(!samples[..<stop].contains { $0.estimate.isAtRest })
    #expect(samples[stop - 1].restStatistics.rests == 0)
    // Honest: every axis's error within 3σ of what the estimate says, throughout the turn.
    var worst = 0.0
    for s in samples[100..<stop] {
      let error = s.estimate.gyroBiasRadiansPerSecond - s.reading.gyroBiasRadiansPerSecond
      let v = s.estimate.gyroBiasVariance
      worst = max(
        worst, abs(error.x) / v.x.squareRoot(), abs(error.y) / v.y.squareRoot(),
        abs(error.z) / v.z.squareRoot())
    }
    #expect(worst < 3, "worst bias error \(worst) σ")
    #expect(samples[100..<stop].allSatisfy { $0.estimate.flags.contains(.headingUncertain) })
    // The rest after the stop is found, and measures the bias.
    let rest = samples[stop...].firstIndex { $0.estimate.isAtRest }
    #expect(rest != nil && rest! < stop + 300, "first rest at sample \(rest ?? -1)")
    let atRest = samples[stop + 1500]
    let error = atRest.estimate.gyroBiasRadiansPerSecond - atRest.reading.gyroBiasRadiansPerSecond
    #expect(degrees(error.length) < 0.05, "bias error \(degrees(error.length)) °/s")
    // The 90° turn about the vertical after it, and the rest that ends the run.
    #expect(abs(headingError(samples.last!) - headingError(atRest)) < 1)
  }

  /// About the vertical nothing sees a steady turn: switched on turning at 2 °/s about the
  /// vertical, the first dwell is a rest, and it takes the turn for bias (the estimator README's
  /// "A steady turn at power-on" says why the rest still claims it). What is honest is the
  /// contradiction: the true rest after the stop disagrees with that bias by the turn's rate,
  /// and is refused as a slow turn and counted with that rate — `plumb run`'s summary prints it.
  @Test func aSteadyTurnAboutTheVerticalAtPowerOnIsTakenForBiasAndTheNextRestSaysSo() {
    let motion = PowerOnInSlowRotation(axisTiltRadians: 0)
    let samples = run(
      motion, sensor: mpuLike(offset: Vector3(radians(1.5), radians(-2), radians(0.7))),
      seed: 34)
    let stop = Int((motion.turnSeconds + motion.stopSeconds) * 100)
    #expect(samples[..<stop].contains { $0.estimate.isAtRest })
    let statistics = samples[stop + 1500].restStatistics
    #expect(statistics.refusedAsTurning >= 1)
    #expect(
      abs(degrees(statistics.lastRefusedRateRadiansPerSecond) - 2) < 0.1,
      "refused at \(degrees(statistics.lastRefusedRateRadiansPerSecond)) °/s")
  }
}
