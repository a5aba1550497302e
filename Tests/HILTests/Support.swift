import Foundation
import HIL
import Telemetry

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

/// Runs `plumb-hil` with `arguments` and waits for it.
func runPlumbHIL(_ arguments: [String]) throws -> ProcessResult {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: plumbHILExecutable)
  process.arguments = arguments
  process.currentDirectoryURL = URL(fileURLWithPath: repositoryRoot)
  let output = Pipe()
  let error = Pipe()
  process.standardOutput = output
  process.standardError = error
  process.standardInput = FileHandle.nullDevice
  try process.run()
  let outputData = output.fileHandleForReading.readDataToEndOfFile()
  let errorData = error.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return ProcessResult(
    status: process.terminationStatus,
    standardOutput: String(decoding: outputData, as: UTF8.self),
    standardError: String(decoding: errorData, as: UTF8.self))
}

/// A fresh temporary directory.
func temporaryDirectory() throws -> String {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent(
    "plumb-hil-tests-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url.path
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
