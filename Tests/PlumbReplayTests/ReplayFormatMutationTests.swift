import Testing

@testable import plumb

/// `plumb replay`'s own CSV reader (the one `plumb-cal` uses has its mutation tests in
/// CalibrationTests) at every byte of a small file: cut there, or that byte replaced by each
/// of the bytes that change a CSV's meaning. Every result is samples with finite values and a
/// time, or an error that names a line of the file and says something; nothing traps.
@Suite struct ReplayFormatMutationTests {
  static let text: String = {
    var text = "\u{FEFF}t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z,temp_c,extra\r\n"
    for index in 0..<6 {
      text += "\(Double(index) * 0.01),0.00\(index),-0.012,3e-3,0.15,-0.2,9.80665,25.\(index),x\r\n"
    }
    return text
  }()

  static let replacements: [UInt8] = Array(",\r\n \t-+.eE0#x\"".utf8) + [0x00, 0x7F, 0xC3, 0xFF]

  /// What the command does with the text, short of the estimator and the file.
  func read(_ text: String) -> Result<Int, ReplayFormat.InputError> {
    var samples = 0
    var temperature = false
    do throws(ReplayFormat.InputError) {
      let lines = ReplayFormat.lines(text)
      for (index, line) in lines.enumerated() {
        if index == 0 {
          temperature = try ReplayFormat.checkHeader(line)
          continue
        }
        if line.trimmingCharacters().isEmpty { continue }
        let (_, nanoseconds, sample) = try ReplayFormat.parse(
          line, number: index + 1, temperature: temperature)
        #expect(abs(nanoseconds) < 9_000_000_000_000_000_000)
        #expect(sample.angularRateRadiansPerSecond.x.isFinite)
        #expect(sample.specificForceMetersPerSecondSquared.z.isFinite)
        samples += 1
      }
      return .success(samples)
    } catch {
      return .failure(error)
    }
  }

  @Test func everyCutAndEveryReplacedByteReadsOrNamesALine() {
    let bytes = Array(Self.text.utf8)
    var accepted = 0
    var refused = 0
    var mutants: [[UInt8]] = (0..<bytes.count).map { Array(bytes[0..<$0]) }
    for offset in bytes.indices {
      for replacement in Self.replacements where replacement != bytes[offset] {
        var mutant = bytes
        mutant[offset] = replacement
        mutants.append(mutant)
      }
    }
    for mutant in mutants {
      let lineCount = mutant.split(separator: 0x0A, omittingEmptySubsequences: false).count
      switch read(String(decoding: mutant, as: UTF8.self)) {
      case .success: accepted += 1
      case .failure(let error):
        refused += 1
        #expect(
          (1...lineCount).contains(error.line) && error.message.count > 10,
          "\(error) for \(String(decoding: mutant, as: UTF8.self).debugDescription)")
      }
    }
    // Not vacuous: the whole file reads, and so do many mutants; many do not.
    #expect(read(Self.text) == .success(6))
    #expect(accepted > 300 && refused > 300, "\(accepted) read, \(refused) refused")
  }
}
