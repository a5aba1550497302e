import ByteFormats
import HardwareAbstraction

/// The control registers as the driver means the chip to hold them: the validated
/// configuration, for the part found (ACCEL_CONFIG2 only on the MPU-6500 family, which has it)
/// and for the sample source (the FIFO's bits only while the FIFO is in use).
///
/// The driver keeps this copy rather than reading the chip to change it: a change is made to the
/// copy (`userControl | .fifoEnabled`) and written from it, and the periodic read-back compares
/// the chip with it. A brown-out or a glitch that changes a register on the chip is then a
/// mismatch, never the new truth.
public struct MPU6050ControlRegisters: Hashable, Sendable {
  /// SMPLRT_DIV.
  public var sampleRateDivider: SampleRateDividerRegister
  /// CONFIG: FSYNC off, the filter.
  public var config: ConfigRegister
  /// GYRO_CONFIG: the range, self-test off.
  public var gyroConfig: GyroConfigRegister
  /// ACCEL_CONFIG: the range, self-test off.
  public var accelConfig: AccelConfigRegister
  /// ACCEL_CONFIG2, written only on an MPU-6500-family part; `nil` otherwise (or before the part
  /// is known).
  public var accelConfig2: AccelConfig2Register?
  /// INT_PIN_CFG.
  public var interruptPinConfig: InterruptPinConfigRegister
  /// INT_ENABLE: DATA_RDY_EN as configured, FIFO_OFLOW_EN while the FIFO is in use.
  public var interruptEnable: InterruptEnableRegister
  /// FIFO_EN: the configuration's outputs while the FIFO is in use, none otherwise.
  public var fifoEnable: FIFOEnableRegister
  /// USER_CTRL: FIFO_EN while the FIFO is in use.
  public var userControl: UserControlRegister
  /// PWR_MGMT_1: awake, on the configured clock.
  public var powerManagement1: PowerManagement1Register

  /// The registers for `configuration` on a part not known yet, sampling the data registers.
  public init(configuration: ValidatedMPU6050Configuration) {
    sampleRateDivider = configuration.sampleRateDivider
    config = configuration.config
    gyroConfig = configuration.gyroConfig
    accelConfig = configuration.accelConfig
    accelConfig2 = nil
    interruptPinConfig = configuration.interruptPinConfig
    interruptEnable = configuration.interruptEnable(fifo: false)
    fifoEnable = FIFOEnableRegister()
    userControl = UserControlRegister()
    powerManagement1 = configuration.powerManagement1
  }

  /// USER_CTRL that empties the FIFO: FIFO_RESET with FIFO_EN clear, as FIFO_RESET requires
  /// (RM §4.27). Written before `userControl` whenever the FIFO is (re)started or stopped.
  public var userControlEmptyingFIFO: UserControlRegister {
    userControl.removing(.fifoEnabled) | .fifoReset
  }

  /// Changes the registers that follow the sample source: for the FIFO, the outputs of
  /// `fifoEnable` recorded, the FIFO on and its overflow interrupt enabled; for the data
  /// registers, all three off.
  mutating func select(_ source: MPU6050SampleSource, fifoEnable outputs: FIFOEnableRegister) {
    switch source {
    case .fifo:
      fifoEnable = outputs
      userControl = userControl | .fifoEnabled
      interruptEnable = interruptEnable | .fifoOverflow
    case .dataRegisters:
      fifoEnable = FIFOEnableRegister()
      userControl = userControl.removing(.fifoEnabled)
      interruptEnable = interruptEnable.removing(.fifoOverflow)
    }
  }
}

/// Writing the control registers from `controlRegisters` and reading them back.
extension MPU6050Driver {
  /// Wakes the chip on the gyroscope PLL, then writes the rest of `controlRegisters` in
  /// register order.
  mutating func writeConfiguration() throws(MPU6050Error) {
    let registers = controlRegisters
    try requireWrite(registers.powerManagement1)
    try requireWrite(registers.sampleRateDivider)
    try requireWrite(registers.config)
    try requireWrite(registers.gyroConfig)
    try requireWrite(registers.accelConfig)
    if let accelConfig2 = registers.accelConfig2 {
      try requireWrite(accelConfig2)
    }
    try requireWrite(registers.interruptPinConfig)
    try requireWrite(registers.interruptEnable)
    try requireWrite(registers.fifoEnable)
    if source == .fifo {
      // Empty the FIFO, then enable it.
      try requireWrite(registers.userControlEmptyingFIFO)
    }
    try requireWrite(registers.userControl)
  }

  /// Reads the configuration back in four block reads (0x19–0x1C or 0x1D, 0x23, 0x37–0x38,
  /// 0x6A–0x6B) and throws at the first byte that differs from `controlRegisters`.
  mutating func verifyConfiguration() throws(MPU6050Error) {
    var mismatch: MPU6050Error?
    if let error = readBackConfiguration({ register, expected, read in
      if read != expected, mismatch == nil {
        mismatch = .registerMismatch(
          register: register, name: Self.registerName(register), wrote: expected, read: read)
      }
    }) {
      throw .bus(error)
    }
    if let mismatch { throw mismatch }
  }

  /// Reads back every register of `controlRegisters` the chip has and hands each (address,
  /// the copy's value, the chip's) to `visit`; returns the bus error if a read failed.
  /// Allocation-free.
  mutating func readBackConfiguration(_ visit: (UInt8, UInt8, UInt8) -> Void) -> I2CError? {
    let expected = controlRegisters
    var block = Block()
    let configCount = expected.accelConfig2 == nil ? 4 : 5
    if let error = readBlock(SampleRateDividerRegister.address, count: configCount, into: &block) {
      return error
    }
    block.withBytes { bytes in
      visit(SampleRateDividerRegister.address, expected.sampleRateDivider.bits, bytes[0])
      visit(ConfigRegister.address, expected.config.bits, bytes[1])
      visit(GyroConfigRegister.address, expected.gyroConfig.bits, bytes[2])
      visit(AccelConfigRegister.address, expected.accelConfig.bits, bytes[3])
      if let accelConfig2 = expected.accelConfig2 {
        visit(AccelConfig2Register.address, accelConfig2.bits, bytes[4])
      }
    }
    if let error = readBlock(FIFOEnableRegister.address, count: 1, into: &block) { return error }
    block.withBytes { visit(FIFOEnableRegister.address, expected.fifoEnable.bits, $0[0]) }
    if let error = readBlock(InterruptPinConfigRegister.address, count: 2, into: &block) {
      return error
    }
    block.withBytes { bytes in
      visit(InterruptPinConfigRegister.address, expected.interruptPinConfig.bits, bytes[0])
      visit(InterruptEnableRegister.address, expected.interruptEnable.bits, bytes[1])
    }
    if let error = readBlock(UserControlRegister.address, count: 2, into: &block) { return error }
    block.withBytes { bytes in
      visit(UserControlRegister.address, expected.userControl.bits, bytes[0])
      visit(PowerManagement1Register.address, expected.powerManagement1.bits, bytes[1])
    }
    return nil
  }

  /// The datasheet name of a register the read-back covers, for a mismatch error.
  static func registerName(_ register: UInt8) -> String {
    switch register {
    case SampleRateDividerRegister.address: SampleRateDividerRegister.name
    case ConfigRegister.address: ConfigRegister.name
    case GyroConfigRegister.address: GyroConfigRegister.name
    case AccelConfigRegister.address: AccelConfigRegister.name
    case AccelConfig2Register.address: AccelConfig2Register.name
    case FIFOEnableRegister.address: FIFOEnableRegister.name
    case InterruptPinConfigRegister.address: InterruptPinConfigRegister.name
    case InterruptEnableRegister.address: InterruptEnableRegister.name
    case UserControlRegister.address: UserControlRegister.name
    case PowerManagement1Register.address: PowerManagement1Register.name
    default: hexByte(register)
    }
  }
}
