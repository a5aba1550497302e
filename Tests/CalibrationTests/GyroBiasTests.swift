import Calibration
import Geometry
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct GyroBiasTests {
  @Test func recoversInjectedBiasWithinItsStandardError() throws {
    var simulation = StillSensorSimulation()
    simulation.gyroBias = Vector3(0.05, -0.03, 0.35)  // 0.35 rad/s = 20 °/s, the datasheet's worst
    simulation.gyroRateRandomWalk = .zero
    let recording = simulation.record(sampleCount: 60_000, seed: 21)
    let allan = try AllanAnalysis.analyze(recording, axes: InertialSensor.gyroscope.axes)
    let biases = GyroBias.estimate(recording, allan: allan)
    let truth = [0.05, -0.03, 0.35]
    for (bias, expected) in zip(biases, truth) {
      #expect(abs(bias.bias - expected) < 4 * bias.standardError)
      // White noise only: the Allan-derived error is the naive σ/√n, up to the scatter of an
      // extrapolation over a decade from about ten clusters (±40 %), never below it (the N/√T
      // floor), and the record is worth a good part of its 60 000 samples.
      #expect(bias.standardError >= bias.naiveStandardError * 0.97)
      #expect(bias.standardError < bias.naiveStandardError * 1.6)
      #expect(bias.effectiveSampleCount > 20_000)
    }
  }

  @Test func aWanderingBiasGetsTheAllanDeviationAtTheRecordLength() throws {
    // White σ 0.002 rad/s at 100 Hz (N = 2e-4 rad/√s) and K = 2e-4 rad/s/√s over 1000 s:
    // σ_A(T) = √(N²/T + K²T/3) = 3.65e-3 rad/s, while σ/√n would claim about 2.1e-4.
    // The long-τ end of one record scatters by tens of percent (few independent clusters), so
    // the estimate is judged over several seeds: the geometric mean of estimate/theory within
    // 30 % of 1, and every single estimate within a factor 2.5.
    let n = 2e-4
    let k = 2e-4
    let t = 1000.0
    let theory = (n * n / t + k * k * t / 3).squareRoot()
    var logRatioSum = 0.0
    var count = 0.0
    for seed: UInt64 in 1...6 {
      var simulation = StillSensorSimulation()
      simulation.gyroRateRandomWalk = Vector3(2e-4, 2e-4, 2e-4)
      let recording = simulation.record(sampleCount: 100_000, seed: seed)
      let allan = try AllanAnalysis.analyze(recording, axes: InertialSensor.gyroscope.axes)
      for bias in GyroBias.estimate(recording, allan: allan) {
        #expect(bias.standardError > 5 * bias.naiveStandardError)
        #expect(bias.standardError > theory / 2.5 && bias.standardError < theory * 2.5)
        #expect(bias.effectiveSampleCount < 1000)
        logRatioSum += log(bias.standardError / theory)
        count += 1
      }
    }
    let geometricMeanRatio = exp(logRatioSum / count)
    #expect(geometricMeanRatio > 1 / 1.3 && geometricMeanRatio < 1.3, "\(geometricMeanRatio)")
  }

  func warmUp(linear: Vector3, quadratic: Vector3, seed: UInt64) -> InertialRecording {
    var simulation = StillSensorSimulation()
    simulation.gyroBias = Vector3(0.01, -0.02, 0.03)
    simulation.gyroBiasPerDegree = linear
    simulation.gyroBiasPerDegreeSquared = quadratic
    simulation.referenceTemperatureCelsius = 30
    simulation.startTemperatureCelsius = 22
    simulation.finalTemperatureCelsius = 42
    simulation.warmUpTimeConstantSeconds = 400
    simulation.gyroRateRandomWalk = Vector3(1e-6, 1e-6, 1e-6)
    return simulation.record(sampleCount: 120_000, seed: seed)  // 20 minutes
  }

  @Test func linearTemperatureDependenceIsFittedAndKeptLinear() throws {
    let slope = Vector3(2e-4, -1e-4, 5e-5)  // rad/s per °C
    let recording = warmUp(linear: slope, quadratic: .zero, seed: 31)
    let timing = try SampleTiming.measure(recording)
    let fit = try BiasTemperatureFit.fit(recording, timing: timing)
    #expect(fit.chosen == [.linear, .linear, .linear])
    // 120 window means of 10 s, each with 0.002/√1000 = 6.3e-5 rad/s of white noise, over
    // about 20 °C: the slope's standard error is about 1e-6 rad/s/°C; allow 5e-6.
    for (c, expected) in [slope.x, slope.y, slope.z].enumerated() {
      #expect(abs(fit.linear[c].coefficients[1] - expected) < 5e-6)
      #expect(fit.linear[c].rSquared > 0.9)
    }
    #expect(fit.temperatureRange.lowerBound < 24 && fit.temperatureRange.upperBound > 40)
  }

  @Test func aRealQuadraticIsChosenAndAForcedModelIsHonoured() throws {
    let recording = warmUp(
      linear: Vector3(1e-4, 1e-4, 1e-4), quadratic: Vector3(2e-5, 0, -1.5e-5), seed: 32)
    let timing = try SampleTiming.measure(recording)
    let fit = try BiasTemperatureFit.fit(recording, timing: timing)
    #expect(fit.chosen == [.quadratic, .linear, .quadratic])
    // The fit is centred on T_ref (the mean window temperature), so c₂ is the injected one.
    #expect(abs(fit.quadratic[0].coefficients[2] - 2e-5) < 0.05 * 2e-5)
    #expect(abs(fit.quadratic[2].coefficients[2] + 1.5e-5) < 0.05 * 1.5e-5)
    #expect(fit.quadraticFStatistic[0] > BiasTemperatureFit.significantF)
    // The chosen model reproduces the simulated bias inside the fitted range.
    let simulated: (Double) -> Double = { t in 0.01 + 1e-4 * (t - 30) + 2e-5 * (t - 30) * (t - 30) }
    for t in [25.0, 33.0, 40.0] {
      let predicted = fit.chosenFits[0].value(at: t - fit.referenceTemperatureCelsius)
      // Each 10 s window mean carries 6.3e-5 rad/s of white noise; a fit over ~120 windows
      // predicts to about 1e-5 (1σ) inside its range: allow 4σ.
      #expect(abs(predicted - simulated(t)) < 4e-5)
    }
    // The calibration file's gyro section carries the chosen model.
    let allan = try AllanAnalysis.analyze(recording, axes: InertialSensor.gyroscope.axes)
    let gyro = GyroCalibration(
      staticBias: GyroBias.estimate(recording, allan: allan), stillTemperatureCelsius: nil,
      temperatureFit: fit)
    #expect(gyro.biasPerDegreeCelsiusSquared.y == 0)
    for t in [25.0, 33.0, 40.0] {
      #expect(abs(gyro.bias(atTemperature: t).x - simulated(t)) < 4e-5)
    }
    let forced = try BiasTemperatureFit.fit(recording, timing: timing, model: .linear)
    #expect(forced.chosen == [.linear, .linear, .linear])
  }

  @Test func temperatureFitExplainsWhatIsMissing() throws {
    var simulation = StillSensorSimulation()
    simulation.recordsTemperature = false
    let noTemperature = simulation.record(sampleCount: 20_000, seed: 1)
    #expect(throws: TemperatureFitError.noTemperature) {
      try BiasTemperatureFit.fit(noTemperature, timing: try SampleTiming.measure(noTemperature))
    }
    let flat = StillSensorSimulation().record(sampleCount: 20_000, seed: 1)
    #expect {
      try BiasTemperatureFit.fit(flat, timing: try SampleTiming.measure(flat))
    } throws: { error in
      guard case .spanTooSmall = error as? TemperatureFitError else { return false }
      return "\(error)".contains("warm-up")
    }
  }

  @Test func restThresholdsFollowTheUnitsOwnNoise() throws {
    var simulation = StillSensorSimulation()
    simulation.gyroWhiteNoise = Vector3(0.001, 0.001, 0.001)
    simulation.accelWhiteNoise = Vector3(0.02, 0.02, 0.04)
    simulation.gyroRateRandomWalk = .zero
    let recording = simulation.record(sampleCount: 30_000, seed: 8)
    let timing = try SampleTiming.measure(recording)
    let thresholds = try #require(RestDetectorThresholds.derive(from: recording, timing: timing))
    #expect(thresholds.noiseMultiple == 3)
    #expect(abs(thresholds.windowSeconds - 1.5) < 1e-9)
    // Gyro deviation of three axes of σ each: √3·σ; accel magnitude with gravity on z: σ_z.
    let gyroExpected = 3 * 3.0.squareRoot() * 0.001
    let accelExpected = 3 * 0.04
    #expect(abs(thresholds.gyroDeviationRadiansPerSecond - gyroExpected) / gyroExpected < 0.05)
    #expect(
      abs(thresholds.accelDeviationMetersPerSecondSquared - accelExpected) / accelExpected < 0.05)
  }
}

/// A temperature model fitted over a warm-up (say 25 to 35 °C) is used wherever the board goes:
/// outdoors at 0 °C or in the sun at 60 °C. Its curvature c₂, fitted over ten degrees, is the
/// least certain coefficient, and squared over 25 degrees beyond the range it dominates: a
/// quadratic extrapolated from a fit's noise can put the bias several °/s off. Beyond the range
/// the model continues along its tangent at the nearer end (value and slope of the fit there).
@Suite struct GyroTemperatureModelRangeTests {
  let model = GyroCalibration(
    biasRadiansPerSecond: Vector3(0.01, -0.02, 0.005),
    biasUncertaintyRadiansPerSecond: Vector3(1e-4, 1e-4, 1e-4), referenceTemperatureCelsius: 30,
    biasPerDegreeCelsius: Vector3(1e-4, -2e-4, 5e-5),
    biasPerDegreeCelsiusSquared: Vector3(4e-5, -3e-5, 1e-5), temperatureRangeCelsius: 25...35)

  /// The polynomial as written in the file.
  func polynomial(_ t: Double) -> Vector3 {
    let d = t - 30
    return model.biasRadiansPerSecond + model.biasPerDegreeCelsius * d
      + model.biasPerDegreeCelsiusSquared * (d * d)
  }

  @Test func insideTheRangeTheModelIsThePolynomial() {
    for t in [25.0, 28.5, 30, 33.2, 35] {
      #expect((model.bias(atTemperature: t) - polynomial(t)).length < 1e-15, "\(t) °C")
    }
  }

  @Test(arguments: [(60.0, 35.0), (0.0, 25.0), (-40.0, 25.0)])
  func beyondTheRangeItFollowsTheTangentAtTheNearerEnd(celsius: Double, end: Double) {
    let d = end - 30
    let slope = model.biasPerDegreeCelsius + model.biasPerDegreeCelsiusSquared * (2 * d)
    let expected = polynomial(end) + slope * (celsius - end)
    #expect((model.bias(atTemperature: celsius) - expected).length < 1e-12)
    // The quadratic would have been off by c₂·(T − end)²: 0.025 rad/s (1.4 °/s) on x at 60 °C.
    if celsius == 60 {
      #expect(abs(polynomial(celsius).x - expected.x) > 0.02)
    }
  }

  @Test func withoutARangeTheModelIsThePolynomialEverywhere() {
    var open = model
    open.temperatureRangeCelsius = nil
    for t in [-40.0, 0, 30, 85] {
      #expect((open.bias(atTemperature: t) - polynomial(t)).length < 1e-15, "\(t) °C")
    }
  }
}
