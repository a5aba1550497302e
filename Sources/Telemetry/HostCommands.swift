/// Commands a host may send on the serial line (FORMATS.md "Host commands").
///
/// The parser turns bytes into exactly these values and nothing else: no command takes a
/// register address, a raw value or a path, so nothing from the line can reach the sensor's
/// registers or the file system.
public enum HostCommand: Hashable, Sendable {
  /// Zero the heading: yaw relative to the attitude now.
  case tare
  /// Switch the output format (checked against the link budget at the current rate).
  case format(TelemetryFormat)
  /// Change the output rate, Hz (a divisor of the sample rate, checked against the link budget).
  case rate(hertz: Int)
  /// Reply with health counters.
  case status
  /// Reply with the firmware and format versions.
  case version
  /// Change a run-time parameter (`PlumbParameter.change(to:context:)` checked it; a value of
  /// MAVLink's REAL32 type).
  case set(PlumbParameter, Float)
  /// Take the gyro bias from the rest the board is in now (refused, with the reason, when it is
  /// not at rest).
  case calibrateGyro

  /// The command as a host would type it (`rate 50`): what a recording notes, and what the
  /// parser reads back (a `set` value in the shortest decimal that reads back as the same
  /// Float).
  public var line: String {
    switch self {
    case .tare: "tare"
    case .format(let format): "format \(format.rawValue)"
    case .rate(let hertz): "rate \(hertz)"
    case .status: "status"
    case .version: "version"
    case .set(let parameter, let value): "set \(parameter.nameString) \(value)"
    case .calibrateGyro: "calibrate gyro"
    }
  }

  /// `rate hertz`, or why not: 1 … the sample rate, a divisor of it, within the link budget in
  /// the current format (the `rate` command's and `OUT_RATE_HZ`'s checks).
  public static func rate(checking hertz: Int, context: HostCommandContext) -> Result<
    HostCommand, HostCommandError
  > {
    guard hertz >= 1, hertz <= context.sampleRateHz else {
      return .failure(.rateOutOfRange(hertz: hertz, sampleRateHz: context.sampleRateHz))
    }
    guard context.sampleRateHz % hertz == 0 else {
      return .failure(.rateNotDivisor(hertz: hertz, sampleRateHz: context.sampleRateHz))
    }
    if case .failure(let refusal) = LinkBudget.check(
      format: context.format, outputRateHz: hertz, baudRate: context.baudRate,
      sampleRateHz: context.sampleRateHz, mavlinkRates: context.mavlinkRates)
    {
      return .failure(.linkBudget(refusal))
    }
    return .success(.rate(hertz: hertz))
  }

  /// The command's word.
  public var name: HostCommandName {
    switch self {
    case .tare: .tare
    case .format: .format
    case .rate: .rate
    case .status: .status
    case .version: .version
    case .set: .set
    case .calibrateGyro: .calibrate
    }
  }
}

/// The command words.
public enum HostCommandName: String, Hashable, Sendable, CaseIterable {
  case tare, format, rate, status, version, set, calibrate
}

/// What the loop knows that a command is checked against.
public struct HostCommandContext: Hashable, Sendable {
  /// The sensor's sample rate, Hz; output rates must divide it.
  public var sampleRateHz: Int
  /// The serial line's 8N1 baud rate.
  public var baudRate: Int
  /// The format being sent now.
  public var format: TelemetryFormat
  /// The output rate now, Hz.
  public var outputRateHz: Int
  /// MAVLink's stream rates now.
  public var mavlinkRates: MAVLinkStreamRates

  public init(
    sampleRateHz: Int = 100, baudRate: Int = 115_200, format: TelemetryFormat = .binary,
    outputRateHz: Int = 100, mavlinkRates: MAVLinkStreamRates = .default
  ) {
    self.sampleRateHz = sampleRateHz
    self.baudRate = baudRate
    self.format = format
    self.outputRateHz = outputRateHz
    self.mavlinkRates = mavlinkRates
  }
}

/// Why a line is not a command. Each has a reply text of at most 46 characters.
public enum HostCommandError: Error, Hashable, Sendable {
  /// The first word is not a command (the word, cut to 12 characters).
  case unknownCommand(FixedText)
  /// `format` or `rate` without its argument.
  case missingArgument(HostCommandName)
  /// An argument where none belongs (the first extra word).
  case unexpectedArgument(HostCommandName, FixedText)
  /// `format X` with X not binary, binary-imu, text or mavlink.
  case unknownFormat(FixedText)
  /// `rate X` with X not a whole number.
  case invalidRate(FixedText)
  /// `rate N` with N outside 1 … the sample rate.
  case rateOutOfRange(hertz: Int, sampleRateHz: Int)
  /// `rate N` with N a whole number of more than nine significant digits (far above any
  /// sample rate, and too long to show whole in a reply).
  case rateTooLarge(digits: Int, sampleRateHz: Int)
  /// `rate N` with N not dividing the sample rate.
  case rateNotDivisor(hertz: Int, sampleRateHz: Int)
  /// The format/rate would not fit the serial line.
  case linkBudget(LinkBudgetRefusal)
  /// The line exceeded the maximum length; it is ignored up to the next newline.
  case lineTooLong(limit: Int)
  /// A byte that is not printable ASCII, space or tab.
  case invalidByte(UInt8)
  /// `set NAME …` with no parameter of that name (the name, cut to 12 characters).
  case unknownParameter(FixedText)
  /// `set NAME X` with X not a decimal number.
  case invalidNumber(FixedText)
  /// A parameter value outside its range.
  case parameterOutOfRange(PlumbParameter, value: Float)
  /// A fraction for a whole-number parameter.
  case parameterNotWhole(PlumbParameter, value: Float)
  /// The change was checked but the setting refused it (the estimator's own reason).
  case parameterRefused(PlumbParameter, FixedText)
  /// `calibrate gyro` when the board is not at rest, or still starting (the reason).
  case notAtRest(FixedText)

  /// The reply to send: at most `HostReply.maximumTextLength` characters, never cut. Where the
  /// usual wording would be longer (the longest words echoed, 8000 Hz, 921600 baud), a shorter
  /// one says the same.
  public var reply: HostReply {
    let full = text(compact: false)
    return HostReply(
      .error, full.count <= HostReply.maximumTextLength ? full : text(compact: true))
  }

  private func text(compact: Bool) -> FixedText {
    var text = FixedText()
    switch self {
    case .unknownCommand(let word):
      text.append("unknown command \"")
      text.append(word)
      text.append("\"")
    case .missingArgument(.format):
      text.append("format needs binary|binary-imu|text|mavlink")
    case .missingArgument(.rate):
      text.append("rate needs Hz, e.g. rate 50")
    case .missingArgument(.set):
      text.append("set needs NAME VALUE, e.g. set SR_IMU_HZ 25")
    case .missingArgument(.calibrate):
      text.append("calibrate needs what: calibrate gyro")
    case .missingArgument(let name):
      text.append(name.rawValue)
      text.append(" needs an argument")
    case .unexpectedArgument(let name, let word):
      text.append(name.rawValue)
      text.append(
        name == .format || name == .rate || name == .calibrate
          ? " takes one argument" : name == .set ? " takes two arguments" : " takes no argument")
      text.append("; got \"")
      text.append(word)
      text.append("\"")
    case .unknownFormat(let word):
      // 46 characters hold the four names and an echo of 5 ("format "xxxxx"? …"); a longer
      // word is shown by its first two and "...".
      text.append("format \"")
      if word.count <= 5 {
        text.append(word)
      } else {
        _ = text.append(word[0])
        _ = text.append(word[1])
        text.append("...")
      }
      text.append("\"? binary|binary-imu|text|mavlink")
    case .invalidRate(let word):
      text.append("rate \"")
      text.append(word)
      text.append(compact ? "\"? whole Hz, e.g. rate 50" : "\"? give whole Hz, e.g. rate 50")
    case .rateOutOfRange(let hertz, let sampleRateHz):
      text.append("rate ")
      text.append(decimal: hertz)
      text.append(" Hz: must be 1 to ")
      text.append(decimal: sampleRateHz)
      text.append(" Hz")
    case .rateTooLarge(let digits, let sampleRateHz):
      text.append("rate of ")
      text.append(decimal: digits)
      text.append(" digits: must be 1 to ")
      text.append(decimal: sampleRateHz)
      text.append(" Hz")
    case .rateNotDivisor(let hertz, let sampleRateHz):
      text.append(decimal: hertz)
      text.append(" Hz does not divide ")
      text.append(decimal: sampleRateHz)
      if !compact { text.append(" Hz") }
      let (below, above) = Self.neighbouringDivisors(of: sampleRateHz, around: hertz)
      text.append(": try ")
      text.append(decimal: below)
      if let above {
        text.append(compact ? ", " : " or ")
        text.append(decimal: above)
      }
    case .linkBudget(let refusal):
      text.append(refusal.shortDescription(compact: compact))
    case .lineTooLong(let limit):
      text.append("line longer than ")
      text.append(decimal: limit)
      text.append(" bytes: ignored")
    case .invalidByte(let byte):
      text.append("byte 0x")
      text.append(TextFormat.hexDigit(Int(byte >> 4)))
      text.append(TextFormat.hexDigit(Int(byte & 0xF)))
      text.append(" not allowed in commands")
    case .unknownParameter(let word):
      text.append("no parameter \"")
      text.append(word)
      text.append(compact ? "\"" : "\"; see plumb params")
    case .invalidNumber(let word):
      text.append("\"")
      text.append(word)
      text.append("\" is not a number")
    case .parameterOutOfRange(let parameter, let value):
      text.append(parameter.name)
      text.append(" ")
      Self.append(value, to: &text)
      text.append(": must be ")
      Self.append(parameter.range.lowerBound, to: &text)
      text.append(" to ")
      Self.append(parameter.range.upperBound, to: &text)
      if !compact, !parameter.units.isEmpty {
        text.append(" ")
        text.append(parameter.units)
      }
    case .parameterNotWhole(let parameter, let value):
      text.append(parameter.name)
      text.append(" ")
      Self.append(value, to: &text)
      text.append(": must be whole")
    case .parameterRefused(let parameter, let reason):
      text.append(parameter.name)
      text.append(": ")
      text.append(reason)
    case .notAtRest(let reason):
      text.append(reason)
    }
    return text
  }

  /// A parameter value in a reply: up to three decimals, trailing zeros cut; out-of-range
  /// magnitudes (a mistyped 1e30 over MAVLink) as `huge`, NaN as `nan`.
  public static func append(_ value: Float, to text: inout FixedText) {
    guard !value.isNaN else {
      text.append("nan")
      return
    }
    guard abs(value) < 1e9 else {
      text.append(value < 0 ? "-huge" : "huge")
      return
    }
    var digits = FixedText()
    digits.append(fixed: Double(value), decimals: 3)
    var count = digits.count
    digits.withBytes { bytes in
      while count > 0, bytes[count - 1] == UInt8(ascii: "0") { count -= 1 }
      if count > 0, bytes[count - 1] == UInt8(ascii: ".") { count -= 1 }
      text.append(UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
    }
  }

  /// Whether the line was garbage rather than a mistyped command: a control or non-ASCII byte,
  /// or an overlong line. Only these are paced (`minimumPollsBetweenErrors`); a printable line
  /// always gets its answer.
  public var isGarbage: Bool {
    switch self {
    case .invalidByte, .lineTooLong: true
    default: false
    }
  }

  /// The divisors of `n` just below and just above `value`.
  static func neighbouringDivisors(of n: Int, around value: Int) -> (Int, Int?) {
    var below = 1
    var above: Int?
    for d in 1...n where n % d == 0 {
      if d < value { below = d } else if d > value, above == nil { above = d }
    }
    return (below, above)
  }
}

/// Assembles host command lines from serial bytes and parses them, with bounded memory and
/// bounded work per call, so a flood of garbage never stalls the loop (FORMATS.md "Host
/// commands").
///
/// - Lines end at `\n` or `\r` (so `\r\n` works); blank lines are ignored, and so is NUL where
///   a line starts (telnet's `\r\0`).
/// - A line may hold at most `maximumLineLength` bytes. A longer one is answered with one
///   `lineTooLong` error at the moment it overflows and ignored up to the next line end.
/// - Only printable ASCII, space and tab are allowed; a line with any other byte is answered
///   with `invalidByte`.
/// - Words are separated by spaces or tabs; command words and format names are
///   case-insensitive (`TARE`, `Format MAVLink`).
/// - `poll` looks at no more than `bytesPerPoll` bytes and returns at most one result; bytes it
///   did not reach wait in the input buffer (`inputCapacity`); bytes offered while it is full are
///   refused by `receive` and stay in the caller's (kernel's) buffer.
/// - Garbage errors (`invalidByte`, `lineTooLong`) closer than `minimumPollsBetweenErrors` polls
///   after the previous returned error are counted (`errorsSuppressed`) but not returned, so
///   line noise cannot flood the telemetry link with error replies. Every printable line gets
///   its result (at most one per poll).
public struct HostCommandParser: Sendable {
  public struct Configuration: Hashable, Sendable {
    /// Bytes per line, terminator excluded.
    public var maximumLineLength: Int
    /// Bytes examined per `poll`.
    public var bytesPerPoll: Int
    /// Bytes held between polls.
    public var inputCapacity: Int
    /// Polls that must pass after a returned error before the next garbage error is returned
    /// (10 = at most 10 replies to garbage a second at 100 Hz).
    public var minimumPollsBetweenErrors: Int

    public init(
      maximumLineLength: Int = 64, bytesPerPoll: Int = 128, inputCapacity: Int = 256,
      minimumPollsBetweenErrors: Int = 10
    ) {
      self.maximumLineLength = max(8, maximumLineLength)
      self.bytesPerPoll = max(1, bytesPerPoll)
      self.inputCapacity = max(1, inputCapacity)
      self.minimumPollsBetweenErrors = max(0, minimumPollsBetweenErrors)
    }
  }

  /// What the parser has seen.
  public struct Statistics: Hashable, Sendable {
    /// Non-blank lines completed, plus overlong lines.
    public var lines: UInt64 = 0
    /// Lines that were commands.
    public var commands: UInt64 = 0
    /// Errors returned.
    public var errorsReturned: UInt64 = 0
    /// Garbage errors counted but not returned (too soon after the previous error).
    public var errorsSuppressed: UInt64 = 0
    /// Bytes of overlong lines thrown away.
    public var bytesDiscarded: UInt64 = 0
    /// Bytes `receive` refused because the input buffer was full.
    public var bytesRefused: UInt64 = 0
    /// MAVLink packets (a ground station's) skipped whole, and their bytes.
    public var mavlinkPacketsSkipped: UInt64 = 0
    public var mavlinkBytesSkipped: UInt64 = 0
  }

  public let configuration: Configuration
  public private(set) var statistics = Statistics()

  private var input: [UInt8]
  private var inputStart = 0
  private var inputCount = 0
  private var line: [UInt8]
  private var lineCount = 0
  private var discarding = false
  private var badByte: UInt8?
  private var pollsSinceError = Int.max
  /// A MAVLink packet being skipped: its bytes seen (0: none), its payload length once seen, and
  /// its whole length once known (0 before).
  private var packetSeen = 0
  private var packetPayload = 0
  private var packetTotal = 0
  private var packetIsVersion2 = false

  public init(configuration: Configuration = Configuration()) {
    self.configuration = configuration
    input = [UInt8](repeating: 0, count: configuration.inputCapacity)
    line = [UInt8](repeating: 0, count: configuration.maximumLineLength)
  }

  /// Room left in the input buffer: read at most this many bytes from the port.
  public var freeCapacity: Int { input.count - inputCount }

  /// Bytes waiting to be parsed.
  public var pendingBytes: Int { inputCount }

  /// Takes as many of `bytes` as fit; returns how many (the rest count as refused).
  @discardableResult
  public mutating func receive(_ bytes: UnsafeRawBufferPointer) -> Int {
    let accepted = min(bytes.count, freeCapacity)
    for i in 0..<accepted {
      input[(inputStart + inputCount) % input.count] = bytes[i]
      inputCount += 1
    }
    statistics.bytesRefused += UInt64(bytes.count - accepted)
    return accepted
  }

  /// Takes an array's bytes (tools and tests).
  @discardableResult
  public mutating func receive(_ bytes: [UInt8]) -> Int {
    bytes.withUnsafeBytes { receive($0) }
  }

  /// Examines up to `bytesPerPoll` waiting bytes; returns the first command or (unsuppressed)
  /// error found, or `nil`.
  public mutating func poll(context: HostCommandContext) -> Result<HostCommand, HostCommandError>? {
    if pollsSinceError < Int.max { pollsSinceError += 1 }
    // The loop polls after every sample and there is almost never a byte waiting: answer that
    // here, inlined into the loop, and leave the parsing (and its large frame) to a call.
    guard inputCount > 0 else { return nil }
    return parseWaiting(context: context)
  }

  /// `poll` when `pendingBytes` is 0, without a context: it only counts the poll (garbage
  /// errors are paced in polls).
  @inline(__always)
  public mutating func pollWithNothingWaiting() {
    if pollsSinceError < Int.max { pollsSinceError += 1 }
  }

  @inline(never)
  private mutating func parseWaiting(context: HostCommandContext) -> Result<
    HostCommand, HostCommandError
  >? {
    var budget = configuration.bytesPerPoll
    while budget > 0 && inputCount > 0 {
      let byte = input[inputStart]
      inputStart = (inputStart + 1) % input.count
      inputCount -= 1
      budget -= 1
      guard let result = consume(byte, context: context) else { continue }
      switch result {
      case .success:
        statistics.commands += 1
        return result
      case .failure(let error):
        if error.isGarbage, pollsSinceError < configuration.minimumPollsBetweenErrors {
          statistics.errorsSuppressed += 1
          continue
        }
        pollsSinceError = 0
        statistics.errorsReturned += 1
        return result
      }
    }
    return nil
  }

  private mutating func consume(_ byte: UInt8, context: HostCommandContext) -> Result<
    HostCommand, HostCommandError
  >? {
    if packetSeen > 0, skipPacket(byte) { return nil }
    // While Plumb streams MAVLink, a MAVLink start byte (v2 0xFD, v1 0xFE; never in ASCII or
    // UTF-8) where a line starts, or in an overlong line's remainder (where a stream joined
    // mid-packet ends up), begins a ground station's packet: skipped whole by its length, CR and
    // LF bytes and all.
    if byte == 0xFD || byte == 0xFE, lineCount == 0, context.format == .mavlink {
      discarding = false
      packetSeen = 1
      packetTotal = 0
      packetIsVersion2 = byte == 0xFD
      statistics.mavlinkBytesSkipped += 1
      return nil
    }
    if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
      defer {
        lineCount = 0
        badByte = nil
      }
      if discarding {
        discarding = false
        return nil
      }
      if let badByte {
        statistics.lines += 1
        return .failure(.invalidByte(badByte))
      }
      return parseLine(context: context)
    }
    if discarding {
      statistics.bytesDiscarded += 1
      return nil
    }
    // NUL where a line starts is padding: telnet's CR NUL line end, or a break on the line.
    if byte == 0 && lineCount == 0 { return nil }
    guard lineCount < line.count else {
      discarding = true
      statistics.bytesDiscarded += UInt64(lineCount + 1)
      statistics.lines += 1
      lineCount = 0
      badByte = nil
      return .failure(.lineTooLong(limit: line.count))
    }
    let printable = (0x20...0x7E).contains(byte) || byte == UInt8(ascii: "\t")
    if !printable && badByte == nil { badByte = byte }
    line[lineCount] = byte
    lineCount += 1
    return nil
  }

  /// One byte of a MAVLink packet: v1 is STX, len, 4 header bytes, payload, CRC (8 + len); v2
  /// is STX, len, incompat, compat, 6 header bytes, payload, CRC (12 + len), and 13 signature
  /// bytes when incompat bit 0 is set. Returns `false` when a v2 header is not one a station
  /// sends (an incompat flag other than signing, any compat flag: line noise, not a packet):
  /// the bytes so far become a line with a bad byte, and `byte` is read as part of it.
  private mutating func skipPacket(_ byte: UInt8) -> Bool {
    let seen = packetSeen + 1
    if packetIsVersion2 && ((seen == 3 && byte > 0x01) || (seen == 4 && byte != 0)) {
      statistics.mavlinkBytesSkipped -= UInt64(packetSeen)
      lineCount = packetSeen
      badByte = 0xFD
      packetSeen = 0
      return false
    }
    packetSeen = seen
    statistics.mavlinkBytesSkipped += 1
    if packetSeen == 2 {
      packetPayload = Int(byte)
      if !packetIsVersion2 { packetTotal = 8 + packetPayload }
    } else if packetSeen == 3 && packetIsVersion2 {
      packetTotal = 12 + packetPayload + (byte & 0x01 != 0 ? 13 : 0)
    }
    if packetTotal > 0 && packetSeen >= packetTotal {
      packetSeen = 0
      statistics.mavlinkPacketsSkipped += 1
    }
    return true
  }

  private mutating func parseLine(context: HostCommandContext) -> Result<
    HostCommand, HostCommandError
  >? {
    line.withUnsafeBytes { raw in
      let text = UnsafeRawBufferPointer(rebasing: raw[0..<lineCount])
      var words = WordSplitter(text)
      guard let first = words.next() else { return nil }
      statistics.lines += 1
      let argument = words.next()
      let extra = words.next()
      guard let name = Self.commandName(first) else {
        return .failure(.unknownCommand(echo(first)))
      }
      switch name {
      case .tare, .status, .version:
        if let argument { return .failure(.unexpectedArgument(name, echo(argument))) }
        return .success(name == .tare ? .tare : name == .status ? .status : .version)
      case .calibrate:
        guard let argument else { return .failure(.missingArgument(.calibrate)) }
        if let extra { return .failure(.unexpectedArgument(.calibrate, echo(extra))) }
        guard Self.equalsIgnoringCase(argument, "gyro") else {
          return .failure(.unexpectedArgument(.calibrate, echo(argument)))
        }
        return .success(.calibrateGyro)
      case .set:
        guard let argument, let extra else { return .failure(.missingArgument(.set)) }
        if let more = words.next() { return .failure(.unexpectedArgument(.set, echo(more))) }
        guard let parameter = PlumbParameter.named(argument) else {
          return .failure(.unknownParameter(echo(argument)))
        }
        guard let value = DecimalNumber.parse(extra) else {
          return .failure(.invalidNumber(echo(extra)))
        }
        return parameter.change(to: Float(value), context: context)
      case .format:
        guard let argument else { return .failure(.missingArgument(.format)) }
        if let extra { return .failure(.unexpectedArgument(.format, echo(extra))) }
        guard let format = Self.format(argument) else {
          return .failure(.unknownFormat(echo(argument)))
        }
        if case .failure(let refusal) = LinkBudget.check(
          format: format, outputRateHz: context.outputRateHz, baudRate: context.baudRate,
          sampleRateHz: context.sampleRateHz, mavlinkRates: context.mavlinkRates)
        {
          return .failure(.linkBudget(refusal))
        }
        return .success(.format(format))
      case .rate:
        guard let argument else { return .failure(.missingArgument(.rate)) }
        if let extra { return .failure(.unexpectedArgument(.rate, echo(extra))) }
        let digits = Self.significantDigits(argument)
        if digits > 9 {
          return .failure(.rateTooLarge(digits: digits, sampleRateHz: context.sampleRateHz))
        }
        guard let value = DecimalFormat.parseUnsigned(argument, maximumDigits: 18) else {
          return .failure(.invalidRate(echo(argument)))
        }
        return HostCommand.rate(checking: Int(value), context: context)
      }
    }
  }

  // Straight-line comparisons: iterating an array of (word, value) pairs costs a heap
  // allocation per element in unoptimised builds (unspecialised generics box large elements).
  private static func commandName(_ word: UnsafeRawBufferPointer) -> HostCommandName? {
    if equalsIgnoringCase(word, "tare") { return .tare }
    if equalsIgnoringCase(word, "format") { return .format }
    if equalsIgnoringCase(word, "rate") { return .rate }
    if equalsIgnoringCase(word, "status") { return .status }
    if equalsIgnoringCase(word, "version") { return .version }
    if equalsIgnoringCase(word, "set") { return .set }
    if equalsIgnoringCase(word, "calibrate") { return .calibrate }
    return nil
  }

  private static func format(_ word: UnsafeRawBufferPointer) -> TelemetryFormat? {
    if equalsIgnoringCase(word, "binary") { return .binary }
    if equalsIgnoringCase(word, "binary-imu") { return .binaryIMU }
    if equalsIgnoringCase(word, "text") { return .text }
    if equalsIgnoringCase(word, "mavlink") { return .mavlink }
    return nil
  }

  /// `word` for a reply: whole up to 12 characters; longer, its first 9 and "...", so a cut
  /// word is never shown as if it had been typed so.
  private func echo(_ word: UnsafeRawBufferPointer) -> FixedText {
    var text = FixedText()
    if word.count <= 12 {
      text.append(word)
    } else {
      text.append(UnsafeRawBufferPointer(rebasing: word[0..<9]))
      text.append("...")
    }
    return text
  }

  /// The digits of `word` after its leading zeros when it is all digits (a whole number, however
  /// long); 0 otherwise.
  /// Plain loops: closures over the bytes allocate in unoptimised builds, and parsing allocates
  /// nothing.
  private static func significantDigits(_ word: UnsafeRawBufferPointer) -> Int {
    var digits = 0
    for byte in word {
      guard byte >= 0x30 && byte <= 0x39 else { return 0 }
      if digits > 0 || byte != 0x30 { digits += 1 }
    }
    return digits
  }

  private static func equalsIgnoringCase(_ word: UnsafeRawBufferPointer, _ candidate: StaticString)
    -> Bool
  {
    candidate.withUTF8Buffer { expected in
      guard expected.count == word.count else { return false }
      for i in 0..<word.count where asciiLowercase(word[i]) != expected[i] { return false }
      return true
    }
  }
}

/// Space- or tab-separated words of a line, without copying.
private struct WordSplitter {
  let bytes: UnsafeRawBufferPointer
  var position = 0

  init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

  mutating func next() -> UnsafeRawBufferPointer? {
    while position < bytes.count && isBlank(bytes[position]) { position += 1 }
    guard position < bytes.count else { return nil }
    let start = position
    while position < bytes.count && !isBlank(bytes[position]) { position += 1 }
    return UnsafeRawBufferPointer(rebasing: bytes[start..<position])
  }

  private func isBlank(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
  }
}
