import ByteFormats

/// The MPU-6050's registers as types: each knows its address and gives its bits typed names.
///
/// Source: InvenSense RM-MPU-6000A-00 rev 4.2 ("RM"), §3 (register map table, reset values) and
/// §4.x (one section per register, cited on each type). Only the registers the driver uses are
/// here. Every type wraps the raw byte, so any value read from a chip decodes (reserved patterns
/// included) and re-encodes to the same byte; the typed accessors read and write the fields.
///
/// Reset values (RM §3): every register reads `0x00` after reset except PWR_MGMT_1 (`0x40`,
/// asleep) and WHO_AM_I (`0x68`).
public protocol MPU6050Register: Hashable, Sendable, CustomStringConvertible {
  /// The register's address (RM §3).
  static var address: UInt8 { get }
  /// The register's datasheet name, e.g. `PWR_MGMT_1`.
  static var name: String { get }
  /// The raw byte.
  var bits: UInt8 { get set }
  init(bits: UInt8)
}

extension MPU6050Register {
  @inlinable
  func bit(_ index: UInt8) -> Bool { bits & (1 << index) != 0 }

  // Plain get-then-set rather than `bits |= …`: the compound assignment goes through the
  // protocol's modify accessor, which allocates a coroutine frame in unoptimised builds.
  @inlinable
  mutating func setBit(_ index: UInt8, _ value: Bool) {
    let current = bits
    bits = value ? current | (1 << index) : current & ~(1 << index)
  }

  /// The field of `width` bits whose lowest bit is `shift`.
  @inlinable
  func field(shift: UInt8, width: UInt8) -> UInt8 { (bits >> shift) & ((1 << width) - 1) }

  @inlinable
  mutating func setField(shift: UInt8, width: UInt8, _ value: UInt8) {
    let mask: UInt8 = ((1 << width) - 1) << shift
    let current = bits
    bits = (current & ~mask) | ((value << shift) & mask)
  }

  public var description: String { "\(Self.name) (\(hexByte(Self.address))) = \(hexByte(bits))" }
}

/// The three axes, as a set: which self-test actuators are on, which axes are in standby.
public struct AxisSet: OptionSet, Hashable, Sendable {
  public var rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }
  public static let x = AxisSet(rawValue: 1 << 0)
  public static let y = AxisSet(rawValue: 1 << 1)
  public static let z = AxisSet(rawValue: 1 << 2)
  public static let all: AxisSet = [.x, .y, .z]
}

// MARK: - Self-test (RM §4.1)

/// SELF_TEST_X/Y/Z (`0x0D`…`0x0F`), RM §4.1: the factory trim codes of one axis. Bits 7:5 hold
/// the upper three bits of the accelerometer code `XA_TEST[4:2]`, bits 4:0 the gyroscope code
/// `XG_TEST[4:0]`. The lower two accelerometer bits are in SELF_TEST_A.
public struct SelfTestAxisRegister: Hashable, Sendable {
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  /// `XG_TEST[4:0]`, bits 4:0: the gyroscope factory trim code, 0…31 (0 means "no trim").
  public var gyroTrimCode: UInt8 { bits & 0x1F }
  /// `XA_TEST[4:2]`, bits 7:5.
  public var accelerometerTrimCodeHigh: UInt8 { bits >> 5 }
}

/// The addresses of the self-test registers, RM §4.1.
public enum SelfTestRegisters {
  /// SELF_TEST_X, `0x0D`.
  public static let x: UInt8 = 0x0D
  /// SELF_TEST_Y, `0x0E`.
  public static let y: UInt8 = 0x0E
  /// SELF_TEST_Z, `0x0F`.
  public static let z: UInt8 = 0x0F
  /// SELF_TEST_A, `0x10`: bits 5:4 `XA_TEST[1:0]`, 3:2 `YA_TEST[1:0]`, 1:0 `ZA_TEST[1:0]`.
  public static let a: UInt8 = 0x10
}

// MARK: - Configuration (RM §4.2–4.5)

/// SMPLRT_DIV (`0x19`), RM §4.2: Sample Rate = Gyroscope Output Rate / (1 + SMPLRT_DIV), where
/// the gyroscope output rate is 8 kHz with the DLPF off (DLPF_CFG 0 or 7) and 1 kHz with it on.
public struct SampleRateDividerRegister: MPU6050Register {
  public static let address: UInt8 = 0x19
  public static let name = "SMPLRT_DIV"
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  public init(divider: UInt8) { self.bits = divider }
  public var divider: UInt8 {
    get { bits }
    set { bits = newValue }
  }
}

/// EXT_SYNC_SET, CONFIG bits 5:3 (RM §4.3): which output's LSB latches the FSYNC pin. Plumb
/// leaves FSYNC unused (`.disabled`).
public enum ExternalSync: UInt8, CaseIterable, Hashable, Sendable {
  case disabled = 0
  case temperatureOutLow = 1
  case gyroXOutLow = 2
  case gyroYOutLow = 3
  case gyroZOutLow = 4
  case accelXOutLow = 5
  case accelYOutLow = 6
  case accelZOutLow = 7
}

/// CONFIG (`0x1A`), RM §4.3: FSYNC sampling and the digital low-pass filter.
public struct ConfigRegister: MPU6050Register {
  public static let address: UInt8 = 0x1A
  public static let name = "CONFIG"
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  public init(lowPassFilter: DigitalLowPassFilter, externalSync: ExternalSync = .disabled) {
    bits = 0
    self.lowPassFilter = lowPassFilter
    self.externalSync = externalSync
  }
  /// EXT_SYNC_SET, bits 5:3.
  public var externalSync: ExternalSync {
    get { ExternalSync(rawValue: field(shift: 3, width: 3))! }
    set { setField(shift: 3, width: 3, newValue.rawValue) }
  }
  /// DLPF_CFG, bits 2:0, as the raw code 0…7.
  public var lowPassFilterCode: UInt8 {
    get { field(shift: 0, width: 3) }
    set { setField(shift: 0, width: 3, newValue) }
  }
  /// DLPF_CFG as a setting; `nil` for the reserved code 7.
  public var lowPassFilter: DigitalLowPassFilter? {
    get { DigitalLowPassFilter(rawValue: lowPassFilterCode) }
    set { lowPassFilterCode = newValue?.rawValue ?? 7 }
  }
}

/// GYRO_CONFIG (`0x1B`), RM §4.4: self-test actuators (XG_ST bit 7, YG_ST 6, ZG_ST 5) and the
/// full-scale range FS_SEL (bits 4:3).
public struct GyroConfigRegister: MPU6050Register {
  public static let address: UInt8 = 0x1B
  public static let name = "GYRO_CONFIG"
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  public init(fullScale: GyroFullScale, selfTest: AxisSet = []) {
    bits = 0
    self.fullScale = fullScale
    self.selfTest = selfTest
  }
  /// FS_SEL, bits 4:3.
  public var fullScale: GyroFullScale {
    get { GyroFullScale(rawValue: field(shift: 3, width: 2))! }
    set { setField(shift: 3, width: 2, newValue.rawValue) }
  }
  /// XG_ST (bit 7), YG_ST (6), ZG_ST (5).
  public var selfTest: AxisSet {
    get { selfTestAxes(bits) }
    set { bits = (bits & 0x1F) | selfTestBits(newValue) }
  }
}

/// ACCEL_CONFIG (`0x1C`), RM §4.5: self-test actuators (XA_ST bit 7, YA_ST 6, ZA_ST 5) and the
/// full-scale range AFS_SEL (bits 4:3).
public struct AccelConfigRegister: MPU6050Register {
  public static let address: UInt8 = 0x1C
  public static let name = "ACCEL_CONFIG"
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  public init(fullScale: AccelerometerFullScale, selfTest: AxisSet = []) {
    bits = 0
    self.fullScale = fullScale
    self.selfTest = selfTest
  }
  /// AFS_SEL, bits 4:3.
  public var fullScale: AccelerometerFullScale {
    get { AccelerometerFullScale(rawValue: field(shift: 3, width: 2))! }
    set { setField(shift: 3, width: 2, newValue.rawValue) }
  }
  /// XA_ST (bit 7), YA_ST (6), ZA_ST (5).
  public var selfTest: AxisSet {
    get { selfTestAxes(bits) }
    set { bits = (bits & 0x1F) | selfTestBits(newValue) }
  }
}

/// ACCEL_CONFIG2 (`0x1D`): **MPU-6500 family only** (not on the MPU-6050, whose accelerometer
/// filter follows CONFIG). A_DLPF_CFG (bits 2:0) selects the accelerometer low-pass filter and
/// ACCEL_FCHOICE_B (bit 3) bypasses it. Source: Linux `inv_mpu_iio.h`
/// (`INV_MPU6500_REG_ACCEL_CONFIG_2 = 0x1D`, used as `accel_lpf` for every 6500-class part).
public struct AccelConfig2Register: MPU6050Register {
  public static let address: UInt8 = 0x1D
  public static let name = "ACCEL_CONFIG2"
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  public init(lowPassFilterCode: UInt8) { bits = lowPassFilterCode & 0x07 }
  /// A_DLPF_CFG, bits 2:0.
  public var lowPassFilterCode: UInt8 {
    get { field(shift: 0, width: 3) }
    set { setField(shift: 0, width: 3, newValue) }
  }
  /// ACCEL_FCHOICE_B, bit 3: 1 bypasses the accelerometer filter.
  public var filterBypassed: Bool {
    get { bit(3) }
    set { setBit(3, newValue) }
  }
}

// MARK: - FIFO and interrupts (RM §4.6, §4.14–4.16)

/// FIFO_EN (`0x23`), RM §4.6: which outputs are written to the FIFO, in register order
/// (accelerometer, temperature, gyroscope X, Y, Z).
public struct FIFOEnableRegister: MPU6050Register {
  public static let address: UInt8 = 0x23
  public static let name = "FIFO_EN"
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  /// TEMP_FIFO_EN, bit 7.
  public var temperature: Bool {
    get { bit(7) }
    set { setBit(7, newValue) }
  }
  /// XG_FIFO_EN (bit 6), YG_FIFO_EN (5), ZG_FIFO_EN (4).
  public var gyro: AxisSet {
    get {
      var axes: AxisSet = []
      if bit(6) { axes.insert(.x) }
      if bit(5) { axes.insert(.y) }
      if bit(4) { axes.insert(.z) }
      return axes
    }
    set {
      setBit(6, newValue.contains(.x))
      setBit(5, newValue.contains(.y))
      setBit(4, newValue.contains(.z))
    }
  }
  /// ACCEL_FIFO_EN, bit 3 (all three axes together).
  public var accelerometer: Bool {
    get { bit(3) }
    set { setBit(3, newValue) }
  }
  /// SLV2/SLV1/SLV0_FIFO_EN, bits 2:0 (external sensors; Plumb leaves them off).
  public var externalSensors: UInt8 { bits & 0x07 }

  /// Bytes one FIFO record takes with these outputs enabled: 6 for the accelerometer, 2 for the
  /// temperature, 2 per gyroscope axis (external sensors not counted).
  public var recordLength: Int {
    (accelerometer ? 6 : 0) + (temperature ? 2 : 0) + 2 * gyro.rawValue.nonzeroBitCount
  }
}

/// INT_PIN_CFG (`0x37`), RM §4.14: the INT pin's electrical behaviour and how status clears.
public struct InterruptPinConfigRegister: MPU6050Register {
  public static let address: UInt8 = 0x37
  public static let name = "INT_PIN_CFG"
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  /// INT_LEVEL, bit 7: `true` = active low.
  public var activeLow: Bool {
    get { bit(7) }
    set { setBit(7, newValue) }
  }
  /// INT_OPEN, bit 6: `true` = open drain, `false` = push-pull.
  public var openDrain: Bool {
    get { bit(6) }
    set { setBit(6, newValue) }
  }
  /// LATCH_INT_EN, bit 5: `true` = held until cleared, `false` = a 50 µs pulse (PS §6.4).
  public var latched: Bool {
    get { bit(5) }
    set { setBit(5, newValue) }
  }
  /// INT_RD_CLEAR, bit 4: `true` = status bits clear on any read, `false` = only by reading
  /// INT_STATUS.
  public var clearOnAnyRead: Bool {
    get { bit(4) }
    set { setBit(4, newValue) }
  }
  /// FSYNC_INT_LEVEL, bit 3.
  public var fsyncActiveLow: Bool {
    get { bit(3) }
    set { setBit(3, newValue) }
  }
  /// FSYNC_INT_EN, bit 2.
  public var fsyncInterrupt: Bool {
    get { bit(2) }
    set { setBit(2, newValue) }
  }
  /// I2C_BYPASS_EN, bit 1.
  public var auxiliaryBypass: Bool {
    get { bit(1) }
    set { setBit(1, newValue) }
  }
}

/// INT_ENABLE (`0x38`), RM §4.15: which events drive the INT pin.
public struct InterruptEnableRegister: MPU6050Register {
  public static let address: UInt8 = 0x38
  public static let name = "INT_ENABLE"
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  /// FIFO_OFLOW_EN, bit 4.
  public var fifoOverflow: Bool {
    get { bit(4) }
    set { setBit(4, newValue) }
  }
  /// I2C_MST_INT_EN, bit 3.
  public var auxiliaryMaster: Bool {
    get { bit(3) }
    set { setBit(3, newValue) }
  }
  /// DATA_RDY_EN, bit 0: a pulse each time all sensor registers have been written.
  public var dataReady: Bool {
    get { bit(0) }
    set { setBit(0, newValue) }
  }
}

/// INT_STATUS (`0x3A`), RM §4.16: read-only; bits clear when read (or on any read, per
/// INT_RD_CLEAR).
public struct InterruptStatusRegister: MPU6050Register {
  public static let address: UInt8 = 0x3A
  public static let name = "INT_STATUS"
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  /// FIFO_OFLOW_INT, bit 4: the FIFO overflowed (its oldest data was lost).
  public var fifoOverflow: Bool { bit(4) }
  /// I2C_MST_INT, bit 3.
  public var auxiliaryMaster: Bool { bit(3) }
  /// DATA_RDY_INT, bit 0: a new sample was written to the sensor registers.
  public var dataReady: Bool { bit(0) }
}

// MARK: - Measurements (RM §4.17–4.19)

/// The sensor output registers, RM §4.17–4.19: big-endian two's-complement pairs, high byte
/// first. A burst from ACCEL_XOUT_H covers accelerometer, temperature and gyroscope of one
/// sampling instant (RM §4.17: the user-facing registers are refreshed only while the serial
/// interface is idle).
public enum MeasurementRegisters {
  /// ACCEL_XOUT_H, `0x3B` (RM §4.17): the start of the 14-byte burst.
  public static let accelXHigh: UInt8 = 0x3B
  /// TEMP_OUT_H, `0x41` (RM §4.18).
  public static let temperatureHigh: UInt8 = 0x41
  /// GYRO_XOUT_H, `0x43` (RM §4.19).
  public static let gyroXHigh: UInt8 = 0x43
  /// GYRO_ZOUT_L, `0x48`: the last byte of the burst.
  public static let gyroZLow: UInt8 = 0x48
  /// 14 bytes: accelerometer X, Y, Z, temperature, gyroscope X, Y, Z.
  public static let burstLength = 14
}

// MARK: - Resets, power, FIFO access, identity (RM §4.26–4.32)

/// SIGNAL_PATH_RESET (`0x68`), RM §4.26: resets the analog and digital signal paths (not the
/// registers).
public struct SignalPathResetRegister: MPU6050Register {
  public static let address: UInt8 = 0x68
  public static let name = "SIGNAL_PATH_RESET"
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  /// GYRO_RESET, bit 2.
  public var gyro: Bool {
    get { bit(2) }
    set { setBit(2, newValue) }
  }
  /// ACCEL_RESET, bit 1.
  public var accelerometer: Bool {
    get { bit(1) }
    set { setBit(1, newValue) }
  }
  /// TEMP_RESET, bit 0.
  public var temperature: Bool {
    get { bit(0) }
    set { setBit(0, newValue) }
  }
}

/// USER_CTRL (`0x6A`), RM §4.27.
public struct UserControlRegister: MPU6050Register {
  public static let address: UInt8 = 0x6A
  public static let name = "USER_CTRL"
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  /// FIFO_EN, bit 6: the FIFO accepts data.
  public var fifoEnabled: Bool {
    get { bit(6) }
    set { setBit(6, newValue) }
  }
  /// I2C_MST_EN, bit 5.
  public var auxiliaryMasterEnabled: Bool {
    get { bit(5) }
    set { setBit(5, newValue) }
  }
  /// I2C_IF_DIS, bit 4 (MPU-6000 SPI only; always 0 on the MPU-6050).
  public var primaryInterfaceDisabled: Bool {
    get { bit(4) }
    set { setBit(4, newValue) }
  }
  /// FIFO_RESET, bit 2: empties the FIFO "when set to 1 while FIFO_EN equals 0"; clears itself.
  public var fifoReset: Bool {
    get { bit(2) }
    set { setBit(2, newValue) }
  }
  /// I2C_MST_RESET, bit 1.
  public var auxiliaryMasterReset: Bool {
    get { bit(1) }
    set { setBit(1, newValue) }
  }
  /// SIG_COND_RESET, bit 0: resets the signal paths and clears the sensor registers.
  public var signalConditionReset: Bool {
    get { bit(0) }
    set { setBit(0, newValue) }
  }
}

/// CLKSEL, PWR_MGMT_1 bits 2:0 (RM §4.28). InvenSense "highly recommend" a gyroscope PLL over
/// the internal 8 MHz oscillator for stability.
public enum ClockSource: UInt8, CaseIterable, Hashable, Sendable {
  case internal8MHz = 0
  case gyroXPLL = 1
  case gyroYPLL = 2
  case gyroZPLL = 3
  case external32kHzPLL = 4
  case external19MHzPLL = 5
  case reserved = 6
  /// Stops the clock and keeps the timing generator in reset.
  case stopped = 7
}

/// PWR_MGMT_1 (`0x6B`), RM §4.28: reset, sleep, cycle, temperature sensor, clock source. Reads
/// `0x40` (asleep, internal oscillator) after power-on or a reset.
public struct PowerManagement1Register: MPU6050Register {
  public static let address: UInt8 = 0x6B
  public static let name = "PWR_MGMT_1"
  /// `0x40`: the value after power-on or DEVICE_RESET (RM §3).
  public static let resetValue: UInt8 = 0x40
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  public init(clockSource: ClockSource, sleep: Bool = false) {
    bits = 0
    self.clockSource = clockSource
    self.sleep = sleep
  }
  /// DEVICE_RESET, bit 7: resets every register to its default; clears itself when done.
  public var deviceReset: Bool {
    get { bit(7) }
    set { setBit(7, newValue) }
  }
  /// SLEEP, bit 6: low-power sleep. Set after every reset.
  public var sleep: Bool {
    get { bit(6) }
    set { setBit(6, newValue) }
  }
  /// CYCLE, bit 5: wake periodically for one accelerometer sample.
  public var cycle: Bool {
    get { bit(5) }
    set { setBit(5, newValue) }
  }
  /// TEMP_DIS, bit 3: disables the temperature sensor.
  public var temperatureDisabled: Bool {
    get { bit(3) }
    set { setBit(3, newValue) }
  }
  /// CLKSEL, bits 2:0.
  public var clockSource: ClockSource {
    get { ClockSource(rawValue: field(shift: 0, width: 3))! }
    set { setField(shift: 0, width: 3, newValue.rawValue) }
  }
}

/// PWR_MGMT_2 (`0x6C`), RM §4.29: per-axis standby and the low-power wake-up rate.
public struct PowerManagement2Register: MPU6050Register {
  public static let address: UInt8 = 0x6C
  public static let name = "PWR_MGMT_2"
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  /// LP_WAKE_CTRL, bits 7:6.
  public var wakeControl: UInt8 { field(shift: 6, width: 2) }
  /// STBY_XA (bit 5), STBY_YA (4), STBY_ZA (3).
  public var accelerometerStandby: AxisSet {
    var axes: AxisSet = []
    if bit(5) { axes.insert(.x) }
    if bit(4) { axes.insert(.y) }
    if bit(3) { axes.insert(.z) }
    return axes
  }
  /// STBY_XG (bit 2), STBY_YG (1), STBY_ZG (0).
  public var gyroStandby: AxisSet {
    var axes: AxisSet = []
    if bit(2) { axes.insert(.x) }
    if bit(1) { axes.insert(.y) }
    if bit(0) { axes.insert(.z) }
    return axes
  }
}

/// FIFO_COUNTH/FIFO_COUNTL (`0x72`, `0x73`), RM §4.30: bytes in the FIFO, big-endian; read both
/// in one burst from FIFO_COUNTH. FIFO_R_W (`0x74`), RM §4.31: reading it pops the oldest byte;
/// a block read from it pops one byte per data byte (the register pointer does not advance).
public enum FIFORegisters {
  /// FIFO_COUNTH, `0x72`.
  public static let countHigh: UInt8 = 0x72
  /// FIFO_COUNTL, `0x73`.
  public static let countLow: UInt8 = 0x73
  /// FIFO_R_W, `0x74`.
  public static let readWrite: UInt8 = 0x74
  /// The MPU-6050's FIFO holds 1024 bytes (PS §7.17); on overflow "the oldest data will be lost"
  /// (RM §4.31).
  public static let capacityBytes = 1024
}

/// WHO_AM_I (`0x75`), RM §4.32: bits 6:1 hold the identity, `0x68` on an MPU-6050 whatever AD0
/// is (the register does *not* follow the address pin: never compare it with the bus address).
public struct WhoAmIRegister: MPU6050Register {
  public static let address: UInt8 = 0x75
  public static let name = "WHO_AM_I"
  /// `0x68`, a genuine MPU-6050 (also the MPU-6000 and MPU-9150, which share its register map).
  public static let mpu6050: UInt8 = 0x68
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
}

// MARK: - Helpers

@inlinable
func selfTestAxes(_ bits: UInt8) -> AxisSet {
  var axes: AxisSet = []
  if bits & 0x80 != 0 { axes.insert(.x) }
  if bits & 0x40 != 0 { axes.insert(.y) }
  if bits & 0x20 != 0 { axes.insert(.z) }
  return axes
}

@inlinable
func selfTestBits(_ axes: AxisSet) -> UInt8 {
  (axes.contains(.x) ? 0x80 : 0) | (axes.contains(.y) ? 0x40 : 0) | (axes.contains(.z) ? 0x20 : 0)
}
