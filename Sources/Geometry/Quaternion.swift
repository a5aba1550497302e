#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A rotation as a unit quaternion, scalar first: `(w, x, y, z)`.
///
/// **Convention (DESIGN.md, seed 003).** An attitude quaternion maps *body-frame* vectors into the
/// *reference* frame: `v_ref = q ⊗ v_body ⊗ q*` (`rotate(_:)`). The reference frame is right-handed
/// with z up, so gravity mapped with the attitude lands on `(0, 0, -1)` g. `q` and `-q` are the same
/// rotation; compare attitudes with `angle(to:)`, never with `==`.
@frozen
public struct Quaternion: Hashable, Sendable, CustomStringConvertible {
  public var w: Double
  public var x: Double
  public var y: Double
  public var z: Double

  @inlinable
  public init(w: Double, x: Double, y: Double, z: Double) {
    self.w = w
    self.x = x
    self.y = y
    self.z = z
  }

  /// The rotation by nothing.
  public static let identity = Quaternion(w: 1, x: 0, y: 0, z: 0)

  /// The rotation by `angle` radians about `axis` (right-hand rule). The axis need not be unit
  /// length; a zero axis gives the identity.
  @inlinable
  public init(axis: Vector3, angle: Double) {
    let n = axis.length
    guard n > 0 else {
      self = .identity
      return
    }
    let s = sin(angle / 2) / n
    self.init(w: cos(angle / 2), x: axis.x * s, y: axis.y * s, z: axis.z * s)
  }

  /// The rotation by the rotation vector `r` (axis × angle in radians): the exact exponential map,
  /// as used to propagate an attitude by a constant angular rate ω over dt with `r = ω·dt`.
  @inlinable
  public init(rotationVector r: Vector3) {
    let angle = r.length
    if angle < 1e-8 {
      // Second-order series; exact to double precision at this size.
      self.init(w: 1 - angle * angle / 8, x: r.x / 2, y: r.y / 2, z: r.z / 2)
    } else {
      let s = sin(angle / 2) / angle
      self.init(w: cos(angle / 2), x: r.x * s, y: r.y * s, z: r.z * s)
    }
  }

  /// The rotation by a small rotation vector `r` (radians, `squaredAngle` = |r|²), by the
  /// third-order series of the exponential map: w = 1 − θ²/8 + θ⁴/384, (x, y, z) = r·(1/2 − θ²/48).
  /// No trigonometry, so the same bits on every machine; against the exact
  /// `init(rotationVector:)` its relative angle error is below θ⁴/1920. What the estimator's
  /// per-sample step and the loop's lag compensation use.
  @inlinable @inline(__always)
  public init(smallRotationVector r: Vector3, squaredAngle t2: Double) {
    let h = 0.5 - t2 * (1.0 / 48)
    self.init(w: 1 - t2 * (1.0 / 8) + t2 * t2 * (1.0 / 384), x: r.x * h, y: r.y * h, z: r.z * h)
  }

  /// The vector part.
  @inlinable
  public var vector: Vector3 { Vector3(x, y, z) }

  /// The Hamilton product `a ⊗ b`: first rotate by `b`, then by `a` (for vectors mapped with `rotate`).
  @inlinable
  public static func * (a: Quaternion, b: Quaternion) -> Quaternion {
    Quaternion(
      w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
      x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
      y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
      z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w)
  }

  /// The conjugate, which for a unit quaternion is the inverse rotation.
  @inlinable
  public var conjugate: Quaternion { Quaternion(w: w, x: -x, y: -y, z: -z) }

  @inlinable
  public var norm: Double { (w * w + x * x + y * y + z * z).squareRoot() }

  /// The unit quaternion in the same direction; a zero quaternion gives the identity.
  @inlinable
  public var normalized: Quaternion {
    let n = norm
    guard n > 0, n.isFinite else { return .identity }
    return Quaternion(w: w / n, x: x / n, y: y / n, z: z / n)
  }

  /// The same rotation with `w ≥ 0`.
  @inlinable
  public var canonical: Quaternion { w < 0 ? Quaternion(w: -w, x: -x, y: -y, z: -z) : self }

  /// Whether every component is finite.
  @inlinable
  public var isFinite: Bool { w.isFinite && x.isFinite && y.isFinite && z.isFinite }

  /// `q ⊗ v ⊗ q*` for a unit quaternion: maps a body-frame vector into the reference frame when
  /// `self` is an attitude.
  @inlinable
  public func rotate(_ v: Vector3) -> Vector3 {
    // v + 2 w (u × v) + 2 u × (u × v), with u the vector part.
    let u = vector
    let t = 2 * u.cross(v)
    return v + w * t + u.cross(t)
  }

  /// `q* ⊗ v ⊗ q`: maps a reference-frame vector into the body frame when `self` is an attitude.
  @inlinable
  public func inverseRotate(_ v: Vector3) -> Vector3 { conjugate.rotate(v) }

  /// The angle of the rotation from `self` to `other`, in radians `0 … π`. Treats `q` and `-q` as
  /// one rotation; stable for small angles (`2·atan2(|v|, |w|)`, seed 003).
  @inlinable
  public func angle(to other: Quaternion) -> Double {
    let d = conjugate * other
    return 2 * atan2(d.vector.length, abs(d.w))
  }

  /// The rotation angle of `self`, in radians `0 … π`.
  @inlinable
  public var angle: Double { 2 * atan2(vector.length, abs(w)) }

  public var description: String { "(w: \(w), x: \(x), y: \(y), z: \(z))" }
}
