import Geometry
import Randomness

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A board on a car's dashboard: stops with the engine idling, sustained accelerations, cruising
/// over a road that shakes it, turns with their centripetal acceleration, braking to a stop,
/// and slow hills. Seed 001's warning in a vehicle: an acceleration that lasts longer than the
/// filter trusts the gyroscope looks like gravity.
///
/// **Longitudinal.** Each accelerating or braking segment of length `T` pushes with
/// `a(t) = A·sin²(π·u)`, `u = (t − t₀)/T` (smooth at both ends), so the speed changes by `A·T/2`;
/// braking ends exactly at 0. Peak accelerations are 2–4 m/s² forward and up to 5 m/s² braking.
///
/// **Turns** at cruising speed: yaw rate `Ω·sin²(π·u)` (peak 8–25 °/s, capped so the centripetal
/// acceleration `v·ω` stays below 4 m/s²); heading integrates it exactly.
///
/// **The body** (x forward, y left, z up) pitches nose-down under braking and nose-up under
/// acceleration by 0.5° per m/s², rolls outward in turns by 0.5° per m/s² of lateral
/// acceleration, and follows a road grade of ±2° over 1.5 km of road. Its acceleration in the
/// reference frame is horizontal (along and across the heading) plus the road's vertical shake:
/// three seeded sines between 8 and 16 Hz whose amplitude grows with speed (about 0.6 m/s² at
/// 20 m/s), and the engine's idle vibration at 27 Hz (0.03 m/s²) during stops.
///
/// **Rest.** Stops are rests (`isResting`): no rotation, and the idle vibration is far below
/// any rest detector's threshold. The ride starts with a 5 s stop.
///
/// Seeded: the whole ride is drawn at `init`; `truth(atSeconds:)` is a pure function of time.
/// The angular rate is the attitude's derivative, by differencing over 1 µs.
public struct CarRide: MotionSource, RestSchedule, Sendable {
  enum Kind: Sendable {
    case stop, accelerate, cruise, turn, brake
  }

  struct Segment: Sendable {
    var kind: Kind
    var start: Double
    var length: Double
    /// Speed at the start, m/s.
    var speed: Double
    /// Peak longitudinal acceleration, m/s² (negative when braking).
    var acceleration: Double
    /// Heading at the start, radians.
    var heading: Double
    /// Distance travelled at the start, metres.
    var distance: Double
    /// Peak yaw rate, rad/s.
    var turnRate: Double
  }

  let segments: [Segment]
  /// Road shake: frequencies (Hz), phases (rad) and amplitudes at 20 m/s (m/s²).
  let shakeHertz: [Double]
  let shakePhase: [Double]
  let shakeAmplitude: [Double]
  public let durationSeconds: Double?

  /// The engine's idle vibration at stops: frequency, Hz, and amplitude, m/s².
  public static let idleHertz = 27.0
  public static let idleAmplitudeMetersPerSecondSquared = 0.03
  /// Body pitch and roll per m/s² of longitudinal and lateral acceleration, radians.
  public static let leanPerMetersPerSecondSquared = 0.5 * radiansPerDegree
  /// Road grade amplitude, radians, and the length of one hill and valley, metres.
  public static let gradeRadians = 2 * radiansPerDegree
  public static let hillMetres = 1500.0

  /// A ride of `seconds` (5 minutes by default) drawn from `seed`.
  public init(seconds: Double = 300, seed: UInt64 = 1) {
    var random = SeededGenerator(seed: seed, stream: 61)
    func uniform(_ range: ClosedRange<Double>) -> Double {
      range.lowerBound + (range.upperBound - range.lowerBound) * random.nextUniform()
    }
    var segments: [Segment] = []
    var t = 0.0
    var heading = 0.0
    var distance = 0.0
    func append(
      _ kind: Kind, _ length: Double, speed: Double, acceleration: Double = 0,
      turnRate: Double = 0
    ) {
      let segment = Segment(
        kind: kind, start: t, length: length, speed: speed, acceleration: acceleration,
        heading: heading, distance: distance, turnRate: turnRate)
      segments.append(segment)
      if kind == .turn {
        heading += turnRate * length / 2
      }
      distance = Self.distance(in: segment, after: length)
      t += length
    }
    append(.stop, 5, speed: 0)
    while t < seconds {
      // Pull away to 8…20 m/s.
      var speed = 0.0
      let target = uniform(8...20)
      let pull = max(uniform(5...9), 2 * target / 3.5)
      append(.accelerate, pull, speed: 0, acceleration: 2 * target / pull)
      speed = target
      for _ in 0..<(1 + Int(random.nextUniform() * 4)) {
        switch random.nextUniform() {
        case ..<0.45:
          let rate = min(uniform(8...25) * radiansPerDegree, 4 / max(speed, 1))
          let sign: Double = random.nextUniform() < 0.5 ? -1 : 1
          append(.turn, uniform(3...8), speed: speed, turnRate: sign * rate)
        case ..<0.7:
          let change = uniform(-5...6)
          let next = min(25, max(6, speed + change))
          let length = uniform(3...6)
          append(.accelerate, length, speed: speed, acceleration: 2 * (next - speed) / length)
          speed = next
        default:
          append(.cruise, uniform(4...15), speed: speed)
        }
      }
      let braking = max(uniform(3...6), speed / 2.5)
      append(.brake, braking, speed: speed, acceleration: -2 * speed / braking)
      append(.stop, uniform(4...12), speed: 0)
    }
    self.segments = segments
    shakeHertz = (0..<3).map { _ in uniform(8...16) }
    shakePhase = (0..<3).map { _ in uniform(0...(2 * Double.pi)) }
    shakeAmplitude = (0..<3).map { _ in uniform(0.2...0.45) }
    durationSeconds = seconds
  }

  public func isResting(atSeconds seconds: Double) -> Bool {
    segments[index(at: max(0, seconds))].kind == .stop
  }

  /// The distance travelled `tau` seconds into `segment`, metres: its speed integrated
  /// (`v₀τ + A(τ²/4 + T²(cos(2πτ/T) − 1)/(8π²))` while accelerating or braking).
  static func distance(in segment: Segment, after tau: Double) -> Double {
    var d = segment.distance + segment.speed * tau
    if segment.kind == .accelerate || segment.kind == .brake {
      let T = segment.length
      d +=
        segment.acceleration
        * (tau * tau / 4 + T * T * (cos(2 * Double.pi * tau / T) - 1) / (8 * Double.pi * Double.pi))
    }
    return d
  }

  /// Speed at `seconds`, m/s.
  public func speed(atSeconds seconds: Double) -> Double { state(at: max(0, seconds)).speed }

  func index(at seconds: Double) -> Int {
    var low = 0
    var high = segments.count - 1
    while low < high {
      let mid = (low + high + 1) / 2
      if segments[mid].start <= seconds { low = mid } else { high = mid - 1 }
    }
    return low
  }

  /// Speed, longitudinal acceleration, heading, yaw rate and distance at `t`.
  func state(at t: Double) -> (
    speed: Double, acceleration: Double, heading: Double, yawRate: Double, distance: Double
  ) {
    let segment = segments[index(at: t)]
    let tau = min(max(t - segment.start, 0), segment.length)
    let distance = Self.distance(in: segment, after: tau)
    let u = tau / segment.length
    let window = sin(Double.pi * u) * sin(Double.pi * u)
    // ∫₀^τ sin²(π s / T) ds = τ/2 − T sin(2π τ / T) / (4π)
    let integral = tau / 2 - segment.length * sin(2 * Double.pi * u) / (4 * Double.pi)
    switch segment.kind {
    case .stop, .cruise:
      return (segment.speed, 0, segment.heading, 0, distance)
    case .accelerate, .brake:
      return (
        max(0, segment.speed + segment.acceleration * integral), segment.acceleration * window,
        segment.heading, 0, distance
      )
    case .turn:
      return (
        segment.speed, 0, segment.heading + segment.turnRate * integral,
        segment.turnRate * window, distance
      )
    }
  }

  /// Acceleration in the reference frame (z up), m/s², gravity excluded.
  func acceleration(at t: Double) -> Vector3 {
    let s = state(at: t)
    let forward = Vector3(cos(s.heading), sin(s.heading), 0)
    let left = Vector3(-sin(s.heading), cos(s.heading), 0)
    var vertical = 0.0
    if s.speed > 0 {
      for i in 0..<3 {
        vertical +=
          shakeAmplitude[i] * (s.speed / 20)
          * sin(2 * Double.pi * shakeHertz[i] * t + shakePhase[i])
      }
    } else {
      vertical = Self.idleAmplitudeMetersPerSecondSquared * sin(2 * Double.pi * Self.idleHertz * t)
    }
    return forward * s.acceleration + left * (s.speed * s.yawRate) + Vector3(0, 0, vertical)
  }

  func attitude(at t: Double) -> Quaternion {
    let s = state(at: t)
    let lean = Self.leanPerMetersPerSecondSquared
    // Hills are where they are on the road: the grade follows the distance, so a stopped car
    // does not pitch.
    let grade = Self.gradeRadians * sin(2 * Double.pi * s.distance / Self.hillMetres)
    // Positive pitch about y turns the nose (x) down: braking dives, accelerating squats.
    let pitch = grade - lean * s.acceleration
    // Positive roll about x lifts the left side: outward in a left turn (positive yaw rate).
    let roll = lean * s.speed * s.yawRate
    return yawPitchRollAttitude(yaw: s.heading, pitch: pitch, roll: roll)
  }

  public func truth(atSeconds seconds: Double) -> MotionTruth {
    let t = max(0, seconds)
    let h = 1e-6
    let q0 = attitude(at: t)
    let q1 = attitude(at: t + h)
    let force = q0.inverseRotate(acceleration(at: t) + Vector3(0, 0, standardGravity))
    return MotionTruth(
      timeSeconds: t, attitude: q0,
      angularRateRadiansPerSecond: bodyRate(from: q0, to: q1, overSeconds: h),
      specificForceMetersPerSecondSquared: force, temperatureCelsius: 25)
  }
}
