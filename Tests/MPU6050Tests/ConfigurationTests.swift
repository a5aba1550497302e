import MPU6050
import Testing

@Suite("Configuration and validator")
struct ConfigurationTests {
  @Test("the 100 Hz default: SMPLRT_DIV 9, DLPF_CFG 3, ±500 °/s, ±4 g, data-ready on")
  func defaults() throws {
    let validated = try MPU6050Configuration.default.validated()
    #expect(validated.divider == 9)
    #expect(validated.sampleRateHertz == 100)
    #expect(validated.samplePeriodNanoseconds == 10_000_000)
    #expect(validated.config.bits == 0x03)
    #expect(validated.gyroConfig.bits == 0x08)
    #expect(validated.accelConfig.bits == 0x08)
    #expect(validated.interruptPinConfig.bits == 0x00)
    #expect(validated.interruptEnable(fifo: false).bits == 0x01)
    #expect(validated.interruptEnable(fifo: true).bits == 0x11)
    #expect(validated.powerManagement1.bits == 0x01)
    #expect(validated.fifoEnable.bits == 0xF8)
    #expect(validated.warnings.isEmpty)
  }

  @Test("the folded frequency |f − k·fs| (seed 000)")
  func folding() {
    #expect(MPU6050Configuration.foldedFrequency(ofHertz: 60, sampledAtHertz: 50) == 10)
    #expect(MPU6050Configuration.foldedFrequency(ofHertz: 60, sampledAtHertz: 200) == 60)
    #expect(MPU6050Configuration.foldedFrequency(ofHertz: 98, sampledAtHertz: 100) == 2)
    #expect(MPU6050Configuration.foldedFrequency(ofHertz: 260, sampledAtHertz: 100) == 40)
    #expect(MPU6050Configuration.foldedFrequency(ofHertz: 30, sampledAtHertz: 100) == 30)
  }

  /// Rate, filter → SMPLRT_DIV, or the refusal and what its message must name.
  static let accepted: [(Double, DigitalLowPassFilter, UInt8)] = [
    (100, .bandwidth44Hz, 9), (100, .bandwidth21Hz, 9), (100, .bandwidth10Hz, 9),
    (100, .bandwidth5Hz, 9), (200, .bandwidth94Hz, 4), (500, .bandwidth184Hz, 1),
    (1000, .bandwidth184Hz, 0), (1000, .bandwidth260Hz, 7), (8000, .bandwidth260Hz, 0),
    (50, .bandwidth21Hz, 19), (1000.0 / 3, .bandwidth94Hz, 2), (333.33, .bandwidth94Hz, 2),
    (12.5, .bandwidth5Hz, 79),
  ]

  @Test("accepted rate/filter combinations", arguments: accepted)
  func acceptedCombination(rate: Double, filter: DigitalLowPassFilter, divider: UInt8) throws {
    let configuration = MPU6050Configuration(sampleRateHertz: rate, lowPassFilter: filter)
    #expect(try configuration.validated().divider == divider)
  }

  static let aliasing: [(Double, DigitalLowPassFilter, String)] = [
    // 98 Hz gyro bandwidth at 100 Hz folds to |98 − 1 × 100| = 2 Hz.
    (100, .bandwidth94Hz, "|98 − 1 × 100| = 2 Hz"),
    (100, .bandwidth184Hz, "|188 − 2 × 100| = 12 Hz"),
    (50, .bandwidth44Hz, "|44 − 1 × 50| = 6 Hz"),
    (40, .bandwidth21Hz, "|21 − 1 × 40| = 19 Hz"),
  ]

  @Test("a bandwidth at or above half the rate is refused, naming the folded frequency")
  func refusedForAliasing() {
    for (rate, filter, folded) in Self.aliasing {
      let configuration = MPU6050Configuration(sampleRateHertz: rate, lowPassFilter: filter)
      #expect(throws: MPU6050ConfigurationError.self) { try configuration.validated() }
      do {
        _ = try configuration.validated()
      } catch {
        #expect(error.field == "lowPassFilter")
        #expect(error.description.contains(folded), "\(error)")
        #expect(error.description.contains("Fix:"))
        guard case .bandwidthAliases(_, _, let foldedHertz, let narrower, let faster) = error else {
          Issue.record("wrong error \(error)")
          continue
        }
        #expect(narrower.allSatisfy { $0.bandwidthHertz < rate / 2 })
        #expect(!narrower.isEmpty)
        #expect(foldedHertz < rate / 2)
        if let faster { #expect(faster.hertz / 2 > filter.bandwidthHertz) }
      }
    }
  }

  @Test("the 100 Hz refusal of DLPF_CFG 2 suggests 44 Hz and 200 Hz")
  func refusalSuggestions() {
    let configuration = MPU6050Configuration(sampleRateHertz: 100, lowPassFilter: .bandwidth94Hz)
    do {
      _ = try configuration.validated()
      Issue.record("accepted an aliasing configuration")
    } catch {
      #expect(error.description.contains("DLPF_CFG 3 (44 Hz accel / 42 Hz gyro)"))
      #expect(error.description.contains("200 Hz (SMPLRT_DIV 4)"))
      #expect(error.description.contains("50 Hz, half the 100 Hz sample rate"))
    }
  }

  @Test("a bandwidth exactly at half the rate is refused")
  func exactlyAtNyquist() {
    // DLPF_CFG 6 is 5 Hz; 10 Hz sampling puts Nyquist at 5 Hz.
    let configuration = MPU6050Configuration(sampleRateHertz: 10, lowPassFilter: .bandwidth5Hz)
    #expect(throws: MPU6050ConfigurationError.self) { try configuration.validated() }
  }

  @Test("a rate that does not divide is refused with the nearest achievable rates")
  func notADivisor() {
    let configuration = MPU6050Configuration(sampleRateHertz: 300, lowPassFilter: .bandwidth44Hz)
    do {
      _ = try configuration.validated()
      Issue.record("accepted 300 Hz")
    } catch {
      #expect(error.field == "sampleRateHertz")
      #expect(error.description.contains("250 Hz (SMPLRT_DIV 3)"))
      #expect(error.description.contains("333.333 Hz (SMPLRT_DIV 2)"))
      guard case .sampleRateNotAchievable(_, let output, let nearby) = error else {
        Issue.record("wrong error \(error)")
        return
      }
      #expect(output == 1000)
      #expect(nearby.map(\.divider) == [4, 3, 2, 1])
    }
  }

  @Test("rates outside the divider's range, and non-rates, are refused")
  func outOfRange() {
    for rate in [2000.0, 3.0, 0, -100, .nan, .infinity] {
      let configuration = MPU6050Configuration(sampleRateHertz: rate)
      #expect(throws: MPU6050ConfigurationError.self, "\(rate)") { try configuration.validated() }
    }
  }

  @Test("above 1 kHz the accelerometer repeats: allowed, with a warning")
  func fastRateWarning() throws {
    let configuration = MPU6050Configuration(sampleRateHertz: 2000, lowPassFilter: .bandwidth260Hz)
    let validated = try configuration.validated()
    #expect(validated.divider == 3)
    #expect(validated.warnings.count == 1)
    #expect(validated.warnings[0].hasPrefix("sampleRateHertz"))
  }

  @Test("the DLPF table (RM §4.3)")
  func filterTable() {
    let table: [(DigitalLowPassFilter, UInt8, Double, Double, Double, Double, Double)] = [
      (.bandwidth260Hz, 0, 260, 0, 256, 0.98, 8000), (.bandwidth184Hz, 1, 184, 2.0, 188, 1.9, 1000),
      (.bandwidth94Hz, 2, 94, 3.0, 98, 2.8, 1000), (.bandwidth44Hz, 3, 44, 4.9, 42, 4.8, 1000),
      (.bandwidth21Hz, 4, 21, 8.5, 20, 8.3, 1000), (.bandwidth10Hz, 5, 10, 13.8, 10, 13.4, 1000),
      (.bandwidth5Hz, 6, 5, 19.0, 5, 18.6, 1000),
    ]
    for (filter, code, accelBW, accelDelayMs, gyroBW, gyroDelayMs, output) in table {
      #expect(filter.rawValue == code)
      #expect(filter.accelerometerBandwidthHertz == accelBW)
      #expect(abs(filter.accelerometerDelaySeconds * 1000 - accelDelayMs) < 1e-9)
      #expect(filter.gyroBandwidthHertz == gyroBW)
      #expect(abs(filter.gyroDelaySeconds * 1000 - gyroDelayMs) < 1e-9)
      #expect(filter.gyroOutputRateHertz == output)
    }
  }

  @Test("range sensitivities (PS §6.1, §6.2)")
  func sensitivities() {
    #expect(GyroFullScale.degreesPerSecond250.countsPerDegreePerSecond == 131)
    #expect(GyroFullScale.degreesPerSecond500.countsPerDegreePerSecond == 65.5)
    #expect(GyroFullScale.degreesPerSecond1000.countsPerDegreePerSecond == 32.8)
    #expect(GyroFullScale.degreesPerSecond2000.countsPerDegreePerSecond == 16.4)
    #expect(AccelerometerFullScale.standardGravities2.countsPerStandardGravity == 16384)
    #expect(AccelerometerFullScale.standardGravities4.countsPerStandardGravity == 8192)
    #expect(AccelerometerFullScale.standardGravities8.countsPerStandardGravity == 4096)
    #expect(AccelerometerFullScale.standardGravities16.countsPerStandardGravity == 2048)
    #expect(AccelerometerFullScale.standardGravities16.standardGravities == 16)
  }
}
