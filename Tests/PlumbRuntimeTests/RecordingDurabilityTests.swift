import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `plumb record` and `plumb run --record` when the recording cannot go on: a full disk (here a
/// file-size limit, which fails the same `write(2)` without mounting anything), the file deleted
/// under the run, an output that is not a file. Each must say what happened to which file,
/// keep what was recorded readable, and exit with its sysexits status.
@Suite struct RecordingDurabilityTests {
  /// The sample count `plumb export` reads from `recording`.
  func exportedSamples(_ recording: String, in directory: URL) throws -> Int? {
    let csv = directory.appendingPathComponent("export.csv").path
    let export = try runPlumb(["export", recording, "--csv", "--output", csv])
    #expect(export.status == 0, "\(export.standardError)")
    #expect(!export.standardError.contains("warning"), "\(export.standardError)")
    let rows = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n").count
    return rows - 1
  }

  /// A bench recording that filled the disk went on for the whole time asked (hours), said
  /// nothing until the end, and blamed the disk for any short write. `plumb record` now stops at
  /// once; `plumb run --record` keeps streaming frames (the frames are its job) and says it at
  /// the end with the same status. Either way the count said is the count the file gives back.
  @Test(arguments: [
    (["record", "--seconds", "3600", "--output"], "of the 3600 s asked"),
    (["run", "--duration", "30", "--record"], "plumb: 30.0"),
  ])
  func aRecordingThatCannotGrowKeepsWhatItTookAndSaysSo(command: [String], says: String) throws {
    let directory = try temporaryDirectory()
    let output = directory.appendingPathComponent("full.plumbraw").path
    let result = try runUnderFileSizeLimit(
      blocks: 200,
      [command[0], "--board", "Boards/simulated.json", "--fast"] + command[1...]
        + [output, "--serial", "/dev/null"])
    #expect(result.status == 74, "\(result.standardError)")
    let message = result.standardError
    #expect(message.contains(output) && message.contains("ulimit -f"), "\(message)")
    #expect(message.contains(says) && !message.contains("3600.0"), "\(message)")
    let said = message.firstMatch(of: /keeps the (\d+) samples/).map { Int($0.1)! }
    #expect(said != nil && said! > 1000, "\(message)")
    #expect(try exportedSamples(output, in: directory) == said)
  }

  /// Room for the header but not for the start-up's bus transcript left a file of 1001 bytes
  /// with no sample in it, which replayed as nothing (48 divergences) and had to be removed by
  /// hand before recording again: like a header that cannot be written, it is not left. (A
  /// full disk, or a size limit, is 74 from the first byte on, as for every output: issue 21.)
  @Test func aRecordingThatCannotHoldItsStartUpIsNotLeft() throws {
    let directory = try temporaryDirectory()
    let output = directory.appendingPathComponent("tiny.plumbraw").path
    let result = try runUnderFileSizeLimit(
      blocks: 2,
      [
        "record", "--board", "Boards/simulated.json", "--fast", "--seconds", "5", "--output",
        output, "--serial", "/dev/null",
      ])
    #expect(result.status == 74, "\(result.standardError)")
    #expect(
      result.standardError.contains(output) && result.standardError.contains("ulimit -f"),
      "\(result.standardError)")
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  /// A recording that could not be started was removed by name: given `--overwrite` through a
  /// symbolic link (`current.plumbraw` → a dated file), that removed the link, not the file.
  @Test func aFailedOverwriteThroughALinkKeepsTheLink() throws {
    let directory = try temporaryDirectory()
    let target = try simulatedRecording(in: directory, name: "2026-12-04.plumbraw")
    let link = directory.appendingPathComponent("current.plumbraw").path
    #expect(symlink("2026-12-04.plumbraw", link) == 0)
    for blocks in [1, 2] {  // the header does not fit; the start-up does not
      let result = try runUnderFileSizeLimit(
        blocks: blocks,
        [
          "record", "--board", "Boards/simulated.json", "--fast", "--seconds", "5", "--output",
          link, "--serial", "/dev/null", "--overwrite",
        ])
      #expect(result.status == 74, "\(result.standardError)")
      var status = stat()
      #expect(lstat(link, &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK, "\(blocks)")
      #expect(FileManager.default.fileExists(atPath: target))
    }
  }

  /// `plumb run --record` finished its recording (at the end, or on SIGINT/SIGTERM) without a
  /// word about it: the summary named neither the file nor the samples in it.
  @Test func aRunSaysWhatItRecorded() throws {
    let directory = try temporaryDirectory()
    let output = directory.appendingPathComponent("run.plumbraw").path
    let result = try runPlumb([
      "run", "--board", "Boards/simulated.json", "--fast", "--duration", "5", "--record", output,
      "--serial", "/dev/null",
    ])
    #expect(result.status == 0, "\(result.standardError)")
    let said = result.standardError.firstMatch(of: /recorded (\d+) samples to (.+) \(/)
    #expect(said?.2 == Substring(output), "\(result.standardError)")
    #expect(try exportedSamples(output, in: directory) == said.map { Int($0.1)! })
  }

  /// Linux writes on into a deleted file and frees it at the end: the run reported "recorded
  /// N samples to REC" and exited 0 with no file left.
  @Test func aRecordingDeletedWhileRecordingIsSaidLost() throws {
    let directory = try temporaryDirectory()
    let output = directory.appendingPathComponent("deleted.plumbraw").path
    let result = try recordUntilInterrupted(to: output) { #expect(unlink(output) == 0) }
    #expect(result.status == 74, "\(result.standardError)")
    #expect(
      result.standardError.contains(output)
        && result.standardError.contains("deleted while recording"), "\(result.standardError)")
    #expect(!result.standardError.contains("recorded "), "\(result.standardError)")
  }

  /// A second run given a recording in progress with --overwrite truncated the first run's
  /// file and interleaved their records: both said they had recorded their samples, and the
  /// file held a mix that exported 220 samples, 201 of them out of order.
  @Test func aRecordingInProgressIsNotReplacedByAnotherRun() throws {
    let directory = try temporaryDirectory()
    let output = directory.appendingPathComponent("busy.plumbraw").path
    var second: ProcessResult?
    let first = try recordUntilInterrupted(to: output) {
      second = try? runPlumb([
        "record", "--board", "Boards/simulated.json", "--fast", "--seconds", "1", "--output",
        output, "--serial", "/dev/null", "--overwrite",
      ])
    }
    #expect(first.status == 0, "\(first.standardError)")
    guard let second else {
      Issue.record("the second run did not start")
      return
    }
    expectRefusedBeforeTheBoardStarts(second, naming: output, says: ["being recorded by another"])
    let said = first.standardError.firstMatch(of: /recorded (\d+) samples/).map { Int($0.1)! }
    #expect(said != nil, "\(first.standardError)")
    #expect(try exportedSamples(output, in: directory) == said)
  }

  /// `--overwrite` is there to record again over a recording; it replaced any file at all (an
  /// exported CSV, a calibration file a typo named) without a word.
  @Test func overwriteReplacesOnlyARecording() throws {
    let directory = try temporaryDirectory()
    let csv = directory.appendingPathComponent("still.csv").path
    let text = "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z,temp_c\n0.000000000,0,0,0,0,0,9.8,30\n"
    try text.write(toFile: csv, atomically: true, encoding: .utf8)
    let refused = try runPlumb([
      "record", "--board", "Boards/simulated.json", "--fast", "--seconds", "1", "--output", csv,
      "--serial", "/dev/null", "--overwrite",
    ])
    expectRefusedBeforeTheBoardStarts(refused, naming: csv, says: ["not a .plumbraw recording"])
    #expect(try String(contentsOfFile: csv, encoding: .utf8) == text)
    // An empty file (a run killed as it created its recording) is replaced.
    let empty = directory.appendingPathComponent("empty.plumbraw").path
    #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
    let replaced = try runPlumb([
      "record", "--board", "Boards/simulated.json", "--fast", "--seconds", "1", "--output", empty,
      "--serial", "/dev/null", "--overwrite",
    ])
    #expect(replaced.status == 0, "\(replaced.standardError)")
  }

  /// A device or a named pipe as the recording was found only after the board's start-up
  /// (`/dev/full` was first said to exist, "give --overwrite"; with it, refused after the
  /// self-test); a named pipe with no reader hung the run, deaf to SIGTERM.
  @Test func anOutputThatIsNotAFileIsRefusedBeforeTheBoardStarts() throws {
    let directory = try temporaryDirectory()
    let fifo = directory.appendingPathComponent("pipe.plumbraw").path
    #expect(mkfifo(fifo, 0o644) == 0)
    // A reader, so that opening the pipe to write cannot hang this test before the fix.
    let reader = open(fifo, O_RDONLY | O_NONBLOCK)
    defer { close(reader) }
    for (path, overwrite) in [("/dev/full", false), ("/dev/full", true), (fifo, true)] {
      for command in [
        ["record", "--seconds", "1", "--output"], ["run", "--duration", "1", "--record"],
      ] {
        let arguments =
          [command[0], "--board", "Boards/simulated.json", "--fast"] + command[1...] + [
            path, "--serial", "/dev/null",
          ] + (overwrite ? ["--overwrite"] : [])
        let result = try runPlumb(arguments)
        expectRefusedBeforeTheBoardStarts(result, naming: path, says: ["not a file"])
        #expect(!result.standardError.contains("--overwrite"), "\(result.standardError)")
      }
    }
    var status = stat()
    #expect(lstat(fifo, &status) == 0 && (status.st_mode & S_IFMT) == S_IFIFO)
  }
}
