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
  ///
  /// The same arithmetic as `AllanAccumulator`, which `AllanAnalysis.analyze(_:timing:axes:)`
  /// feeds from a file read in passes; here the whole grid is one window.
  public static func overlapping(
    _ samples: [Double], samplePeriodSeconds: Double, clusterSizes: [Int],
    gaps: [SampleGap] = []
  ) -> AllanCurve {
    let missing = gaps.reduce(0) { $0 + $1.missing }
    var accumulator = AllanAccumulator(
      means: [samples.isEmpty ? 0 : compensatedSum(samples) / Double(samples.count)],
      gridCount: samples.count + missing, clusterSizes: clusterSizes, withGaps: !gaps.isEmpty,
      window: samples.count + missing + 1)
    var nextGap = 0
    for (j, x) in samples.enumerated() {
      if nextGap < gaps.count && gaps[nextGap].index == j {
        accumulator.skip(gaps[nextGap].missing)
        nextGap += 1
      }
      accumulator.add(SIMD8(x, 0, 0, 0, 0, 0, 0, 0))
    }
    return accumulator.curves(samplePeriodSeconds: samplePeriodSeconds)[0]
  }
}

/// The overlapping Allan variance of up to eight channels at a set of cluster sizes, accumulated
/// as the samples arrive: θ (the mean-removed, Kahan-summed integral on the chip's grid, holes
/// included) is kept only for the last 2·m_max + 1 grid points plus a block, and the second
/// differences of each cluster size are summed a block at a time. The sums are exactly those
/// of a pass over the whole θ (every term added to the same accumulator in the same order), so
/// a recording read from its file in chunks gives the same σ, bit for bit, as one in memory.
///
/// Memory: 8 bytes × channels × (2·m_max + 1 + `block`), with gaps 8 bytes more per grid point
/// for the count of samples present; for 2 h at 1 kHz (m_max = 630 957) 10.6 MB a channel.
struct AllanAccumulator {
  /// The cluster sizes with at least one term (m ≥ 1, 2m ≤ the grid), ascending as given.
  let sizes: [Int]
  let gridCount: Int
  let channels: Int
  let withGaps: Bool
  let means: [Double]
  /// Grid points kept: 2·m_max + 1 and a block.
  let window: Int
  /// θ of channel c at grid point g is `theta[c * window + g - low]`, for low ≤ g < high.
  var theta: [Double]
  /// Samples present before grid point g (with gaps): `present[g - low]`.
  var present: [Int]
  var low = 0
  var high = 1
  var sum: [Double]
  var compensation: [Double]
  /// Per size: the next term k to add.
  var next: [Int]
  /// Per channel and size: four accumulators (k mod 4, as `secondDifferenceSquares` sums).
  var accumulators: [Double]
  /// Per size: the terms that counted (with gaps).
  var counted: [Int]

  /// The points a window holds beyond 2·m_max + 1.
  static let block = 1 << 16

  /// For channels whose sample means are `means`, on a grid of `gridCount` points (samples and
  /// holes), keeping `window` grid points (at least 2·m_max + 2).
  init(means: [Double], gridCount: Int, clusterSizes: [Int], withGaps: Bool, window: Int? = nil) {
    sizes = clusterSizes.filter { $0 >= 1 && 2 * $0 <= gridCount }
    self.gridCount = gridCount
    channels = means.count
    self.withGaps = withGaps
    self.means = means
    let span = 2 * (sizes.max() ?? 0) + 1
    self.window = max(span + 1, min(window ?? span + Self.block, gridCount + 1))
    theta = [Double](repeating: 0, count: channels * self.window)
    present = withGaps ? [Int](repeating: 0, count: self.window) : []
    sum = [Double](repeating: 0, count: channels)
    compensation = sum
    next = [Int](repeating: 0, count: sizes.count)
    accumulators = [Double](repeating: 0, count: channels * sizes.count * 4)
    counted = next
  }

  /// The bytes the window takes for `channels` channels (what a caller budgets with).
  static func bytes(channels: Int, gridCount: Int, clusterSizes: [Int], withGaps: Bool) -> Int {
    let largest = clusterSizes.filter { $0 >= 1 && 2 * $0 <= gridCount }.max() ?? 0
    let points = min(2 * largest + 1 + block, gridCount + 1)
    return points * 8 * (channels + (withGaps ? 1 : 0))
  }

  /// `count` holes in the grid (samples missing in a gap).
  mutating func skip(_ count: Int) {
    for _ in 0..<count { append(nil) }
  }

  /// The next sample: lane c for channel c.
  mutating func add(_ values: SIMD8<Double>) { append(values) }

  private mutating func append(_ values: SIMD8<Double>?) {
    if high - low == window { sumTerms() }
    let slot = high - low
    for c in 0..<channels {
      if let values {
        let y = (values[c] - means[c]) - compensation[c]
        let next = sum[c] + y
        compensation[c] = (next - sum[c]) - y
        sum[c] = next
      }
      theta[c * window + slot] = sum[c]
    }
    if withGaps { present[slot] = (slot > 0 ? present[slot - 1] : 0) + (values == nil ? 0 : 1) }
    high += 1
  }

  /// Adds every term the window holds whole, then keeps only the points later terms need.
  private mutating func sumTerms() {
    var keep = high - 1
    theta.withUnsafeBufferPointer { t in
      present.withUnsafeBufferPointer { p in
        accumulators.withUnsafeMutableBufferPointer { acc in
          for (s, m) in sizes.enumerated() {
            let first = next[s]
            let end = high - 2 * m  // terms k < end have k + 2m in the window
            if end > first {
              for c in 0..<channels {
                let base = t.baseAddress! + c * window + (first - low)
                if withGaps {
                  // Which terms count depends on the holes only: counted on the first channel.
                  var terms = 0
                  AllanDeviation.addGapTerms(
                    base, p.baseAddress! + (first - low), m: m, count: end - first,
                    total: &acc[(c * sizes.count + s) * 4], terms: &terms)
                  if c == 0 { counted[s] += terms }
                } else {
                  let terms = gridCount + 1 - 2 * m
                  AllanDeviation.addSecondDifferenceSquares(
                    base, m: m, from: first, to: end, tailFrom: terms - terms % 4,
                    into: acc.baseAddress! + (c * sizes.count + s) * 4)
                }
              }
              next[s] = end
            }
            keep = min(keep, next[s])
          }
        }
      }
    }
    let dropped = keep - low
    guard dropped > 0 else { return }
    let kept = high - keep
    theta.withUnsafeMutableBufferPointer { t in
      for c in 0..<channels {
        let base = t.baseAddress! + c * window
        base.update(from: base + dropped, count: kept)
      }
    }
    if withGaps {
      present.withUnsafeMutableBufferPointer { p in
        p.baseAddress!.update(from: p.baseAddress! + dropped, count: kept)
      }
    }
    low = keep
  }

  /// The curves, one per channel, once every grid point has been added.
  mutating func curves(samplePeriodSeconds: Double) -> [AllanCurve] {
    precondition(high == gridCount + 1, "every grid point added")
    sumTerms()
    return (0..<channels).map { c in
      var curve = AllanCurve(tauSeconds: [], clusterSizes: [], deviation: [], termCounts: [])
      for (s, m) in sizes.enumerated() {
        let a = (c * sizes.count + s) * 4
        let terms = withGaps ? counted[s] : gridCount + 1 - 2 * m
        guard terms >= 1 else { continue }
        let variance =
          withGaps
          ? accumulators[a] / (2 * Double(terms))
          : ((accumulators[a] + accumulators[a + 1]) + (accumulators[a + 2] + accumulators[a + 3]))
            / (2 * Double(m) * Double(m) * Double(terms))
        curve.tauSeconds.append(Double(m) * samplePeriodSeconds)
        curve.clusterSizes.append(m)
        curve.deviation.append(variance.squareRoot())
        curve.termCounts.append(terms)
      }
      return curve
    }
  }
}

extension AllanDeviation {
  /// Adds (θₖ₊₂ₘ − 2θₖ₊ₘ + θₖ)² for k in `from..<to` (`t` points at θ_from) to four
  /// accumulators: term k to accumulator k mod 4, and from `tailFrom` on (the last terms mod 4
  /// of the whole sum) to the first. Four interleaved sums let the compiler vectorise and
  /// shorten the rounding chains; fixing which term goes where makes the sum the same however
  /// the terms are split into blocks.
  @inline(__always)
  static func addSecondDifferenceSquares(
    _ t: UnsafePointer<Double>, m: Int, from: Int, to: Int, tailFrom: Int,
    into s: UnsafeMutablePointer<Double>
  ) {
    let a = t - from
    let b = a + m
    let c = a + 2 * m
    var k = from
    let bodyEnd = min(to, tailFrom)
    while k < bodyEnd && k & 3 != 0 {
      let d = c[k] - 2 * b[k] + a[k]
      s[k & 3] += d * d
      k += 1
    }
    var s0 = s[0]
    var s1 = s[1]
    var s2 = s[2]
    var s3 = s[3]
    while k + 4 <= bodyEnd {
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
    while k < bodyEnd {
      let d = c[k] - 2 * b[k] + a[k]
      switch k & 3 {
      case 0: s0 += d * d
      case 1: s1 += d * d
      case 2: s2 += d * d
      default: s3 += d * d
      }
      k += 1
    }
    while k < to {
      let d = c[k] - 2 * b[k] + a[k]
      s0 += d * d
      k += 1
    }
    s[0] = s0
    s[1] = s1
    s[2] = s2
    s[3] = s3
  }

  /// Adds the gap-resistant terms for k in 0..<count (`t` and `present` point at θ and the
  /// present count of the first): a term counts when each of its clusters holds at least 90 %
  /// of its samples, and is then the squared difference of the two clusters' averages.
  @inline(__always)
  static func addGapTerms(
    _ t: UnsafePointer<Double>, _ present: UnsafePointer<Int>, m: Int, count: Int,
    total: inout Double, terms: inout Int
  ) {
    // At least (1 − share)·m samples present, in integers: 10·present ≥ 9·m.
    let need = (9 * m + 9) / 10
    for k in 0..<count {
      let n1 = present[k + m] - present[k]
      let n2 = present[k + 2 * m] - present[k + m]
      guard n1 >= need && n2 >= need else { continue }
      let d = (t[k + 2 * m] - t[k + m]) / Double(n2) - (t[k + m] - t[k]) / Double(n1)
      total += d * d
      terms += 1
    }
  }
}
