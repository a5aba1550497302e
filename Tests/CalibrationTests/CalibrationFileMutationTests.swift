import Calibration
import JSON
import TestSupport
import Testing

/// Damaged calibration files, made by seeded mutation of a full one: each is accepted or refused
/// with a message naming the file, never a trap; what is accepted writes back and reads again.
@Suite struct CalibrationFileMutationTests {
  /// A file with every section, in both accelerometer forms (per-axis scale and full matrix).
  static let fullFiles: [CalibrationFile] = {
    var full = CalibrationFileTests.sample
    full.live = LiveBiasEstimate(
      gyroBiasRadiansPerSecond: .init(1e-3, -2e-3, 3e-3), temperatureCelsius: 30.5,
      written: "2026-12-02T10:15:00.25Z")
    var matrixForm = full
    matrixForm.accelerometer = AccelerometerCorrection(
      offset: .init(0.1, 0.2, 0.3),
      matrix: .init(rows: .init(1.01, 0.01, 0), .init(0, 0.99, 0.02), .init(0, 0, 1)))
    // Schema 2: the gyroscope's matrix.
    var gyroMatrix = matrixForm
    gyroMatrix.gyroscope?.matrix = .init(
      rows: .init(0.98, -0.002, 0.011), .init(-0.005, 1.01, 0.01), .init(-0.006, 0.006, 0.99))
    return [full, matrixForm, gyroMatrix]
  }()

  @Test("3000 seeded mutants of a calibration file load or fail naming the file")
  func mutantsLoadOrFailNamingTheFile() throws {
    let originals = Self.fullFiles.map { Array($0.formatted().utf8) }
    let path = "/etc/plumb/unit3.json"
    var accepted = 0
    var outOfRange = 0
    for seed in 0..<3000 as Range<UInt64> {
      var mutator = Mutator(seed: seed, tokens: Mutator.jsonTokens)
      let bytes = mutator.mutate(originals[Int(seed % UInt64(originals.count))])
      for verifying in [true, false] {
        do {
          let file = try CalibrationFile.parse(bytes, path: path, verifyingHash: verifying)
          accepted += 1
          // What was accepted is written back (as `writeLive` does) and reads again.
          let again = try CalibrationFile.parse(Array(file.formatted().utf8), path: path)
          #expect(again.calibrationId == file.calibrationId, "seed \(seed)")
          // And every number in it is within the range documented for its key: a finite but
          // impossible value (1e308 written over a bias) is refused, not loaded.
          let outside = numbersOutsideTheirRanges(
            in: try JSONDocument(parsing: bytes).root, Self.documentedRange)
          #expect(outside.isEmpty, "seed \(seed): \(outside)")
        } catch {
          #expect("\(error)".hasPrefix("calibration file \(path): "), "seed \(seed)")
          #expect("\(error)".count > "calibration file \(path): ".count + 10, "seed \(seed)")
          if "\(error)".contains("is out of range: expected") { outOfRange += 1 }
        }
      }
    }
    // Not vacuous: some mutants are still calibration files, most are not, and many reach the
    // range checks.
    #expect(accepted > 100 && accepted < 5000)
    #expect(outOfRange > 100)
  }

  /// The range of every number of a calibration file (`CalibrationLimits` says why), restated
  /// here rather than imported: ±2000 °/s = 34.9 rad/s and ±16 g = 156.9 m/s² full scale.
  static func documentedRange(_ key: String, _ indices: [Int]) -> ClosedRange<Double>? {
    switch key {
    case "schema": 1...2
    case "sensor.whoAmI": 0...255
    case "gyroscope.biasRadiansPerSecond", "live.gyroBiasRadiansPerSecond": -34.9...34.9
    case "gyroscope.biasUncertaintyRadiansPerSecond": 0...34.9
    case "gyroscope.referenceTemperatureCelsius", "gyroscope.temperatureRangeCelsius",
      "live.temperatureCelsius":
      -60...150
    case "gyroscope.biasPerDegreeCelsius": -0.28...0.28
    case "gyroscope.biasPerDegreeCelsiusSquared": -0.0023...0.0023
    case "gyroscope.matrix":
      indices.count == 2 && indices[0] == indices[1] ? 0.8...1.25 : -0.1...0.1
    case "accelerometer.offsetMetersPerSecondSquared": -156.9...156.9
    case "accelerometer.scale": 0.5...2
    case "accelerometer.matrix":
      indices.count == 2 && indices[0] == indices[1] ? 0.5...2 : -0.5...0.5
    case "noise.samplePeriodSeconds": (1.0 / 8000)...0.25
    case "noise.gyroscope.angleRandomWalkRadiansPerRootSecond",
      "noise.gyroscope.biasInstabilityRadiansPerSecond",
      "noise.gyroscope.rateRandomWalkRadiansPerSecondPerRootSecond":
      0...34.9
    case "noise.accelerometer.velocityRandomWalkMetersPerSecondPerRootSecond",
      "noise.accelerometer.biasInstabilityMetersPerSecondSquared",
      "noise.accelerometer.rateRandomWalkMetersPerSecondSquaredPerRootSecond":
      0...156.9
    case "restDetector.gyroDeviationRadiansPerSecond": 1e-9...10
    case "restDetector.accelDeviationMetersPerSecondSquared": 1e-9...50
    case "restDetector.windowSeconds": 0.01...60
    case "restDetector.dwellSeconds": 0...600
    case "restDetector.noiseMultiple": 1...100
    default: nil
    }
  }

  /// Found by the fuzzing pass: finite but impossible values (a gyro bias of 1e300 rad/s, a
  /// noise figure of 1e300) loaded silently. Every number of a full file, in turn, is made
  /// impossible either way: each is refused, naming that number's key path, the value and what
  /// was expected.
  @Test(arguments: [1e300, -1e300])
  func everyNumberMadeImpossibleIsRefusedByName(value: Double) throws {
    var checked = 0
    for file in Self.fullFiles {
      let document = try JSONDocument(parsing: file.formatted()).root
      for leaf in everyNumberReplaced(in: document, by: value) {
        checked += 1
        let bytes = Array(leaf.document.formatted().utf8)
        #expect(Comment(rawValue: leaf.keyPath)) {
          _ = try CalibrationFile.parse(bytes, path: "unit3.json", verifyingHash: false)
        } throws: { error in
          guard case .content("unit3.json", let content) = error as? CalibrationFileError else {
            return false
          }
          // What is accepted: "expected a … b" or the schema this Plumb reads.
          let accepted = ["expected", "reads calibration files of schema 1 and 2,"]
          return content.keyPath == leaf.keyPath
            && content.message.contains(formatJSONNumber(value))
            && accepted.contains { content.message.contains($0) }
        }
      }
    }
    // Not vacuous: every section's numbers were reached.
    #expect(checked > 50)
  }
}
