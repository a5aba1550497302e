/// Samples missing before the sample at `index` (0-based, among the samples present).
public struct SampleGap: Sendable, Hashable {
  public var index: Int
  public var missing: Int

  public init(index: Int, missing: Int) {
    self.index = index
    self.missing = missing
  }
}

/// The sample period of a recording, measured from its timestamps, and the gaps in it.
///
/// **Gaps are measured, not filled.** The Allan deviation and the bias averages assume one
/// sample every T₀. Interpolating across a gap would invent data, and resampling white noise onto
/// a shifted grid low-pass filters it, which lowers σ at short τ: both would be silently wrong.
/// So the samples between two gaps form a *run*; an averaging window never spans a gap
/// (`windows(of:)`), and the Allan deviation places the samples on the chip's grid with the
/// gaps as holes (`AllanDeviation.overlapping(_:samplePeriodSeconds:clusterSizes:gaps:)`). A
/// bench recording of hours that lost a sample to a missed edge, or a second to a bus lock-up,
/// is analysed whole instead of refused (before, one missing sample refused the file and told
/// the user to cut it, which no command does). An interval shorter than half the median is an
/// extra sample (a duplicated edge, a hand-edited file) and is still refused: its time cannot
/// be placed on the chip's grid.
///
/// **The period is the mean interval within the runs**, Σ(t_last − t_first)/Σ(n − 1) over the
/// runs (the whole span when there is no gap); the median interval finds the gaps. The chip is
/// the metronome (DESIGN.md): its samples are evenly spaced in its own clock, so timestamp
/// jitter averages out over the span, whereas the median of intervals is only as good as the
/// timestamps' resolution (a recording stamped to the millisecond at a true 9.93 ms period has a
/// median interval of 10 ms, 0.7 % wrong, while the span gives the period to parts per million).
public struct SampleTiming: Sendable, Hashable {
  /// The mean sample period, seconds.
  public var samplePeriodSeconds: Double
  /// The median interval between consecutive timestamps, seconds.
  public var medianIntervalSeconds: Double
  /// The samples the recording holds (those missing in gaps not counted).
  public var sampleCount: Int
  /// Consecutive samples with no gap between them, as index ranges in order: one range of
  /// every sample when nothing is missing.
  public var runs: [Range<Int>]
  /// The samples missing in the gaps: each gap's interval in periods, rounded, less one.
  public var missingSamples: Int
  /// The gaps, in order.
  public var gaps: [SampleGap] {
    zip(runs.dropFirst(), gapMissing).map { SampleGap(index: $0.lowerBound, missing: $1) }
  }
  /// The sample location of the first gap, for messages (`"line 402"`); `nil` without gaps.
  public var firstGapLocation: String?

  var gapMissing: [Int]

  /// N × T₀, seconds: the time the samples cover (the gaps not counted; one period longer
  /// than last − first when there is no gap).
  public var durationSeconds: Double { Double(sampleCount) * samplePeriodSeconds }
  /// (N + missing) × T₀, seconds: first sample to last, gaps included.
  public var spanSeconds: Double { Double(sampleCount + missingSamples) * samplePeriodSeconds }
  /// The number of gaps.
  public var gapCount: Int { runs.count - 1 }

  /// What a person should know about the gaps, one sentence; `nil` without gaps.
  public var gapNote: String? {
    guard gapCount > 0 else { return nil }
    let share = Double(missingSamples) / Double(sampleCount + missingSamples) * 100
    let longest = gapMissing.max() ?? 0
    return
      "\(gapCount) gap\(gapCount == 1 ? "" : "s") in the samples (\(missingSamples) sample\(missingSamples == 1 ? "" : "s") missing, \(formatPercent(share)) of the span; the first before \(firstGapLocation ?? "?"), the longest \(formatSeconds(Double(longest + 1) * samplePeriodSeconds))). No averaging window spans a gap; an Allan cluster counts when at most a tenth of its samples are missing"
  }

  /// Timing for `sampleCount` samples with no gap.
  public init(samplePeriodSeconds: Double, medianIntervalSeconds: Double, sampleCount: Int) {
    self.samplePeriodSeconds = samplePeriodSeconds
    self.medianIntervalSeconds = medianIntervalSeconds
    self.sampleCount = sampleCount
    runs = [0..<sampleCount]
    missingSamples = 0
    gapMissing = []
    firstGapLocation = nil
  }

  /// Consecutive whole windows of `length` samples, in order, none spanning a gap (what is
  /// left at the end of a run is not used). Without gaps: `0..<length`, `length..<2·length`, …
  public func windows(of length: Int) -> [Range<Int>] {
    guard length >= 1 else { return [] }
    var result: [Range<Int>] = []
    for run in runs {
      var start = run.lowerBound
      while start + length <= run.upperBound {
        result.append(start..<(start + length))
        start += length
      }
    }
    return result
  }

  /// An interval above this many median intervals is a gap (as the loop's sample clock does).
  public static let gapFactor = 1.5
  /// An interval below this many median intervals is an extra sample (a duplicated edge).
  public static let extraFactor = 0.5
  /// More samples missing in the gaps than this many times those present refuses the
  /// recording: it is mostly holes.
  public static let maximumMissingRatio = 9

  /// Measures the timing of `recording`: its period, its gaps and the runs between them.
  /// Throws for fewer than three samples and for an extra sample.
  public static func measure(_ recording: InertialRecording) throws(RecordingError) -> SampleTiming
  {
    let t = recording.timeSeconds
    guard t.count >= 3 else {
      throw RecordingError(
        .tooShort, path: recording.source,
        "holds \(t.count) sample\(t.count == 1 ? "" : "s"); an analysis needs a still recording of at least minutes"
      )
    }
    var intervals = [Double](repeating: 0, count: t.count - 1)
    for i in 0..<intervals.count { intervals[i] = t[i + 1] - t[i] }
    var scratch = intervals
    let median = selectMedian(&scratch)
    var runs: [Range<Int>] = []
    var runStart = 0
    for (i, interval) in intervals.enumerated() {
      if interval < extraFactor * median {
        throw RecordingError(
          .notUniform, path: recording.source, location: recording.location(ofSample: i + 1),
          "only \(formatSeconds(interval)) after the previous sample (the median interval is \(formatSeconds(median))): an extra or duplicated sample. The analyses need evenly spaced samples: remove it or record again"
        )
      }
      if interval > gapFactor * median {
        runs.append(runStart..<(i + 1))
        runStart = i + 1
      }
    }
    runs.append(runStart..<t.count)
    // The period from within the runs: the span of each, over its intervals.
    var span = 0.0
    var steps = 0
    for run in runs where run.count >= 2 {
      span += t[run.upperBound - 1] - t[run.lowerBound]
      steps += run.count - 1
    }
    // At least half the intervals are within 1.5 medians, so some run has two samples.
    let period = steps > 0 ? span / Double(steps) : median
    var timing = SampleTiming(
      samplePeriodSeconds: period, medianIntervalSeconds: median, sampleCount: t.count)
    timing.runs = runs
    // Counted as doubles, and compared with the limit before they become integers: a time far
    // ahead of the rest (1e34 s, a damaged or hand-made file) is a gap of more samples than an
    // `Int` holds, and an interval too long for a double (−1e308 s to 1e308 s) of infinitely
    // many.
    let gapMissing = runs.dropFirst().map { run in
      let interval = t[run.lowerBound] - t[run.lowerBound - 1]
      return max(1, (interval / period).rounded() - 1)
    }
    let missing = gapMissing.reduce(0, +)
    // Mostly holes: a clock set mid-recording or files joined, not lost samples; bridging it
    // would also cost memory in proportion (the Allan deviation's grid).
    guard missing <= Double(maximumMissingRatio * t.count) else {
      let longest = gapMissing.indices.max { gapMissing[$0] < gapMissing[$1] }!
      let after = runs[longest + 1].lowerBound
      let count = missing < 1e15 ? "\(Int(missing))" : "more than 10¹⁵"
      throw RecordingError(
        .notUniform, path: recording.source, location: recording.location(ofSample: after),
        "the recording is mostly holes: its \(timing.gapCount) gap\(timing.gapCount == 1 ? "" : "s") miss \(count) samples, more than \(maximumMissingRatio) times the \(t.count) it holds; the longest is a gap of \(formatSeconds(t[after] - t[after - 1])) after t_s \(t[after - 1]). If the times jumped (a clock set while recording, recordings joined), split the recording at that gap; if samples were lost throughout, find why (plumb run's summary counts them: the wiring, the bus speed, a stalled host) and record again"
      )
    }
    timing.gapMissing = gapMissing.map { Int($0) }
    timing.missingSamples = Int(missing)
    if runs.count > 1 { timing.firstGapLocation = recording.location(ofSample: runs[1].lowerBound) }
    return timing
  }

  /// The median of `values` by quickselect (reorders `values`). For an even count, the upper of
  /// the two middle values, which is fine for a gap threshold.
  static func selectMedian(_ values: inout [Double]) -> Double {
    var low = 0
    var high = values.count - 1
    let target = values.count / 2
    while low < high {
      let pivot = values[(low + high) / 2]
      var i = low
      var j = high
      while i <= j {
        while values[i] < pivot { i += 1 }
        while values[j] > pivot { j -= 1 }
        if i <= j {
          values.swapAt(i, j)
          i += 1
          j -= 1
        }
      }
      if target <= j {
        high = j
      } else if target >= i {
        low = i
      } else {
        break
      }
    }
    return values[target]
  }
}

func formatPercent(_ percent: Double) -> String {
  if percent >= 10 { return "\(Int(percent.rounded())) %" }
  if percent >= 0.1 { return "\((percent * 10).rounded() / 10) %" }
  return "\((percent * 100).rounded() / 100) %"
}

func formatSeconds(_ seconds: Double) -> String {
  if seconds < 1 { return "\(((seconds * 1e5).rounded()) / 100) ms" }
  return "\((seconds * 1000).rounded() / 1000) s"
}
