#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Yaw, pitch and roll **for display only**, in radians.
///
/// **Order (stated, because it matters — seed 003).** The aerospace z-y′-x″ convention: starting
/// from the reference frame, turn by `yaw` ψ about z (up), then by `pitch` θ about the new y,
/// then by `roll` φ about the newest x. As a body → reference attitude:
/// `q = Rz(ψ) ⊗ Ry(θ) ⊗ Rx(φ)`. Ranges: yaw and roll `−π … π`, pitch `−π/2 … π/2`.
///
/// **Gimbal lock.** At pitch ±90° yaw and roll turn about the same axis and only their
/// difference (or sum) is defined; near it, tiny rotations swing both wildly (at 89.9° a 0.2°
/// nudge moved yaw by 34° in seed 003). Within `gimbalLockMargin` of ±90° the extraction sets
/// `isNearGimbalLock`, puts the whole rotation about the vertical into `yaw` and reports
/// `roll = 0`, so a display holds still instead of jittering. Compute with quaternions; show
/// these.
public struct EulerAngles: Hashable, Sendable, CustomStringConvertible {
  /// Rotation about the reference z (up) axis, radians, `−π … π`. Relative to the heading at
  /// start without a magnetometer.
  public var yaw: Double
  /// Rotation about the once-turned y axis, radians, `−π/2 … π/2`.
  public var pitch: Double
  /// Rotation about the body x axis, radians, `−π … π`; 0 when `isNearGimbalLock`.
  public var roll: Double
  /// Pitch is within the margin of ±90°, where yaw and roll are not separately defined.
  public var isNearGimbalLock: Bool

  /// The default margin from ±90° pitch inside which the angles are flagged: 5°. There the
  /// sensitivity of yaw and roll to a small rotation is 1/cos θ ≥ 11.5×, so sensor noise of
  /// 0.1° already moves them by more than a degree.
  public static let defaultGimbalLockMargin: Double = 5 * radiansPerDegree

  public init(yaw: Double, pitch: Double, roll: Double, isNearGimbalLock: Bool = false) {
    self.yaw = yaw
    self.pitch = pitch
    self.roll = roll
    self.isNearGimbalLock = isNearGimbalLock
  }

  /// Extracts the angles of a body → reference attitude.
  /// - Parameter gimbalLockMargin: radians from ±90° pitch inside which the result is flagged and
  ///   roll is folded into yaw (see the type's documentation).
  public init(_ q: Quaternion, gimbalLockMargin: Double = EulerAngles.defaultGimbalLockMargin) {
    let m = Matrix3(q.normalized)
    // R = Rz(ψ) Ry(θ) Rx(φ):  R31 = −sin θ, R21/R11 = tan ψ, R32/R33 = tan φ.
    let sinPitch = -m.row2.x
    let pitch = asin(max(-1, min(1, sinPitch)))
    if abs(pitch) >= .pi / 2 - gimbalLockMargin {
      // Near the lock only ψ − φ (θ = +90°) or ψ + φ (θ = −90°) is defined; with φ = 0 both
      // read ψ = atan2(−R12, R22).
      self.init(
        yaw: atan2(-m.row0.y, m.row1.y), pitch: pitch, roll: 0, isNearGimbalLock: true)
    } else {
      self.init(
        yaw: atan2(m.row1.x, m.row0.x), pitch: pitch, roll: atan2(m.row2.y, m.row2.z),
        isNearGimbalLock: false)
    }
  }

  public var description: String {
    let lock = isNearGimbalLock ? " (near gimbal lock)" : ""
    return
      "yaw \(yaw * degreesPerRadian)°, pitch \(pitch * degreesPerRadian)°, roll \(roll * degreesPerRadian)°\(lock)"
  }
}

extension Quaternion {
  /// The body → reference attitude with the given yaw, pitch and roll (z-y′-x″, radians; see
  /// `EulerAngles`): `Rz(yaw) ⊗ Ry(pitch) ⊗ Rx(roll)`.
  public init(yaw: Double, pitch: Double, roll: Double) {
    self =
      Quaternion(axis: .unitZ, angle: yaw) * Quaternion(axis: .unitY, angle: pitch)
      * Quaternion(axis: .unitX, angle: roll)
  }

  /// The attitude as yaw, pitch and roll for display (see `EulerAngles`).
  public func eulerAngles(gimbalLockMargin: Double = EulerAngles.defaultGimbalLockMargin)
    -> EulerAngles
  {
    EulerAngles(self, gimbalLockMargin: gimbalLockMargin)
  }
}
