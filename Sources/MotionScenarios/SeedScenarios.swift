import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The scenarios of the seed articles, with exact ground truth: attitude, angular rate (the
/// attitude's analytic derivative) and specific force (gravity's reaction plus the body's
/// acceleration, in body axes, m/s²). The reference frame is z up; `g` is standard gravity.

/// Seed 001 "tilting": the body tips 60° about its x axis between 2 s and 3 s (smoothstep
/// easing), then holds; 6 s in all.
public struct TiltScenario: MotionSource, Hashable, Sendable {
  public var angleRadians: Double
  public var startSeconds: Double
  public var durationOfTiltSeconds: Double
  public var durationSeconds: Double?

  public init(
    angleRadians: Double = 60 * radiansPerDegree, startSeconds: Double = 2,
    durationOfTiltSeconds: Double = 1, totalSeconds: Double = 6
  ) {
    self.angleRadians = angleRadians
    self.startSeconds = startSeconds
    self.durationOfTiltSeconds = durationOfTiltSeconds
    self.durationSeconds = totalSeconds
  }

  public func truth(atSeconds t: Double) -> MotionTruth {
    let f = min(max((max(t, 0) - startSeconds) / durationOfTiltSeconds, 0), 1)
    let eased = f * f * (3 - 2 * f)
    let rate = angleRadians * 6 * f * (1 - f) / durationOfTiltSeconds
    let attitude = Quaternion(axis: .unitX, angle: eased * angleRadians)
    return MotionTruth(
      timeSeconds: t, attitude: attitude, angularRateRadiansPerSecond: Vector3(rate, 0, 0),
      specificForceMetersPerSecondSquared: attitude.inverseRotate(Vector3(0, 0, standardGravity)),
      temperatureCelsius: 25)
  }
}

/// Seed 001 "pushing": a level body, not rotating, accelerates along the reference y axis at
/// 0.3 g from 2 s to 7 s — physically indistinguishable from a 16.7° tilt for an accelerometer
/// alone; 10 s in all.
public struct PushScenario: MotionSource, Hashable, Sendable {
  public var accelerationMetersPerSecondSquared: Vector3
  public var startSeconds: Double
  public var endSeconds: Double
  public var durationSeconds: Double?
  public var attitude: Quaternion

  public init(
    accelerationMetersPerSecondSquared: Vector3 = Vector3(0, 0.3 * standardGravity, 0),
    startSeconds: Double = 2, endSeconds: Double = 7, totalSeconds: Double = 10,
    attitude: Quaternion = .identity
  ) {
    self.accelerationMetersPerSecondSquared = accelerationMetersPerSecondSquared
    self.startSeconds = startSeconds
    self.endSeconds = endSeconds
    self.durationSeconds = totalSeconds
    self.attitude = attitude
  }

  public func truth(atSeconds t: Double) -> MotionTruth {
    let pushing = t >= startSeconds && t < endSeconds
    let world =
      Vector3(0, 0, standardGravity) + (pushing ? accelerationMetersPerSecondSquared : .zero)
    return MotionTruth(
      timeSeconds: t, attitude: attitude, angularRateRadiansPerSecond: .zero,
      specificForceMetersPerSecondSquared: attitude.inverseRotate(world), temperatureCelsius: 25)
  }
}

/// Seed 001 "walking": a body held tilted 30° about x bounces vertically at 2 Hz with an
/// amplitude of 0.3 g from `startSeconds` (0 by default, as in the seed); 10 s.
public struct WalkScenario: MotionSource, Hashable, Sendable {
  public var tiltRadians: Double
  public var amplitudeMetersPerSecondSquared: Double
  public var frequencyHertz: Double
  /// When the bounce begins, seconds (before it the body is held still at the tilt).
  public var startSeconds: Double
  public var durationSeconds: Double?

  public init(
    tiltRadians: Double = 30 * radiansPerDegree,
    amplitudeMetersPerSecondSquared: Double = 0.3 * standardGravity, frequencyHertz: Double = 2,
    startSeconds: Double = 0, totalSeconds: Double = 10
  ) {
    self.tiltRadians = tiltRadians
    self.amplitudeMetersPerSecondSquared = amplitudeMetersPerSecondSquared
    self.frequencyHertz = frequencyHertz
    self.startSeconds = startSeconds
    self.durationSeconds = totalSeconds
  }

  public func truth(atSeconds t: Double) -> MotionTruth {
    let attitude = Quaternion(axis: .unitX, angle: tiltRadians)
    let bounce =
      amplitudeMetersPerSecondSquared * sin(2 * .pi * frequencyHertz * max(t - startSeconds, 0))
    return MotionTruth(
      timeSeconds: t, attitude: attitude, angularRateRadiansPerSecond: .zero,
      specificForceMetersPerSecondSquared: attitude.inverseRotate(
        Vector3(0, 0, standardGravity + bounce)),
      temperatureCelsius: 25)
  }
}

/// A level body turning about the vertical at a constant rate (seed 000's timestamp example:
/// 90 °/s for 2 s).
public struct ConstantTurnScenario: MotionSource, Hashable, Sendable {
  public var rateRadiansPerSecond: Double
  public var durationSeconds: Double?

  public init(rateRadiansPerSecond: Double = 90 * radiansPerDegree, totalSeconds: Double = 2) {
    self.rateRadiansPerSecond = rateRadiansPerSecond
    self.durationSeconds = totalSeconds
  }

  public func truth(atSeconds t: Double) -> MotionTruth {
    MotionTruth(
      timeSeconds: t, attitude: Quaternion(axis: .unitZ, angle: rateRadiansPerSecond * max(t, 0)),
      angularRateRadiansPerSecond: Vector3(0, 0, rateRadiansPerSecond),
      specificForceMetersPerSecondSquared: Vector3(0, 0, standardGravity), temperatureCelsius: 25)
  }
}

/// Seed 000's ten-minute session: a level body rests for the first 5 s of every minute and
/// otherwise turns about the vertical at `0.3 sin(t/7) + 0.2 sin(t/3.1)` rad/s. The wandering
/// gyro bias is the sensor's business (`InertialSensorModel`), not the motion's.
public struct RestTurnSession: MotionSource, Hashable, Sendable {
  public var durationSeconds: Double?
  /// The rest at the start of every period, seconds.
  public var restSeconds: Double
  /// The period, seconds.
  public var periodSeconds: Double

  public init(totalSeconds: Double = 600, restSeconds: Double = 5, periodSeconds: Double = 60) {
    self.durationSeconds = totalSeconds
    self.restSeconds = restSeconds
    self.periodSeconds = periodSeconds
  }

  /// Whether the body rests at `t` (the schedule; an estimator must find rests itself).
  public func isResting(atSeconds t: Double) -> Bool {
    max(t, 0).truncatingRemainder(dividingBy: periodSeconds) < restSeconds
  }

  /// The turn rate while moving, rad/s.
  public static func turnRate(atSeconds t: Double) -> Double {
    0.3 * sin(t / 7) + 0.2 * sin(t / 3.1)
  }

  /// An antiderivative of `turnRate`.
  private static func turnAngle(_ t: Double) -> Double {
    -2.1 * cos(t / 7) - 0.62 * cos(t / 3.1)
  }

  /// The heading at `t`, radians: the turn rate integrated over the moving parts.
  public func heading(atSeconds time: Double) -> Double {
    let t = max(time, 0)
    let completed = (t / periodSeconds).rounded(.down)
    var angle = 0.0
    var k = 0.0
    while k < completed {
      let start = k * periodSeconds + restSeconds
      angle += Self.turnAngle(start + periodSeconds - restSeconds) - Self.turnAngle(start)
      k += 1
    }
    let moveStart = completed * periodSeconds + restSeconds
    if t > moveStart { angle += Self.turnAngle(t) - Self.turnAngle(moveStart) }
    return angle
  }

  public func truth(atSeconds t: Double) -> MotionTruth {
    let rate = isResting(atSeconds: t) ? 0 : Self.turnRate(atSeconds: max(t, 0))
    return MotionTruth(
      timeSeconds: t, attitude: Quaternion(axis: .unitZ, angle: heading(atSeconds: t)),
      angularRateRadiansPerSecond: Vector3(0, 0, rate),
      specificForceMetersPerSecondSquared: Vector3(0, 0, standardGravity), temperatureCelsius: 25)
  }
}
