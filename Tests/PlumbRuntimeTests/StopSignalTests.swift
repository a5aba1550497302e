import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 21: SIGQUIT (Ctrl-\) to `plumb run`, `plumb record` or `plumb-monitor` printed "Program
/// crashed" with registers and a backtrace (Swift's runtime takes SIGQUIT for a crash), and the
/// program then kept running. And a hang-up killed `plumb record` and `plumb-monitor` without
/// their summary. Every long-running program now stops on SIGINT, SIGTERM, SIGHUP and SIGQUIT
/// alike, cleanly, with its summary; every other command ends at once on SIGQUIT, as a shell
/// user means it, without a word about a crash.
@Suite struct StopSignalTests {
  static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

  /// What a crash report looks like: none may appear after a signal a person sent.
  func expectNoCrashReport(
    _ result: ProcessResult, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let text = result.standardError
    #expect(
      !text.contains("crashed") && !text.contains("Backtrac") && !text.contains("Fatal error"),
      "\(text)", sourceLocation: sourceLocation)
  }

  /// `plumb run` and `plumb record` on the simulated board in real time (20 s asked), signalled
  /// after 1.5 s: the summary, exit 0, and (record) a whole recording that says it is shorter.
  @Test(arguments: ["run", "record"], signals)
  func theFirmwareStopsCleanly(command: String, signal: Int32) throws {
    let directory = try temporaryDirectory()
    let recording = directory.appendingPathComponent("stopped.plumbraw").path
    let frames = directory.appendingPathComponent("frames.txt").path
    let arguments =
      command == "run"
      ? ["run", "--board", "Boards/simulated.json", "--format", "text", "--duration", "20"]
      : ["record", "--board", "Boards/simulated.json", "--seconds", "20", "--output", recording]
    let result = try runPlumb(
      arguments + ["--serial", frames], whileRunning: self.signal(signal, after: 1_500_000))
    #expect(result.status == 0, "\(result.standardError)")
    expectNoCrashReport(result)
    #expect(result.standardError.contains(" samples, "), "\(result.standardError)")
    #expect(
      !result.standardError.contains("plumb: 20.0"), "stopped by the duration, not the signal")
    #expect(try String(contentsOfFile: frames, encoding: .utf8).hasSuffix("\r\n"))
    if command == "record" {
      #expect(
        result.standardError.contains("stopped by \(Self.name(signal))"), "\(result.standardError)")
      let export = try runPlumb([
        "export", recording, "--csv", "--output", directory.appendingPathComponent("r.csv").path,
      ])
      #expect(export.status == 0 && !export.standardError.contains("warning"), "\(export)")
    }
  }

  /// `plumb-monitor` waiting on a named pipe nothing writes to yet, signalled after a second:
  /// the statistics and exit 0.
  @Test(arguments: signals)
  func theMonitorStopsCleanly(signal: Int32) throws {
    let fifo = try temporaryDirectory().appendingPathComponent("link").path
    #expect(mkfifo(fifo, 0o600) == 0)
    let result = try runPlumb(
      [fifo, "--quiet"], executable: builtExecutable("plumb-monitor"),
      whileRunning: self.signal(signal, after: 1_000_000))
    #expect(result.status == 0, "\(result.standardError)")
    expectNoCrashReport(result)
    #expect(
      String(decoding: result.standardOutput, as: UTF8.self).contains("frames"),
      "\(String(decoding: result.standardOutput, as: UTF8.self))")
  }

  /// A real-time HIL run signalled after 1.5 s: its summary line marked interrupted, and the
  /// status a shell reports for the signal (128 + its number), as the help says.
  @Test(arguments: signals)
  func aHILRunReportsTheSignal(signal: Int32) throws {
    let result = try runPlumb(
      ["run", "rest", "--seconds", "60", "--realtime"], executable: builtExecutable("plumb-hil"),
      whileRunning: self.signal(signal, after: 1_500_000))
    #expect(result.status == 128 + signal, "\(result.standardError)")
    expectNoCrashReport(result)
    #expect(
      result.standardError.contains("interrupted by \(Self.name(signal))")
        && result.standardError.contains("the summary covers the run up to there"),
      "\(result.standardError)")
    #expect(String(decoding: result.standardOutput, as: UTF8.self).hasSuffix(" interrupted\n"))
  }

  /// A command that does its work and ends (here `plumb check-board` reading a board file from
  /// a named pipe whose writer has not finished) ends at once on SIGQUIT, killed by it as a
  /// shell user means: no crash report, and not carrying on to exit 0.
  @Test func otherCommandsEndAtOnceOnSigquit() throws {
    let fifo = try temporaryDirectory().appendingPathComponent("board.json").path
    #expect(mkfifo(fifo, 0o600) == 0)
    // Held open for writing (without a byte), so the reader waits in read(2).
    let writer = open(fifo, O_RDWR | O_NONBLOCK | O_CLOEXEC)
    #expect(writer >= 0)
    defer { close(writer) }
    var signalled = false
    let result = try runPlumb(["check-board", fifo]) { process in
      // Signalled once the command has the pipe open, i.e. it is running its own code.
      for _ in 0..<500 where !signalled {
        if holdsOpen(process.processIdentifier, fifo) {
          kill(process.processIdentifier, SIGQUIT)
          Self.killIfStillRunning(process.processIdentifier)
          signalled = true
        } else {
          usleep(10_000)
        }
      }
      if !signalled { kill(process.processIdentifier, SIGKILL) }
    }
    #expect(signalled, "check-board never opened the pipe")
    #expect(result.status == SIGQUIT, "\(result.standardError)")
    expectNoCrashReport(result)
  }

  /// Whether process `pid` has `path` open (a look through /proc/PID/fd).
  func holdsOpen(_ pid: Int32, _ path: String) -> Bool {
    let folder = "/proc/\(pid)/fd"
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
      return false
    }
    return names.contains {
      (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\($0)")) == path
    }
  }

  /// Sends `signal` to the process after `microseconds`; if it has not ended 20 s later, kills
  /// it (SIGKILL, status 9), so that a program that does not stop fails the test instead of
  /// holding the suite.
  func signal(_ signal: Int32, after microseconds: UInt32) -> (Process) -> Void {
    { process in
      usleep(microseconds)
      kill(process.processIdentifier, signal)
      Self.killIfStillRunning(process.processIdentifier)
    }
  }

  static func killIfStillRunning(_ pid: Int32) {
    DispatchQueue.global().asyncAfter(deadline: .now() + 20) { _ = kill(pid, SIGKILL) }
  }

  static func name(_ signal: Int32) -> String {
    [SIGINT: "SIGINT", SIGTERM: "SIGTERM", SIGHUP: "SIGHUP", SIGQUIT: "SIGQUIT"][signal]
      ?? "signal \(signal)"
  }
}
