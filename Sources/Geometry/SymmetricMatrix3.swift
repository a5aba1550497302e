/// A symmetric 3 × 3 matrix — a covariance — stored as its six distinct entries, so an update
/// computes each once and the matrix stays exactly symmetric.
public struct SymmetricMatrix3: Hashable, Sendable {
  public var xx: Double
  public var yy: Double
  public var zz: Double
  public var xy: Double
  public var xz: Double
  public var yz: Double

  @inlinable
  public init(xx: Double, yy: Double, zz: Double, xy: Double, xz: Double, yz: Double) {
    self.xx = xx
    self.yy = yy
    self.zz = zz
    self.xy = xy
    self.xz = xz
    self.yz = yz
  }

  /// diag(d).
  @inlinable
  public init(diagonal d: Vector3) { self.init(xx: d.x, yy: d.y, zz: d.z, xy: 0, xz: 0, yz: 0) }

  /// (M + Mᵀ) / 2: the symmetric part of `m` (rounding leaves a computed covariance slightly
  /// asymmetric).
  @inlinable
  public init(symmetrizing m: Matrix3) {
    self.init(
      xx: m.row0.x, yy: m.row1.y, zz: m.row2.z, xy: 0.5 * (m.row0.y + m.row1.x),
      xz: 0.5 * (m.row0.z + m.row2.x), yz: 0.5 * (m.row1.z + m.row2.y))
  }

  public static let zero = SymmetricMatrix3(diagonal: .zero)

  /// The full matrix.
  @inlinable
  public var matrix: Matrix3 {
    Matrix3(rows: Vector3(xx, xy, xz), Vector3(xy, yy, yz), Vector3(xz, yz, zz))
  }

  @inlinable
  public var diagonal: Vector3 { Vector3(xx, yy, zz) }

  @inlinable
  public var trace: Double { xx + yy + zz }

  @inlinable
  public static func * (m: SymmetricMatrix3, v: Vector3) -> Vector3 {
    Vector3(
      m.xx * v.x + m.xy * v.y + m.xz * v.z, m.xy * v.x + m.yy * v.y + m.yz * v.z,
      m.xz * v.x + m.yz * v.y + m.zz * v.z)
  }

  /// vᵀ M v.
  @inlinable
  public func quadraticForm(_ v: Vector3) -> Double { v.dot(self * v) }

  @inlinable
  public static func + (a: SymmetricMatrix3, b: SymmetricMatrix3) -> SymmetricMatrix3 {
    SymmetricMatrix3(
      xx: a.xx + b.xx, yy: a.yy + b.yy, zz: a.zz + b.zz, xy: a.xy + b.xy, xz: a.xz + b.xz,
      yz: a.yz + b.yz)
  }

  @inlinable
  public static func * (m: SymmetricMatrix3, s: Double) -> SymmetricMatrix3 {
    SymmetricMatrix3(
      xx: m.xx * s, yy: m.yy * s, zz: m.zz * s, xy: m.xy * s, xz: m.xz * s, yz: m.yz * s)
  }

  /// M − s·v vᵀ: a rank-one downdate (a Kalman update's P − K·(P h)ᵀ with K ∝ P h).
  @inlinable
  public func subtractingOuter(_ v: Vector3, scaledBy s: Double) -> SymmetricMatrix3 {
    let w = v * s
    return SymmetricMatrix3(
      xx: xx - w.x * v.x, yy: yy - w.y * v.y, zz: zz - w.z * v.z, xy: xy - w.x * v.y,
      xz: xz - w.x * v.z, yz: yz - w.y * v.z)
  }

  /// M + diag(d).
  @inlinable
  public func addingDiagonal(_ d: Vector3) -> SymmetricMatrix3 {
    SymmetricMatrix3(xx: xx + d.x, yy: yy + d.y, zz: zz + d.z, xy: xy, xz: xz, yz: yz)
  }
}
