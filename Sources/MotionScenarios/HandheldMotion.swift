import Geometry
import Randomness

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A board held in the hand: free rotations from one pose to another with a wobble on the way,
/// irregular rests in between, small hand translations, and a die that warms slowly.
///
/// Seeded: the whole session (every pose, every segment's length) is drawn when the motion is
/// made, so `truth(atSeconds:)` is a pure function of time. The attitude is C¹-continuous (poses
/// are joined by smoothstep, the wobble is windowed by sin²), and the angular rate is the
/// attitude's exact derivative, computed by differencing it over 1 µs.
public struct HandheldMotion: MotionSource, Sendable {
  struct Segment: Sendable {
    var start: Double
    var end: Double
    /// Roll, pitch, yaw at the start and end, radians (yaw accumulates).
    var from: Vector3
    var to: Vector3
    /// Wobble amplitude per angle (radians) and frequency (Hz); zero for a rest.
    var wobble: Vector3
    var wobbleHz: Double
    /// Hand translation amplitude, m/s², and frequency, Hz.
    var shake: Vector3
    var shakeHz: Double
  }

  let segments: [Segment]
  public let durationSeconds: Double?
  /// Die temperature at the start and after a long time, °C; the warm-up time constant, s.
  public var startTemperatureCelsius = 25.0
  public var warmTemperatureCelsius = 31.0
  public var warmUpTimeConstantSeconds = 300.0

  /// A handheld session of `seconds` (10 minutes by default), drawn from `seed`. It starts with
  /// a rest of `initialRestSeconds` (so an estimator can initialise and learn the bias).
  public init(seconds: Double = 600, seed: UInt64 = 1, initialRestSeconds: Double = 3) {
    var random = SeededGenerator(seed: seed, stream: 41)
    var segments: [Segment] = []
    var t = 0.0
    var pose = Vector3.zero
    func uniform(_ range: ClosedRange<Double>) -> Double {
      range.lowerBound + (range.upperBound - range.lowerBound) * random.nextUniform()
    }
    segments.append(
      Segment(
        start: 0, end: initialRestSeconds, from: pose, to: pose, wobble: .zero, wobbleHz: 0,
        shake: .zero, shakeHz: 0))
    t = initialRestSeconds
    var moving = true
    while t < seconds {
      let length = moving ? uniform(2...6) : uniform(1.5...6)
      let end = min(seconds, t + length)
      if moving {
        let degree = radiansPerDegree
        let next = Vector3(
          uniform(-45...45) * degree, uniform(-40...40) * degree,
          pose.z + uniform(-150...150) * degree)
        segments.append(
          Segment(
            start: t, end: end, from: pose, to: next,
            wobble: Vector3(uniform(2...8), uniform(2...8), uniform(2...10)) * degree,
            wobbleHz: uniform(0.5...2.5),
            shake: Vector3(uniform(0.2...1.5), uniform(0.2...1.5), uniform(0.2...1.5)),
            shakeHz: uniform(0.8...3)))
        pose = next
      } else {
        segments.append(
          Segment(
            start: t, end: end, from: pose, to: pose, wobble: .zero, wobbleHz: 0, shake: .zero,
            shakeHz: 0))
      }
      t = end
      moving.toggle()
    }
    self.segments = segments
    durationSeconds = seconds
  }

  /// Whether the board is still at `seconds` (a rest segment).
  public func isResting(atSeconds seconds: Double) -> Bool {
    let segment = segments[index(at: seconds)]
    return segment.wobble == .zero && segment.from == segment.to
  }

  func index(at seconds: Double) -> Int {
    var low = 0
    var high = segments.count - 1
    while low < high {
      let mid = (low + high + 1) / 2
      if segments[mid].start <= seconds { low = mid } else { high = mid - 1 }
    }
    return low
  }

  /// Roll, pitch, yaw at `seconds`.
  func angles(at seconds: Double) -> Vector3 {
    let segment = segments[index(at: seconds)]
    let span = segment.end - segment.start
    guard span > 0 else { return segment.to }
    let u = min(max((seconds - segment.start) / span, 0), 1)
    let ease = u * u * (3 - 2 * u)
    let window = sin(Double.pi * u) * sin(Double.pi * u)
    let phase = 2 * Double.pi * segment.wobbleHz * seconds
    return segment.from + (segment.to - segment.from) * ease
      + Vector3(
        segment.wobble.x * sin(phase), segment.wobble.y * sin(1.3 * phase + 1),
        segment.wobble.z * sin(0.7 * phase + 2)) * window
  }

  func attitude(at seconds: Double) -> Quaternion {
    let a = angles(at: seconds)
    return
      (Quaternion(axis: .unitZ, angle: a.z) * Quaternion(axis: .unitY, angle: a.y)
      * Quaternion(axis: .unitX, angle: a.x)).normalized
  }

  /// Hand acceleration in the reference frame, m/s² (zero at rest; windowed like the wobble).
  func acceleration(at seconds: Double) -> Vector3 {
    let segment = segments[index(at: seconds)]
    let span = segment.end - segment.start
    guard span > 0, segment.shake != .zero else { return .zero }
    let u = min(max((seconds - segment.start) / span, 0), 1)
    let window = sin(Double.pi * u) * sin(Double.pi * u)
    let phase = 2 * Double.pi * segment.shakeHz * seconds
    return Vector3(
      segment.shake.x * sin(phase), segment.shake.y * sin(1.7 * phase + 0.5),
      segment.shake.z * sin(0.6 * phase + 1.5)) * window
  }

  public func truth(atSeconds seconds: Double) -> MotionTruth {
    let t = max(0, seconds)
    let h = 1e-6
    let q0 = attitude(at: t)
    let q1 = attitude(at: t + h)
    // Body rate from the attitude's derivative: q1 = q0 ⊗ exp(ω h / 2).
    var delta = q0.conjugate * q1
    if delta.w < 0 { delta = Quaternion(w: -delta.w, x: -delta.x, y: -delta.y, z: -delta.z) }
    let omega = delta.vector * (2 / h)
    return bodyTruth(
      atSeconds: t, attitude: q0, rate: omega, acceleration: acceleration(at: t),
      temperatureCelsius: warmUp(
        atSeconds: t, from: startTemperatureCelsius, to: warmTemperatureCelsius,
        timeConstant: warmUpTimeConstantSeconds))
  }
}
