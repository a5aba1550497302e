import Foundation
import TestSupport
import Testing

/// `plumb-broad` end to end on hand-made trials: the built executable, real gzip files.
@Suite struct BroadCommandTests {
  static let broad = ReplayCommandTests.plumb.deletingLastPathComponent()
    .appendingPathComponent("plumb-broad")

  /// Writes `rows` (after the BROAD header) gzipped as `name`.csv.gz in `directory`.
  func trial(_ name: String, rows: [String], in directory: URL) throws {
    let csv = directory.appendingPathComponent("\(name).csv")
    let header = "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z,opt_qw,opt_qx,opt_qy,opt_qz,movement\n"
    try (header + rows.map { $0 + "\n" }.joined()).write(to: csv, atomically: true, encoding: .utf8)
    let gzip = Process()
    gzip.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    gzip.arguments = ["gzip", csv.path]
    try gzip.run()
    gzip.waitUntilExit()
    #expect(gzip.terminationStatus == 0)
  }

  /// Two seconds of a still board at 100 Hz, `movement` set as given, truth the identity.
  func stillRows(movement: Int) -> [String] {
    (0..<200).map { "\(Double($0) * 0.01),0,0,0,0,0,9.81,1,0,0,0,\(movement)" }
  }

  func run(_ directory: URL, _ arguments: [String] = []) throws -> ExecutableResult {
    try runExecutable(Self.broad, ["--data", directory.path] + arguments)
  }

  /// A fresh folder, removed when the test process ends (`Scratch`).
  func folder() throws -> URL {
    URL(fileURLWithPath: Scratch.folder("plumb-broad"), isDirectory: true)
  }

  @Test func wholeTrialsAreScored() throws {
    let directory = try folder()
    try trial("01_still", rows: stillRows(movement: 1), in: directory)
    let result = try run(directory)
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardOutput.contains("01_still"))
  }

  /// A setting past what a Double holds is refused, not turned into infinity.
  @Test func aSettingTooLargeIsOutOfRange() throws {
    let directory = try folder()
    try trial("01_still", rows: stillRows(movement: 1), in: directory)
    let result = try run(directory, ["--set", "tau=1e400"])
    #expect(result.status == 64, "\(result.standardOutput)\(result.standardError)")
    #expect(
      result.standardError.contains("--set tau=1e400: 1e400 is out of range"),
      "\(result.standardError)")
  }

  /// A trial with no samples, or none to score, would give an RMSE of zero (or NaN) that reads
  /// as a perfect score: it is an error naming the trial (65).
  @Test(arguments: [
    ([String](), "has no samples"),
    (["0.0,0,0,0,0,0,9.81,1,0,0,0,0", "0.01,0,0,0,0,0,9.81,1,0,0,0,0"], "has no movement samples"),
  ])
  func aTrialWithNothingToScoreIsAnErrorNamingIt(rows: [String], problem: String) throws {
    let directory = try folder()
    try trial("01_still", rows: stillRows(movement: 1), in: directory)
    try trial("02_broken", rows: rows, in: directory)
    let result = try run(directory)
    #expect(result.status == 65, "\(result.standardOutput)\(result.standardError)")
    #expect(result.standardError.contains("02_broken \(problem)"), "\(result.standardError)")
  }
}
