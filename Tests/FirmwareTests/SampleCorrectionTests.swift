import AttitudeEstimation
import Firmware
import Geometry
import Testing

/// Step 3 of the sample path with a gyro matrix (`plumb calibrate imu`):
/// rate_body = M · G · (reading − b(T)).
@Suite struct SampleCorrectionTests {
  static let mounting = Matrix3(rows: Vector3(0, 1, 0), Vector3(-1, 0, 0), Vector3(0, 0, 1))
  static let matrix = Matrix3(
    rows: Vector3(0.979, -0.0023, 0.0113), Vector3(-0.0048, 0.9977, 0.0098),
    Vector3(-0.0064, 0.0061, 0.9897))
  static let bias = GyroBiasPolynomial(
    biasRadiansPerSecond: Vector3(0.01, -0.02, 0.03), referenceTemperatureCelsius: 25,
    biasPerDegreeCelsius: Vector3(1e-4, 0, -1e-4))

  @Test func theGyroMatrixIsAppliedAfterTheBiasAndBeforeTheMounting() {
    let correction = SampleCorrection(
      mounting: Self.mounting, gyroscope: Self.bias, gyroscopeMatrix: Self.matrix)
    let reading = Vector3(0.5, -1.2, 2.0)
    let expected = Self.mounting * (Self.matrix * (reading - Self.bias.bias(atTemperature: 30)))
    let rate = correction.angularRate(sensor: reading, temperatureCelsius: 30)
    #expect((rate - expected).length < 1e-15)
    // Without a bias model, the matrix still applies.
    let matrixOnly = SampleCorrection(mounting: Self.mounting, gyroscopeMatrix: Self.matrix)
    #expect(
      (matrixOnly.angularRate(sensor: reading, temperatureCelsius: 30)
        - Self.mounting * (Self.matrix * reading)).length < 1e-15)
    // The bench bias in body axes is M·G·b(T), so the estimator's residual is on the same axes.
    #expect(
      (correction.staticGyroBiasInBody(atTemperature: 30)
        - Self.mounting * (Self.matrix * Self.bias.bias(atTemperature: 30))).length < 1e-15)
  }

  /// The live bias is written back in the chip's own terms, before G: reading it in again
  /// gives the body-axis bias it came from.
  @Test func aBodyRateGoesBackToTheChipsReading() {
    var correction = SampleCorrection(mounting: .identity, gyroscopeMatrix: Self.matrix)
    correction.mounting = Self.mounting  // both setters keep M·G current
    let body = Vector3(0.003, -0.002, 0.001)
    let sensor = correction.gyroscopeSensorRate(body: body)
    #expect((correction.angularRate(sensor: sensor, temperatureCelsius: 25) - body).length < 1e-15)
    correction.gyroscopeMatrix = .identity
    #expect((correction.gyroscopeToBody.row0 - Self.mounting.row0).length == 0)
  }
}
