import HardwareAbstraction

/// What became of every sample the simulated chip produced: the reconciliation a HIL report
/// states and a test demands to be exact.
///
/// Every produced sample ends in exactly one of these, so that
/// `produced == startUp + warmUp + delivered + decimated + lostInLink + countedMissed −
/// countedButNotProduced + inFlightAtEnd + silentLosses` (`isBalanced`).
public struct SampleAccounting: Hashable, Sendable {
  /// Samples the chip produced during the run (`SimulatedMPU6050.onSampleProduced`), up to the
  /// loop's last step.
  public var produced: UInt64 = 0
  /// Produced before streaming began (identification, reset, configuration, self-test): the
  /// loop drops the edges that queued meanwhile, by design.
  public var startUp: UInt64 = 0
  /// Discarded as warm-up after start-up (`FirmwareSettings.warmUpSamples`, while the DLPF and
  /// the chip settle).
  public var warmUp: UInt64 = 0
  /// Samples whose frame reached the host.
  public var delivered: UInt64 = 0
  /// Samples the loop consumed without a frame of their own because of the output rate (with
  /// frames at 50 Hz from a 100 Hz chip, every other sample).
  public var decimated: UInt64 = 0
  /// Samples whose frame the loop made but the host did not receive, visible to the host as a
  /// gap in the frame sequence (a serial unplug, a full transmit queue): counted, not silent.
  public var lostInLink: UInt64 = 0
  /// Samples the loop counted missed (the frames' missed-sample counter).
  public var countedMissed: UInt64 = 0
  /// Sample slots the loop counted missed although the chip produced nothing then (it was
  /// unpowered or asleep after a reset): the missed counter counts time, not the chip's samples.
  public var countedButNotProduced: UInt64 = 0
  /// Produced after the last sample the loop accounted for when the run stopped (read but not
  /// yet framed, or not yet read).
  public var inFlightAtEnd: UInt64 = 0
  /// Produced, and neither delivered nor counted anywhere: what must be 0.
  public var silentLosses: UInt64 = 0
  /// The sample times of the frames after which silent losses were found (the first 20), and
  /// of the frames after which the loop counted samples the chip had not produced (the first
  /// 20): where to look.
  public var silentLossTimes: [Timestamp] = []
  public var countedButNotProducedTimes: [Timestamp] = []

  public init() {}

  /// Whether the categories add up to what was produced.
  public var isBalanced: Bool {
    let accounted =
      startUp + warmUp + delivered + decimated + lostInLink + countedMissed + inFlightAtEnd
      + silentLosses
    return accounted == produced + countedButNotProduced
  }
}

/// One frame as the reconciliation needs it: its sequence number, sample time and the
/// cumulative missed-sample count it carries.
public struct FrameRecord: Hashable, Sendable {
  public var sequence: UInt32
  public var sampleTime: Timestamp
  public var missedSamples: UInt32

  public init(sequence: UInt32, sampleTime: Timestamp, missedSamples: UInt32) {
    self.sequence = sequence
    self.sampleTime = sampleTime
    self.missedSamples = missedSamples
  }
}

/// Reconciles the samples the chip produced with the frames a host received, as they arrive.
///
/// The chip reports every sample's time (`produced(at:)`); the host reports every frame it
/// decodes (`received(_:)`), in stream order. For each frame the ledger compares two counts:
/// the samples the chip produced up to the frame's sample time (plus half a period, for edge
/// jitter and poll times a little after the sample), and the samples the frame itself accounts
/// for — start-up, warm-up, the consumed samples its sequence number implies (frame `n` is
/// consumed sample `(n − 1)·D + 1` at an output divider `D`) and its cumulative missed count.
/// The difference moves only when something happened between two frames:
///
/// - **up** by `k`: `k` samples were produced that nothing has counted yet. Usually they are
///   counted a little later (the FIFO fallback dates an overflow's losses a few drains after
///   the fact; a FIFO batch's reconstructed times can put a frame a sample early or late), so
///   the excess waits as *pending* for `settlingSeconds`; whatever is still pending then is a
///   **silent loss**.
/// - **down**: the loop counted more than the chip produced. This first settles pending
///   excess; the rest is **counted but not produced** (the chip was resetting or unpowered, and
///   the loop's missed counter, which counts elapsed sample slots, counted them anyway).
///
/// Memory stays bounded: produced times are kept only until a frame passes them. A class: the
/// chip's callback and the host's decoder feed the same ledger; one thread.
public final class SampleLedger {
  /// How long an excess may wait to be accounted for before it is a silent loss, ns (the
  /// driver dates FIFO losses within a few drains, or by estimate after 30 s).
  let settlingNanoseconds: Int64
  /// Half the chip's sample period, ns: a frame accounts for samples up to its time plus this.
  let toleranceNanoseconds: Int64
  /// The output divider (samples per frame).
  let divider: UInt64
  /// Samples discarded as warm-up.
  let warmUpSamples: UInt64

  /// Production times not yet passed by a frame.
  private var pendingTimes: [Timestamp] = []
  private var pendingStart = 0
  /// Produced samples already passed by frames.
  private var passed: UInt64 = 0
  private var producedTotal: UInt64 = 0
  private var startUpBoundary: Timestamp?
  private var startUpCount: UInt64 = 0
  private var closedAt: Timestamp?

  /// The running difference (produced − accounted) at the last frame.
  private var balance: Int64 = 0
  /// Excess waiting to be accounted for: (sample time it appeared at, count), oldest first.
  private var excess: [(time: Timestamp, count: Int64)] = []
  private var excessStart = 0
  private var silent: UInt64 = 0
  private var notProduced: UInt64 = 0
  private var silentTimes: [Timestamp] = []
  private var notProducedTimes: [Timestamp] = []
  private var delivered: UInt64 = 0

  public init(
    samplePeriodNanoseconds: Int64, divider: Int, warmUpSamples: Int,
    settlingSeconds: Double = 40
  ) {
    toleranceNanoseconds = samplePeriodNanoseconds / 2
    self.divider = UInt64(max(1, divider))
    self.warmUpSamples = UInt64(max(0, warmUpSamples))
    settlingNanoseconds = Int64(settlingSeconds * 1e9)
    pendingTimes.reserveCapacity(4096)
    excess.reserveCapacity(64)
  }

  /// The chip produced a sample at `time`.
  public func produced(at time: Timestamp) {
    if let closedAt, time > closedAt { return }
    producedTotal += 1
    if startUpBoundary == nil {
      startUpCount += 1
      return
    }
    pendingTimes.append(time)
  }

  /// Streaming begins: samples produced until now belong to start-up.
  public func startStreaming(at time: Timestamp) {
    startUpBoundary = time
  }

  /// Stops counting production (the run's end); later samples are not the run's.
  public func close(at time: Timestamp) {
    closedAt = time
  }

  /// The host received `frame`.
  public func received(_ frame: FrameRecord) {
    guard frame.sequence > 0 else { return }
    delivered += 1
    settle(producedThrough(frame.sampleTime) - accounted(by: frame), at: frame.sampleTime)
  }

  /// Applies a new running difference at `time`.
  private func settle(_ newBalance: Int64, at time: Timestamp) {
    var change = newBalance - balance
    balance = newBalance
    if change > 0 {
      excess.append((time, change))
    } else {
      while change < 0, excessStart < excess.count {
        let take = min(-change, excess[excessStart].count)
        excess[excessStart].count -= take
        change += take
        if excess[excessStart].count == 0 { excessStart += 1 }
      }
      if change < 0 {
        notProduced += UInt64(-change)
        if notProducedTimes.count < 20 { notProducedTimes.append(time) }
      }
    }
    // Excess older than the settling time is lost for good.
    while excessStart < excess.count,
      time.nanoseconds(since: excess[excessStart].time) > settlingNanoseconds
    {
      silent += UInt64(excess[excessStart].count)
      if silentTimes.count < 20 { silentTimes.append(excess[excessStart].time) }
      excessStart += 1
    }
    if excessStart > 32 {
      excess.removeFirst(excessStart)
      excessStart = 0
    }
  }

  private func compact() {
    if pendingStart > 2048, pendingStart * 2 > pendingTimes.count {
      pendingTimes.removeFirst(pendingStart)
      pendingStart = 0
    }
  }

  /// Samples produced up to `time` plus the tolerance, passing them.
  private func producedThrough(_ time: Timestamp) -> Int64 {
    let limit = time.advanced(byNanoseconds: toleranceNanoseconds)
    while pendingStart < pendingTimes.count, pendingTimes[pendingStart] <= limit {
      pendingStart += 1
      passed += 1
    }
    compact()
    return Int64(startUpCount + passed)
  }

  /// What the frame accounts for, cumulatively.
  private func accounted(by frame: FrameRecord) -> Int64 {
    Int64(startUpCount + warmUpSamples) + Int64(frame.sequence - 1) * Int64(divider) + 1
      + Int64(frame.missedSamples)
  }

  /// The accounting at the end of the run. `loopLastFrame` is the last frame the loop made
  /// (whether or not it arrived), `loopSamples` the samples it consumed after warm-up and
  /// `loopWarmUp` those it discarded as warm-up: frames after the last one received were lost
  /// in the link, and the loop's last frame says how many samples they stood for.
  public func finish(loopLastFrame: FrameRecord?, loopSamples: UInt64, loopWarmUp: UInt64)
    -> SampleAccounting
  {
    var result = SampleAccounting()
    result.produced = producedTotal
    result.startUp = startUpCount
    guard let last = loopLastFrame, last.sequence > 0 else {
      // No frame at all: after start-up, only warm-up and what was still in flight.
      result.warmUp = min(loopWarmUp, producedTotal - startUpCount)
      result.inFlightAtEnd = producedTotal - startUpCount - result.warmUp
      return result
    }
    // Close the books at the loop's last frame, received or not.
    let producedAtLast = producedThrough(last.sampleTime)
    settle(producedAtLast - accounted(by: last), at: last.sampleTime)
    var pending: Int64 = 0
    for index in excessStart..<excess.count { pending += excess[index].count }
    let framedThroughLast = UInt64(last.sequence - 1) * divider + 1
    let consumedAfterLast = loopSamples > framedThroughLast ? loopSamples - framedThroughLast : 0
    result.warmUp = warmUpSamples
    result.delivered = delivered
    result.lostInLink = UInt64(last.sequence) > delivered ? UInt64(last.sequence) - delivered : 0
    result.decimated = UInt64(last.sequence - 1) * (divider - 1) + consumedAfterLast
    result.countedMissed = UInt64(last.missedSamples)
    result.countedButNotProduced = notProduced
    // Excess still waiting when the run ends will never be accounted for: silent.
    result.silentLosses = silent + UInt64(max(0, pending))
    for index in excessStart..<excess.count where excess[index].count > 0 {
      if silentTimes.count < 20 { silentTimes.append(excess[index].time) }
    }
    result.silentLossTimes = silentTimes
    result.countedButNotProducedTimes = notProducedTimes
    let tail = Int64(producedTotal) - producedAtLast - Int64(consumedAfterLast)
    result.inFlightAtEnd = UInt64(max(0, tail))
    return result
  }
}
