import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Every output of every program given a path that cannot be a file: a folder, a folder that
/// does not exist, a named pipe nothing reads. Each is 73 (EX_CANTCREAT), at once, naming the
/// path and what is wrong with it; none hangs, none writes anything. (A named pipe is `plumb
/// run`'s serial line: nothing reading it is the missing device, 69, as its help says.)
@Suite struct OutputPathTests {
  /// A program and its arguments with `OUT` where the output goes (paths relative to the
  /// repository; `REC` is a short recording, `CSV` its export).
  static let outputs: [(program: String, arguments: [String])] = [
    (
      "plumb",
      ["run", "--board", "Boards/simulated.json", "--fast", "--duration", "1", "--serial", "OUT"]
    ),
    ("plumb", ["run", "--replay", "REC", "--serial", "OUT"]),
    (
      "plumb",
      [
        "record", "--board", "Boards/simulated.json", "--fast", "--seconds", "1", "--output", "OUT",
        "--serial", "/dev/null",
      ]
    ),
    ("plumb", ["export", "REC", "--csv", "--output", "OUT"]),
    ("plumb", ["replay", "--input", "CSV", "--output", "OUT"]),
    ("plumb", ["calibrate", "accel", "--board", "Boards/simulated.json", "--output", "OUT"]),
    ("plumb-cal", ["save", "CSV", "--output", "OUT"]),
    ("plumb-cal", ["allan", "CSV", "--plot", "OUT"]),
    ("plumb-cal", ["allan", "CSV", "--html", "OUT"]),
    ("plumb-hil", ["run", "rest", "--seconds", "1", "--junit", "OUT"]),
  ]

  @Test(arguments: outputs.indices, ["folder", "no such folder", "named pipe"])
  func anOutputThatCannotBeAFileIsRefusedAtOnce(index: Int, kind: String) throws {
    let (program, template) = Self.outputs[index]
    let directory = try temporaryDirectory()
    let recording = directory.appendingPathComponent("sim.plumbraw").path
    let record = try runPlumb([
      "record", "--board", "Boards/simulated.json", "--fast", "--seconds", "12", "--output",
      recording, "--serial", "/dev/null",
    ])
    #expect(record.status == 0, "\(record.standardError)")
    let csv = directory.appendingPathComponent("still.csv").path
    #expect(try runPlumb(["export", recording, "--csv", "--output", csv]).status == 0)
    let output: String
    let says: [String]
    switch kind {
    case "folder":
      output = directory.appendingPathComponent("a-folder").path
      try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: false)
      says = ["folder"]
    case "no such folder":
      output = directory.appendingPathComponent("no-such-folder/out").path
      says = ["no-such-folder"]
    default:
      output = directory.appendingPathComponent("pipe").path
      #expect(mkfifo(output, 0o600) == 0)
      says = ["nothing reads", "nothing is reading", "is a named pipe, not a file"]
    }
    let arguments = template.map {
      $0 == "OUT" ? output : $0 == "REC" ? recording : $0 == "CSV" ? csv : $0
    }
    let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    let result = try runPlumb(arguments, executable: builtExecutable(program)) { process in
      // A program that waits for ever on the pipe fails the test, not the suite.
      let pid = process.processIdentifier
      DispatchQueue.global().asyncAfter(deadline: .now() + 30) { _ = kill(pid, SIGKILL) }
    }
    let isSerialLine = program == "plumb" && template[0] == "run"
    #expect(
      result.status == (kind == "named pipe" && isSerialLine ? 69 : 73),
      "\(program) \(arguments): \(result.standardError)")
    #expect(
      result.standardError.contains(output) && says.contains { result.standardError.contains($0) },
      "\(program) \(arguments): \(result.standardError)")
    #expect(!result.standardError.contains("self-test"), "refused after the board started")
    let after = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    #expect(after == before, "\(program) \(arguments) left \(after)")
  }
}
