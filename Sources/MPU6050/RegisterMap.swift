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

// MARK: - Flags

/// A register's single-bit fields are also values of the register type holding that bit alone
/// (`PowerManagement1Register.deviceReset` is `0x80`), so a change reads as the datasheet says
/// it: `power | .sleep`, `control.removing(.fifoEnabled).inserting(.fifoReset)`. The `Bool`
/// accessor of the same name reads or sets one bit of a value.
extension MPU6050Register {
  /// The bits of both.
  @inlinable
  public static func | (lhs: Self, rhs: Self) -> Self { Self(bits: lhs.bits | rhs.bits) }

  /// This value with the bits of `flags` set, the others unchanged.
  @inlinable
  public func inserting(_ flags: Self) -> Self { Self(bits: bits | flags.bits) }

  /// This value with the bits of `flags` clear, the others unchanged.
  @inlinable
  public func removing(_ flags: Self) -> Self { Self(bits: bits & ~flags.bits) }

  /// Whether every bit of `flags` is set.
  @inlinable
  public func contains(_ flags: Self) -> Bool { bits & flags.bits == flags.bits }

  /// Every bit clear (for PWR_MGMT_1 that is not its reset value, `0x40`).
  @inlinable
  public init() { self.init(bits: 0) }

  /// Sets or clears the bits of `flags`.
  @inlinable
  mutating func set(_ flags: Self, _ value: Bool) {
    self = value ? inserting(flags) : removing(flags)
  }
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

/// SELF_TEST_A (`0x10`), RM §4.1: the lower two bits of each axis's accelerometer trim code,
/// `XA_TEST[1:0]` (bits 5:4), `YA_TEST[1:0]` (3:2) and `ZA_TEST[1:0]` (1:0).
public struct SelfTestAccelerometerRegister: MPU6050Register {
  public static let address: UInt8 = 0x10
  public static let name = "SELF_TEST_A"
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  /// `XA_TEST[1:0]`, `YA_TEST[1:0]`, `ZA_TEST[1:0]`.
  public var accelerometerTrimCodeLow: SIMD3<UInt8> {
    SIMD3(field(shift: 4, width: 2), field(shift: 2, width: 2), field(shift: 0, width: 2))
  }
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
  /// ACCEL_FCHOICE_B alone.
  @inlinable public static var filterBypassed: Self { Self(bits: 0x08) }
  public init(lowPassFilterCode: UInt8) { bits = lowPassFilterCode & 0x07 }
  /// A_DLPF_CFG, bits 2:0.
  public var lowPassFilterCode: UInt8 {
    get { field(shift: 0, width: 3) }
    set { setField(shift: 0, width: 3, newValue) }
  }
  /// ACCEL_FCHOICE_B, bit 3: 1 bypasses the accelerometer filter.
  public var filterBypassed: Bool {
    get { contains(.filterBypassed) }
    set { set(.filterBypassed, newValue) }
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
  /// TEMP_FIFO_EN alone.
  @inlinable public static var temperature: Self { Self(bits: 0x80) }
  /// XG_FIFO_EN alone.
  @inlinable public static var gyroX: Self { Self(bits: 0x40) }
  /// YG_FIFO_EN alone.
  @inlinable public static var gyroY: Self { Self(bits: 0x20) }
  /// ZG_FIFO_EN alone.
  @inlinable public static var gyroZ: Self { Self(bits: 0x10) }
  /// ACCEL_FIFO_EN alone.
  @inlinable public static var accelerometer: Self { Self(bits: 0x08) }
  /// TEMP_FIFO_EN, bit 7.
  public var temperature: Bool {
    get { contains(.temperature) }
    set { set(.temperature, newValue) }
  }
  /// XG_FIFO_EN (bit 6), YG_FIFO_EN (5), ZG_FIFO_EN (4).
  public var gyro: AxisSet {
    get {
      var axes: AxisSet = []
      if contains(.gyroX) { axes.insert(.x) }
      if contains(.gyroY) { axes.insert(.y) }
      if contains(.gyroZ) { axes.insert(.z) }
      return axes
    }
    set {
      set(.gyroX, newValue.contains(.x))
      set(.gyroY, newValue.contains(.y))
      set(.gyroZ, newValue.contains(.z))
    }
  }
  /// ACCEL_FIFO_EN, bit 3 (all three axes together).
  public var accelerometer: Bool {
    get { contains(.accelerometer) }
    set { set(.accelerometer, newValue) }
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
  /// INT_LEVEL alone.
  @inlinable public static var activeLow: Self { Self(bits: 0x80) }
  /// INT_OPEN alone.
  @inlinable public static var openDrain: Self { Self(bits: 0x40) }
  /// LATCH_INT_EN alone.
  @inlinable public static var latched: Self { Self(bits: 0x20) }
  /// INT_RD_CLEAR alone.
  @inlinable public static var clearOnAnyRead: Self { Self(bits: 0x10) }
  /// FSYNC_INT_LEVEL alone.
  @inlinable public static var fsyncActiveLow: Self { Self(bits: 0x08) }
  /// FSYNC_INT_EN alone.
  @inlinable public static var fsyncInterrupt: Self { Self(bits: 0x04) }
  /// I2C_BYPASS_EN alone.
  @inlinable public static var auxiliaryBypass: Self { Self(bits: 0x02) }
  /// INT_LEVEL, bit 7: `true` = active low.
  public var activeLow: Bool {
    get { contains(.activeLow) }
    set { set(.activeLow, newValue) }
  }
  /// INT_OPEN, bit 6: `true` = open drain, `false` = push-pull.
  public var openDrain: Bool {
    get { contains(.openDrain) }
    set { set(.openDrain, newValue) }
  }
  /// LATCH_INT_EN, bit 5: `true` = held until cleared, `false` = a 50 µs pulse (PS §6.4).
  public var latched: Bool {
    get { contains(.latched) }
    set { set(.latched, newValue) }
  }
  /// INT_RD_CLEAR, bit 4: `true` = status bits clear on any read, `false` = only by reading
  /// INT_STATUS.
  public var clearOnAnyRead: Bool {
    get { contains(.clearOnAnyRead) }
    set { set(.clearOnAnyRead, newValue) }
  }
  /// FSYNC_INT_LEVEL, bit 3.
  public var fsyncActiveLow: Bool {
    get { contains(.fsyncActiveLow) }
    set { set(.fsyncActiveLow, newValue) }
  }
  /// FSYNC_INT_EN, bit 2.
  public var fsyncInterrupt: Bool {
    get { contains(.fsyncInterrupt) }
    set { set(.fsyncInterrupt, newValue) }
  }
  /// I2C_BYPASS_EN, bit 1.
  public var auxiliaryBypass: Bool {
    get { contains(.auxiliaryBypass) }
    set { set(.auxiliaryBypass, newValue) }
  }
}

/// INT_ENABLE (`0x38`), RM §4.15: which events drive the INT pin.
public struct InterruptEnableRegister: MPU6050Register {
  public static let address: UInt8 = 0x38
  public static let name = "INT_ENABLE"
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  /// FIFO_OFLOW_EN alone.
  @inlinable public static var fifoOverflow: Self { Self(bits: 0x10) }
  /// I2C_MST_INT_EN alone.
  @inlinable public static var auxiliaryMaster: Self { Self(bits: 0x08) }
  /// DATA_RDY_EN alone.
  @inlinable public static var dataReady: Self { Self(bits: 0x01) }
  /// FIFO_OFLOW_EN, bit 4.
  public var fifoOverflow: Bool {
    get { contains(.fifoOverflow) }
    set { set(.fifoOverflow, newValue) }
  }
  /// I2C_MST_INT_EN, bit 3.
  public var auxiliaryMaster: Bool {
    get { contains(.auxiliaryMaster) }
    set { set(.auxiliaryMaster, newValue) }
  }
  /// DATA_RDY_EN, bit 0: a pulse each time all sensor registers have been written.
  public var dataReady: Bool {
    get { contains(.dataReady) }
    set { set(.dataReady, newValue) }
  }
}

/// INT_STATUS (`0x3A`), RM §4.16: read-only; bits clear when read (or on any read, per
/// INT_RD_CLEAR).
public struct InterruptStatusRegister: MPU6050Register {
  public static let address: UInt8 = 0x3A
  public static let name = "INT_STATUS"
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  /// FIFO_OFLOW_INT alone.
  @inlinable public static var fifoOverflow: Self { Self(bits: 0x10) }
  /// I2C_MST_INT alone.
  @inlinable public static var auxiliaryMaster: Self { Self(bits: 0x08) }
  /// DATA_RDY_INT alone.
  @inlinable public static var dataReady: Self { Self(bits: 0x01) }
  /// FIFO_OFLOW_INT, bit 4: the FIFO overflowed (its oldest data was lost).
  public var fifoOverflow: Bool { contains(.fifoOverflow) }
  /// I2C_MST_INT, bit 3.
  public var auxiliaryMaster: Bool { contains(.auxiliaryMaster) }
  /// DATA_RDY_INT, bit 0: a new sample was written to the sensor registers.
  public var dataReady: Bool { contains(.dataReady) }
}

// MARK: - Measurements (RM §4.17–4.19)

/// The sensor output registers, RM §4.17–4.19: big-endian two's-complement pairs, high byte
/// first. A burst from ACCEL_XOUT_H covers accelerometer, temperature and gyroscope of one
/// sampling instant (RM §4.17: the user-facing registers are refreshed only while the serial
/// interface is idle).
public enum MeasurementRegisters {
  /// ACCEL_XOUT_H, `0x3B` (RM §4.17): the start of the 14-byte burst.
  public static let accelXHigh: UInt8 = 0x3B
  /// ACCEL_YOUT_H, `0x3D` (RM §4.17).
  public static let accelYHigh: UInt8 = 0x3D
  /// ACCEL_ZOUT_H, `0x3F` (RM §4.17).
  public static let accelZHigh: UInt8 = 0x3F
  /// TEMP_OUT_H, `0x41` (RM §4.18).
  public static let temperatureHigh: UInt8 = 0x41
  /// GYRO_XOUT_H, `0x43` (RM §4.19).
  public static let gyroXHigh: UInt8 = 0x43
  /// GYRO_YOUT_H, `0x45` (RM §4.19).
  public static let gyroYHigh: UInt8 = 0x45
  /// GYRO_ZOUT_H, `0x47` (RM §4.19).
  public static let gyroZHigh: UInt8 = 0x47
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
  /// GYRO_RESET alone.
  @inlinable public static var gyro: Self { Self(bits: 0x04) }
  /// ACCEL_RESET alone.
  @inlinable public static var accelerometer: Self { Self(bits: 0x02) }
  /// TEMP_RESET alone.
  @inlinable public static var temperature: Self { Self(bits: 0x01) }
  /// GYRO_RESET, bit 2.
  public var gyro: Bool {
    get { contains(.gyro) }
    set { set(.gyro, newValue) }
  }
  /// ACCEL_RESET, bit 1.
  public var accelerometer: Bool {
    get { contains(.accelerometer) }
    set { set(.accelerometer, newValue) }
  }
  /// TEMP_RESET, bit 0.
  public var temperature: Bool {
    get { contains(.temperature) }
    set { set(.temperature, newValue) }
  }
}

/// USER_CTRL (`0x6A`), RM §4.27.
public struct UserControlRegister: MPU6050Register {
  public static let address: UInt8 = 0x6A
  public static let name = "USER_CTRL"
  public var bits: UInt8
  public init(bits: UInt8) { self.bits = bits }
  /// FIFO_EN alone.
  @inlinable public static var fifoEnabled: Self { Self(bits: 0x40) }
  /// I2C_MST_EN alone.
  @inlinable public static var auxiliaryMasterEnabled: Self { Self(bits: 0x20) }
  /// I2C_IF_DIS alone.
  @inlinable public static var primaryInterfaceDisabled: Self { Self(bits: 0x10) }
  /// FIFO_RESET alone: with FIFO_EN 0, as emptying the FIFO needs (RM §4.27).
  @inlinable public static var fifoReset: Self { Self(bits: 0x04) }
  /// I2C_MST_RESET alone.
  @inlinable public static var auxiliaryMasterReset: Self { Self(bits: 0x02) }
  /// SIG_COND_RESET alone.
  @inlinable public static var signalConditionReset: Self { Self(bits: 0x01) }
  /// FIFO_EN, bit 6: the FIFO accepts data.
  public var fifoEnabled: Bool {
    get { contains(.fifoEnabled) }
    set { set(.fifoEnabled, newValue) }
  }
  /// I2C_MST_EN, bit 5.
  public var auxiliaryMasterEnabled: Bool {
    get { contains(.auxiliaryMasterEnabled) }
    set { set(.auxiliaryMasterEnabled, newValue) }
  }
  /// I2C_IF_DIS, bit 4 (MPU-6000 SPI only; always 0 on the MPU-6050).
  public var primaryInterfaceDisabled: Bool {
    get { contains(.primaryInterfaceDisabled) }
    set { set(.primaryInterfaceDisabled, newValue) }
  }
  /// FIFO_RESET, bit 2: empties the FIFO "when set to 1 while FIFO_EN equals 0"; clears itself.
  public var fifoReset: Bool {
    get { contains(.fifoReset) }
    set { set(.fifoReset, newValue) }
  }
  /// I2C_MST_RESET, bit 1.
  public var auxiliaryMasterReset: Bool {
    get { contains(.auxiliaryMasterReset) }
    set { set(.auxiliaryMasterReset, newValue) }
  }
  /// SIG_COND_RESET, bit 0: resets the signal paths and clears the sensor registers.
  public var signalConditionReset: Bool {
    get { contains(.signalConditionReset) }
    set { set(.signalConditionReset, newValue) }
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
  /// DEVICE_RESET alone: what start-up and recovery write to reset the chip.
  @inlinable public static var deviceReset: Self { Self(bits: 0x80) }
  /// SLEEP alone.
  @inlinable public static var sleep: Self { Self(bits: 0x40) }
  /// CYCLE alone.
  @inlinable public static var cycle: Self { Self(bits: 0x20) }
  /// TEMP_DIS alone.
  @inlinable public static var temperatureDisabled: Self { Self(bits: 0x08) }
  public init(clockSource: ClockSource, sleep: Bool = false) {
    bits = 0
    self.clockSource = clockSource
    self.sleep = sleep
  }
  /// DEVICE_RESET, bit 7: resets every register to its default; clears itself when done.
  public var deviceReset: Bool {
    get { contains(.deviceReset) }
    set { set(.deviceReset, newValue) }
  }
  /// SLEEP, bit 6: low-power sleep. Set after every reset.
  public var sleep: Bool {
    get { contains(.sleep) }
    set { set(.sleep, newValue) }
  }
  /// CYCLE, bit 5: wake periodically for one accelerometer sample.
  public var cycle: Bool {
    get { contains(.cycle) }
    set { set(.cycle, newValue) }
  }
  /// TEMP_DIS, bit 3: disables the temperature sensor.
  public var temperatureDisabled: Bool {
    get { contains(.temperatureDisabled) }
    set { set(.temperatureDisabled, newValue) }
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
