import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The repository's root, from this file's path.
let repositoryRoot: String = {
  var url = URL(fileURLWithPath: #filePath)
  for _ in 0..<3 { url.deleteLastPathComponent() }
  return url.path
}()

/// An executable built beside the test bundle.
func builtExecutable(_ name: String) -> String {
  let testBundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
  var directory = testBundle.deletingLastPathComponent()
  if directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
  return directory.appendingPathComponent(name).path
}

/// The `plumb` executable built beside the test bundle.
let plumbExecutable = builtExecutable("plumb")

/// A finished (or signalled) `plumb` process: its exit status and what it printed.
struct ProcessResult {
  var status: Int32
  var standardOutput: Data
  var standardError: String
}

/// Runs `plumb` with `arguments`; `whileRunning` gets the process (e.g. to signal it).
func runPlumb(
  _ arguments: [String], environment: [String: String] = [:], executable: String = plumbExecutable,
  in directory: String = repositoryRoot, whileRunning: ((Process) throws -> Void)? = nil
) throws -> ProcessResult {
  let process = Process()
  if !environment.isEmpty {
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
  }
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments
  process.currentDirectoryURL = URL(fileURLWithPath: directory)
  let output = Pipe()
  let error = Pipe()
  process.standardOutput = output
  process.standardError = error
  process.standardInput = FileHandle.nullDevice
  try process.run()
  try whileRunning?(process)
  let outputData = output.fileHandleForReading.readDataToEndOfFile()
  let errorData = error.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return ProcessResult(
    status: process.terminationStatus, standardOutput: outputData,
    standardError: String(decoding: errorData, as: UTF8.self))
}

/// `plumb record` of the simulated board in real time (600 s asked) into `output`, stopped by
/// SIGINT once the file holds records (the start-up is over) and `whileRecording` has run.
func recordUntilInterrupted(
  to output: String, whileRecording: @escaping () -> Void = {}
) throws -> ProcessResult {
  try runPlumb([
    "record", "--board", "Boards/simulated.json", "--seconds", "600", "--output", output,
    "--serial", "/dev/null",
  ]) { process in
    var status = stat()
    var polls = 0
    while (stat(output, &status) != 0 || status.st_size < 2000) && polls < 3000 {
      usleep(10_000)
      polls += 1
    }
    whileRecording()
    kill(process.processIdentifier, SIGINT)
  }
}

/// Expects `plumb` to have refused a recording's output with 73 before the board started (no
/// self-test ran), naming `path` and saying each of `says`.
func expectRefusedBeforeTheBoardStarts(
  _ result: ProcessResult, naming path: String, says: [String],
  sourceLocation: SourceLocation = #_sourceLocation
) {
  let message = result.standardError
  #expect(result.status == 73, "\(message)", sourceLocation: sourceLocation)
  #expect(
    message.contains(path) && says.allSatisfy { message.contains($0) }, "\(message)",
    sourceLocation: sourceLocation)
  #expect(!message.contains("self-test"), "\(message)", sourceLocation: sourceLocation)
}

/// A fresh temporary directory, removed when the test process ends (`Scratch`).
func temporaryDirectory() throws -> URL {
  URL(fileURLWithPath: Scratch.folder("plumb-runtime-tests"), isDirectory: true)
}

/// A short recording of the simulated board (2 s at full speed), in `directory`.
func simulatedRecording(in directory: URL, name: String = "sim.plumbraw") throws -> String {
  let path = directory.appendingPathComponent(name).path
  let record = try runPlumb([
    "record", "--board", "Boards/simulated.json", "--fast", "--seconds", "2", "--output", path,
    "--serial", "/dev/null",
  ])
  guard record.status == 0 else {
    throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: record.standardError])
  }
  return path
}

/// Writes a copy of `Boards/simulated.json` into `directory` whose `calibration` key names
/// `calibration` (a path relative to the board file) and, when given, whose scenario is
/// `scenario`; returns the board file's path.
func simulatedBoard(
  in directory: URL, calibration: String, scenario: String? = nil
) throws -> String {
  var board = try String(
    contentsOfFile: "\(repositoryRoot)/Boards/simulated.json", encoding: .utf8)
  if let scenario {
    board = board.replacingOccurrences(
      of: #""scenario": "handheld""#, with: "\"scenario\": \"\(scenario)\"")
  }
  board = board.replacingOccurrences(
    of: #""simulation":"#, with: "\"calibration\": \"\(calibration)\", \"simulation\":")
  let path = directory.appendingPathComponent("board.json").path
  try board.write(toFile: path, atomically: true, encoding: .utf8)
  return path
}

/// Runs the simulated board in real time with `format` frames to a file in a fresh folder, for
/// at most `seconds` of sample time, sending each signal after its pause; returns the result
/// and the frames file's path.
func runSimulatedBoard(
  format: String, seconds: Int, signals: [(pauseMicroseconds: UInt32, signal: Int32)]
) throws -> (result: ProcessResult, frames: String) {
  let output = try temporaryDirectory().appendingPathComponent("frames.\(format)").path
  let result = try runPlumb([
    "run", "--board", "Boards/simulated.json", "--format", format, "--duration", "\(seconds)",
    "--serial", output,
  ]) { process in
    for (pause, signal) in signals {
      usleep(pause)
      kill(process.processIdentifier, signal)
    }
  }
  return (result, output)
}

/// Runs the simulated board as fast as it goes for `seconds`, binary frames into the named
/// pipe `fifo`, which `reader` (opened `O_RDWR | O_NONBLOCK` by the caller) holds open and
/// reads only afterwards; returns the run and every byte the pipe then held.
func runSimulatedBoardIntoHeldPipe(
  _ fifo: String, reader: Int32, seconds: Int
) throws -> (run: ProcessResult, bytes: [UInt8]) {
  let run = try runPlumb([
    "run", "--board", "Boards/simulated.json", "--fast", "--duration", "\(seconds)", "--format",
    "binary", "--serial", fifo,
  ])
  return (run, readAvailable(reader))
}

/// Everything a non-blocking descriptor holds now.
func readAvailable(_ descriptor: Int32) -> [UInt8] {
  var bytes: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 65536)
  while true {
    let n = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    if n <= 0 { break }
    bytes += chunk[0..<n]
  }
  return bytes
}

/// `executable` (`plumb` unless said) under `/bin/sh` with a file-size limit of `blocks` × 512
/// bytes and SIGXFSZ ignored, so a write past the limit fails with `EFBIG` after taking what
/// fits, as one past a filling disk fails with `ENOSPC`, without mounting anything.
func runUnderFileSizeLimit(
  blocks: Int, _ arguments: [String], executable: String = plumbExecutable
) throws -> ProcessResult {
  #if PLUMB_SANITIZED
    // ThreadSanitizer's start-up writes 512 KiB of shadow markers to $TMPDIR/tsan.rodata.PID
    // and maps them: under this limit the write is cut short and reading the mapping past it
    // is a SIGBUS. Where it cannot create that file it does without (it only saves memory);
    // Plumb's programs use no temporary file from $TMPDIR (AtomicFile's is in the output's
    // own folder).
    let environment = ["TMPDIR": "/nonexistent"]
  #else
    let environment: [String: String] = [:]
  #endif
  return try runPlumb(
    ["-c", "ulimit -f \(blocks); trap '' XFSZ; exec \"$0\" \"$@\"", executable] + arguments,
    environment: environment, executable: "/bin/sh")
}
