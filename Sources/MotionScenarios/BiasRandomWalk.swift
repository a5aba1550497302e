import Geometry
import Randomness

/// A seeded three-axis random walk that can be evaluated at any instant: the wandering part of a
/// gyroscope's bias (seed 000: "a gyroscope bias that wanders turns a heading into a guess within
/// minutes"), for a simulated chip to add to its zero-rate output and for a test to know exactly.
///
/// Each axis is a Brownian motion `W(t)` with `Var W(t) = K²·t` (`K` is the random-walk
/// coefficient, rad/s/√s, the +½ slope of an Allan deviation plot), sampled on knots
/// `knotSeconds` apart and joined by straight lines. The knots are built by midpoint
/// displacement (Lévy's construction of Brownian motion): over `2^levels` knots the end value is
/// drawn first, then every midpoint from its two ends plus a gaussian of the bridge's variance
/// (a quarter of the span). Each midpoint's deviate comes from its own seeded generator (keyed
/// by the seed, the axis and the knot index), so a value costs `levels` draws, needs no memory
/// and no history, and `value(atSeconds:)` is a pure function: a simulated chip may ask for any
/// instant in any order (the `MotionSource` contract) and a HIL run compares the estimate with
/// the very bias the chip used. Beyond the last knot (2²⁴ knots: 194 days at 1 s) the walk holds.
///
/// Deterministic on every platform: the deviates come from `SeededGenerator`, which uses only
/// IEEE-exact arithmetic.
public struct BiasRandomWalk: Hashable, Sendable {
  /// K, rad/s/√s: after `t` seconds each axis has wandered by `K·√t` (one standard deviation).
  public var randomWalkRadiansPerSecondPerRootSecond: Double
  /// The spacing of the knots, seconds (linear in between: the walk is smooth below it).
  public var knotSeconds: Double
  /// The seed of the whole path.
  public var seed: UInt64

  /// Knots are built over `2^levels` intervals.
  static let levels = 24

  /// A walk of coefficient `k` (rad/s/√s), knots every `knotSeconds`, drawn from `seed`.
  public init(randomWalk k: Double, knotSeconds: Double = 1, seed: UInt64) {
    randomWalkRadiansPerSecondPerRootSecond = max(0, k)
    self.knotSeconds = knotSeconds > 0 ? knotSeconds : 1
    self.seed = seed
  }

  /// The walk's value at `seconds` (0 at time 0; times before 0 see 0), rad/s.
  public func value(atSeconds seconds: Double) -> Vector3 {
    guard let (knot, fraction) = knotPosition(atSeconds: seconds) else { return .zero }
    return Self.interpolate(value(atKnot: knot), value(atKnot: knot + 1), fraction)
  }

  /// The knot at or before `seconds` and how far towards the next one `seconds` lies (0 ..< 1),
  /// or `nil` where the walk is 0 (no wander, or `seconds ≤ 0`). With `interpolate`, lets a
  /// caller that steps through time keep the two knots' values and get exactly
  /// `value(atSeconds:)`.
  public func knotPosition(atSeconds seconds: Double) -> (knot: Int64, fraction: Double)? {
    guard randomWalkRadiansPerSecondPerRootSecond > 0, seconds > 0 else { return nil }
    let last = Double(Int64(1) << Self.levels)
    let position = min(seconds / knotSeconds, last)
    let whole = min(position.rounded(.down), last - 1)
    return (Int64(whole), position - whole)
  }

  /// The value `fraction` of the way from knot value `a` to knot value `b`.
  @inlinable
  public static func interpolate(_ a: Vector3, _ b: Vector3, _ fraction: Double) -> Vector3 {
    a + (b - a) * fraction
  }

  /// The value at knot `index` (time `index · knotSeconds`), rad/s.
  public func value(atKnot index: Int64) -> Vector3 {
    let scale = randomWalkRadiansPerSecondPerRootSecond * knotSeconds.squareRoot()
    return Vector3(
      standardPath(axis: 0, index), standardPath(axis: 1, index), standardPath(axis: 2, index))
      * scale
  }

  /// A standard Brownian path in knot units (`Var W(n) = n`) at knot `index`, by descending the
  /// midpoint-displacement tree to it.
  func standardPath(axis: UInt64, _ index: Int64) -> Double {
    let span = Int64(1) << Self.levels
    let target = min(max(index, 0), span)
    if target == 0 { return 0 }
    var low: Int64 = 0
    var high = span
    var lowValue = 0.0
    var highValue = deviate(axis: axis, node: span) * Double(span).squareRoot()
    while true {
      if target == high { return highValue }
      let middle = low + (high - low) / 2
      let middleValue =
        (lowValue + highValue) / 2
        + deviate(axis: axis, node: middle) * Double(high - low).squareRoot() / 2
      if target == middle { return middleValue }
      if target < middle {
        high = middle
        highValue = middleValue
      } else {
        low = middle
        lowValue = middleValue
      }
    }
  }

  /// The standard normal deviate of one node of the tree (every dyadic midpoint is one node, and
  /// the end is node `2^levels`).
  private func deviate(axis: UInt64, node: Int64) -> Double {
    var generator = SeededGenerator(
      seed: seed ^ (UInt64(node) &* 0x9E37_79B9_7F4A_7C15), stream: 0xB1A5 &+ axis)
    return generator.gaussian()
  }
}
