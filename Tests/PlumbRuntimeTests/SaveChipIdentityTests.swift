import Calibration
import Foundation
import Recording
import Testing

/// `plumb-cal save` writes the calibration for the part that made the recording: a `.plumbraw`
/// header says which answered at start-up (issue 24, item 5: it wrote WHO_AM_I 0x68 whatever
/// the recording said, unless --who-am-i was given).
@Suite struct SaveChipIdentityTests {
  let plumbCal = builtExecutable("plumb-cal")

  /// A 15 s recording of the simulated board lying still, its header's part replaced by
  /// `chip`, in `directory`.
  func stillRecording(of chip: PlumbRawChip, in directory: URL) throws -> String {
    let board = directory.appendingPathComponent("board.json").path
    try String(contentsOfFile: "\(repositoryRoot)/Boards/simulated.json", encoding: .utf8)
      .replacingOccurrences(of: #""scenario": "handheld""#, with: #""scenario": "rest""#)
      .write(toFile: board, atomically: true, encoding: .utf8)
    let recorded = directory.appendingPathComponent("still.plumbraw").path
    let record = try runPlumb([
      "record", "--board", board, "--fast", "--seconds", "15", "--output", recorded,
      "--serial", "/dev/null",
    ])
    #expect(record.status == 0, "\(record.standardError)")
    let reader = try PlumbRawReader(contentsOf: recorded)
    var header = reader.header
    header.chip = chip
    let path = directory.appendingPathComponent("still-\(chip.whoAmI).plumbraw").path
    let writer = try PlumbRawWriter(creating: path, header: header)
    for record in reader.records() { try writer.append(record) }
    try writer.close()
    return path
  }

  @Test func thePartComesFromTheRecordingsHeader() throws {
    let directory = try temporaryDirectory()
    let chip = PlumbRawChip(whoAmI: 0x70, name: "MPU-6500", family: .mpu6500)
    let recording = try stillRecording(of: chip, in: directory)
    let output = directory.appendingPathComponent("unit.json").path
    let save = try runPlumb(["save", recording, "--output", output], executable: plumbCal)
    #expect(save.status == 0, "\(save.standardError)")
    let file = try CalibrationFile.load(path: output)
    #expect(file.sensor.whoAmI == 0x70)
    #expect(file.sensor.name == "MPU-6500")
    // The same --who-am-i is fine; another is refused, naming both.
    let same = try runPlumb(
      ["save", recording, "--who-am-i", "0x70", "--output", output, "--replace"],
      executable: plumbCal)
    #expect(same.status == 0, "\(same.standardError)")
    let other = try runPlumb(
      ["save", recording, "--who-am-i", "0x68", "--output", output, "--replace"],
      executable: plumbCal)
    #expect(other.status == 65)
    #expect(other.standardError.contains("MPU-6500 (WHO_AM_I 0x70), not --who-am-i 0x68"))
    #expect(try CalibrationFile.load(path: output).sensor.whoAmI == 0x70)
  }
}
