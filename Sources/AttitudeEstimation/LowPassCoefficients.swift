import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Coefficients of one low-pass section in direct form II transposed:
/// `y = b0·x + s1;  s1 ← b1·x − a1·y + s2;  s2 ← b2·x − a2·y`.
///
/// Computed once for a sample period and reused until the period estimate changes, so the
/// per-sample path has no trigonometry.
struct LowPassCoefficients: Hashable, Sendable {
  var b0: Double
  var b1: Double
  var b2: Double
  var a1: Double
  var a2: Double

  /// Second-order Butterworth whose time constant is `tau` in the sense that matters for a
  /// complementary filter: a constant gyro bias b leaves a steady tilt error b·τ, as with a
  /// first-order filter of time constant τ. That holds for a cutoff of `√2 / (2π τ)` Hz
  /// (the filter's ramp error is `√2/ω_c`), the choice VQF makes. Bilinear transform with
  /// pre-warping.
  static func butterworth(timeConstantSeconds tau: Double, periodSeconds dt: Double) -> Self {
    let cutoffHertz = 2.0.squareRoot() / (2 * .pi * tau)
    let c = tan(.pi * cutoffHertz * dt)
    let d = c * c + 2.0.squareRoot() * c + 1
    let b0 = c * c / d
    return LowPassCoefficients(
      b0: b0, b1: 2 * b0, b2: b0, a1: 2 * (c * c - 1) / d,
      a2: (1 - 2.0.squareRoot() * c + c * c) / d)
  }

  /// First-order exponential smoothing, `y ← y + α (x − y)` with `α = 1 − e^(−dt/τ)`: the plain
  /// complementary filter of seed 001 (there `α ≈ dt/τ`).
  static func firstOrder(timeConstantSeconds tau: Double, periodSeconds dt: Double) -> Self {
    let alpha = 1 - exp(-dt / tau)
    return LowPassCoefficients(b0: alpha, b1: 0, b2: 0, a1: alpha - 1, a2: 0)
  }

  /// The two states that make a constant input `x` pass unchanged (the steady state).
  @inline(__always)
  func steadyStates(_ x: Vector3) -> (Vector3, Vector3) {
    (x * (1 - b0), x * (b2 - a2))
  }

  /// The two states that make a constant input `x` pass unchanged (the steady state).
  @inline(__always)
  func steadyStates(_ x: Double) -> (Double, Double) {
    (x * (1 - b0), x * (b2 - a2))
  }
}
