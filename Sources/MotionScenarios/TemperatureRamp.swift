import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A board whose die warms from 20 °C to 50 °C (a cold enclosure in the sun, a board next to a
/// warming regulator) while it alternately rests and turns about the vertical.
///
/// The chip's temperature coefficients do the rest: its zero-rate output moves by up to
/// 20/65 °/s per °C (PS-MPU-6000A rev 3.4 §6.1, ±20 °/s over −40…+85 °C), so 30 °C of warming
/// can move an uncalibrated gyro's bias by several °/s — far more than it wanders at a constant
/// temperature — and its accelerometer offsets by tens of milli-g (§6.2). An estimator without a
/// temperature calibration must re-learn the bias at every rest.
///
/// The temperature follows a smoothstep from `startCelsius` to `endCelsius` over `rampSeconds`,
/// then holds. The motion repeats every `periodSeconds`: a rest of `restSeconds`, then a turn
/// about the vertical by `turnRadians` (alternating left and right) with a smoothstep profile.
/// Level; no randomness.
public struct TemperatureRamp: MotionSource, RestSchedule, Hashable, Sendable {
  public var startCelsius: Double
  public var endCelsius: Double
  public var rampSeconds: Double
  public var periodSeconds: Double
  public var restSeconds: Double
  public var turnRadians: Double
  public var durationSeconds: Double?

  /// 20 → 50 °C over 8 minutes; rests of 20 s between 20 s turns of 90°; 10 minutes.
  public init(
    startCelsius: Double = 20, endCelsius: Double = 50, rampSeconds: Double = 480,
    periodSeconds: Double = 40, restSeconds: Double = 20,
    turnRadians: Double = 90 * radiansPerDegree, totalSeconds: Double = 600
  ) {
    self.startCelsius = startCelsius
    self.endCelsius = endCelsius
    self.rampSeconds = rampSeconds
    self.periodSeconds = periodSeconds
    self.restSeconds = restSeconds
    self.turnRadians = turnRadians
    durationSeconds = totalSeconds
  }

  /// The die temperature at `seconds`, °C.
  public func temperatureCelsius(atSeconds seconds: Double) -> Double {
    let u = min(max(seconds / rampSeconds, 0), 1)
    return startCelsius + (endCelsius - startCelsius) * u * u * (3 - 2 * u)
  }

  public func isResting(atSeconds seconds: Double) -> Bool {
    max(0, seconds).truncatingRemainder(dividingBy: periodSeconds) < restSeconds
  }

  /// Heading (radians) and yaw rate (rad/s) at `t`.
  func heading(at t: Double) -> (angle: Double, rate: Double) {
    let period = (t / periodSeconds).rounded(.down)
    // Turns alternate +, −: after an even number of completed turns the heading is back at 0.
    let completed = Int(period)
    var angle = completed % 2 == 1 ? turnRadians : 0
    let sign: Double = completed % 2 == 0 ? 1 : -1
    let into = t - period * periodSeconds - restSeconds
    guard into > 0 else { return (angle, 0) }
    let length = periodSeconds - restSeconds
    let u = min(into / length, 1)
    angle += sign * turnRadians * u * u * (3 - 2 * u)
    return (angle, sign * turnRadians * 6 * u * (1 - u) / length)
  }

  public func truth(atSeconds seconds: Double) -> MotionTruth {
    let t = max(0, seconds)
    let (angle, rate) = heading(at: t)
    return MotionTruth(
      timeSeconds: t, attitude: Quaternion(axis: .unitZ, angle: angle),
      angularRateRadiansPerSecond: Vector3(0, 0, rate),
      specificForceMetersPerSecondSquared: Vector3(0, 0, standardGravity),
      temperatureCelsius: temperatureCelsius(atSeconds: t))
  }
}

/// A board lying still for hours (a bench unit, a parked vehicle): slightly tilted, in a room
/// whose temperature drifts by ±1.5 °C over a day. Nothing moves, so every frame should say
/// "rest", the heading must not drift, and the bias estimate must follow the gyro's own slow
/// wander (the catalogue gives this scenario a wandering bias).
public struct LongStillness: MotionSource, RestSchedule, Hashable, Sendable {
  /// The attitude: 3° of roll and 2° of pitch.
  public var attitude: Quaternion
  public var durationSeconds: Double?

  /// `hours` of stillness (4 by default).
  public init(hours: Double = 4) {
    attitude =
      (Quaternion(axis: .unitY, angle: 2 * radiansPerDegree)
      * Quaternion(axis: .unitX, angle: 3 * radiansPerDegree)).normalized
    durationSeconds = hours * 3600
  }

  public func isResting(atSeconds seconds: Double) -> Bool { true }

  public func truth(atSeconds seconds: Double) -> MotionTruth {
    let t = max(0, seconds)
    return MotionTruth(
      timeSeconds: t, attitude: attitude, angularRateRadiansPerSecond: .zero,
      specificForceMetersPerSecondSquared: attitude.inverseRotate(
        Vector3(0, 0, standardGravity)),
      temperatureCelsius: 25 + 1.5 * sin(2 * Double.pi * t / 86_400))
  }
}
