import Geometry

/// One inertial measurement: what the estimator consumes, once per sample.
///
/// All vectors are in the **body** frame (the board's axes after the mounting rotation), in SI
/// units. The timestamp is the instant the sample was taken — on the board, the kernel's
/// `CLOCK_MONOTONIC` time of the data-ready edge, not the time of the read (DESIGN.md, step 1).
public struct InertialSample: Hashable, Sendable {
  /// When the sample was taken, nanoseconds on one monotonic clock. Only differences matter.
  public var timestampNanoseconds: Int64
  /// Angular rate as the gyroscope reports it (raw, bias *not* removed), rad/s.
  public var angularRateRadiansPerSecond: Vector3
  /// Specific force as the accelerometer reports it, m/s²: about `(0, 0, +9.81)` for a level
  /// board at rest (the reaction to gravity), plus the body's own acceleration.
  public var specificForceMetersPerSecondSquared: Vector3
  /// Die temperature, °C; used only by the gyro-bias temperature model. Pass `.nan` when unknown.
  public var temperatureCelsius: Double
  /// A reading was at or beyond 98 % of its full-scale range (PS §6.1–6.2 ranges): the sample
  /// understates the truth. Its accelerometer is not used and it never counts as rest.
  public var isClipped: Bool

  public init(
    timestampNanoseconds: Int64, angularRateRadiansPerSecond: Vector3,
    specificForceMetersPerSecondSquared: Vector3, temperatureCelsius: Double = .nan,
    isClipped: Bool = false
  ) {
    self.timestampNanoseconds = timestampNanoseconds
    self.angularRateRadiansPerSecond = angularRateRadiansPerSecond
    self.specificForceMetersPerSecondSquared = specificForceMetersPerSecondSquared
    self.temperatureCelsius = temperatureCelsius
    self.isClipped = isClipped
  }
}
