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
}
