#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

// TEMPORARY: delete this file once SimulatedHardware's `SeededGenerator` is on main, and make
// `ScenarioRandom` a typealias of it (MotionScenarios may then depend on SimulatedHardware).
// It exists only so the scenarios can have seeded noise before that lands; its API is the
// subset of `SeededGenerator` the scenarios use (`init(seed:)`, `next()`, `gaussian()`).

/// The seeded generator the scenarios draw from (see the note above).
public typealias ScenarioRandom = InterimSeededGenerator

/// xoshiro256** (Blackman & Vigna) seeded through SplitMix64, with polar-method normal deviates.
public struct InterimSeededGenerator: RandomNumberGenerator, Hashable, Sendable {
  private var s0: UInt64
  private var s1: UInt64
  private var s2: UInt64
  private var s3: UInt64
  private var spare: Double?

  public init(seed: UInt64) {
    var x = seed
    func splitMix() -> UInt64 {
      x &+= 0x9E37_79B9_7F4A_7C15
      var z = x
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
    s0 = splitMix()
    s1 = splitMix()
    s2 = splitMix()
    s3 = splitMix()
  }

  public mutating func next() -> UInt64 {
    let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
    let t = s1 << 17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = s3 << 45 | s3 >> 19
    return result
  }

  /// Uniform in [0, 1).
  public mutating func nextUniform() -> Double { Double(next() >> 11) * 0x1p-53 }

  /// A standard normal deviate (Marsaglia's polar method).
  public mutating func gaussian() -> Double {
    if let s = spare {
      spare = nil
      return s
    }
    while true {
      let u = 2 * nextUniform() - 1
      let v = 2 * nextUniform() - 1
      let r = u * u + v * v
      if r > 0 && r < 1 {
        let f = (-2 * log(r) / r).squareRoot()
        spare = v * f
        return u * f
      }
    }
  }
}
