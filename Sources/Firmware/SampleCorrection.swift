import AttitudeEstimation
import Geometry

/// Step 3 of the sample path (DESIGN.md): from the chip's axes and raw SI readings to the body
/// frame, with the bench calibration applied.
///
///     gyro_body  = M · G · (gyro_sensor − b(T))      b(T): the bench bias polynomial
///     accel_body = M · A · (accel_sensor − o)        A, o: the accelerometer correction
///
/// where M is the board's mounting rotation (sensor axes → body axes) and G the gyro's scale
/// and misalignment (`plumb calibrate imu`; identity without one). M·G is kept as one matrix
/// (`gyroscopeToBody`), so the gyro matrix costs no work per sample. The calibration lives in
/// sensor axes because it is a property of the chip, measured before it was mounted; the
/// estimator works in body axes. The live gyro bias the estimator learns is the residual on top
/// of `b(T)`. Pure and allocation-free.
///
/// The three per-sample methods are `@inline(__always)`: the struct is a few hundred bytes (matrices
/// and the calibration polynomial), and a call that is not inlined copies all of it out of the
/// loop's settings on every sample to pass it.
public struct SampleCorrection: Hashable, Sendable {
  /// Sensor axes → body axes.
  public var mounting: Matrix3 {
    didSet { gyroscopeToBody = mounting * gyroscopeMatrix }
  }
  /// G: the gyro's scale and misalignment, sensor axes (identity without a calibration).
  public var gyroscopeMatrix: Matrix3 {
    didSet { gyroscopeToBody = mounting * gyroscopeMatrix }
  }
  /// M · G: a bias-free gyro reading → body-frame rate.
  public private(set) var gyroscopeToBody: Matrix3
  /// A: the accelerometer's scale and misalignment, sensor axes (identity without a
  /// calibration).
  public var accelerometerMatrix: Matrix3
  /// o: the accelerometer's offset, m/s², sensor axes (zero without a calibration).
  public var accelerometerOffset: Vector3
  /// b(T): the bench gyro bias model, sensor axes; `nil` without one.
  public var gyroscope: GyroBiasPolynomial? {
    didSet { hasGyroscope = gyroscope != nil }
  }
  /// `gyroscope != nil`, kept beside it: asking the optional itself (a model holding an
  /// optional range) is a call to the runtime's enum-tag helper on a copy of the whole
  /// correction, twice per sample. The per-sample methods ask this first.
  @usableFromInline private(set) var hasGyroscope: Bool

  public init(
    mounting: Matrix3 = .identity, accelerometerMatrix: Matrix3 = .identity,
    accelerometerOffset: Vector3 = .zero, gyroscope: GyroBiasPolynomial? = nil,
    gyroscopeMatrix: Matrix3 = .identity
  ) {
    self.mounting = mounting
    self.gyroscopeMatrix = gyroscopeMatrix
    gyroscopeToBody = mounting * gyroscopeMatrix
    self.accelerometerMatrix = accelerometerMatrix
    self.accelerometerOffset = accelerometerOffset
    self.gyroscope = gyroscope
    hasGyroscope = gyroscope != nil
  }

  /// The bench bias at `temperatureCelsius`, in body axes, rad/s (zero without a calibration).
  @inlinable @inline(__always)
  public func staticGyroBiasInBody(atTemperature temperatureCelsius: Double) -> Vector3 {
    guard hasGyroscope else { return .zero }
    guard let gyroscope, temperatureCelsius.isFinite else {
      return gyroscope.map { gyroscopeToBody * $0.biasRadiansPerSecond } ?? .zero
    }
    return gyroscopeToBody * gyroscope.bias(atTemperature: temperatureCelsius)
  }

  /// Body-frame angular rate, rad/s, with the bench bias removed.
  @inlinable @inline(__always)
  public func angularRate(sensor: Vector3, temperatureCelsius: Double) -> Vector3 {
    guard hasGyroscope, let gyroscope else { return gyroscopeToBody * sensor }
    let bias =
      temperatureCelsius.isFinite
      ? gyroscope.bias(atTemperature: temperatureCelsius) : gyroscope.biasRadiansPerSecond
    return gyroscopeToBody * (sensor - bias)
  }

  /// A body-frame gyro rate as the chip reads it, before G (sensor axes, rad/s): the inverse
  /// of `gyroscopeToBody`, for a bias the estimator learned in body axes to be written back as
  /// the chip's own (the `live` section). Not per sample.
  public func gyroscopeSensorRate(body: Vector3) -> Vector3 {
    (gyroscopeToBody.inverse ?? mounting.transposed) * body
  }

  /// Body-frame specific force, m/s², with the accelerometer correction applied.
  @inlinable @inline(__always)
  public func specificForce(sensor: Vector3) -> Vector3 {
    mounting * (accelerometerMatrix * (sensor - accelerometerOffset))
  }
}
