#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The overlapping Allan deviation of one channel at a set of averaging times.
public struct AllanCurve: Sendable, Hashable {
  /// Averaging times τ = m·T₀, seconds, increasing.
  public var tauSeconds: [Double]
  /// The cluster sizes m (samples per average) behind each τ.
  public var clusterSizes: [Int]
  /// σ(τ), in the channel's unit (rad/s or m/s²).
  public var deviation: [Double]
  /// The number of second differences summed at each τ (N + 1 − 2m for N samples without a
  /// gap; with gaps, those whose clusters are nearly whole).
  public var termCounts: [Int]

  public init(tauSeconds: [Double], clusterSizes: [Int], deviation: [Double], termCounts: [Int]) {
    self.tauSeconds = tauSeconds
    self.clusterSizes = clusterSizes
    self.deviation = deviation
    self.termCounts = termCounts
  }

  /// How much each point can be trusted relative to the others: the number of independent
  /// cluster pairs, (N + 1 − 2m) / m. The variance of ln σ at a point is roughly inversely
  /// proportional to it (for white noise, var ln σ ≈ 1 / (3·that)), so it weights the fits.
  public var weights: [Double] {
    zip(termCounts, clusterSizes).map { Double($0) / Double($1) }
  }
}

/// Overlapping Allan deviation (IEEE Std 952 annex C; NIST SP 1065 eq. 11), seed 000's form.
///
/// For rate samples x₀ … x_{N−1} taken every T₀ seconds, integrate to θ (θ₀ = 0,
/// θₖ₊₁ = θₖ + xₖ·T₀), then for each cluster size m (τ = m·T₀):
///
///     σ²(τ) = Σₖ (θₖ₊₂ₘ − 2θₖ₊ₘ + θₖ)² / (2 τ² (N + 1 − 2m)),   k = 0 … N − 2m
///
/// which is exactly what allantools' `oadev(…, data_type="freq")` computes.
///
/// **Numerics.** The samples' mean is subtracted first (it cannot change σ: it adds a straight
/// line to θ, which the second difference removes), so θ stays near zero instead of growing to
/// 9.8 m/s² × 7200 s on an accelerometer axis; θ is then accumulated with Kahan-compensated
/// summation, so every stored θₖ is within one rounding of the exact prefix sum rather than
/// carrying the √k rounding errors of a plain running sum over 720 000 samples. θ is kept in
/// sample units (no T₀ factor): T₀ cancels between the numerator and τ², so σ does not even see
/// the rounding of the sample period.
public enum AllanDeviation {
  /// The averaging times the analysis uses: `perDecade` log-spaced points per decade
  /// (τ = 10^(j/perDecade) s, which includes exactly 0.01, 0.1, 1, 10, 100 s), each rounded to
  /// the nearest whole number of samples m and deduplicated, plus m = 1 (τ = T₀).
  ///
  /// **Longest τ: a tenth of the record** (m ≤ N/10). At τ = T/10 the record holds only ten
  /// independent clusters, and σ's relative uncertainty is already near 20 %; longer averages
  /// scatter too much to read anything from (seed 000's 1000 s point from 2 h was 23 % off).
  public static func clusterSizes(
    sampleCount: Int, samplePeriodSeconds: Double, perDecade: Int = 10
  ) -> [Int] {
    guard sampleCount >= 3, samplePeriodSeconds > 0 else { return [] }
    let maximum = max(1, sampleCount / 10)
    var sizes: [Int] = [1]
    let firstExponent = Int((log10(samplePeriodSeconds) * Double(perDecade)).rounded(.down))
    var j = firstExponent
    while true {
      let tau = decadePower(j, perDecade: perDecade)
      let m = Int((tau / samplePeriodSeconds).rounded())
      if m > maximum { break }
      if m >= 1 && m != sizes.last { sizes.append(m) }
      j += 1
    }
    return sizes
  }

  /// 10^(j / perDecade), exact for whole decades.
  static func decadePower(_ j: Int, perDecade: Int) -> Double {
    if j % perDecade == 0 {
      let k = j / perDecade
      var value = 1.0
      for _ in 0..<abs(k) { value *= 10 }
      return k < 0 ? 1 / value : value
    }
    return pow(10, Double(j) / Double(perDecade))
  }

  /// The integrated, mean-removed signal θ in sample units: θ₀ = 0, θₖ₊₁ = θₖ + (xₖ − x̄),
  /// accumulated with Kahan compensation. `count + 1` values.
  public static func integrate(_ samples: [Double]) -> [Double] {
    var theta = [Double](repeating: 0, count: samples.count + 1)
    guard !samples.isEmpty else { return theta }
    let mean = compensatedSum(samples) / Double(samples.count)
    samples.withUnsafeBufferPointer { x in
      theta.withUnsafeMutableBufferPointer { t in
        var sum = 0.0
        var compensation = 0.0
        for k in 0..<x.count {
          let y = (x[k] - mean) - compensation
          let next = sum + y
          compensation = (next - sum) - y
          sum = next
          t[k + 1] = sum
        }
      }
    }
    return theta
  }

  /// The sum of `values` with Kahan compensation.
  public static func compensatedSum(_ values: [Double]) -> Double {
    var sum = 0.0
    var compensation = 0.0
    for value in values {
      let y = value - compensation
      let next = sum + y
      compensation = (next - sum) - y
      sum = next
    }
    return sum
  }

  /// The largest share of a cluster's samples that may be missing (in gaps) for the cluster to
  /// count, its average then being that of the samples present.
  public static let maximumMissingShare = 0.1

  /// The overlapping Allan deviation of `samples` (taken every `samplePeriodSeconds`) at each
  /// cluster size in `clusterSizes` (sizes with fewer than one term are skipped).
  ///
  /// **Gaps** (`SampleTiming.gaps`; empty: none). The samples are placed on the chip's grid
  /// with the missing ones as holes, and a second difference counts when each of its two
  /// clusters has at least 90 % of its samples (`maximumMissingShare`); a cluster's average is
  /// then that of the samples present, and σ² is the mean over the terms that count — the
  /// gap-resistant overlapping Allan variance (the idea of allantools' `gradev`: leave out the
  /// terms a gap spoils, normalise by those that remain). A single missed sample thus spoils
  /// the short clusters around it and none of the long ones, so a bench recording with a few
  /// holes still reaches τ of a tenth of its length. For m ≤ 9 a cluster must be whole. The
  /// mean removed is that of the samples present.
  public static func overlapping(
    _ samples: [Double], samplePeriodSeconds: Double, clusterSizes: [Int],
    gaps: [SampleGap] = []
  ) -> AllanCurve {
    guard !gaps.isEmpty else {
      let theta = integrate(samples)
      return overlapping(
        theta: theta, samplePeriodSeconds: samplePeriodSeconds, clusterSizes: clusterSizes)
    }
    // The grid: θ of the mean-removed samples with the holes as zeros, and the count of
    // samples present, both as prefix sums (index g: the grid points before g).
    let mean = compensatedSum(samples) / Double(samples.count)
    let gridCount = samples.count + gaps.reduce(0) { $0 + $1.missing }
    var theta = [Double](repeating: 0, count: gridCount + 1)
    var present = [Int](repeating: 0, count: gridCount + 1)
    var g = 0
    var nextGap = 0
    var sum = 0.0
    var compensation = 0.0
    for (j, x) in samples.enumerated() {
      if nextGap < gaps.count && gaps[nextGap].index == j {
        for _ in 0..<gaps[nextGap].missing {
          theta[g + 1] = sum
          present[g + 1] = present[g]
          g += 1
        }
        nextGap += 1
      }
      let y = (x - mean) - compensation
      let next = sum + y
      compensation = (next - sum) - y
      sum = next
      theta[g + 1] = sum
      present[g + 1] = present[g] + 1
      g += 1
    }
    var curve = AllanCurve(tauSeconds: [], clusterSizes: [], deviation: [], termCounts: [])
    for m in clusterSizes where m >= 1 && 2 * m <= gridCount {
      // At least (1 − share)·m samples present, in integers: 10·present ≥ 9·m.
      let need = (9 * m + 9) / 10
      var total = 0.0
      var terms = 0
      theta.withUnsafeBufferPointer { t in
        present.withUnsafeBufferPointer { c in
          for k in 0...(gridCount - 2 * m) {
            let n1 = c[k + m] - c[k]
            let n2 = c[k + 2 * m] - c[k + m]
            guard n1 >= need && n2 >= need else { continue }
            let d = (t[k + 2 * m] - t[k + m]) / Double(n2) - (t[k + m] - t[k]) / Double(n1)
            total += d * d
            terms += 1
          }
        }
      }
      guard terms >= 1 else { continue }
      curve.tauSeconds.append(Double(m) * samplePeriodSeconds)
      curve.clusterSizes.append(m)
      curve.deviation.append((total / (2 * Double(terms))).squareRoot())
      curve.termCounts.append(terms)
    }
    return curve
  }

  /// The same from an already integrated signal (`integrate(_:)`), without gaps.
  public static func overlapping(
    theta: [Double], samplePeriodSeconds: Double, clusterSizes: [Int]
  ) -> AllanCurve {
    var curve = AllanCurve(tauSeconds: [], clusterSizes: [], deviation: [], termCounts: [])
    theta.withUnsafeBufferPointer { t in
      for m in clusterSizes where m >= 1 {
        let terms = t.count - 2 * m
        guard terms >= 1 else { continue }
        let sum = sumOfSquaredSecondDifferences(t, m: m, terms: terms)
        let variance = sum / (2 * Double(m) * Double(m) * Double(terms))
        curve.tauSeconds.append(Double(m) * samplePeriodSeconds)
        curve.clusterSizes.append(m)
        curve.deviation.append(variance.squareRoot())
        curve.termCounts.append(terms)
      }
    }
    return curve
  }

  /// Σₖ (θₖ₊₂ₘ − 2θₖ₊ₘ + θₖ)² for k < terms, in four interleaved accumulators (which both lets
  /// the compiler vectorise and shortens the rounding chains of the sum).
  @inline(__always)
  static func sumOfSquaredSecondDifferences(
    _ t: UnsafeBufferPointer<Double>, m: Int, terms: Int
  ) -> Double {
    let base = t.baseAddress!
    let a = base
    let b = base + m
    let c = base + 2 * m
    var s0 = 0.0
    var s1 = 0.0
    var s2 = 0.0
    var s3 = 0.0
    var k = 0
    while k + 4 <= terms {
      let d0 = c[k] - 2 * b[k] + a[k]
      let d1 = c[k + 1] - 2 * b[k + 1] + a[k + 1]
      let d2 = c[k + 2] - 2 * b[k + 2] + a[k + 2]
      let d3 = c[k + 3] - 2 * b[k + 3] + a[k + 3]
      s0 += d0 * d0
      s1 += d1 * d1
      s2 += d2 * d2
      s3 += d3 * d3
      k += 4
    }
    while k < terms {
      let d = c[k] - 2 * b[k] + a[k]
      s0 += d * d
      k += 1
    }
    return (s0 + s1) + (s2 + s3)
  }
}
