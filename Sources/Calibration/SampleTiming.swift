/// The sample period of a recording, measured from its timestamps, after checking that the
/// samples are uniformly spaced.
///
/// **Gaps are rejected, not resampled.** The Allan deviation and the bias averages assume one
/// sample every T₀. Interpolating across a gap would invent data, and resampling white noise onto
/// a shifted grid low-pass filters it, which lowers σ at short τ: both would be silently wrong.
/// A recording with a gap is split or re-recorded instead; the error names the line.
///
/// **The period is the mean interval over the whole span**, (t_last − t_first)/(N − 1), once no
/// gap was found; the median interval finds the gaps. The chip is the metronome (DESIGN.md): its
/// samples are evenly spaced in its own clock, so timestamp jitter averages out over the span,
/// whereas the median of intervals is only as good as the timestamps' resolution (a recording
/// stamped to the millisecond at a true 9.93 ms period has a median interval of 10 ms, 0.7 %
/// wrong, while the span gives the period to parts per million).
public struct SampleTiming: Sendable, Hashable {
  /// The mean sample period, seconds.
  public var samplePeriodSeconds: Double
  /// The median interval between consecutive timestamps, seconds.
  public var medianIntervalSeconds: Double
  public var sampleCount: Int

  /// N × T₀, seconds: the span the samples cover (one period longer than last − first).
  public var durationSeconds: Double { Double(sampleCount) * samplePeriodSeconds }

  /// An interval above this many median intervals is a gap (as the loop's sample clock does).
  public static let gapFactor = 1.5
  /// An interval below this many median intervals is an extra sample (a duplicated edge).
  public static let extraFactor = 0.5

  /// Measures and checks the timing of `recording`.
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
    for (i, interval) in intervals.enumerated() {
      if interval > gapFactor * median {
        let missing = Int((interval / median).rounded()) - 1
        throw RecordingError(
          .notUniform, path: recording.source, location: recording.location(ofSample: i + 1),
          "a gap of \(formatSeconds(interval)) after t_s \(t[i]) (the median interval is \(formatSeconds(median)); about \(max(1, missing)) sample\(missing == 1 ? "" : "s") missing). The analyses need evenly spaced samples: cut the recording at the gap or record again"
        )
      }
      if interval < extraFactor * median {
        throw RecordingError(
          .notUniform, path: recording.source, location: recording.location(ofSample: i + 1),
          "only \(formatSeconds(interval)) after the previous sample (the median interval is \(formatSeconds(median))): an extra or duplicated sample. The analyses need evenly spaced samples: remove it or record again"
        )
      }
    }
    let period = (t[t.count - 1] - t[0]) / Double(t.count - 1)
    return SampleTiming(
      samplePeriodSeconds: period, medianIntervalSeconds: median, sampleCount: t.count)
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

func formatSeconds(_ seconds: Double) -> String {
  if seconds < 1 { return "\(((seconds * 1e5).rounded()) / 100) ms" }
  return "\((seconds * 1000).rounded() / 1000) s"
}
