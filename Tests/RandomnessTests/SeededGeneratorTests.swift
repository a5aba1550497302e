import Randomness
import Testing

@Suite struct SeededGeneratorTests {
  /// Golden values from an independent C implementation of SplitMix64 seeding and xoshiro256**
  /// written from Blackman and Vigna's published description (not from this code).
  static let references: [(seed: UInt64, first: [UInt64])] = [
    (
      0,
      [0x99EC_5F36_CB75_F2B4, 0xBF6E_1F78_4956_452A, 0x1A5F_849D_4933_E6E0, 0x6AA5_94F1_262D_2D2C]
    ),
    (
      42,
      [0x1578_0B2E_0C2E_C716, 0x6104_D986_6D11_3A7E, 0xAE17_5332_39E4_99A1, 0xECB8_AD47_03B3_60A1]
    ),
    (
      0xDEAD_BEEF,
      [0xC555_5444_A74D_7E83, 0x65C3_0D37_B4B1_6E38, 0x54F7_7320_0A4E_FA23, 0x429A_ED75_FB95_8AF7]
    ),
  ]

  @Test(arguments: references)
  func firstValuesMatchTheReference(reference: (seed: UInt64, first: [UInt64])) {
    var generator = SeededGenerator(seed: reference.seed)
    let values = (0..<4).map { _ in generator.next() }
    #expect(values == reference.first)
  }

  @Test func sameSeedSameSequenceOtherSeedOtherSequence() {
    var a = SeededGenerator(seed: 2024)
    var b = SeededGenerator(seed: 2024)
    var c = SeededGenerator(seed: 2025)
    let first = (0..<100).map { _ in a.next() }
    #expect(first == (0..<100).map { _ in b.next() })
    #expect(first != (0..<100).map { _ in c.next() })
  }

  @Test func streamsAreIndependentAndStreamZeroIsThePlainSeed() {
    var plain = SeededGenerator(seed: 9)
    var zero = SeededGenerator(seed: 9, stream: 0)
    var one = SeededGenerator(seed: 9, stream: 1)
    var two = SeededGenerator(seed: 9, stream: 2)
    let p = (0..<8).map { _ in plain.next() }
    #expect(p == (0..<8).map { _ in zero.next() })
    let s1 = (0..<8).map { _ in one.next() }
    let s2 = (0..<8).map { _ in two.next() }
    #expect(p != s1 && p != s2 && s1 != s2)
  }

  @Test func uniformIsTheTop53BitsInTheUnitInterval() {
    var bits = SeededGenerator(seed: 42)
    var uniform = SeededGenerator(seed: 42)
    for _ in 0..<1000 {
      let expected = Double(bits.next() >> 11) / 9_007_199_254_740_992  // 2^53
      let value = uniform.nextUniform()
      #expect(value == expected)
      #expect(value >= 0 && value < 1)
    }
    var ranged = SeededGenerator(seed: 3)
    for _ in 0..<1000 {
      let value = ranged.nextUniform(in: -2.5..<4)
      #expect(value >= -2.5 && value < 4)
    }
  }

  /// The first six deviates for seed 42 agree with the C reference's polar method (which uses
  /// glibc's `log`) to within a couple of units in the last place, and are pinned exactly as
  /// golden numbers so a change in the deterministic logarithm or the method cannot pass
  /// unnoticed.
  @Test func gaussianMatchesTheReferenceAndIsPinned() {
    let reference = [
      -0.72621913824478568, -0.21119691823195985, 0.22162270150359331, 0.52277168775601457,
      0.46417731016247366, 0.74097889168655617,
    ]
    var generator = SeededGenerator(seed: 42)
    let values = (0..<6).map { _ in generator.gaussian() }
    for (value, expected) in zip(values, reference) {
      #expect(abs(value - expected) <= 4e-16 * abs(expected))
    }
    // Computed once by this implementation (shortest round-trip literals, so exact).
    let pinned = [
      -0.7262191382447857, -0.21119691823195985, 0.22162270150359337, 0.5227716877560146,
      0.46417731016247366, 0.7409788916865562,
    ]
    #expect(values == pinned)
  }

  /// Moments of 200 000 deviates against the standard normal's, with bounds of about four
  /// standard errors: mean 0 (SE 1/√N), variance 1 (SE √(2/N)), fourth moment 3 (SE √(96/N)),
  /// and the share within ±1σ, 0.6827 (SE √(p(1−p)/N)).
  @Test func gaussianHasTheNormalMoments() {
    var generator = SeededGenerator(seed: 7)
    let count = 200_000
    var sum = 0.0
    var sumSquares = 0.0
    var sumFourth = 0.0
    var withinOne = 0
    for _ in 0..<count {
      let x = generator.gaussian()
      sum += x
      sumSquares += x * x
      sumFourth += x * x * x * x
      if abs(x) < 1 { withinOne += 1 }
    }
    let n = Double(count)
    let mean = sum / n
    let variance = sumSquares / n - mean * mean
    #expect(abs(mean) < 4 / n.squareRoot())
    #expect(abs(variance - 1) < 4 * (2 / n).squareRoot())
    #expect(abs(sumFourth / n - 3) < 4 * (96 / n).squareRoot())
    let share = Double(withinOne) / n
    #expect(abs(share - 0.682_689_5) < 4 * (0.6827 * 0.3173 / n).squareRoot())

    var scaled = SeededGenerator(seed: 8)
    var scaledSum = 0.0
    for _ in 0..<count { scaledSum += scaled.gaussian(mean: 5, standardDeviation: 0.5) }
    #expect(abs(scaledSum / n - 5) < 4 * 0.5 / n.squareRoot())
  }

  @Test func eventsOccurAtTheirProbability() {
    var generator = SeededGenerator(seed: 11)
    let count = 100_000
    let hits = (0..<count).filter { _ in generator.occurs(withProbability: 0.1) }.count
    // Binomial: mean 10 000, standard deviation 94.9.
    #expect(abs(hits - 10_000) < 400)
    let never = (0..<1000).contains { _ in generator.occurs(withProbability: 0) }
    let always = (0..<1000).allSatisfy { _ in generator.occurs(withProbability: 1) }
    #expect(!never)
    #expect(always)
  }
}
