import FuzzSupport
import Telemetry

/// The host-command parser (`HostCommandParser`, Sources/Telemetry/HostCommands.swift) as the
/// firmware loop runs it on the bytes a host sends: received in pieces as the serial port
/// delivers them (at most what fits), one poll per sample, each command obeyed (a `format` or
/// `rate` changes what the next ones are checked against).
///
/// The first byte picks the loop's situation (sample rate, baud rate, format); the rest is what
/// arrives on the line.
///
/// Properties, besides no trap and no hang: a poll examines at most `bytesPerPoll` bytes and
/// the input buffer never holds more than its capacity; every command's `line` parses back to
/// the same command (decode(encode(x)) == x); every error's reply is at most 46 printable
/// bytes without `$` or `*`, and travels in every format (decodes to itself); every completed
/// line is counted once, as a command, a returned error or a suppressed one.
@main enum HostCommandsFuzz {
  static func main() { runLibFuzzer(LLVMFuzzerTestOneInput) }

  static let sampleRates = [100, 1000, 200, 50, 8000, 4, 500, 10]
  static let baudRates = [9600, 19200, 38400, 57600, 115_200, 230_400, 460_800, 921_600]

  static func test(_ input: UnsafeRawBufferPointer) {
    guard let situation = input.first else { return }
    let stream = UnsafeRawBufferPointer(rebasing: input.dropFirst())
    let sampleRate = sampleRates[Int(situation & 7)]
    var context = HostCommandContext(
      sampleRateHz: sampleRate, baudRate: baudRates[Int(situation >> 3 & 7)],
      format: TelemetryFormat.allCases[Int(situation >> 6) % 3],
      outputRateHz: (1...min(sampleRate, 100)).last { sampleRate % $0 == 0 }!)

    var parser = HostCommandParser()
    let perPoll = parser.configuration.bytesPerPoll
    var commands: UInt64 = 0
    var errors: UInt64 = 0
    var offered = 0
    var sizes = ChunkSizes(count: stream.count, seed: chunkSeed(input))
    var arriving = 0  // bytes of the current piece not yet taken
    var polls = 0
    while offered < stream.count || arriving > 0 || parser.pendingBytes > 0 {
      if arriving == 0, let size = sizes.next() { arriving = size }
      let taken = parser.receive(
        UnsafeRawBufferPointer(rebasing: stream[offered..<offered + arriving]))
      offered += taken
      arriving -= taken
      require(
        parser.pendingBytes <= parser.configuration.inputCapacity,
        "the input buffer holds at most its capacity", "\(parser.pendingBytes)")
      let before = parser.pendingBytes
      let result = parser.poll(context: context)
      require(
        before - parser.pendingBytes <= perPoll, "a poll examines at most bytesPerPoll bytes",
        "\(before) waiting before, \(parser.pendingBytes) after")
      polls += 1
      require(
        polls <= 4 * stream.count + 8, "the parser keeps taking bytes",
        "\(polls) polls for \(stream.count) bytes")
      switch result {
      case .success(let command)?:
        commands += 1
        checkLine(of: command, context: context)
        switch command {
        case .format(let format): context.format = format
        case .rate(let hertz): context.outputRateHz = hertz
        case .set(let parameter, let value):
          if let stream = parameter.stream { context.mavlinkRates[stream] = value }
        default: break
        }
      case .failure(let error)?:
        errors += 1
        checkReply(error.reply)
      case nil:
        break
      }
    }
    let statistics = parser.statistics
    require(
      statistics.commands == commands && statistics.errorsReturned == errors,
      "the statistics count what poll returned",
      "\(statistics) for \(commands) commands, \(errors) errors")
    require(
      statistics.lines == statistics.commands + statistics.errorsReturned
        + statistics.errorsSuppressed,
      "every completed line is a command, a returned error or a suppressed one", "\(statistics)")
  }

  /// What `command.line` parses to in the same situation is `command`.
  static func checkLine(of command: HostCommand, context: HostCommandContext) {
    var parser = HostCommandParser()
    parser.receive(Array((command.line + "\n").utf8))
    let again = parser.poll(context: context)
    require(
      again == .success(command), "a command's line parses back to the command",
      "\(command) (\"\(command.line)\") became \(String(describing: again))")
  }

  static func checkReply(_ reply: HostReply) {
    var printable = true
    reply.text.withBytes { bytes in
      printable = bytes.allSatisfy {
        (0x20...0x7E).contains($0) && $0 != UInt8(ascii: "$") && $0 != UInt8(ascii: "*")
      }
    }
    require(
      printable && reply.text.count <= HostReply.maximumTextLength,
      "a reply is at most 46 printable bytes without $ or *", "\(reply)")
    for format in TelemetryFormat.allCases {
      var encoder = TelemetryEncoder(format: format, outputRateHz: 100)
      let bytes = encoder.encode(reply)
      var decoder = StreamDecoder(format: format)
      var replies: [HostReply] = []
      decoder.decode(bytes) { if let reply = $0.hostReply { replies.append(reply) } }
      require(
        replies == [reply], "\(format): decode(encode(reply)) == reply",
        "\(reply) became \(replies) via \(hexDump(bytes))")
    }
  }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  HostCommandsFuzz.test(fuzzInput(data, size))
  return 0
}
