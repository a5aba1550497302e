import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Conversions from Plumb's frames to the ones MAVLink defines (DESIGN.md "Frames and
/// conventions"; MAVLink "Coordinate Frames").
///
/// Plumb's reference frame is z up with x = the start heading, so y points left of it; its
/// body frame is x forward, y left, z up (FLU). MAVLink uses earth NED (x = north, here: the
/// start heading; y east = right; z down) and body FRD (x forward, y right, z down). Both
/// changes are the same fixed rotation C = Rx(π): `(x, y, z) → (x, −y, −z)`.
///
/// For an attitude R (body → reference): `v_ned = C·v_ref = C·R·v_body = (C·R·Cᵀ)·v_frd`, so
/// R_mav = C·R·Cᵀ, and with C's quaternion c = (0, 1, 0, 0): `q_mav = c ⊗ q ⊗ c*`. Conjugating by
/// a half turn about x leaves w and x and negates y and z: `q_mav = (w, x, −y, −z)`. The map is
/// its own inverse.
///
/// Negation is written `0 − v`, so a zero stays +0.0 and never goes on the wire as −0.0 (which
/// would also stop MAVLink's trailing-zero truncation).
public enum MAVLinkFrames {
  /// The attitude in MAVLink's convention (body FRD → earth NED) from a Plumb attitude.
  @inlinable
  public static func nedAttitude(fromPlumb q: Quaternion) -> Quaternion {
    Quaternion(w: q.w, x: q.x, y: 0 - q.y, z: 0 - q.z)
  }

  /// The Plumb attitude from a MAVLink one (the same map).
  @inlinable
  public static func plumbAttitude(fromNED q: Quaternion) -> Quaternion {
    Quaternion(w: q.w, x: q.x, y: 0 - q.y, z: 0 - q.z)
  }

  /// A body-frame (FLU) vector in FRD, or a reference (z-up) vector in NED.
  @inlinable
  public static func flipYZ(_ v: Vector3) -> Vector3 { Vector3(v.x, 0 - v.y, 0 - v.z) }
}

/// Roll, pitch and yaw for display only (seed 003: Euler angles lock near ±90° pitch; compute
/// with the quaternion).
///
/// **Convention: aerospace ZYX in MAVLink's frames** (earth NED, body FRD), the angles a pilot,
/// QGroundControl and pymavlink show: yaw ψ about z (down), then pitch θ about the new y (right),
/// then roll φ about the new x (forward): R = Rz(ψ)·Ry(θ)·Rx(φ). Signs: **roll positive = right
/// side down, pitch positive = nose up, yaw positive = turning clockwise seen from above**.
/// Yaw is relative to the start heading (no magnetometer). Ranges: roll and yaw (−π, π], pitch
/// [−π/2, π/2].
///
/// Not to be confused with `Geometry.EulerAngles`: the same z-y′-x″ order in Plumb's own z-up
/// frames (yaw positive anticlockwise), for code that computes in Plumb's conventions. The wire
/// formats and the monitor show these NED angles because that is what people read.
public struct NEDEulerAngles: Hashable, Sendable {
  public var rollRadians: Double
  public var pitchRadians: Double
  public var yawRadians: Double

  /// Pitch closer to ±90° than this (5°) raises `.gimbalLockNear`: there 1° of rotation can
  /// move roll and yaw by more than 11° (1 / cos 85°), and at 90° they are not defined.
  public static let gimbalLockMarginRadians: Double = 5 * radiansPerDegree

  @inlinable
  public init(rollRadians: Double, pitchRadians: Double, yawRadians: Double) {
    self.rollRadians = rollRadians
    self.pitchRadians = pitchRadians
    self.yawRadians = yawRadians
  }

  /// The angles of a Plumb attitude (body → reference), converted to NED/FRD first.
  public init(plumbAttitude q: Quaternion) {
    self.init(nedAttitude: MAVLinkFrames.nedAttitude(fromPlumb: q))
  }

  /// The angles of a MAVLink attitude (body FRD → earth NED).
  ///
  /// At pitch ±90° roll and yaw are not separately defined — only yaw − roll at +90° and
  /// yaw + roll at −90° are — and the general formulas take atan2 of rounding noise. Within
  /// 1e-12 of the lock (sin θ, 1.4 × 10⁻⁶ rad of pitch) the angles are roll 0 and that
  /// combination in yaw, 2·atan2(∓x, w): the same rotation. (Found by fuzzing: roll 3°,
  /// pitch 90°, yaw 90° came back as 0°, 90°, 90°, a rotation 3° away.)
  public init(nedAttitude q: Quaternion) {
    let (w, x, y, z) = (q.w, q.x, q.y, q.z)
    let sinPitch = max(-1, min(1, 2 * (w * y - z * x)))
    pitchRadians = asin(sinPitch)
    if abs(sinPitch) > 1 - 1e-12 {
      rollRadians = 0
      let yaw = 2 * atan2(sinPitch > 0 ? -x : x, w)
      yawRadians = yaw > .pi ? yaw - 2 * .pi : yaw <= -.pi ? yaw + 2 * .pi : yaw
    } else {
      rollRadians = atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y))
      yawRadians = atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
    }
  }

  /// Whether pitch is within `gimbalLockMarginRadians` of ±90°.
  @inlinable
  public var isNearGimbalLock: Bool {
    abs(pitchRadians) > .pi / 2 - NEDEulerAngles.gimbalLockMarginRadians
  }

  /// The MAVLink (NED/FRD) attitude these angles describe: Rz(ψ) ⊗ Ry(θ) ⊗ Rx(φ).
  public var nedAttitude: Quaternion {
    Quaternion(axis: .unitZ, angle: yawRadians) * Quaternion(axis: .unitY, angle: pitchRadians)
      * Quaternion(axis: .unitX, angle: rollRadians)
  }

  /// The Plumb attitude these angles describe.
  public var plumbAttitude: Quaternion { MAVLinkFrames.plumbAttitude(fromNED: nedAttitude) }
}
