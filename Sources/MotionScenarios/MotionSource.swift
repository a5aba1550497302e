import Geometry

/// What a perfect inertial sensor rigidly attached to the body would measure at one instant,
/// together with the attitude that explains it: the ground truth a simulation samples and an
/// accuracy test compares against.
///
/// All vectors are in the *body* frame except where the name says otherwise.
public struct MotionTruth: Hashable, Sendable {
  /// Seconds since the start of the motion.
  public var timeSeconds: Double
  /// The body's attitude: maps body-frame vectors into the reference frame (z up).
  public var attitude: Quaternion
  /// Angular rate of the body relative to the reference frame, body axes, rad/s.
  public var angularRateRadiansPerSecond: Vector3
  /// Specific force (what an accelerometer measures: acceleration minus gravity), body axes, m/s².
  /// At rest and level this is `(0, 0, +9.80665)`.
  public var specificForceMetersPerSecondSquared: Vector3
  /// Die temperature, °C.
  public var temperatureCelsius: Double

  public init(
    timeSeconds: Double, attitude: Quaternion, angularRateRadiansPerSecond: Vector3,
    specificForceMetersPerSecondSquared: Vector3, temperatureCelsius: Double
  ) {
    self.timeSeconds = timeSeconds
    self.attitude = attitude
    self.angularRateRadiansPerSecond = angularRateRadiansPerSecond
    self.specificForceMetersPerSecondSquared = specificForceMetersPerSecondSquared
    self.temperatureCelsius = temperatureCelsius
  }
}

/// A motion with ground truth, sampled at any instant.
///
/// **Contract.** `truth(atSeconds:)` is a pure function of its argument for a given source
/// (seeded randomness is drawn when the source is built, or derived from the time), so a
/// simulated chip may query the same instant twice, out of order, or at its own oscillator's
/// slightly wrong rate and always see the same world. The angular rate is consistent with the
/// attitude (it is the attitude's derivative), and the specific force is consistent with the
/// attitude and the body's acceleration in the reference frame.
public protocol MotionSource {
  /// The truth at `seconds` since the start. Times before 0 see the state at 0.
  func truth(atSeconds seconds: Double) -> MotionTruth

  /// How long the motion lasts, in seconds; `nil` for a motion that goes on (e.g. rest).
  var durationSeconds: Double? { get }
}

/// The truth of a motion that only turns, about a fixed point at 25 °C: the attitude at
/// `seconds` (clamped to ≥ 0), the rate differentiated from it over 1 µs, and gravity alone as
/// the specific force.
func rotationOnlyTruth(atSeconds seconds: Double, attitude: (Double) -> Quaternion)
  -> MotionTruth
{
  let t = max(0, seconds)
  let h = 1e-6
  let q0 = attitude(t)
  var delta = q0.conjugate * attitude(t + h)
  if delta.w < 0 { delta = Quaternion(w: -delta.w, x: -delta.x, y: -delta.y, z: -delta.z) }
  return MotionTruth(
    timeSeconds: t, attitude: q0, angularRateRadiansPerSecond: delta.vector * (2 / h),
    specificForceMetersPerSecondSquared: q0.inverseRotate(Vector3(0, 0, standardGravity)),
    temperatureCelsius: 25)
}
