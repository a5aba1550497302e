import Foundation
import Testing

/// `plumb-hil run --board FILE`: a CI job plays the scenarios against the configuration it
/// deploys — the board file's sample rate, filter, ranges, output and mounting — rather than
/// the firmware's defaults. The board's hardware (bus, line, device) is simulated.
@Suite struct BoardOptionTests {
  /// A board file as a user writes one for a Raspberry Pi, the breakout mounted upside down and
  /// turned a quarter: the run samples at its 200 Hz, sends its 50 text frames a second at its
  /// baud rate, and the simulated chip sits on the body as the file says — the inclination error
  /// is that of an upright chip. Without the mounting simulated the error would be 180°; without
  /// it applied, the estimate would be upside down.
  @Test func theBoardFilesSensorOutputAndMountingAreWhatTheRunPlays() throws {
    let directory = try temporaryDirectory()
    let board = directory + "/pi.json"
    try boardFile(
      mounting: #"{"rollPitchYawDegrees": [180, 0, 90]}"#, sampleRate: 200, output: "text", rate: 50
    ).write(toFile: board, atomically: true, encoding: .utf8)
    let junit = directory + "/hil.xml"
    let run = try runPlumbHIL([
      "run", "handheld", "--seconds", "20", "--unit", "noisy", "--board", board, "--report",
      directory + "/report", "--junit", junit, "--limit", "incl_rms_deg=2",
    ])
    #expect(run.status == 0, "\(run.standardError)")
    let json = try #require(FileManager.default.contents(atPath: directory + "/report/report.json"))
    let report = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
    #expect(report["format"] as? String == "text")
    #expect((report["frame_rate_hz"] as? NSNumber)?.doubleValue == 50)
    #expect((report["sample_rate_hz"] as? NSNumber)?.doubleValue == 200)
    #expect(report["board"] as? String == board)
    let xml = try String(contentsOfFile: junit, encoding: .utf8)
    #expect(xml.contains(#"<property name="board" value="\#(board)"/>"#), "\(xml)")
    // The typical unit's gyro offset (several °/s), in the chip's axes, is judged against the
    // frames' body-axis bias estimate through the mounting.
    let bias = try runPlumbHIL([
      "run", "handheld", "--seconds", "60", "--board", board, "--format", "binary", "--limit",
      "bias_final_dps=0.5",
    ])
    #expect(bias.status == 0, "\(bias.standardError)")
    // The upright chip's run, for comparison: the same scenario and unit at the defaults.
    let upright = try runPlumbHIL(["run", "handheld", "--seconds", "20", "--unit", "noisy"])
    #expect(upright.status == 0, "\(upright.standardError)")
    #expect(
      abs(inclination(run.standardOutput) - inclination(upright.standardOutput)) < 0.5,
      "\(run.standardOutput) against \(upright.standardOutput)")
  }

  /// `--format` still chooses the encoding over the board's; the board's calibration belongs to
  /// its real unit and is not applied to the simulated one (said, not silent).
  @Test func formatOverridesTheBoardAndItsCalibrationIsNotApplied() throws {
    let directory = try temporaryDirectory()
    let board = directory + "/pi.json"
    try boardFile(
      mounting: #"{"sensorToBody": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}"#, sampleRate: 100,
      output: "text", rate: 100, calibration: directory + "/real-unit.json"
    ).write(toFile: board, atomically: true, encoding: .utf8)
    let run = try runPlumbHIL([
      "run", "tilt", "--seconds", "4", "--board", board, "--format", "mavlink", "--report",
      directory + "/report",
    ])
    #expect(run.status == 0, "\(run.standardError)")
    #expect(run.standardError.contains("real-unit.json"), "\(run.standardError)")
    #expect(run.standardError.contains("--calibration"), "\(run.standardError)")
    let json = try #require(FileManager.default.contents(atPath: directory + "/report/report.json"))
    let report = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
    #expect(report["format"] as? String == "mavlink")
  }

  /// A wrong board file is refused before the run, naming the file, the key and the fix, with
  /// `plumb run`'s exit status for a board file (78); a missing one too.
  @Test func aWrongBoardFileIsRefusedNamingTheKey() throws {
    let directory = try temporaryDirectory()
    let board = directory + "/pi.json"
    try boardFile(
      mounting: #"{"rollPitchYawDegrees": [0, 0, 0]}"#, sampleRate: 333, output: "binary",
      rate: 111
    ).write(toFile: board, atomically: true, encoding: .utf8)
    let wrong = try runPlumbHIL(["run", "tilt", "--seconds", "4", "--board", board])
    #expect(wrong.status == 78, "\(wrong.standardError)")
    #expect(wrong.standardError.contains(board), "\(wrong.standardError)")
    #expect(wrong.standardError.contains("sensor.sampleRateHz"), "\(wrong.standardError)")
    #expect(wrong.standardOutput.isEmpty)
    let missing = try runPlumbHIL([
      "run", "tilt", "--seconds", "4", "--board", directory + "/none.json",
    ])
    #expect(missing.status == 78, "\(missing.standardError)")
    #expect(missing.standardError.contains("none.json"), "\(missing.standardError)")
  }

  func boardFile(
    mounting: String, sampleRate: Int, output: String, rate: Int, calibration: String? = nil
  ) -> String {
    """
    {
      "schema": 1,
      "name": "pi-under-test",
      "i2c": {"bus": "/dev/i2c-1", "address": "0x68"},
      "dataReady": {"chip": "pinctrl-bcm2711", "line": 17},
      "serial": {"device": "/dev/serial0", "baud": 921600},
      "mounting": \(mounting),
      "sensor": {"sampleRateHz": \(sampleRate), "dlpfHz": 44, "gyroRangeDps": 1000, "accelRangeG": 8},
      "output": {"format": "\(output)", "rateHz": \(rate)}\(calibration.map { ",\n  \"calibration\": \"\($0)\"" } ?? "")
    }
    """
  }

  /// `incl_rms_deg` of a summary line.
  func inclination(_ summary: String) -> Double {
    guard let range = summary.range(of: #"incl_rms_deg=[0-9.]+"#, options: .regularExpression)
    else { return .nan }
    return Double(summary[range].dropFirst("incl_rms_deg=".count)) ?? .nan
  }
}
