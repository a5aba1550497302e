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
/// (`WindowPlacer`), and the Allan deviation places the samples on the chip's grid with the
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
    guard t.count >= 3 else { throw tooFewSamples(t.count, source: recording.source) }
    var intervals = [Double](repeating: 0, count: t.count - 1)
    for i in 0..<intervals.count { intervals[i] = t[i + 1] - t[i] }
    var runs = RunFinder(median: selectMedian(&intervals))
    for time in t { runs.add(time, line: 0) }
    return try runs.timing(recording)
  }

  /// The same for samples read in passes (a recording file too long to hold): one pass for the
  /// sample count and the median interval (`MedianSelection`: more passes, at most four in all,
  /// when the intervals are too many to hold and the median is not found in one), one for the
  /// runs and gaps. `observe` sees every sample of the first pass. The same figures as
  /// `measure(_:)` on the same samples, bit for bit.
  public static func measure(
    _ source: some SampleSource, observing observe: (RecordingSample) -> Void = { _ in }
  ) throws(RecordingError) -> SampleTiming {
    var median = MedianSelection()
    var count = 0
    var previous = 0.0
    try source.forEachSample { sample in
      observe(sample)
      if count > 0 { median.add(sample.timeSeconds - previous) }
      previous = sample.timeSeconds
      count += 1
    }
    guard count >= 3 else { throw tooFewSamples(count, source: source.source) }
    median.nextPass()
    while median.value == nil {
      var first = true
      try source.forEachSample { sample in
        if !first { median.add(sample.timeSeconds - previous) }
        previous = sample.timeSeconds
        first = false
      }
      median.nextPass()
    }
    var runs = RunFinder(median: median.value!)
    try source.forEachSample { runs.add($0.timeSeconds, line: $0.line) }
    return try runs.timing(source)
  }

  static func tooFewSamples(_ count: Int, source: String) -> RecordingError {
    RecordingError(
      .tooShort, path: source,
      "holds \(count) sample\(count == 1 ? "" : "s"); an analysis needs a still recording of at least minutes"
    )
  }

  /// The median of `values` by quickselect (reorders `values`). For an even count, the upper of
  /// the two middle values, which is fine for a gap threshold.
  static func selectMedian(_ values: inout [Double]) -> Double {
    select(&values, rank: values.count / 2)
  }

  /// The value of 0-based `rank` among `values` in ascending order, by quickselect (reorders
  /// `values`).
  static func select(_ values: inout [Double], rank target: Int) -> Double {
    var low = 0
    var high = values.count - 1
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

/// Places samples, in index order, in consecutive whole windows of `length` samples, none
/// spanning a gap (what is left at the end of a run is not used; without gaps: 0..<length,
/// length..<2·length, …): the averaging windows of the temperature fit and the rest detector's
/// statistics, found sample by sample in a pass.
struct WindowPlacer {
  let runs: [Range<Int>]
  let length: Int
  var run = 0

  init(_ timing: SampleTiming, length: Int) {
    runs = timing.runs
    self.length = length
  }

  /// Sample `index`'s position in its window (0 ..< length); `nil` outside every window (the
  /// rest of a run). Indices must come in increasing order.
  mutating func position(of index: Int) -> Int? {
    while run < runs.count && index >= runs[run].upperBound { run += 1 }
    guard run < runs.count, index >= runs[run].lowerBound else { return nil }
    let offset = index - runs[run].lowerBound
    return offset < runs[run].count / length * length ? offset % length : nil
  }
}

/// Finds the runs and gaps of a recording from its sample times, one at a time, given the
/// median interval: what `SampleTiming.measure` does once it has the median, for samples in
/// memory or read in a pass. Keeps a few numbers per gap, nothing per sample.
struct RunFinder {
  let median: Double
  var count = 0
  var runs: [Range<Int>] = []
  var runStart = 0
  var runStartTime = 0.0
  var previous = 0.0
  var span = 0.0
  var steps = 0
  /// Per gap: its interval, the time before it, and the line of the sample after it.
  var gapIntervals: [Double] = []
  var gapPreviousTimes: [Double] = []
  var gapLines: [Int] = []
  /// The first extra sample: its index, the interval before it, its line.
  var extra: (index: Int, interval: Double, line: Int)?

  init(median: Double) { self.median = median }

  /// The next sample's time (`line`: its `RecordingSample.line`).
  mutating func add(_ time: Double, line: Int) {
    defer {
      previous = time
      count += 1
    }
    guard count > 0 else {
      runStartTime = time
      return
    }
    guard extra == nil else { return }
    let interval = time - previous
    if interval < SampleTiming.extraFactor * median {
      extra = (count, interval, line)
      return
    }
    if interval > SampleTiming.gapFactor * median {
      closeRun()
      runStart = count
      runStartTime = time
      gapIntervals.append(interval)
      gapPreviousTimes.append(previous)
      gapLines.append(line)
    }
  }

  /// Ends the run before sample `count`, adding its span to the period's.
  private mutating func closeRun() {
    runs.append(runStart..<count)
    if count - runStart >= 2 {
      span += previous - runStartTime
      steps += count - runStart - 1
    }
  }

  /// The timing, once every sample was added; throws for an extra sample and for a recording
  /// that is mostly holes. `source` names the samples and locates them in messages.
  mutating func timing(_ source: some SampleSource) throws(RecordingError) -> SampleTiming {
    if let extra {
      throw RecordingError(
        .notUniform, path: source.source,
        location: source.location(ofSample: extra.index, line: extra.line),
        "only \(formatSeconds(extra.interval)) after the previous sample (the median interval is \(formatSeconds(median))): an extra or duplicated sample. The analyses need evenly spaced samples: remove it or record again"
      )
    }
    closeRun()
    // At least half the intervals are within 1.5 medians, so some run has two samples.
    let period = steps > 0 ? span / Double(steps) : median
    var timing = SampleTiming(
      samplePeriodSeconds: period, medianIntervalSeconds: median, sampleCount: count)
    timing.runs = runs
    // Counted as doubles, and compared with the limit before they become integers: a time far
    // ahead of the rest (1e34 s, a damaged or hand-made file) is a gap of more samples than an
    // `Int` holds, and an interval too long for a double (−1e308 s to 1e308 s) of infinitely
    // many.
    let gapMissing = gapIntervals.map { max(1, ($0 / period).rounded() - 1) }
    let missing = gapMissing.reduce(0, +)
    // Mostly holes: a clock set mid-recording or files joined, not lost samples; bridging it
    // would also cost memory in proportion (the Allan deviation's grid).
    guard missing <= Double(SampleTiming.maximumMissingRatio * count) else {
      let longest = gapMissing.indices.max { gapMissing[$0] < gapMissing[$1] }!
      let after = runs[longest + 1].lowerBound
      let number = missing < 1e15 ? "\(Int(missing))" : "more than 10¹⁵"
      let gaps = timing.gapCount
      throw RecordingError(
        .notUniform, path: source.source,
        location: source.location(ofSample: after, line: gapLines[longest]),
        "the recording is mostly holes: its \(gaps) gap\(gaps == 1 ? "" : "s") miss \(number) samples, more than \(SampleTiming.maximumMissingRatio) times the \(count) it holds; the longest is a gap of \(formatSeconds(gapIntervals[longest])) after t_s \(gapPreviousTimes[longest]). If the times jumped (a clock set while recording, recordings joined), split the recording at that gap; if samples were lost throughout, find why (plumb run's summary counts them: the wiring, the bus speed, a stalled host) and record again"
      )
    }
    timing.gapMissing = gapMissing.map { Int($0) }
    timing.missingSamples = Int(missing)
    if runs.count > 1 {
      timing.firstGapLocation = source.location(ofSample: runs[1].lowerBound, line: gapLines[0])
    }
    return timing
  }
}

/// The exact median of values seen in passes, in bounded memory: a radix selection on the 64
/// bits that order doubles, 16 bits a round. Each pass counts the values that share the bits
/// found so far in 2¹⁶ buckets of their next 16 bits; the bucket holding the median gives 16
/// more bits. To need fewer passes, a pass also counts, level by level, the values that share
/// 16, 32 and 48 more bits with the pass's first value (the intervals of a recording are nearly
/// all alike, so the median usually follows the first one down), and it keeps the values while
/// they are at most `capacity`, which ends it by quickselect. At most four passes; one for at
/// most `capacity` values, or when the median shares its bits with the first value. The value
/// is that of `SampleTiming.selectMedian` (the upper middle one for an even count), exactly.
struct MedianSelection {
  /// Values kept for a final quickselect: 8 MiB.
  static let capacity = 1 << 20
  var prefix: UInt64 = 0
  var prefixBits = 0
  /// The rank sought among the values with `prefix`; `nil` in the first pass (the count is
  /// not known yet).
  var rank: Int?
  /// The key of the pass's first value with `prefix`.
  var guess: UInt64 = 0
  /// Level j: the values with `prefix` and the guess's next 16·j bits, by their next 16 bits.
  var counts: [[Int]] = [[Int]](repeating: [Int](repeating: 0, count: 1 << 16), count: 4)
  var kept: [Double] = []
  var matched = 0
  private(set) var value: Double?

  /// A key in which unsigned order is the order of the doubles.
  static func key(_ x: Double) -> UInt64 {
    let bits = x.bitPattern
    return bits >> 63 == 1 ? ~bits : bits | (1 << 63)
  }

  static func double(key: UInt64) -> Double {
    Double(bitPattern: key >> 63 == 1 ? key & ~(1 << 63) : ~key)
  }

  /// The 16 bits of `key` after its first `bits`.
  static func bucket(_ key: UInt64, after bits: Int) -> Int {
    Int((key >> UInt64(48 - bits)) & 0xFFFF)
  }

  mutating func add(_ x: Double) {
    let k = Self.key(x)
    guard prefixBits == 0 || k >> UInt64(64 - prefixBits) == prefix else { return }
    if matched == 0 { guess = k }
    matched += 1
    if kept.count < Self.capacity { kept.append(x) }
    var bits = prefixBits
    var level = 0
    while true {
      counts[level][Self.bucket(k, after: bits)] += 1
      bits += 16
      level += 1
      guard bits < 64, k >> UInt64(64 - bits) == guess >> UInt64(64 - bits) else { return }
    }
  }

  /// Ends a pass and prepares the next (or sets `value`).
  mutating func nextPass() {
    var target = rank ?? matched / 2
    if matched <= Self.capacity {
      value = SampleTiming.select(&kept, rank: target)
      return
    }
    var level = 0
    while true {
      let histogram = counts[level]
      var bucket = 0
      while target >= histogram[bucket] {
        target -= histogram[bucket]
        bucket += 1
      }
      let guessed = Self.bucket(guess, after: prefixBits)
      prefix = prefix << 16 | UInt64(bucket)
      prefixBits += 16
      if prefixBits == 64 {
        value = Self.double(key: prefix)
        return
      }
      // The next level counted the values that share the guess's bits so far: these, when the
      // median's bucket is the guess's.
      guard bucket == guessed else { break }
      level += 1
    }
    rank = target
    for level in counts.indices { counts[level] = [Int](repeating: 0, count: 1 << 16) }
    kept.removeAll(keepingCapacity: true)
    matched = 0
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
