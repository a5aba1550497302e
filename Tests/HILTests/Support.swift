import Foundation
import HIL
import Telemetry
import TestSupport

/// The repository's root, from this file's path.
let repositoryRoot: String = {
  var url = URL(fileURLWithPath: #filePath)
  for _ in 0..<3 { url.deleteLastPathComponent() }
  return url.path
}()

/// The committed golden frame files.
let goldenDirectory = repositoryRoot + "/Tests/HILTests/Golden"

/// The `plumb-hil` executable built beside the test bundle.
let plumbHILExecutable: String = {
  let testBundle = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
  var directory = testBundle.deletingLastPathComponent()
  if directory.lastPathComponent.hasSuffix(".xctest") { directory.deleteLastPathComponent() }
  return directory.appendingPathComponent("plumb-hil").path
}()

/// A finished `plumb-hil` process.
struct ProcessResult {
  var status: Int32
  var standardOutput: String
  var standardError: String
}

/// The `plumb-monitor` executable, beside `plumb-hil`.
let plumbMonitorExecutable: String =
  URL(fileURLWithPath: plumbHILExecutable).deletingLastPathComponent()
  .appendingPathComponent("plumb-monitor").path

/// A started process whose output is collected when it is waited for.
struct RunningProcess {
  let process = Process()
  let output = Pipe()
  let error = Pipe()

  init(_ executable: String, _ arguments: [String]) throws {
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.currentDirectoryURL = URL(fileURLWithPath: repositoryRoot)
    process.standardOutput = output
    process.standardError = error
    process.standardInput = FileHandle.nullDevice
    try process.run()
  }

  func wait() -> ProcessResult {
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    let errorData = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(
      status: process.terminationStatus,
      standardOutput: String(decoding: outputData, as: UTF8.self),
      standardError: String(decoding: errorData, as: UTF8.self))
  }
}

/// Runs `plumb-hil` with `arguments` and waits for it.
func runPlumbHIL(_ arguments: [String]) throws -> ProcessResult {
  try RunningProcess(plumbHILExecutable, arguments).wait()
}

/// A fresh temporary directory, removed when the test process ends (`Scratch`).
func temporaryDirectory() throws -> String {
  Scratch.folder("plumb-hil-tests")
}

/// A run with the options most tests share.
func hil(
  _ scenario: String, faults: String = "none", seconds: Double, seed: UInt64 = 1,
  format: TelemetryFormat = .binary, configure: (inout HILOptions) -> Void = { _ in }
) throws -> HILResult {
  var options = HILOptions(
    scenario: scenario, faults: faults, seconds: seconds, seed: seed, format: format)
  configure(&options)
  return try runHIL(options)
}
