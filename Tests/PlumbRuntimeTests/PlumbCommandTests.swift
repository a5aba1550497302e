import Calibration
import Foundation
import HardwareAbstraction
import LinuxHardware
import PlumbRuntime
import SimulatedHardware
import Telemetry
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct PlumbSetupTests {
  @Test(arguments: [
    "raspberry-pi-4", "raspberry-pi-5", "raspberry-pi-zero-2-w", "beaglebone-black", "simulated",
  ])
  func everyShippedBoardMakesValidSettings(name: String) throws {
    let setup = try PlumbSetup.load(boardPath: "\(repositoryRoot)/Boards/\(name).json")
    #expect(setup.settings.problem == nil)
    #expect(setup.settings.outputRateHz == 100)
  }

  func board(_ replacing: String, with replacement: String) throws -> String {
    let directory = try temporaryDirectory()
    var text = try String(
      contentsOfFile: "\(repositoryRoot)/Boards/raspberry-pi-4.json", encoding: .utf8)
    #expect(text.contains(replacing))
    text = text.replacingOccurrences(of: replacing, with: replacement)
    let path = directory.appendingPathComponent("board.json").path
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  @Test func aDLPFAboveNyquistIsRefusedWithTheFoldedFrequency() throws {
    let path = try board(#""dlpfHz": 44"#, with: #""dlpfHz": 94"#)
    #expect {
      _ = try PlumbSetup.load(boardPath: path)
    } throws: { error in
      let text = "\(error)"
      return text.contains("key \"sensor.dlpfHz\"") && text.contains("|98 − 1 × 100| = 2 Hz")
    }
  }

  /// A combination of keys that cannot work (a rate the chip cannot make, aliasing, a link too
  /// slow) names the board file and the board's own key, as a single bad key does.
  @Test(arguments: [
    (
      #""sampleRateHz": 100"#, #""sampleRateHz": 300"#,
      "key \"sensor.sampleRateHz\": 300 Hz is not 1000 Hz"
    ),
    (#""dlpfHz": 44"#, #""dlpfHz": 260"#, "key \"sensor.dlpfHz\": "),
  ])
  func aCombinationThatCannotWorkNamesTheFileAndTheKey(
    original: String, replacement: String, says: String
  ) throws {
    let path = try board(original, with: replacement)
    let check = try runPlumb(["check-board", path])
    #expect(check.status == 78)
    #expect(check.standardError.contains("board file \(path): \(says)"), "\(check.standardError)")
  }

  /// Found by the board bring-up audit: the advice named rates Plumb cannot run (333.333 Hz,
  /// 533.333 Hz: every rate it runs is a whole number of hertz, for a whole number of frames per
  /// second), and no narrower filter for 100 Hz with the 260 Hz one (100 Hz is made from 1 kHz).
  @Test(arguments: [
    (
      #""sampleRateHz": 100"#, #""sampleRateHz": 300"#,
      "rates near it that the chip can produce: 200 Hz (SMPLRT_DIV 4), 250 Hz (SMPLRT_DIV 3), 500 Hz (SMPLRT_DIV 1)"
    ),
    // (533.333 Hz before; and no narrower filter, as 100 Hz is made from 1 kHz, not 8.)
    (
      #""dlpfHz": 44"#, #""dlpfHz": 260"#,
      "Fix: choose a filter below 50 Hz (DLPF_CFG 3 (44 Hz accel / 42 Hz gyro), "
    ),
    (
      #""dlpfHz": 44"#, #""dlpfHz": 260"#,
      "DLPF_CFG 6 (5 Hz accel / 5 Hz gyro)), or raise the sample rate to 800 Hz (SMPLRT_DIV 9) or more"
    ),
  ])
  func theAdviceNamesOnlyRatesPlumbRuns(original: String, replacement: String, says: String)
    throws
  {
    let path = try board(original, with: replacement)
    let check = try runPlumb(["check-board", path])
    #expect(check.status == 78)
    #expect(check.standardError.contains(says), "\(check.standardError)")
    #expect(!check.standardError.contains(".333 Hz"), "\(check.standardError)")
  }

  /// Found by the board bring-up audit: with frames to `stdout`, check-board checked the link
  /// at 921600 baud and said OK, and every run then refused the board at its own 115200 baud.
  @Test func checkBoardRefusesWhatTheRunWouldRefuse() throws {
    let directory = try temporaryDirectory()
    var text = try String(
      contentsOfFile: "\(repositoryRoot)/Boards/simulated.json", encoding: .utf8)
    text = text.replacingOccurrences(of: #""sampleRateHz": 100"#, with: #""sampleRateHz": 200"#)
    text = text.replacingOccurrences(of: #""rateHz": 100"#, with: #""rateHz": 200"#)
    let path = directory.appendingPathComponent("board.json").path
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    let check = try runPlumb(["check-board", path])
    let run = try runPlumb(["run", "--board", path, "--fast", "--duration", "1"])
    #expect(run.status == 78, "\(run.standardError)")
    #expect(check.status == run.status, "\(check.standardError)")
    #expect(check.standardError.contains("key \"output\": text lines"), "\(check.standardError)")
  }

  @Test func aFormatTheLinkCannotCarryIsRefusedWithTheNumbers() throws {
    let path = try board(#""baud": 115200"#, with: #""baud": 9600"#)
    #expect {
      _ = try PlumbSetup.load(boardPath: path)
    } throws: { error in
      let text = "\(error)"
      return text.contains("key \"output\"") && text.contains("9600 baud")
    }
  }
}

@Suite(.serialized) struct PlumbCommandTests {
  @Test func fastSimulatedRunWritesEveryFrameToAFile() throws {
    let directory = try temporaryDirectory()
    let output = directory.appendingPathComponent("frames.bin").path
    let result = try runPlumb([
      "run", "--board", "Boards/simulated.json", "--fast", "--duration", "5", "--format",
      "binary", "--serial", output,
    ])
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardError.contains("plumb: 5.0"))
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
    var decoder = StreamDecoder(format: .binary)
    var sequences: [UInt32] = []
    decoder.decode(bytes) { message in
      if let sequence = message.attitudeSample?.sequence { sequences.append(sequence) }
    }
    #expect(decoder.statistics.crcErrors == 0)
    #expect(sequences.count > 480)
    #expect(sequences == Array(1...UInt32(sequences.count)))
  }

  @Test func sameBoardSameSeedSameBytes() throws {
    let directory = try temporaryDirectory()
    var outputs: [Data] = []
    for run in 0..<2 {
      let output = directory.appendingPathComponent("run\(run).bin").path
      let result = try runPlumb([
        "run", "--board", "Boards/simulated.json", "--fast", "--duration", "3", "--format",
        "mavlink", "--serial", output,
      ])
      #expect(result.status == 0)
      outputs.append(try Data(contentsOf: URL(fileURLWithPath: output)))
    }
    #expect(outputs[0].count > 10_000)
    #expect(outputs[0] == outputs[1])
  }

  @Test func aRealTimeRunOverAPseudoTerminalDeliversEveryFrameAt100Hz() throws {
    let host = try PseudoTerminalSerialPort()
    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    let result = try runPlumb([
      "run", "--board", "Boards/simulated.json", "--duration", "10", "--format", "binary",
      "--serial", host.terminalPath,
    ]) { process in
      while process.isRunning {
        let count = try buffer.withUnsafeMutableBytes { try host.read(into: $0) }
        received += buffer[0..<count]
        usleep(2_000)
      }
    }
    while true {
      let count = (try? buffer.withUnsafeMutableBytes { try host.read(into: $0) }) ?? 0
      if count == 0 { break }
      received += buffer[0..<count]
    }
    #expect(result.status == 0, "\(result.standardError)")
    var decoder = StreamDecoder(format: .binary)
    var times: [Int64] = []
    var sequences: [UInt32] = []
    decoder.decode(received) { message in
      if let sample = message.attitudeSample {
        times.append(sample.sampleTimeNanoseconds)
        sequences.append(sample.sequence!)
      }
    }
    #expect(decoder.statistics.crcErrors == 0 && decoder.statistics.framesLost == 0)
    #expect(sequences == Array(1...UInt32(max(1, sequences.count))))
    // Ten seconds at the chip's rate (within its oscillator's error), none missing.
    #expect(sequences.count > 960 && sequences.count < 1020)
    let span = Double(times.last! - times.first!) * 1e-9
    #expect(abs(Double(times.count - 1) / span - 100) < 2)
  }

  /// A recording stopped by Ctrl-C keeps what it took, and says it is shorter than asked: a
  /// bench user who interrupts a two-hour capture must not take it for a whole one.
  @Test func anInterruptedRecordingSaysItIsShorterThanAsked() throws {
    let directory = try temporaryDirectory()
    let output = directory.appendingPathComponent("short.plumbraw").path
    let result = try recordUntilInterrupted(to: output)
    #expect(result.status == 0, "\(result.standardError)")
    #expect(
      result.standardError.contains("stopped by SIGINT")
        && result.standardError.contains("of the 600 s asked"),
      "\(result.standardError)")
    #expect(fileExists(output))
  }

  /// A bench recording can take hours: running the same command again (shell history) used to
  /// replace it silently. An existing recording is refused, before the board starts, naming
  /// `--overwrite`; a folder that does not exist is named before the board starts too.
  @Test func anExistingRecordingIsNotReplacedByAccident() throws {
    let directory = try temporaryDirectory()
    let recording = try simulatedRecording(in: directory)
    for arguments in [
      [
        "record", "--board", "Boards/simulated.json", "--fast", "--seconds", "1", "--output",
        recording, "--serial", "/dev/null",
      ],
      [
        "run", "--board", "Boards/simulated.json", "--fast", "--duration", "3", "--record",
        recording, "--serial", "/dev/null",
      ],
    ] {
      let original = try Data(contentsOf: URL(fileURLWithPath: recording))
      let refused = try runPlumb(arguments)
      expectRefusedBeforeTheBoardStarts(refused, naming: recording, says: ["--overwrite"])
      #expect(try Data(contentsOf: URL(fileURLWithPath: recording)) == original)
      let replaced = try runPlumb(arguments + ["--overwrite"])
      #expect(replaced.status == 0, "\(arguments): \(replaced.standardError)")
      #expect(try Data(contentsOf: URL(fileURLWithPath: recording)) != original)
    }
    let missing = directory.appendingPathComponent("no-such-folder/r.plumbraw").path
    let noFolder = try runPlumb([
      "record", "--board", "Boards/simulated.json", "--fast", "--seconds", "1", "--output",
      missing, "--serial", "/dev/null",
    ])
    expectRefusedBeforeTheBoardStarts(noFolder, naming: missing, says: ["does not exist"])
  }

  @Test func sigtermFinishesTheFrameFlushesAndExitsZero() throws {
    let directory = try temporaryDirectory()
    let output = directory.appendingPathComponent("frames.txt").path
    let result = try runPlumb([
      "run", "--board", "Boards/simulated.json", "--format", "text", "--serial", output,
    ]) { process in
      usleep(1_500_000)
      kill(process.processIdentifier, SIGTERM)
    }
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardError.contains("samples"))
    let text = try String(contentsOfFile: output, encoding: .utf8)
    // Every line is whole: the last frame was finished and flushed, not cut.
    #expect(text.hasSuffix("\r\n"))
    let lines = text.split(separator: "\r\n")
    #expect(lines.count > 20)
    #expect(lines.allSatisfy { $0.hasPrefix("$PLMB,") && $0.contains("*") })
  }

  /// Found by the live-run audit: SIGHUP (the terminal or the SSH session that ran
  /// `plumb run` closed) killed the process at once with status 129, without the summary and
  /// without writing the learnt bias back. A hang-up is a stop like SIGTERM.
  @Test func sighupStopsCleanlyWithTheSummaryAndExitsZero() throws {
    let (result, output) = try runSimulatedBoard(
      format: "text", seconds: 20, signals: [(1_500_000, SIGHUP)])
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardError.contains(" samples, "), "\(result.standardError)")
    // Stopped by the signal, not by the duration that bounds the test (a launcher that starts
    // children with SIGHUP blocked or ignored would otherwise leave it running).
    #expect(!result.standardError.contains("plumb: 20.0"), "\(result.standardError)")
    #expect(try String(contentsOfFile: output, encoding: .utf8).hasSuffix("\r\n"))
  }

  /// Found by the live-run audit: with the frames on standard output piped into `head -c 100`,
  /// the loop went on for ever after `head` left, counting every frame as dropped (standard
  /// output cannot be reopened). Its reader gone for good, the run stops as at SIGTERM: the
  /// summary, the bias write-back, exit 0. (Bounded: `timeout` stops the old behaviour after 60 s,
  /// exit 124.)
  @Test func aRunWhoseStandardOutputReaderLeftStopsCleanly() throws {
    let result = try runPlumb(
      [
        "-c",
        #"set -o pipefail; timeout 60 "$0" run --board Boards/simulated.json --fast | head -c 100 >/dev/null"#,
        plumbExecutable,
      ],
      executable: "/bin/bash")
    #expect(result.status == 0, "\(result.standardError)")
    #expect(
      result.standardError.contains("standard output was closed"), "\(result.standardError)")
    #expect(result.standardError.contains(" samples, "), "\(result.standardError)")
  }

  /// Found by the live-run audit: a real-time run on the simulated board that was suspended
  /// (Ctrl-Z, SIGSTOP) and resumed caught up with the wall clock in one burst, as if the host
  /// had read every sample meanwhile: no gap, nothing missed, unlike a board, whose chip goes on
  /// sampling while the host is stopped. The time the process did not run is now a host stall:
  /// the samples of those seconds are missed, counted, and the frames show the gap.
  @Test func aSuspendedRealTimeRunShowsTheGapItWasSuspendedFor() throws {
    let (result, output) = try runSimulatedBoard(
      format: "binary", seconds: 30,
      signals: [(1_500_000, SIGSTOP), (3_000_000, SIGCONT), (1_000_000, SIGTERM)])
    #expect(result.status == 0, "\(result.standardError)")
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
    var decoder = StreamDecoder(format: .binary)
    var times: [Int64] = []
    decoder.decode(bytes) { message in
      if let sample = message.attitudeSample { times.append(sample.sampleTimeNanoseconds) }
    }
    let gaps = zip(times.dropFirst(), times).map { Double($0 - $1) * 1e-9 }
    // Stopped for 3 s: a gap of at least 2 s between two frames, and its samples missed.
    #expect((gaps.max() ?? 0) > 2, "largest gap \(gaps.max() ?? 0) s")
    #expect(!result.standardError.contains(" 0 missed"), "\(result.standardError)")
  }

  /// Found by the live-run audit: with a reader that stopped reading (a full pipe), the
  /// frames still queued when the run ended were lost without a word: the summary counted them
  /// among the frames, and a monitor found fewer. They are now counted as never sent (in bytes:
  /// the queue holds bytes), and the summary's time is the samples' (it had the 0.2 s spent
  /// trying to flush them added).
  @Test func framesQueuedButNeverSentAreCountedInTheSummary() throws {
    let directory = try temporaryDirectory()
    let fifo = directory.appendingPathComponent("frames.fifo").path
    #expect(mkfifo(fifo, 0o600) == 0)
    // Held open for reading, and not read until the run is over: the pipe fills.
    let reader = open(fifo, O_RDWR | O_NONBLOCK)
    #expect(reader >= 0)
    defer { close(reader) }
    let (run, bytes) = try runSimulatedBoardIntoHeldPipe(fifo, reader: reader, seconds: 20)
    #expect(run.status == 0, "\(run.standardError)")
    var decoder = StreamDecoder(format: .binary)
    var received = 0
    decoder.decode(bytes) { message in
      if message.attitudeSample != nil { received += 1 }
    }
    #expect(run.standardError.contains("plumb: 20.0"), "\(run.standardError)")
    func number(before text: String) -> Int? {
      guard let range = run.standardError.range(of: text) else { return nil }
      let digits = run.standardError[..<range.lowerBound].reversed().prefix { $0.isNumber }
      return Int(String(digits.reversed()))
    }
    let queued = try #require(number(before: " frames, "), "\(run.standardError)")
    let unsent = try #require(
      number(before: " bytes of queued frames never sent"), "\(run.standardError)")
    // Binary frames have one length: what was queued is what arrived and what never left.
    let frameBytes = bytes.count / max(1, received)
    #expect(received > 0 && received < queued)
    #expect(queued * frameBytes == bytes.count + unsent, "\(run.standardError)")
  }

  @Test func usageAndConfigurationErrorsHaveTheirExitCodes() throws {
    let usage = try runPlumb(["run", "--bord", "x"])
    #expect(usage.status == 64)
    #expect(usage.standardError.contains("did you mean '--board'?"))
    let missing = try runPlumb(["run", "--board", "/nonexistent.json"])
    #expect(missing.status == 78)
    #expect(missing.standardError.contains("no such file"))
    let check = try runPlumb(["check-board", "Boards/raspberry-pi-5.json"])
    #expect(check.status == 0)
    #expect(String(decoding: check.standardOutput, as: UTF8.self).contains("pinctrl-rp1"))
    // A real board's devices do not exist here: a clear message naming the bus.
    let noBus = try runPlumb(["run", "--board", "Boards/raspberry-pi-4.json", "--duration", "1"])
    #expect(noBus.status == 69)
    #expect(noBus.standardError.contains("/dev/i2c-1"))
    #expect(noBus.standardError.contains("raspi-config"))
  }

  /// Found by the board bring-up audit: a board file that never ends (`/dev/zero`) was read
  /// until memory ran out and `plumb` crashed; a named pipe that nothing writes to hung it for
  /// ever. Both are refused at once, naming the file. (The run is bounded in memory and time,
  /// so that the old behaviour fails here rather than taking the machine or the suite down.)
  @Test func aBoardFileThatNeverEndsOrNeverComesIsRefusedNamingIt() throws {
    let directory = try temporaryDirectory()
    let fifo = directory.appendingPathComponent("board.json").path
    #expect(mkfifo(fifo, 0o600) == 0)
    #if PLUMB_SANITIZED
      // A sanitizer reserves terabytes of address space for its shadow memory, so under
      // `ulimit -v` it cannot start: its own resident-memory limit bounds the run instead.
      let bounded = #"""
        export ASAN_OPTIONS="$ASAN_OPTIONS:hard_rss_limit_mb=1000" \
          TSAN_OPTIONS="$TSAN_OPTIONS:hard_rss_limit_mb=1000"
        """#
    #else
      let bounded = "ulimit -v 1000000"
    #endif
    for (path, says) in [("/dev/zero", "larger than 1 MiB"), (fifo, "the file is empty")] {
      let result = try runPlumb(
        ["-c", bounded + #"; exec "$0" check-board "$1""#, plumbExecutable, path],
        executable: "/bin/sh"
      ) { process in
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        // SIGKILL: `plumb` unblocks SIGTERM only once it runs.
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
      }
      #expect(result.status == 78, "\(path): \(result.standardError)")
      #expect(
        result.standardError.contains("plumb check-board: board file \(path): "),
        "\(result.standardError)")
      #expect(result.standardError.contains(says), "\(result.standardError)")
    }
  }

  /// A recording that cannot be read is EX_NOINPUT (66), named, wherever a recording is taken.
  @Test func anUnreadableRecordingExits66NamingTheFile() throws {
    let directory = try temporaryDirectory()
    let missing = directory.appendingPathComponent("missing.plumbraw").path
    let folder = directory.appendingPathComponent("folder.plumbraw").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    let output = directory.appendingPathComponent("out.csv").path
    for path in [missing, folder] {
      for arguments in [
        ["export", path, "--csv", "--output", output],
        ["run", "--replay", path, "--serial", output],
        ["replay", "--input", path, "--output", output],
      ] {
        let result = try runPlumb(arguments)
        #expect(result.status == 66, "\(arguments): \(result.standardError)")
        #expect(result.standardError.contains(path), "\(arguments): \(result.standardError)")
      }
    }
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  /// Frames written to a file that cannot be created: EX_CANTCREAT (73), naming the file.
  @Test func aFramesFileThatCannotBeCreatedExits73NamingIt() throws {
    let directory = try temporaryDirectory()
    let recording = try simulatedRecording(in: directory)
    let frames = directory.appendingPathComponent("no-such-folder/frames.bin").path
    for arguments in [
      ["run", "--board", "Boards/simulated.json", "--fast", "--duration", "1", "--serial", frames],
      [
        "record", "--board", "Boards/simulated.json", "--fast", "--seconds", "1", "--output",
        directory.appendingPathComponent("r.plumbraw").path, "--serial", frames,
      ],
      ["run", "--replay", recording, "--serial", frames],
    ] {
      let result = try runPlumb(arguments)
      #expect(result.status == 73, "\(arguments): \(result.standardError)")
      #expect(result.standardError.contains(frames), "\(arguments): \(result.standardError)")
    }
  }

  /// An output naming an input would destroy the input: refused (64) before anything is
  /// written, the input untouched and named.
  @Test func anOutputNamingTheInputIsRefusedAndTheInputKept() throws {
    let directory = try temporaryDirectory()
    let recording = try simulatedRecording(in: directory)
    let board = directory.appendingPathComponent("board.json").path
    try FileManager.default.copyItem(
      atPath: "\(repositoryRoot)/Boards/simulated.json", toPath: board)
    let link = directory.appendingPathComponent("link.plumbraw").path
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: recording)
    let originalRecording = try Data(contentsOf: URL(fileURLWithPath: recording))
    let originalBoard = try Data(contentsOf: URL(fileURLWithPath: board))
    let other = directory.appendingPathComponent("other.plumbraw").path
    for (arguments, named) in [
      (["export", recording, "--csv", "--output", recording], recording),
      (["export", recording, "--csv", "--output", link], link),
      (["run", "--replay", recording, "--serial", recording], recording),
      (["run", "--board", board, "--fast", "--duration", "1", "--record", board], board),
      (["run", "--board", board, "--fast", "--duration", "1", "--serial", board], board),
      (["record", "--board", board, "--fast", "--seconds", "1", "--output", board], board),
      (
        [
          "record", "--board", board, "--fast", "--seconds", "1", "--output", other, "--serial",
          board,
        ],
        board
      ),
    ] {
      let result = try runPlumb(arguments)
      #expect(result.status == 64, "\(arguments): \(result.standardError)")
      #expect(
        result.standardError.contains("\(named) is "), "\(arguments): \(result.standardError)")
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: recording)) == originalRecording)
    #expect(try Data(contentsOf: URL(fileURLWithPath: board)) == originalBoard)
    #expect(!FileManager.default.fileExists(atPath: other))
  }

  /// A calibration file given where a board file goes (and a board file named by a board's
  /// "calibration" key) is recognised and named, with where it belongs.
  @Test func calibrationAndBoardFilesAreNotTakenForEachOther() throws {
    let directory = try temporaryDirectory()
    let calibration = directory.appendingPathComponent("unit.json").path
    try CalibrationFile(
      sensor: SensorIdentity(whoAmI: 0x68, name: "MPU-6050", label: "unit"),
      created: "2026-12-01T12:00:00Z"
    ).write(toPath: calibration)
    for arguments in [
      ["run", "--board", calibration, "--fast", "--duration", "1"], ["check-board", calibration],
      ["record", "--board", calibration, "--seconds", "1", "--output", "x.plumbraw"],
    ] {
      let result = try runPlumb(arguments)
      #expect(result.status == 78, "\(arguments): \(result.standardError)")
      #expect(
        result.standardError.contains(
          "\(calibration) is a calibration file, not a board file: name it in the board file's "
            + "\"calibration\" key"), "\(arguments): \(result.standardError)")
    }
    var board = try String(
      contentsOfFile: "\(repositoryRoot)/Boards/simulated.json", encoding: .utf8)
    board = board.replacingOccurrences(
      of: #""simulation":"#, with: #""calibration": "other-board.json", "simulation":"#)
    let boardPath = directory.appendingPathComponent("board.json").path
    try board.write(toFile: boardPath, atomically: true, encoding: .utf8)
    let other = directory.appendingPathComponent("other-board.json").path
    try FileManager.default.copyItem(
      atPath: "\(repositoryRoot)/Boards/simulated.json", toPath: other)
    let check = try runPlumb(["check-board", boardPath])
    #expect(check.status == 78, "\(check.standardError)")
    #expect(
      check.standardError.contains(
        "\(other) is a board file, not a calibration file: give it with --board"),
      "\(check.standardError)")
  }

  /// Outputs written whole or not at all (a temporary file renamed into place) must not rename
  /// over a symbolic link, a named pipe or a device: they write through it, and it stays what
  /// it was. (A link in a temporary folder stands for /dev/stdout, which is one, so that a
  /// regression cannot replace the real /dev/stdout.)
  @Test func atomicOutputsWriteThroughLinksPipesAndDevices() throws {
    let directory = try temporaryDirectory()
    let recording = try simulatedRecording(in: directory)
    let real = directory.appendingPathComponent("real.csv").path
    try Data("old\n".utf8).write(to: URL(fileURLWithPath: real))
    let link = directory.appendingPathComponent("link.csv").path
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
    let stdout = directory.appendingPathComponent("stdout").path
    try FileManager.default.createSymbolicLink(
      atPath: stdout, withDestinationPath: "/proc/self/fd/1")
    func isLink(_ path: String) -> Bool {
      var status = stat()
      return lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK
    }

    // Through a link to a file: the file is replaced, the link kept.
    let export = try runPlumb(["export", recording, "--csv", "--output", link])
    #expect(export.status == 0, "\(export.standardError)")
    #expect(isLink(link))
    #expect(try String(contentsOfFile: real, encoding: .utf8).hasPrefix("t_s,gyr_x"))

    // Through a link to standard output (a pipe here): the bytes arrive, the link stays.
    for arguments in [
      ["export", recording, "--csv", "--output", stdout],
      ["replay", "--input", recording, "--output", stdout],
    ] {
      let result = try runPlumb(arguments)
      #expect(result.status == 0, "\(arguments): \(result.standardError)")
      #expect(
        String(decoding: result.standardOutput, as: UTF8.self).hasPrefix("t_s,"), "\(arguments)")
      #expect(isLink(stdout), "\(arguments)")
    }

    // Into a named pipe: held open for reading and writing here, so nothing blocks whatever
    // the command does; the bytes arrive and the pipe is still a pipe.
    let fifo = directory.appendingPathComponent("fifo").path
    #expect(mkfifo(fifo, 0o600) == 0)
    let descriptor = open(fifo, O_RDWR | O_NONBLOCK)
    #expect(descriptor >= 0)
    defer { close(descriptor) }
    let piped = try runPlumb(["export", recording, "--csv", "--output", fifo])
    #expect(piped.status == 0, "\(piped.standardError)")
    let received = readAvailable(descriptor)
    #expect(String(decoding: received, as: UTF8.self).hasPrefix("t_s,gyr_x"))
    var status = stat()
    #expect(lstat(fifo, &status) == 0 && (status.st_mode & S_IFMT) == S_IFIFO)
  }

  @Test func recordFastOnARealBoardIsRefusedBeforeTouchingIt() throws {
    let directory = try temporaryDirectory()
    let output = directory.appendingPathComponent("real.plumbraw").path
    let result = try runPlumb([
      "record", "--board", "Boards/raspberry-pi-4.json", "--fast", "--seconds", "1", "--output",
      output,
    ])
    #expect(result.status == 64, "\(result.standardError)")
    #expect(result.standardError.contains("--fast"))
    #expect(result.standardError.contains("is a real board"))
    // Refused as a usage error, not tried: the missing bus is not what it reports.
    #expect(!result.standardError.contains("/dev/i2c-1"))
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  /// A named pipe is a stream like standard output: `plumb run --serial FIFO` writes frames to
  /// its reader (never blocking the loop on it), and says so clearly when nothing reads it.
  @Test func framesGoToANamedPipesReader() throws {
    let directory = try temporaryDirectory()
    let fifo = directory.appendingPathComponent("frames.fifo").path
    #expect(mkfifo(fifo, 0o600) == 0)
    let alone = try runPlumb([
      "run", "--board", "Boards/simulated.json", "--fast", "--duration", "1", "--serial", fifo,
    ])
    #expect(alone.status == 69, "\(alone.standardError)")
    #expect(alone.standardError.contains("nothing is reading"), "\(alone.standardError)")
    // The reader: read and write ends held here, so the pipe lives while plumb comes and goes
    // (a 2 s binary stream is well under the pipe's 64 KiB).
    let reader = open(fifo, O_RDWR | O_NONBLOCK)
    #expect(reader >= 0)
    defer { close(reader) }
    let (run, bytes) = try runSimulatedBoardIntoHeldPipe(fifo, reader: reader, seconds: 2)
    #expect(run.status == 0, "\(run.standardError)")
    // About 190 frames of some 40 bytes, and the FIFO is still a FIFO.
    #expect(bytes.count > 4_000, "\(bytes.count) bytes")
    var status = stat()
    #expect(stat(fifo, &status) == 0 && (status.st_mode & S_IFMT) == S_IFIFO)
  }
}
