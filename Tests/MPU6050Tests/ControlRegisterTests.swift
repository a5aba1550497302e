import HardwareAbstraction
import MPU6050
import SimulatedHardware
import Testing

/// The driver's copy of the control registers (`controlRegisters`): what it holds for the part
/// and the sample source, that every change is written from it, and that the read-backs compare
/// the chip with it. Values restated from RM-MPU-6000A-00 rev 4.2 as literals.
@Suite("Control registers (the driver's copy)")
struct ControlRegisterTests {
  let chip = I2CAddress(rawValue: 0x68)!

  /// The default configuration's bytes: 100 Hz, DLPF_CFG 3, ±500 °/s, ±4 g, data-ready pulse.
  func expectDefault(
    _ registers: MPU6050ControlRegisters, accelConfig2: UInt8? = nil, fifo: Bool = false,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(registers.sampleRateDivider.bits == 0x09, sourceLocation: sourceLocation)
    #expect(registers.config.bits == 0x03, sourceLocation: sourceLocation)
    #expect(registers.gyroConfig.bits == 0x08, sourceLocation: sourceLocation)
    #expect(registers.accelConfig.bits == 0x08, sourceLocation: sourceLocation)
    #expect(registers.accelConfig2?.bits == accelConfig2, sourceLocation: sourceLocation)
    #expect(registers.interruptPinConfig.bits == 0x00, sourceLocation: sourceLocation)
    #expect(registers.interruptEnable.bits == (fifo ? 0x11 : 0x01), sourceLocation: sourceLocation)
    #expect(registers.fifoEnable.bits == (fifo ? 0xF8 : 0x00), sourceLocation: sourceLocation)
    #expect(registers.userControl.bits == (fifo ? 0x40 : 0x00), sourceLocation: sourceLocation)
    #expect(registers.powerManagement1.bits == 0x01, sourceLocation: sourceLocation)
  }

  @Test("before start-up: the configuration's registers, no ACCEL_CONFIG2, FIFO off")
  func beforeStartUp() throws {
    let bus = ScriptedI2CBus([], clock: ManualClock())
    let driver = try MPU6050Driver(bus: bus)
    expectDefault(driver.controlRegisters)
    // Emptying the FIFO: FIFO_RESET with FIFO_EN clear.
    #expect(driver.controlRegisters.userControlEmptyingFIFO.bits == 0x04)
    #expect(bus.performed.isEmpty)
  }

  @Test("an MPU-6500-family part adds ACCEL_CONFIG2 to the copy and to start-up's writes")
  func accelConfig2FollowsThePart() throws {
    let clock = ManualClock()
    let bus = ScriptedI2CBus(
      InitSequenceTests().startUp(whoAmI: 0x98, accelConfig2: 0x03), clock: clock)
    var driver = try MPU6050Driver(bus: bus)
    var time = clock
    _ = try driver.start(clock: &time, selfTest: false)
    #expect(bus.finish() == [])
    expectDefault(driver.controlRegisters, accelConfig2: 0x03)
  }

  @Test("switching to the FIFO and back: each change made to the copy, then written from it")
  func fifoSwitch() throws {
    let clock = ManualClock()
    let bus = ScriptedI2CBus(InitSequenceTests().startUp(), clock: clock)
    var driver = try MPU6050Driver(bus: bus)
    var time = clock
    _ = try driver.start(clock: &time, selfTest: false)
    #expect(bus.finish() == [])

    bus.expect([
      .write(0x23, 0xF8, at: chip),  // FIFO_EN: temperature, gyro X/Y/Z, accelerometer
      .write(0x6A, 0x04, at: chip),  // USER_CTRL: FIFO_RESET, FIFO_EN 0
      .write(0x6A, 0x40, at: chip),  // USER_CTRL: FIFO_EN
      .write(0x38, 0x11, at: chip),  // INT_ENABLE: FIFO_OFLOW_EN, DATA_RDY_EN
    ])
    let enabled = driver.enableFIFO(at: clock.now())
    #expect(enabled)
    #expect(bus.finish() == [])
    #expect(driver.source == .fifo)
    expectDefault(driver.controlRegisters, fifo: true)
    #expect(driver.controlRegisters.userControlEmptyingFIFO.bits == 0x04)

    bus.expect([
      .write(0x6A, 0x04, at: chip),  // USER_CTRL: FIFO_RESET, FIFO_EN 0
      .write(0x6A, 0x00, at: chip),  // USER_CTRL: FIFO off
      .write(0x23, 0x00, at: chip),  // FIFO_EN: nothing
      .write(0x38, 0x01, at: chip),  // INT_ENABLE: DATA_RDY_EN
    ])
    let disabled = driver.disableFIFO(at: clock.now())
    #expect(disabled)
    #expect(bus.finish() == [])
    #expect(driver.source == .dataRegisters)
    expectDefault(driver.controlRegisters)
  }

  @Test("a register the chip lost is found against the copy and the copy rewritten")
  func readBackAgainstTheCopy() throws {
    let clock = ManualClock()
    let bus = ScriptedI2CBus(InitSequenceTests().startUp(), clock: clock)
    var driver = try MPU6050Driver(bus: bus)
    var time = clock
    _ = try driver.start(clock: &time, selfTest: false)
    bus.expect([
      .write(0x23, 0xF8, at: chip), .write(0x6A, 0x04, at: chip), .write(0x6A, 0x40, at: chip),
      .write(0x38, 0x11, at: chip),
    ])
    driver.enableFIFO(at: clock.now())
    #expect(bus.finish() == [])

    bus.expect([
      .read(0x6B, at: chip, returning: [0x01]),  // PWR_MGMT_1: awake, X-gyro PLL
      .read(0x38, at: chip, returning: [0x01]),  // INT_ENABLE lost FIFO_OFLOW_EN
      // The whole configuration, from the copy: FIFO emptied, then enabled.
      .write(0x6B, 0x01, at: chip), .write(0x19, 0x09, at: chip), .write(0x1A, 0x03, at: chip),
      .write(0x1B, 0x08, at: chip), .write(0x1C, 0x08, at: chip), .write(0x37, 0x00, at: chip),
      .write(0x38, 0x11, at: chip), .write(0x23, 0xF8, at: chip), .write(0x6A, 0x04, at: chip),
      .write(0x6A, 0x40, at: chip),
      .read(0x19, at: chip, returning: [0x09, 0x03, 0x08, 0x08]),
      .read(0x23, at: chip, returning: [0xF8]),
      .read(0x37, at: chip, returning: [0x00, 0x11]),
      .read(0x6A, at: chip, returning: [0x40, 0x01]),
    ])
    let diagnosis = driver.diagnoseMissingEdges(at: clock.now())
    #expect(diagnosis == .reconfigured)
    #expect(bus.finish() == [])
    #expect(driver.counters.configurationMismatches == 1)
    // The copy is what the driver means the chip to hold: unchanged by what it read.
    expectDefault(driver.controlRegisters, fifo: true)
  }
}
