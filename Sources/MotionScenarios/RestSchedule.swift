import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A motion that knows when the body is truly at rest: the truth a rest detector's flags are
/// compared with (a hardware-in-the-loop report plots one against the other).
///
/// "At rest" means what a rest detector may claim: not rotating and not accelerating (the
/// specific force is gravity's reaction alone), for the whole stretch. A vehicle idling at a stop
/// with its engine's faint vibration counts as at rest when the scenario says so.
public protocol RestSchedule {
  /// Whether the body rests at `seconds` since the motion's start.
  func isResting(atSeconds seconds: Double) -> Bool
}

extension HandheldMotion: RestSchedule {}
extension RestTurnSession: RestSchedule {}

/// Whether `source` is at rest at `seconds`: its own schedule when it has one; otherwise the
/// truth itself, which must show no rotation and a specific force of exactly 1 g at `seconds`
/// and at a few instants around it (±50, ±130 and ±300 ms, so that a bounce crossing zero or a
/// sine's zero of rate is not mistaken for rest).
public func isTrulyResting(_ source: any MotionSource, atSeconds seconds: Double) -> Bool {
  if let schedule = source as? any RestSchedule {
    return schedule.isResting(atSeconds: seconds)
  }
  for offset in [0, -0.05, 0.05, -0.13, 0.13, -0.3, 0.3] {
    let truth = source.truth(atSeconds: max(0, seconds + offset))
    guard truth.angularRateRadiansPerSecond.length < 1e-9,
      abs(truth.specificForceMetersPerSecondSquared.length - standardGravity) < 1e-6
    else { return false }
  }
  return true
}

/// The body rate that turns `from` into `to` in `seconds` (body axes, rad/s): the attitude's
/// derivative by a forward difference, for scenarios whose attitude is a formula (`to = from ⊗
/// exp(ω·h)`).
func bodyRate(from q0: Quaternion, to q1: Quaternion, overSeconds h: Double) -> Vector3 {
  var delta = q0.conjugate * q1
  if delta.w < 0 { delta = Quaternion(w: -delta.w, x: -delta.x, y: -delta.y, z: -delta.z) }
  return delta.vector * (2 / h)
}

/// The truth of a body at attitude `q` turning at `omega` (body axes) and accelerating at
/// `acceleration` (reference frame, m/s², besides gravity) at time `t`, its die at
/// `temperatureCelsius`.
func bodyTruth(
  atSeconds t: Double, attitude q: Quaternion, rate omega: Vector3, acceleration: Vector3,
  temperatureCelsius: Double
) -> MotionTruth {
  MotionTruth(
    timeSeconds: t, attitude: q, angularRateRadiansPerSecond: omega,
    specificForceMetersPerSecondSquared: q.inverseRotate(
      acceleration + Vector3(0, 0, standardGravity)),
    temperatureCelsius: temperatureCelsius)
}

/// A die warming from `start` towards `warm` °C with time constant `seconds`, at `t`.
func warmUp(atSeconds t: Double, from start: Double, to warm: Double, timeConstant seconds: Double)
  -> Double
{
  warm + (start - warm) * exp(-t / seconds)
}

/// Yaw (about z), then pitch (about the new y), then roll (about the newest x), radians: the
/// body → reference attitude of a vehicle or a hand.
func yawPitchRollAttitude(yaw: Double, pitch: Double, roll: Double) -> Quaternion {
  (Quaternion(axis: .unitZ, angle: yaw) * Quaternion(axis: .unitY, angle: pitch)
    * Quaternion(axis: .unitX, angle: roll)).normalized
}
