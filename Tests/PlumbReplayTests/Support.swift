import Foundation

/// A finished executable: its exit status and what it printed.
struct ExecutableResult {
  var status: Int32
  var standardError: String
  var standardOutput: String
}

/// Runs `executable` with `arguments` and waits for it.
func runExecutable(_ executable: URL, _ arguments: [String]) throws -> ExecutableResult {
  let process = Process()
  process.executableURL = executable
  process.arguments = arguments
  let out = Pipe()
  let err = Pipe()
  process.standardOutput = out
  process.standardError = err
  try process.run()
  let o = out.fileHandleForReading.readDataToEndOfFile()
  let e = err.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return ExecutableResult(
    status: process.terminationStatus, standardError: String(decoding: e, as: UTF8.self),
    standardOutput: String(decoding: o, as: UTF8.self))
}
