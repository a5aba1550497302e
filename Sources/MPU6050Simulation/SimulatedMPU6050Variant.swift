import ByteFormats

/// Which part the simulated chip pretends to be: its WHO_AM_I and the few ways the part's
/// registers differ from an MPU-6050's where a driver would notice.
///
/// The simulation restates these numbers on its own (it does not import the driver), so a
/// wrong constant cannot hide in both.
public struct SimulatedMPU6050Variant: Hashable, Sendable, CustomStringConvertible {
  /// The register map generation.
  public enum Generation: String, Hashable, Sendable {
    /// MPU-6050 (RM-MPU-6000A rev 4.2): CONFIG's DLPF filters both sensors.
    case mpu6050
    /// MPU-6500 and successors: the accelerometer has its own filter in ACCEL_CONFIG2 (0x1D,
    /// A_DLPF_CFG bits 2:0, ACCEL_FCHOICE_B bit 3).
    case mpu6500
  }

  /// A name for reports.
  public var name: String
  /// What WHO_AM_I (0x75) reads.
  public var whoAmI: UInt8
  public var generation: Generation
  /// °C = counts / this + `temperatureOffsetCelsius`.
  public var temperatureCountsPerDegreeCelsius: Double
  public var temperatureOffsetCelsius: Double
  /// Bytes the FIFO holds.
  public var fifoCapacityBytes: Int

  public init(
    name: String, whoAmI: UInt8, generation: Generation,
    temperatureCountsPerDegreeCelsius: Double, temperatureOffsetCelsius: Double,
    fifoCapacityBytes: Int
  ) {
    self.name = name
    self.whoAmI = whoAmI
    self.generation = generation
    self.temperatureCountsPerDegreeCelsius = temperatureCountsPerDegreeCelsius
    self.temperatureOffsetCelsius = temperatureOffsetCelsius
    self.fifoCapacityBytes = max(16, fifoCapacityBytes)
  }

  /// A genuine MPU-6050: WHO_AM_I 0x68 (RM §4.32), 340 LSB/°C and 36.53 °C at 0 counts (RM
  /// §4.18), a 1024-byte FIFO (PS §7.17).
  public static let mpu6050 = SimulatedMPU6050Variant(
    name: "MPU-6050", whoAmI: 0x68, generation: .mpu6050, temperatureCountsPerDegreeCelsius: 340,
    temperatureOffsetCelsius: 36.53, fifoCapacityBytes: 1024)

  /// An MPU-6050 register map behind another WHO_AM_I: a clone or relabelled part (0x72 is what
  /// most reports of "fake MPU-6050" boards show).
  public static func clone(whoAmI: UInt8) -> SimulatedMPU6050Variant {
    var variant = mpu6050
    variant.name = "MPU-6050 clone"
    variant.whoAmI = whoAmI
    return variant
  }

  /// An MPU-6500: WHO_AM_I 0x70, 333.87 LSB/°C and 21 °C at 0 counts, a 512-byte FIFO (Linux
  /// `inv_mpu6050`).
  public static let mpu6500 = SimulatedMPU6050Variant(
    name: "MPU-6500", whoAmI: 0x70, generation: .mpu6500,
    temperatureCountsPerDegreeCelsius: 333.87, temperatureOffsetCelsius: 21,
    fifoCapacityBytes: 512)

  /// An ICM-20689 (often sold as "MPU-6050"): WHO_AM_I 0x98, 326.8 LSB/°C and 25 °C at 0 counts,
  /// a 512-byte FIFO at its default FIFO_SIZE.
  public static let icm20689 = SimulatedMPU6050Variant(
    name: "ICM-20689", whoAmI: 0x98, generation: .mpu6500,
    temperatureCountsPerDegreeCelsius: 326.8, temperatureOffsetCelsius: 25,
    fifoCapacityBytes: 512)

  public var description: String {
    "\(name) (WHO_AM_I \(hexByte(whoAmI)))"
  }
}
