import CommandLineSupport
import Geometry
import Glibc
import HardwareAbstraction
import JSON
import Monitoring
import SimulatedHardware
import Telemetry
import Testing
import WebMonitor

@testable import plumb_monitor

/// `plumb-monitor --web` through its command: the options, and a session on a simulated serial
/// device whose frames reach a page over a real loopback socket and whose page's command
/// reaches the device.
@Suite struct MonitorWebTests {
  func parse(_ arguments: [String]) throws -> MonitorCommandLine {
    try parseMonitorCommandLine(ParsedArguments(arguments, spec: monitorSpec))
  }

  @Test func theOptions() throws {
    let plain = try #require(try parse(["/dev/ttyUSB0", "--web", "8080"]).web)
    #expect(plain.configuration.host == "127.0.0.1")
    #expect(plain.configuration.port == 8080)
    #expect(!plain.configuration.commandsEnabled)
    let open = try #require(
      try parse(["/dev/ttyUSB0", "--web", "0.0.0.0:9000", "--web-commands"]).web)
    #expect(open.configuration.host == "0.0.0.0" && open.configuration.port == 9000)
    #expect(open.configuration.commandsEnabled)
    #expect(try parse(["/dev/ttyUSB0"]).web == nil)
    #expect(throws: UsageError.self) { try parse(["/dev/ttyUSB0", "--web-commands"]) }
    #expect(throws: UsageError.self) { try parse(["/dev/ttyUSB0", "--web", "host.example:80"]) }
    #expect(throws: UsageError.self) { try parse(["/dev/ttyUSB0", "--web", "70000"]) }
    #expect(plumbMonitor(["/dev/ttyUSB0", "--web-commands"]) == 64)
  }

  /// Commands go to a serial device: a file with `--web-commands` is a usage error, said.
  @Test func aFileTakesNoWebCommands() throws {
    var encoder = TelemetryEncoder(format: .binary)
    var template = Array("/tmp/plumb-web-test-XXXXXX".utf8CString)
    let descriptor = mkstemp(&template)
    try #require(descriptor >= 0)
    let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    defer { unlink(path) }
    let bytes = (0..<20).flatMap { encoder.encode(frame($0)) }
    #expect(bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) } == bytes.count)
    close(descriptor)
    #expect(plumbMonitor([path, "--quiet", "--web", "127.0.0.1:0", "--web-commands"]) == 64)
    #expect(plumbMonitor([path, "--quiet", "--web", "127.0.0.1:0"]) == 0)
  }

  /// The port is taken: 69, with the address and the fix.
  @Test func aBusyPortIsUnavailable() throws {
    let blocker = WebServer(
      configuration: WebServerConfiguration(host: "127.0.0.1", port: 0),
      hub: WebMonitorHub(input: "x", version: "0", commandsEnabled: false), page: [])
    _ = try blocker.start()
    defer { blocker.stop() }
    let port = try #require(blocker.localPort)
    #expect(plumbMonitor(["/dev/ttyPLUMB-missing", "--web", "127.0.0.1:\(port)"]) == 69)
    let options = try #require(try parse(["/dev/ttyUSB0", "--web", "127.0.0.1:\(port)"]).web)
    #expect(throws: CommandFailure.self) { try MonitorWeb.start(options, input: "/dev/ttyUSB0") }
  }

  /// Frame k of a board turning about x at 0.2 rad/s, 100 Hz from 5 s.
  func frame(_ k: Int) -> TelemetryFrame {
    TelemetryFrame(
      sequence: UInt32(k), sampleTimeNanoseconds: 5_000_000_000 + Int64(k) * 10_000_000,
      attitude: Quaternion(axis: .unitX, angle: 0.002 * Double(k)),
      gyroBiasRadiansPerSecond: Vector3(0.001, 0, 0), temperatureCelsius: 30,
      flags: [.rest], missedSamples: 0, latencyMicroseconds: 500, calibrationID: 0)
  }

  /// The session's clock: a manual clock that delivers the frames due at each pause, and also
  /// waits 1 ms of real time, so the server's own thread (on real time) sees the frames flow.
  final class Board {
    let clock = ManualClock(start: Timestamp(nanoseconds: 5_000_000_000))
    let port: MemorySerialPort
    var encoder = TelemetryEncoder(format: .binary)
    var next = 0
    var pauses = 0
    var onPause: (Int) -> Void = { _ in }
    let make: (Int) -> TelemetryFrame

    init(_ make: @escaping (Int) -> TelemetryFrame) {
      self.make = make
      port = MemorySerialPort(clock: clock)
    }
  }

  struct BoardClock: MonotonicClock {
    let board: Board
    func now() -> Timestamp { board.clock.now() }
    mutating func sleep(until deadline: Timestamp) {
      board.clock.advance(to: deadline)
      while board.make(board.next).sampleTimeNanoseconds <= board.clock.now().nanoseconds {
        _ = board.port.inject(board.encoder.encode(board.make(board.next)))
        board.next += 1
      }
      board.pauses += 1
      board.onPause(board.pauses)
      usleep(1000)
    }
  }

  @Test func framesReachThePageAndThePagesCommandReachesTheBoard() throws {
    let board = Board(frame)
    let command = try parse([
      "/dev/ttySIM", "--json", "--duration", "2", "--web", "127.0.0.1:0", "--web-commands",
    ])
    // Small buffers, so that the page that never reads (below) fills its own at once.
    var options = try #require(command.web)
    options.configuration.clientBufferBytes = 4096
    let web = try MonitorWeb.start(options, input: "/dev/ttySIM")
    defer { _ = web.finish() }
    let port = try #require(web.server.localPort)
    // A page that asks for the stream and never reads it.
    let stalled = WebTestClient(port: port, receiveBufferBytes: 1024)
    stalled.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    #expect(web.announcement().contains("http://127.0.0.1:\(port)/"))
    #expect(web.announcement().contains("this machine only"))

    let stream = WebTestClient(port: port)
    stream.send("GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    var posted: WebTestClient?
    board.onPause = { pause in
      // 0.5 s into the run (2 ms pauses), the page asks for a tare.
      if pause == 250 {
        posted = WebTestClient.exchange(
          port: port,
          "POST /command HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Plumb-Command: 1\r\n"
            + "Content-Type: text/plain\r\nContent-Length: 4\r\n\r\ntare")
      }
    }
    var clock = BoardClock(board: board)
    var lines: [MonitorLine] = []
    try runMonitor(
      command, input: MonitorInput(serialPort: board.port, name: "/dev/ttySIM"), clock: &clock,
      web: web, shouldStop: { false }, write: { lines.append($0) })

    #expect(posted?.status == 202)
    #expect(String(decoding: board.port.takeWritten(), as: UTF8.self) == "tare\n")
    #expect(
      stream.read(for: 10) { text in
        events("notice", in: text).contains { $0.contains("\"sent\"") }
      })
    let hello = try #require(events("hello", in: stream.text).first)
    #expect(hello.contains("\"commands\": true"))
    #expect(hello.contains("\"input\": \"/dev/ttySIM\""))
    // Frames: coalesced, in order, each one a frame the board sent, with its own numbers.
    let frames = try events("frame", in: stream.text).map { try JSONDocument(parsing: $0).root }
    #expect(frames.count >= 2)
    var last = -1
    for document in frames {
      guard case .number(let number, _)? = document["seq"], let seq = Int(exactly: number) else {
        Issue.record("no seq in \(document)")
        continue
      }
      #expect(seq > last && seq < board.next)
      last = seq
      let sent = NEDEulerAngles(plumbAttitude: frame(seq).attitude)
      guard case .number(let roll, _)? = document["roll"] else {
        Issue.record("no roll in \(document)")
        continue
      }
      // The binary frame carries the quaternion as Float32: 10⁻⁵ ° of roll.
      #expect(abs(roll - sent.rollRadians * 180 / .pi) < 1e-4)
    }
    // The stalled page cost the serial side nothing: every frame the board sent was read (the
    // one due at the very end excepted), none lost. (That it loses events, counted, and is
    // closed: WebServerTests.slowClientIsDroppedThenClosed.)
    let documents = try lines.map { try JSONDocument(parsing: $0.text).root }
    let final = try #require(documents.last { $0["type"] == .string("stats") })
    #expect(
      final["telemetryFrames"] == .integer(board.next)
        || final["telemetryFrames"] == .integer(board.next - 1))
    #expect(final["framesLost"] == .integer(0))
    // The statistics reach the page too.
    let stats = try events("stats", in: stream.text).map { try JSONDocument(parsing: $0).root }
    #expect(stats.contains { $0["lost"] == .integer(0) })
    #expect(web.server.statistics.commandsQueued == 1)
  }
}
