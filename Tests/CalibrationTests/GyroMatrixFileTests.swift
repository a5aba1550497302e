import ByteFormats
import Calibration
import Geometry
import JSON
import Testing

/// Schema 2: the gyroscope's scale-and-misalignment matrix (`plumb calibrate imu`).
@Suite struct GyroMatrixFileTests {
  static let matrix = Matrix3(
    rows: Vector3(0.979, -0.0023, 0.0113), Vector3(-0.0048, 0.9977, 0.0098),
    Vector3(-0.0064, 0.0061, 0.9897))

  static var withMatrix: CalibrationFile {
    var file = CalibrationFileTests.sample
    file.gyroscope?.matrix = matrix
    return file
  }

  func parse(_ text: String) throws -> CalibrationFile {
    try CalibrationFile.parse(Array(text.utf8), path: "unit3.json")
  }

  @Test func aFileWithAGyroMatrixIsSchema2AndRoundTrips() throws {
    let text = Self.withMatrix.formatted()
    #expect(text.hasPrefix("{\n  \"schema\": 2,"))
    #expect(text.contains("\"matrix\": [\n      [0.979, -0.0023, 0.0113],"))
    let read = try parse(text)
    #expect(read.gyroscope?.matrix == Self.matrix)
    #expect(read.calibrationId == Self.withMatrix.calibrationId)
    #expect(read.formatted() == text)
  }

  /// Older Plumb reads schema 1 only: a file without a matrix stays schema 1 so it still can,
  /// and a schema 1 file read and written back (its live section) keeps its bytes and id.
  @Test func aFileWithoutOneStaysSchema1AndKeepsItsId() throws {
    let text = CalibrationFileTests.sample.formatted()
    #expect(text.hasPrefix("{\n  \"schema\": 1,"))
    var read = try parse(text)
    read.live = LiveBiasEstimate(
      gyroBiasRadiansPerSecond: Vector3(0, 0, 0), temperatureCelsius: 30,
      written: "2026-12-05T10:00:00Z")
    #expect(read.calibrationId == CalibrationFileTests.sample.calibrationId)
    #expect(read.formatted().hasPrefix("{\n  \"schema\": 1,"))
  }

  @Test func aSchema2FileWithoutAMatrixKeepsItsSchemaAndHash() throws {
    var file = CalibrationFileTests.sample
    file.schema = 2
    let text = file.formatted()
    #expect(text.hasPrefix("{\n  \"schema\": 2,"))
    let read = try parse(text)
    #expect(read.schema == 2)
    #expect(read.calibrationId == file.calibrationId)
  }

  @Test func aMatrixInASchema1FileIsRefusedWithTheFix() throws {
    let text = Self.withMatrix.formatted().replacing("\"schema\": 2", with: "\"schema\": 1")
    #expect {
      try CalibrationFile.parse(Array(text.utf8), path: "unit3.json", verifyingHash: false)
    } throws: { error in
      "\(error)".contains("gyroscope.matrix") && "\(error)".contains("needs schema 2")
        && "\(error)".contains("plumb calibrate imu")
    }
  }

  /// `plumb check-board` loads the calibration: a singular, mirroring or implausible matrix is
  /// refused naming the entry, the value, the range and the reason.
  @Test(arguments: [
    (
      "[0.979, -0.0023, 0.0113]", "[0, 0, 0]", "gyroscope.matrix[0][0]",
      "0 makes the matrix singular"
    ),
    (
      "[0.979, -0.0023, 0.0113]", "[-0.979, -0.0023, 0.0113]", "gyroscope.matrix[0][0]",
      "mirrors an axis"
    ),
    (
      "[0.979, -0.0023, 0.0113]", "[1.5, -0.0023, 0.0113]", "gyroscope.matrix[0][0]",
      "expected 0.8 … 1.25"
    ),
    (
      "[0.979, -0.0023, 0.0113]", "[0.979, 0.3, 0.0113]", "gyroscope.matrix[0][1]",
      "cross-axis sensitivity"
    ),
    ("[0.979, -0.0023, 0.0113]", "[0.979, -0.0023]", "gyroscope.matrix[0]", "expected 3 numbers"),
  ])
  func anImplausibleMatrixIsRefusedWithTheReason(
    find: String, replace: String, key: String, reason: String
  ) throws {
    let text = Self.withMatrix.formatted()
    #expect(text.contains(find))
    let edited = text.replacing(find, with: replace)
    #expect {
      try CalibrationFile.parse(Array(edited.utf8), path: "unit3.json", verifyingHash: false)
    } throws: { error in
      guard case .content(_, let content) = error as? CalibrationFileError else { return false }
      return content.keyPath == key && content.message.contains(reason)
    }
  }

  /// The limits keep every accepted matrix invertible and orientation-preserving (no
  /// determinant check is needed beside them): the corners of the allowed box, all 2⁹ of them.
  @Test func theLimitsKeepEveryAcceptedMatrixInvertible() throws {
    var smallest = Double.infinity
    for corner in 0..<512 {
      func pick(_ bit: Int, _ low: Double, _ high: Double) -> Double {
        corner & (1 << bit) == 0 ? low : high
      }
      let m = Matrix3(
        rows: Vector3(pick(0, 0.8, 1.25), pick(1, -0.1, 0.1), pick(2, -0.1, 0.1)),
        Vector3(pick(3, -0.1, 0.1), pick(4, 0.8, 1.25), pick(5, -0.1, 0.1)),
        Vector3(pick(6, -0.1, 0.1), pick(7, -0.1, 0.1), pick(8, 0.8, 1.25)))
      smallest = min(smallest, m.determinant)
    }
    #expect(smallest > 0.2)
  }
}
