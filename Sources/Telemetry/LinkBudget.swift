/// Whether a format at an output rate fits a serial line (DESIGN.md "Serial output";
/// notes/mpu6050-facts.md "Serial, 8N1").
///
/// 8N1 sends 10 bit-times per byte (start, 8 data, stop), so a line carries baud / 10 bytes/s:
/// 11 520 B/s at 115200, i.e. 115 bytes per frame at 100 Hz. Plumb refuses any combination
/// above **85 %** of that: the rest absorbs replies to host commands, the sample clock running
/// up to 1 % fast (PS §7.15), and UART/USB-adapter scheduling jitter. Each format is charged at
/// its worst case: binary frames are always 63 B, text lines up to 95 B, MAVLink its largest
/// packets at the rates of its streams (`MAVLinkStreamRates`) and a heartbeat a second.
public enum LinkBudget {
  /// The largest share of the line's capacity a stream may use.
  public static let maximumUtilisationPercent = 85
  /// 8N1: start bit, 8 data bits, stop bit.
  public static let bitsPerByte = 10
  /// Baud rates the suggestions pick from (the ones termios offers on every Linux UART).
  public static let standardBaudRates = [
    9600, 19200, 38400, 57600, 115_200, 230_400, 460_800, 921_600,
  ]

  /// HEARTBEAT: 10 + 9 + 2 (its last payload byte, `mavlink_version` = 3, is never cut).
  public static let mavlinkHeartbeatBytes = 21
  /// ATTITUDE_QUATERNION: 10 + 32 + 2 (`repr_offset_q` is all zero and cut).
  public static let mavlinkAttitudeBytes = 44
  /// HIGHRES_IMU: 10 + 62 + 2 (`id` is 0 and cut; `fields_updated` is never 0).
  public static let mavlinkIMUBytes = 74

  /// Bytes per second `format` needs at `outputRateHz`, worst case (MAVLink's streams at
  /// `mavlinkRates`).
  public static func bytesPerSecond(
    format: TelemetryFormat, outputRateHz: Int, mavlinkRates: MAVLinkStreamRates = .default
  ) -> Int {
    switch format {
    case .binary:
      return BinaryFormat.telemetryFrameCount * outputRateHz
    case .binaryIMU:
      return BinaryFormat.imuFrameCount * outputRateHz
    case .text:
      return TextFormat.maximumLineCount * outputRateHz
    case .mavlink:
      return mavlinkRates.bytesPerSecond(outputRateHz: outputRateHz)
    }
  }

  /// Checks `format` at `outputRateHz` on a `baudRate` 8N1 line. `sampleRateHz` only shapes the
  /// suggested rate in a refusal (output rates are divisors of the sample rate).
  public static func check(
    format: TelemetryFormat, outputRateHz: Int, baudRate: Int, sampleRateHz: Int = 100,
    mavlinkRates: MAVLinkStreamRates = .default
  ) -> Result<LinkUsage, LinkBudgetRefusal> {
    guard outputRateHz > 0, outputRateHz <= 1_000_000 else {
      return .failure(
        LinkBudgetRefusal(
          reason: .invalidRate, format: format, outputRateHz: outputRateHz, baudRate: baudRate,
          mavlinkRates: mavlinkRates))
    }
    guard baudRate > 0, baudRate <= 100_000_000 else {
      return .failure(
        LinkBudgetRefusal(
          reason: .invalidBaudRate, format: format, outputRateHz: outputRateHz, baudRate: baudRate,
          mavlinkRates: mavlinkRates))
    }
    let usage = LinkUsage(
      format: format, outputRateHz: outputRateHz, baudRate: baudRate, mavlinkRates: mavlinkRates)
    guard !fits(usage.bytesPerSecond, baudRate: baudRate) else { return .success(usage) }
    var refusal = LinkBudgetRefusal(
      reason: .overBudget, format: format, outputRateHz: outputRateHz, baudRate: baudRate,
      mavlinkRates: mavlinkRates)
    refusal.suggestedBaudRate = standardBaudRates.first {
      fits(usage.bytesPerSecond, baudRate: $0)
    }
    refusal.suggestedRateHz = stride(from: min(sampleRateHz, outputRateHz), through: 1, by: -1)
      .first { rate in
        sampleRateHz % rate == 0
          && fits(
            bytesPerSecond(format: format, outputRateHz: rate, mavlinkRates: mavlinkRates),
            baudRate: baudRate)
      }
    return .failure(refusal)
  }

  /// Whether `bytesPerSecond` ≤ 85 % of baud / 10, in exact integer arithmetic.
  public static func fits(_ bytesPerSecond: Int, baudRate: Int) -> Bool {
    bytesPerSecond * bitsPerByte * 100 <= maximumUtilisationPercent * baudRate
  }
}

/// A format, rate and baud rate that fit, with the numbers.
public struct LinkUsage: Hashable, Sendable, CustomStringConvertible {
  public var format: TelemetryFormat
  public var outputRateHz: Int
  public var baudRate: Int
  /// MAVLink's stream rates (other formats ignore them).
  public var mavlinkRates: MAVLinkStreamRates

  public init(
    format: TelemetryFormat, outputRateHz: Int, baudRate: Int,
    mavlinkRates: MAVLinkStreamRates = .default
  ) {
    self.format = format
    self.outputRateHz = outputRateHz
    self.baudRate = baudRate
    self.mavlinkRates = mavlinkRates
  }

  /// Bytes per second the stream needs (worst case).
  public var bytesPerSecond: Int {
    LinkBudget.bytesPerSecond(
      format: format, outputRateHz: outputRateHz, mavlinkRates: mavlinkRates)
  }
  /// Bytes per second the line carries (baud / 10).
  public var capacityBytesPerSecond: Int { baudRate / LinkBudget.bitsPerByte }
  /// `bytesPerSecond / capacity`, 0 … 1.
  public var utilisation: Double {
    Double(bytesPerSecond * LinkBudget.bitsPerByte) / Double(baudRate)
  }

  public var description: String {
    "\(format.rawValue) at \(outputRateHz) Hz needs \(bytesPerSecond) B/s of the "
      + "\(capacityBytesPerSecond) B/s that \(baudRate) baud 8N1 carries "
      + "(\(Int((utilisation * 100).rounded())) %)"
  }
}

/// Why a format/rate/baud combination is refused, with the numbers and a way out.
public struct LinkBudgetRefusal: Error, Hashable, Sendable, CustomStringConvertible {
  public enum Reason: Hashable, Sendable {
    /// The output rate is not positive.
    case invalidRate
    /// The baud rate is not positive.
    case invalidBaudRate
    /// The stream needs more than 85 % of the line.
    case overBudget
  }

  public var reason: Reason
  public var format: TelemetryFormat
  public var outputRateHz: Int
  public var baudRate: Int
  /// The slowest standard baud rate that would carry this stream, if any.
  public var suggestedBaudRate: Int?
  /// The highest rate (a divisor of the sample rate) that fits this baud rate, if any.
  public var suggestedRateHz: Int?
  /// MAVLink's stream rates (other formats ignore them).
  public var mavlinkRates: MAVLinkStreamRates

  public init(
    reason: Reason, format: TelemetryFormat, outputRateHz: Int, baudRate: Int,
    mavlinkRates: MAVLinkStreamRates = .default
  ) {
    self.reason = reason
    self.format = format
    self.outputRateHz = outputRateHz
    self.baudRate = baudRate
    self.mavlinkRates = mavlinkRates
  }

  /// Bytes per second the stream needs.
  public var bytesPerSecond: Int {
    LinkBudget.bytesPerSecond(
      format: format, outputRateHz: outputRateHz, mavlinkRates: mavlinkRates)
  }

  /// The most bytes per second Plumb puts on this line (85 % of baud / 10).
  public var allowedBytesPerSecond: Int {
    baudRate / LinkBudget.bitsPerByte * LinkBudget.maximumUtilisationPercent / 100
  }

  /// The full explanation, for a person at a command line.
  public var description: String {
    switch reason {
    case .invalidRate:
      return "output rate \(outputRateHz) Hz: the rate must be a positive number of hertz"
    case .invalidBaudRate:
      return "baud rate \(baudRate): the baud rate must be positive (e.g. 115200)"
    case .overBudget:
      var text: String
      switch format {
      case .binary:
        text = "binary frames are \(BinaryFormat.telemetryFrameCount) B; "
      case .binaryIMU:
        text = "binary-imu frames are \(BinaryFormat.imuFrameCount) B; "
      case .text:
        text = "text lines are up to \(TextFormat.maximumLineCount) B; "
      case .mavlink:
        text = "MAVLink sends "
        for stream in MAVLinkStream.allCases {
          guard let divider = mavlinkRates.divider(stream, outputRateHz: outputRateHz) else {
            continue
          }
          text +=
            "\(stream.messageName) (\(stream.packetBytes) B) every \(ordinal(divider))frame, "
        }
        text += "HEARTBEAT (\(LinkBudget.mavlinkHeartbeatBytes) B) at 1 Hz; "
      }
      text +=
        "at \(outputRateHz) Hz that is \(bytesPerSecond) B/s; \(baudRate) baud 8N1 carries "
        + "\(baudRate / LinkBudget.bitsPerByte) B/s and Plumb uses at most "
        + "\(LinkBudget.maximumUtilisationPercent) % of it (\(allowedBytesPerSecond) B/s); "
      switch (suggestedBaudRate, suggestedRateHz) {
      case (let baud?, let rate?): text += "use ≥ \(baud) baud or ≤ \(rate) Hz"
      case (let baud?, nil): text += "use ≥ \(baud) baud"
      case (nil, let rate?): text += "use ≤ \(rate) Hz"
      case (nil, nil): text += "no standard baud rate carries it: lower the rate"
      }
      return text
    }
  }

  /// "" for 1, "2nd ", "3rd ", "4th " …: "every 2nd frame".
  private func ordinal(_ n: Int) -> String {
    guard n > 1 else { return "" }
    let suffix =
      (n % 100) / 10 == 1
      ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th"
    return "\(n)\(suffix) "
  }

  /// At most 46 characters, for a command reply: `6300 B/s > 816 B/s at 9600 baud; max 10 Hz`.
  public var shortDescription: FixedText { shortDescription(compact: false) }

  /// The same, `compact` without the unit of the allowed rate (for the widest settings, whose
  /// figures would not fit a reply otherwise).
  public func shortDescription(compact: Bool) -> FixedText {
    var text = FixedText()
    switch reason {
    case .invalidRate:
      text.append("rate must be a positive number of Hz")
    case .invalidBaudRate:
      text.append("baud rate must be positive")
    case .overBudget:
      text.append(decimal: bytesPerSecond)
      text.append(" B/s > ")
      text.append(decimal: allowedBytesPerSecond)
      text.append(compact ? " at " : " B/s at ")
      text.append(decimal: baudRate)
      text.append(" baud")
      if let rate = suggestedRateHz {
        text.append("; max ")
        text.append(decimal: rate)
        text.append(" Hz")
      }
    }
    return text
  }
}
