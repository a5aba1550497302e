import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Outputs that fail while they are written: a full disk. `/dev/full` fails every write with
/// `ENOSPC`; a file-size limit (`ulimit -f`, SIGXFSZ ignored) fails the write that would pass
/// it with `EFBIG` after taking what fits, as a disk filling up does, without mounting
/// anything. The README promises 74 for these, with what was written up to there kept whole
/// and said.
@Suite struct FullDiskTests {
  /// Issue 21: `plumb run --serial FILE` on a full disk exited 0: 1,786 of 3,012 frames
  /// dropped, a torn last line, and the summary never said why. The run stops when its frames
  /// cannot be written (74), naming the file and the reason, and the file ends with its last
  /// whole frame.
  @Test func framesToAFileThatCannotGrowStopTheRunWithWholeFrames() throws {
    let frames = try temporaryDirectory().appendingPathComponent("frames.txt").path
    let result = try runUnderFileSizeLimit(
      blocks: 100,
      [
        "run", "--board", "Boards/simulated.json", "--fast", "--duration", "30", "--format",
        "text", "--serial", frames,
      ])
    #expect(result.status == 74, "\(result.standardError)")
    let message = result.standardError
    #expect(message.contains(frames) && message.contains("ulimit -f"), "\(message)")
    #expect(message.contains(" samples, "), "the summary: \(message)")
    #expect(!message.contains("plumb: 30.0"), "it went on to the end: \(message)")
    let text = try String(contentsOfFile: frames, encoding: .utf8)
    #expect(text.utf8.count <= 100 * 512 && text.utf8.count > 40 * 512)
    #expect(text.hasSuffix("\r\n"), "a torn last line")
    let lines = text.split(separator: "\r\n")
    #expect(lines.allSatisfy { $0.hasPrefix("$PLMB,") && $0.contains("*") })
    #expect(message.contains("\(text.utf8.count) bytes"), "the bytes kept: \(message)")
  }

  /// `/dev/full` as the frames' output (`plumb run`, and `plumb run --replay`): 74 at once.
  @Test(arguments: ["live", "replay"])
  func framesToDevFullStopTheRun(kind: String) throws {
    var arguments = [
      "run", "--board", "Boards/simulated.json", "--fast", "--duration", "5", "--serial",
      "/dev/full",
    ]
    if kind == "replay" {
      let recording = try simulatedRecording(in: try temporaryDirectory())
      arguments = ["run", "--replay", recording, "--serial", "/dev/full"]
    }
    let result = try runPlumb(arguments)
    #expect(result.status == 74, "\(result.standardError)")
    #expect(
      result.standardError.contains("/dev/full")
        && result.standardError.contains("no space left on the device"),
      "\(result.standardError)")
  }

  /// `plumb record`'s job is the recording: frames that cannot be written do not stop it, but
  /// are said at once and at the end, and the run exits 74.
  @Test func aRecordingGoesOnWhenItsFramesCannotBeWritten() throws {
    let directory = try temporaryDirectory()
    let recording = directory.appendingPathComponent("r.plumbraw").path
    let result = try runPlumb([
      "record", "--board", "Boards/simulated.json", "--fast", "--seconds", "3", "--output",
      recording, "--serial", "/dev/full",
    ])
    #expect(result.status == 74, "\(result.standardError)")
    #expect(result.standardError.contains("/dev/full"), "\(result.standardError)")
    let said = result.standardError.firstMatch(of: /recorded (\d+) samples/).map { Int($0.1)! }
    #expect((said ?? 0) > 250, "the whole 3 s was recorded: \(result.standardError)")
    let export = try runPlumb([
      "export", recording, "--csv", "--output", directory.appendingPathComponent("r.csv").path,
    ])
    #expect(export.status == 0 && export.standardError.contains("\(said ?? -1) samples"))
  }

  /// Issue 21: `plumb replay` and `plumb export` on a full disk exited 73 ("cannot create")
  /// instead of 74. The output was created; writing it failed. Nothing partial is left.
  @Test(arguments: ["export", "replay"], ["/dev/full", "limited"])
  func anOutputThatFillsTheDiskIsAnIOError(command: String, output: String) throws {
    let directory = try temporaryDirectory()
    let recording = try simulatedRecording(in: directory)
    let target =
      output == "/dev/full" ? output : directory.appendingPathComponent("out.csv").path
    let arguments =
      command == "export"
      ? ["export", recording, "--csv", "--output", target]
      : ["replay", "--input", recording, "--output", target]
    let result = try runUnderFileSizeLimit(blocks: output == "/dev/full" ? 100_000 : 10, arguments)
    #expect(result.status == 74, "\(result.standardError)")
    #expect(result.standardError.contains(target), "\(result.standardError)")
    #expect(!result.standardError.contains("renamed over it"), "\(result.standardError)")
    if output != "/dev/full" {
      #expect(!FileManager.default.fileExists(atPath: target))
      #expect(
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == [
          "sim.plumbraw"
        ])
    }
  }

  /// The other outputs on a full disk: a calibration file (plumb-cal save, plumb calibrate),
  /// a plot (plumb-cal allan --plot: a size limit left a cut SVG behind, exit 74), a HIL report
  /// file (plumb-hil --junit: 73). Each is 74 and leaves nothing partial.
  @Test(arguments: ["save", "calibrate", "plot", "junit"], ["/dev/full", "limited"])
  func otherOutputsOnAFullDiskAreIOErrorsAndLeaveNothing(output: String, device: String) throws {
    let directory = try temporaryDirectory()
    let csv = directory.appendingPathComponent("still.csv").path
    let recording = directory.appendingPathComponent("sim.plumbraw").path
    let record = try runPlumb([
      "record", "--board", "Boards/simulated.json", "--fast", "--seconds", "12", "--output",
      recording, "--serial", "/dev/null",
    ])
    #expect(record.status == 0, "\(record.standardError)")
    let export = try runPlumb(["export", recording, "--csv", "--output", csv])
    #expect(export.status == 0, "\(export.standardError)")
    let target =
      device == "/dev/full" ? device : directory.appendingPathComponent("output").path
    let (executable, arguments): (String, [String])
    switch output {
    case "save": (executable, arguments) = ("plumb-cal", ["save", csv, "--output", target])
    case "calibrate":
      (executable, arguments) = (
        "plumb", ["calibrate", "accel", "--board", "Boards/simulated.json", "--output", target]
      )
    case "plot": (executable, arguments) = ("plumb-cal", ["allan", csv, "--plot", target])
    default:
      (executable, arguments) = ("plumb-hil", ["run", "rest", "--seconds", "2", "--junit", target])
    }
    let result = try runUnderFileSizeLimit(
      blocks: device == "/dev/full" ? 100_000 : 0, arguments,
      executable: builtExecutable(executable))
    #expect(result.status == 74, "\(arguments): \(result.standardError)")
    #expect(result.standardError.contains(target), "\(result.standardError)")
    if device != "/dev/full" {
      #expect(!FileManager.default.fileExists(atPath: target), "\(arguments)")
      let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
      #expect(left == ["sim.plumbraw", "still.csv"], "\(arguments)")
    }
  }
}
