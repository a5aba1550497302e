import CommandLineSupport
import JSON
import Monitoring
import Randomness
import Telemetry
import Testing

@testable import plumb_monitor

/// `plumb-monitor` end to end through its command: options, exit statuses, output.
@Suite struct CommandTests {
  let directory = TemporaryDirectory()

  /// 200 binary frames at 100 Hz.
  func recording() -> String {
    var encoder = TelemetryEncoder(format: .binary)
    return directory.file("capture.bin", (0..<200).flatMap { encoder.encode(boardFrame($0)) })
  }

  func parse(_ arguments: [String]) throws -> MonitorCommandLine {
    try parseMonitorCommandLine(ParsedArguments(arguments, spec: monitorSpec))
  }

  @Test func expectationsSetTheExitStatus() {
    let path = recording()
    #expect(plumbMonitor([path, "--quiet", "--expect-frames", "200"]) == 0)
    #expect(plumbMonitor([path, "--quiet", "--expect-frames", "201"]) == 1)
    #expect(plumbMonitor([path, "--quiet", "--expect-rate", "100"]) == 0)
    #expect(plumbMonitor([path, "--quiet", "--expect-rate", "50"]) == 1)
    #expect(
      plumbMonitor([path, "--quiet", "--expect-rate", "99", "--rate-tolerance", "0.5"]) == 1)
    #expect(plumbMonitor([path, "--quiet", "--count", "10", "--expect-frames", "10"]) == 0)
  }

  @Test func badInputsHaveTheirOwnExitStatuses() {
    let path = recording()
    #expect(plumbMonitor(["/dev/ttyPLUMB-missing"]) == 66)
    #expect(plumbMonitor(["/dev/null"]) == 66)
    #expect(plumbMonitor([directory.path]) == 66)
    var random = SeededGenerator(seed: 5)
    let noise = directory.file(
      "noise.bin", (0..<20_000).map { _ in UInt8(truncatingIfNeeded: random.next()) })
    #expect(plumbMonitor([noise, "--quiet"]) == 65)
    #expect(plumbMonitor([directory.file("empty.bin", []), "--quiet"]) == 65)
    #expect(plumbMonitor([path, "--send", "status"]) == 64)
    #expect(plumbMonitor([path, "--reopen"]) == 64)
  }

  @Test func usageErrorsAreCaughtBeforeOpening() {
    let path = recording()
    #expect(plumbMonitor([]) == 64)
    #expect(plumbMonitor([path, "--quiet", "--json"]) == 64)
    #expect(plumbMonitor([path, "--baud", "12345"]) == 64)
    #expect(plumbMonitor([path, "--format", "json"]) == 64)
    #expect(plumbMonitor([path, "--count", "0"]) == 64)
    #expect(plumbMonitor([path, "--duration", "soon"]) == 64)
    #expect(plumbMonitor([path, "--send", ""]) == 64)
    #expect(plumbMonitor([path, "--send", String(repeating: "x", count: 65)]) == 64)
    #expect(plumbMonitor([path, "--send", "tare\nrate 1"]) == 64)
    #expect(plumbMonitor(["--help"]) == 0)
  }

  @Test func optionsBecomeSessionSettings() throws {
    let command = try parse([
      "/dev/ttyUSB0", "--baud", "921600", "--format", "mavlink", "--duration", "2.5",
      "--stats-every", "10", "--expect-rate", "100", "--rate-tolerance", "1", "--count", "7",
      "--send", "status", "--send", "version", "--reopen", "--json",
    ])
    #expect(command.input == "/dev/ttyUSB0")
    #expect(command.baudRate == 921_600)
    #expect(command.style == .json)
    #expect(command.options.format == .mavlink)
    #expect(command.options.durationNanoseconds == 2_500_000_000)
    #expect(command.options.statisticsIntervalNanoseconds == 10_000_000_000)
    #expect(command.options.expectedRateHz == 100)
    #expect(command.options.rateTolerance == 0.01)
    #expect(command.options.frameLimit == 7)
    #expect(command.options.commands == ["status", "version"])
    #expect(command.options.reopen)
    let defaults = try parse(["-"])
    #expect(defaults.options.format == nil)
    #expect(defaults.options.rateTolerance == 0.02)
    #expect(defaults.style == .frames)
    #expect(defaults.baudRate == nil)
  }

  /// The board ignores a blank line (FORMATS.md §7) and never answers it: sent, it would end
  /// in "no reply … is the board running `plumb run`?", blaming the board for the command line.
  @Test func aBlankCommandIsAUsageError() {
    for blank in [" ", "\t", "  \t  "] {
      #expect(throws: UsageError.self, "\(Array(blank.utf8))") {
        try parse(["/dev/ttyUSB0", "--send", blank])
      }
    }
    #expect((try? parse(["/dev/ttyUSB0", "--send", " status "])) != nil)
  }

  /// `--json` writes one parseable object per line: frames, the final statistics, the result.
  @Test func jsonLinesAreJSON() throws {
    let command = try parse([recording(), "--json", "--count", "3"])
    let input = try openMonitorInput(command)
    var lines: [MonitorLine] = []
    var clock = PausingClock()
    try runMonitor(
      command, input: input, clock: &clock, shouldStop: { false }, write: { lines.append($0) })
    #expect(lines.allSatisfy { !$0.isDiagnostic })
    let documents = try lines.map { try JSONDocument(parsing: $0.text).root }
    #expect(
      documents.map { $0["type"] } == [
        .string("notice"), .string("frame"), .string("frame"), .string("frame"),
        .string("stats"), .string("result"),
      ])
    #expect(documents[0]["notice"] == .string("formatDetected"))
    #expect(documents[0]["format"] == .string("binary"))
    let frame = documents[3]
    #expect(frame["sequence"] == .integer(2))
    #expect(frame["sampleTimeNanoseconds"] == .integer(5_020_000_000))
    #expect(frame["flags"] == .integer(0x0081))
    #expect(frame["flagNames"] == .array([.string("rest"), .string("calibrationLoaded")]))
    #expect(frame["latencyMicroseconds"] == .integer(774))
    #expect(frame["calibrationId"] == .string("0x12345678"))
    guard case .number(let roll, _)? = frame["rollDegrees"] else {
      Issue.record("no roll")
      return
    }
    #expect(abs(roll - 0.004 * 180 / .pi) < 1e-4)
    // What binary frames carry besides the attitude reaches a script too: the gyro-bias
    // estimate (body) and the linear acceleration (reference frame).
    func vector(_ value: JSONValue?) -> [Double]? {
      guard case .array(let items)? = value else { return nil }
      return items.compactMap { if case .number(let x, _) = $0 { x } else { nil } }
    }
    let bias = try #require(vector(frame["gyroBiasRadiansPerSecond"]), "\(frame)")
    #expect(bias.count == 3 && abs(bias[0] - 0.001) < 1e-9 && bias[1] == 0 && bias[2] == 0)
    let linear = try #require(vector(frame["linearAccelerationMetersPerSecondSquared"]))
    #expect(linear == [0, 0, 0])
    let stats = documents[4]
    #expect(stats["final"] == .bool(true))
    #expect(stats["telemetryFrames"] == .integer(3))
    #expect(stats["frameRateHz"] == .integer(100))
    #expect(stats["latencyMicroseconds"]?["p99"] == .integer(774))
    #expect(documents[5]["passed"] == .bool(true))
    #expect(documents[5]["ending"] == .string("frameLimitReached"))
  }

  @Test func theBaudRateOfAFileIsIgnoredAloud() throws {
    let command = try parse([recording(), "--baud", "9600", "--quiet"])
    let input = try openMonitorInput(command)
    var lines: [MonitorLine] = []
    var clock = PausingClock()
    try runMonitor(
      command, input: input, clock: &clock, shouldStop: { false }, write: { lines.append($0) })
    #expect(
      lines.first
        == MonitorLine(
          "plumb-monitor: --baud ignored: \(input.name) is not a serial device", isDiagnostic: true)
    )
  }
}
