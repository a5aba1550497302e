import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A board turned through the six faces of a six-position accelerometer calibration: each pose
/// held still, then a smooth turn to the next. A pose may be deliberately imperfect (tilted), so a
/// calibration procedure's rejection of sloppy poses can be tested end to end on the simulated
/// board.
public struct SixPoseMotion: MotionSource, Sendable {
  /// One held pose: which sensor axis points up (`.unitX`, `-.unitZ`, …), how far it is tilted
  /// off that axis (degrees, about a horizontal axis), and for how long it is held.
  public struct Pose: Sendable, Hashable {
    public var up: Vector3
    public var tiltDegrees: Double
    public var holdSeconds: Double

    public init(up: Vector3, tiltDegrees: Double = 0, holdSeconds: Double = 8) {
      self.up = up
      self.tiltDegrees = tiltDegrees
      self.holdSeconds = holdSeconds
    }
  }

  public let poses: [Pose]
  public let moveSeconds: Double
  let attitudes: [Quaternion]
  let starts: [Double]

  /// The default order the calibration asks for: +Z, −Z, +X, −X, +Y, −Y, each held 8 s and
  /// within a couple of degrees of level (a hand-placed board on a table).
  public static let standardPoses: [Pose] = [
    Pose(up: .unitZ, tiltDegrees: 1.2), Pose(up: -.unitZ, tiltDegrees: 0.8),
    Pose(up: .unitX, tiltDegrees: 1.5), Pose(up: -.unitX, tiltDegrees: 0.6),
    Pose(up: .unitY, tiltDegrees: 1.0), Pose(up: -.unitY, tiltDegrees: 1.7),
  ]

  public init(poses: [Pose] = SixPoseMotion.standardPoses, moveSeconds: Double = 3) {
    self.poses = poses
    self.moveSeconds = moveSeconds
    var attitudes: [Quaternion] = []
    var starts: [Double] = []
    var t = 0.0
    for (index, pose) in poses.enumerated() {
      // The rotation that takes the chosen sensor axis to the reference's up, then a tilt about
      // a horizontal axis that differs from pose to pose.
      let align = Quaternion(from: pose.up.normalized, to: .unitZ)
      let axis = Vector3(cos(Double(index) * 1.3), sin(Double(index) * 1.3), 0)
      let tilt = Quaternion(axis: axis, angle: pose.tiltDegrees * radiansPerDegree)
      attitudes.append((tilt * align).normalized)
      starts.append(t)
      t += pose.holdSeconds + moveSeconds
    }
    self.attitudes = attitudes
    self.starts = starts
  }

  public var durationSeconds: Double? { starts.last.map { $0 + (poses.last?.holdSeconds ?? 0) } }

  func attitude(at seconds: Double) -> Quaternion {
    var index = 0
    while index + 1 < starts.count && starts[index + 1] <= seconds { index += 1 }
    let held = starts[index] + poses[index].holdSeconds
    guard seconds > held, index + 1 < attitudes.count else { return attitudes[index] }
    let u = min(1, (seconds - held) / moveSeconds)
    let eased = u * u * (3 - 2 * u)
    return attitudes[index].slerp(to: attitudes[index + 1], fraction: eased)
  }

  public func truth(atSeconds seconds: Double) -> MotionTruth {
    rotationOnlyTruth(atSeconds: seconds, attitude: attitude(at:))
  }
}
