#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

extension Quaternion {
  /// The shortest-arc rotation that turns the direction of `from` onto the direction of `to`
  /// (neither need be unit length).
  ///
  /// Used to build a tilt-only attitude from one accelerometer reading: the rotation that takes
  /// the measured "up" onto the reference z axis turns about a horizontal axis only, so it has no
  /// heading component. When the two directions are opposite the axis is not unique; any axis
  /// perpendicular to `from` is used. A zero vector gives the identity.
  public init(from: Vector3, to: Vector3) {
    let a = from.normalized
    let b = to.normalized
    guard a != .zero, b != .zero else {
      self = .identity
      return
    }
    let d = a.dot(b)
    if d < -1 + 1e-12 {
      // Opposite directions: rotate by π about an axis perpendicular to `a`.
      let helper = abs(a.x) < 0.9 ? Vector3.unitX : Vector3.unitY
      let axis = a.cross(helper).normalized
      self.init(w: 0, x: axis.x, y: axis.y, z: axis.z)
      return
    }
    // q = (1 + a·b, a × b) normalised is the half-way rotation: exact and free of trigonometry.
    let c = a.cross(b)
    self = Quaternion(w: 1 + d, x: c.x, y: c.y, z: c.z).normalized
  }

  /// The rotation vector of `self` (axis × angle, radians, angle in `0 … π`): the inverse of
  /// `init(rotationVector:)`. Treats `q` and `-q` as one rotation.
  public var rotationVector: Vector3 {
    let q = canonical
    let s = q.vector.length
    guard s > 1e-12 else {
      // Small-angle limit: angle ≈ 2|v|, so r ≈ 2v.
      return q.vector * 2
    }
    let angle = 2 * atan2(s, q.w)
    return q.vector * (angle / s)
  }

  /// Spherical linear interpolation from `self` (fraction 0) to `other` (fraction 1) along the
  /// shortest arc, at constant angular rate.
  ///
  /// `other` is first flipped onto the same hemisphere as `self` (q and −q are one rotation), so
  /// the interpolation never takes the long way round — halfway between yaw 170° and yaw −170°
  /// is yaw 180°, not 0° (seed 003). Fractions outside `0 … 1` extrapolate along the same arc.
  /// The result is normalised.
  public func slerp(to other: Quaternion, fraction t: Double) -> Quaternion {
    var b = other
    var cosine = w * b.w + x * b.x + y * b.y + z * b.z
    if cosine < 0 {
      b = Quaternion(w: -b.w, x: -b.x, y: -b.y, z: -b.z)
      cosine = -cosine
    }
    let ka: Double
    let kb: Double
    if cosine > 1 - 1e-9 {
      // Nearly the same rotation: linear interpolation is exact to double precision here.
      ka = 1 - t
      kb = t
    } else {
      let theta = acos(min(cosine, 1))
      let s = sin(theta)
      ka = sin((1 - t) * theta) / s
      kb = sin(t * theta) / s
    }
    return Quaternion(
      w: ka * w + kb * b.w, x: ka * x + kb * b.x, y: ka * y + kb * b.y, z: ka * z + kb * b.z
    ).normalized
  }

  /// The same rotation as `self`, on the hemisphere of `reference` (their dot product ≥ 0).
  ///
  /// Makes consecutive outputs of a stream comparable component by component (no sign flips
  /// between samples), which plots and averaging need.
  @inlinable
  public func sameHemisphere(as reference: Quaternion) -> Quaternion {
    let d = w * reference.w + x * reference.x + y * reference.y + z * reference.z
    return d < 0 ? Quaternion(w: -w, x: -x, y: -y, z: -z) : self
  }
}

// MARK: - Attitude helpers (body → reference attitudes, z up)

extension Quaternion {
  /// Gravity as the body sees it, in units of g: the reference frame's `(0, 0, -1)` mapped into
  /// the body frame. For a body at rest the accelerometer reads the opposite, `-gravityInBody`·g.
  ///
  /// Only the third row of the rotation matrix is needed, so this is cheaper than
  /// `inverseRotate((0, 0, -1))`.
  @inlinable
  public var gravityInBody: Vector3 {
    Vector3(2 * (w * y - x * z), -2 * (y * z + w * x), -1 + 2 * (x * x + y * y))
  }

  /// The attitude relative to `reference`: the rotation from the `reference` attitude to `self`,
  /// expressed in the body's axes at the reference moment (`reference* ⊗ self`).
  ///
  /// This is a *tare*: save the attitude at some moment ("hold it how you like"), and every later
  /// attitude `q.relative(to: saved)` is the change since then. A 25° turn about the body's own y
  /// axis after the tare comes back as exactly that rotation (seed 003).
  @inlinable
  public func relative(to reference: Quaternion) -> Quaternion {
    reference.conjugate * self
  }

  /// The heading of the attitude: the rotation angle about the reference z axis, radians in
  /// `−π … π`, counter-clockwise seen from above (the right-hand rule about z, up).
  ///
  /// It is the angle of the *swing-twist* decomposition's twist about z, so it is defined for
  /// every attitude except those tilted exactly upside down (where it returns 0). Without a
  /// magnetometer, heading is relative to the heading at start and drifts slowly.
  @inlinable
  public var heading: Double {
    // Twist about z: (w, 0, 0, z) normalised.
    guard w != 0 || z != 0 else { return 0 }
    let c = canonical
    return 2 * atan2(c.z, c.w)
  }

  /// The same attitude with its heading removed (a rotation about the reference vertical by
  /// −`heading` applied on the reference side): tilt is kept, heading becomes 0. Useful to tare
  /// only the heading (e.g. "the way the device points now is forward").
  @inlinable
  public var removingHeading: Quaternion {
    let c = canonical
    let n = (c.w * c.w + c.z * c.z).squareRoot()
    guard n > 0 else { return self }
    // twist* ⊗ q, with twist = (w, 0, 0, z) / n.
    return Quaternion(w: c.w / n, x: 0, y: 0, z: -c.z / n) * c
  }

  /// Where a body-frame axis points in the reference frame's horizontal plane: the bearing of its
  /// horizontal part, measured **clockwise** from the reference x axis seen from above (like a
  /// compass, where x is the heading at start), radians in `0 ..< 2π`.
  ///
  /// Returns `nil` when the axis is too close to vertical for its horizontal direction to mean
  /// anything: when the length of its horizontal part (for a unit axis, the cosine of its
  /// elevation) is below `minimumHorizontal` — 0.2 by default, i.e. more than about 78° from
  /// horizontal (seed 003). Use the body's top edge when it lies flat and its camera axis (−z)
  /// when it stands upright.
  public func horizontalBearing(of bodyAxis: Vector3, minimumHorizontal: Double = 0.2) -> Double? {
    let axis = bodyAxis.normalized
    guard axis != .zero else { return nil }
    let r = rotate(axis)
    let horizontal = (r.x * r.x + r.y * r.y).squareRoot()
    guard horizontal >= minimumHorizontal else { return nil }
    let bearing = atan2(-r.y, r.x)
    return bearing < 0 ? bearing + 2 * .pi : bearing
  }
}

extension Quaternion {
  /// The unit quaternion of a proper rotation matrix (`Matrix3(q)` maps back to it, up to sign),
  /// by Shepperd's method: from the largest of the four diagonal combinations, so no division
  /// by a small number. `w ≥ 0`.
  public init(rotationMatrix m: Matrix3) {
    let (a, b, c) = (m.row0, m.row1, m.row2)
    let trace = a.x + b.y + c.z
    var q: Quaternion
    if trace >= a.x && trace >= b.y && trace >= c.z {
      let s = 2 * (1 + trace).squareRoot()
      q = Quaternion(w: s / 4, x: (c.y - b.z) / s, y: (a.z - c.x) / s, z: (b.x - a.y) / s)
    } else if a.x >= b.y && a.x >= c.z {
      let s = 2 * (1 + a.x - b.y - c.z).squareRoot()
      q = Quaternion(w: (c.y - b.z) / s, x: s / 4, y: (a.y + b.x) / s, z: (a.z + c.x) / s)
    } else if b.y >= c.z {
      let s = 2 * (1 + b.y - a.x - c.z).squareRoot()
      q = Quaternion(w: (a.z - c.x) / s, x: (a.y + b.x) / s, y: s / 4, z: (b.z + c.y) / s)
    } else {
      let s = 2 * (1 + c.z - a.x - b.y).squareRoot()
      q = Quaternion(w: (b.x - a.y) / s, x: (a.z + c.x) / s, y: (b.z + c.y) / s, z: s / 4)
    }
    if q.w < 0 { q = Quaternion(w: -q.w, x: -q.x, y: -q.y, z: -q.z) }
    self = q.normalized
  }
}
