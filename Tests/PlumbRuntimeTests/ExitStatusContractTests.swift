import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The exit-status contract of README.md ("Using Plumb"), run: each documented failure of each
/// program, with the status it must give and a phrase its message must hold (the thing named,
/// or what to do). BSD sysexits: 64 usage, 65 bad data, 66 unreadable input, 69 unavailable
/// hardware, 73 an output that cannot be created, 74 an output whose device could not take it,
/// 78 bad configuration; 0 for `plumb run` stopped by SIGINT, SIGTERM, SIGHUP or SIGQUIT.
///
/// In the arguments, `DIR` is a fresh folder, and these name files made in it when used:
/// `REC` a 12 s recording, `CSV` its export, `FRAMES` text frames, `DAMAGED` the recording with
/// a byte flipped in its middle, `GARBAGE` random bytes, `BADCSV` a CSV with a wrong header,
/// `STUCK` a CSV whose gyro x never changes, `CUTJSON` a calibration file cut short,
/// `NOBUS` a board on an I2C bus that does not exist, `BADBOARD` a board with an unknown
/// simulation scenario, `FIFO` a named pipe nothing reads, `FOLDER` a folder.
@Suite struct ExitStatusContractTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var program: String
    var arguments: [String]
    var status: Int32
    var says: String
    /// Standard output goes to /dev/full.
    var fullOutput = false
    /// Sent after 1.5 s.
    var signal: Int32? = nil

    var testDescription: String {
      "\(status): \(program) \(arguments.joined(separator: " "))"
        + (fullOutput ? " > /dev/full" : "") + (signal.map { " (signal \($0))" } ?? "")
    }
  }

  static let sim = "Boards/simulated.json"

  static let cases: [Case] = [
    // 64: the command line is wrong.
    Case(program: "plumb", arguments: [], status: 64, says: "a subcommand is required"),
    Case(program: "plumb", arguments: ["frobnicate"], status: 64, says: "unknown subcommand"),
    Case(program: "plumb", arguments: ["run", "--bord", sim], status: 64, says: "did you mean"),
    Case(
      program: "plumb", arguments: ["replay", "--input", "CSV", "--output", "CSV"], status: 64,
      says: "would destroy"),
    Case(program: "plumb-cal", arguments: ["allan"], status: 64, says: "missing REC"),
    Case(program: "plumb-monitor", arguments: [], status: 64, says: "missing INPUT"),
    Case(program: "plumb-probe", arguments: ["--samples", "2"], status: 64, says: "--board"),
    Case(program: "plumb-hil", arguments: ["run"], status: 64, says: "missing SCENARIO"),
    // 65: the input data is wrong.
    Case(
      program: "plumb", arguments: ["replay", "--input", "BADCSV", "--output", "DIR/o.csv"],
      status: 65, says: "line 1"),
    Case(
      program: "plumb", arguments: ["export", "DAMAGED", "--csv", "--output", "DIR/o.csv"],
      status: 65, says: "CRC-32C"),
    Case(
      program: "plumb", arguments: ["run", "--replay", "CSV", "--serial", "/dev/null"],
      status: 65, says: "not a .plumbraw recording"),
    Case(program: "plumb-cal", arguments: ["allan", "STUCK"], status: 65, says: "same value"),
    Case(
      program: "plumb-cal", arguments: ["check", "CUTJSON"], status: 65, says: "not valid JSON"),
    Case(program: "plumb-monitor", arguments: ["GARBAGE"], status: 65, says: "not a Plumb stream"),
    // 66: an input cannot be read.
    Case(
      program: "plumb", arguments: ["replay", "--input", "DIR/none.csv", "--output", "DIR/o.csv"],
      status: 66, says: "none.csv"),
    Case(
      program: "plumb", arguments: ["export", "DIR/none.plumbraw", "--csv"], status: 66,
      says: "no such file"),
    Case(
      program: "plumb", arguments: ["run", "--replay", "FOLDER", "--serial", "/dev/null"],
      status: 66, says: "is a folder"),
    Case(program: "plumb-cal", arguments: ["gyro", "FOLDER"], status: 66, says: "is a folder"),
    Case(program: "plumb-monitor", arguments: ["DIR/none"], status: 66, says: "no such file"),
    // 69: the hardware is not there.
    Case(
      program: "plumb", arguments: ["run", "--board", "NOBUS", "--duration", "1"], status: 69,
      says: "/dev/i2c-plumb-absent"),
    Case(
      program: "plumb-probe", arguments: ["--board", "NOBUS"], status: 69,
      says: "/dev/i2c-plumb-absent"),
    Case(
      program: "plumb", arguments: ["run", "--board", sim, "--fast", "--serial", "FIFO"],
      status: 69, says: "nothing is reading this named pipe"),
    // 73: an output cannot be created.
    Case(
      program: "plumb", arguments: ["export", "REC", "--csv", "--output", "DIR/no/o.csv"],
      status: 73, says: "no such file or folder"),
    Case(
      program: "plumb",
      arguments: ["record", "--board", sim, "--fast", "--seconds", "1", "--output", "FOLDER"],
      status: 73, says: "is a folder"),
    Case(
      program: "plumb", arguments: ["run", "--board", sim, "--fast", "--serial", "FOLDER"],
      status: 73, says: "is a folder"),
    Case(
      program: "plumb", arguments: ["replay", "--input", "CSV", "--output", "FIFO"], status: 73,
      says: "nothing reads this named pipe"),
    Case(
      program: "plumb-cal", arguments: ["save", "CSV", "--output", "DIR/no/c.json"], status: 73,
      says: "no such file"),
    Case(
      program: "plumb-hil", arguments: ["run", "rest", "--junit", "DIR/no/j.xml"], status: 73,
      says: "j.xml"),
    // 74: an output's device could not take it (a full disk).
    Case(
      program: "plumb", arguments: ["export", "REC", "--csv", "--output", "/dev/full"],
      status: 74, says: "no space left on the device"),
    Case(
      program: "plumb", arguments: ["replay", "--input", "CSV", "--output", "/dev/full"],
      status: 74, says: "no space left on the device"),
    Case(
      program: "plumb",
      arguments: ["run", "--board", sim, "--fast", "--duration", "5", "--serial", "/dev/full"],
      status: 74, says: "the frames could not be written to /dev/full"),
    Case(
      program: "plumb", arguments: ["check-board", sim], status: 74, says: "standard output",
      fullOutput: true),
    Case(
      program: "plumb-cal", arguments: ["allan", "CSV", "--plot", "/dev/full"], status: 74,
      says: "no space left on the device"),
    Case(
      program: "plumb-cal", arguments: ["gyro", "CSV", "--html", "/dev/full"], status: 74,
      says: "no space left on the device"),
    Case(
      program: "plumb-cal", arguments: ["save", "CSV", "--output", "/dev/full"], status: 74,
      says: "no space left on the device"),
    Case(
      program: "plumb-monitor", arguments: ["FRAMES"], status: 74, says: "standard output",
      fullOutput: true),
    Case(
      program: "plumb-hil", arguments: ["run", "rest", "--seconds", "1", "--junit", "/dev/full"],
      status: 74, says: "no space left on the device"),
    // 78: the configuration is wrong.
    Case(
      program: "plumb", arguments: ["check-board", "BADBOARD"], status: 78,
      says: "simulation.scenario"),
    Case(
      program: "plumb", arguments: ["run", "--board", "DIR/none.json"], status: 78,
      says: "no such file"),
    Case(
      program: "plumb-probe", arguments: ["--board", "BADBOARD"], status: 78,
      says: "simulation.scenario"),
    Case(
      program: "plumb-hil", arguments: ["run", "rest", "--board", "BADBOARD"], status: 78,
      says: "simulation.scenario"),
    // 0: plumb run stopped by a signal, cleanly, after its summary.
    Case(
      program: "plumb",
      arguments: ["run", "--board", sim, "--duration", "30", "--serial", "/dev/null"],
      status: 0, says: " samples, ", signal: SIGINT),
    Case(
      program: "plumb",
      arguments: ["run", "--board", sim, "--duration", "30", "--serial", "/dev/null"],
      status: 0, says: " samples, ", signal: SIGTERM),
    Case(
      program: "plumb",
      arguments: ["run", "--board", sim, "--duration", "30", "--serial", "/dev/null"],
      status: 0, says: " samples, ", signal: SIGHUP),
    Case(
      program: "plumb",
      arguments: ["run", "--board", sim, "--duration", "30", "--serial", "/dev/null"],
      status: 0, says: " samples, ", signal: SIGQUIT),
  ]

  @Test(arguments: cases)
  func theDocumentedFailure(_ test: Case) throws {
    let directory = try temporaryDirectory().path
    let arguments = try test.arguments.map { try fixture($0, in: directory) }
    let executable = builtExecutable(test.program)
    let result: ProcessResult
    if test.fullOutput {
      result = try runPlumb(
        ["-c", "exec \"$0\" \"$@\" > /dev/full", executable] + arguments, executable: "/bin/sh")
    } else {
      result = try runPlumb(arguments, executable: executable) { process in
        let pid = process.processIdentifier
        if let signal = test.signal {
          usleep(1_500_000)
          kill(pid, signal)
        }
        // A case that hangs fails, rather than holding the suite.
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) { _ = kill(pid, SIGKILL) }
      }
    }
    #expect(result.status == test.status, "\(test.testDescription): \(result.standardError)")
    #expect(
      result.standardError.contains(test.says), "\(test.testDescription): \(result.standardError)")
    #expect(
      !result.standardError.contains("crashed") && !result.standardError.contains("Fatal error"),
      "\(result.standardError)")
  }

  /// The README states the contract these cases run: every status in it is named there.
  @Test func theReadmeNamesEveryStatus() throws {
    let readme = try String(contentsOfFile: "\(repositoryRoot)/README.md", encoding: .utf8)
    guard let start = readme.range(of: "Every command takes `--help`; usage errors exit 64") else {
      Issue.record("README.md no longer states the exit-status contract where it did")
      return
    }
    let rest = readme[start.lowerBound...]
    let paragraph = rest[..<(rest.range(of: "\n\n")?.lowerBound ?? rest.endIndex)]
    for status in Set(Self.cases.map(\.status)).sorted() where status != 0 {
      #expect(paragraph.contains(" \(status)"), "README's contract does not name \(status)")
    }
    for signal in ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] {
      #expect(paragraph.contains(signal), "README's contract does not name \(signal)")
    }
  }

  /// The file a placeholder stands for, made in `directory` (or the argument itself).
  func fixture(_ argument: String, in directory: String) throws -> String {
    let path = { (name: String) in "\(directory)/\(name)" }
    switch argument {
    case "REC", "DAMAGED", "CSV", "STUCK":
      let recording = path("sim.plumbraw")
      if !FileManager.default.fileExists(atPath: recording) {
        let record = try runPlumb([
          "record", "--board", Self.sim, "--fast", "--seconds", "12", "--output", recording,
          "--serial", "/dev/null",
        ])
        #expect(record.status == 0, "\(record.standardError)")
      }
      switch argument {
      case "REC": return recording
      case "DAMAGED":
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: recording)))
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path("damaged.plumbraw")))
        return path("damaged.plumbraw")
      default:
        let csv = path("still.csv")
        #expect(try runPlumb(["export", recording, "--csv", "--output", csv]).status == 0)
        guard argument == "STUCK" else { return csv }
        let rows = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n")
        let stuck =
          rows.enumerated().map { index, row in
            guard index > 0 else { return String(row) }
            var fields = row.split(separator: ",").map(String.init)
            fields[1] = "0.001"
            return fields.joined(separator: ",")
          }.joined(separator: "\n") + "\n"
        try stuck.write(toFile: path("stuck.csv"), atomically: true, encoding: .utf8)
        return path("stuck.csv")
      }
    case "FRAMES":
      let frames = path("frames.txt")
      let run = try runPlumb([
        "run", "--board", Self.sim, "--fast", "--duration", "2", "--format", "text", "--serial",
        frames,
      ])
      #expect(run.status == 0, "\(run.standardError)")
      return frames
    case "GARBAGE":
      var generator = SystemRandomNumberGenerator()
      let bytes = (0..<4000).map { _ in UInt8.random(in: 0...255, using: &generator) }
      try Data(bytes).write(to: URL(fileURLWithPath: path("garbage.bin")))
      return path("garbage.bin")
    case "BADCSV":
      try "time,gx,gy,gz,ax,ay,az\n0,0,0,0,0,0,9.8\n".write(
        toFile: path("bad.csv"), atomically: true, encoding: .utf8)
      return path("bad.csv")
    case "CUTJSON":
      try #"{"schema": 1, "sensor": {"whoAmI": "0x6"#.write(
        toFile: path("cut.json"), atomically: true, encoding: .utf8)
      return path("cut.json")
    case "NOBUS", "BADBOARD":
      let source = argument == "NOBUS" ? "raspberry-pi-4" : "simulated"
      var text = try String(
        contentsOfFile: "\(repositoryRoot)/Boards/\(source).json", encoding: .utf8)
      text =
        argument == "NOBUS"
        ? text.replacingOccurrences(of: "/dev/i2c-1", with: "/dev/i2c-plumb-absent")
        : text.replacingOccurrences(of: #""scenario": "handheld""#, with: #""scenario": "nope""#)
      try text.write(toFile: path("board.json"), atomically: true, encoding: .utf8)
      return path("board.json")
    case "FIFO":
      #expect(mkfifo(path("fifo"), 0o600) == 0)
      return path("fifo")
    case "FOLDER":
      try FileManager.default.createDirectory(
        atPath: path("folder"), withIntermediateDirectories: false)
      return path("folder")
    default:
      return argument.replacingOccurrences(of: "DIR/", with: directory + "/")
    }
  }
}
