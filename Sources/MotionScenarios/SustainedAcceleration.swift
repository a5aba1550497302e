import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A level body that rests, then meets one long horizontal acceleration — what seed 001 calls
/// the fundamental limit of an accelerometer-aided filter: held longer than the filter trusts
/// the gyroscope, it looks like gravity.
///
/// - `.corner`: a car on a motorway interchange's loop at `speed`, its centripetal acceleration
///   `a` held for `holdSeconds` (yaw rate `a / speed`, entered and left over 2 s with a sin²
///   ramp), so the body turns while the acceleration stays across it: f_body = (0, v·ω, g).
/// - `.straight`: a push along the body's x axis, `a` held for `holdSeconds` (2 s sin² ramps in
///   and out), without rotation: f_body = (a, 0, g). A sled, or a vehicle's acceleration in a
///   test; physically longer than any car keeps it, which is why it is a test.
///
/// The body rests for `restSeconds` first (the bias is known when the acceleration starts) and
/// after. Level throughout; the die at 25 °C; no randomness.
public struct SustainedAcceleration: MotionSource, RestSchedule, Hashable, Sendable {
  public enum Kind: String, Hashable, Sendable { case corner, straight }

  public var kind: Kind
  /// The held acceleration, m/s².
  public var accelerationMetersPerSecondSquared: Double
  public var holdSeconds: Double
  /// The cornering speed, m/s (`.corner` only).
  public var speedMetersPerSecond: Double
  public var restSeconds: Double
  public var durationSeconds: Double?

  static let rampSeconds = 2.0

  public init(
    kind: Kind, accelerationMetersPerSecondSquared: Double = 3, holdSeconds: Double = 30,
    speedMetersPerSecond: Double = 15, restSeconds: Double = 10
  ) {
    self.kind = kind
    self.accelerationMetersPerSecondSquared = accelerationMetersPerSecondSquared
    self.holdSeconds = holdSeconds
    self.speedMetersPerSecond = speedMetersPerSecond
    self.restSeconds = restSeconds
    durationSeconds = restSeconds + holdSeconds + 2 * Self.rampSeconds + restSeconds
  }

  /// The acceleration's profile, 0…1, and its time integral from the start (seconds).
  func profile(atSeconds t: Double) -> (value: Double, integral: Double) {
    let r = Self.rampSeconds
    let start = restSeconds
    let u = t - start
    if u <= 0 { return (0, 0) }
    // sin²(πx/2) ramps: ∫₀^r sin²(πs/(2r)) ds = r/2.
    if u < r {
      let x = u / r
      let s = sin(Double.pi / 2 * x)
      return (s * s, u / 2 - r / (2 * Double.pi) * sin(Double.pi * x))
    }
    if u < r + holdSeconds { return (1, r / 2 + (u - r)) }
    let total = r / 2 + holdSeconds + r / 2
    let d = u - r - holdSeconds
    if d < r {
      let x = d / r
      let c = cos(Double.pi / 2 * x)
      return (c * c, r / 2 + holdSeconds + d / 2 + r / (2 * Double.pi) * sin(Double.pi * x))
    }
    return (0, total)
  }

  public func isResting(atSeconds seconds: Double) -> Bool {
    profile(atSeconds: seconds).value == 0
  }

  public func truth(atSeconds t: Double) -> MotionTruth {
    let (p, integral) = profile(atSeconds: t)
    let a = accelerationMetersPerSecondSquared * p
    let g = 9.80665
    switch kind {
    case .straight:
      return MotionTruth(
        timeSeconds: t, attitude: .identity, angularRateRadiansPerSecond: .zero,
        specificForceMetersPerSecondSquared: Vector3(a, 0, g), temperatureCelsius: 25)
    case .corner:
      let v = speedMetersPerSecond
      let rate = a / v
      let heading = accelerationMetersPerSecondSquared / v * integral
      return MotionTruth(
        timeSeconds: t, attitude: Quaternion(axis: .unitZ, angle: heading),
        angularRateRadiansPerSecond: Vector3(0, 0, rate),
        specificForceMetersPerSecondSquared: Vector3(0, v * rate, g), temperatureCelsius: 25)
    }
  }
}
