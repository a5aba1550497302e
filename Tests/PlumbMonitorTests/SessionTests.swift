import HardwareAbstraction
import Monitoring
import SimulatedHardware
import Telemetry
import Testing

/// Sessions over a simulated serial device on a manual clock: exact and instant.
@Suite struct SessionTests {
  /// A board on a `MemorySerialPort`: each pause moves the manual clock and, while the device is
  /// plugged in, delivers the frames whose sample time has come.
  final class SimulatedBoard {
    let clock = ManualClock(start: Timestamp(nanoseconds: 5_000_000_000))
    let port: MemorySerialPort
    var encoder = TelemetryEncoder(format: .binary)
    var next = 0
    let frames: Int

    init(frames: Int, faultPlan: SerialFaultPlan = .none) {
      self.frames = frames
      port = MemorySerialPort(clock: clock, faultPlan: faultPlan)
    }

    /// Delivers the frames due at the clock's time (frame k is due at 5 s + 10 ms·k).
    func deliver() {
      while next < frames && boardFrame(next).sampleTimeNanoseconds <= clock.now().nanoseconds {
        // Frames produced while unplugged are lost, as on a real cable.
        port.inject(encoder.encode(boardFrame(next)))
        next += 1
      }
    }
  }

  /// The session's clock: the board's manual clock, delivering on every pause.
  struct BoardClock: MonotonicClock {
    let board: SimulatedBoard
    func now() -> Timestamp { board.clock.now() }
    mutating func sleep(until deadline: Timestamp) {
      board.clock.advance(to: deadline)
      board.deliver()
    }
  }

  @Test func theDurationIsMeasuredOnTheSessionsClock() {
    let board = SimulatedBoard(frames: 10_000)
    var clock = BoardClock(board: board)
    var options = MonitorOptions()
    options.durationNanoseconds = 3_000_000_000
    let result = MonitorSession.run(
      MonitorInput(serialPort: board.port, name: "sim"), options: options, clock: &clock
    ) { _ in }
    #expect(result.ending == .durationElapsed)
    #expect(board.clock.now() == Timestamp(nanoseconds: 8_000_000_000))
    // Frames due in [5 s, 8 s): 300, delivered in 2 ms steps; the one due at 8 s is not read.
    #expect(result.statistics.telemetryFrames == 300)
    #expect(result.statistics.frameRateHz == 100)
  }

  @Test func theCountStopsOnTheFrame() {
    let board = SimulatedBoard(frames: 10_000)
    var clock = BoardClock(board: board)
    var options = MonitorOptions()
    options.frameLimit = 123
    let log = EventLog()
    let result = MonitorSession.run(
      MonitorInput(serialPort: board.port, name: "sim"), options: options, clock: &clock
    ) { log.events.append($0) }
    #expect(result.ending == .frameLimitReached)
    #expect(log.frames.count == 123)
    #expect(log.frames.last?.sequence == 122)
  }

  @Test func stopRequestsEndTheRunWithStatistics() {
    let board = SimulatedBoard(frames: 10_000)
    var clock = BoardClock(board: board)
    let log = EventLog()
    let result = MonitorSession.run(
      MonitorInput(serialPort: board.port, name: "sim"), options: MonitorOptions(),
      clock: &clock, shouldStop: { board.next >= 50 }, events: { log.events.append($0) })
    #expect(result.ending == .interrupted)
    #expect(result.passed)
    guard case .statistics(let final, true)? = log.events.last else {
      Issue.record("no final statistics")
      return
    }
    // The stop is seen before the frame delivered in the same pause is read.
    #expect(final.telemetryFrames == 49)
  }

  /// Unplugged from 6 s to 7.2 s: the monitor says so, retries every 0.5 s, reopens at the
  /// first try after the device is back, and counts exactly the frames sent meanwhile as lost.
  @Test func aDisconnectedDeviceIsReopenedAndTheLossCounted() {
    let plan = SerialFaultPlan([
      .unplugged(
        from: Timestamp(nanoseconds: 6_000_000_000), until: Timestamp(nanoseconds: 7_200_000_000))
    ])
    let board = SimulatedBoard(frames: 400, faultPlan: plan)
    var clock = BoardClock(board: board)
    var options = MonitorOptions()
    options.reopen = true
    options.durationNanoseconds = 4_000_000_000
    let log = EventLog()
    let result = MonitorSession.run(
      MonitorInput(serialPort: board.port, name: "sim"), options: options, clock: &clock
    ) { log.events.append($0) }
    #expect(result.ending == .durationElapsed)
    #expect(result.statistics.disconnects == 1)
    #expect(result.statistics.reopens == 1)
    #expect(board.port.failedReopens == 2)  // at 6.5 s and 7.0 s
    // Frames 100 … 200 (6.00 s … 7.00 s) were sent while it was unplugged; it is back at
    // 7.2 s and reopened at 7.5 s, and what arrived in between waited in the device.
    #expect(result.statistics.link.framesLost == 101)
    #expect(result.statistics.link.sequenceGaps == 1)
    #expect(result.statistics.telemetryFrames == 400 - 101)
    let kinds = log.notices.map { notice -> String in
      switch notice {
      case .formatDetected: "detected"
      case .disconnected: "disconnected"
      case .waitingForDevice: "waiting"
      case .reopened: "reopened"
      default: "other"
      }
    }
    #expect(kinds == ["detected", "disconnected", "waiting", "reopened"])
  }

  @Test func withoutReopenADisconnectEndsTheRun() {
    let plan = SerialFaultPlan([
      .unplugged(from: Timestamp(nanoseconds: 6_000_000_000), until: nil)
    ])
    let board = SimulatedBoard(frames: 400, faultPlan: plan)
    var clock = BoardClock(board: board)
    let result = MonitorSession.run(
      MonitorInput(serialPort: board.port, name: "sim"), options: MonitorOptions(), clock: &clock
    ) { _ in }
    guard case .failed(.disconnected) = result.ending else {
      Issue.record("ended \(result.ending)")
      return
    }
    #expect(!result.passed)
    #expect(result.statistics.telemetryFrames == 100)
  }

  @Test func aCommandWithoutReplyTimesOut() {
    let board = SimulatedBoard(frames: 10_000)
    var clock = BoardClock(board: board)
    var options = MonitorOptions()
    options.commands = ["tare"]
    let log = EventLog()
    let result = MonitorSession.run(
      MonitorInput(serialPort: board.port, name: "sim"), options: options, clock: &clock
    ) { log.events.append($0) }
    #expect(board.port.takeWritten() == Array("tare\n".utf8))
    #expect(result.ending == .noReply)
    #expect(result.failures == [.noReply(commands: ["tare"])])
    #expect(board.clock.now() == Timestamp(nanoseconds: 7_000_000_000))
    #expect(
      log.notices.contains(.noReply(commands: ["tare"], waitedNanoseconds: 2_000_000_000)))
  }

  /// A run that ends (SIGINT/SIGTERM, --count, --duration) before any reply to the commands it
  /// sent has not seen them obeyed: the command is unanswered, and the run fails (exit 1).
  @Test func aRunEndedBeforeTheReplyFailsTheCommand() {
    for ending in [MonitorEnding.interrupted, .durationElapsed, .frameLimitReached] {
      let board = SimulatedBoard(frames: 10_000)
      var clock = BoardClock(board: board)
      var options = MonitorOptions()
      options.commands = ["tare"]
      if ending == .durationElapsed { options.durationNanoseconds = 500_000_000 }
      if ending == .frameLimitReached { options.frameLimit = 20 }
      let result = MonitorSession.run(
        MonitorInput(serialPort: board.port, name: "sim"), options: options, clock: &clock,
        shouldStop: { ending == .interrupted && board.next >= 30 }, events: { _ in })
      #expect(board.port.takeWritten() == Array("tare\n".utf8))
      #expect(result.ending == ending)
      #expect(result.failures == [.noReply(commands: ["tare"])], "\(ending)")
      #expect(result.passed == false, "\(ending)")
    }
  }

  @Test func aRefusedCommandFailsTheRun() {
    let board = SimulatedBoard(frames: 10_000)
    var encoder = TelemetryEncoder(format: .binary)
    board.port.inject(encoder.encode(HostReply.error("rate 30 Hz does not divide 100 Hz")))
    var clock = BoardClock(board: board)
    var options = MonitorOptions()
    options.commands = ["rate 30"]
    let result = MonitorSession.run(
      MonitorInput(serialPort: board.port, name: "sim"), options: options, clock: &clock
    ) { _ in }
    #expect(result.ending == .repliesReceived)
    #expect(!result.passed)
    guard case .errorReply(let reply)? = result.failures.first else {
      Issue.record("no failure for the refusal")
      return
    }
    #expect(reply.description == "ERR rate 30 Hz does not divide 100 Hz")
  }

  @Test func statisticsArriveEverySecondOfSampleTime() {
    let board = SimulatedBoard(frames: 301)
    var clock = BoardClock(board: board)
    var options = MonitorOptions()
    options.statisticsIntervalNanoseconds = 1_000_000_000
    options.frameLimit = 301
    let log = EventLog()
    _ = MonitorSession.run(
      MonitorInput(serialPort: board.port, name: "sim"), options: options, clock: &clock
    ) { log.events.append($0) }
    // Frames at 5.00 … 8.00 s: reports after the frames at 6.00, 7.00 and 8.00 s.
    #expect(log.periodicStatistics.map(\.telemetryFrames) == [101, 201, 301])
    #expect(log.periodicStatistics.map(\.frameRateHz) == [100, 100, 100])
  }

  /// Found by fuzzing (fuzz-monitor-binary): a binary frame carries any 64-bit sample time
  /// (FORMATS.md's vector C has −2⁶³ ns), and with `--stats-every` the monitor trapped on the
  /// next report's time, and the summary on the rate and span, where two sample times are more
  /// than 2⁶³ ns apart or a report would fall after the last 64-bit time. The first input is
  /// the fuzzer's, minimised: vector C, then a frame 9·10¹⁸ ns later.
  @Test func sampleTimesAcrossTheWhole64BitRangeGiveStatisticsNotATrap() {
    let fuzzed: [UInt8] = [
      0x07, 0x01, 0x01, 0xff, 0xff, 0xff, 0xff, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x12, 0x80,
      0x8b, 0x38, 0x34, 0xbf, 0x30, 0x32, 0xca, 0xbb, 0xf2, 0xcc, 0x35, 0xbf, 0x30, 0x32, 0xca,
      0x3b, 0x18, 0x80, 0xff, 0x7f, 0x01, 0x80, 0xff, 0x7f, 0x01, 0x80, 0xff, 0x7f, 0x01, 0x80,
      0xff, 0x03, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x01, 0x01, 0x03, 0xb5,
      0xff, 0x00, 0x04, 0x01, 0x01, 0x08, 0x01, 0x01, 0x05, 0x35, 0xbc, 0x8c, 0x6e, 0x01, 0x01,
      0x01, 0x11, 0x35, 0xf7, 0x7f, 0x3f, 0xad, 0x6d, 0x84, 0x3c, 0xd3, 0x43, 0xb4, 0xba, 0x21,
      0x46, 0x14, 0x3b, 0x01, 0x01, 0x01, 0x01, 0x01, 0x06, 0xe0, 0xff, 0xf0, 0xff, 0x07, 0x03,
      0x03, 0x0a, 0x02, 0x05, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01, 0x01,
      0x03, 0x92, 0x14, 0x00,
    ]
    func run(_ bytes: [UInt8]) -> (reports: [MonitorStatistics], final: MonitorStatistics) {
      var monitor = FrameMonitor(format: .binary, statisticsIntervalNanoseconds: 1_000_000_000)
      var reports: [MonitorStatistics] = []
      monitor.consume(bytes) { if case .statistics(let s, _) = $0 { reports.append(s) } }
      monitor.finish()
      // The summary a person sees computes the rate and the span too.
      _ = MonitorPrinter.summary(monitor.statistics, input: "capture.bin")
      return (reports, monitor.statistics)
    }
    func frames(_ times: [Int64]) -> [UInt8] {
      var encoder = TelemetryEncoder(format: .binary)
      return times.flatMap { encoder.encode(TelemetryFrame(sampleTimeNanoseconds: $0)) }
    }

    let (_, fuzzedFinal) = run(fuzzed)
    #expect(fuzzedFinal.telemetryFrames == 2)
    #expect(fuzzedFinal.sampleTimeSpanSeconds.map { $0 > 9.2e9 } == true)

    // 2⁶⁴ − 1 ns apart: a second of sample time has passed, so a report is due.
    let (wide, wideFinal) = run(frames([.min, .max]))
    #expect(wide.count == 1)
    #expect(wideFinal.sampleTimeSpanSeconds == Double(UInt64.max) / 1e9)
    #expect(wideFinal.frameRateHz == 1e9 / Double(UInt64.max))
    // A report would fall after the last 64-bit time: none is due.
    let (late, lateFinal) = run(frames([Int64.max - 1, .max]))
    #expect(late.isEmpty)
    #expect(lateFinal.frameRateHz == 1e9)
  }
}

@Suite struct ExpectationTests {
  /// A file of `frames` binary frames `periodNanoseconds` apart, every `dropEvery`-th missing.
  func run(
    frames: Int, periodNanoseconds: Int64 = 10_000_000, dropEvery: Int? = nil,
    configure: (inout MonitorOptions) -> Void
  ) throws -> MonitorResult {
    let directory = TemporaryDirectory()
    var encoder = TelemetryEncoder(format: .binary)
    var bytes: [UInt8] = []
    for k in 0..<frames where dropEvery.map({ k % $0 != 1 }) ?? true {
      bytes += encoder.encode(boardFrame(k, periodNanoseconds: periodNanoseconds))
    }
    var options = MonitorOptions()
    configure(&options)
    var clock = PausingClock()
    return MonitorSession.run(
      try openInput(directory.file("frames.bin", bytes)), options: options, clock: &clock
    ) { _ in }
  }

  @Test func expectFramesPassesAtTheCountAndFailsBelowIt() throws {
    #expect(try run(frames: 200) { $0.expectedFrames = 200 }.passed)
    let short = try run(frames: 199) { $0.expectedFrames = 200 }
    #expect(short.failures == [.tooFewFrames(expected: 200, received: 199)])
    #expect(short.failures[0].description == "expected at least 200 frames, received 199")
  }

  @Test func expectRatePassesWithinTheTolerance() throws {
    #expect(try run(frames: 200) { $0.expectedRateHz = 100 }.passed)
    // The chip's oscillator 1 % fast: within the default 2 %.
    #expect(try run(frames: 200, periodNanoseconds: 9_900_990) { $0.expectedRateHz = 100 }.passed)
  }

  @Test func expectRateFailsOutsideTheTolerance() throws {
    let slow = try run(frames: 200, periodNanoseconds: 10_309_278) { $0.expectedRateHz = 100 }
    guard case .rateOutOfTolerance(100, 0.02, let measured?)? = slow.failures.first else {
      Issue.record("no rate failure: \(slow.failures)")
      return
    }
    #expect(abs(measured - 97) < 0.01)
    #expect(slow.failures[0].description.contains("measured 97.00 Hz"))
    // A tighter tolerance turns the 1 %-fast oscillator into a failure.
    #expect(
      !(try run(frames: 200, periodNanoseconds: 9_900_990) {
        $0.expectedRateHz = 100
        $0.rateTolerance = 0.005
      }.passed))
  }

  /// Every third frame lost on the way: the delivered rate is 2/3 of 100 Hz, and says so.
  @Test func lostFramesLowerTheMeasuredRate() throws {
    let lossy = try run(frames: 300, dropEvery: 3) { $0.expectedRateHz = 100 }
    #expect(lossy.statistics.link.framesLost == 100)
    guard case .rateOutOfTolerance(_, _, let measured?)? = lossy.failures.first else {
      Issue.record("no rate failure")
      return
    }
    #expect(abs(measured - 200.0 / 2.99 * (199.0 / 200.0)) < 1e-9)
  }

  @Test func oneFrameHasNoRate() throws {
    let one = try run(frames: 1) { $0.expectedRateHz = 100 }
    #expect(
      one.failures == [.rateOutOfTolerance(expectedHz: 100, tolerance: 0.02, measuredHz: nil)])
  }
}
