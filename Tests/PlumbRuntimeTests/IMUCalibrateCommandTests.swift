import Calibration
import Foundation
import Geometry
import MPU6050Simulation
import MotionScenarios
import PlumbRuntime
import Randomness
import TestSupport
import Testing

/// `plumb calibrate imu`, the file it writes, and that file in `plumb check-board` and
/// `plumb replay --calibration`.
@Suite struct IMUCalibrateCommandTests {
  /// A file from the bench steps before the session: a gyro bias model with a warm-up fit,
  /// noise figures, an accelerometer from six positions.
  static let sample = CalibrationFile(
    sensor: SensorIdentity(whoAmI: 0x68, name: "MPU-6050", label: "bench unit 3"),
    created: "2026-12-02T10:15:00Z",
    gyroscope: GyroCalibration(
      biasRadiansPerSecond: Vector3(0.0123, -0.0456, 0.0789),
      biasUncertaintyRadiansPerSecond: Vector3(1.2e-5, 1.1e-5, 1.3e-5),
      referenceTemperatureCelsius: 31.5, biasPerDegreeCelsius: Vector3(2e-4, -1e-4, 5e-5),
      temperatureRangeCelsius: 22.4...41.9),
    accelerometer: AccelerometerCorrection(
      offset: Vector3(0.15, -0.2, 0.35), scale: Vector3(1.02, 0.985, 1.01)),
    noise: NoiseFigures(
      samplePeriodSeconds: 0.01,
      gyroscope: SensorNoiseFigures(
        randomWalk: [2.0e-4, 2.1e-4, 1.9e-4], biasInstability: [1e-4, 9e-5, 1.1e-4],
        rateRandomWalk: [2e-5, nil, 3e-5]), accelerometer: nil))

  @Test func theSessionWritesASchema2FileTheBoardCanUse() throws {
    let directory = try temporaryDirectory()
    let output = directory.appendingPathComponent("unit.json").path
    let plot = directory.appendingPathComponent("residuals.svg").path
    let result = try runPlumb([
      "calibrate", "imu", "--board", "Boards/simulated.json", "--output", output, "--plot", plot,
    ])
    #expect(result.status == 0, "\(result.standardError)")
    let text = String(decoding: result.standardOutput, as: UTF8.self)
    #expect(text.contains("verdict: good"), "\(text)")
    #expect(text.contains("sensitivity error: x "), "\(text)")
    #expect(result.standardError.contains("plumb: turn the board by hand about its"))
    let file = try CalibrationFile.load(path: output)
    #expect(file.writtenSchema == 2)
    let matrix = try #require(file.gyroscope?.matrix)
    #expect(abs(matrix.row0.x - 0.979) < 0.002, "\(matrix)")
    #expect(file.accelerometer != nil)
    #expect(text.contains(file.calibrationIdText))
    let svg = try String(contentsOfFile: plot, encoding: .utf8)
    #expect(svg.hasPrefix("<svg") || svg.hasPrefix("<?xml"))
    #expect(svg.contains("verdict good"))
    // A board file pointing at it validates, with the id.
    let board = try simulatedBoard(in: directory, calibration: "unit.json")
    let check = try runPlumb(["check-board", board])
    #expect(check.status == 0, "\(check.standardError)")
    #expect(String(decoding: check.standardOutput, as: UTF8.self).contains(file.calibrationIdText))
  }

  /// A long still recording's bias model (with its temperature fit) is better than a session's
  /// few minutes: it is kept, with the noise figures, and the matrix added.
  @Test func anExistingGyroBiasModelIsKeptAndTheMatrixAdded() throws {
    let directory = try temporaryDirectory()
    let output = directory.appendingPathComponent("unit.json").path
    var existing = Self.sample
    existing.gyroscope?.matrix = nil
    try existing.write(toPath: output)
    let result = try runPlumb([
      "calibrate", "imu", "--board", "Boards/simulated.json", "--output", output,
    ])
    #expect(result.status == 0, "\(result.standardError)")
    let file = try CalibrationFile.load(path: output)
    #expect(file.gyroscope?.polynomial == existing.gyroscope?.polynomial)
    #expect(file.gyroscope?.matrix != nil)
    #expect(file.noise == existing.noise)
    #expect(file.accelerometer != existing.accelerometer)
    #expect(String(decoding: result.standardOutput, as: UTF8.self).contains("bias model is kept"))
  }

  /// The six positions over a file with the IMU session's gyro matrix: the matrix is kept, and
  /// the person told that the two sensors' axes now come from different fits.
  @Test func sixPositionsOverAnIMUSessionsFileWarnsThatTheAxesNoLongerMatch() throws {
    let directory = try temporaryDirectory()
    let output = directory.appendingPathComponent("unit.json").path
    let board = ["--board", "Boards/simulated.json", "--output", output]
    #expect(try runPlumb(["calibrate", "imu"] + board).status == 0)
    let matrix = try CalibrationFile.load(path: output).gyroscope?.matrix
    let accel = try runPlumb(["calibrate", "accel"] + board)
    #expect(accel.status == 0, "\(accel.standardError)")
    #expect(accel.standardError.contains("run plumb calibrate imu again"))
    #expect(try CalibrationFile.load(path: output).gyroscope?.matrix == matrix)
  }

  @Test(arguments: [
    (
      ["calibrate", "accel", "--turns-per-axis", "5"], "--turns-per-axis is for plumb calibrate imu"
    ),
    (["calibrate", "imu", "--full-matrix"], "--full-matrix is for plumb calibrate accel"),
    (["calibrate", "gyro"], "use imu (gyro and accelerometer together) or accel"),
    (["calibrate", "imu", "--turns-per-axis", "1"], "turns-per-axis"),
  ])
  func misusedOptionsAreUsageErrors(arguments: [String], says: String) throws {
    let directory = try temporaryDirectory()
    let result = try runPlumb(
      arguments + [
        "--board", "Boards/simulated.json", "--output",
        directory.appendingPathComponent("unit.json").path,
      ])
    #expect(result.status == 64, "\(result.standardError)")
    #expect(result.standardError.contains(says), "\(result.standardError)")
  }

  /// check-board refuses a gyro matrix no MPU-6050 has, naming the entry and why.
  @Test func checkBoardRefusesASingularGyroMatrixWithTheReason() throws {
    let directory = try temporaryDirectory()
    let path = directory.appendingPathComponent("unit.json").path
    var file = Self.sample
    file.gyroscope?.matrix = Matrix3(
      rows: Vector3(0.98, 0.01, 0), Vector3(0, 1.01, 0), Vector3(0, 0, 0.99))
    try file.write(toPath: path)
    let text = try String(contentsOfFile: path, encoding: .utf8)
    try text.replacingOccurrences(of: "[0.98, 0.01, 0]", with: "[0, 0, 0]")
      .write(toFile: path, atomically: true, encoding: .utf8)
    let board = try simulatedBoard(in: directory, calibration: "unit.json")
    let check = try runPlumb(["check-board", board])
    #expect(check.status != 0)
    #expect(check.standardError.contains("gyroscope.matrix[0][0]"), "\(check.standardError)")
    #expect(check.standardError.contains("singular"), "\(check.standardError)")
  }

  /// `plumb replay --calibration` corrects each reading as the firmware does:
  /// rate = G · (reading − bias), seen on the first line's bias-corrected rate.
  @Test func replayAppliesTheGyroMatrix() throws {
    let directory = try temporaryDirectory()
    let calibrationPath = directory.appendingPathComponent("unit.json").path
    var file = Self.sample
    let g = Matrix3(
      rows: Vector3(0.98, 0.01, -0.02), Vector3(0.015, 1.02, 0.005), Vector3(-0.01, 0.02, 0.99))
    file.gyroscope = GyroCalibration(
      biasRadiansPerSecond: Vector3(0.01, -0.02, 0.03),
      biasUncertaintyRadiansPerSecond: Vector3(1e-4, 1e-4, 1e-4), referenceTemperatureCelsius: 25,
      matrix: g)
    file.accelerometer = nil
    try file.write(toPath: calibrationPath)
    var csv = "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z\n"
    for k in 0..<50 { csv += "\(Double(k) * 0.01),0.51,-0.02,0.03,0,0,9.80665\n" }
    let input = directory.appendingPathComponent("in.csv").path
    try csv.write(toFile: input, atomically: true, encoding: .utf8)
    let output = directory.appendingPathComponent("out.csv").path
    let result = try runPlumb([
      "replay", "--input", input, "--output", output, "--calibration", calibrationPath,
    ])
    #expect(result.status == 0, "\(result.standardError)")
    let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
    let columns = lines[0].split(separator: ",").map(String.init)
    let first = lines[1].split(separator: ",").map { Double($0) ?? .nan }
    let rate = Vector3(
      first[columns.firstIndex(of: "rate_x")!], first[columns.firstIndex(of: "rate_y")!],
      first[columns.firstIndex(of: "rate_z")!])
    let expected = g * Vector3(0.5, 0, 0)
    #expect((rate - expected).length < 1e-9, "\(rate) against \(expected)")
    // A missing calibration file is named, with 66.
    let missing = try runPlumb([
      "replay", "--input", input, "--output", output, "--calibration", "/nonexistent.json",
    ])
    #expect(missing.status == 66, "\(missing.standardError)")
    #expect(missing.standardError.contains("/nonexistent.json"))
  }

  /// A session as a recording in the CSV layout, in the chip's axes: the scripted person's
  /// motion read through the simulated typical unit's sensitivities, offsets and a little
  /// noise, at 100 Hz.
  static func sessionCSV() -> (text: String, gyroTruth: Matrix3, accelTruth: Matrix3) {
    let motion = SimulatedCalibrationPerson.motion(
      seed: 2, settings: IMUSessionSettings(), mistakes: true)
    let unit = SimulatedMPU6050Unit.typical(seed: 1)
    let sg =
      Matrix3(diagonal: Vector3(1, 1, 1) + unit.gyroScaleError)
      * (Matrix3.identity + unit.gyroCrossAxis)
    let sa =
      Matrix3(diagonal: Vector3(1, 1, 1) + unit.accelerometerScaleError)
      * (Matrix3.identity + unit.accelerometerCrossAxis)
    var random = SeededGenerator(seed: 5, stream: 1)
    func noise(_ sigma: Double) -> Vector3 {
      Vector3(random.gaussian(), random.gaussian(), random.gaussian()) * sigma
    }
    var text = "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z,temp_c\n"
    for k in 0..<Int(((motion.durationSeconds ?? 0) + 2) * 100) {
      let t = Double(k) * 0.01
      let truth = motion.truth(atSeconds: t)
      let g =
        sg * truth.angularRateRadiansPerSecond + unit.gyroOffsetRadiansPerSecond
        + noise(0.0015)
      let a =
        sa * truth.specificForceMetersPerSecondSquared
        + unit.accelerometerOffsetMetersPerSecondSquared + noise(0.03)
      text += "\(t),\(g.x),\(g.y),\(g.z),\(a.x),\(a.y),\(a.z),25\n"
    }
    return (text, sg, sa)
  }

  /// `--recording`: the same session over a recording of one, without the board; a recording
  /// cut short and a flat one are refused with what they lacked.
  @Test func aRecordedSessionCalibratesAndACutOrFlatOneIsRefused() throws {
    let directory = try temporaryDirectory()
    let (text, sg, sa) = Self.sessionCSV()
    let input = directory.appendingPathComponent("session.csv").path
    try text.write(toFile: input, atomically: true, encoding: .utf8)
    let output = directory.appendingPathComponent("unit.json").path
    let result = try runPlumb([
      "calibrate", "imu", "--board", "Boards/simulated.json", "--recording", input, "--output",
      output,
    ])
    #expect(result.status == 0, "\(result.standardError)")
    #expect(result.standardError.contains("not used: that turn was only"))
    let file = try CalibrationFile.load(path: output)
    let g = try #require(file.gyroscope?.matrix)
    let a = try #require(file.accelerometer?.matrix)
    // The truth in the calibrated axes (IMUCalibrationTests): the rotation nearest A·S_a, times
    // S_g⁻¹.
    let truth = IMUCalibrationTests.rotation(of: a * sa) * sg.inverse!
    let d = g - truth
    let worst = [d.row0, d.row1, d.row2].flatMap { [abs($0.x), abs($0.y), abs($0.z)] }.max()!
    #expect(worst < 1e-3, "\(worst)")

    let lines = text.split(separator: "\n")
    let cut = directory.appendingPathComponent("cut.csv").path
    try (lines.prefix(lines.count / 3).joined(separator: "\n") + "\n")
      .write(toFile: cut, atomically: true, encoding: .utf8)
    var flatText = "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z\n"
    for k in 0..<3000 { flatText += "\(Double(k) * 0.01),0,0,0,0,0,0\n" }
    let flat = directory.appendingPathComponent("flat.csv").path
    try flatText.write(toFile: flat, atomically: true, encoding: .utf8)
    for (path, says) in [
      (cut, "end before every axis had its turns"), (flat, "not about g = 9.81"),
    ] {
      let refused = try runPlumb([
        "calibrate", "imu", "--board", "Boards/simulated.json", "--recording", path, "--output",
        directory.appendingPathComponent("other.json").path,
      ])
      #expect(refused.status == 65, "\(path): \(refused.standardError)")
      #expect(refused.standardError.contains(says), "\(path): \(refused.standardError)")
      #expect(
        !FileManager.default.fileExists(atPath: directory.appendingPathComponent("other.json").path)
      )
    }
  }

  /// `--html`: the solution on one self-contained page, its figures those of the file written
  /// (to the digits printed), the residual plot inline, the recording's name escaped, and the
  /// same session gives the same bytes.
  @Test func theSessionPageShowsTheFileFigures() throws {
    let directory = try temporaryDirectory()
    let (text, _, _) = Self.sessionCSV()
    let input = directory.appendingPathComponent("<script>session.csv").path
    try text.write(toFile: input, atomically: true, encoding: .utf8)
    var pages: [String] = []
    for run in 1...2 {
      let output = directory.appendingPathComponent("unit-\(run).json").path
      let html = directory.appendingPathComponent("imu-\(run).html").path
      let result = try runPlumb([
        "calibrate", "imu", "--board", "Boards/simulated.json", "--recording", input, "--output",
        output, "--html", html,
      ])
      #expect(result.status == 0, "\(result.standardError)")
      pages.append(try String(contentsOfFile: html, encoding: .utf8))
    }
    let page = pages[0]
    #expect(pages[1] == page)
    #expect(HTMLCheck.problems(page) == [])
    #expect(!page.contains("<script>"))
    #expect(page.contains("the recording \(directory.path)/&lt;script&gt;session.csv"))
    #expect(page.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""))
    #expect(page.contains("PASS: the check passed"))
    let file = try CalibrationFile.load(path: directory.appendingPathComponent("unit-1.json").path)
    let accelerometer = try #require(file.accelerometer)
    let gyroMatrix = try #require(file.gyroscope?.matrix)
    /// The figures of the row named `name`.
    func row(_ name: String) -> [Double] {
      guard let start = page.firstRange(of: "<th scope=\"row\">\(name)</th>") else { return [] }
      let rest = page[start.upperBound...].prefix { $0 != "\n" }
      return HTMLCheck.cells(String(rest)).compactMap(Double.init)
    }
    func expectClose(_ shown: [Double], _ truth: [Double], digits: Double, _ name: String) {
      #expect(shown.count == truth.count, "\(name): \(shown)")
      for (a, b) in zip(shown, truth) {
        #expect(abs(a - b) <= 0.5 * pow(10, -digits) + 1e-12, "\(name): \(a) against \(b)")
      }
    }
    let o = accelerometer.offset
    expectClose(row("offset"), [o.x, o.y, o.z], digits: 4, "offset")
    let a = accelerometer.matrix
    let g = gyroMatrix
    for (index, (aRow, gRow)) in [(a.row0, g.row0), (a.row1, g.row1), (a.row2, g.row2)]
      .enumerated()
    {
      expectClose(row("A row \(index + 1)"), [aRow.x, aRow.y, aRow.z], digits: 6, "A")
      expectClose(row("G row \(index + 1)"), [gRow.x, gRow.y, gRow.z], digits: 6, "G")
    }
    // A row per pose: its residual and, after a turn, the turn's angle and residual.
    let poses = (1...60).map { row("pose \($0)") }.filter { !$0.isEmpty }
    #expect(poses.count >= 6)
    #expect(poses.contains { $0.count == 3 } && poses.allSatisfy { $0.count == 1 || $0.count == 3 })
  }
}
