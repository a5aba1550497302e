import ByteFormats
import Calibration
import Geometry
import JSON
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct CalibrationFileTests {
  static let sample = CalibrationFile(
    sensor: SensorIdentity(whoAmI: 0x68, name: "MPU-6050", label: "bench unit 3"),
    created: "2026-12-02T10:15:00Z",
    gyroscope: GyroCalibration(
      biasRadiansPerSecond: Vector3(0.0123, -0.0456, 0.0789),
      biasUncertaintyRadiansPerSecond: Vector3(1.2e-5, 1.1e-5, 1.3e-5),
      referenceTemperatureCelsius: 31.5, biasPerDegreeCelsius: Vector3(2e-4, -1e-4, 5e-5),
      biasPerDegreeCelsiusSquared: Vector3(1e-6, 0, 0), temperatureRangeCelsius: 22.4...41.9),
    accelerometer: AccelerometerCorrection(
      offset: Vector3(0.15, -0.2, 0.35), scale: Vector3(1.02, 0.985, 1.01)),
    noise: NoiseFigures(
      samplePeriodSeconds: 0.01,
      gyroscope: SensorNoiseFigures(
        randomWalk: [2.0e-4, 2.1e-4, 1.9e-4], biasInstability: [1e-4, 9e-5, 1.1e-4],
        rateRandomWalk: [2e-5, nil, 3e-5]),
      accelerometer: SensorNoiseFigures(
        randomWalk: [3e-3, 3.1e-3, 4e-3], biasInstability: [1e-3, 1e-3, 2e-3],
        rateRandomWalk: [nil, nil, nil])),
    restDetector: RestDetectorThresholds(
      gyroDeviationRadiansPerSecond: 0.0106, accelDeviationMetersPerSecondSquared: 0.12,
      windowSeconds: 1.5, dwellSeconds: 0.5, noiseMultiple: 3))

  func parse(_ text: String) throws -> CalibrationFile {
    try CalibrationFile.parse(Array(text.utf8), path: "unit3.json")
  }

  @Test func roundTripsAndWritesDeterministically() throws {
    let text = CalibrationFileTests.sample.formatted()
    #expect(text == CalibrationFileTests.sample.formatted())
    let read = try parse(text)
    #expect(read == CalibrationFileTests.sample)
    #expect(read.formatted() == text)
    #expect(text.contains("\"calibrationId\": \"\(read.calibrationIdText)\""))
    #expect(text.contains("\"whoAmI\": \"0x68\""))
    #expect(text.contains("\"rateRandomWalkRadiansPerSecondPerRootSecond\": [2e-05, null, 3e-05]"))
    #expect(text.contains("\"scale\": [1.02, 0.985, 1.01]"))
  }

  /// The sample's hash and id, computed independently once with Python:
  /// `hashlib.sha256(json.dumps(doc_without_id_hash_live, sort_keys=True, separators=(",", ":"),
  /// ensure_ascii=False).encode())`. Pins the canonical form and the hash together.
  @Test func contentHashMatchesAnIndependentComputation() {
    let file = CalibrationFileTests.sample
    #expect(
      file.contentHashText
        == "sha256:36447dbe164f6bad86fb46757f89f41db7684d366e1b4217416a385b31b1955f")
    #expect(file.calibrationIdText == "0x36447dbe")
    #expect(file.calibrationId == 0x3644_7dbe)
  }

  @Test func theIdIsTheFirstFourBytesOfTheContentHash() {
    let file = CalibrationFileTests.sample
    let hash = file.contentHash
    #expect(file.contentHashText == "sha256:" + SHA256.hex(hash))
    let id = UInt32(hash[0]) << 24 | UInt32(hash[1]) << 16 | UInt32(hash[2]) << 8 | UInt32(hash[3])
    #expect(file.calibrationId == id)
    #expect(file.calibrationIdText.count == 10)
    var changed = file
    changed.sensor.label = "bench unit 4"
    #expect(changed.calibrationId != file.calibrationId)
  }

  @Test func theLiveSectionIsOutsideTheHash() throws {
    var file = CalibrationFileTests.sample
    let before = file.formatted()
    file.live = LiveBiasEstimate(
      gyroBiasRadiansPerSecond: Vector3(0.0125, -0.0450, 0.0790), temperatureCelsius: 36.2,
      written: "2026-12-03T08:00:00Z")
    let after = file.formatted()
    #expect(file.calibrationId == CalibrationFileTests.sample.calibrationId)
    // Every bench line is unchanged: the live section is appended after them.
    let benchPart = String(before.dropLast(3))  // without the final "\n}\n"
    #expect(after.hasPrefix(benchPart))
    let read = try parse(after)
    #expect(read.live == file.live)
    #expect(read.gyroscope == CalibrationFileTests.sample.gyroscope)
  }

  @Test func writingLiveBackKeepsBenchBytes() throws {
    let path = "/tmp/plumb-calibration-test-\(getpid()).json"
    defer { unlink(path) }
    try CalibrationFileTests.sample.write(toPath: path)
    let live = LiveBiasEstimate(
      gyroBiasRadiansPerSecond: Vector3(0.012, -0.046, 0.079), temperatureCelsius: 35,
      written: "2026-12-03T08:00:00Z")
    try CalibrationFile.writeLive(live, toPath: path)
    let loaded = try CalibrationFile.load(path: path)
    #expect(loaded.live == live)
    #expect(loaded.calibrationId == CalibrationFileTests.sample.calibrationId)
    #expect(loaded.gyroscope == CalibrationFileTests.sample.gyroscope)
  }

  /// A file the loader would refuse is not written: `plumb-cal save` on a recording of a unit
  /// that moved, say, would otherwise leave a file the firmware cannot load.
  @Test func aFileThatWouldNotLoadIsNotWritten() {
    var file = CalibrationFileTests.sample
    file.gyroscope?.biasRadiansPerSecond = Vector3(40, 0, 0)
    let path = "/tmp/plumb-calibration-test-\(getpid())-refused.json"
    defer { unlink(path) }
    #expect {
      try file.write(toPath: path)
    } throws: { error in
      guard case .content(path, let content) = error as? CalibrationFileError else { return false }
      return content.keyPath == "gyroscope.biasRadiansPerSecond[0]"
        && content.message.contains("40 is out of range: expected -34.9 … 34.9 rad/s")
    }
    #expect(access(path, F_OK) != 0)
  }

  /// JSON has no NaN or infinity: a non-finite value (an analysis of degenerate data, a live
  /// bias gone wrong) is refused with its key, not a trap in the number formatter.
  @Test(arguments: [Double.nan, .infinity, -.infinity])
  func aNonFiniteValueIsRefusedNotATrap(value: Double) {
    let path = "/tmp/plumb-calibration-test-\(getpid())-nonfinite.json"
    defer { unlink(path) }
    var file = CalibrationFileTests.sample
    file.gyroscope?.biasRadiansPerSecond = Vector3(0, value, 0)
    #expect {
      try file.write(toPath: path)
    } throws: { error in
      guard case .content(path, let content) = error as? CalibrationFileError else { return false }
      return content.keyPath == "gyroscope.biasRadiansPerSecond[1]"
        && content.message.contains("not a finite number")
    }
    var live = CalibrationFileTests.sample
    live.live = LiveBiasEstimate(
      gyroBiasRadiansPerSecond: Vector3(0, 0, 0), temperatureCelsius: value,
      written: "2026-12-02T10:00:00Z")
    #expect {
      try live.write(toPath: path)
    } throws: { error in
      guard case .content(_, let content) = error as? CalibrationFileError else { return false }
      return content.keyPath == "live.temperatureCelsius"
    }
    #expect(access(path, F_OK) != 0)
  }

  @Test func aHandEditIsRejectedWithHowToReSign() throws {
    let text = CalibrationFileTests.sample.formatted().replacingOccurrences(
      "0.0123", with: "0.0124")
    #expect {
      try parse(text)
    } throws: { error in
      guard case .hashMismatch(_, let content) = error as? CalibrationFileError else {
        return false
      }
      return content.keyPath == "contentHash" && content.position?.line == 4
        && content.message.contains("plumb-cal sign unit3.json")
        && content.message.contains("Regenerate")
    }
    let accepted = try CalibrationFile.parse(Array(text.utf8), path: "x", verifyingHash: false)
    #expect(accepted.gyroscope?.biasRadiansPerSecond.x == 0.0124)
    // Re-signing gives a file that loads, with a new id.
    let resigned = try parse(accepted.formatted())
    #expect(resigned.calibrationId != CalibrationFileTests.sample.calibrationId)
  }

  @Test func reformattingDoesNotBreakTheHash() throws {
    // Reindented, keys reordered, numbers written differently: the values are the same.
    let text = CalibrationFileTests.sample.formatted()
    let document = try JSONDocument(parsing: text)
    guard case .object(let members) = document.root else {
      Issue.record("not an object")
      return
    }
    let reordered = JSONValue.object(members.reversed()).compact().replacingOccurrences(
      "31.5", with: "31.50")
    #expect(try parse(reordered) == CalibrationFileTests.sample)
  }

  @Test(arguments: [
    ("\"whoAmI\": \"0x68\"", "\"whoAmI\": \"0x168\"", "sensor.whoAmI", "out of range"),
    ("\"created\": \"2026-12-02T10:15:00Z\"", "\"created\": \"yesterday\"", "created", "ISO 8601"),
    (
      "\"scale\": [1.02, 0.985, 1.01]", "\"scale\": [1.02, 0.985]", "accelerometer.scale",
      "expected 3 numbers"
    ),
    (
      "\"scale\": [1.02, 0.985, 1.01]", "\"scale\": [1.02, 0.985, 0]", "accelerometer.scale[2]",
      "0 is out of range: expected 0.5 … 2; a scale factor (reading per true specific force) outside it is not a working axis"
    ),
    // Found by the fuzzing pass: finite but impossible values loaded silently.
    (
      "\"scale\": [1.02, 0.985, 1.01]", "\"scale\": [1e300, 0.985, 1.01]",
      "accelerometer.scale[0]", "1e+300 is out of range: expected 0.5 … 2"
    ),
    (
      "0.0123,", "40,", "gyroscope.biasRadiansPerSecond[0]",
      "40 is out of range: expected -34.9 … 34.9 rad/s; no bias of a working gyro exceeds its ±2000 °/s full scale: measure it again with `plumb-cal gyro`"
    ),
    (
      "0.35]", "-200]", "accelerometer.offsetMetersPerSecondSquared[2]",
      "-200 is out of range: expected -156.9 … 156.9 m/s²; no offset of a working accelerometer exceeds its ±16 g full scale"
    ),
    (
      "[2e-05, null, 3e-05]", "[2e-05, null, -3e-05]",
      "noise.gyroscope.rateRandomWalkRadiansPerSecondPerRootSecond[2]",
      "-3e-05 is out of range: expected 0 … 34.9 rad/s/√s; a noise figure is not negative"
    ),
    (
      "0.0002,", "0.5,", "gyroscope.biasPerDegreeCelsius[0]",
      "0.5 is out of range: expected -0.28 … 0.28 rad/s per °C; the bias cannot move by more than the ±2000 °/s full scale"
    ),
    (
      "41.9", "1e300", "gyroscope.temperatureRangeCelsius[1]",
      "1e+300 is out of range: expected -60 … 150 °C; that is already wider than the −40 … 85 °C"
    ),
    (
      "\"dwellSeconds\"", "\"dwelSeconds\"", "restDetector.dwelSeconds",
      "did you mean \"dwellSeconds\""
    ),
    ("\"schema\": 1", "\"schema\": 3", "schema", "schema 1 and 2, not 3"),
    (
      "\"windowSeconds\": 1.5", "\"windowSeconds\": \"1.5\"", "restDetector.windowSeconds",
      "expected a number"
    ),
  ])
  func contentErrorsNameTheKeyAndLine(find: String, replace: String, key: String, message: String)
    throws
  {
    let text = CalibrationFileTests.sample.formatted()
    #expect(text.contains(find))
    let edited = text.replacingOccurrences(find, with: replace)
    let line =
      text.split(separator: "\n", omittingEmptySubsequences: false)
      .firstIndex { $0.contains(find) }! + 1
    #expect {
      try parse(edited)
    } throws: { error in
      guard case .content(_, let content) = error as? CalibrationFileError else { return false }
      return content.keyPath == key && content.message.contains(message)
        && (content.position?.line ?? 0) >= line - 1 && (content.position?.line ?? 0) <= line + 1
        && "\(error)".contains("line")
    }
  }
}

extension String {
  func replacingOccurrences(_ target: String, with replacement: String) -> String {
    split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
  }
}

/// Plumb's SHA-256 was wrong for a message 63 bytes past a multiple of 64 until 2026-12-05
/// (`SHA256Tests.everyPaddingCase`). A file signed then whose canonical text has such a length
/// (this one: 1151 bytes) carries the old digest. It is still read, with its id — the id every
/// frame of a unit using it carried — and rewritten unchanged with it; re-signed, it gets the
/// standard hash, which Python's hashlib (and the snippet in CALIBRATION-FILE.md) gives.
@Suite struct LegacyContentHashTests {
  /// Written by `plumb-cal sign` before the fix (the fuzz corpus's matrix-live.json, with this
  /// label and a reference temperature of 25 °C).
  static let signedBeforeTheFix = #"""
    {
      "schema": 1,
      "calibrationId": "0xc03adf6a",
      "contentHash": "sha256:c03adf6ae76817c2d2613c210922efd44515029c5add7916b17ff8b8166b45a6",
      "sensor": {
        "whoAmI": "0x68",
        "name": "MPU-6050",
        "label": "bench \"3\"\tÄé☺😀 \u0008\u000c\u0001 \\ /"
      },
      "created": "2026-12-02T10:15:00Z",
      "gyroscope": {
        "biasRadiansPerSecond": [0.0123, -0.0045, 0.0067],
        "biasUncertaintyRadiansPerSecond": [1e-05, 2e-05, 1.5e-05],
        "referenceTemperatureCelsius": 25,
        "biasPerDegreeCelsius": [0.0002, -0.0001, 5e-05],
        "biasPerDegreeCelsiusSquared": [1e-06, -2e-06, 0],
        "temperatureRangeCelsius": [25.25, 40.5]
      },
      "accelerometer": {
        "offsetMetersPerSecondSquared": [0.1, 0.2, 0.3],
        "matrix": [
          [1.01, 0.01, 0],
          [0, 0.99, 0.02],
          [0, 0, 1]
        ]
      },
      "noise": {
        "samplePeriodSeconds": 0.01,
        "gyroscope": {
          "angleRandomWalkRadiansPerRootSecond": [0.0001, 0.00012, 9e-05],
          "biasInstabilityRadiansPerSecond": [2e-05, 3e-05, 2.5e-05],
          "rateRandomWalkRadiansPerSecondPerRootSecond": [1e-06, null, 2e-06]
        },
        "accelerometer": {
          "velocityRandomWalkMetersPerSecondPerRootSecond": [0.002, 0.0021, 0.003],
          "biasInstabilityMetersPerSecondSquared": [0.0004, 0.0005, 0.0006],
          "rateRandomWalkMetersPerSecondSquaredPerRootSecond": [null, null, null]
        }
      },
      "restDetector": {
        "gyroDeviationRadiansPerSecond": 0.0106,
        "accelDeviationMetersPerSecondSquared": 0.12,
        "windowSeconds": 1.5,
        "dwellSeconds": 0.5,
        "noiseMultiple": 3
      },
      "live": {
        "gyroBiasRadiansPerSecond": [0.001, -0.002, 0.003],
        "temperatureCelsius": 30.5,
        "written": "2026-12-03T08:00:00.25Z"
      }
    }
    """#

  @Test func aFileSignedWithTheOldDigestIsReadWithItsId() throws {
    let file = try CalibrationFile.parse(Array(Self.signedBeforeTheFix.utf8), path: "unit-3.json")
    #expect(file.contentHashAlgorithm == .plumbBefore2026_12_05)
    #expect(file.calibrationIdText == "0xc03adf6a")
    // Rewritten unchanged (as the firmware writes its live section back): the same bytes.
    #expect(file.formatted() == Self.signedBeforeTheFix + "\n")
    // Re-signed: the standard SHA-256 (hashlib's), a new id.
    var resigned = file
    resigned.contentHashAlgorithm = .sha256
    #expect(
      resigned.contentHashText
        == "sha256:71db8265605414ccdc11dd98848b7049e19e80093ed167114b2bae4d6198da90")
    let reread = try CalibrationFile.parse(Array(resigned.formatted().utf8), path: "unit-3.json")
    #expect(reread.contentHashAlgorithm == .sha256)
    #expect(reread.calibrationIdText == "0x71db8265")
  }

  /// The old digest is accepted only where it differs from SHA-256's by the old fault: a file
  /// whose stored hash is neither is the edit it always was.
  @Test func anEditedOldFileIsStillAnEdit() {
    let edited = Self.signedBeforeTheFix.replacing(
      "\"referenceTemperatureCelsius\": 25", with: "\"referenceTemperatureCelsius\": 26")
    #expect(edited != Self.signedBeforeTheFix)
    #expect(throws: CalibrationFileError.self) {
      try CalibrationFile.parse(Array(edited.utf8), path: "unit-3.json")
    }
  }
}
