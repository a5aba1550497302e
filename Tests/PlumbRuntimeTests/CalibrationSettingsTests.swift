import AttitudeEstimation
import Calibration
import Firmware
import Geometry
import PlumbRuntime
import Testing

/// How a calibration file seeds the estimator's temperature learning (issue 6, item 7).
@Suite struct CalibrationSettingsTests {
  static let degree = Double.pi / 180

  static func file(fitted: Bool) -> CalibrationFile {
    CalibrationFile(
      sensor: SensorIdentity(whoAmI: 0x68, name: "MPU-6050", label: "bench unit"),
      created: "2026-12-02T12:00:00Z",
      gyroscope: GyroCalibration(
        biasRadiansPerSecond: Vector3(0.01, -0.02, 0.005),
        biasUncertaintyRadiansPerSecond: Vector3(0.001, 0.001, 0.001),
        referenceTemperatureCelsius: 31,
        biasPerDegreeCelsius: fitted ? Vector3(0.0007, -0.0005, 0.0009) : .zero,
        temperatureRangeCelsius: fitted ? 22...48 : nil))
  }

  /// The firmware's values from a file: its id, the gyro model as fitted, and each Allan
  /// figure the noisiest axis' — none when one axis has none (or a useless one).
  @Test func theFirmwareTakesTheFilesValues() {
    var file = Self.file(fitted: true)
    file.noise = NoiseFigures(
      samplePeriodSeconds: 0.01,
      gyroscope: SensorNoiseFigures(
        randomWalk: [2e-4, nil, 3e-4], biasInstability: [0, 0, 0],
        rateRandomWalk: [1e-5, 3e-5, 2e-5]),
      accelerometer: SensorNoiseFigures(
        randomWalk: [1e-3, 2e-3, -1], biasInstability: [0, 0, 0], rateRandomWalk: [nil, nil, nil]))
    let values = FirmwareCalibration(file)
    #expect(values.id == file.calibrationId)
    #expect(values.gyroscope == file.gyroscope!.polynomial)
    #expect(values.gyroBiasUncertaintyRadiansPerSecond == Vector3(0.001, 0.001, 0.001))
    #expect(values.accelerometer == nil && values.lastRun == nil && values.rest == nil)
    #expect(values.noise?.samplePeriodSeconds == 0.01)
    #expect(values.noise?.gyroNoiseDensity == nil)
    #expect(values.noise?.gyroBiasRandomWalk == 3e-5)
    #expect(values.noise?.accelerometerNoiseDensity == nil)
    let polynomial = file.gyroscope!.polynomial
    for t in [10.0, 22, 31, 48, 60] {
      #expect(polynomial.bias(atTemperature: t) == file.gyroscope!.bias(atTemperature: t))
    }
  }

  @Test func aBenchTemperatureFitLeavesOnlyAResidualSlopeToLearn() {
    var settings = FirmwareSettings()
    settings.apply(calibration: Self.file(fitted: true), mounting: .identity)
    // The bench model is applied upstream; the estimator learns what it leaves: ≤ 0.01 °/s/°C.
    let u = settings.estimator.bias.temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius
    #expect(abs(u - 0.01 * Self.degree) < 1e-12)
    #expect(settings.estimator.bias.temperatureCoefficientRadiansPerSecondPerCelsius == .zero)
    #expect(settings.estimator.problem == nil)
  }

  @Test func withoutAFitTheWholeSlopeIsLearnt() {
    var settings = FirmwareSettings()
    let before =
      settings.estimator.bias.temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius
    settings.apply(calibration: Self.file(fitted: false), mounting: .identity)
    #expect(
      settings.estimator.bias.temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius
        == before)
    #expect(before > 0.02 * Self.degree)
  }

  @Test func frozenLearningStaysFrozen() {
    var settings = FirmwareSettings()
    settings.estimator.bias.temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius = 0
    settings.apply(calibration: Self.file(fitted: true), mounting: .identity)
    #expect(
      settings.estimator.bias.temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius == 0)
  }

  /// The `live` section a clean shutdown wrote seeds the next run's estimate: the residual it
  /// found on top of the bench model, in body axes, with the bench's uncertainty kept.
  @Test func theLastRunsLiveBiasSeedsTheNextOne() {
    var file = Self.file(fitted: true)
    // The bench model at 40 °C plus a residual the last run found, sensor axes.
    let residualSensor = Vector3(0.002, -0.001, 0.0005)
    let gyro = file.gyroscope!
    file.live = LiveBiasEstimate(
      gyroBiasRadiansPerSecond: gyro.bias(atTemperature: 40) + residualSensor,
      temperatureCelsius: 40, written: "2026-12-02T15:00:00Z")
    // Mounted upside down about x: body = (x, −y, −z) of the sensor.
    let mounting = Matrix3(rows: Vector3(1, 0, 0), Vector3(0, -1, 0), Vector3(0, 0, -1))
    var settings = FirmwareSettings()
    settings.apply(calibration: file, mounting: mounting)
    let seeded = settings.estimator.bias.initialBiasRadiansPerSecond
    #expect((seeded - Vector3(0.002, 0.001, -0.0005)).length < 1e-12)
    #expect(
      abs(settings.estimator.bias.initialUncertaintyRadiansPerSecond - 0.001) < 1e-12)
    // (The bench's 0.001 rad/s.) Without a live section the residual starts at zero.
    var fresh = FirmwareSettings()
    fresh.apply(calibration: Self.file(fitted: true), mounting: mounting)
    #expect(fresh.estimator.bias.initialBiasRadiansPerSecond == .zero)
  }
}

/// A unit calibrated on the bench must still find its rests. The calibration's rest section
/// holds window statistics (the RMS of the gyro's 3-axis deviation over 1.5 s, the standard
/// deviation of the accelerometer's magnitude) times k = 3, but the estimator tests each
/// sample's 3-axis deviation: taken as they were, the accelerometer threshold was 3σ of one
/// axis for a three-axis deviation, which a still unit's noise exceeds on 3 % of its samples —
/// so 150 quiet samples in a row almost never came. `plumb run` of the simulated board with a
/// calibration made from its own still recording: 0 rests in 120 s of handheld motion (16
/// without the file). The file's noise figures are now what sets the estimator's noise and its
/// per-sample thresholds (8σ of one sample's 3-axis noise, as without a file; never below a
/// quarter of the defaults).
@Suite struct CalibratedRestTests {
  /// The fraction of samples at rest after the first 3 s, for an estimator with `settings` on
  /// a still recording.
  func restFraction(_ settings: AttitudeEstimator.Settings, _ recording: InertialRecording)
    -> Double
  {
    var estimator = AttitudeEstimator(settings: settings)
    var resting = 0
    var counted = 0
    let g = InertialSensor.gyroscope.axes.map { recording.samples($0) }
    let a = InertialSensor.accelerometer.axes.map { recording.samples($0) }
    for i in 0..<recording.count {
      let estimate = estimator.update(
        InertialSample(
          timestampNanoseconds: Int64((recording.timeSeconds[i] * 1e9).rounded()),
          angularRateRadiansPerSecond: Vector3(g[0][i], g[1][i], g[2][i]),
          specificForceMetersPerSecondSquared: Vector3(a[0][i], a[1][i], a[2][i])))
      if recording.timeSeconds[i] >= 3 {
        counted += 1
        if estimate.isAtRest { resting += 1 }
      }
    }
    return Double(resting) / Double(max(counted, 1))
  }

  @Test func aUnitWithItsOwnCalibrationRestsWhenStill() throws {
    let unit = StillSensorSimulation.seed000
    let bench = unit.record(sampleCount: 60_000, seed: 21, source: "bench")
    let timing = try SampleTiming.measure(bench)
    let file = CalibrationFile(
      sensor: SensorIdentity(whoAmI: 0x68, name: "MPU-6050", label: "bench unit"),
      created: "2026-12-04T08:00:00Z",
      noise: NoiseFigures(try AllanAnalysis.analyze(bench)),
      restDetector: RestDetectorThresholds.derive(from: bench, timing: timing))
    var settings = FirmwareSettings()
    settings.apply(calibration: file, mounting: .identity)
    let field = unit.record(sampleCount: 6_000, seed: 22, source: "field")
    let fraction = restFraction(settings.estimator, field)
    #expect(fraction > 0.9, "at rest \(fraction * 100) % of the still minute")
    // The unit's own noise sets the estimator's: seed 000's N = 2e-4 rad/√s.
    #expect(abs(settings.estimator.noise.gyroNoiseDensity - 2e-4) / 2e-4 < 0.05)
    // And its thresholds are 8σ of one sample's 3-axis noise, or the floor.
    let rest = settings.estimator.rest
    let sigmaGyro = 0.002
    #expect(rest.gyroDeviationThresholdRadiansPerSecond >= 8 * 3.0.squareRoot() * sigmaGyro * 0.9)
    #expect(rest.accelerationDeviationThresholdMetersPerSecondSquared >= 0.125)
  }
}
