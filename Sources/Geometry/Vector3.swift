#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A vector in three dimensions, in whatever unit its name gives (rad/s, m/s², unitless).
///
/// A plain value type with stored `Double` components: no heap, no protocol witness tables on
/// the hot path, the same results on every platform.
@frozen
public struct Vector3: Hashable, Sendable, CustomStringConvertible {
  public var x: Double
  public var y: Double
  public var z: Double

  @inlinable
  public init(_ x: Double, _ y: Double, _ z: Double) {
    self.x = x
    self.y = y
    self.z = z
  }

  @inlinable
  public init(x: Double, y: Double, z: Double) {
    self.init(x, y, z)
  }

  public static let zero = Vector3(0, 0, 0)
  public static let unitX = Vector3(1, 0, 0)
  public static let unitY = Vector3(0, 1, 0)
  public static let unitZ = Vector3(0, 0, 1)

  @inlinable public static func + (a: Vector3, b: Vector3) -> Vector3 {
    Vector3(a.x + b.x, a.y + b.y, a.z + b.z)
  }
  @inlinable public static func - (a: Vector3, b: Vector3) -> Vector3 {
    Vector3(a.x - b.x, a.y - b.y, a.z - b.z)
  }
  @inlinable public static prefix func - (a: Vector3) -> Vector3 { Vector3(-a.x, -a.y, -a.z) }
  @inlinable public static func * (a: Vector3, s: Double) -> Vector3 {
    Vector3(a.x * s, a.y * s, a.z * s)
  }
  @inlinable public static func * (s: Double, a: Vector3) -> Vector3 {
    Vector3(a.x * s, a.y * s, a.z * s)
  }
  @inlinable public static func / (a: Vector3, s: Double) -> Vector3 {
    Vector3(a.x / s, a.y / s, a.z / s)
  }
  @inlinable public static func += (a: inout Vector3, b: Vector3) { a = a + b }
  @inlinable public static func -= (a: inout Vector3, b: Vector3) { a = a - b }
  @inlinable public static func *= (a: inout Vector3, s: Double) { a = a * s }

  /// Component-wise product.
  @inlinable
  public func scaled(by other: Vector3) -> Vector3 {
    Vector3(x * other.x, y * other.y, z * other.z)
  }

  @inlinable
  public func dot(_ other: Vector3) -> Double { x * other.x + y * other.y + z * other.z }

  @inlinable
  public func cross(_ other: Vector3) -> Vector3 {
    Vector3(y * other.z - z * other.y, z * other.x - x * other.z, x * other.y - y * other.x)
  }

  @inlinable
  public var squaredLength: Double { x * x + y * y + z * z }

  @inlinable
  public var length: Double { squaredLength.squareRoot() }

  /// The unit vector in the same direction; `.zero` stays `.zero`.
  @inlinable
  public var normalized: Vector3 {
    let n = length
    return n > 0 ? self / n : .zero
  }

  /// Whether every component is finite.
  @inlinable
  public var isFinite: Bool { x.isFinite && y.isFinite && z.isFinite }

  /// The angle between two directions, in radians, `0 … π`; stable for small and large angles.
  @inlinable
  public func angle(to other: Vector3) -> Double {
    let c = cross(other).length
    let d = dot(other)
    return atan2(c, d)
  }

  public var description: String { "(\(x), \(y), \(z))" }
}
