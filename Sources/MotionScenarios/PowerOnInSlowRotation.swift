import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A board switched on while it turns slowly and steadily — on a boat, in a vehicle, in a hand
/// turning it at a degree or two a second — with its die warming up, that only later comes to
/// rest.
///
/// A constant rate is what a rest detector that looks at deviations from a window mean cannot
/// see: the gyro deviates from its own mean by its noise alone, and at 2 °/s gravity turns in
/// the body by 3° in 1.5 s, slowly enough that the accelerometer stays within a rest threshold
/// of its window mean. About a horizontal axis the accelerometer still sees the turn (0.5 °/s
/// is 0.086 m/s² between means a second apart); about the vertical nothing does.
///
/// The body starts level and turns at `rateRadiansPerSecond` about an axis `axisTiltRadians`
/// from the vertical (fixed in the reference frame, in its x–z plane: 90° is a horizontal axis,
/// 0 the vertical) for `turnSeconds`, slows to a stop over `stopSeconds` (the rate a
/// smoothstep down), rests for `restSeconds`, turns by `headingTurnRadians` about the vertical
/// over `headingTurnSeconds` (a smoothstep), and rests to the end. The die warms from
/// `startCelsius` to `endCelsius` over `warmUpSeconds` (a smoothstep), from power-on. No
/// randomness.
public struct PowerOnInSlowRotation: MotionSource, RestSchedule, Hashable, Sendable {
  public var rateRadiansPerSecond: Double
  public var axisTiltRadians: Double
  public var turnSeconds: Double
  public var stopSeconds: Double
  public var restSeconds: Double
  public var headingTurnRadians: Double
  public var headingTurnSeconds: Double
  public var startCelsius: Double
  public var endCelsius: Double
  public var warmUpSeconds: Double
  public var durationSeconds: Double?

  /// 2 °/s about an axis 60° from the vertical (1.73 °/s of it horizontal, 1 °/s vertical) for
  /// 60 s, a 2 s stop, 20 s of rest, a 90° turn about the vertical in 10 s, then rest; the die
  /// warms 20 → 35 °C over 5 minutes; 2 minutes in all.
  public init(
    rateRadiansPerSecond: Double = 2 * radiansPerDegree,
    axisTiltRadians: Double = 60 * radiansPerDegree, turnSeconds: Double = 60,
    stopSeconds: Double = 2, restSeconds: Double = 20,
    headingTurnRadians: Double = 90 * radiansPerDegree, headingTurnSeconds: Double = 10,
    startCelsius: Double = 20, endCelsius: Double = 35, warmUpSeconds: Double = 300,
    totalSeconds: Double = 120
  ) {
    self.rateRadiansPerSecond = rateRadiansPerSecond
    self.axisTiltRadians = axisTiltRadians
    self.turnSeconds = turnSeconds
    self.stopSeconds = stopSeconds
    self.restSeconds = restSeconds
    self.headingTurnRadians = headingTurnRadians
    self.headingTurnSeconds = headingTurnSeconds
    self.startCelsius = startCelsius
    self.endCelsius = endCelsius
    self.warmUpSeconds = warmUpSeconds
    durationSeconds = totalSeconds
  }

  /// The axis of the steady turn, reference frame (unit).
  public var axis: Vector3 {
    Vector3(sin(axisTiltRadians), 0, cos(axisTiltRadians))
  }

  /// When the heading turn begins, seconds.
  var headingTurnStartSeconds: Double { turnSeconds + stopSeconds + restSeconds }

  public func isResting(atSeconds seconds: Double) -> Bool {
    let t = max(0, seconds)
    let start = headingTurnStartSeconds
    return (t >= turnSeconds + stopSeconds && t < start) || t >= start + headingTurnSeconds
  }

  /// The die temperature at `seconds`, °C.
  public func temperatureCelsius(atSeconds seconds: Double) -> Double {
    let u = min(max(seconds / warmUpSeconds, 0), 1)
    return startCelsius + (endCelsius - startCelsius) * u * u * (3 - 2 * u)
  }

  /// The angle turned about `axis` by `t`, and its rate.
  func steadyTurn(at t: Double) -> (angle: Double, rate: Double) {
    let w = rateRadiansPerSecond
    guard t > turnSeconds else { return (w * t, w) }
    let u = min((t - turnSeconds) / stopSeconds, 1)
    // The rate falls as 1 − smoothstep(u); its integral is u − u³ + u⁴/2.
    return (
      w * turnSeconds + w * stopSeconds * (u - u * u * u + 0.5 * u * u * u * u),
      w * (1 - u * u * (3 - 2 * u))
    )
  }

  /// The heading turned about the vertical by `t`, and its rate.
  func headingTurn(at t: Double) -> (angle: Double, rate: Double) {
    let u = min(max((t - headingTurnStartSeconds) / headingTurnSeconds, 0), 1)
    return (
      headingTurnRadians * u * u * (3 - 2 * u),
      headingTurnRadians * 6 * u * (1 - u) / headingTurnSeconds
    )
  }

  public func truth(atSeconds seconds: Double) -> MotionTruth {
    let t = max(0, seconds)
    let (turned, turnRate) = steadyTurn(at: t)
    let (heading, headingRate) = headingTurn(at: t)
    let vertical = Quaternion(axis: .unitZ, angle: heading)
    let attitude = vertical * Quaternion(axis: axis, angle: turned)
    // Angular velocity in the reference frame: the heading turn's, plus the steady turn's axis
    // as the heading turn has carried it.
    let rate = Vector3(0, 0, headingRate) + vertical.rotate(axis) * turnRate
    return MotionTruth(
      timeSeconds: t, attitude: attitude,
      angularRateRadiansPerSecond: attitude.inverseRotate(rate),
      specificForceMetersPerSecondSquared: attitude.inverseRotate(
        Vector3(0, 0, standardGravity)),
      temperatureCelsius: temperatureCelsius(atSeconds: t))
  }
}
