import Boards
import Calibration
import Foundation
import Geometry
import MPU6050Simulation
import MotionScenarios
import PlumbRuntime
import Testing

@Suite struct AccelerometerCalibrationTests {
  func simulatedSetup() throws -> PlumbSetup {
    try PlumbSetup.load(boardPath: "\(repositoryRoot)/Boards/simulated.json")
  }

  @Test func theSixPositionProcedureRecoversTheUnitsOffsetAndScale() throws {
    var messages: [String] = []
    let result = try calibrateAccelerometer(
      try simulatedSetup(), options: AccelerometerCalibrationOptions(),
      instruct: { messages.append($0) })
    // The simulated board's unit (seed 1): its injected accelerometer errors.
    let unit = SimulatedMPU6050Unit.typical(seed: 1)
    let diagonal = Vector3(
      unit.accelerometerCrossAxis.row0.x, unit.accelerometerCrossAxis.row1.y,
      unit.accelerometerCrossAxis.row2.z)
    let trueScale = (Vector3(1, 1, 1) + diagonal).scaled(
      by: Vector3(1, 1, 1) + unit.accelerometerScaleError)
    let correction = result.solution.correction
    // Tolerances: 2 s of 0.03 m/s² noise per pose averages to 2e-3 m/s²; the poses' 1–3° tilt
    // costs 1 − cos(3°) = 1.4e-3 of g on the measured axis. Offsets within 0.01 m/s², scale
    // within 2e-3.
    #expect((correction.offset - unit.accelerometerOffsetMetersPerSecondSquared).length < 0.01)
    #expect(abs(correction.scale.x - trueScale.x) < 2e-3)
    #expect(abs(correction.scale.y - trueScale.y) < 2e-3)
    #expect(abs(correction.scale.z - trueScale.z) < 2e-3)
    #expect(result.solution.worstResidual < 0.02)
    #expect(messages.filter { $0.contains("measured") }.count == 6)
    #expect(result.rejections.isEmpty)
  }

  /// The person turns the mounted board, so the faces named are the body's; the chip's own
  /// offsets come out whatever the mounting (issue 24, item 3). A mounting that is not a
  /// quarter turn puts no chip axis up on any body face: then the chip's axes are named.
  @Test(arguments: [
    (Matrix3(rows: Vector3(0, 1, 0), Vector3(1, 0, 0), Vector3(0, 0, -1)), true),
    (Matrix3(Quaternion(axis: .unitZ, angle: 30 * radiansPerDegree)), false),
  ])
  func aMountedBoardIsPosedByItsBodyFaces(mounting: Matrix3, namesBody: Bool) throws {
    var setup = try simulatedSetup()
    setup.board.mounting = mounting
    var messages: [String] = []
    let result = try calibrateAccelerometer(
      setup, options: AccelerometerCalibrationOptions(), instruct: { messages.append($0) })
    let unit = SimulatedMPU6050Unit.typical(seed: 1)
    #expect(
      (result.solution.correction.offset - unit.accelerometerOffsetMetersPerSecondSquared).length
        < 0.01)
    #expect(result.rejections.isEmpty, "\(result.rejections)")
    let first = try #require(messages.first)
    #expect(first.contains(namesBody ? "with its +z axis" : "the chip's +z axis"), "\(first)")
    // With the flipped mounting, the body's +z up is the chip's −z: measured in that order.
    if namesBody { #expect(result.solution.poses.first?.face == .minusZ) }
  }

  @Test func aTiltedPoseIsRefusedWithItsAngleAndTheCorrectedOneTaken() throws {
    var poses = SixPoseMotion.standardPoses
    poses.insert(SixPoseMotion.Pose(up: .unitZ, tiltDegrees: 15, holdSeconds: 6), at: 0)
    var messages: [String] = []
    let result = try calibrateAccelerometer(
      try simulatedSetup(), options: AccelerometerCalibrationOptions(simulatedPoses: poses),
      instruct: { messages.append($0) })
    #expect(result.rejections.count == 1)
    // Placed 15° off level; the uncalibrated accelerometer's own offsets add a degree or two.
    let rejection = try #require(result.rejections.first)
    let angle = rejection.split(separator: " ").drop { $0 != "tilted" }.dropFirst().first
      .flatMap { Int($0.dropLast()) }
    #expect(angle.map { (13...19).contains($0) } == true, "\(rejection)")
    #expect(rejection.contains("more than 10°"))
    #expect(result.solution.poses.count == 6)
    #expect(result.solution.worstResidual < 0.02)
  }

  @Test func theCommandWritesASignedFileTheBoardCanUse() throws {
    let directory = try temporaryDirectory()
    let output = directory.appendingPathComponent("unit.json").path
    let result = try runPlumb([
      "calibrate", "accel", "--board", "Boards/simulated.json", "--output", output,
    ])
    #expect(result.status == 0, "\(result.standardError)")
    let file = try CalibrationFile.load(path: output)
    #expect(file.accelerometer != nil)
    #expect(file.sensor.whoAmI == 0x68)
    #expect(String(decoding: result.standardOutput, as: UTF8.self).contains(file.calibrationIdText))
    // A board file pointing at it validates and runs, and every frame carries the id.
    let boardPath = try simulatedBoard(in: directory, calibration: "unit.json")
    let check = try runPlumb(["check-board", boardPath])
    #expect(check.status == 0, "\(check.standardError)")
    #expect(String(decoding: check.standardOutput, as: UTF8.self).contains(file.calibrationIdText))
  }

  /// The board file line the command prints works as printed: the path from the board file's
  /// folder, not from where the command ran (issue 24: run from a folder above the board file's,
  /// it printed `"calibration": "unit.json"`, which the board file read as its own folder's
  /// unit.json — check-board and run ended with 78, no such file).
  @Test func theBoardFileLineItPrintsWorksAsPrinted() throws {
    let directory = try temporaryDirectory()
    let boards = directory.appendingPathComponent("boards")
    try FileManager.default.createDirectory(at: boards, withIntermediateDirectories: false)
    // The board file without a calibration yet.
    let board = boards.appendingPathComponent("board.json").path
    try String(contentsOfFile: "\(repositoryRoot)/Boards/simulated.json", encoding: .utf8)
      .write(toFile: board, atomically: true, encoding: .utf8)
    let result = try runPlumb(
      ["calibrate", "accel", "--board", "boards/board.json", "--output", "unit.json"],
      in: directory.path)
    #expect(result.status == 0, "\(result.standardError)")
    let text = String(decoding: result.standardOutput, as: UTF8.self)
    let line = try #require(text.split(separator: "\n").first { $0.contains("\"calibration\":") })
    #expect(line.hasSuffix("\"calibration\": \"../unit.json\""), "\(line)")
    // Followed as printed, the board file finds the file, from any folder.
    #expect(try simulatedBoard(in: boards, calibration: "../unit.json") == board)
    for folder in [directory.path, repositoryRoot, boards.path] {
      let check = try runPlumb(["check-board", board], in: folder)
      #expect(check.status == 0, "from \(folder): \(check.standardError)")
    }
  }

  /// A person turns the board through six faces before the file is written: an output that
  /// cannot take the result is refused before the first pose, not after the last.
  @Test func anOutputThatCannotBeWrittenIsRefusedBeforeThePoses() throws {
    let directory = try temporaryDirectory()
    let garbage = directory.appendingPathComponent("garbage.json").path
    try "{garbage".write(toFile: garbage, atomically: true, encoding: .utf8)
    let board = directory.appendingPathComponent("board.json").path
    try FileManager.default.copyItem(
      atPath: "\(repositoryRoot)/Boards/simulated.json", toPath: board)
    let boardBytes = try Data(contentsOf: URL(fileURLWithPath: board))
    let cases: [(output: String, status: Int32, says: String)] = [
      (garbage, 65, "\(garbage)"),
      (board, 64, "--output \(board) is the board file"),
      ("/nonexistent-folder/unit.json", 73, "/nonexistent-folder"),
    ]
    for c in cases {
      let result = try runPlumb(["calibrate", "accel", "--board", board, "--output", c.output])
      #expect(result.status == c.status, "\(c.output): \(result.standardError)")
      #expect(result.standardError.contains(c.says), "\(result.standardError)")
      #expect(!result.standardError.contains("put the board"), "\(result.standardError)")
    }
    #expect(try String(contentsOfFile: garbage, encoding: .utf8) == "{garbage")
    #expect(try Data(contentsOf: URL(fileURLWithPath: board)) == boardBytes)
  }

  /// The solution is printed for people: offsets to 0.1 mm/s², scales to 1 ppm, not 17 digits.
  @Test func theSolutionIsPrintedReadably() throws {
    let directory = try temporaryDirectory()
    let output = directory.appendingPathComponent("unit.json").path
    let result = try runPlumb([
      "calibrate", "accel", "--board", "Boards/simulated.json", "--output", output,
    ])
    #expect(result.status == 0, "\(result.standardError)")
    let text = String(decoding: result.standardOutput, as: UTF8.self)
    let numbers = text.split(whereSeparator: { " ()°:".contains($0) }).compactMap { Double($0) }
    #expect(numbers.count >= 15, "\(text)")
    for word in text.split(whereSeparator: { " ()°:".contains($0) }) where Double(word) != nil {
      let fraction = word.split(separator: ".").dropFirst().first ?? ""
      #expect(fraction.count <= 6, "\(word) in \(text)")
    }
  }

  /// The full matrix assumes level faces; the simulated person holds them up to ~3° off, which
  /// the matrix takes for misalignment: the command says so (per-axis is not affected).
  @Test func aFullMatrixFromTiltedPosesIsWarnedAbout() throws {
    let directory = try temporaryDirectory()
    let full = try runPlumb([
      "calibrate", "accel", "--full-matrix", "--board", "Boards/simulated.json", "--output",
      directory.appendingPathComponent("full.json").path,
    ])
    #expect(full.status == 0, "\(full.standardError)")
    #expect(
      full.standardError.contains("--full-matrix takes a tilted pose"), "\(full.standardError)")
    let perAxis = try runPlumb([
      "calibrate", "accel", "--board", "Boards/simulated.json", "--output",
      directory.appendingPathComponent("axis.json").path,
    ])
    #expect(perAxis.status == 0 && !perAxis.standardError.contains("tilted pose"))
  }
}
