import Calibration
import JSON
import TestSupport
import Testing

/// Damaged calibration files, made by seeded mutation of a full one: each is accepted or refused
/// with a message naming the file, never a trap; what is accepted writes back and reads again.
@Suite struct CalibrationFileMutationTests {
  @Test("3000 seeded mutants of a calibration file load or fail naming the file")
  func mutantsLoadOrFailNamingTheFile() throws {
    var full = CalibrationFileTests.sample
    full.live = LiveBiasEstimate(
      gyroBiasRadiansPerSecond: .init(1e-3, -2e-3, 3e-3), temperatureCelsius: 30.5,
      written: "2026-12-02T10:15:00.25Z")
    let original = Array(full.formatted().utf8)
    var matrixForm = full
    matrixForm.accelerometer = AccelerometerCorrection(
      offset: .init(0.1, 0.2, 0.3),
      matrix: .init(rows: .init(1.01, 0.01, 0), .init(0, 0.99, 0.02), .init(0, 0, 1)))
    let originals = [original, Array(matrixForm.formatted().utf8)]
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
}
