import Geometry
import HardwareAbstraction
import MPU6050Simulation
import Monitoring
import MotionScenarios
import Telemetry

/// One telemetry frame as the host decoded it, in Plumb's units and frames (kept when a run
/// asks for `keepFrames`).
public struct HILFrame: Hashable, Sendable {
  /// Frame sequence (binary, text; MAVLink: from the loop's record, see `HostAnalyser`).
  public var sequence: UInt32?
  /// Sample time, ns on the board's clock (text and MAVLink: to the millisecond).
  public var sampleTimeNanoseconds: Int64
  public var attitude: Quaternion
  public var flags: TelemetryFlags?
  public var missedSamples: UInt32?
  public var latencyMicroseconds: UInt32?
  /// Binary frames only.
  public var gyroBiasRadiansPerSecond: Vector3?
  public var linearAccelerationMetersPerSecondSquared: Vector3?
  /// When its last byte reached the host (real-time runs), ns on CLOCK_MONOTONIC.
  public var arrivalNanoseconds: Int64?
}

/// One frame the host compared with the truth (`HILOptions.keepTruth`): its sequence (nil when
/// the frame carried none), its sample time on the board's clock, the true attitude at that time
/// (Plumb's frame, body → reference) and the inclination error the accuracy figures counted.
public struct TruthRow: Hashable, Sendable {
  public var sequence: UInt32?
  public var sampleTimeNanoseconds: Int64
  public var truth: Quaternion
  public var inclinationErrorDegrees: Double

  public init(
    sequence: UInt32?, sampleTimeNanoseconds: Int64, truth: Quaternion,
    inclinationErrorDegrees: Double
  ) {
    self.sequence = sequence
    self.sampleTimeNanoseconds = sampleTimeNanoseconds
    self.truth = truth
    self.inclinationErrorDegrees = inclinationErrorDegrees
  }

  /// The CSV header `truthCSV(_:)` writes.
  public static let csvHeader =
    "sequence,sample_time_ns,truth_w,truth_x,truth_y,truth_z,incl_err_deg"
}

/// The rows as CSV: `TruthRow.csvHeader`, then one line per row; numbers in Swift's shortest
/// round-trip form (a reader gets the very doubles back), an empty sequence when there is none.
public func truthCSV(_ rows: [TruthRow]) -> String {
  var text = TruthRow.csvHeader + "\n"
  for row in rows {
    let fields: [String] = [
      row.sequence.map { String($0) } ?? "", String(row.sampleTimeNanoseconds),
      "\(row.truth.w)", "\(row.truth.x)", "\(row.truth.y)", "\(row.truth.z)",
      "\(row.inclinationErrorDegrees)",
    ]
    text += fields.joined(separator: ",") + "\n"
  }
  return text
}

/// Plotted quantities binned over the run: a fixed number of bins, so a day-long run costs no
/// more memory than a minute.
public struct RunSeries: Sendable {
  public let binSeconds: Double
  public let startSeconds: Double
  /// Per bin: frames, the largest inclination error (°; NaN where no frame was compared: the
  /// estimator's initialisation), the last heading error (°, NaN likewise), frames
  /// flagged rest, frames truly at rest, the mean estimated and true gyro bias (°/s, per axis),
  /// and the flags seen.
  public private(set) var frames: [UInt32]
  public private(set) var inclinationMaximumDegrees: [Double]
  public private(set) var headingDegrees: [Double]
  public private(set) var restFlagged: [UInt32]
  public private(set) var trulyResting: [UInt32]
  public private(set) var biasEstimateSum: [Vector3]
  public private(set) var biasFrames: [UInt32]
  public private(set) var biasTruthSum: [Vector3]
  public private(set) var flags: [TelemetryFlags]

  init(startSeconds: Double, seconds: Double, points: Int, framePeriodSeconds: Double) {
    let count = max(1, points)
    self.startSeconds = startSeconds
    binSeconds = max(framePeriodSeconds, seconds / Double(count))
    frames = Array(repeating: 0, count: count)
    inclinationMaximumDegrees = Array(repeating: .nan, count: count)
    headingDegrees = Array(repeating: .nan, count: count)
    restFlagged = Array(repeating: 0, count: count)
    trulyResting = Array(repeating: 0, count: count)
    biasEstimateSum = Array(repeating: .zero, count: count)
    biasFrames = Array(repeating: 0, count: count)
    biasTruthSum = Array(repeating: .zero, count: count)
    flags = Array(repeating: [], count: count)
  }

  public var count: Int { frames.count }

  /// The middle of bin `index`, seconds of motion time.
  public func time(ofBin index: Int) -> Double {
    startSeconds + (Double(index) + 0.5) * binSeconds
  }

  func bin(at seconds: Double) -> Int? {
    let index = Int(((seconds - startSeconds) / binSeconds).rounded(.down))
    return index >= 0 && index < frames.count ? index : nil
  }

  mutating func add(
    at seconds: Double, inclinationDegrees: Double?, headingDegrees heading: Double?,
    restFlag: Bool?, resting: Bool, bias: Vector3?, biasTruth: Vector3,
    flags frameFlags: TelemetryFlags?
  ) {
    guard let index = bin(at: seconds) else { return }
    frames[index] += 1
    if let inclinationDegrees {
      let worst = inclinationMaximumDegrees[index]
      inclinationMaximumDegrees[index] =
        worst.isNaN ? inclinationDegrees : max(worst, inclinationDegrees)
    }
    if let heading { headingDegrees[index] = heading }
    if restFlag == true { restFlagged[index] += 1 }
    if resting { trulyResting[index] += 1 }
    if let bias {
      biasEstimateSum[index] += bias
      biasTruthSum[index] += biasTruth
      biasFrames[index] += 1
    }
    if let frameFlags { flags[index].formUnion(frameFlags) }
  }
}

/// Counts of values (µs) in fixed bins, for the latency and inter-arrival plots: `binMicroseconds`
/// wide from 0, the last bin holding everything beyond.
public struct BinnedHistogram: Hashable, Sendable {
  public let binMicroseconds: UInt32
  public private(set) var counts: [UInt64]

  init(binMicroseconds: UInt32, bins: Int) {
    self.binMicroseconds = max(1, binMicroseconds)
    counts = Array(repeating: 0, count: max(2, bins))
  }

  mutating func record(_ microseconds: UInt32) {
    counts[min(counts.count - 1, Int(microseconds / binMicroseconds))] += 1
  }
}

/// The host's side of a run: it decodes the serial bytes with the telemetry decoder (exactly
/// what a host program would do), compares every frame with the motion's truth at the frame's
/// sample time, follows the reconciliation (`SampleLedger`) and the fault episodes, and bins
/// what the report plots.
///
/// MAVLink frames carry neither a frame sequence nor a missed-sample count, so in a MAVLink run
/// the runner hands the analyser the loop's own record of each frame it made (`loop.lastFrame`
/// after every step); an ATTITUDE_QUATERNION is matched to it by its `time_boot_ms`. A frame the
/// record does not have (several frames made in one step, in the FIFO fallback) is compared with
/// the truth but not reconciled, and counted in `unidentifiedFrames`.
final class HostAnalyser {
  let motion: any MotionSource
  let motionStart: Timestamp
  let unit: SimulatedMPU6050Unit
  /// The chip's mounting (sensor → body): the unit's true bias, in its own axes, is compared
  /// with the frames' body-axis estimate through it.
  let sensorToBody: Matrix3
  let format: TelemetryFormat
  let ledger: SampleLedger
  /// Frames before this are the estimator's initialisation (MAVLink has no flag for it).
  let keepFrames: Bool
  /// Keep a `TruthRow` for every compared frame.
  var keepTruth = false
  private(set) var truthRows: [TruthRow] = []
  /// Real time: maps a sample time to CLOCK_MONOTONIC for the latency at the host.
  var realTimeOffsetNanoseconds: Int64?

  private(set) var decoder: StreamDecoder
  private(set) var accuracy = AccuracyFigures()
  private(set) var recovery: RecoveryTracker
  private(set) var series: RunSeries
  /// The frames' own edge-to-write latency, µs.
  private(set) var frameLatency = LatencyHistogram()
  /// Real time: sample time to arrival at the host, and between consecutive arrivals, µs.
  private(set) var hostLatency = LatencyHistogram()
  private(set) var interArrival = LatencyHistogram()
  /// The same, binned for plots: 50 µs bins to 10 ms for latencies, 0.25 ms bins to 40 ms
  /// between arrivals.
  private(set) var frameLatencyBins = BinnedHistogram(binMicroseconds: 50, bins: 201)
  private(set) var hostLatencyBins = BinnedHistogram(binMicroseconds: 50, bins: 201)
  private(set) var interArrivalBins = BinnedHistogram(binMicroseconds: 250, bins: 161)
  private(set) var frames: [HILFrame] = []
  private(set) var telemetryFrames: UInt64 = 0
  private(set) var repliesOK: UInt64 = 0
  private(set) var repliesError: UInt64 = 0
  private(set) var unidentifiedFrames: UInt64 = 0
  private(set) var firstArrival: Int64?
  private(set) var lastArrival: Int64?
  private(set) var lastFrameTime: Timestamp?
  private var headingOffset: Double?
  private var loopRecords: [(record: FrameRecord, flags: TelemetryFlags)] = []
  private var loopRecordStart = 0

  init(
    motion: any MotionSource, motionStart: Timestamp, unit: SimulatedMPU6050Unit,
    sensorToBody: Matrix3 = .identity, format: TelemetryFormat, ledger: SampleLedger,
    framePeriodNanoseconds: Int64,
    seconds: Double, plotPoints: Int, keepFrames: Bool, interruptWired: Bool
  ) {
    self.motion = motion
    self.motionStart = motionStart
    self.unit = unit
    self.sensorToBody = sensorToBody
    self.format = format
    self.ledger = ledger
    self.keepFrames = keepFrames
    decoder = StreamDecoder(format: format)
    recovery = RecoveryTracker(
      framePeriodNanoseconds: framePeriodNanoseconds, motionStart: motionStart,
      interruptWired: interruptWired)
    series = RunSeries(
      startSeconds: 0, seconds: seconds, points: plotPoints,
      framePeriodSeconds: Double(framePeriodNanoseconds) * 1e-9)
    loopRecords.reserveCapacity(256)
  }

  /// The loop made `record` (MAVLink runs: the host cannot read these from the frames).
  func noteLoopFrame(_ record: FrameRecord, flags: TelemetryFlags) {
    loopRecords.append((record, flags))
  }

  /// Bytes from the serial line, in order; `arrival` is when they reached the host (real time).
  func consume(_ bytes: UnsafeRawBufferPointer, arrival: Int64? = nil) {
    guard !bytes.isEmpty else { return }
    decoder.decode(bytes) { message in handle(message, arrival: arrival) }
  }

  func consume(_ bytes: [UInt8], arrival: Int64? = nil) {
    bytes.withUnsafeBytes { consume($0, arrival: arrival) }
  }

  func finish() {
    decoder.finish()
    recovery.finish()
  }

  private func handle(_ message: DecodedMessage, arrival: Int64?) {
    if let reply = message.hostReply {
      if reply.status == .ok { repliesOK += 1 } else { repliesError += 1 }
      return
    }
    switch message {
    case .binary(let frame), .binaryIMU(let frame):
      record(
        HILFrame(
          sequence: frame.sequence, sampleTimeNanoseconds: frame.sampleTimeNanoseconds,
          attitude: frame.attitude, flags: frame.flags, missedSamples: frame.missedSamples,
          latencyMicroseconds: frame.latencyMicroseconds,
          gyroBiasRadiansPerSecond: frame.gyroBiasRadiansPerSecond,
          linearAccelerationMetersPerSecondSquared: frame.linearAccelerationMetersPerSecondSquared,
          arrivalNanoseconds: arrival))
    case .text, .mavlink:
      guard let sample = message.attitudeSample else { return }
      var frame = HILFrame(
        sequence: sample.sequence, sampleTimeNanoseconds: sample.sampleTimeNanoseconds,
        attitude: sample.attitude, flags: sample.flags, missedSamples: sample.missedSamples,
        latencyMicroseconds: sample.latencyMicroseconds, gyroBiasRadiansPerSecond: nil,
        linearAccelerationMetersPerSecondSquared: nil, arrivalNanoseconds: arrival)
      if case .mavlink = message { identify(&frame) }
      record(frame)
    case .reply:
      return
    }
  }

  /// Gives a MAVLink frame the sequence, missed count and flags of the loop's record with the
  /// same millisecond.
  private func identify(_ frame: inout HILFrame) {
    let milliseconds = frame.sampleTimeNanoseconds / 1_000_000
    while loopRecordStart < loopRecords.count {
      let candidate = loopRecords[loopRecordStart]
      let candidateMilliseconds = candidate.record.sampleTime.nanoseconds / 1_000_000
      if candidateMilliseconds < milliseconds {
        loopRecordStart += 1
        continue
      }
      if candidateMilliseconds == milliseconds {
        frame.sequence = candidate.record.sequence
        frame.missedSamples = candidate.record.missedSamples
        frame.flags = candidate.flags
        loopRecordStart += 1
      }
      break
    }
    if loopRecordStart > 128 {
      loopRecords.removeFirst(loopRecordStart)
      loopRecordStart = 0
    }
    if frame.sequence == nil { unidentifiedFrames += 1 }
  }

  private func record(_ frame: HILFrame) {
    telemetryFrames += 1
    let time = Timestamp(nanoseconds: frame.sampleTimeNanoseconds)
    lastFrameTime = time
    if let sequence = frame.sequence, let missed = frame.missedSamples {
      ledger.received(FrameRecord(sequence: sequence, sampleTime: time, missedSamples: missed))
    }
    recovery.frame(
      sequence: frame.sequence, time: time, flags: frame.flags, missed: frame.missedSamples)
    if let latency = frame.latencyMicroseconds {
      frameLatency.record(latency)
      frameLatencyBins.record(latency)
    }
    if let arrival = frame.arrivalNanoseconds {
      if let offset = realTimeOffsetNanoseconds {
        let latency = UInt32(
          clamping: max(0, arrival - (frame.sampleTimeNanoseconds + offset)) / 1000)
        hostLatency.record(latency)
        hostLatencyBins.record(latency)
      }
      if let lastArrival {
        let interval = UInt32(clamping: max(0, arrival - lastArrival) / 1000)
        interArrival.record(interval)
        interArrivalBins.record(interval)
      }
      if firstArrival == nil { firstArrival = arrival }
      lastArrival = arrival
    }
    compare(frame, at: time)
    if keepFrames { frames.append(frame) }
  }

  /// Compares the frame with the truth at its sample time.
  private func compare(_ frame: HILFrame, at time: Timestamp) {
    let seconds = Double(time.nanoseconds(since: motionStart)) * 1e-9
    let truth = motion.truth(atSeconds: seconds)
    let resting = isTrulyResting(motion, atSeconds: seconds)
    let biasTruth =
      sensorToBody
      * unit.gyroZeroRateOutput(
        atMotionSeconds: seconds, motionTemperatureCelsius: truth.temperatureCelsius)
      * degreesPerRadian
    let initialising = frame.flags?.contains(.initialising) ?? true
    var inclination: Double?
    var heading: Double?
    if !initialising {
      let incl =
        inclinationErrorRadians(estimate: frame.attitude, truth: truth.attitude)
        * degreesPerRadian
      let difference = headingDifferenceRadians(estimate: frame.attitude, truth: truth.attitude)
      if headingOffset == nil { headingOffset = difference }
      let head = wrappedRadians(difference - (headingOffset ?? 0)) * degreesPerRadian
      accuracy.add(inclinationDegrees: incl, headingDegrees: head)
      if keepTruth {
        truthRows.append(
          TruthRow(
            sequence: frame.sequence, sampleTimeNanoseconds: frame.sampleTimeNanoseconds,
            truth: truth.attitude, inclinationErrorDegrees: incl))
      }
      inclination = incl
      heading = head
      if let flags = frame.flags {
        accuracy.add(restFlag: flags.contains(.rest), trulyResting: resting)
      }
      if let bias = frame.gyroBiasRadiansPerSecond {
        accuracy.add(biasErrorDegreesPerSecond: (bias * degreesPerRadian - biasTruth).length)
      }
    }
    series.add(
      at: seconds, inclinationDegrees: inclination, headingDegrees: heading,
      restFlag: frame.flags.map { $0.contains(.rest) }, resting: resting,
      bias: frame.gyroBiasRadiansPerSecond.map { $0 * degreesPerRadian }, biasTruth: biasTruth,
      flags: frame.flags)
  }
}
