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
    return [full, matrixForm]
  }()

  @Test("3000 seeded mutants of a calibration file load or fail naming the file")
  func mutantsLoadOrFailNamingTheFile() throws {
    let originals = Self.fullFiles.map { Array($0.formatted().utf8) }
    let path = "/etc/plumb/unit3.json"
    var accepted = 0
    for seed in 0..<3000 as Range<UInt64> {
      var mutator = Mutator(seed: seed, tokens: Mutator.jsonTokens)
      let bytes = mutator.mutate(originals[Int(seed % 2)])
      for verifying in [true, false] {
        do {
          let file = try CalibrationFile.parse(bytes, path: path, verifyingHash: verifying)
          accepted += 1
          // What was accepted is written back (as `writeLive` does) and reads again.
          let again = try CalibrationFile.parse(Array(file.formatted().utf8), path: path)
          #expect(again.calibrationId == file.calibrationId, "seed \(seed)")
        } catch {
          #expect("\(error)".hasPrefix("calibration file \(path): "), "seed \(seed)")
          #expect("\(error)".count > "calibration file \(path): ".count + 10, "seed \(seed)")
        }
      }
    }
    // Not vacuous: some mutants are still calibration files, most are not.
    #expect(accepted > 100 && accepted < 5000)
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
          let accepted = ["expected", "reads calibration files of schema 1,"]
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
