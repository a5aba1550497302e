import Foundation
import Testing

/// The simulated board is a breakout mounted as its board file says: someone checking a
/// mounting on the simulated board before the real one must see the body's attitude, as the
/// real board would give it.
@Suite struct SimulatedMountingTests {
  /// The `rest` scenario (a level body lying still) on a simulated board whose breakout is
  /// mounted upside down and turned a quarter: the frames say level. The simulated chip used
  /// to read the body's motion in the body's axes whatever the mounting, and the firmware then
  /// turned it by the mounting: roll −178°.
  @Test func aMountedSimulatedBoardReportsTheBodysAttitude() throws {
    let directory = try temporaryDirectory()
    let board = directory.appendingPathComponent("mounted.json").path
    var text = try String(
      contentsOfFile: repositoryRoot + "/Boards/simulated.json", encoding: .utf8)
    text = text.replacingOccurrences(
      of: #""sensorToBody": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]"#,
      with: #""rollPitchYawDegrees": [180, 0, 90]"#)
    text = text.replacingOccurrences(of: #""scenario": "handheld""#, with: #""scenario": "rest""#)
    #expect(text.contains("[180, 0, 90]") && text.contains(#""rest""#))
    try text.write(toFile: board, atomically: true, encoding: .utf8)
    let run = try runPlumb(["run", "--board", board, "--fast", "--duration", "4"])
    #expect(run.status == 0, "\(run.standardError)")
    let frames = String(decoding: run.standardOutput, as: UTF8.self).split(separator: "\n")
    let last = try #require(frames.last { $0.hasPrefix("$PLMB,") })
    let fields = last.split(separator: ",")
    let roll = try #require(Double(fields[3]))
    let pitch = try #require(Double(fields[4]))
    // The typical unit's accelerometer offset tilts the estimate by a degree or two.
    #expect(abs(roll) < 3 && abs(pitch) < 3, "\(last)")
  }
}
