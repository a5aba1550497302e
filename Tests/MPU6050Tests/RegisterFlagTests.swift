import MPU6050
import Testing

/// The registers' single-bit flags (`PowerManagement1Register.deviceReset` …) and the changes
/// made with them. Every bit is restated from RM-MPU-6000A-00 rev 4.2 §4.x as a literal.
@Suite("Register flags")
struct RegisterFlagTests {
  /// A flag's name, its bit restated from the datasheet, and its value from the source.
  struct Flag<Register: MPU6050Register> {
    var name: String
    var mask: UInt8
    var value: Register
    var accessor: WritableKeyPath<Register, Bool>?

    init(
      _ name: String, _ mask: UInt8, _ value: Register, _ accessor: WritableKeyPath<Register, Bool>?
    ) {
      self.name = name
      self.mask = mask
      self.value = value
      self.accessor = accessor
    }
  }

  /// Over every byte the register can hold: each flag is its bit alone; `|`/`inserting` set
  /// only that bit, `removing` clears only that bit, `contains` and the `Bool` accessor read
  /// it, and setting the accessor changes only it.
  func check<Register: MPU6050Register>(_ flags: [Flag<Register>]) {
    for flag in flags {
      #expect(flag.value.bits == flag.mask, "\(Register.name) \(flag.name)")
      for byte in UInt8.min...UInt8.max {
        let register = Register(bits: byte)
        #expect((register | flag.value).bits == byte | flag.mask, "\(flag.name) \(byte)")
        #expect(register.inserting(flag.value).bits == byte | flag.mask, "\(flag.name) \(byte)")
        #expect(register.removing(flag.value).bits == byte & ~flag.mask, "\(flag.name) \(byte)")
        #expect(register.contains(flag.value) == (byte & flag.mask != 0), "\(flag.name) \(byte)")
        guard let accessor = flag.accessor else { continue }
        #expect(register[keyPath: accessor] == (byte & flag.mask != 0), "\(flag.name) \(byte)")
        var changed = register
        changed[keyPath: accessor] = true
        #expect(changed.bits == byte | flag.mask, "\(flag.name) \(byte)")
        changed[keyPath: accessor] = false
        #expect(changed.bits == byte & ~flag.mask, "\(flag.name) \(byte)")
      }
    }
  }

  @Test("PWR_MGMT_1: DEVICE_RESET 0x80, SLEEP 0x40, CYCLE 0x20, TEMP_DIS 0x08")
  func powerManagement1() {
    check([
      Flag("DEVICE_RESET", 0x80, PowerManagement1Register.deviceReset, \.deviceReset),
      Flag("SLEEP", 0x40, .sleep, \.sleep),
      Flag("CYCLE", 0x20, .cycle, \.cycle),
      Flag("TEMP_DIS", 0x08, .temperatureDisabled, \.temperatureDisabled),
    ])
    // The clock source is not a flag: setting SLEEP keeps CLKSEL.
    let awake = PowerManagement1Register(clockSource: .gyroXPLL)
    #expect((awake | .sleep).bits == 0x41)
    #expect((awake | .sleep).clockSource == .gyroXPLL)
  }

  @Test("USER_CTRL: FIFO_EN 0x40, I2C_MST_EN 0x20, I2C_IF_DIS 0x10, FIFO_RESET 0x04 …")
  func userControl() {
    check([
      Flag("FIFO_EN", 0x40, UserControlRegister.fifoEnabled, \.fifoEnabled),
      Flag("I2C_MST_EN", 0x20, .auxiliaryMasterEnabled, \.auxiliaryMasterEnabled),
      Flag("I2C_IF_DIS", 0x10, .primaryInterfaceDisabled, \.primaryInterfaceDisabled),
      Flag("FIFO_RESET", 0x04, .fifoReset, \.fifoReset),
      Flag("I2C_MST_RESET", 0x02, .auxiliaryMasterReset, \.auxiliaryMasterReset),
      Flag("SIG_COND_RESET", 0x01, .signalConditionReset, \.signalConditionReset),
    ])
  }

  @Test("INT_ENABLE and INT_STATUS: FIFO_OFLOW 0x10, I2C_MST 0x08, DATA_RDY 0x01")
  func interrupts() {
    check([
      Flag("FIFO_OFLOW_EN", 0x10, InterruptEnableRegister.fifoOverflow, \.fifoOverflow),
      Flag("I2C_MST_INT_EN", 0x08, .auxiliaryMaster, \.auxiliaryMaster),
      Flag("DATA_RDY_EN", 0x01, .dataReady, \.dataReady),
    ])
    // INT_STATUS is read-only: its accessors are not writable.
    check([
      Flag("FIFO_OFLOW_INT", 0x10, InterruptStatusRegister.fifoOverflow, nil),
      Flag("I2C_MST_INT", 0x08, .auxiliaryMaster, nil),
      Flag("DATA_RDY_INT", 0x01, .dataReady, nil),
    ])
    for byte in UInt8.min...UInt8.max {
      let status = InterruptStatusRegister(bits: byte)
      #expect(status.dataReady == (byte & 0x01 != 0))
      #expect(status.auxiliaryMaster == (byte & 0x08 != 0))
      #expect(status.fifoOverflow == (byte & 0x10 != 0))
    }
  }

  @Test("INT_PIN_CFG: INT_LEVEL 0x80 … I2C_BYPASS_EN 0x02")
  func interruptPinConfig() {
    check([
      Flag("INT_LEVEL", 0x80, InterruptPinConfigRegister.activeLow, \.activeLow),
      Flag("INT_OPEN", 0x40, .openDrain, \.openDrain),
      Flag("LATCH_INT_EN", 0x20, .latched, \.latched),
      Flag("INT_RD_CLEAR", 0x10, .clearOnAnyRead, \.clearOnAnyRead),
      Flag("FSYNC_INT_LEVEL", 0x08, .fsyncActiveLow, \.fsyncActiveLow),
      Flag("FSYNC_INT_EN", 0x04, .fsyncInterrupt, \.fsyncInterrupt),
      Flag("I2C_BYPASS_EN", 0x02, .auxiliaryBypass, \.auxiliaryBypass),
    ])
  }

  @Test("FIFO_EN: TEMP 0x80, XG 0x40, YG 0x20, ZG 0x10, ACCEL 0x08")
  func fifoEnable() {
    check([
      Flag("TEMP_FIFO_EN", 0x80, FIFOEnableRegister.temperature, \.temperature),
      Flag("XG_FIFO_EN", 0x40, .gyroX, nil),
      Flag("YG_FIFO_EN", 0x20, .gyroY, nil),
      Flag("ZG_FIFO_EN", 0x10, .gyroZ, nil),
      Flag("ACCEL_FIFO_EN", 0x08, .accelerometer, \.accelerometer),
    ])
    #expect((FIFOEnableRegister.gyroX | .gyroZ).gyro == [.x, .z])
  }

  @Test("SIGNAL_PATH_RESET 0x04/0x02/0x01 and ACCEL_CONFIG2's ACCEL_FCHOICE_B 0x08")
  func resetsAndFilterBypass() {
    check([
      Flag("GYRO_RESET", 0x04, SignalPathResetRegister.gyro, \.gyro),
      Flag("ACCEL_RESET", 0x02, .accelerometer, \.accelerometer),
      Flag("TEMP_RESET", 0x01, .temperature, \.temperature),
    ])
    check([Flag("ACCEL_FCHOICE_B", 0x08, AccelConfig2Register.filterBypassed, \.filterBypassed)])
  }

  @Test("a value with no flag set is 0x00, whatever the register's reset value")
  func empty() {
    #expect(PowerManagement1Register().bits == 0x00)
    #expect(UserControlRegister().bits == 0x00)
    #expect(InterruptPinConfigRegister().bits == 0x00)
  }
}
