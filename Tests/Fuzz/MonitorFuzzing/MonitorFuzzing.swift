import FuzzSupport
import Geometry
import JSON
import Monitoring
import Telemetry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The monitor's stream decoding (`FrameMonitor` over `StreamDecoder`, and `MonitorPrinter`) as
/// `plumb-monitor` reaches it: any bytes from a serial line or a capture file, in one format or
/// detected. One fuzz target per format (`fuzz-monitor-binary`, `-text`, `-mavlink`, `-auto`).
///
/// Properties, besides no trap and no hang:
/// - **split anywhere**: the bytes fed in pieces of random sizes give the same events and
///   statistics as fed at once;
/// - **every byte accounted for**: after `finish()`, received = accepted + skipped, and the
///   link counts as many telemetry frames and replies as the monitor delivered;
/// - **printing**: every event, and the final summary, prints in each style (frames, quiet,
///   json) without control characters, and each JSON line parses as an object with a `type`;
/// - **decode(encode(x)) == x**: every decoded message, encoded again (binary frames and MAVLink
///   packets exactly; text lines to the text format's resolution; replies in all three
///   formats), decodes to the same message.
public enum MonitorFuzzing {
  /// The statistics interval the monitor reports at (`--stats-every 1`), ns of sample time.
  static let statisticsInterval: Int64 = 1_000_000_000

  public static func test(_ input: UnsafeRawBufferPointer, format: TelemetryFormat?) {
    var whole = FrameMonitor(format: format, statisticsIntervalNanoseconds: statisticsInterval)
    var events: [MonitorEvent] = []
    whole.consume(input) { events.append($0) }
    whole.finish()
    let statistics = whole.statistics

    var pieces = FrameMonitor(format: format, statisticsIntervalNanoseconds: statisticsInterval)
    var pieceEvents: [MonitorEvent] = []
    var offset = 0
    for size in ChunkSizes(count: input.count, seed: chunkSeed(input)) {
      pieces.consume(UnsafeRawBufferPointer(rebasing: input[offset..<offset + size])) {
        pieceEvents.append($0)
      }
      offset += size
    }
    pieces.finish()
    // Events hold doubles that may be NaN (never equal to themselves): those compare by their
    // JSON lines, in which a NaN is null.
    let json = MonitorPrinter(style: .json, inputName: "")
    require(
      pieceEvents.count == events.count
        && zip(pieceEvents, events).allSatisfy {
          $0 == $1 || json.lines(for: $0) == json.lines(for: $1)
        },
      "bytes fed in pieces give the events fed at once give",
      "\(pieceEvents.count) events in pieces, \(events.count) at once")
    require(
      pieces.statistics == statistics, "bytes fed in pieces give the same statistics",
      "\(pieces.statistics.link) against \(statistics.link)")

    checkAccounting(statistics, events: events, inputCount: input.count)
    checkPrinting(events + [.statistics(statistics, final: true)])

    var decoder = StreamDecoder(format: format)
    var messages: [DecodedMessage] = []
    decoder.decode(input) { messages.append($0) }
    for message in messages { checkRoundTrip(message) }
  }

  static func checkAccounting(
    _ statistics: MonitorStatistics, events: [MonitorEvent], inputCount: Int
  ) {
    let link = statistics.link
    require(
      link.bytesReceived == UInt64(inputCount), "every byte given is received",
      "\(link.bytesReceived) of \(inputCount)")
    require(
      link.bytesAccepted + link.bytesSkipped == link.bytesReceived,
      "after finish() every byte is accepted or skipped",
      "received \(link.bytesReceived), accepted \(link.bytesAccepted), skipped \(link.bytesSkipped)"
    )
    var frames: UInt64 = 0
    var replies: UInt64 = 0
    for event in events {
      switch event {
      case .frame: frames += 1
      case .reply: replies += 1
      default: break
      }
    }
    require(
      statistics.telemetryFrames == frames && link.telemetryFrames == frames,
      "the statistics count the telemetry frames delivered",
      "monitor \(statistics.telemetryFrames), link \(link.telemetryFrames), delivered \(frames)")
    require(
      link.replies == replies, "the statistics count the replies delivered",
      "link \(link.replies), delivered \(replies)")
    require(
      link.frames >= link.telemetryFrames + link.replies, "telemetry and replies are valid frames",
      "\(link)")
  }

  static func checkPrinting(_ events: [MonitorEvent]) {
    for style in [MonitorPrinter.Style.frames, .quiet, .json] {
      let printer = MonitorPrinter(style: style, inputName: "/dev/ttyUSB0")
      for event in events {
        for line in printer.lines(for: event) {
          require(
            !line.text.unicodeScalars.contains(where: isControl),
            "printed lines hold no control characters (\(style))", line.text)
          guard style == .json else { continue }
          do {
            let document = try JSONDocument(parsing: line.text)
            guard case .string = document.root["type"] else {
              propertyViolated("a JSON line is an object with a type", line.text)
            }
          } catch {
            propertyViolated("a JSON line is JSON", "\(error): \(line.text)")
          }
        }
      }
    }
  }

  static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
  }

  // MARK: - decode(encode(x)) == x

  static func checkRoundTrip(_ message: DecodedMessage) {
    switch message {
    case .binary(let frame):
      var encoder = TelemetryEncoder(format: .binary, outputRateHz: 100)
      let bytes = encoder.encode(frame)
      guard case .binary(let again)? = decodeOne(bytes, .binary) else {
        propertyViolated("a decoded binary frame encodes to one frame", hexDump(bytes))
      }
      require(
        sameBinaryFrame(frame, again), "binary: decode(encode(frame)) == frame",
        "\(frame) became \(again)")
      require(
        encoder.encode(again) == bytes, "binary: encoding a decoded frame is stable",
        hexDump(bytes))
    case .binaryIMU(let frame):
      var encoder = TelemetryEncoder(format: .binaryIMU, outputRateHz: 100)
      let bytes = encoder.encode(frame)
      guard case .binaryIMU(let again)? = decodeOne(bytes, .binaryIMU) else {
        propertyViolated("a decoded binary-imu frame encodes to one frame", hexDump(bytes))
      }
      // The specific force travels as the linear acceleration the attitude turns it into, so
      // it comes back exactly only with a (nearly) unit attitude: what a board sends. A fuzzed
      // one may be anything; then the frame must still encode and decode, as above.
      let q = frame.attitude
      let norm = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z
      if abs(norm - 1) < 1e-6 {
        require(
          encoder.encode(again) == bytes, "binary-imu: encoding a decoded frame is stable",
          hexDump(bytes))
      }
    case .text(let line):
      checkTextRoundTrip(line)
    case .mavlink(let packet):
      let bytes = encodeMAVLink(packet)
      guard case .mavlink(let again)? = decodeOne(bytes, .mavlink) else {
        propertyViolated("a decoded MAVLink packet encodes to one packet", hexDump(bytes))
      }
      require(
        encodeMAVLink(again) == bytes, "MAVLink: decode(encode(packet)) == packet",
        "\(packet) became \(again)")
      if let reply = message.hostReply { checkReplyRoundTrip(reply) }
    case .reply(let reply):
      checkReplyRoundTrip(reply)
    }
  }

  /// A reply's text is printable ASCII without `$` or `*` (`HostReply`), so every format
  /// carries it.
  static func checkReplyRoundTrip(_ reply: HostReply) {
    for format in TelemetryFormat.allCases {
      var encoder = TelemetryEncoder(format: format, outputRateHz: 100)
      let bytes = encoder.encode(reply)
      let again = decodeOne(bytes, format)?.hostReply
      require(
        again == reply, "\(format): decode(encode(reply)) == reply",
        "\(reply) became \(again.map { "\($0)" } ?? "nothing") via \(hexDump(bytes))")
    }
  }

  static func checkTextRoundTrip(_ line: TextTelemetry) {
    let (nanoseconds, overflow) = line.sampleTimeMilliseconds.multipliedReportingOverflow(
      by: 1_000_000)
    guard !overflow else { return }
    let frame = TelemetryFrame(
      sequence: line.sequence, sampleTimeNanoseconds: nanoseconds, attitude: line.attitude,
      temperatureCelsius: line.temperatureCelsius, flags: line.flags,
      missedSamples: line.missedSamples, latencyMicroseconds: line.latencyMicroseconds)
    var encoder = TelemetryEncoder(format: .text, outputRateHz: 100)
    let bytes = encoder.encode(frame)
    guard case .text(let again)? = decodeOne(bytes, .text) else {
      propertyViolated("a decoded text line encodes to one line", hexDump(bytes))
    }
    let shown = String(decoding: bytes, as: UTF8.self)
    require(
      again.sequence == line.sequence && again.sampleTimeMilliseconds == line.sampleTimeMilliseconds
        && again.missedSamples == line.missedSamples
        && again.latencyMicroseconds == line.latencyMicroseconds,
      "text: decode(encode(line)) keeps the integer fields", "\(line) became \(shown)")
    var flags = line.flags
    flags.remove(.gimbalLockNear)
    var againFlags = again.flags
    againFlags.remove(.gimbalLockNear)
    require(flags == againFlags, "text: decode(encode(line)) keeps the flags", shown)
    require(
      sameToHundredths(line.temperatureCelsius, again.temperatureCelsius, integerDigits: 3),
      "text: the temperature comes back to 0.01 °C",
      "\(line.temperatureCelsius) became \(again.temperatureCelsius) in \(shown)")
    let angles = [line.rollDegrees, line.pitchDegrees, line.yawDegrees]
    let attitude = line.attitude
    if angles.allSatisfy(\.isFinite), attitude.w.isFinite, attitude.x.isFinite,
      attitude.y.isFinite, attitude.z.isFinite
    {
      let dot = abs(
        attitude.w * again.attitude.w + attitude.x * again.attitude.x + attitude.y
          * again.attitude.y + attitude.z * again.attitude.z)
      let degrees = 2 * acos(min(1, dot)) * degreesPerRadian
      require(
        degrees <= 0.05, "text: the attitude comes back to the lines' 0.01° resolution",
        "\(angles) came back as \([again.rollDegrees, again.pitchDegrees, again.yawDegrees]), "
          + "\(degrees)° apart")
    }
  }

  /// Whether `b` is what the text format makes of `a` with two decimals and at most
  /// `integerDigits` integer digits: `a` to 0.01, `nan`, or `inf` beyond the digits.
  static func sameToHundredths(_ a: Double, _ b: Double, integerDigits: Int) -> Bool {
    if a.isNaN { return b.isNaN }
    var limit = 1.0
    for _ in 0..<integerDigits { limit *= 10 }
    if (a * 100).rounded(.toNearestOrAwayFromZero).magnitude >= limit * 100 {
      return b.isInfinite && (b < 0) == (a < 0)
    }
    return abs(a - b) <= 0.005 + 1e-9
  }

  static func sameBinaryFrame(_ a: TelemetryFrame, _ b: TelemetryFrame) -> Bool {
    a.sequence == b.sequence && a.sampleTimeNanoseconds == b.sampleTimeNanoseconds
      && sameBits(a.attitude.w, b.attitude.w) && sameBits(a.attitude.x, b.attitude.x)
      && sameBits(a.attitude.y, b.attitude.y) && sameBits(a.attitude.z, b.attitude.z)
      && sameVector(a.gyroBiasRadiansPerSecond, b.gyroBiasRadiansPerSecond)
      && sameVector(
        a.linearAccelerationMetersPerSecondSquared, b.linearAccelerationMetersPerSecondSquared)
      && sameBits(a.temperatureCelsius, b.temperatureCelsius) && a.flags == b.flags
      && a.missedSamples == b.missedSamples && a.latencyMicroseconds == b.latencyMicroseconds
      && a.calibrationID == b.calibrationID
  }

  static func sameVector(_ a: Vector3, _ b: Vector3) -> Bool {
    sameBits(a.x, b.x) && sameBits(a.y, b.y) && sameBits(a.z, b.z)
  }

  static func encodeMAVLink(_ packet: MAVLinkPacket) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: MAVLink.maximumPacketCount)
    let count = bytes.withUnsafeMutableBytes { MAVLink.encode(packet, into: $0) }
    return Array(bytes[0..<count])
  }

  /// The one message `bytes` decode to in `format`, or `nil` when they give none or several.
  static func decodeOne(_ bytes: [UInt8], _ format: TelemetryFormat) -> DecodedMessage? {
    var decoder = StreamDecoder(format: format)
    var messages: [DecodedMessage] = []
    decoder.decode(bytes) { messages.append($0) }
    return messages.count == 1 ? messages[0] : nil
  }
}
