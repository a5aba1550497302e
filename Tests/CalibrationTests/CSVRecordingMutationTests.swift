import Calibration
import TestSupport
import Testing

/// Damaged replay-layout CSV, made by seeded mutation of a valid recording: each decodes to
/// finite, strictly increasing samples or is refused with a message naming the file.
@Suite struct CSVRecordingMutationTests {
  static let tokens = [
    "nan", "NaN", "inf", "-inf", "infinity", "1e400", "-1e400", "1e-400", "-0", "0x1p3", "1e",
    "1e000001", "+5", ".5", "5.", "1_000", "9223372036854775808",
    String(repeating: "9", count: 100),
    "0." + String(repeating: "1", count: 100), "", " ", ",", ",,", "\n", "\r\n", "\r", "#", "\"",
    "t_s", "gyr_x", "temp_c", "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z", "\u{FEFF}", "\0", "é",
  ]

  @Test("3000 seeded mutants of a recording decode or fail naming the file")
  func mutantsDecodeOrFailNamingTheFile() {
    var text = "# bench\nt_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z,temp_c,extra\n"
    for index in 0..<20 {
      text += "\(Double(index) * 0.01),0.00\(index),-0.012,3e-3,0.15,-0.2,9.80665,25.\(index),x\n"
    }
    let original = Array(text.utf8)
    let path = "/data/still.csv"
    var accepted = 0
    for seed in 0..<3000 as Range<UInt64> {
      var mutator = Mutator(seed: seed, tokens: Self.tokens)
      do {
        let recording = try CSVRecordingDecoder().decode(mutator.mutate(original), path: path)
        accepted += 1
        let times = recording.timeSeconds
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "seed \(seed)")
        #expect(recording.channels.joined().allSatisfy { $0.isFinite }, "seed \(seed)")
        #expect((recording.temperatureCelsius ?? []).allSatisfy { $0.isFinite }, "seed \(seed)")
      } catch {
        #expect("\(error)".hasPrefix(path) && error.message.count > 10, "seed \(seed)")
      }
    }
    // Not vacuous: some mutants still decode, most do not.
    #expect(accepted > 100 && accepted < 2500)
  }
}
