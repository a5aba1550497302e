import Telemetry
import Testing

private let context = HostCommandContext(
  sampleRateHz: 100, baudRate: 115_200, format: .binary, outputRateHz: 100)
private let mavlinkContext = HostCommandContext(
  sampleRateHz: 100, baudRate: 115_200, format: .mavlink, outputRateHz: 100)

/// Every result the parser gives for `input`, polling until the input is used up.
private func parse(
  _ input: String, context: HostCommandContext = context,
  configuration: HostCommandParser.Configuration = .init(minimumPollsBetweenErrors: 0)
) -> [Result<HostCommand, HostCommandError>] {
  parse(Array(input.utf8), context: context, configuration: configuration).results
}

private func parse(
  _ input: [UInt8], context: HostCommandContext = context,
  configuration: HostCommandParser.Configuration = .init(minimumPollsBetweenErrors: 0)
) -> (results: [Result<HostCommand, HostCommandError>], parser: HostCommandParser, polls: Int) {
  var parser = HostCommandParser(configuration: configuration)
  var results: [Result<HostCommand, HostCommandError>] = []
  var offset = 0
  var polls = 0
  while offset < input.count || parser.pendingBytes > 0 {
    let take = min(parser.freeCapacity, input.count - offset)
    parser.receive(Array(input[offset..<offset + take]))
    offset += take
    polls += 1
    if let result = parser.poll(context: context) { results.append(result) }
  }
  // Drain: a poll may stop at a result with bytes still waiting.
  while let result = parser.poll(context: context) { results.append(result) }
  return (results, parser, polls)
}

@Suite struct HostCommandTests {
  @Test(arguments: [
    ("tare\n", HostCommand.tare), ("TARE\r\n", .tare), ("  status\t\n", .status),
    ("version\r", .version), ("format text\n", .format(.text)),
    ("Format   MAVLink\n", .format(.mavlink)), ("format binary\n", .format(.binary)),
    ("rate 50\n", .rate(hertz: 50)), ("rate 100\n", .rate(hertz: 100)),
    ("rate 1\n", .rate(hertz: 1)),
    ("rate 020\n", .rate(hertz: 20)),
  ])
  func eachCommand(line: String, expected: HostCommand) {
    #expect(parse(line) == [.success(expected)])
  }

  @Test(arguments: [
    ("foo\n", HostCommandError.unknownCommand("foo"), "unknown command \"foo\""),
    ("format\n", .missingArgument(.format), "format needs binary|binary-imu|text|mavlink"),
    ("rate\n", .missingArgument(.rate), "rate needs Hz, e.g. rate 50"),
    ("tare now\n", .unexpectedArgument(.tare, "now"), "tare takes no argument; got \"now\""),
    ("format text x\n", .unexpectedArgument(.format, "x"), "format takes one argument; got \"x\""),
    ("format json\n", .unknownFormat("json"), "format \"json\"? binary|binary-imu|text|mavlink"),
    ("rate fast\n", .invalidRate("fast"), "rate \"fast\"? give whole Hz, e.g. rate 50"),
    ("rate 12.5\n", .invalidRate("12.5"), "rate \"12.5\"? give whole Hz, e.g. rate 50"),
    ("rate -5\n", .invalidRate("-5"), "rate \"-5\"? give whole Hz, e.g. rate 50"),
    ("rate 0\n", .rateOutOfRange(hertz: 0, sampleRateHz: 100), "rate 0 Hz: must be 1 to 100 Hz"),
    (
      "rate 400\n", .rateOutOfRange(hertz: 400, sampleRateHz: 100),
      "rate 400 Hz: must be 1 to 100 Hz"
    ),
    (
      "rate 1000000\n", .rateOutOfRange(hertz: 1_000_000, sampleRateHz: 100),
      "rate 1000000 Hz: must be 1 to 100 Hz"
    ),
    (
      "rate 30\n", .rateNotDivisor(hertz: 30, sampleRateHz: 100),
      "30 Hz does not divide 100 Hz: try 25 or 50"
    ),
    (
      "rate 3\n", .rateNotDivisor(hertz: 3, sampleRateHz: 100),
      "3 Hz does not divide 100 Hz: try 2 or 4"
    ),
    ("\u{7}tare\n", .invalidByte(0x07), "byte 0x07 not allowed in commands"),
    ("tare\u{7F}\n", .invalidByte(0x7F), "byte 0x7F not allowed in commands"),
    ("dépêche\n", .invalidByte(0xC3), "byte 0xC3 not allowed in commands"),
    (
      "averyveryverylongword\n", .unknownCommand("averyvery..."),
      "unknown command \"averyvery...\""
    ),
    ("$tare*\n", .unknownCommand("$tare*"), "unknown command \"?tare?\""),
  ])
  func eachError(line: String, expected: HostCommandError, reply: String) {
    #expect(parse(line) == [.failure(expected)])
    #expect(expected.reply.status == .error)
    #expect(expected.reply.text.description == reply)
    #expect(expected.reply.text.count <= 46)
  }

  /// Issue 21: `rate 99999999999999999999` was answered `rate "999999999999"? give whole Hz,
  /// e.g. rat`: the reply cut off mid-word at its 46 characters, and the number shown as if
  /// twelve nines had been typed. Every refusal, for the longest input and the widest
  /// settings (8000 Hz, 921600 baud), fits whole; a word too long to echo is shown cut, with
  /// "...", never as if it were the word typed.
  @Test func everyRefusalFitsWholeWhateverTheInput() {
    let long = String(repeating: "9", count: 40)
    let lines = [
      "rate \(long)", "rate 99999999999999999999", "rate 999999999999999999", "rate 1234567890",
      "rate 0000000000000000050x", "rate -\(long)", "rate 1e308", "rate 12.5", "rate 7999",
      "rate 8001", "rate 999999999", "rate 3", "rate \(long)x", "format \(long)", "format text",
      "format mavlink", "format binary", "tare \(long)", "status \(long)", "version now",
      "format text \(long)", "rate 50 \(long)", "\(long)", "rate", "format", "\u{7}",
      String(repeating: "x", count: 300),
    ]
    var checked = 0
    for sampleRateHz in [4, 100, 1000, 8000] {
      for baudRate in [9600, 115_200, 921_600] {
        for format in [TelemetryFormat.binary, .text, .mavlink] {
          for outputRateHz in [1, sampleRateHz] {
            let context = HostCommandContext(
              sampleRateHz: sampleRateHz, baudRate: baudRate, format: format,
              outputRateHz: outputRateHz)
            for line in lines {
              for case .failure(let error) in parse(line + "\n", context: context) {
                let text = error.reply.text
                #expect(
                  !text.isTruncated && text.count <= HostReply.maximumTextLength,
                  "\(line.prefix(30)) at \(sampleRateHz) Hz, \(baudRate) baud: \(text)")
                checked += 1
              }
            }
          }
        }
      }
    }
    #expect(checked > 1000)
    // Too long to echo whole: cut, and shown cut.
    let huge = parse("rate 99999999999999999999\n")
    #expect(huge.first.map { "\($0)" }?.contains("rateTooLarge") == true)
    if case .failure(let error)? = huge.first {
      #expect(error.reply.text.description == "rate of 20 digits: must be 1 to 100 Hz")
    }
    if case .failure(let error)? = parse("format abcdefghijklmnopqrstuvwxyz\n").first {
      #expect(error.reply.text.description == "format \"ab...\"? binary|binary-imu|text|mavlink")
    }
  }

  @Test func theLinkBudgetRefusesRatesAndFormatsThatDoNotFit() {
    let slow = HostCommandContext(
      sampleRateHz: 100, baudRate: 9600, format: .binary, outputRateHz: 10)
    guard case .failure(.linkBudget(let refusal))? = parse("rate 100\n", context: slow).first else {
      Issue.record("rate 100 at 9600 baud must be refused")
      return
    }
    #expect(refusal.shortDescription.description == "6300 B/s > 816 B/s at 9600 baud; max 10 Hz")
    #expect(parse("rate 10\n", context: slow) == [.success(.rate(hertz: 10))])
    let medium = HostCommandContext(
      sampleRateHz: 100, baudRate: 57_600, format: .binary, outputRateHz: 100)
    guard case .failure(.linkBudget(let text))? = parse("format text\n", context: medium).first
    else {
      Issue.record("text at 100 Hz on 57600 baud must be refused")
      return
    }
    #expect(text.format == .text && text.suggestedRateHz == 50 && text.suggestedBaudRate == 115_200)
  }

  /// Telnet ends a line with CR NUL (RFC 854; ser2net, telnet to a console server), and a
  /// break on the line reads as NUL: NUL where a line starts is padding, not a bad byte.
  @Test func nulWhereALineStartsIsIgnored() {
    #expect(
      parse("tare\r\0status\r\0version\r\0") == [
        .success(.tare), .success(.status), .success(.version),
      ])
    #expect(parse("\0\0\n\0rate 50\n") == [.success(.rate(hertz: 50))])
    #expect(parse("ta\0re\n") == [.failure(.invalidByte(0))], "inside a line it is still refused")
  }

  @Test func blankLinesAreIgnoredAndLineEndsMayBeCRLFOrEither() {
    #expect(parse("\n\r\n  \t \n\r\r") == [])
    #expect(
      parse("tare\r\nstatus\rversion\n") == [
        .success(.tare), .success(.status), .success(.version),
      ])
  }

  @Test func anOverlongLineIsAnsweredOnceAndIgnoredToItsEnd() {
    let long = String(repeating: "a", count: 64) + "\n"
    #expect(parse(long) == [.failure(.unknownCommand("aaaaaaaaa..."))], "64 bytes is allowed")
    let tooLong = String(repeating: "tare ", count: 40) + "\ntare\n"
    #expect(parse(tooLong) == [.failure(.lineTooLong(limit: 64)), .success(.tare)])
    let (_, parser, _) = parse(Array(tooLong.utf8))
    #expect(parser.statistics.bytesDiscarded == 200)
  }

  @Test func binaryGarbageNeverStallsAndEveryPollIsBounded() {
    var random = SplitMix64(seed: 0xBAD)
    let garbage = (0..<100_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    var parser = HostCommandParser()
    var offset = 0
    var polls = 0
    while offset < garbage.count || parser.pendingBytes > 0 {
      let take = min(parser.freeCapacity, garbage.count - offset)
      parser.receive(Array(garbage[offset..<offset + take]))
      offset += take
      let before = parser.pendingBytes
      _ = parser.poll(context: context)
      #expect(before - parser.pendingBytes <= 128, "a poll looks at no more than 128 bytes")
      #expect(parser.pendingBytes <= 256)
      polls += 1
    }
    #expect(polls < 100_000 / 128 * 2 + 10, "garbage is consumed at the poll budget")
    let s = parser.statistics
    #expect(s.errorsReturned <= UInt64(polls / 10 + 1), "at most one error reply per 10 polls")
    #expect(s.commands + s.errorsReturned + s.errorsSuppressed == s.lines)
  }

  /// `plumb-monitor --send "rate 30" --send "format json" --send tare` writes the three lines
  /// at once: each is answered, errors included (the pacing of garbage replies is for garbage).
  @Test func everyPrintableLineIsAnsweredEvenInABurst() {
    let results = parse("rate 30\nformat json\nfoo\ntare\n", configuration: .init())
    #expect(
      results == [
        .failure(.rateNotDivisor(hertz: 30, sampleRateHz: 100)), .failure(.unknownFormat("json")),
        .failure(.unknownCommand("foo")), .success(.tare),
      ])
  }

  @Test func garbageErrorsInABurstAreCountedNotAnswered() {
    let (results, parser, _) = parse(
      Array("\u{1}\n\u{2}\nfoo\n\u{3}\n".utf8), configuration: .init())
    #expect(results == [.failure(.invalidByte(1)), .failure(.unknownCommand("foo"))])
    #expect(parser.statistics.errorsReturned == 2 && parser.statistics.errorsSuppressed == 2)
  }

  /// A ground station on the line sends MAVLink (a HEARTBEAT a second, requests): Plumb
  /// accepts no MAVLink message, and skips whole packets by their length, without an error
  /// reply (a STATUSTEXT warning on the station's screen) and whatever CR or LF bytes they hold.
  @Test func mavlinkPacketsFromAGroundStationAreSkippedSilently() {
    let heartbeat = groundStationHeartbeat(sequence: 7, customMode: 0x0A0D_0A0D)
    var signed = groundStationHeartbeat(sequence: 8)
    signed[2] = 0x01  // incompat: signed, 13 signature bytes follow
    signed += [UInt8](repeating: 0x0A, count: 13)
    // MAVLink v1: STX 0xFE, len, seq, sysid, compid, msgid, payload, CRC.
    let v1: [UInt8] = [0xFE, 3, 0, 255, 190, 66, 0x0D, 0x0A, 0x0D, 0x0A, 0x0D]
    let input = heartbeat + Array("tare\n".utf8) + signed + v1 + heartbeat + Array("status\n".utf8)
    let (results, parser, _) = parse(input, context: mavlinkContext, configuration: .init())
    #expect(results == [.success(.tare), .success(.status)])
    #expect(parser.statistics.mavlinkPacketsSkipped == 4)
    #expect(parser.statistics.lines == 2)
  }

  /// The port opened in the middle of a packet: what cannot be told from garbage costs one
  /// (paced) error, and the next packet start resynchronises.
  @Test func aStreamJoinedMidPacketResynchronisesAtTheNextPacket() {
    var input: [UInt8] = []
    for sequence in 0..<20 { input += groundStationHeartbeat(sequence: UInt8(sequence)) }
    input.removeFirst(5)
    input += Array("tare\n".utf8)
    let (results, parser, _) = parse(input, context: mavlinkContext, configuration: .init())
    #expect(results.last == .success(.tare))
    #expect(results.count <= 2)
    #expect(parser.statistics.mavlinkPacketsSkipped >= 16, "a 64-byte line and one packet lost")
  }

  /// Line noise that starts with 0xFD but has no MAVLink 2 header (incompat 0x07) is a bad line,
  /// not a packet: it does not swallow the command after it.
  @Test func noiseThatOnlyLooksLikeAPacketStartIsABadLine() {
    let noise: [UInt8] = [0xFD, 0x30, 0x07, 0x41, 0x0A]
    let (results, parser, _) = parse(
      noise + Array("tare\n".utf8), context: mavlinkContext, configuration: .init())
    #expect(results == [.failure(.invalidByte(0xFD)), .success(.tare)])
    #expect(
      parser.statistics.mavlinkPacketsSkipped == 0 && parser.statistics.mavlinkBytesSkipped == 0)
    let compat: [UInt8] = [0xFD, 0x0A, 0x00, 0x0D]
    #expect(
      parse(compat + Array("\nstatus\n".utf8), context: mavlinkContext, configuration: .init())
        .results
        == [.failure(.invalidByte(0xFD)), .success(.status)])
  }

  @Test func receiveRefusesWhatDoesNotFit() {
    var parser = HostCommandParser()
    #expect(parser.receive([UInt8](repeating: 0x61, count: 300)) == 256)
    #expect(parser.statistics.bytesRefused == 44)
    #expect(parser.freeCapacity == 0)
  }

  /// 100 000 seeded random lines, from plausible commands to raw bytes: the parser never
  /// crashes, answers every line with exactly one command or error, and every command it
  /// returns is valid for the context.
  @Test func fuzzedLinesAlwaysYieldACommandOrAnError() {
    var random = SplitMix64(seed: 0xF022)
    let words = [
      "tare", "TARE", "format", "binary", "text", "mavlink", "json", "rate", "status", "version",
      "50", "100", "30", "0", "-1", "99999999", "12.5", "x", "", "\t", "  ",
    ]
    var input: [UInt8] = []
    var expectedLines = 0
    for _ in 0..<100_000 {
      var line: [UInt8] = []
      switch random.next() % 4 {
      case 0, 1:
        for _ in 0..<(1 + random.next() % 4) {
          line += Array(words[Int(random.next() % UInt64(words.count))].utf8) + [0x20]
        }
      case 2:
        line = (0..<(random.next() % 90)).map { _ in UInt8(0x20 + random.next() % 95) }
      default:
        line = (0..<(random.next() % 90)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
      }
      input += line + [random.next() % 3 == 0 ? 0x0D : 0x0A]
    }
    // The oracle: a line ends at CR or LF; NUL where a line starts is skipped; blank lines
    // (spaces/tabs only) are ignored.
    var segment: [UInt8] = []
    for byte in input where !(byte == 0 && segment.isEmpty) {
      if byte == 0x0A || byte == 0x0D {
        if segment.contains(where: { $0 != 0x20 && $0 != 0x09 }) { expectedLines += 1 }
        segment = []
      } else {
        segment.append(byte)
      }
    }
    let (results, parser, _) = parse(input)
    let s = parser.statistics
    #expect(s.lines == UInt64(expectedLines))
    #expect(s.mavlinkPacketsSkipped == 0, "MAVLink is skipped only while it is sent")
    #expect(results.count == expectedLines, "one answer per line")
    #expect(s.commands + s.errorsReturned == s.lines && s.errorsSuppressed == 0)
    var commands = 0
    for result in results {
      switch result {
      case .success(.rate(let hertz)):
        #expect(100 % hertz == 0)
        commands += 1
      case .success:
        commands += 1
      case .failure(let error):
        #expect(!error.reply.text.isEmpty && error.reply.text.count <= 46)
      }
    }
    #expect(commands > 1000, "the fuzz reaches valid commands too")
  }
}

/// A HEARTBEAT as QGroundControl sends it (sysid 255, MAV_TYPE_GCS).
func groundStationHeartbeat(sequence: UInt8, customMode: UInt32 = 0) -> [UInt8] {
  let packet = MAVLinkPacket(
    sequence: sequence, systemID: 255, componentID: 190,
    message: .heartbeat(
      .init(type: 6, autopilot: 8, baseMode: 0xC0, customMode: customMode, systemStatus: 4)))
  var output = [UInt8](repeating: 0, count: 280)
  let n = output.withUnsafeMutableBytes { MAVLink.encode(packet, into: $0) }
  return Array(output[0..<n])
}
