import ByteFormats

/// A pass/fail limit on one of a run's figures, for CI: `plumb-hil run … --limit
/// incl_rms_deg=2`. Every limit is an upper bound; a run passes when every figure is at most
/// its limit. A figure that the run did not measure (no frame compared with the truth, no
/// frame carrying the bias estimate) fails its limit instead of passing vacuously.
public struct HILLimit: Hashable, Sendable {
  /// The figures a limit can bound, named as in the summary line and the report.
  public enum Metric: String, CaseIterable, Hashable, Sendable {
    case inclinationRMS = "incl_rms_deg"
    case inclinationMaximum = "incl_max_deg"
    case headingRMS = "heading_rms_deg"
    case headingMaximum = "heading_max_deg"
    case headingDriftRMS = "heading_drift_rms_deg"
    case biasFinal = "bias_final_dps"
    case missed = "missed"
    case falseRestFrames = "false_rest_frames"

    /// What it is, for `--help`.
    public var meaning: String {
      switch self {
      case .inclinationRMS: "RMS inclination error, degrees"
      case .inclinationMaximum: "worst inclination error, degrees"
      case .headingRMS: "RMS heading error, degrees"
      case .headingMaximum: "worst heading error, degrees"
      case .headingDriftRMS: "RMS heading error about its mean over the run (BROAD's), degrees"
      case .biasFinal: "gyro-bias error at the last frame, °/s (binary frames carry the bias)"
      case .missed: "samples the loop counted as missed"
      case .falseRestFrames: "frames flagged at rest while the board moved"
      }
    }

    /// The run's value, or `nil` with why when the run did not measure it.
    func value(in result: HILResult) -> (value: Double?, why: String) {
      let a = result.accuracy
      let noFrames = "no frame was compared with the truth"
      switch self {
      case .inclinationRMS: return (a.frames > 0 ? a.inclinationRMSDegrees : nil, noFrames)
      case .inclinationMaximum: return (a.frames > 0 ? a.inclinationMaximumDegrees : nil, noFrames)
      case .headingRMS: return (a.frames > 0 ? a.headingRMSDegrees : nil, noFrames)
      case .headingMaximum: return (a.frames > 0 ? a.headingMaximumDegrees : nil, noFrames)
      case .headingDriftRMS: return (a.frames > 0 ? a.headingDriftRMSDegrees : nil, noFrames)
      case .biasFinal:
        return (
          a.biasFrames > 0 ? a.biasErrorFinalDegreesPerSecond : nil,
          "no frame carried the bias estimate (binary frames do)"
        )
      case .missed: return (Double(result.accounting.countedMissed), "")
      case .falseRestFrames:
        return (a.frames > 0 ? Double(a.restFlaggedWhileMoving) : nil, noFrames)
      }
    }
  }

  public var metric: Metric
  public var maximum: Double

  public init(metric: Metric, maximum: Double) {
    self.metric = metric
    self.maximum = maximum
  }

  /// Reads `NAME=MAX`; the error says what is wrong and lists the names.
  public init(parsing text: String) throws(HILLimitError) {
    let names = Metric.allCases.map(\.rawValue).joined(separator: ", ")
    let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
    guard parts.count == 2 else {
      throw HILLimitError("'\(text)' is not NAME=MAX (e.g. incl_rms_deg=2); names: \(names)")
    }
    guard let metric = Metric(rawValue: String(parts[0])) else {
      throw HILLimitError("'\(parts[0])' is not a figure a limit can bound; names: \(names)")
    }
    guard let maximum = Double(parts[1]), maximum.isFinite, maximum >= 0 else {
      throw HILLimitError(
        "'\(parts[1])' is not a limit for \(metric.rawValue): give a number ≥ 0 (\(metric.meaning))"
      )
    }
    self.init(metric: metric, maximum: maximum)
  }

  /// The verdict on `result`: one line for people, and whether the run is within the limit.
  public func verdict(on result: HILResult) -> (line: String, passed: Bool) {
    let bound = "limit \(metric.rawValue) ≤ \(compact(maximum))"
    let (value, why) = metric.value(in: result)
    guard let value else { return ("\(bound): not measured: \(why) — fail", false) }
    if value <= maximum { return ("\(bound): \(compact(value)) — pass", true) }
    return ("\(bound): \(compact(value)) — \(metric.rawValue) exceeded", false)
  }

  private func compact(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15
      ? String(Int64(value)) : NumberText.fixed(value, 6)
  }
}

/// A `--limit` that cannot be read.
public struct HILLimitError: Error, Hashable, Sendable, CustomStringConvertible {
  public var description: String
  init(_ description: String) { self.description = description }
}
