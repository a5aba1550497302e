import ByteFormats

/// Which register map a chip follows, for the registers Plumb uses (0x19–0x1C configuration,
/// 0x23 FIFO_EN, 0x37/0x38/0x3A interrupts, the 0x3B burst, 0x6A/0x6B, 0x72–0x74 FIFO).
public enum RegisterMapFamily: String, Hashable, Sendable {
  /// The MPU-6050 itself (RM-MPU-6000A rev 4.2): one filter for both sensors in CONFIG, self-test
  /// trim in 0x0D–0x10, °C = counts / 340 + 36.53.
  case mpu6050
  /// The MPU-6500 generation and its ICM-20xxx successors: the same addresses and fields for
  /// everything above, plus a separate accelerometer filter in ACCEL_CONFIG2 (0x1D), a
  /// different self-test (not the MPU-6050 trim formula: Plumb skips it) and per-part
  /// temperature constants. Source: Linux `drivers/iio/imu/inv_mpu6050` (`reg_set_6500`).
  case mpu6500

  /// The temperature conversion of the family's first member (parts may differ; see
  /// `ChipModel.temperature`).
  public var temperatureConversion: TemperatureConversion {
    switch self {
    case .mpu6050: .mpu6050
    case .mpu6500: .mpu6500
    }
  }
}

/// °C = counts / `countsPerDegreeCelsius` + `offsetCelsius`.
public struct TemperatureConversion: Hashable, Sendable {
  public var countsPerDegreeCelsius: Double
  public var offsetCelsius: Double

  public init(countsPerDegreeCelsius: Double, offsetCelsius: Double) {
    self.countsPerDegreeCelsius = countsPerDegreeCelsius
    self.offsetCelsius = offsetCelsius
  }

  /// MPU-6050: 340 LSB/°C, −521 LSB at 35 °C (PS §6.3), i.e. counts / 340 + 36.53 (RM §4.18).
  public static let mpu6050 = TemperatureConversion(
    countsPerDegreeCelsius: 340, offsetCelsius: 36.53)
  /// MPU-6500/6515/6880/9250/9255: 333.87 LSB/°C, 21 °C at 0 counts (Linux
  /// `INV_MPU6500_TEMP_OFFSET` 7011 × `INV_MPU6500_TEMP_SCALE` 2.995178 m°C).
  public static let mpu6500 = TemperatureConversion(
    countsPerDegreeCelsius: 333.87, offsetCelsius: 21)
  /// ICM-2060x/20608/20609/20689, IAM-20680: 326.8 LSB/°C, 25 °C at 0 counts (Linux
  /// `INV_ICM20608_TEMP_OFFSET` 8170 × `INV_ICM20608_TEMP_SCALE` 3.059976 m°C).
  public static let icm20608 = TemperatureConversion(
    countsPerDegreeCelsius: 326.8, offsetCelsius: 25)

  /// The temperature for a raw reading, °C.
  @inlinable
  public func celsius(counts: Int16) -> Double {
    Double(counts) / countsPerDegreeCelsius + offsetCelsius
  }
}

/// A part that answers on an MPU-6050's address, as identified by its WHO_AM_I value.
///
/// Boards sold as "MPU-6050" (GY-521 and others) often carry other or counterfeit parts:
/// users report 0x98 (13 of 20 modules from three sellers, ElectronicCats/mpu6050#21), 0x70
/// (danjperron/mpu6050TestInC#4, Klipper3d/klipper#5871) and 0x72 (Levi--G/IMU-WhoAmIVerifier#1,
/// Moddable-OpenSource/moddable discussion #1007). Plumb names what it finds, accepts a part
/// only when the registers it uses mean the same thing, and refuses the rest with the value read.
public struct ChipModel: Hashable, Sendable, CustomStringConvertible {
  /// What the part is called, e.g. `MPU-6050`, `ICM-20689`.
  public var name: String
  /// Its WHO_AM_I value.
  public var whoAmI: UInt8
  /// Whether and how Plumb can drive it.
  public var support: Support
  /// Where the value is documented.
  public var source: String

  /// Whether Plumb drives a part, and how.
  public enum Support: Hashable, Sendable {
    /// The register map Plumb was written for.
    case genuine
    /// Driven through `family`'s register map, with a warning a person should read.
    case compatible(
      family: RegisterMapFamily, temperature: TemperatureConversion,
      fifoCapacityBytes: Int, warning: String)
    /// Not driven: the registers Plumb uses differ. The reason says how.
    case incompatible(reason: String)
  }

  public init(name: String, whoAmI: UInt8, support: Support, source: String) {
    self.name = name
    self.whoAmI = whoAmI
    self.support = support
    self.source = source
  }

  /// The register map family, or `nil` when the part is refused.
  public var family: RegisterMapFamily? {
    switch support {
    case .genuine: .mpu6050
    case .compatible(let family, _, _, _): family
    case .incompatible: nil
    }
  }

  /// The temperature conversion, or `nil` when the part is refused.
  public var temperature: TemperatureConversion? {
    switch support {
    case .genuine: .mpu6050
    case .compatible(_, let temperature, _, _): temperature
    case .incompatible: nil
    }
  }

  /// FIFO capacity in bytes, or `nil` when the part is refused.
  public var fifoCapacityBytes: Int? {
    switch support {
    case .genuine: FIFORegisters.capacityBytes
    case .compatible(_, _, let capacity, _): capacity
    case .incompatible: nil
    }
  }

  /// The warning to show for an accepted non-genuine part.
  public var warning: String? {
    if case .compatible(_, _, _, let warning) = support { return warning }
    return nil
  }

  /// `ICM-20689 (WHO_AM_I 0x98)`.
  public var description: String { "\(name) (WHO_AM_I \(hexByte(whoAmI)))" }

  /// The model for a WHO_AM_I value, or `nil` when no documented part answers it.
  public static func identify(whoAmI: UInt8) -> ChipModel? {
    known.first { $0.whoAmI == whoAmI }
  }

  private static let linux = "Linux drivers/iio/imu/inv_mpu6050/inv_mpu_iio.h and inv_mpu_core.c"
  private static let verifier = "Levi--G/IMU-WhoAmIVerifier src/main.cpp"

  private static func family6500(
    _ name: String, _ whoAmI: UInt8, temperature: TemperatureConversion, fifo: Int,
    note: String = ""
  ) -> ChipModel {
    ChipModel(
      name: name, whoAmI: whoAmI,
      support: .compatible(
        family: .mpu6500, temperature: temperature, fifoCapacityBytes: fifo,
        warning:
          "\(name) (WHO_AM_I \(hexByte(whoAmI))) is not an MPU-6050 but follows its register "
          + "map for everything Plumb uses; Plumb also sets its separate accelerometer filter "
          + "(ACCEL_CONFIG2 0x1D), uses its temperature constants, and skips the start-up "
          + "self-test (this generation's self-test is different)" + note),
      source: linux)
  }

  /// Every part Plumb knows by WHO_AM_I, each checked against the source it cites.
  public static let known: [ChipModel] = [
    ChipModel(
      name: "MPU-6050", whoAmI: 0x68, support: .genuine,
      source: "RM-MPU-6000A-00 rev 4.2 §4.32 (the MPU-6000 and MPU-9150 answer the same)"),
    ChipModel(
      name: "MPU-6050 clone (unidentified, WHO_AM_I 0x72)", whoAmI: 0x72,
      support: .compatible(
        family: .mpu6050, temperature: .mpu6050, fifoCapacityBytes: FIFORegisters.capacityBytes,
        warning:
          "WHO_AM_I 0x72 is no documented InvenSense part: boards sold as MPU-6050 answer it "
          + "and are reported to work with the MPU-6050 register map; Plumb drives it as one, "
          + "and the start-up self-test is the check that it really behaves like one"),
      source:
        "Levi--G/IMU-WhoAmIVerifier#1; Moddable-OpenSource/moddable discussion #1007"),
    family6500("MPU-6500", 0x70, temperature: .mpu6500, fifo: 512),
    family6500(
      "MPU-9250", 0x71, temperature: .mpu6500, fifo: 512,
      note: "; its AK8963 magnetometer is not used"),
    family6500(
      "MPU-9255", 0x73, temperature: .mpu6500, fifo: 512,
      note: "; its AK8963 magnetometer is not used"),
    family6500("MPU-6515", 0x74, temperature: .mpu6500, fifo: 512),
    family6500("MPU-6880", 0x78, temperature: .mpu6500, fifo: 4096),
    family6500("ICM-20600", 0x11, temperature: .icm20608, fifo: 1008),
    family6500("ICM-20602", 0x12, temperature: .icm20608, fifo: 1008),
    family6500("ICM-20608", 0xAF, temperature: .icm20608, fifo: 512),
    family6500("ICM-20608-D", 0xAE, temperature: .icm20608, fifo: 512),
    family6500("ICM-20609", 0xA6, temperature: .icm20608, fifo: 4096),
    // Linux enlarges this part's FIFO by setting FIFO_SIZE in ACCEL_CONFIG2; Plumb writes 0
    // there, so it assumes the smaller default.
    family6500(
      "ICM-20689", 0x98, temperature: .icm20608, fifo: 512,
      note: "; modules sold as \"MPU-6050\" or \"MPU-6050A\" often carry this part"),
    family6500("IAM-20680", 0xA9, temperature: .icm20608, fifo: 512),
    ChipModel(
      name: "ICM-20690", whoAmI: 0x20,
      support: .incompatible(
        reason:
          "its gyroscope range field FS_SEL sits at GYRO_CONFIG bits 4:2, not 4:3 (Linux "
          + "INV_ICM20690_GYRO_CONFIG_FSR_SHIFT), so MPU-6050 range settings would be wrong"),
      source: linux),
    ChipModel(
      name: "ICM-20601", whoAmI: 0xAC,
      support: .incompatible(
        reason:
          "its full-scale ranges are twice the MPU-6050's (±4…±32 g, ±500…±4000 °/s), so "
          + "MPU-6050 scale factors would be wrong by a factor of two"),
      source: verifier),
    ChipModel(
      name: "IAM-20380", whoAmI: 0xB5,
      support: .incompatible(reason: "it is a gyroscope only: there is no accelerometer"),
      source: linux),
    ChipModel(
      name: "ICM-42605", whoAmI: 0x42,
      support: .incompatible(
        reason: "the ICM-42xxx generation has a different register map (banks, data at 0x1D)"),
      source: verifier),
    ChipModel(
      name: "ICM-42688-P", whoAmI: 0x47,
      support: .incompatible(
        reason: "the ICM-42xxx generation has a different register map (banks, data at 0x1D)"),
      source: verifier),
    ChipModel(
      name: "ICM-42670-P", whoAmI: 0x67,
      support: .incompatible(
        reason: "the ICM-42xxx generation has a different register map (banks, data at 0x1D)"),
      source: verifier),
  ]
}

/// What `identify` found: the value read and the part it names.
public struct MPU6050Identity: Hashable, Sendable, CustomStringConvertible {
  /// The WHO_AM_I byte as read.
  public var whoAmI: UInt8
  /// The part.
  public var model: ChipModel

  public var isGenuine: Bool { model.support == .genuine }
  /// The register map Plumb uses for it (accepted parts only).
  public var family: RegisterMapFamily { model.family ?? .mpu6050 }
  /// The temperature conversion for it.
  public var temperature: TemperatureConversion { model.temperature ?? .mpu6050 }
  /// The warning for a non-genuine part, `nil` for an MPU-6050.
  public var warning: String? { model.warning }

  public var description: String { model.description }

  /// Names the part for a WHO_AM_I value and decides whether Plumb can drive it.
  ///
  /// The value is compared with documented identities only, never with the bus address (that
  /// the two are both 0x68 on an MPU-6050 is a coincidence of AD0 = 0).
  public static func classify(whoAmI: UInt8) throws(MPU6050Error) -> MPU6050Identity {
    guard let model = ChipModel.identify(whoAmI: whoAmI) else {
      throw .unknownChip(whoAmI: whoAmI)
    }
    if case .incompatible = model.support {
      throw .incompatibleChip(model)
    }
    return MPU6050Identity(whoAmI: whoAmI, model: model)
  }
}
