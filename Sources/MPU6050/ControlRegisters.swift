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
