import HardwareAbstraction
import Telemetry

/// One stretch of abnormal frames as the host saw it: flagged frames (gap, degraded timing, I2C
/// recovery), frames missing from the sequence, or sample times further apart than 1.5 frame
/// periods. Stretches closer than half a second are one episode.
public struct FaultEpisode: Hashable, Sendable {
  /// The sample time of the last normal frame before it, seconds of motion time (the last
  /// moment all was well).
  public var lastNormalSeconds: Double
  /// The sample time of the first normal frame after it, seconds (`nil`: the run ended first).
  public var firstNormalSeconds: Double?
  /// The first and last abnormal frame's sample times, seconds.
  public var firstAbnormalSeconds: Double
  public var lastAbnormalSeconds: Double
  /// Every flag the abnormal frames carried.
  public var flags: TelemetryFlags
  /// Abnormal frames received.
  public var abnormalFrames: UInt64
  /// Frames missing from the sequence in it.
  public var framesLost: UInt64
  /// Samples the loop counted missed in it.
  public var samplesMissed: UInt64

  /// How long the host saw things abnormal: from the last normal frame before to the first
  /// normal frame after, seconds (to the last abnormal frame when the run ended first).
  public var durationSeconds: Double {
    (firstNormalSeconds ?? lastAbnormalSeconds) - lastNormalSeconds
  }
}

/// Finds fault episodes in the frame stream, frame by frame (bounded memory: at most
/// `maximumEpisodes` are kept, the count goes on).
struct RecoveryTracker {
  /// The flags that mean something went wrong below the estimator. Without an INT wire the
  /// FIFO fallback is the normal state and every frame says `degradedTiming`: then only gaps
  /// and I2C recovery count.
  let faultFlags: TelemetryFlags
  static let maximumEpisodes = 1000
  /// The flags an episode reports: the health flags (not the estimator's state: rest,
  /// initialising, acceleration rejected).
  static let reportedFlags: TelemetryFlags = [
    .gap, .degradedTiming, .i2cRecovery, .clipping, .recovering,
  ]
  /// Abnormal stretches closer than this are one episode, ns.
  static let mergeNanoseconds: Int64 = 500_000_000

  let framePeriodNanoseconds: Int64
  let motionStart: Timestamp
  private(set) var episodes: [FaultEpisode] = []
  private(set) var episodeCount = 0
  private var open: FaultEpisode?
  private var lastNormal: Timestamp?
  private var lastAbnormal: Timestamp?
  private var previous: (sequence: UInt32, time: Timestamp, missed: UInt32)?

  init(framePeriodNanoseconds: Int64, motionStart: Timestamp, interruptWired: Bool = true) {
    self.framePeriodNanoseconds = framePeriodNanoseconds
    self.motionStart = motionStart
    faultFlags = interruptWired ? [.gap, .degradedTiming, .i2cRecovery] : [.gap, .i2cRecovery]
  }

  private func seconds(_ time: Timestamp) -> Double {
    Double(time.nanoseconds(since: motionStart)) * 1e-9
  }

  mutating func frame(sequence: UInt32?, time: Timestamp, flags: TelemetryFlags?, missed: UInt32?) {
    var abnormal = false
    var lost: UInt64 = 0
    var missedHere: UInt64 = 0
    if let flags, !flags.intersection(faultFlags).isEmpty { abnormal = true }
    if let previous {
      if time.nanoseconds(since: previous.time) > framePeriodNanoseconds * 3 / 2 {
        abnormal = true
      }
      if let sequence, sequence &- previous.sequence > 1 {
        abnormal = true
        lost = UInt64(sequence &- previous.sequence &- 1)
      }
      if let missed, missed > previous.missed { missedHere = UInt64(missed - previous.missed) }
    }
    if abnormal {
      if var episode = open,
        let lastAbnormal, time.nanoseconds(since: lastAbnormal) <= Self.mergeNanoseconds
      {
        episode.lastAbnormalSeconds = seconds(time)
        episode.flags.formUnion((flags ?? []).intersection(Self.reportedFlags))
        episode.abnormalFrames += 1
        episode.framesLost += lost
        episode.samplesMissed += missedHere
        episode.firstNormalSeconds = nil
        open = episode
      } else {
        close()
        open = FaultEpisode(
          lastNormalSeconds: seconds(lastNormal ?? previous?.time ?? time), firstNormalSeconds: nil,
          firstAbnormalSeconds: seconds(time), lastAbnormalSeconds: seconds(time),
          flags: (flags ?? []).intersection(Self.reportedFlags), abnormalFrames: 1,
          framesLost: lost, samplesMissed: missedHere)
      }
      lastAbnormal = time
    } else {
      lastNormal = time
      if var episode = open {
        if episode.firstNormalSeconds == nil { episode.firstNormalSeconds = seconds(time) }
        open = episode
        if let lastAbnormal, time.nanoseconds(since: lastAbnormal) > Self.mergeNanoseconds {
          close()
        }
      }
    }
    previous = (sequence ?? ((previous?.sequence ?? 0) &+ 1), time, missed ?? previous?.missed ?? 0)
  }

  private mutating func close() {
    guard let episode = open else { return }
    open = nil
    episodeCount += 1
    if episodes.count < Self.maximumEpisodes { episodes.append(episode) }
  }

  /// Closes the episode still open at the end of the run.
  mutating func finish() { close() }
}
