import Telemetry
import Testing

/// Bytes per second restated from FORMATS.md: binary 63 B a frame, text up to 95 B a line,
/// MAVLink's default streams 44 B ATTITUDE_QUATERNION a frame + 74 B HIGHRES_IMU at ≤ 50 Hz +
/// 40 B ATTITUDE at ≤ 10 Hz + 43 B SYS_STATUS and 21 B HEARTBEAT at 1 Hz (at output rates the
/// asked ones divide).
private func restatedBytesPerSecond(_ format: TelemetryFormat, _ rate: Int) -> Int {
  switch format {
  case .binary: 63 * rate
  case .binaryIMU: 89 * rate
  case .text: 95 * rate
  case .mavlink: 44 * rate + 74 * min(rate, 50) + 40 * min(rate, 10) + 43 + 21
  }
}

@Suite struct LinkBudgetTests {
  @Test func bytesPerSecondAreTheDocumentedFrameSizes() {
    #expect(LinkBudget.bytesPerSecond(format: .binary, outputRateHz: 100) == 6300)
    #expect(LinkBudget.bytesPerSecond(format: .text, outputRateHz: 100) == 9500)
    #expect(LinkBudget.bytesPerSecond(format: .binaryIMU, outputRateHz: 100) == 8900)
    #expect(
      LinkBudget.bytesPerSecond(format: .mavlink, outputRateHz: 100)
        == 4400 + 3700 + 400 + 43 + 21)
    #expect(
      LinkBudget.bytesPerSecond(format: .mavlink, outputRateHz: 50) == 2200 + 3700 + 400 + 43 + 21)
    #expect(
      LinkBudget.bytesPerSecond(format: .mavlink, outputRateHz: 10) == 440 + 740 + 400 + 43 + 21)
    for format in TelemetryFormat.allCases {
      for rate in [1, 2, 5, 10, 50, 100] {
        #expect(
          LinkBudget.bytesPerSecond(format: format, outputRateHz: rate)
            == restatedBytesPerSecond(format, rate), "\(format) at \(rate) Hz")
      }
    }
  }

  /// 115200 baud 8N1 carries 11 520 B/s: 115 bytes per frame at 100 Hz (notes/mpu6050-facts.md).
  @Test func theLineCarriesBaudOverTenBytesASecond() throws {
    let usage = try LinkBudget.check(format: .binary, outputRateHz: 100, baudRate: 115_200).get()
    #expect(usage.capacityBytesPerSecond == 11_520)
    #expect(usage.capacityBytesPerSecond / 100 == 115)
    #expect(abs(usage.utilisation - 6300.0 / 11_520) < 1e-12)
  }

  /// ok = at most 85 % of baud / 10.
  @Test(arguments: [
    // format, rate, baud, fits
    (TelemetryFormat.binary, 100, 115_200, true),  // 6300 of 9792
    (.text, 100, 115_200, true),  // 9500 of 9792
    (.binaryIMU, 100, 115_200, true),  // 8900 of 9792
    (.binaryIMU, 100, 57_600, false),  // 8900 of 4896
    (.binaryIMU, 50, 57_600, true),  // 4450 of 4896
    (.mavlink, 100, 115_200, true),  // 8564 of 9792
    (.binary, 100, 57_600, false),  // 6300 > 4896
    (.binary, 50, 57_600, true),  // 3150
    (.text, 50, 57_600, true),  // 4750 ≤ 4896
    (.mavlink, 50, 57_600, false),  // 6364 > 4896
    (.mavlink, 25, 57_600, true),  // 1100 + 1850 + 9·40 + 43 + 21 = 3374
    (.binary, 10, 9600, true),  // 630 ≤ 816
    (.text, 10, 9600, false),  // 950 > 816
    (.mavlink, 5, 9600, false),  // 220 + 370 + 200 + 43 + 21 = 854 > 816
    (.mavlink, 2, 9600, true),  // 88 + 148 + 80 + 43 + 21 = 380
    (.binary, 200, 115_200, false),  // 12600
    (.binary, 1000, 921_600, true),  // 63000 ≤ 78336
    (.text, 1000, 921_600, false),  // 95000
  ])
  func theTable(format: TelemetryFormat, rate: Int, baud: Int, fits: Bool) {
    let result = LinkBudget.check(
      format: format, outputRateHz: rate, baudRate: baud, sampleRateHz: 1000)
    switch result {
    case .success: #expect(fits, "\(format) at \(rate) Hz on \(baud) baud should be refused")
    case .failure(let refusal):
      #expect(!fits, "\(format) at \(rate) Hz on \(baud) baud should fit: \(refusal)")
      #expect(refusal.reason == .overBudget)
    }
  }

  @Test func aRefusalSaysWhyInNumbersAndHowToFixIt() {
    guard
      case .failure(let refusal) = LinkBudget.check(
        format: .binary, outputRateHz: 100, baudRate: 9600)
    else {
      Issue.record("binary at 100 Hz cannot fit 9600 baud")
      return
    }
    #expect(
      refusal.description
        == "binary frames are 63 B; at 100 Hz that is 6300 B/s; 9600 baud 8N1 carries 960 B/s and "
        + "Plumb uses at most 85 % of it (816 B/s); use ≥ 115200 baud or ≤ 10 Hz")
    #expect(refusal.suggestedBaudRate == 115_200 && refusal.suggestedRateHz == 10)

    guard
      case .failure(let text) = LinkBudget.check(format: .text, outputRateHz: 10, baudRate: 9600)
    else {
      Issue.record("text at 10 Hz cannot fit 9600 baud")
      return
    }
    #expect(text.suggestedBaudRate == 19_200 && text.suggestedRateHz == 5)
    #expect(text.description.hasPrefix("text lines are up to 95 B; at 10 Hz that is 950 B/s"))

    guard
      case .failure(let mavlink) = LinkBudget.check(
        format: .mavlink, outputRateHz: 100, baudRate: 57_600)
    else {
      Issue.record("MAVLink at 100 Hz cannot fit 57600 baud")
      return
    }
    #expect(mavlink.description.contains("HIGHRES_IMU (74 B) every 2nd frame"))
    #expect(mavlink.suggestedRateHz == 25 && mavlink.suggestedBaudRate == 115_200)
  }

  @Test func nonsenseInputsAreRefusedWithAReason() {
    if case .failure(let r) = LinkBudget.check(format: .binary, outputRateHz: 0, baudRate: 115_200)
    {
      #expect(r.reason == .invalidRate)
    } else {
      Issue.record("rate 0 must be refused")
    }
    if case .failure(let r) = LinkBudget.check(format: .binary, outputRateHz: 10, baudRate: -1) {
      #expect(r.reason == .invalidBaudRate)
    } else {
      Issue.record("a negative baud rate must be refused")
    }
  }
}
