/// A 3 × 3 matrix, row-major: `rows.0` is the first row.
///
/// Used for fixed linear maps: a board's mounting rotation (sensor axes → body axes), an
/// accelerometer's scale-and-misalignment correction, a simulated sensor's cross-axis error.
@frozen
public struct Matrix3: Hashable, Sendable, CustomStringConvertible {
  public var row0: Vector3
  public var row1: Vector3
  public var row2: Vector3

  @inlinable
  public init(rows row0: Vector3, _ row1: Vector3, _ row2: Vector3) {
    self.row0 = row0
    self.row1 = row1
    self.row2 = row2
  }

  public static let identity = Matrix3(rows: .unitX, .unitY, .unitZ)

  /// A diagonal matrix.
  @inlinable
  public init(diagonal d: Vector3) {
    self.init(rows: Vector3(d.x, 0, 0), Vector3(0, d.y, 0), Vector3(0, 0, d.z))
  }

  /// The rotation matrix of a unit quaternion: `Matrix3(q) * v == q.rotate(v)`.
  @inlinable
  public init(_ q: Quaternion) {
    let (w, x, y, z) = (q.w, q.x, q.y, q.z)
    self.init(
      rows: Vector3(1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
      Vector3(2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
      Vector3(2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)))
  }

  @inlinable
  public var column0: Vector3 { Vector3(row0.x, row1.x, row2.x) }
  @inlinable
  public var column1: Vector3 { Vector3(row0.y, row1.y, row2.y) }
  @inlinable
  public var column2: Vector3 { Vector3(row0.z, row1.z, row2.z) }

  @inlinable
  public var transposed: Matrix3 { Matrix3(rows: column0, column1, column2) }

  @inlinable
  public static func * (m: Matrix3, v: Vector3) -> Vector3 {
    Vector3(m.row0.dot(v), m.row1.dot(v), m.row2.dot(v))
  }

  @inlinable
  public static func * (a: Matrix3, b: Matrix3) -> Matrix3 {
    let t = b.transposed
    return Matrix3(
      rows: Vector3(a.row0.dot(t.row0), a.row0.dot(t.row1), a.row0.dot(t.row2)),
      Vector3(a.row1.dot(t.row0), a.row1.dot(t.row1), a.row1.dot(t.row2)),
      Vector3(a.row2.dot(t.row0), a.row2.dot(t.row1), a.row2.dot(t.row2)))
  }

  @inlinable
  public static func + (a: Matrix3, b: Matrix3) -> Matrix3 {
    Matrix3(rows: a.row0 + b.row0, a.row1 + b.row1, a.row2 + b.row2)
  }

  @inlinable
  public static func - (a: Matrix3, b: Matrix3) -> Matrix3 {
    Matrix3(rows: a.row0 - b.row0, a.row1 - b.row1, a.row2 - b.row2)
  }

  @inlinable
  public static func * (m: Matrix3, s: Double) -> Matrix3 {
    Matrix3(rows: m.row0 * s, m.row1 * s, m.row2 * s)
  }

  /// The outer product a bᵀ.
  @inlinable
  public static func outer(_ a: Vector3, _ b: Vector3) -> Matrix3 {
    Matrix3(rows: b * a.x, b * a.y, b * a.z)
  }

  /// The diagonal.
  @inlinable
  public var diagonal: Vector3 { Vector3(row0.x, row1.y, row2.z) }

  /// (M + Mᵀ) / 2: removes the asymmetry rounding leaves in a matrix that should be symmetric.
  @inlinable
  public var symmetrized: Matrix3 {
    let xy = 0.5 * (row0.y + row1.x)
    let xz = 0.5 * (row0.z + row2.x)
    let yz = 0.5 * (row1.z + row2.y)
    return Matrix3(rows: Vector3(row0.x, xy, xz), Vector3(xy, row1.y, yz), Vector3(xz, yz, row2.z))
  }

  @inlinable
  public var determinant: Double { row0.dot(row1.cross(row2)) }

  /// The inverse, or `nil` when the matrix is singular (|det| < 1e-12).
  @inlinable
  public var inverse: Matrix3? {
    let det = determinant
    guard abs(det) > 1e-12, det.isFinite else { return nil }
    // Columns of the inverse are the cross products of rows, divided by the determinant.
    let c0 = row1.cross(row2) / det
    let c1 = row2.cross(row0) / det
    let c2 = row0.cross(row1) / det
    return Matrix3(rows: c0, c1, c2).transposed
  }

  /// Whether the matrix is a proper rotation (orthonormal, determinant +1) within `tolerance`.
  public func isRotation(tolerance: Double = 1e-6) -> Bool {
    let p = self * transposed
    let e = [
      p.row0.x - 1, p.row0.y, p.row0.z, p.row1.x, p.row1.y - 1, p.row1.z, p.row2.x, p.row2.y,
      p.row2.z - 1,
    ]
    return e.allSatisfy { abs($0) <= tolerance } && abs(determinant - 1) <= tolerance
  }

  public var description: String { "[\(row0), \(row1), \(row2)]" }
}
