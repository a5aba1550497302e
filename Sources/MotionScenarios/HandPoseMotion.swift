import Geometry
import Randomness

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A person calibrating a board by hand: still poses on a table, and turns between them with
/// a hand's tremor. The body's attitude is held through each pose (optionally creeping, a
/// board that slides or rocks), then turned to the next pose along the shortest rotation with
/// a smooth start and stop, with a tremor of a few tenths of a degree at 4–11 Hz that fades in
/// and out with the turn. Everything is in the body frame; mount it (`MountedMotion`) for the
/// chip's.
public struct HandPoseMotion: MotionSource, Sendable {
  /// One pose and the turn that follows it.
  public struct Pose: Sendable, Hashable {
    /// The attitude when the pose begins (body → reference, z up).
    public var attitude: Quaternion
    /// How long it is held, seconds.
    public var holdSeconds: Double
    /// A creep through the hold: the body turns this far (degrees) about a horizontal axis,
    /// evenly over the first `creepSeconds` of the hold, then stays (a pose that moved).
    public var creepDegrees: Double
    public var creepSeconds: Double
    /// How long the turn to the next pose takes, seconds.
    public var turnSeconds: Double
    /// The tremor's amplitude during that turn, degrees.
    public var tremorDegrees: Double

    public init(
      attitude: Quaternion, holdSeconds: Double, creepDegrees: Double = 0,
      creepSeconds: Double = 0, turnSeconds: Double = 1.5, tremorDegrees: Double = 0.3
    ) {
      self.attitude = attitude
      self.holdSeconds = holdSeconds
      self.creepDegrees = creepDegrees
      self.creepSeconds = creepSeconds
      self.turnSeconds = turnSeconds
      self.tremorDegrees = tremorDegrees
    }

    /// The attitude at the end of the hold.
    public var endAttitude: Quaternion {
      guard creepDegrees != 0 else { return attitude }
      return (creepRotation(fraction: 1) * attitude).normalized
    }

    func creepRotation(fraction: Double) -> Quaternion {
      Quaternion(axis: Vector3(0.6, 0.8, 0), angle: creepDegrees * radiansPerDegree * fraction)
    }
  }

  public let poses: [Pose]
  let starts: [Double]
  /// Tremor: per axis, three frequencies (Hz) and phases.
  let tremorFrequencies: [Vector3]
  let tremorPhases: [Vector3]

  /// `seed` draws the tremor's frequencies and phases.
  public init(poses: [Pose], seed: UInt64) {
    precondition(!poses.isEmpty, "a hand motion needs a pose")
    self.poses = poses
    var starts: [Double] = []
    var t = 0.0
    for pose in poses {
      starts.append(t)
      t += pose.holdSeconds + pose.turnSeconds
    }
    self.starts = starts
    var random = SeededGenerator(seed: seed, stream: 310)
    var frequencies: [Vector3] = []
    var phases: [Vector3] = []
    for _ in 0..<3 {
      frequencies.append(
        Vector3(
          random.nextUniform(in: 4..<6), random.nextUniform(in: 6..<8.5),
          random.nextUniform(in: 8.5..<11)))
      phases.append(
        Vector3(
          random.nextUniform(in: 0..<(2 * .pi)), random.nextUniform(in: 0..<(2 * .pi)),
          random.nextUniform(in: 0..<(2 * .pi))))
    }
    tremorFrequencies = frequencies
    tremorPhases = phases
  }

  /// The motion ends after the last pose's hold.
  public var durationSeconds: Double? {
    starts[starts.count - 1] + poses[poses.count - 1].holdSeconds
  }

  /// The tremor's rotation vector at `seconds`, radians, at most `amplitudeRadians` per axis.
  func tremor(at seconds: Double, amplitudeRadians: Double) -> Vector3 {
    func axis(_ k: Int) -> Double {
      let f = tremorFrequencies[k]
      let p = tremorPhases[k]
      let sum: Double =
        sin(2 * Double.pi * f.x * seconds + p.x) + 0.6 * sin(2 * Double.pi * f.y * seconds + p.y)
        + 0.3 * sin(2 * Double.pi * f.z * seconds + p.z)
      return sum / 1.9 * amplitudeRadians
    }
    return Vector3(axis(0), axis(1), axis(2))
  }

  /// The attitude at `seconds`.
  public func attitude(at seconds: Double) -> Quaternion {
    var index = 0
    while index + 1 < starts.count && starts[index + 1] <= seconds { index += 1 }
    let pose = poses[index]
    let intoPose = seconds - starts[index]
    if intoPose <= pose.holdSeconds || index + 1 >= poses.count {
      guard pose.creepDegrees != 0, pose.creepSeconds > 0 else { return pose.attitude }
      let fraction = min(1, max(0, intoPose) / pose.creepSeconds)
      return (pose.creepRotation(fraction: fraction) * pose.attitude).normalized
    }
    let u = min(1, (intoPose - pose.holdSeconds) / pose.turnSeconds)
    // Smootherstep: the rate and its slope are 0 at both ends.
    let eased = u * u * u * (10 - 15 * u + 6 * u * u)
    let path = pose.endAttitude.slerp(to: poses[index + 1].attitude, fraction: eased)
    // Written out, not with Vector3's operators: Swift 6.0.3 could not type-check the
    // expression with `.pi` and `sin` in it (Debian 13's toolchain).
    let fade: Double = sin(Double.pi * u)
    let weight = fade * fade
    let t = tremor(at: seconds, amplitudeRadians: pose.tremorDegrees * radiansPerDegree)
    let shake = Quaternion(rotationVector: Vector3(t.x * weight, t.y * weight, t.z * weight))
    return (path * shake).normalized
  }

  public func truth(atSeconds seconds: Double) -> MotionTruth {
    rotationOnlyTruth(atSeconds: seconds, attitude: attitude(at:))
  }
}
