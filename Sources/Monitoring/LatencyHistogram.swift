/// The distribution of the frames' own edge-to-write latency, µs, for percentiles.
///
/// A log-linear histogram allocated once (9 216 counters, 72 KiB), so recording a value costs
/// an index computation and allocates nothing, however long the run: values below 4 096 µs
/// (4.096 ms, beyond any healthy 100 Hz frame) get one bucket per microsecond and are exact;
/// each power of two above is split into 256 buckets, so a reported percentile there is an
/// upper bound at most 1/256 (0.4 %) above the true value. Minimum, maximum and mean are exact.
///
/// Percentiles use the nearest-rank definition: the p-th percentile of n values is the smallest
/// value v such that at least ⌈p·n⌉ of them are ≤ v.
public struct LatencyHistogram: Hashable, Sendable {
  /// Values below this are counted exactly, µs.
  public static let exactLimitMicroseconds: UInt32 = 4096
  /// Buckets per power of two above the exact range.
  public static let bucketsPerOctave = 256

  private static let exactBits = 12  // log2(exactLimitMicroseconds)
  private static let octaveBits = 8  // log2(bucketsPerOctave)
  static let bucketCount = Int(exactLimitMicroseconds) + (32 - exactBits) * bucketsPerOctave

  private var counts = [UInt64](repeating: 0, count: LatencyHistogram.bucketCount)
  /// Values recorded.
  public private(set) var count: UInt64 = 0
  /// Their sum, µs.
  public private(set) var sumMicroseconds: UInt64 = 0
  /// The smallest, µs (`UInt32.max` before the first value).
  public private(set) var minimumMicroseconds: UInt32 = .max
  /// The largest, µs (0 before the first value).
  public private(set) var maximumMicroseconds: UInt32 = 0

  public init() {}

  /// Records one latency, µs. Does not allocate.
  public mutating func record(_ microseconds: UInt32) {
    counts[Self.bucket(of: microseconds)] += 1
    count += 1
    sumMicroseconds += UInt64(microseconds)
    minimumMicroseconds = min(minimumMicroseconds, microseconds)
    maximumMicroseconds = max(maximumMicroseconds, microseconds)
  }

  /// The mean, µs, or `nil` before the first value.
  public var meanMicroseconds: Double? {
    count == 0 ? nil : Double(sumMicroseconds) / Double(count)
  }

  /// The nearest-rank percentile `numerator/denominator` (e.g. 99/100), µs, or `nil` before the
  /// first value. Exact below `exactLimitMicroseconds`; above, the top of the value's bucket
  /// (never below the true percentile, at most 0.4 % above), capped at the maximum.
  public func percentile(_ numerator: UInt64, outOf denominator: UInt64) -> UInt32? {
    guard count > 0, denominator > 0 else { return nil }
    // rank = ⌈numerator·count / denominator⌉, at least 1, in integers (no rounding surprises).
    let product = numerator.multipliedFullWidth(by: count)
    let (quotient, remainder) = denominator.dividingFullWidth(product)
    let rank = max(1, min(count, quotient + (remainder > 0 ? 1 : 0)))
    var seen: UInt64 = 0
    for (index, bucketCount) in counts.enumerated() where bucketCount > 0 {
      seen += bucketCount
      if seen >= rank { return min(Self.upperBound(ofBucket: index), maximumMicroseconds) }
    }
    return maximumMicroseconds
  }

  /// The 99th percentile, µs.
  public var p99Microseconds: UInt32? { percentile(99, outOf: 100) }

  static func bucket(of value: UInt32) -> Int {
    if value < exactLimitMicroseconds { return Int(value) }
    let octave = 31 - value.leadingZeroBitCount  // ⌊log2 value⌋, 12 … 31
    let position = Int(value >> UInt32(octave - octaveBits)) - bucketsPerOctave  // 0 … 255
    return Int(exactLimitMicroseconds) + (octave - exactBits) * bucketsPerOctave + position
  }

  /// The largest value that falls in bucket `index`.
  static func upperBound(ofBucket index: Int) -> UInt32 {
    if index < Int(exactLimitMicroseconds) { return UInt32(index) }
    let offset = index - Int(exactLimitMicroseconds)
    let octave = exactBits + offset / bucketsPerOctave
    let position = UInt64(bucketsPerOctave + offset % bucketsPerOctave)
    let shift = UInt64(octave - octaveBits)
    return UInt32(clamping: ((position + 1) << shift) - 1)
  }
}
