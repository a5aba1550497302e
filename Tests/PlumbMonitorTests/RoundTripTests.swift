import Glibc
import HardwareAbstraction
import LinuxHardware
import Monitoring
import SimulatedHardware
import Telemetry
import Testing

/// Opens a path the way `plumb-monitor` does (a tty with `TermiosSerialPort`).
func openInput(_ path: String, baudRate: Int? = nil) throws(MonitorError) -> MonitorInput {
  try MonitorInput.open(path: path, baudRate: baudRate) {
    (path, baudRate) throws(SerialError) -> any SerialPort in
    try TermiosSerialPort(path: path, baudRate: baudRate)
  }
}

/// Runs a session on a pausing clock, giving up after 20 000 pauses (2 s of 100 µs waits) so
/// a test that goes wrong fails instead of hanging.
func runBounded(
  _ input: MonitorInput, options: MonitorOptions, clock: PausingClock,
  events: (MonitorEvent) -> Void
) -> MonitorResult {
  var sessionClock = clock
  return MonitorSession.run(
    input, options: options, clock: &sessionClock, shouldStop: { clock.pauses > 20_000 },
    events: events)
}

/// Checks a session's counts against the corruption that was injected.
func expectCounts(
  _ result: MonitorResult, _ stream: CorruptedStream, format: TelemetryFormat,
  sourceLocation: SourceLocation = #_sourceLocation
) {
  let s = result.statistics
  #expect(s.format == format, sourceLocation: sourceLocation)
  #expect(s.telemetryFrames == UInt64(stream.intactTelemetry), sourceLocation: sourceLocation)
  #expect(s.link.framesLost == UInt64(stream.destroyedUnits), sourceLocation: sourceLocation)
  #expect(s.link.sequenceGaps == UInt64(stream.destroyedUnits), sourceLocation: sourceLocation)
  #expect(s.link.resyncs == UInt64(stream.events), sourceLocation: sourceLocation)
  #expect(s.link.bytesSkipped == UInt64(stream.skippedBytes), sourceLocation: sourceLocation)
  #expect(s.link.bytesReceived == UInt64(stream.bytes.count), sourceLocation: sourceLocation)
  #expect(
    s.link.bytesReceived == s.link.bytesAccepted + s.link.bytesSkipped,
    sourceLocation: sourceLocation)
  switch format {
  case .binary, .binaryIMU:
    // Flips hit payload bytes: exactly one CRC error each. Garbage runs are overlong blocks:
    // one malformed candidate each. A dropped byte is rejected one way or the other.
    #expect(s.link.crcErrors >= UInt64(stream.bitFlips), sourceLocation: sourceLocation)
    #expect(
      s.link.crcErrors + s.link.malformed
        == UInt64(stream.bitFlips + stream.droppedBytes + stream.garbageRuns),
      sourceLocation: sourceLocation)
    #expect(
      s.link.malformed >= UInt64(stream.garbageRuns), sourceLocation: sourceLocation)
  case .text:
    #expect(
      s.link.crcErrors + s.link.malformed == UInt64(stream.bitFlips),
      sourceLocation: sourceLocation)
  case .mavlink:
    #expect(s.link.crcErrors >= 1, sourceLocation: sourceLocation)
  }
  // Latency comes from the intact frames' own field (binary and text carry it).
  if format != .mavlink {
    #expect(s.latency.count == s.telemetryFrames, sourceLocation: sourceLocation)
    #expect(s.latency.count == s.link.latencyCount, sourceLocation: sourceLocation)
    #expect(
      s.latency.minimumMicroseconds == s.link.latencyMinimumMicroseconds,
      sourceLocation: sourceLocation)
    #expect(
      s.latency.maximumMicroseconds == s.link.latencyMaximumMicroseconds,
      sourceLocation: sourceLocation)
  }
}

@Suite struct FileRoundTripTests {
  @Test(arguments: TelemetryFormat.allCases)
  func corruptionIsCountedExactlyFromAFile(format: TelemetryFormat) throws {
    let directory = TemporaryDirectory()
    for seed in UInt64(1)...3 {
      let units = encodedUnits(format, frames: 300)
      let stream = corrupt(units, format: format, seed: seed, includeDrops: format.isBinary)
      #expect(stream.events > 20)
      let path = directory.file("stream-\(seed).\(format.rawValue)", stream.bytes)
      let input = try openInput(path)
      #expect(input.kind == .regularFile)
      let log = EventLog()
      var clock = PausingClock()
      let result = MonitorSession.run(input, options: MonitorOptions(), clock: &clock) {
        log.events.append($0)
      }
      #expect(result.ending == .endOfInput)
      #expect(result.passed)
      expectCounts(result, stream, format: format)
      #expect(log.frames.count == stream.intactTelemetry)
      #expect(log.notices == [.formatDetected(format)])
      // The frames that arrived are the ones sent, in order, unchanged.
      let sequences = log.frames.map(\.sequence)
      #expect(sequences == sequences.sorted() || format == .mavlink)
      if case .statistics(let last, true)? = log.events.last {
        #expect(last == result.statistics)
      } else {
        Issue.record("the last event is not the final statistics")
      }
    }
  }

  /// A clean 100 Hz stream: every frame arrives with its fields, and the rate measured from
  /// the sample times is exactly 100 Hz.
  @Test func aCleanStreamArrivesWhole() throws {
    let directory = TemporaryDirectory()
    var encoder = TelemetryEncoder(format: .binary)
    let bytes = (0..<200).flatMap { encoder.encode(boardFrame($0)) }
    let input = try openInput(directory.file("clean.bin", bytes))
    let log = EventLog()
    var clock = PausingClock()
    let result = MonitorSession.run(input, options: MonitorOptions(format: .binary), clock: &clock)
    { log.events.append($0) }
    #expect(result.statistics.telemetryFrames == 200)
    #expect(result.statistics.link.framesLost == 0)
    #expect(result.statistics.frameRateHz == 100)
    #expect(result.statistics.sampleTimeSpanSeconds == 1.99)
    let frame = try #require(log.frames.last)
    let sent = boardFrame(199)
    #expect(frame.sequence == 199)
    #expect(frame.sampleTimeNanoseconds == sent.sampleTimeNanoseconds)
    #expect(frame.flags == sent.flags)
    #expect(frame.latencyMicroseconds == sent.latencyMicroseconds)
    #expect(frame.calibrationID == 0x1234_5678)
    #expect(abs(frame.angles.rollRadians - 0.398) < 1e-6)
    // No detection notice: the format was given.
    #expect(log.notices.isEmpty)
  }
}

/// A pipe (a FIFO here; standard input from `plumb run | plumb-monitor -` is the same kind): read
/// as it comes, and ended when the writer closes it.
@Suite struct PipeTests {
  @Test func aPipeIsReadUntilItsWriterCloses() throws {
    let directory = TemporaryDirectory()
    let path = directory.path + "/frames.fifo"
    #expect(mkfifo(path, 0o600) == 0)
    // A writer first (O_RDWR does not wait for a reader), so that opening the reader does not
    // block.
    let writer = open(path, O_RDWR | O_CLOEXEC)
    #expect(writer >= 0)
    let input = try openInput(path)
    #expect(input.kind == .pipe)
    #expect(input.isLive)
    var encoder = TelemetryEncoder(format: .text)
    let bytes = (0..<100).flatMap { encoder.encode(boardFrame($0)) }
    var sent = 0
    var closed = false
    let clock = PausingClock { _ in
      // The board writes in bursts, then goes away.
      if sent < bytes.count {
        let end = min(bytes.count, sent + 700)
        sent += bytes.withUnsafeBytes { write(writer, $0.baseAddress! + sent, end - sent) }
      } else if !closed {
        close(writer)
        closed = true
      }
    }
    let result = runBounded(input, options: MonitorOptions(), clock: clock) { _ in }
    #expect(result.ending == .endOfInput)
    #expect(result.statistics.telemetryFrames == 100)
    #expect(result.statistics.format == .text)
    #expect(closed)
  }
}

/// `mkfifo f; plumb-monitor f &` then `plumb run … --serial f` (README): the monitor is started
/// before any writer. Opening must not wait for one inside `open(2)`, where SIGINT and SIGTERM
/// cannot end the run; the session waits instead, and stops when asked.
@Suite struct FIFOWithoutWriterTests {
  @Test func aFIFOWithoutAWriterOpensAtOnceAndTheWaitCanBeStopped() throws {
    let directory = TemporaryDirectory()
    let path = directory.path + "/frames.fifo"
    #expect(mkfifo(path, 0o600) == 0)
    // A writer that comes after 2 s and leaves at once: what releases an `open` that waits
    // (opened read-write, which never waits itself, whether or not a reader is still there).
    var child: pid_t = 0
    let arguments = ["/bin/sh", "-c", "sleep 2; exec 3<> '\(path)'"]
    var argv = arguments.map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    #expect(posix_spawn(&child, "/bin/sh", nil, nil, &argv, environ) == 0)
    defer { _ = waitpid(child, nil, 0) }
    let clock = LinuxMonotonicClock()
    let start = clock.now()
    let input = try openInput(path)
    #expect(clock.now().nanoseconds(since: start) < 1_000_000_000, "open waited for a writer")
    #expect(input.kind == .pipe)
    let pauses = PausingClock()
    var sessionClock = pauses
    let result = MonitorSession.run(
      input, options: MonitorOptions(), clock: &sessionClock,
      shouldStop: { pauses.pauses >= 5 }, events: { _ in })
    input.close()
    #expect(result.ending == .interrupted)
    #expect(result.statistics.link.bytesReceived == 0)
  }
}

/// The same corrupted stream through a real pseudo-terminal: the simulated board writes into
/// the controller side, the monitor reads the terminal side through `TermiosSerialPort`, as it
/// would a UART.
@Suite struct PseudoTerminalRoundTripTests {
  /// Writes `bytes` into the host end a chunk per pause, as a board would over time.
  final class Feeder {
    let host: PseudoTerminalSerialPort
    var pending: [UInt8]
    var offset = 0
    let chunk: Int

    init(host: PseudoTerminalSerialPort, bytes: [UInt8], chunk: Int = 1024) {
      self.host = host
      pending = bytes
      self.chunk = chunk
    }

    var isDone: Bool { offset == pending.count }

    func feed() {
      guard offset < pending.count else { return }
      let end = min(pending.count, offset + chunk)
      let accepted =
        (try? pending.withUnsafeBytes {
          try host.write(UnsafeRawBufferPointer(rebasing: $0[offset..<end]))
        }) ?? 0
      offset += accepted
    }
  }

  @Test func corruptionIsCountedExactlyThroughAPseudoTerminal() throws {
    let units = encodedUnits(.binary, frames: 300)
    let stream = corrupt(units, format: .binary, seed: 11)
    let host = try PseudoTerminalSerialPort()
    let input = try openInput(host.terminalPath, baudRate: 115_200)
    #expect(input.kind == .serialDevice)
    #expect(input.baudRate == 115_200)
    let feeder = Feeder(host: host, bytes: stream.bytes)
    let clock = PausingClock(realPauseNanoseconds: 100_000) { _ in feeder.feed() }
    var options = MonitorOptions()
    options.frameLimit = UInt64(stream.intactTelemetry)
    let result = runBounded(input, options: options, clock: clock) { _ in }
    #expect(result.ending == .frameLimitReached)
    #expect(feeder.isDone)
    expectCounts(result, stream, format: .binary)
    withExtendedLifetime(host) {}
  }

  @Test func aCommandIsSentAndItsReplyPrinted() throws {
    let host = try PseudoTerminalSerialPort()
    let input = try openInput(host.terminalPath)
    var encoder = TelemetryEncoder(format: .binary)
    let frames = (0..<300).map { encoder.encode(boardFrame($0)) }
    let reply = encoder.encode(HostReply.ok("status ok, 0 overruns"))
    var received: [UInt8] = []
    var next = 0
    var replied = false
    let clock = PausingClock(realPauseNanoseconds: 100_000) { _ in
      // The board reads its command line, answers between two frames, and keeps streaming.
      var chunk = [UInt8](repeating: 0, count: 128)
      let count = (try? chunk.withUnsafeMutableBytes { try host.read(into: $0) }) ?? 0
      received += chunk[0..<count]
      if !replied && received.contains(UInt8(ascii: "\n")) {
        _ = host.offer(reply)
        replied = true
      }
      for _ in 0..<5 where next < frames.count {
        _ = host.offer(frames[next])
        next += 1
      }
    }
    var options = MonitorOptions()
    options.commands = ["status"]
    let log = EventLog()
    let result = runBounded(input, options: options, clock: clock) { log.events.append($0) }
    #expect(String(decoding: received, as: UTF8.self) == "status\n")
    #expect(result.ending == .repliesReceived)
    #expect(result.replies.map(\.description) == ["OK status ok, 0 overruns"])
    #expect(log.notices.contains(.sent(command: "status")))
    #expect(result.passed)
    // It stopped 20 frames after the reply, without waiting for the rest of the stream.
    #expect(result.statistics.telemetryFrames < 300)
    let printed = MonitorPrinter(style: .quiet, inputName: host.terminalPath)
      .lines(for: .reply(result.replies[0])).map(\.text)
    #expect(printed == ["reply  OK status ok, 0 overruns"])
  }

  @Test func aHungUpDeviceEndsTheRunWithoutReopen() throws {
    let host = try PseudoTerminalSerialPort()
    let input = try openInput(host.terminalPath)
    var encoder = TelemetryEncoder(format: .binary)
    let feeder = Feeder(host: host, bytes: (0..<50).flatMap { encoder.encode(boardFrame($0)) })
    var idleAfterFeeding = 0
    let clock = PausingClock(realPauseNanoseconds: 100_000) { _ in
      if !feeder.isDone {
        feeder.feed()
      } else {
        idleAfterFeeding += 1
        if idleAfterFeeding == 50 { host.hangUp() }
      }
    }
    let log = EventLog()
    let result = runBounded(input, options: MonitorOptions(), clock: clock) {
      log.events.append($0)
    }
    guard case .failed(.disconnected(let error)) = result.ending else {
      Issue.record("ended \(result.ending), not with a disconnect")
      return
    }
    #expect(error.device == host.terminalPath)
    #expect(result.statistics.disconnects == 1)
    #expect(result.statistics.telemetryFrames == 50)
    #expect(log.notices.contains(.disconnected(input: host.terminalPath, error: error)))
    #expect(MonitorError.disconnected(error).description.contains("--reopen"))
  }

  /// A USB adapter unplugged and plugged back: the stable link (like /dev/serial/by-id/…)
  /// disappears, then points at a new terminal; the monitor waits, reopens, and reads on.
  @Test func aDeviceThatComesBackIsReopened() throws {
    let directory = TemporaryDirectory()
    let link = directory.path + "/usb-plumb-if00"
    let host = try PseudoTerminalSerialPort(linkPath: link)
    let input = try openInput(link)
    var encoder = TelemetryEncoder(format: .binary)
    let before = (0..<40).flatMap { encoder.encode(boardFrame($0)) }
    // Frames 40…89 were sent while unplugged; the board carries on with 90.
    let after = (90..<200).flatMap { encoder.encode(boardFrame($0)) }
    var feeder = Feeder(host: host, bytes: before)
    var phase = 0
    var idle = 0
    let clock = PausingClock(realPauseNanoseconds: 100_000) { _ in
      switch phase {
      case 0:
        if !feeder.isDone { feeder.feed() } else { idle += 1 }
        if idle == 50 {
          host.hangUp()
          phase = 1
          idle = 0
        }
      case 1:
        idle += 1
        if idle == 3 {  // three reopen attempts find nothing, then it is back
          try? host.reopen()
          feeder = Feeder(host: host, bytes: after)
          phase = 2
        }
      default:
        feeder.feed()
      }
    }
    var options = MonitorOptions()
    options.reopen = true
    options.frameLimit = 140
    let log = EventLog()
    let result = runBounded(input, options: options, clock: clock) { log.events.append($0) }
    #expect(result.ending == .frameLimitReached)
    #expect(result.statistics.disconnects == 1)
    #expect(result.statistics.reopens == 1)
    #expect(result.statistics.telemetryFrames == 140)
    // The 50 frames sent while the cable was out show as one gap (bytes in flight at the
    // hang-up, if any, add to it).
    #expect(result.statistics.link.framesLost >= 50)
    #expect(log.notices.contains(.waitingForDevice(input: link)))
    #expect(log.notices.contains(.reopened(input: link)))
    withExtendedLifetime(host) {}
  }
}

extension PseudoTerminalSerialPort {
  /// Writes what the terminal takes now; the count, or 0 on an error.
  func offer(_ bytes: [UInt8]) -> Int {
    (try? bytes.withUnsafeBytes { try write($0) }) ?? 0
  }
}
