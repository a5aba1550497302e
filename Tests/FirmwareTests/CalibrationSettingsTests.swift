import AttitudeEstimation
import Calibration
import Firmware
import Geometry
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
