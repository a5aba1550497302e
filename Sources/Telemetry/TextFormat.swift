import ByteFormats
import Geometry

/// The text format (FORMATS.md "Text"): one NMEA-style line per frame, for a person at a
/// terminal.
///
/// ```
/// $PLMB,<seq>,<t_s>,<roll>,<pitch>,<yaw>,<flags>,<missed>,<latency_us>,<temp_c>*<XX>\r\n
/// ```
///
/// `t_s` is the sample time in seconds with 3 decimals (exact integer arithmetic, rounded toward
/// −∞ to the millisecond); roll, pitch and yaw are degrees with 2 decimals in the aerospace ZYX
/// convention of `NEDEulerAngles` (MAVLink's NED/FRD); `flags` is the 16-bit flag word as 4
/// uppercase hex digits; temperature is °C with 2 decimals; `XX` is the NMEA checksum (XOR of
/// the bytes between `$` and `*`) in uppercase hex. Replies are `$PLMBR,OK,<text>*XX\r\n` or
/// `$PLMBR,ERR,<text>*XX\r\n`.
public enum TextFormat {
  /// Decimals of roll, pitch, yaw (degrees) and temperature (°C).
  public static let angleDecimals = 2
  static let temperatureIntegerDigits = 3

  /// The longest line the encoder can produce, terminator included: every field at its widest.
  /// `$PLMB,` 6; sequence 10 (`4294967295`); time 15 (`-9223372036.855`); roll and yaw 7 each
  /// (`-180.00`); pitch 6 (`-90.00`); flags 4; missed 10; latency 10; temperature 7 (`-999.99`);
  /// 8 commas; `*XX\r\n` 5: 95 bytes. The link budget uses this worst case, not a typical line
  /// (about 55 bytes).
  public static let maximumLineCount = 6 + 10 + 15 + 7 + 6 + 7 + 4 + 10 + 10 + 7 + 8 + 5

  /// The longest reply line: `$PLMBR,ERR,` 11 + 46 + `*XX\r\n` 5.
  public static let maximumReplyLineCount = 11 + HostReply.maximumTextLength + 5

  /// Writes one line into `output` (at least `maximumLineCount` bytes); returns its length.
  ///
  /// `.gimbalLockNear` is shown whenever the line's own pitch is near ±90°, even if the frame
  /// did not set it, so the printed roll and yaw are never shown unflagged there.
  public static func encode(_ frame: TelemetryFrame, into output: UnsafeMutableRawBufferPointer)
    -> Int
  {
    precondition(output.count >= maximumLineCount, "text lines need 95 bytes of buffer")
    var writer = ByteWriter(output)
    let euler = NEDEulerAngles(plumbAttitude: frame.attitude)
    var flags = frame.flags
    if euler.isNearGimbalLock { flags.insert(.gimbalLockNear) }
    writer.write("$PLMB,")
    DecimalFormat.writeUnsigned(UInt64(frame.sequence), minimumDigits: 1, to: &writer)
    writer.write(UInt8(ascii: ","))
    writeMilliseconds(frame.sampleTimeNanoseconds, to: &writer)
    writeAngle(euler.rollRadians, integerDigits: 3, to: &writer)
    writeAngle(euler.pitchRadians, integerDigits: 2, to: &writer)
    writeAngle(euler.yawRadians, integerDigits: 3, to: &writer)
    writer.write(UInt8(ascii: ","))
    writeHex16(flags.rawValue, to: &writer)
    writer.write(UInt8(ascii: ","))
    DecimalFormat.writeUnsigned(UInt64(frame.missedSamples), minimumDigits: 1, to: &writer)
    writer.write(UInt8(ascii: ","))
    DecimalFormat.writeUnsigned(UInt64(frame.latencyMicroseconds), minimumDigits: 1, to: &writer)
    writer.write(UInt8(ascii: ","))
    DecimalFormat.writeFixed(
      frame.temperatureCelsius, decimals: angleDecimals,
      maximumIntegerDigits: temperatureIntegerDigits, to: &writer)
    finishLine(&writer)
    return writer.count
  }

  /// Writes one reply line (at most 62 bytes); returns its length.
  public static func encode(_ reply: HostReply, into output: UnsafeMutableRawBufferPointer) -> Int {
    precondition(output.count >= maximumReplyLineCount, "text replies need 62 bytes of buffer")
    var writer = ByteWriter(output)
    writer.write(reply.status == .ok ? "$PLMBR,OK," : "$PLMBR,ERR,")
    writer.write(text: reply.text)
    finishLine(&writer)
    return writer.count
  }

  private static func writeAngle(
    _ radians: Double, integerDigits: Int, to writer: inout ByteWriter
  ) {
    writer.write(UInt8(ascii: ","))
    DecimalFormat.writeFixed(
      radians * degreesPerRadian, decimals: angleDecimals, maximumIntegerDigits: integerDigits,
      to: &writer)
  }

  private static func writeMilliseconds(_ nanoseconds: Int64, to writer: inout ByteWriter) {
    // Floor division, so the printed time never runs ahead of the sample.
    var milliseconds = nanoseconds / 1_000_000
    if nanoseconds % 1_000_000 < 0 { milliseconds -= 1 }
    if milliseconds < 0 { writer.write(UInt8(ascii: "-")) }
    let magnitude = milliseconds.magnitude
    DecimalFormat.writeUnsigned(magnitude / 1000, minimumDigits: 1, to: &writer)
    writer.write(UInt8(ascii: "."))
    DecimalFormat.writeUnsigned(magnitude % 1000, minimumDigits: 3, to: &writer)
  }

  static let hexDigits: StaticString = "0123456789ABCDEF"

  private static func writeHex16(_ value: UInt16, to writer: inout ByteWriter) {
    for shift in stride(from: 12, through: 0, by: -4) {
      writer.write(hexDigit(Int(value >> UInt16(shift)) & 0xF))
    }
  }

  static func hexDigit(_ nibble: Int) -> UInt8 {
    hexDigits.withUTF8Buffer { $0[nibble] }
  }

  /// Appends `*XX\r\n` with the checksum of everything after the leading `$`.
  private static func finishLine(_ writer: inout ByteWriter) {
    let sum = NMEAChecksum.checksum(
      UnsafeRawBufferPointer(rebasing: writer.buffer[1..<writer.count]))
    writer.write(UInt8(ascii: "*"))
    writer.write(hexDigit(Int(sum >> 4)))
    writer.write(hexDigit(Int(sum & 0xF)))
    writer.write(UInt8(ascii: "\r"))
    writer.write(UInt8(ascii: "\n"))
  }

  /// What one decoded line is.
  public enum Message: Hashable, Sendable {
    case telemetry(TextTelemetry)
    case reply(HostReply)
  }

  /// Why a line is not valid.
  public enum DecodeError: Error, Hashable, Sendable {
    /// The checksum does not match.
    case checksumMismatch(expected: UInt8, received: UInt8)
    /// The line's shape is wrong: no `*XX`, no newline, unknown sentence, wrong field count.
    case malformed
    /// Field `index` (1 = sequence … 9 = temperature) does not parse.
    case badField(index: Int)
  }

  /// Decodes one line, from `$` to `\n` inclusive (`\r` before `\n` optional).
  public static func decode(line: UnsafeRawBufferPointer) -> Result<Message, DecodeError> {
    var end = line.count
    guard end >= 5, line[0] == UInt8(ascii: "$"), line[end - 1] == UInt8(ascii: "\n") else {
      return .failure(.malformed)
    }
    end -= 1
    if line[end - 1] == UInt8(ascii: "\r") { end -= 1 }
    guard end >= 4, line[end - 3] == UInt8(ascii: "*"),
      let high = hexValue(line[end - 2]), let low = hexValue(line[end - 1])
    else { return .failure(.malformed) }
    let content = UnsafeRawBufferPointer(rebasing: line[1..<end - 3])
    let received = high << 4 | low
    let expected = NMEAChecksum.checksum(content)
    guard expected == received else {
      return .failure(.checksumMismatch(expected: expected, received: received))
    }
    var fields = FieldSplitter(content)
    guard let sentence = fields.next() else { return .failure(.malformed) }
    if DecimalFormat.equals(sentence, "PLMB") {
      return decodeTelemetry(&fields).map { .telemetry($0) }
    }
    if DecimalFormat.equals(sentence, "PLMBR") {
      guard let statusField = fields.next() else { return .failure(.malformed) }
      let status: HostReply.Status
      if DecimalFormat.equals(statusField, "OK") {
        status = .ok
      } else if DecimalFormat.equals(statusField, "ERR") {
        status = .error
      } else {
        return .failure(.malformed)
      }
      let rest = fields.remainder
      guard rest.count <= HostReply.maximumTextLength else { return .failure(.malformed) }
      var text = FixedText()
      text.append(rest)
      return .success(.reply(HostReply(status, text)))
    }
    return .failure(.malformed)
  }

  private static func decodeTelemetry(_ fields: inout FieldSplitter) -> Result<
    TextTelemetry, DecodeError
  > {
    var telemetry = TextTelemetry()
    for index in 1...9 {
      guard let field = fields.next() else { return .failure(.malformed) }
      switch index {
      case 1:
        guard let value = DecimalFormat.parseUnsigned(field, maximumDigits: 10),
          let sequence = UInt32(exactly: value)
        else { return .failure(.badField(index: index)) }
        telemetry.sequence = sequence
      case 2:
        guard let milliseconds = parseMilliseconds(field) else {
          return .failure(.badField(index: index))
        }
        telemetry.sampleTimeMilliseconds = milliseconds
      case 3, 4, 5, 9:
        guard let value = DecimalFormat.parseFixed(field) else {
          return .failure(.badField(index: index))
        }
        switch index {
        case 3: telemetry.rollDegrees = value
        case 4: telemetry.pitchDegrees = value
        case 5: telemetry.yawDegrees = value
        default: telemetry.temperatureCelsius = value
        }
      case 6:
        guard field.count == 4, let flags = parseHex(field) else {
          return .failure(.badField(index: index))
        }
        telemetry.flags = TelemetryFlags(rawValue: flags)
      default:
        guard let value = DecimalFormat.parseUnsigned(field, maximumDigits: 10),
          let count = UInt32(exactly: value)
        else { return .failure(.badField(index: index)) }
        if index == 7 {
          telemetry.missedSamples = count
        } else {
          telemetry.latencyMicroseconds = count
        }
      }
    }
    guard fields.next() == nil else { return .failure(.malformed) }
    return .success(telemetry)
  }

  private static func parseMilliseconds(_ field: UnsafeRawBufferPointer) -> Int64? {
    guard field.count >= 5, field[field.count - 4] == UInt8(ascii: ".") else { return nil }
    var start = 0
    let negative = field[0] == UInt8(ascii: "-")
    if negative { start = 1 }
    guard
      let seconds = DecimalFormat.parseUnsigned(
        UnsafeRawBufferPointer(rebasing: field[start..<field.count - 4]), maximumDigits: 10),
      let millis = DecimalFormat.parseUnsigned(
        UnsafeRawBufferPointer(rebasing: field[field.count - 3..<field.count]), maximumDigits: 3)
    else { return nil }
    let magnitude = Int64(seconds) * 1000 + Int64(millis)
    return negative ? -magnitude : magnitude
  }

  private static func parseHex(_ field: UnsafeRawBufferPointer) -> UInt16? {
    var value: UInt16 = 0
    for byte in field {
      guard let nibble = hexValue(byte) else { return nil }
      value = value << 4 | UInt16(nibble)
    }
    return value
  }

  static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 0x30...0x39: byte - 0x30
    case 0x41...0x46: byte - 0x41 + 10
    case 0x61...0x66: byte - 0x61 + 10
    default: nil
    }
  }
}

/// Comma-separated fields of a line, without copying.
struct FieldSplitter {
  let bytes: UnsafeRawBufferPointer
  var position = 0
  var finished = false

  init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

  mutating func next() -> UnsafeRawBufferPointer? {
    guard !finished else { return nil }
    var end = position
    while end < bytes.count, bytes[end] != UInt8(ascii: ",") { end += 1 }
    let field = UnsafeRawBufferPointer(rebasing: bytes[position..<end])
    if end == bytes.count { finished = true } else { position = end + 1 }
    return field
  }

  /// Everything not yet returned, commas included.
  var remainder: UnsafeRawBufferPointer {
    finished
      ? UnsafeRawBufferPointer(rebasing: bytes[bytes.count...])
      : UnsafeRawBufferPointer(rebasing: bytes[position...])
  }
}

/// One decoded text line: what the text format carries, in its own units (degrees at the edge).
public struct TextTelemetry: Hashable, Sendable {
  public var sequence: UInt32 = 0
  /// Sample time, ms (the line's resolution).
  public var sampleTimeMilliseconds: Int64 = 0
  public var rollDegrees: Double = 0
  public var pitchDegrees: Double = 0
  public var yawDegrees: Double = 0
  public var flags: TelemetryFlags = []
  public var missedSamples: UInt32 = 0
  public var latencyMicroseconds: UInt32 = 0
  public var temperatureCelsius: Double = 0

  public init() {}

  /// The angles in radians.
  public var eulerAngles: NEDEulerAngles {
    NEDEulerAngles(
      rollRadians: rollDegrees * radiansPerDegree, pitchRadians: pitchDegrees * radiansPerDegree,
      yawRadians: yawDegrees * radiansPerDegree)
  }

  /// The Plumb attitude (body → z-up reference) the angles describe, to about 0.005° (the
  /// lines' 0.01° resolution); meaningless for yaw and roll separately near gimbal lock.
  public var attitude: Quaternion { eulerAngles.plumbAttitude }
}
