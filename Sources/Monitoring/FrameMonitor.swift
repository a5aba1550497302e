import Geometry
import Telemetry

/// The monitor's core, with no I/O: bytes in (chunks of any size, from any source), events and
/// statistics out.
///
/// It runs a `StreamDecoder` (which finds, checks and counts frames in any of the three
/// formats, resynchronising after damage), turns what it decodes into `MonitorEvent`s, records
/// latency percentiles, measures the frame rate from the frames' sample times, and reports
/// statistics every `statisticsIntervalNanoseconds` of sample time. Same bytes in, same events
/// out: it reads no clock. The HIL runner can feed it directly.
///
/// Buffers are made at `init` (the decoder's and the latency histogram's); consuming bytes
/// allocates nothing of its own (the events the caller builds from them may).
public struct FrameMonitor: Sendable {
  /// How often to report statistics, ns of sample time (`nil`: only at the end).
  public let statisticsIntervalNanoseconds: Int64?

  private var decoder: StreamDecoder?
  private var tally = MonitorStatistics()
  private var nextReportNanoseconds: Int64?
  private var reportDue = false
  /// The detected format last announced (automatic detection only).
  private var announcedFormat: TelemetryFormat?

  /// A monitor for `format`, or one that detects it when `format` is `nil`.
  public init(format: TelemetryFormat?, statisticsIntervalNanoseconds: Int64? = nil) {
    decoder = StreamDecoder(format: format)
    self.statisticsIntervalNanoseconds = statisticsIntervalNanoseconds.map { max(1, $0) }
    tally.format = format
  }

  /// Everything counted so far.
  public var statistics: MonitorStatistics {
    var snapshot = tally
    if let decoder {
      snapshot.link = decoder.statistics
      snapshot.format = decoder.format ?? tally.format
    }
    return snapshot
  }

  /// The counters the session keeps (disconnections, reopens) live here too, so one value
  /// carries them all.
  public mutating func recordDisconnect() { tally.disconnects += 1 }
  public mutating func recordReopen() { tally.reopens += 1 }

  /// Decodes `bytes`, calling `body` with each event in stream order. With `frameLimit`, stops
  /// right after the byte that completes that many telemetry frames (counted since the start);
  /// returns the number of bytes consumed (all of them unless it stopped).
  @discardableResult
  public mutating func consume(
    _ bytes: UnsafeRawBufferPointer, frameLimit: UInt64? = nil, _ body: (MonitorEvent) -> Void
  ) -> Int {
    // Take the decoder out while it calls back into this value (no copy: it is unique).
    var active = decoder!
    decoder = nil
    defer { decoder = active }
    var consumed = 0
    let detecting = active.requestedFormat == nil
    for byte in bytes {
      active.decode(byte: byte) { message in
        if detecting { announce(Self.format(of: message), body) }
        handle(message, body)
      }
      consumed += 1
      if detecting {
        // Detection started again (the sender changed format): announce the next winner too.
        if active.format == nil { announcedFormat = nil }
        // A reply was the first message: its framing says which format won (unless a frame
        // already said which of the formats so framed it is).
        if let framing = active.format, announcedFormat.map(StreamDecoder.framing) != framing {
          announce(framing, body)
        }
      }
      if reportDue {
        reportDue = false
        var snapshot = tally
        snapshot.link = active.statistics
        body(.statistics(snapshot, final: false))
      }
      if let frameLimit, tally.telemetryFrames >= frameLimit { break }
    }
    return consumed
  }

  /// Decodes an array's bytes (for tests and tools).
  @discardableResult
  public mutating func consume(
    _ bytes: [UInt8], frameLimit: UInt64? = nil, _ body: (MonitorEvent) -> Void
  ) -> Int {
    bytes.withUnsafeBytes { consume($0, frameLimit: frameLimit, body) }
  }

  /// Ends the stream: a partial frame still buffered counts as skipped bytes.
  public mutating func finish() {
    decoder?.finish()
  }

  /// Reports a newly detected format, before the first message decoded in it.
  private mutating func announce(_ format: TelemetryFormat?, _ body: (MonitorEvent) -> Void) {
    guard let format, format != announcedFormat else { return }
    announcedFormat = format
    tally.format = format
    body(.notice(.formatDetected(format)))
  }

  /// The format a message came in; `nil` for a reply (binary and text replies look alike here).
  private static func format(of message: DecodedMessage) -> TelemetryFormat? {
    switch message {
    case .binary: .binary
    case .binaryIMU: .binaryIMU
    case .text: .text
    case .mavlink: .mavlink
    case .reply: nil
    }
  }

  private mutating func handle(_ message: DecodedMessage, _ body: (MonitorEvent) -> Void) {
    switch message {
    case .binary(let frame):
      record(
        MonitorFrame(
          format: .binary, sequence: frame.sequence,
          sampleTimeNanoseconds: frame.sampleTimeNanoseconds, attitude: frame.attitude,
          angles: NEDEulerAngles(plumbAttitude: frame.attitude), flags: frame.flags,
          temperatureCelsius: frame.temperatureCelsius, missedSamples: frame.missedSamples,
          latencyMicroseconds: frame.latencyMicroseconds, calibrationID: frame.calibrationID,
          gyroBiasRadiansPerSecond: frame.gyroBiasRadiansPerSecond,
          linearAccelerationMetersPerSecondSquared: frame.linearAccelerationMetersPerSecondSquared),
        body)
    case .binaryIMU(let frame):
      record(
        MonitorFrame(
          format: .binaryIMU, sequence: frame.sequence,
          sampleTimeNanoseconds: frame.sampleTimeNanoseconds, attitude: frame.attitude,
          angles: NEDEulerAngles(plumbAttitude: frame.attitude), flags: frame.flags,
          temperatureCelsius: frame.temperatureCelsius, missedSamples: frame.missedSamples,
          latencyMicroseconds: frame.latencyMicroseconds, calibrationID: frame.calibrationID,
          gyroBiasRadiansPerSecond: frame.gyroBiasRadiansPerSecond,
          linearAccelerationMetersPerSecondSquared: frame.linearAccelerationMetersPerSecondSquared,
          rateRadiansPerSecond: frame.rateRadiansPerSecond,
          specificForceMetersPerSecondSquared: BinaryFormat.carriedSpecificForce(of: frame),
          uncertainty: frame.uncertainty),
        body)
    case .text(let line):
      record(
        MonitorFrame(
          format: .text, sequence: line.sequence,
          sampleTimeNanoseconds: Self.nanoseconds(milliseconds: line.sampleTimeMilliseconds),
          attitude: line.attitude, angles: line.eulerAngles, flags: line.flags,
          temperatureCelsius: line.temperatureCelsius, missedSamples: line.missedSamples,
          latencyMicroseconds: line.latencyMicroseconds),
        body)
    case .mavlink(let packet):
      switch packet.message {
      case .attitudeQuaternion(let m):
        let ned = Quaternion(
          w: Double(m.attitude.w), x: Double(m.attitude.x), y: Double(m.attitude.y),
          z: Double(m.attitude.z))
        record(
          MonitorFrame(
            format: .mavlink, sequence: UInt32(packet.sequence),
            sampleTimeNanoseconds: Int64(m.timeBootMilliseconds) * 1_000_000,
            attitude: MAVLinkFrames.plumbAttitude(fromNED: ned),
            angles: NEDEulerAngles(nedAttitude: ned),
            rateRadiansPerSecond: Vector3(
              Double(m.rateRadiansPerSecond.x), -Double(m.rateRadiansPerSecond.y),
              -Double(m.rateRadiansPerSecond.z))),
          body)
      case .heartbeat(let m):
        tally.heartbeats += 1
        body(
          .heartbeat(
            systemID: packet.systemID, componentID: packet.componentID,
            systemStatus: m.systemStatus, fields: m))
      case .highResIMU, .attitude, .systemStatus:
        body(.mavlinkMessage(packet))
      default:
        if let reply = message.hostReply { body(.reply(reply)) }
      }
    case .reply(let reply):
      body(.reply(reply))
    }
  }

  private mutating func record(_ frame: MonitorFrame, _ body: (MonitorEvent) -> Void) {
    tally.telemetryFrames += 1
    if let latency = frame.latencyMicroseconds { tally.latency.record(latency) }
    let time = frame.sampleTimeNanoseconds
    if let last = tally.lastSampleTimeNanoseconds, time <= last {
      if time < last {
        // The board restarted (or frames arrive out of order): measure the rate afresh.
        tally.sampleTimeResets += 1
        startRateWindow(at: time)
      }
    } else if tally.firstSampleTimeNanoseconds == nil {
      startRateWindow(at: time)
    } else {
      tally.lastSampleTimeNanoseconds = time
      tally.framesInRateWindow += 1
    }
    body(.frame(frame))
    if let interval = statisticsIntervalNanoseconds, let due = nextReportNanoseconds, time >= due {
      reportDue = true
      // The next report time after `time` on the grid first + k·interval. A frame carries any
      // 64-bit time: `time − first` (never negative) may exceed `Int64.max`, so it is counted
      // unsigned, and a grid time after the last 64-bit time is no report at all.
      let first = tally.firstSampleTimeNanoseconds ?? time
      let elapsed = UInt64(bitPattern: time &- first)
      let periods = elapsed / UInt64(interval) + 1
      let (offset, overflow) = periods.multipliedReportingOverflow(by: UInt64(interval))
      nextReportNanoseconds = overflow ? nil : Self.time(first, plus: offset)
    }
  }

  /// `start` + `offset` nanoseconds, or `nil` when that is after the last 64-bit time.
  static func time(_ start: Int64, plus offset: UInt64) -> Int64? {
    // Int64.max − start as an unsigned count: exact, up to 2⁶⁴ − 1 for start = Int64.min.
    guard offset <= UInt64(bitPattern: Int64.max &- start) else { return nil }
    return Int64(bitPattern: UInt64(bitPattern: start) &+ offset)
  }

  /// ms → ns, saturating: a text line's time reaches −9 223 372 036.855 s (Int64.min ns
  /// floored to the ms), whose ns do not fit.
  static func nanoseconds(milliseconds: Int64) -> Int64 {
    let (product, overflow) = milliseconds.multipliedReportingOverflow(by: 1_000_000)
    return overflow ? (milliseconds < 0 ? .min : .max) : product
  }

  private mutating func startRateWindow(at time: Int64) {
    tally.firstSampleTimeNanoseconds = time
    tally.lastSampleTimeNanoseconds = time
    tally.framesInRateWindow = 1
    if let interval = statisticsIntervalNanoseconds {
      nextReportNanoseconds = Self.time(time, plus: UInt64(interval))
    }
  }
}
