/// What the analyses need to know of each channel before their own pass, gathered in one pass
/// over the samples (`SampleTiming.measure(_:observing:)`): the mean (Kahan-summed, as
/// `AllanDeviation.compensatedSum`), whether a channel is constant, its largest magnitude, and
/// the temperature's range.
public struct ChannelStatistics: Sendable {
  public private(set) var count = 0
  var sum = SIMD8<Double>()
  var compensation = SIMD8<Double>()
  /// The first sample's values.
  public private(set) var first = SIMD8<Double>()
  /// Lanes in which some value differs from the first one's.
  var varies = SIMDMask<SIMD8<Int64>>(repeating: false)
  var largest = SIMD8<Double>()
  var lowest = SIMD8<Double>()
  var highest = SIMD8<Double>()

  public init() {}

  public mutating func add(_ sample: RecordingSample) {
    let x = sample.values
    if count == 0 {
      first = x
      lowest = x
      highest = x
    }
    count += 1
    // Kahan, lane by lane, in the order `compensatedSum` adds.
    let y = x - compensation
    let next = sum + y
    compensation = (next - sum) - y
    sum = next
    varies .|= x .!= first
    largest = pointwiseMax(largest, x.replacing(with: -x, where: x .< 0))
    lowest = pointwiseMin(lowest, x)
    highest = pointwiseMax(highest, x)
  }

  /// The mean of `axis`.
  public func mean(_ axis: InertialAxis) -> Double { sum[axis.rawValue] / Double(count) }

  /// Whether every sample of `axis` holds the first one's value.
  public func isConstant(_ axis: InertialAxis) -> Bool { !varies[axis.rawValue] }

  /// The largest |value| of `axis`.
  public func largestMagnitude(_ axis: InertialAxis) -> Double { largest[axis.rawValue] }

  /// The lowest and highest die temperature, °C (lane 6; 0 … 0 when the source has none).
  public var temperatureRange: ClosedRange<Double>? {
    count > 0 ? lowest[6]...highest[6] : nil
  }
}
