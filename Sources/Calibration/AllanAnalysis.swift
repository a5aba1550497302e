#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The three noise figures read off one Allan deviation curve (IEEE Std 952-1997 annex C).
///
/// Units follow the channel: for a gyroscope N is the angle random walk (rad/√s), B the bias
/// instability (rad/s), K the rate random walk (rad/s/√s); for an accelerometer N is the velocity
/// random walk (m/s/√s), B in m/s², K in m/s²/√s.
public struct NoiseReadOffs: Sendable, Hashable {
  /// N, from the −½ slope line at τ = 1 s; `nil` when the curve does not reach 1 s.
  public var randomWalk: Double?
  /// The free log-log slope of the curve over the points the N fit used: about −0.5 when white
  /// noise dominates there. Far from it (outside −0.6 … −0.4) N is only an upper bound.
  public var randomWalkFitSlope: Double?
  /// The smallest σ on the curve and where it is.
  public var minimumDeviation: Double
  public var minimumTauSeconds: Double
  /// Whether the minimum lies before the last τ: when the curve is still falling at the end,
  /// the true floor is lower and longer recordings are needed.
  public var minimumReached: Bool
  /// B = σ_min / 0.664. For flicker (1/f) bias noise the Allan deviation flattens at
  /// σ = √(2 ln 2 / π) · B ≈ 0.664 B (IEEE Std 952 table C.1), so the floor divided by 0.664
  /// is the conventional bias-instability figure.
  public var biasInstability: Double { minimumDeviation / NoiseReadOffs.flickerFloorFactor }
  /// K from the +½ slope, σ(τ) = K·√(τ/3); `nil` when the record is too short to reach it.
  public var rateRandomWalk: Double?
  /// The τ range K was fitted over.
  public var rateRandomWalkTauRange: ClosedRange<Double>?

  /// √(2 ln 2 / π) = 0.6643…: the Allan deviation floor of flicker noise per unit B.
  public static let flickerFloorFactor = (2 * log(2.0) / Double.pi).squareRoot()

  /// Reads the figures off `curve`.
  ///
  /// - N: a least-squares line of fixed slope −½ through the points from the one nearest 0.1 s
  ///   to the one nearest 1 s (which must be within 5 % of it: a real chip's period is not
  ///   exactly 10 ms, so no cluster is exactly 1 s long), weighted by their independent cluster
  ///   counts, read at τ = 1 s. Not the single curve value
  ///   at 1 s: that point carries about 0.7 % scatter from a 2-hour record (10 800 degrees of
  ///   freedom), more than the 1 % budget allows to spend on one point, while the decade below
  ///   it is white-noise dominated on any MEMS gyro and measured up to ten times more often. The
  ///   window stops at 1 s so that a rate random walk (which lifts σ by K²τ/3) hardly touches it,
  ///   and starts at 0.1 s so that the DLPF's correlation of neighbouring samples (milliseconds
  ///   at the settings Plumb uses) does not.
  /// - Bias instability: the curve's minimum divided by 0.664.
  /// - K: the points from twice the minimum's τ to the end, after subtracting the white-noise
  ///   part N²/τ (which would otherwise bias K high by a factor √(1 + (τ*/τ)²) near the
  ///   minimum τ*), fitted with a fixed +½ slope. Reported only when those points span at least
  ///   a factor 3 in τ (four or more points) and their free slope is between +0.25 and +0.8
  ///   ("near +½"); otherwise `nil`: not reached.
  ///
  /// `nil` for a curve without points.
  public init?(curve: AllanCurve) {
    let tau = curve.tauSeconds
    let sigma = curve.deviation
    let weights = curve.weights
    guard !tau.isEmpty, sigma.allSatisfy({ $0 > 0 && $0.isFinite }) else { return nil }

    // N: −½ line through 0.1 … 1 s: from the point nearest 0.1 s to the point nearest 1 s.
    // A real chip's period is not exactly 10 ms (its oscillator is off by up to a few percent),
    // so neither is any cluster exactly 0.1 s or 1 s long (at 100.7 Hz: 0.0993 s and 1.003 s).
    let window = Self.window(tau, from: 0.1, to: 1)
    if let last = window.last, abs(log(tau[last])) <= log(1.05) {
      var sum = 0.0
      var total = 0.0
      for i in window {
        sum += weights[i] * (log(sigma[i]) + 0.5 * log(tau[i]))
        total += weights[i]
      }
      randomWalk = exp(sum / total)
      randomWalkFitSlope = window.count >= 2 ? fittedSlope(tau, sigma, weights, window) : nil
    } else {
      randomWalk = nil
      randomWalkFitSlope = nil
    }

    var minimumIndex = 0
    for i in sigma.indices where sigma[i] < sigma[minimumIndex] { minimumIndex = i }
    minimumDeviation = sigma[minimumIndex]
    minimumTauSeconds = tau[minimumIndex]
    minimumReached = minimumIndex < sigma.count - 1

    // K: +½ line beyond twice the minimum's τ, white-noise part removed.
    rateRandomWalk = nil
    rateRandomWalkTauRange = nil
    let region = tau.indices.filter { $0 > minimumIndex && tau[$0] >= 2 * tau[minimumIndex] }
    if minimumReached, region.count >= 4, let first = region.first, let last = region.last,
      tau[last] >= 3 * tau[first]
    {
      let slope = fittedSlope(tau, sigma, weights, region)
      if slope >= 0.25 && slope <= 0.8 {
        let n2 = (randomWalk ?? 0) * (randomWalk ?? 0)
        var sum = 0.0
        var total = 0.0
        for i in region {
          let remainder = sigma[i] * sigma[i] - n2 / tau[i]
          guard remainder > 0 else { continue }
          // ln σ_K = ln K + ½ ln(τ/3)
          sum += weights[i] * (0.5 * log(remainder) - 0.5 * log(tau[i] / 3))
          total += weights[i]
        }
        if total > 0 {
          rateRandomWalk = exp(sum / total)
          rateRandomWalkTauRange = tau[first]...tau[last]
        }
      }
    }
  }
}

extension NoiseReadOffs {
  /// The indices of `tau` (ascending) from the point nearest `low` to the point nearest
  /// `high`, nearness measured in ln τ.
  static func window(_ tau: [Double], from low: Double, to high: Double) -> [Int] {
    func nearest(_ target: Double) -> Int? {
      tau.indices.min { abs(log(tau[$0] / target)) < abs(log(tau[$1] / target)) }
    }
    guard let first = nearest(low), let last = nearest(high), first <= last else { return [] }
    return Array(first...last)
  }
}

/// The weighted least-squares slope of ln σ against ln τ over `indices`.
func fittedSlope(_ tau: [Double], _ sigma: [Double], _ weights: [Double], _ indices: [Int])
  -> Double
{
  var sw = 0.0
  var sx = 0.0
  var sy = 0.0
  for i in indices {
    sw += weights[i]
    sx += weights[i] * log(tau[i])
    sy += weights[i] * log(sigma[i])
  }
  let mx = sx / sw
  let my = sy / sw
  var sxx = 0.0
  var sxy = 0.0
  for i in indices {
    let dx = log(tau[i]) - mx
    sxx += weights[i] * dx * dx
    sxy += weights[i] * dx * (log(sigma[i]) - my)
  }
  return sxx > 0 ? sxy / sxx : 0
}

/// The Allan analysis of a still recording: a curve and read-offs per analysed axis.
public struct AllanAnalysis: Sendable {
  public var timing: SampleTiming
  /// The τ grid shared by every axis.
  public var clusterSizes: [Int]
  public var curves: [InertialAxis: AllanCurve]
  public var readOffs: [InertialAxis: NoiseReadOffs]

  /// The shortest record the analysis accepts, seconds: the grid stops at a tenth of the
  /// record and N is read at τ = 1 s.
  public static let minimumDurationSeconds = 10.0

  /// Analyses `axes` of `recording` (all six by default). Throws when the timestamps hold an
  /// extra sample or the samples cover less than `minimumDurationSeconds`, and when an axis has
  /// no read-offs (`.notMeasurable`: the same value in every sample, or values so large its
  /// deviation overflows), so every axis asked for has its curve and its read-offs. Gaps are holes in
  /// the grid (`AllanDeviation.overlapping(_:samplePeriodSeconds:clusterSizes:gaps:)`).
  ///
  /// Cost: one pass per τ over each axis, about 50 τ × 720 000 samples × 6 axes for 2 h at
  /// 100 Hz; see `plumb-cal allan --timing` and the `allan_2h_ms` benchmark.
  public static func analyze(
    _ recording: InertialRecording, axes: [InertialAxis] = InertialAxis.allCases
  ) throws(RecordingError) -> AllanAnalysis {
    let timing = try SampleTiming.measure(recording)
    try requireDuration(timing, source: recording.source)
    let analysis = analyze(recording, timing: timing, axes: axes)
    for axis in axes where analysis.readOffs[axis] == nil {
      let values = recording.samples(axis)
      throw notMeasurable(
        axis, source: recording.source, first: values.first,
        constant: values.allSatisfy { $0 == values.first }, largest: values.map(abs).max() ?? 0,
        curve: analysis.curves[axis])
    }
    return analysis
  }

  /// The same for samples read in passes (a recording file too long to hold, `RecordingFile`),
  /// with their timing and statistics measured (`SampleTiming.measure(_:observing:)` with
  /// `ChannelStatistics.add`). The axes are analysed in groups whose θ windows
  /// (`AllanAccumulator`) fit in `memoryBudgetBytes` together, one pass over the samples per
  /// group; `observe` sees every sample of the first of those passes with its index (for what
  /// else an analysis gathers: window statistics, window means). The same figures as the
  /// analysis of the recording in memory, bit for bit; the same errors.
  public static func analyze(
    _ source: some SampleSource, timing: SampleTiming, statistics: ChannelStatistics,
    axes: [InertialAxis] = InertialAxis.allCases, memoryBudgetBytes: Int = defaultMemoryBudget,
    observing observe: (RecordingSample, Int) -> Void = { _, _ in }
  ) throws(RecordingError) -> AllanAnalysis {
    try requireDuration(timing, source: source.source)
    let sizes = AllanDeviation.clusterSizes(
      sampleCount: timing.sampleCount, samplePeriodSeconds: timing.samplePeriodSeconds)
    let gaps = timing.gaps
    let gridCount = timing.sampleCount + timing.missingSamples
    let perChannel = AllanAccumulator.bytes(
      channels: 1, gridCount: gridCount, clusterSizes: sizes, withGaps: false)
    let shared = gaps.isEmpty ? 0 : perChannel
    let groupSize = min(8, max(1, (memoryBudgetBytes - shared) / max(1, perChannel)))
    var curves: [InertialAxis: AllanCurve] = [:]
    var readOffs: [InertialAxis: NoiseReadOffs] = [:]
    var firstPass = true
    for start in stride(from: 0, to: axes.count, by: groupSize) {
      let group = Array(axes[start..<min(axes.count, start + groupSize)])
      var accumulator = AllanAccumulator(
        means: group.map { statistics.mean($0) }, gridCount: gridCount, clusterSizes: sizes,
        withGaps: !gaps.isEmpty)
      var index = 0
      var nextGap = 0
      let observing = firstPass
      try source.forEachSample { sample in
        if observing { observe(sample, index) }
        if nextGap < gaps.count && gaps[nextGap].index == index {
          accumulator.skip(gaps[nextGap].missing)
          nextGap += 1
        }
        var lanes = SIMD8<Double>()
        for (lane, axis) in group.enumerated() { lanes[lane] = sample.values[axis.rawValue] }
        accumulator.add(lanes)
        index += 1
      }
      firstPass = false
      for (axis, curve) in zip(
        group,
        accumulator.curves(
          samplePeriodSeconds: timing.samplePeriodSeconds))
      {
        curves[axis] = curve
        readOffs[axis] = NoiseReadOffs(curve: curve)
      }
    }
    let analysis = AllanAnalysis(
      timing: timing, clusterSizes: axes.last.flatMap { curves[$0]?.clusterSizes } ?? sizes,
      curves: curves, readOffs: readOffs)
    for axis in axes where readOffs[axis] == nil {
      throw notMeasurable(
        axis, source: source.source,
        first: statistics.count > 0 ? statistics.first[axis.rawValue] : nil,
        constant: statistics.isConstant(axis), largest: statistics.largestMagnitude(axis),
        curve: curves[axis])
    }
    return analysis
  }

  /// The θ windows' share of memory in `analyze(_:timing:statistics:axes:…)`: 32 MiB, three
  /// axes a pass for 2 h at 1 kHz (10.6 MB each), all six for 2 h at 100 Hz.
  public static let defaultMemoryBudget = 32 << 20

  /// Throws `.tooShort` when the samples cover less than `minimumDurationSeconds`.
  static func requireDuration(_ timing: SampleTiming, source: String) throws(RecordingError) {
    guard timing.durationSeconds >= minimumDurationSeconds * (1 - 1e-6) else {
      throw RecordingError(
        .tooShort, path: source,
        "the recording is \(formatSeconds(timing.durationSeconds)) long; the Allan analysis needs at least \(Int(minimumDurationSeconds)) s (τ reaches a tenth of the record and N is read at τ = 1 s). Record a still unit for an hour or two to see its bias instability and rate random walk"
      )
    }
  }

  /// Why `axis` has no read-offs (its curve has a σ that is zero or not finite), for a person:
  /// from the axis's first value, whether every value equals it, and its largest magnitude.
  static func notMeasurable(
    _ axis: InertialAxis, source: String, first: Double?, constant: Bool, largest: Double,
    curve: AllanCurve?
  ) -> RecordingError {
    let unit = axis.sensor == .gyroscope ? "rad/s" : "m/s²"
    let problem: String
    if let first, constant {
      problem =
        "\(axis.columnName) holds the same value (\(first)) in every sample: there is no noise "
        + "to measure. A sensor's axis always shows some; a constant one is stuck, not connected, "
        + "or a column filled in by hand: record the unit again"
    } else if curve?.deviation.contains(where: { !$0.isFinite }) ?? true
      || !(largest * largest).isFinite
    {
      let range = axis.sensor == .gyroscope ? "±34.9 rad/s" : "±157 m/s²"
      problem =
        "\(axis.columnName) holds values up to \(largest) \(unit), too large to compute an Allan "
        + "deviation with (an MPU-6050 reads at most \(range)): not a sensor's reading; check the "
        + "column's units (\(unit))"
    } else {
      var tau = "some τ"
      if let curve, let zero = curve.deviation.firstIndex(of: 0) {
        tau = formatSeconds(curve.tauSeconds[zero])
      }
      problem =
        "\(axis.columnName)'s Allan deviation is zero at τ = \(tau): the axis barely changes, too "
        + "little noise to read N, B and K off; record the unit again (a real axis shows noise)"
    }
    return RecordingError(.notMeasurable, path: source, problem)
  }

  /// The same with timing already measured.
  public static func analyze(
    _ recording: InertialRecording, timing: SampleTiming, axes: [InertialAxis]
  ) -> AllanAnalysis {
    var sizes = AllanDeviation.clusterSizes(
      sampleCount: recording.count, samplePeriodSeconds: timing.samplePeriodSeconds)
    var curves: [InertialAxis: AllanCurve] = [:]
    var readOffs: [InertialAxis: NoiseReadOffs] = [:]
    for axis in axes {
      let curve = AllanDeviation.overlapping(
        recording.samples(axis), samplePeriodSeconds: timing.samplePeriodSeconds,
        clusterSizes: sizes, gaps: timing.gaps)
      curves[axis] = curve
      readOffs[axis] = NoiseReadOffs(curve: curve)
      // With gaps, a cluster size may have no term that counts: it is left out of the curve,
      // and of the grid (which terms count depends on the gaps only, the same on every axis).
      sizes = curve.clusterSizes
    }
    return AllanAnalysis(timing: timing, clusterSizes: sizes, curves: curves, readOffs: readOffs)
  }

  /// The τ values of the grid, seconds.
  public var tauSeconds: [Double] { clusterSizes.map { Double($0) * timing.samplePeriodSeconds } }
}
