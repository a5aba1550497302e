import HardwareAbstraction
import Monitoring
import SimulatedHardware
import Telemetry
import Testing

/// The hooks `plumb-monitor --web` uses: statistics at a steady pace of the session's clock, and
/// commands sent while the session runs, which are not expectations.
@Suite struct LiveHooksTests {
  typealias Board = SessionTests.SimulatedBoard

  @Test func statisticsComeAtTheirPaceOfTheSessionsClock() {
    let board = Board(frames: 10_000)
    var clock = SessionTests.BoardClock(board: board)
    var options = MonitorOptions()
    options.durationNanoseconds = 3_000_000_000
    var seen: [(at: Int64, frames: UInt64)] = []
    let hooks = MonitorLiveHooks(statisticsIntervalNanoseconds: 500_000_000) { statistics in
      seen.append((board.clock.now().nanoseconds, statistics.telemetryFrames))
    }
    let result = MonitorSession.run(
      MonitorInput(serialPort: board.port, name: "sim"), options: options, clock: &clock,
      live: hooks
    ) { _ in }
    #expect(result.ending == .durationElapsed)
    // At 5 s (the start), then every 0.5 s up to 7.5 s: six, each with the frames read so far.
    #expect(seen.map(\.at) == (0..<6).map { 5_000_000_000 + Int64($0) * 500_000_000 })
    #expect(seen.map(\.frames) == seen.map(\.frames).sorted())
    #expect(seen.last.map { $0.frames >= 249 && $0.frames <= 251 } == true)
  }

  @Test func liveCommandsAreWrittenInOrderAndAnErrorIsNoFailure() throws {
    let board = Board(frames: 10_000)
    var clock = SessionTests.BoardClock(board: board)
    var options = MonitorOptions()
    options.durationNanoseconds = 1_000_000_000
    var waiting = ["tare", "rate 50"]
    var written: [UInt8] = []
    let log = EventLog()
    // One command now, the next one 0.4 s later: the second goes after the first is out.
    let next: () -> String? = {
      guard !waiting.isEmpty else { return nil }
      if waiting.count == 1 && board.clock.now().nanoseconds < 5_400_000_000 { return nil }
      return waiting.removeFirst()
    }
    let hooks = MonitorLiveHooks(statistics: { _ in }, nextCommand: next)
    var encoder = TelemetryEncoder(format: .binary)
    var answered = false
    let result = MonitorSession.run(
      MonitorInput(serialPort: board.port, name: "sim"), options: options, clock: &clock,
      live: hooks
    ) { event in
      log.events.append(event)
      written += board.port.takeWritten()
      if !answered, written.last == UInt8(ascii: "\n"), written.count == 5 {
        answered = true
        _ = board.port.inject(encoder.encode(HostReply.error("not now")))
      }
    }
    written += board.port.takeWritten()
    #expect(String(decoding: written, as: UTF8.self) == "tare\nrate 50\n")
    #expect(log.notices.filter { if case .sent = $0 { true } else { false } }.count == 2)
    #expect(result.replies.map(\.description) == ["ERR not now"])
    // Not an expectation: the run passes.
    #expect(result.failures.isEmpty)
    #expect(result.passed)
  }

  /// A file cannot take commands: they are passed over and the file is read to its end.
  @Test func aFileTakesNoCommands() throws {
    let directory = TemporaryDirectory()
    var encoder = TelemetryEncoder(format: .binary)
    let bytes = (0..<300).flatMap { encoder.encode(boardFrame($0)) }
    let path = directory.file("frames.bin", bytes)
    var clock = PausingClock()
    var asked = 0
    let next: () -> String? = {
      asked += 1
      return asked == 1 ? "tare" : nil
    }
    let hooks = MonitorLiveHooks(statistics: { _ in }, nextCommand: next)
    let result = MonitorSession.run(
      try openInput(path), options: MonitorOptions(), clock: &clock, live: hooks
    ) { _ in }
    #expect(result.ending == .endOfInput)
    #expect(result.passed)
    #expect(result.statistics.telemetryFrames == 300)
    #expect(asked > 1)
  }
}
