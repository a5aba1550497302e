import HardwareAbstraction
import Telemetry

/// How a monitor session runs: what to decode, when to stop, what to expect, what to send.
public struct MonitorOptions: Hashable, Sendable {
  /// The format, or `nil` to detect it (binary, text or MAVLink v2).
  public var format: TelemetryFormat?
  /// Stop after this many telemetry frames (`--count`).
  public var frameLimit: UInt64?
  /// Stop after this long on the session's clock, ns (`--duration`; `CLOCK_MONOTONIC` in the
  /// tool, the test's clock in tests).
  public var durationNanoseconds: Int64?
  /// Report statistics every this much sample time, ns (`--stats-every`).
  public var statisticsIntervalNanoseconds: Int64?
  /// Fail unless at least this many telemetry frames arrive (`--expect-frames`).
  public var expectedFrames: UInt64?
  /// Fail unless the frame rate measured from the sample times is within `rateTolerance` of
  /// this (`--expect-rate`).
  public var expectedRateHz: Double?
  /// Relative tolerance of `expectedRateHz` (0.02: ±2 %, twice the MPU-6050's ±1 % oscillator
  /// variation over temperature, PS §7.15).
  public var rateTolerance: Double = 0.02
  /// Host commands to send on the serial line, in order (`--send`), each followed by `\n`.
  public var commands: [String] = []
  /// Wait for a disconnected serial device and open it again (`--reopen`).
  public var reopen = false
  /// Give up when no valid frame has appeared in this many bytes.
  public var searchLimitBytes: UInt64 = 16 * 1024
  /// How long to pause when a live input has nothing, ns. 2 ms is 23 bytes at 115200 baud,
  /// far less than a tty's 4 KiB buffer.
  public var idlePauseNanoseconds: Int64 = 2_000_000
  /// How often to try a disconnected device again, ns.
  public var reopenIntervalNanoseconds: Int64 = 500_000_000
  /// How long to wait for the first reply to `commands`, and for more replies after one, ns.
  public var replyTimeoutNanoseconds: Int64 = 2_000_000_000
  /// With `commands` and no `frameLimit` or `durationNanoseconds`: stop once this many
  /// telemetry frames have passed since the last reply (the replies to one command arrive
  /// between consecutive frames).
  public var framesAfterLastReply: UInt64 = 20

  public init(format: TelemetryFormat? = nil) {
    self.format = format
  }

  /// The formats a search tries, for messages.
  public var formatsTried: [TelemetryFormat] {
    // The two binary formats are one framing: tried once, as "binary".
    format.map { [$0] } ?? TelemetryFormat.allCases.filter { $0 != .binaryIMU }
  }
}

/// Why a session ended.
public enum MonitorEnding: Hashable, Sendable {
  /// A file's end, or a pipe whose writer closed.
  case endOfInput
  /// `frameLimit` telemetry frames arrived.
  case frameLimitReached
  /// `durationNanoseconds` passed.
  case durationElapsed
  /// The caller asked to stop (SIGINT, SIGTERM).
  case interrupted
  /// The replies to the commands arrived (and no frame limit or duration was set).
  case repliesReceived
  /// The commands got no reply in time (and no frame limit or duration was set).
  case noReply
  /// The input failed: could not be read, went away, or holds no Plumb stream.
  case failed(MonitorError)
}

/// An expectation that was not met, or a command that failed.
public enum MonitorFailure: Hashable, Sendable, CustomStringConvertible {
  case tooFewFrames(expected: UInt64, received: UInt64)
  /// `measuredHz` is `nil` when fewer than two frames arrived.
  case rateOutOfTolerance(expectedHz: Double, tolerance: Double, measuredHz: Double?)
  case noReply(commands: [String])
  case errorReply(HostReply)

  public var description: String {
    switch self {
    case .tooFewFrames(let expected, let received):
      return "expected at least \(expected) frames, received \(received)"
    case .rateOutOfTolerance(let expected, let tolerance, let measured):
      let window = "\(fixed(expected, 2)) Hz ± \(fixed(tolerance * 100, 1)) %"
      guard let measured else {
        return "expected \(window), but fewer than two frames arrived: no rate to measure"
      }
      return "expected \(window), measured \(fixed(measured, 2)) Hz from the sample times"
    case .noReply(let commands):
      return
        "no reply to \(commands.map { "\"\($0)\"" }.joined(separator: ", ")): is the board "
        + "running `plumb run` on this line, and reading commands?"
    case .errorReply(let reply):
      return "the board refused a command: \(reply)"
    }
  }
}

/// What a session found.
public struct MonitorResult: Hashable, Sendable {
  public var statistics: MonitorStatistics
  public var ending: MonitorEnding
  /// Expectations not met and commands that failed.
  public var failures: [MonitorFailure]
  /// The replies that arrived, in order.
  public var replies: [HostReply]

  /// Whether the session ended without an input failure and met every expectation.
  public var passed: Bool {
    if case .failed = ending { return false }
    return failures.isEmpty
  }
}

/// What a live viewer (`plumb-monitor --web`) hooks into a running session: the statistics so
/// far at a steady pace, and host commands to send while it runs. Both are called on the
/// session's own thread, between reads; they must return at once (the web server takes a lock
/// for a copy and never waits on the network), or they would delay the serial reading.
public struct MonitorLiveHooks {
  /// How often `statistics` is called, ns of the session's clock.
  public var statisticsIntervalNanoseconds: Int64
  /// Given the statistics so far. Copy out only the numbers needed: keeping the whole value
  /// would make the session copy its latency histogram (74 KB) at its next frame.
  public var statistics: (MonitorStatistics) -> Void
  /// The next command to send (one line, without the line end), or `nil`. Unlike `--send`,
  /// these are not expectations: no reply or an `ERR` is reported as an event, never a failure.
  public var nextCommand: () -> String?

  public init(
    statisticsIntervalNanoseconds: Int64 = 500_000_000,
    statistics: @escaping (MonitorStatistics) -> Void,
    nextCommand: @escaping () -> String? = { nil }
  ) {
    self.statisticsIntervalNanoseconds = statisticsIntervalNanoseconds
    self.statistics = statistics
    self.nextCommand = nextCommand
  }
}

/// Runs a monitor over an input: reads it, decodes, sends commands, handles a device that goes
/// away, stops when asked, and checks the expectations.
public enum MonitorSession {
  /// Runs until the input ends, a limit is reached, `shouldStop` says so (checked every
  /// iteration: the tool's SIGINT/SIGTERM flag), or the input fails. `clock` measures
  /// `durationNanoseconds` and the reply timeout and makes the pauses (`sleep(until:)`) when
  /// a live input has nothing: `LinuxMonotonicClock` in the tool, a manual clock in tests.
  /// Events go to `events` in order; the last is the final `.statistics`. `live` hooks a
  /// viewer in (statistics at its pace, commands it sends).
  public static func run<Clock: MonotonicClock>(
    _ input: MonitorInput, options: MonitorOptions, clock: inout Clock,
    shouldStop: () -> Bool = { false }, live: MonitorLiveHooks? = nil,
    events: (MonitorEvent) -> Void
  ) -> MonitorResult {
    var session = Session(input: input, options: options, start: clock.now())
    session.live = live
    let ending = session.loop(clock: &clock, shouldStop: shouldStop, events: events)
    return session.finish(ending, events: events)
  }
}

/// The state of one run.
private struct Session {
  let input: MonitorInput
  let options: MonitorOptions
  let deadline: Timestamp?
  var monitor: FrameMonitor
  var buffer = [UInt8](repeating: 0, count: 4096)
  /// Command bytes still to write, and where each command ends in them.
  var outgoing: [UInt8] = []
  var outgoingOffset = 0
  var commandEnds: [(end: Int, command: String)] = []
  var commandsSentAt: Timestamp?
  /// Where the `--send` commands end in `outgoing` (live commands come after them), and
  /// whether they have all been written.
  var sendCommandsEnd = 0
  var sendCommandsWritten = false
  var live: MonitorLiveHooks?
  var nextLiveStatistics: Timestamp?
  var replies: [HostReply] = []
  var lastReplyAt: Timestamp?
  var framesAtLastReply: UInt64 = 0
  var failures: [MonitorFailure] = []

  init(input: MonitorInput, options: MonitorOptions, start: Timestamp) {
    self.input = input
    self.options = options
    deadline = options.durationNanoseconds.map { start.advanced(byNanoseconds: $0) }
    monitor = FrameMonitor(
      format: options.format, statisticsIntervalNanoseconds: options.statisticsIntervalNanoseconds)
    for command in options.commands {
      outgoing += Array(command.utf8) + [UInt8(ascii: "\n")]
      commandEnds.append((outgoing.count, command))
    }
    sendCommandsEnd = outgoing.count
    sendCommandsWritten = options.commands.isEmpty
  }

  /// Calls the live hooks: the statistics when due, and queues the commands waiting.
  mutating func serveLive(at now: Timestamp) {
    guard let live else { return }
    if nextLiveStatistics.map({ now >= $0 }) ?? true {
      live.statistics(monitor.statistics)
      nextLiveStatistics = now.advanced(byNanoseconds: live.statisticsIntervalNanoseconds)
    }
    while let command = live.nextCommand() {
      // Only a serial device can take commands; the tool offers them for nothing else.
      guard input.kind == .serialDevice else { continue }
      if outgoingOffset == outgoing.count && sendCommandsWritten {
        // All written: start again from the front, so hours of commands use no more memory.
        outgoing.removeAll(keepingCapacity: true)
        outgoingOffset = 0
      }
      outgoing += Array(command.utf8) + [UInt8(ascii: "\n")]
      commandEnds.append((outgoing.count, command))
    }
  }

  /// Stops by itself once the replies are in, unless a frame limit or a duration says when.
  var stopsAfterReplies: Bool {
    !options.commands.isEmpty && options.frameLimit == nil && options.durationNanoseconds == nil
  }

  mutating func loop<Clock: MonotonicClock>(
    clock: inout Clock, shouldStop: () -> Bool, events: (MonitorEvent) -> Void
  ) -> MonitorEnding {
    if !options.commands.isEmpty && input.kind != .serialDevice {
      return .failed(.cannotSend(input: input.name))
    }
    while true {
      if shouldStop() { return .interrupted }
      let now = clock.now()
      if let deadline, now >= deadline { return .durationElapsed }
      serveLive(at: now)
      if let ending = sendPending(at: now, events: events) { return ending }
      if let ending = checkReplies(at: now, events: events) { return ending }

      var outcome: Result<MonitorInput.ReadResult, MonitorError> = .success(.nothingYet)
      buffer.withUnsafeMutableBytes { bytes in
        outcome = Result { () throws(MonitorError) in try input.read(into: bytes) }
      }
      let result: MonitorInput.ReadResult
      do throws(MonitorError) {
        result = try outcome.get()
      } catch {
        guard case .disconnected(let serialError) = error else { return .failed(error) }
        monitor.recordDisconnect()
        events(.notice(.disconnected(input: input.name, error: serialError)))
        guard options.reopen else { return .failed(error) }
        if let ending = waitForDevice(clock: &clock, shouldStop: shouldStop, events: events) {
          return ending
        }
        continue
      }

      switch result {
      case .bytes(let count):
        consume(count, at: clock.now(), events: events)
        if let limit = options.frameLimit, monitor.statistics.telemetryFrames >= limit {
          return .frameLimitReached
        }
        let statistics = monitor.statistics
        if statistics.link.frames == 0 && statistics.link.bytesReceived >= options.searchLimitBytes
        {
          return .failed(
            .notAPlumbStream(
              input: input.name, bytesExamined: options.searchLimitBytes,
              formatsTried: options.formatsTried, wholeInput: false, baudRate: input.baudRate))
        }
      case .nothingYet:
        clock.sleep(until: clock.now().advanced(byNanoseconds: options.idlePauseNanoseconds))
      case .endOfInput:
        let statistics = monitor.statistics
        if statistics.link.bytesReceived == 0 { return .failed(.emptyInput(input: input.name)) }
        if statistics.link.frames == 0 {
          return .failed(
            .notAPlumbStream(
              input: input.name, bytesExamined: statistics.link.bytesReceived,
              formatsTried: options.formatsTried, wholeInput: true, baudRate: input.baudRate))
        }
        return .endOfInput
      }
    }
  }

  /// Decodes the first `count` bytes of the buffer, passing the events on and keeping track
  /// of the replies (and how many frames had arrived when each came).
  mutating func consume(_ count: Int, at now: Timestamp, events: (MonitorEvent) -> Void) {
    let framesBefore = monitor.statistics.telemetryFrames
    var frames: UInt64 = 0
    var arrived: [(reply: HostReply, frames: UInt64)] = []
    buffer.withUnsafeBytes { bytes in
      _ = monitor.consume(
        UnsafeRawBufferPointer(rebasing: bytes[0..<count]), frameLimit: options.frameLimit
      ) { event in
        switch event {
        case .frame: frames += 1
        case .reply(let reply): arrived.append((reply, framesBefore + frames))
        default: break
        }
        events(event)
      }
    }
    for (reply, framesSoFar) in arrived {
      replies.append(reply)
      lastReplyAt = now
      framesAtLastReply = framesSoFar
      if reply.status == .error && !options.commands.isEmpty {
        failures.append(.errorReply(reply))
      }
    }
  }

  /// Writes what is left of the commands (non-blocking; the rest waits for the next turn).
  mutating func sendPending(at now: Timestamp, events: (MonitorEvent) -> Void) -> MonitorEnding? {
    guard outgoingOffset < outgoing.count else { return nil }
    var outcome: Result<Int, MonitorError> = .success(0)
    let offset = outgoingOffset
    outgoing.withUnsafeBytes { bytes in
      outcome = Result { () throws(MonitorError) in
        try input.write(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
      }
    }
    let written: Int
    do throws(MonitorError) {
      written = try outcome.get()
    } catch {
      // A disconnect shows up on the next read as well; anything else ends the run.
      if case .disconnected = error { return nil }
      return .failed(error)
    }
    outgoingOffset += written
    while let first = commandEnds.first, first.end <= outgoingOffset {
      events(.notice(.sent(command: first.command)))
      commandEnds.removeFirst()
    }
    if !sendCommandsWritten && outgoingOffset >= sendCommandsEnd {
      sendCommandsWritten = true
      commandsSentAt = now
    }
    return nil
  }

  /// Ends the run when the replies are in or overdue.
  mutating func checkReplies(at now: Timestamp, events: (MonitorEvent) -> Void) -> MonitorEnding? {
    guard let sentAt = commandsSentAt else { return nil }
    guard let lastReplyAt else {
      let waited = now.nanoseconds(since: sentAt)
      guard waited >= options.replyTimeoutNanoseconds else { return nil }
      commandsSentAt = nil  // report once
      failures.append(.noReply(commands: options.commands))
      events(.notice(.noReply(commands: options.commands, waitedNanoseconds: waited)))
      return stopsAfterReplies ? .noReply : nil
    }
    guard stopsAfterReplies else { return nil }
    let frames = monitor.statistics.telemetryFrames - framesAtLastReply
    if frames >= options.framesAfterLastReply
      || now.nanoseconds(since: lastReplyAt) >= options.replyTimeoutNanoseconds
    {
      return .repliesReceived
    }
    return nil
  }

  /// `--reopen`: tries the device every `reopenIntervalNanoseconds` until it opens, the
  /// duration ends or the caller stops. Returns an ending, or `nil` when the device is back.
  mutating func waitForDevice<Clock: MonotonicClock>(
    clock: inout Clock, shouldStop: () -> Bool, events: (MonitorEvent) -> Void
  ) -> MonitorEnding? {
    input.close()
    events(.notice(.waitingForDevice(input: input.name)))
    var lastRefusal: SerialError.Kind?
    while true {
      if shouldStop() { return .interrupted }
      serveLive(at: clock.now())
      var wake = clock.now().advanced(byNanoseconds: options.reopenIntervalNanoseconds)
      if let deadline {
        if clock.now() >= deadline { return .durationElapsed }
        wake = min(wake, deadline)
      }
      clock.sleep(until: wake)
      if let deadline, clock.now() >= deadline { return .durationElapsed }
      do throws(SerialError) {
        try input.reopen()
        monitor.recordReopen()
        events(.notice(.reopened(input: input.name)))
        return nil
      } catch {
        // Missing is the expected state while unplugged; anything else (udev has not set the
        // group yet, another program grabbed it) is worth saying once.
        if error.kind != .deviceMissing && error.kind != lastRefusal {
          events(.notice(.reopenRefused(error)))
        }
        lastRefusal = error.kind
      }
    }
  }

  /// Finishes the stream, reports the final statistics, and checks the expectations.
  mutating func finish(_ ending: MonitorEnding, events: (MonitorEvent) -> Void) -> MonitorResult {
    monitor.finish()
    let statistics = monitor.statistics
    events(.statistics(statistics, final: true))
    if let expected = options.expectedFrames, statistics.telemetryFrames < expected {
      failures.append(.tooFewFrames(expected: expected, received: statistics.telemetryFrames))
    }
    if let expected = options.expectedRateHz {
      let measured = statistics.frameRateHz
      if measured.map({ abs($0 - expected) > options.rateTolerance * expected }) ?? true {
        failures.append(
          .rateOutOfTolerance(
            expectedHz: expected, tolerance: options.rateTolerance, measuredHz: measured))
      }
    }
    // Commands sent and never answered, whatever ended the run (the reply timeout, SIGINT or
    // SIGTERM, --count, --duration): nothing says the board obeyed them.
    if !options.commands.isEmpty, replies.isEmpty,
      !failures.contains(.noReply(commands: options.commands))
    {
      failures.append(.noReply(commands: options.commands))
    }
    return MonitorResult(
      statistics: statistics, ending: ending, failures: failures, replies: replies)
  }
}
