import Boards
import Geometry
import Testing

/// The repository's root, found from this file's path.
let repositoryRoot: String = {
  var path = #filePath
  for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
  return path
}()

@Suite struct ShippedBoardsTests {
  @Test(arguments: [
    "raspberry-pi-4", "raspberry-pi-5", "raspberry-pi-zero-2-w", "beaglebone-black", "simulated",
  ])
  func everyShippedBoardLoads(name: String) throws {
    let board = try BoardFile.load(path: "\(repositoryRoot)/Boards/\(name).json")
    #expect(board.name == name)
    #expect(board.mounting.isRotation())
    #expect(board.sensor.sampleRateHz == 100)
    // The DLPF must stay under Nyquist on every shipped board (seed 000's aliasing rule).
    #expect(Double(board.sensor.dlpfBandwidthHz) < board.sensor.sampleRateHz / 2)
    #expect(board.isSimulated == (name == "simulated"))
  }

  @Test func raspberryPi5FindsItsHeaderChipByLabel() throws {
    // Its number moved from gpiochip4 to gpiochip0 in kernel 6.6.45; the label did not.
    let board = try BoardFile.load(path: "\(repositoryRoot)/Boards/raspberry-pi-5.json")
    #expect(board.dataReady.chip == "pinctrl-rp1")
    #expect(board.dataReady.line == .offset(17))
  }
}

@Suite struct BoardFileValidationTests {
  let valid = """
    {
      "schema": 1,
      "name": "test",
      "i2c": {"bus": "/dev/i2c-1", "address": "0x69"},
      "dataReady": {"chip": "gpiochip0", "line": "GPIO17"},
      "serial": {"device": "/dev/ttyUSB0", "baud": 921600},
      "mounting": {"rollPitchYawDegrees": [0, 0, 90]},
      "calibration": "cal/unit1.json"
    }
    """

  func parse(_ text: String) throws(BoardFileError) -> BoardDefinition {
    try BoardFile.parse(Array(text.utf8), path: "/etc/plumb/board.json")
  }

  @Test func readsEveryKeyAndAppliesDefaults() throws {
    let board = try parse(valid)
    #expect(board.i2c.address == 0x69)
    #expect(board.dataReady.line == .name("GPIO17"))
    #expect(board.serial.baudRate == 921_600)
    #expect(board.calibrationPath == "/etc/plumb/cal/unit1.json")
    #expect(board.sensor == SensorSettings())
    #expect(board.output.rateHz == 100)
    // Yaw 90°: the sensor's x axis is the body's y axis.
    let x = board.mounting * Vector3.unitX
    #expect(abs(x.y - 1) < 1e-12 && abs(x.x) < 1e-12)
  }

  @Test(arguments: [
    (#""baud": 921600"#, #""baud": 100000"#, "key \"serial.baud\"", "not a supported baud rate"),
    (#""address": "0x69""#, #""address": "0x169""#, "key \"i2c.address\"", "out of range"),
    (#""bus": "/dev/i2c-1""#, #""bus": "i2c-1""#, "key \"i2c.bus\"", "/dev/i2c-1"),
    (#""schema": 1"#, #""schema": 2"#, "key \"schema\"", "schema 1, not 2"),
    (#""dataReady""#, #""dataready""#, "key \"dataready\"", "did you mean \"dataReady\"?"),
    (
      #""rollPitchYawDegrees": [0, 0, 90]"#, #""sensorToBody": [[1,0,0],[0,1,0],[0,0,-1]]"#,
      "key \"mounting.sensorToBody\"", "not a rotation"
    ),
    // Found by BoardFileMutationTests: the determinant overflowed and formatting it trapped.
    (
      #""rollPitchYawDegrees": [0, 0, 90]"#, #""sensorToBody": [[1e300,0,0],[0,1e300,0],[0,0,1]]"#,
      "key \"mounting.sensorToBody\"", "an entry of 1e+300, where a rotation's entries are"
    ),
    (
      #""calibration": "cal/unit1.json""#,
      #""calibration": "c.json", "sensor": {"dlpfHz": 50}"#, "key \"sensor.dlpfHz\"",
      "260, 184, 94, 44, 21, 10, 5"
    ),
    (
      #""calibration": "cal/unit1.json""#, #""output": {"format": "mavlink", "rateHz": 30}"#,
      "key \"output.rateHz\"", "must divide"
    ),
    (
      #""calibration": "cal/unit1.json""#, #""output": {"format": "csv"}"#,
      "key \"output.format\"", "\"binary\", \"binary-imu\", \"text\", \"mavlink\""
    ),
    (#""name": "test","#, "", "key \"name\"", "is missing"),
    // Found by the fuzzing pass: a finite but meaningless angle (1e300°) loaded silently.
    (
      #""rollPitchYawDegrees": [0, 0, 90]"#, #""rollPitchYawDegrees": [0, 0, 1e300]"#,
      "key \"mounting.rollPitchYawDegrees[2]\"",
      "1e+300 is out of range: expected -360 … 360 °; a mounting angle is at most one turn either way"
    ),
    (
      #""rollPitchYawDegrees": [0, 0, 90]"#, #""rollPitchYawDegrees": [-361, 0, 90]"#,
      "key \"mounting.rollPitchYawDegrees[0]\"", "-361 is out of range: expected -360 … 360 °"
    ),
    (
      #""baud": 921600"#, #""baud": 1e300"#, "key \"serial.baud\"",
      "1e+300 is not a supported baud rate: use one of 9600,"
    ),
    // Found by the board bring-up audit: a copy of a shipped board (mounted by its identity
    // matrix) given angles as well kept the matrix and ignored the angles without a word.
    (
      #""rollPitchYawDegrees": [0, 0, 90]"#,
      #""sensorToBody": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "rollPitchYawDegrees": [0, 0, 90]"#,
      "key \"mounting\"", "not both"
    ),
    // Found by the board bring-up audit: the firmware sends whole numbers of frames per second,
    // so 0.5 Hz was sent at 1 Hz (and 0.1 Hz refused as "output rate 0 Hz") after check-board
    // had said OK.
    (
      #""calibration": "cal/unit1.json""#, #""output": {"format": "text", "rateHz": 0.5}"#,
      "key \"output.rateHz\"", "0.5 Hz is not a whole number of frames per second"
    ),
    // ...and a sample rate that is not a whole number of hertz leaves no output rate at all: it
    // passed check-board and every run refused it.
    (
      #""calibration": "cal/unit1.json""#, #""sensor": {"sampleRateHz": 166.66666666666666}"#,
      "key \"sensor.sampleRateHz\"", "166.66666666666666 Hz is not a whole number of hertz"
    ),
  ])
  func contentErrorsNameTheKeyAndTheFix(
    original: String, replacement: String, key: String, fix: String
  ) {
    let text = valid.replacingFirst(original, with: replacement)
    #expect(text != valid)
    #expect {
      _ = try parse(text)
    } throws: { error in
      let message = "\(error)"
      return message.contains("/etc/plumb/board.json") && message.contains(key)
        && message.contains(fix)
    }
  }

  @Test func mountingAnglesOfUpToOneTurnEitherWayLoad() throws {
    let text = valid.replacingFirst("[0, 0, 90]", with: "[-360, 360, -90]")
    #expect(text != valid)
    let board = try parse(text)
    // Roll and pitch of a whole turn are no rotation; yaw -90°: the sensor's x is the body's -y.
    let x = board.mounting * Vector3.unitX
    #expect(abs(x.y + 1) < 1e-12 && abs(x.x) < 1e-12)
  }

  @Test func syntaxErrorsGiveTheLine() {
    #expect {
      _ = try parse("{\n  \"schema\": 1,\n  \"name\": \"x\",\n}")
    } throws: { error in
      "\(error)".contains("line 4") && "\(error)".contains("trailing comma")
    }
  }

  @Test func aMissingFileSaysSo() {
    #expect {
      _ = try BoardFile.load(path: "/nonexistent/board.json")
    } throws: { error in
      "\(error)"
        == "board file /nonexistent/board.json: no such file (the board files that come with Plumb are in Boards/)"
    }
  }

  @Test func simulatedBusAndSimulationSectionGoTogether() {
    let text = valid.replacingFirst(#""bus": "/dev/i2c-1""#, with: #""bus": "simulated""#)
    #expect {
      _ = try parse(text)
    } throws: { error in
      "\(error)".contains("needs a \"simulation\" section")
    }
  }
}

extension String {
  func replacingFirst(_ target: String, with replacement: String) -> String {
    guard let range = range(of: target) else { return self }
    return replaceSubrange(range, with: replacement)
  }

  private func range(of target: String) -> Range<String.Index>? {
    var index = startIndex
    while index < endIndex {
      if self[index...].hasPrefix(target) {
        return index..<self.index(index, offsetBy: target.count)
      }
      index = self.index(after: index)
    }
    return nil
  }

  private func replaceSubrange(_ range: Range<String.Index>, with replacement: String) -> String {
    String(self[..<range.lowerBound]) + replacement + String(self[range.upperBound...])
  }
}

/// What `plumb calibrate` tells a person to put in the board file's `"calibration"`: the path
/// from the board file's folder, which `resolve` reads back as the file the command wrote,
/// wherever the command was run from (issue 24: it printed the path as given, relative to the
/// command's folder, and following it gave 78, no such file).
@Suite struct CalibrationReferenceTests {
  /// (board file, calibration written, working directory, what the board file must say).
  static let cases: [(String, String, String, String)] = [
    ("Boards/simulated.json", "sim-cal.json", "/home/pi/plumb", "../sim-cal.json"),
    ("Boards/simulated.json", "Boards/cal/unit.json", "/home/pi/plumb", "cal/unit.json"),
    ("board.json", "cal/unit.json", "/home/pi", "cal/unit.json"),
    ("/etc/plumb/board.json", "/etc/plumb/calibration/unit1.json", "/", "calibration/unit1.json"),
    ("/etc/plumb/board.json", "unit1.json", "/etc/plumb/calibration", "calibration/unit1.json"),
    ("/etc/plumb/board.json", "/home/pi/unit1.json", "/tmp", "/home/pi/unit1.json"),
    ("./a/../b/board.json", "./b/./c/../unit.json", "/srv", "unit.json"),
    ("/srv/x/y/board.json", "/srv/z/unit.json", "/", "../../z/unit.json"),
  ]

  @Test(arguments: cases.indices)
  func thePathIsFromTheBoardFilesFolder(index: Int) {
    let (board, written, directory, expected) = Self.cases[index]
    let reference = BoardFile.calibrationReference(
      to: written, boardPath: board, workingDirectory: directory)
    #expect(reference == expected, "\(board), \(written) from \(directory)")
    // Read back as the board file reads it, it is the file written.
    let boardAbsolute = board.hasPrefix("/") ? board : directory + "/" + board
    let resolved = BoardFile.resolve(reference, against: boardAbsolute)
    let writtenAbsolute = written.hasPrefix("/") ? written : directory + "/" + written
    #expect(folded(resolved) == folded(writtenAbsolute), "\(resolved)")
  }

  /// A path with `.` and `..` folded (the test's own reading, for comparing).
  func folded(_ path: String) -> String {
    var parts: [Substring] = []
    for part in path.split(separator: "/") where part != "." {
      if part == ".." { _ = parts.popLast() } else { parts.append(part) }
    }
    return "/" + parts.joined(separator: "/")
  }
}
