/// A small, fast, seeded pseudo-random generator: xoshiro256** (Blackman and Vigna, 2018) whose
/// 256-bit state is filled from the seed by SplitMix64 (Steele, Lea and Flood, 2014), as the
/// xoshiro authors recommend.
///
/// Plumb's simulations (the MPU-6050's noise, motion scenarios, fault plans, soak tests) share
/// this one implementation so that **the same seed gives the same sequence on every platform**:
/// it uses only integer arithmetic and correctly rounded IEEE-754 operations (`+ − × ÷` and
/// `squareRoot()`), never Foundation or the C math library, whose `log`, `sin` and `cos` may
/// differ in the last bit between platforms and would make a Linux run and a macOS run of the
/// same scenario diverge. The natural logarithm the normal deviates need is computed here for
/// the same reason.
///
/// It conforms to `RandomNumberGenerator`, but prefer its own `nextUniform()`, `gaussian()` and
/// `occurs(withProbability:)`: the standard library's `Double.random(in:using:)` and friends
/// may change how they consume the generator between Swift releases.
///
/// It is a value type: copying it forks the sequence (both copies produce the same numbers).
/// Not cryptographic.
public struct SeededGenerator: RandomNumberGenerator, Hashable, Sendable {
  @usableFromInline var s0: UInt64
  @usableFromInline var s1: UInt64
  @usableFromInline var s2: UInt64
  @usableFromInline var s3: UInt64
  /// The second deviate of the last polar-method pair, kept for the next `gaussian()` call.
  private var spareGaussian: Double?

  /// A generator whose sequence is fixed by `seed`.
  ///
  /// `stream` selects one of many independent sequences for the same seed: a simulation takes
  /// one user seed and gives each consumer (accelerometer noise, gyroscope noise, edge jitter…)
  /// its own stream, so that adding draws to one consumer does not shift the others. Stream 0
  /// is the plain seeded sequence.
  public init(seed: UInt64, stream: UInt64 = 0) {
    // Distinct streams start SplitMix64 from distinct points of its 2^64 cycle.
    var mixer = SplitMix64(state: seed ^ (stream &* 0xD1B5_4A32_D192_ED03))
    s0 = mixer.next()
    s1 = mixer.next()
    s2 = mixer.next()
    s3 = mixer.next()
    // SplitMix64 is a bijection of its counter, so four consecutive outputs are never all
    // zero (the one state xoshiro must avoid); the guard documents the invariant.
    if s0 | s1 | s2 | s3 == 0 { s0 = 0x9E37_79B9_7F4A_7C15 }
  }

  /// The next 64 uniformly distributed bits (xoshiro256**).
  @inlinable
  public mutating func next() -> UInt64 {
    let result = rotateLeft(s1 &* 5, by: 7) &* 9
    let t = s1 << 17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = rotateLeft(s3, by: 45)
    return result
  }

  /// A uniform `Double` in `[0, 1)`: the top 53 bits of `next()` scaled by 2⁻⁵³, so every value
  /// is a multiple of 2⁻⁵³ and each is equally likely.
  @inlinable
  public mutating func nextUniform() -> Double {
    Double(next() >> 11) * 0x1p-53
  }

  /// A uniform `Double` in `range` (`lowerBound` inclusive, `upperBound` exclusive).
  @inlinable
  public mutating func nextUniform(in range: Range<Double>) -> Double {
    range.lowerBound + (range.upperBound - range.lowerBound) * nextUniform()
  }

  /// `true` with probability `probability` (clamped to `0 … 1`). Always draws exactly one number,
  /// so the sequence does not depend on the probability's value.
  @inlinable
  public mutating func occurs(withProbability probability: Double) -> Bool {
    nextUniform() < probability
  }

  /// A standard normal deviate (mean 0, variance 1), by Marsaglia's polar method.
  ///
  /// Each accepted pair of uniform points yields two independent deviates; the second is kept
  /// and returned by the next call. The acceptance loop draws a data-dependent number of
  /// values, but the result is still a pure function of the seed and the call sequence.
  public mutating func gaussian() -> Double {
    if let spare = spareGaussian {
      spareGaussian = nil
      return spare
    }
    while true {
      let u = 2 * nextUniform() - 1
      let v = 2 * nextUniform() - 1
      let s = u * u + v * v
      // u and v are multiples of 2⁻⁵², so a non-zero s is at least 2⁻¹⁰⁴: a normal number.
      guard s < 1, s > 0 else { continue }
      let scale = (-2 * naturalLogarithm(s) / s).squareRoot()
      spareGaussian = v * scale
      return u * scale
    }
  }

  /// A normal deviate with the given mean and standard deviation (same units as both).
  @inlinable
  public mutating func gaussian(mean: Double, standardDeviation: Double) -> Double {
    mean + standardDeviation * gaussian()
  }
}

@inlinable
func rotateLeft(_ x: UInt64, by k: UInt64) -> UInt64 {
  (x << k) | (x >> (64 - k))
}

/// SplitMix64: a 64-bit counter passed through a bijective mixer. Used only to expand a seed
/// into xoshiro's state, because it turns similar seeds (0, 1, 2…) into unrelated states.
struct SplitMix64 {
  var state: UInt64

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// The natural logarithm of a positive, finite, normal `x`, from basic IEEE operations only, so
/// that it rounds identically on every platform (see `SeededGenerator`).
///
/// `x = m · 2^e` with `m` in `(√2/2, √2]`; then `ln x = e·ln 2 + 2·atanh(t)` with
/// `t = (m − 1)/(m + 1)`, `|t| ≤ 0.1716`, and the atanh series `t + t³/3 + t⁵/5 + …` truncated
/// after `t²³/23`, where the next term is below 10⁻¹⁸ of the first. `ln 2` is split in a high
/// part exact in 32 bits and a low part (the fdlibm constants) so that `e·ln 2` stays accurate
/// for large exponents. Accurate to a few units in the last place; it is a deterministic
/// building block for `gaussian()`, not a replacement for libm.
func naturalLogarithm(_ x: Double) -> Double {
  var exponent = Double(x.exponent)
  var m = x.significand  // [1, 2)
  if m > 1.414_213_562_373_095_1 {
    m *= 0.5
    exponent += 1
  }
  let t = (m - 1) / (m + 1)
  let t2 = t * t
  // Horner form of 1 + t²/3 + t⁴/5 + … + t²²/23.
  var series = 1.0 / 23
  series = series * t2 + 1.0 / 21
  series = series * t2 + 1.0 / 19
  series = series * t2 + 1.0 / 17
  series = series * t2 + 1.0 / 15
  series = series * t2 + 1.0 / 13
  series = series * t2 + 1.0 / 11
  series = series * t2 + 1.0 / 9
  series = series * t2 + 1.0 / 7
  series = series * t2 + 1.0 / 5
  series = series * t2 + 1.0 / 3
  series = series * t2 + 1
  let ln2High = 6.931_471_803_691_238_164_90e-01
  let ln2Low = 1.908_214_929_270_587_700_02e-10
  return exponent * ln2High + (exponent * ln2Low + 2 * t * series)
}
