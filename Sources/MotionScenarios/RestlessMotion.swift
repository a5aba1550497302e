import Geometry
import Randomness

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A board that is never still: on a boat, in a hand that never puts it down, on a robot that
/// keeps working. It rolls and pitches about a tilted mean pose, wanders in heading and is
/// shaken a little, from power-on for `motionSeconds` (five minutes by default); then it comes
/// to rest, at the mean pose, for `restSeconds`.
///
/// No rest means no direct measurement of the gyro bias for minutes: only the motion-bias
/// estimation (the horizontal part, through the inclination correction) and the bias's own
/// uncertainty stand between the estimate and a drifting heading. And a constant mean tilt is
/// what a per-axis bias covariance gets wrong: motion measures only the horizontal directions,
/// which on a tilted board mix the body axes.
///
/// Seeded: amplitudes, periods and phases are drawn when the motion is made, so
/// `truth(atSeconds:)` is a pure function of time. Roll and pitch are sums of three sines each
/// (2–12° at periods of 1.5–12 s), heading a sum of two (20–60° at 25–80 s) plus a steady
/// 0–6 °/s; the hand adds 0.2–0.8 m/s² at 0.5–2 Hz. Over the last two seconds of motion
/// everything eases to the mean pose (a smoothstep), so the rest begins without a jump. The
/// die warms from 22 to 30 °C with a time constant of five minutes.
public struct RestlessMotion: MotionSource, RestSchedule, Sendable {
  struct Wave: Sendable {
    var amplitude: Double
    var angularFrequency: Double
    var phase: Double

    func value(_ t: Double) -> Double { amplitude * sin(angularFrequency * t + phase) }
  }

  let roll: [Wave]
  let pitch: [Wave]
  let heading: [Wave]
  let headingRate: Double
  let shake: [Wave]
  /// The mean pose's roll and pitch, radians.
  public let meanRollRadians: Double
  public let meanPitchRadians: Double
  public let motionSeconds: Double
  public let restSeconds: Double
  public var durationSeconds: Double? { motionSeconds + restSeconds }
  public var startTemperatureCelsius = 22.0
  public var warmTemperatureCelsius = 30.0
  public var warmUpTimeConstantSeconds = 300.0

  /// How long the motion eases into the rest, seconds.
  static let easeSeconds = 2.0

  public init(motionSeconds: Double = 300, restSeconds: Double = 20, seed: UInt64 = 1) {
    var random = SeededGenerator(seed: seed, stream: 43)
    func uniform(_ range: ClosedRange<Double>) -> Double {
      range.lowerBound + (range.upperBound - range.lowerBound) * random.nextUniform()
    }
    func wave(degrees: ClosedRange<Double>, periods: ClosedRange<Double>) -> Wave {
      Wave(
        amplitude: uniform(degrees) * radiansPerDegree,
        angularFrequency: 2 * .pi / uniform(periods), phase: uniform(0...(2 * .pi)))
    }
    roll = (0..<3).map { _ in wave(degrees: 2...12, periods: 1.5...12) }
    pitch = (0..<3).map { _ in wave(degrees: 2...12, periods: 1.5...12) }
    heading = (0..<2).map { _ in wave(degrees: 20...60, periods: 25...80) }
    headingRate = uniform(-6...6) * radiansPerDegree
    shake = (0..<3).map { _ in
      Wave(
        amplitude: uniform(0.2...0.8), angularFrequency: 2 * .pi * uniform(0.5...2),
        phase: uniform(0...(2 * .pi)))
    }
    meanRollRadians = uniform(-20...20) * radiansPerDegree
    meanPitchRadians = uniform(-20...20) * radiansPerDegree
    self.motionSeconds = max(0, motionSeconds)
    self.restSeconds = max(0, restSeconds)
  }

  public func isResting(atSeconds seconds: Double) -> Bool { seconds >= motionSeconds }

  /// How much of the motion is left at `t`: 1, easing to 0 over the last two seconds.
  func motionWeight(_ t: Double) -> Double {
    let u = min(max((motionSeconds - t) / Self.easeSeconds, 0), 1)
    return u * u * (3 - 2 * u)
  }

  /// Roll, pitch, heading at `t`, radians. The heading eases to where it would have been at the
  /// ease's start, so the rest's pose is fixed.
  func angles(at t: Double) -> Vector3 {
    let w = motionWeight(t)
    let moving = min(t, motionSeconds)
    let r = roll.reduce(0) { $0 + $1.value(moving) }
    let p = pitch.reduce(0) { $0 + $1.value(moving) }
    // The heading's steady part and its waves are integrated with the weight: their rate
    // eases out with everything else.
    let easeStart = max(0, motionSeconds - Self.easeSeconds)
    let h = heading.reduce(0) { $0 + $1.value(moving) }
    let h0 = heading.reduce(0) { $0 + $1.value(easeStart) }
    let steady = headingRate * (min(t, easeStart) + easedSeconds(from: easeStart, to: t))
    let wavy = t <= easeStart ? h : h0 + (h - h0) * w
    return Vector3(meanRollRadians + r * w, meanPitchRadians + p * w, steady + wavy)
  }

  /// ∫ weight dt from `a` to `b` (closed form of the smoothstep's integral).
  func easedSeconds(from a: Double, to b: Double) -> Double {
    guard b > a else { return 0 }
    let e = Self.easeSeconds
    // weight(t) = s(u), u = (T − t)/e; ∫ s(u) du = u³ − u⁴/2.
    func antiderivative(_ t: Double) -> Double {
      let u = min(max((motionSeconds - t) / e, 0), 1)
      return -e * (u * u * u - u * u * u * u / 2)
    }
    return antiderivative(min(b, motionSeconds)) - antiderivative(a)
  }

  func attitude(at t: Double) -> Quaternion {
    let a = angles(at: t)
    return yawPitchRollAttitude(yaw: a.z, pitch: a.y, roll: a.x)
  }

  func acceleration(at t: Double) -> Vector3 {
    let w = motionWeight(t)
    return Vector3(shake[0].value(t), shake[1].value(t), shake[2].value(t)) * w
  }

  public func truth(atSeconds seconds: Double) -> MotionTruth {
    let t = max(0, seconds)
    let q0 = attitude(at: t)
    let omega =
      t >= motionSeconds
      ? Vector3.zero : bodyRate(from: q0, to: attitude(at: t + 1e-6), overSeconds: 1e-6)
    return bodyTruth(
      atSeconds: t, attitude: q0, rate: omega, acceleration: acceleration(at: t),
      temperatureCelsius: warmUp(
        atSeconds: t, from: startTemperatureCelsius, to: warmTemperatureCelsius,
        timeConstant: warmUpTimeConstantSeconds))
  }
}
