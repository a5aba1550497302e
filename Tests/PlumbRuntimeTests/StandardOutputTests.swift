import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What a program prints on standard output is its output too: redirected to a file on a full
/// disk (here `/dev/full`, which fails every write with `ENOSPC`), the report, the frames or the
/// statistics are lost. Every program said nothing and exited 0 (`plumb run` said its reader
/// had gone away). Each now exits 74 and says standard output could not be written, and why.
@Suite struct StandardOutputTests {
  @Test(arguments: [
    ("plumb", ["check-board", "Boards/simulated.json"]),
    ("plumb", ["run", "--help"]),
    ("plumb", ["run", "--board", "Boards/simulated.json", "--fast", "--duration", "2"]),
    ("plumb", ["replay", "--input", "CSV", "--output", "/dev/stdout"]),
    ("plumb-cal", ["allan", "CSV"]),
    ("plumb-probe", ["--board", "Boards/simulated.json", "--samples", "2"]),
    ("plumb-monitor", ["FRAMES", "--quiet"]),
    ("plumb-monitor", ["FRAMES", "--json"]),
    ("plumb-hil", ["run", "rest", "--seconds", "1"]),
  ])
  func aFullStandardOutputIsAnIOError(program: String, arguments: [String]) throws {
    let directory = try temporaryDirectory()
    let recording = directory.appendingPathComponent("sim.plumbraw").path
    let csv = directory.appendingPathComponent("still.csv").path
    let frames = directory.appendingPathComponent("frames.txt").path
    if arguments.contains("CSV") {
      #expect(
        try runPlumb([
          "record", "--board", "Boards/simulated.json", "--fast", "--seconds", "12", "--output",
          recording, "--serial", "/dev/null",
        ]).status == 0)
      #expect(try runPlumb(["export", recording, "--csv", "--output", csv]).status == 0)
    }
    if arguments.contains("FRAMES") {
      #expect(
        try runPlumb([
          "run", "--board", "Boards/simulated.json", "--fast", "--duration", "2", "--format",
          "text", "--serial", frames,
        ]).status == 0)
    }
    let filled = arguments.map { $0 == "CSV" ? csv : $0 == "FRAMES" ? frames : $0 }
    let result = try runPlumb(
      ["-c", "exec \"$0\" \"$@\" > /dev/full", builtExecutable(program)] + filled,
      executable: "/bin/sh")
    #expect(result.status == 74, "\(program) \(filled): \(result.standardError)")
    #expect(
      (result.standardError.contains("standard output")
        || result.standardError.contains("/dev/stdout"))
        && result.standardError.contains("no space left"),
      "\(program) \(filled): \(result.standardError)")
    #expect(!result.standardError.contains("reader went away"), "\(result.standardError)")
  }
}
