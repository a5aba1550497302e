import HardwareAbstraction
import MPU6050
import SimulatedHardware
import Testing

/// The exact register traffic of start-up and sampling, byte for byte, on a scripted bus.
/// Addresses and values are restated as literals from RM-MPU-6000A rev 4.2.
@Suite("Init sequence (scripted bus)")
struct InitSequenceTests {
  let chip = I2CAddress(rawValue: 0x68)!

  /// Identify, reset, wait ≥ 100 ms, confirm the reset, wake on the X-gyro PLL, configure for
  /// 100 Hz / DLPF_CFG 3 / ±500 °/s / ±4 g / data-ready pulse, read everything back.
  func startUp(whoAmI: UInt8 = 0x68, accelConfig2: UInt8? = nil) -> [ScriptedTransaction] {
    var steps: [ScriptedTransaction] = [
      .read(0x75, at: chip, returning: [whoAmI]),  // WHO_AM_I
      .write(0x6B, 0x80, at: chip),  // PWR_MGMT_1: DEVICE_RESET
      // Reset done, asleep.
      .read(0x6B, at: chip, returning: [0x40]).notBefore(.milliseconds(100)),
      .write(0x6B, 0x01, at: chip),  // awake, CLKSEL 1 (PLL, X gyro)
      .write(0x19, 0x09, at: chip),  // SMPLRT_DIV 9: 1 kHz / 10 = 100 Hz
      .write(0x1A, 0x03, at: chip),  // CONFIG: DLPF_CFG 3 (44/42 Hz)
      .write(0x1B, 0x08, at: chip),  // GYRO_CONFIG: FS_SEL 1, ±500 °/s
      .write(0x1C, 0x08, at: chip),  // ACCEL_CONFIG: AFS_SEL 1, ±4 g
    ]
    if let accelConfig2 { steps.append(.write(0x1D, accelConfig2, at: chip)) }
    steps += [
      // INT_PIN_CFG: active high, push-pull, 50 µs pulse, cleared by reading INT_STATUS.
      .write(0x37, 0x00, at: chip),
      .write(0x38, 0x01, at: chip),  // INT_ENABLE: DATA_RDY_EN
      .write(0x23, 0x00, at: chip),  // FIFO_EN: nothing
      .write(0x6A, 0x00, at: chip),  // USER_CTRL: FIFO off
    ]
    if let accelConfig2 {
      steps.append(.read(0x19, at: chip, returning: [0x09, 0x03, 0x08, 0x08, accelConfig2]))
    } else {
      steps.append(.read(0x19, at: chip, returning: [0x09, 0x03, 0x08, 0x08]))
    }
    steps += [
      .read(0x23, at: chip, returning: [0x00]),
      .read(0x37, at: chip, returning: [0x00, 0x01]),
      .read(0x6A, at: chip, returning: [0x00, 0x01]),
    ]
    return steps
  }

  static let restBurst: [UInt8] = [
    0x00, 0x10, 0xFF, 0xF0, 0x20, 0x00, 0xFD, 0xF7, 0x00, 0x05, 0xFF, 0xFB, 0x00, 0x02,
  ]

  @Test("start-up without self-test, then one burst per sample")
  func startUpAndSample() throws {
    let clock = ManualClock()
    let bus = ScriptedI2CBus(startUp(), clock: clock)
    // The first sample only after the filters settled (≥ 30 ms, PS §6.1).
    bus.expect([.read(0x3B, at: chip, returning: Self.restBurst).notBefore(.milliseconds(30))])
    var driver = try MPU6050Driver(bus: bus)
    var time = clock
    let report = try driver.start(clock: &time, selfTest: false)
    #expect(report.identity.isGenuine)
    #expect(driver.state == .running)
    guard case .sample(let sample, let isRepeat) = driver.readSample(at: clock.now()) else {
      Issue.record("no sample")
      return
    }
    #expect(!isRepeat)
    // 0x2000 = 8192 counts = 1 g at ±4 g.
    #expect(sample.raw.accelerometer == SIMD3(16, -16, 8192))
    #expect(abs(sample.specificForceMetersPerSecondSquared.z - 9.80665) < 1e-12)
    #expect(sample.raw.gyro == SIMD3(5, -5, 2))
    #expect(bus.finish() == [])
  }

  @Test("an ICM-20689 (0x98) also gets ACCEL_CONFIG2 and skips the self-test")
  func relabelledPart() throws {
    let clock = ManualClock()
    let bus = ScriptedI2CBus(startUp(whoAmI: 0x98, accelConfig2: 0x03), clock: clock)
    var driver = try MPU6050Driver(bus: bus)
    var time = clock
    let report = try driver.start(clock: &time, selfTest: true)
    #expect(report.identity.model.name == "ICM-20689")
    #expect(report.warnings.first?.contains("ICM-20689") == true)
    guard case .notAvailable = report.selfTest.outcome else {
      Issue.record("self-test ran on an MPU-6500-generation part")
      return
    }
    #expect(driver.currentScale.temperature == .icm20608)
    #expect(bus.finish() == [])
  }

  @Test("the self-test: ±250 °/s and ±8 g, self-test off, on, trim registers, restore")
  func selfTestSequence() throws {
    let clock = ManualClock()
    let bus = ScriptedI2CBus(startUp(), clock: clock)
    // Off: 1 g on Z at ±8 g (4096 counts), gyro zero-rate (10, −20, 30).
    let off: [UInt8] = [0, 0, 0, 0, 0x10, 0x00, 0, 0, 0x00, 0x0A, 0xFF, 0xEC, 0x00, 0x1E]
    // On: + trim (gyro codes 1: 3275, −3275, 3275; accel codes 31: 3768 each).
    func word(_ value: Int) -> [UInt8] {
      let bits = UInt16(bitPattern: Int16(value))
      return [UInt8(bits >> 8), UInt8(bits & 0xFF)]
    }
    let on =
      word(3768) + word(3768) + word(4096 + 3768) + word(0) + word(10 + 3275) + word(-20 - 3275)
      + word(30 + 3275)
    bus.expect([
      .write(0x1B, 0x00, at: chip),  // GYRO_CONFIG: ±250 °/s, self-test off
      .write(0x1C, 0x10, at: chip),  // ACCEL_CONFIG: ±8 g, self-test off
    ])
    bus.expect(
      [.read(0x3B, at: chip, returning: off).notBefore(.milliseconds(50))]
        + Array(repeating: .read(0x3B, at: chip, returning: off), count: 19))
    bus.expect([
      .write(0x1B, 0xE0, at: chip),  // XG_ST, YG_ST, ZG_ST
      .write(0x1C, 0xF0, at: chip),  // XA_ST, YA_ST, ZA_ST, ±8 g
    ])
    bus.expect(
      [.read(0x3B, at: chip, returning: on).notBefore(.milliseconds(50))]
        + Array(repeating: .read(0x3B, at: chip, returning: on), count: 19))
    bus.expect([
      // SELF_TEST_X/Y/Z: XA_TEST[4:2] = 0b111, XG/YG/ZG_TEST = 1; SELF_TEST_A: all low bits 1.
      .read(0x0D, at: chip, returning: [0xE1, 0xE1, 0xE1, 0x3F]),
      .write(0x1B, 0x08, at: chip),  // restore ±500 °/s
      .write(0x1C, 0x08, at: chip),  // restore ±4 g
    ])
    var driver = try MPU6050Driver(bus: bus)
    var time = clock
    let report = try driver.start(clock: &time)
    #expect(bus.finish() == [])
    #expect(report.selfTest.passed, "\(report.selfTest)")
    #expect(report.selfTest.results.count == 6)
    for result in report.selfTest.results {
      #expect(abs(result.deviation!) < 0.001, "\(result)")
    }
    #expect(report.warnings.isEmpty)
  }

  @Test("a NACKed burst is retried within the tick and counted")
  func retry() throws {
    let clock = ManualClock()
    let bus = ScriptedI2CBus(startUp(), clock: clock)
    bus.expect([
      .read(0x3B, count: 14, at: chip, failingWith: .notAcknowledged),
      .read(0x3B, count: 14, at: chip, failingWith: .ioError),
      .read(0x3B, at: chip, returning: Self.restBurst),
      // A tick whose three attempts all fail delivers nothing, counted once.
      .read(0x3B, count: 14, at: chip, failingWith: .notAcknowledged),
      .read(0x3B, count: 14, at: chip, failingWith: .notAcknowledged),
      .read(0x3B, count: 14, at: chip, failingWith: .notAcknowledged),
    ])
    var driver = try MPU6050Driver(bus: bus)
    var time = clock
    _ = try driver.start(clock: &time, selfTest: false)
    guard case .sample = driver.readSample(at: clock.now()) else {
      Issue.record("the retry did not deliver")
      return
    }
    guard case .unavailable(.busError(let error)) = driver.readSample(at: clock.now()) else {
      Issue.record("three failures delivered something")
      return
    }
    #expect(error.kind == .notAcknowledged)
    #expect(driver.counters.retries == 4)
    #expect(driver.counters.busErrors.notAcknowledged == 4)
    #expect(driver.counters.busErrors.ioError == 1)
    #expect(driver.counters.failedReads == 1)
    #expect(driver.counters.samplesDelivered == 1)
    #expect(driver.state == .running)
    #expect(bus.finish() == [])
  }

  @Test("a missing chip fails start-up with the bus error; the driver stays stopped")
  func missingChip() throws {
    let clock = ManualClock()
    let bus = ScriptedI2CBus(
      Array(repeating: .read(0x75, count: 1, at: chip, failingWith: .notAcknowledged), count: 3),
      clock: clock)
    var driver = try MPU6050Driver(bus: bus)
    var time = clock
    #expect(throws: MPU6050Error.self) { try driver.start(clock: &time) }
    #expect(driver.state == MPU6050DriverState.stopped)
    #expect(driver.counters.busErrors.notAcknowledged == 3)
    #expect(bus.finish() == [])
  }

  @Test("a wrong WHO_AM_I fails start-up with the value read")
  func wrongIdentity() throws {
    let clock = ManualClock()
    let bus = ScriptedI2CBus([.read(0x75, at: chip, returning: [0x19])], clock: clock)
    var driver = try MPU6050Driver(bus: bus)
    var time = clock
    do {
      _ = try driver.start(clock: &time)
      Issue.record("started with WHO_AM_I 0x19")
    } catch {
      #expect(error == .unknownChip(whoAmI: 0x19))
    }
    #expect(bus.finish() == [])
  }

  @Test("an invalid configuration is refused before the bus is touched")
  func invalidConfiguration() {
    let clock = ManualClock()
    let bus = ScriptedI2CBus([], clock: clock)
    #expect(throws: MPU6050Error.self) {
      _ = try MPU6050Driver(
        bus: bus, configuration: MPU6050Configuration(lowPassFilter: .bandwidth94Hz))
    }
    #expect(bus.performed.isEmpty)
  }
}
