import ByteFormats
import HardwareAbstraction
import MPU6050

/// The constants of the `.plumbraw` format (specified in `PLUMBRAW.md` beside this file).
public enum PlumbRawFormat {
  /// The first 8 bytes of every file: `PLUMBRAW` in ASCII.
  public static let magic: [UInt8] = Array("PLUMBRAW".utf8)
  /// The major version this code writes and the only one it reads. A reader refuses a file with
  /// another major version: the layout changed in a way it cannot skip over.
  public static let majorVersion: UInt16 = 1
  /// The minor version this code writes. A newer minor version only appends header fields and
  /// adds record kinds, which an older reader skips (it counts them in `unknownRecords`).
  public static let minorVersion: UInt16 = 0
  /// The file name extension, without the dot.
  public static let fileExtension = "plumbraw"
  /// Bytes before a record's payload (kind, length) and after it (CRC-32C).
  public static let recordOverhead = 6
  /// The longest record: a 255-byte payload plus its frame.
  public static let maximumRecordLength = 255 + recordOverhead
  /// The fixed part of the header, before the variable-length fields (see PLUMBRAW.md).
  static let fixedHeaderLength = 224
}

/// The format version a file was written with.
public struct PlumbRawVersion: Hashable, Sendable, CustomStringConvertible {
  public var major: UInt16
  public var minor: UInt16
  public init(major: UInt16, minor: UInt16) {
    self.major = major
    self.minor = minor
  }
  /// `1.0`.
  public var description: String { "\(major).\(minor)" }
}

/// How the sensor is mounted: the rotation taking sensor-axis vectors to body axes, row by row
/// (the board file's mounting rotation; a recording keeps it so a replay reproduces the frames).
public struct PlumbRawMountingRotation: Hashable, Sendable {
  public var row0: SIMD3<Double>
  public var row1: SIMD3<Double>
  public var row2: SIMD3<Double>

  public init(row0: SIMD3<Double>, row1: SIMD3<Double>, row2: SIMD3<Double>) {
    self.row0 = row0
    self.row1 = row1
    self.row2 = row2
  }

  /// Sensor axes are body axes.
  public static let identity = PlumbRawMountingRotation(
    row0: SIMD3(1, 0, 0), row1: SIMD3(0, 1, 0), row2: SIMD3(0, 0, 1))
}

/// The factors that turn a recording's counts into SI units, as the driver used them when it
/// recorded: stored as numbers (not as range codes), so a reader in any language converts
/// without knowing the datasheet, and a future change to a constant cannot reinterpret old files.
public struct PlumbRawScale: Hashable, Sendable {
  /// Gyroscope, rad/s per count (π/180 / LSB-per-°/s, PS §6.1).
  public var gyroRadiansPerSecondPerCount: Double
  /// Accelerometer, m/s² per count (9.80665 / LSB-per-g, PS §6.2).
  public var accelerometerMetersPerSecondSquaredPerCount: Double
  /// Temperature: °C = counts / this + `temperatureOffsetCelsius` (RM §4.18 on an MPU-6050).
  public var temperatureCountsPerDegreeCelsius: Double
  public var temperatureOffsetCelsius: Double

  public init(
    gyroRadiansPerSecondPerCount: Double, accelerometerMetersPerSecondSquaredPerCount: Double,
    temperatureCountsPerDegreeCelsius: Double, temperatureOffsetCelsius: Double
  ) {
    self.gyroRadiansPerSecondPerCount = gyroRadiansPerSecondPerCount
    self.accelerometerMetersPerSecondSquaredPerCount = accelerometerMetersPerSecondSquaredPerCount
    self.temperatureCountsPerDegreeCelsius = temperatureCountsPerDegreeCelsius
    self.temperatureOffsetCelsius = temperatureOffsetCelsius
  }

  /// The driver's scale (`MPU6050Driver.currentScale`).
  public init(_ scale: MPU6050Scale) {
    self.init(
      gyroRadiansPerSecondPerCount: scale.gyroFullScale.radiansPerSecondPerCount,
      accelerometerMetersPerSecondSquaredPerCount:
        scale.accelerometerFullScale.metersPerSecondSquaredPerCount,
      temperatureCountsPerDegreeCelsius: scale.temperature.countsPerDegreeCelsius,
      temperatureOffsetCelsius: scale.temperature.offsetCelsius)
  }

  /// Converts one sample's counts, with the same arithmetic as `MPU6050Conversion.convert`, so
  /// the result is bit-for-bit what the driver delivered.
  public func convert(_ raw: MPU6050RawSample) -> PlumbRawSIValues {
    PlumbRawSIValues(
      angularRateRadiansPerSecond: SIMD3<Double>(raw.gyro) * gyroRadiansPerSecondPerCount,
      specificForceMetersPerSecondSquared: SIMD3<Double>(raw.accelerometer)
        * accelerometerMetersPerSecondSquaredPerCount,
      temperatureCelsius: Double(raw.temperature) / temperatureCountsPerDegreeCelsius
        + temperatureOffsetCelsius)
  }

  /// Whether every 16-bit count converts to a finite value (finite factors are not enough:
  /// 1e306 rad/s per count makes 32767 counts an infinity).
  var isFinite: Bool {
    temperatureCountsPerDegreeCelsius != 0
      && [-32768.0, 32767].allSatisfy { count in
        (count * gyroRadiansPerSecondPerCount).isFinite
          && (count * accelerometerMetersPerSecondSquaredPerCount).isFinite
          && (count / temperatureCountsPerDegreeCelsius + temperatureOffsetCelsius).isFinite
      }
  }
}

/// One sample in SI units, sensor axes.
public struct PlumbRawSIValues: Hashable, Sendable {
  public var angularRateRadiansPerSecond: SIMD3<Double>
  public var specificForceMetersPerSecondSquared: SIMD3<Double>
  public var temperatureCelsius: Double
}

/// The part that answered, as start-up identified it.
public struct PlumbRawChip: Hashable, Sendable {
  /// WHO_AM_I (0x75) as read.
  public var whoAmI: UInt8
  /// The part's name (`MPU-6050`, `ICM-20689`).
  public var name: String
  /// The register map the driver used for it.
  public var family: RegisterMapFamily

  public init(whoAmI: UInt8, name: String, family: RegisterMapFamily) {
    self.whoAmI = whoAmI
    self.name = name
    self.family = family
  }

  /// The part `identify` found.
  public init(_ identity: MPU6050Identity) {
    self.init(whoAmI: identity.whoAmI, name: identity.model.name, family: identity.family)
  }

  /// The identity, when this reader still knows the WHO_AM_I value as a part it drives.
  public var identity: MPU6050Identity? { try? MPU6050Identity.classify(whoAmI: whoAmI) }
}

/// The configuration registers the driver writes, as bytes (RM §4.2–§4.15, §4.28): what a replay
/// chip answers to the driver's read-back, and what another tool needs to interpret the counts.
public struct PlumbRawRegisters: Hashable, Sendable {
  /// SMPLRT_DIV (0x19).
  public var sampleRateDivider: UInt8
  /// CONFIG (0x1A).
  public var config: UInt8
  /// GYRO_CONFIG (0x1B).
  public var gyroConfig: UInt8
  /// ACCEL_CONFIG (0x1C).
  public var accelConfig: UInt8
  /// ACCEL_CONFIG2 (0x1D), MPU-6500 family only; 0 on an MPU-6050 (not a register there).
  public var accelConfig2: UInt8
  /// INT_PIN_CFG (0x37).
  public var interruptPinConfig: UInt8
  /// INT_ENABLE (0x38) in interrupt mode (without the FIFO overflow bit).
  public var interruptEnable: UInt8
  /// PWR_MGMT_1 (0x6B).
  public var powerManagement1: UInt8

  public init(
    sampleRateDivider: UInt8, config: UInt8, gyroConfig: UInt8, accelConfig: UInt8,
    accelConfig2: UInt8, interruptPinConfig: UInt8, interruptEnable: UInt8,
    powerManagement1: UInt8
  ) {
    self.sampleRateDivider = sampleRateDivider
    self.config = config
    self.gyroConfig = gyroConfig
    self.accelConfig = accelConfig
    self.accelConfig2 = accelConfig2
    self.interruptPinConfig = interruptPinConfig
    self.interruptEnable = interruptEnable
    self.powerManagement1 = powerManagement1
  }

  /// What the driver writes for `configuration` on a part of `family`.
  public init(_ configuration: ValidatedMPU6050Configuration, family: RegisterMapFamily) {
    self.init(
      sampleRateDivider: configuration.sampleRateDivider.bits, config: configuration.config.bits,
      gyroConfig: configuration.gyroConfig.bits, accelConfig: configuration.accelConfig.bits,
      accelConfig2: family == .mpu6500 ? configuration.accelConfig2.bits : 0,
      interruptPinConfig: configuration.interruptPinConfig.bits,
      interruptEnable: configuration.interruptEnable(fifo: false).bits,
      powerManagement1: configuration.powerManagement1.bits)
  }
}

/// Everything a `.plumbraw` file says about how it was made: enough to convert its counts, to
/// answer the driver's start-up and configuration reads in a replay, and to tell a person which
/// board, firmware and chip produced it. Written once, at the start of the file, with a CRC.
public struct PlumbRawHeader: Hashable, Sendable {
  /// The version the file was written with (the writer always writes the current one).
  public internal(set) var version = PlumbRawVersion(
    major: PlumbRawFormat.majorVersion, minor: PlumbRawFormat.minorVersion)
  /// When the recording started, ISO 8601 in UTC (`2025-03-14T09:26:53Z`, fractions allowed).
  /// The caller reads the wall clock; the library never does.
  public var startedAtUTC: String
  /// The firmware that recorded (`plumb 0.3.1`).
  public var firmwareVersion: String
  /// The board file's name (`raspberry-pi-4`).
  public var boardName: String
  /// The chip's I2C address.
  public var address: I2CAddress
  /// The part start-up identified.
  public var chip: PlumbRawChip
  /// The sensor configuration the driver ran with.
  public var configuration: MPU6050Configuration
  /// The conversion factors the driver used.
  public var scale: PlumbRawScale
  /// The driver's retry and recovery settings (a replay must use the same ones).
  public var policy: MPU6050RecoveryPolicy
  /// The start-up self-test's outcome.
  public var selfTest: MPU6050SelfTestReport
  /// Sensor → body rotation.
  public var mounting: PlumbRawMountingRotation
  /// The calibration file's id in use, or empty.
  public var calibrationID: String
  /// Free-form JSON (an object, by convention) for whatever else the recorder wants to keep:
  /// the command line, the operator, the bench. Stored as UTF-8 text, not interpreted.
  public var metadataJSON: String
  /// `CLOCK_MONOTONIC` when recording began: before the driver's start-up when the bus
  /// transcript is recorded (a replay starts its clock here).
  public var recordingBeganAt: Timestamp
  /// `CLOCK_MONOTONIC` when the driver's start-up returned and sampling began.
  public var runningSince: Timestamp
  /// Whether the records include the transcript of every register transfer since
  /// `recordingBeganAt` (what `PlumbRawRecorder` with a `PlumbRawBusTap` writes): a replay then
  /// reproduces every transfer's outcome, faults included.
  public var hasBusTranscript: Bool

  public init(
    startedAtUTC: String, firmwareVersion: String, boardName: String,
    address: I2CAddress = .mpu6050, chip: PlumbRawChip,
    configuration: MPU6050Configuration = .default, scale: PlumbRawScale,
    policy: MPU6050RecoveryPolicy = .default,
    selfTest: MPU6050SelfTestReport = MPU6050SelfTestReport(
      outcome: .notAvailable(reason: "not run")),
    mounting: PlumbRawMountingRotation = .identity, calibrationID: String = "",
    metadataJSON: String = "", recordingBeganAt: Timestamp, runningSince: Timestamp,
    hasBusTranscript: Bool = false
  ) {
    self.startedAtUTC = startedAtUTC
    self.firmwareVersion = firmwareVersion
    self.boardName = boardName
    self.address = address
    self.chip = chip
    self.configuration = configuration
    self.scale = scale
    self.policy = policy
    self.selfTest = selfTest
    self.mounting = mounting
    self.calibrationID = calibrationID
    self.metadataJSON = metadataJSON
    self.recordingBeganAt = recordingBeganAt
    self.runningSince = runningSince
    self.hasBusTranscript = hasBusTranscript
  }

  /// The header for a driver that has started: its address, configuration, scale and policy,
  /// and the identity and self-test from its start-up report.
  public init<Bus: I2CBus>(
    driver: MPU6050Driver<Bus>, startup: MPU6050StartupReport, startedAtUTC: String,
    firmwareVersion: String, boardName: String, mounting: PlumbRawMountingRotation = .identity,
    calibrationID: String = "", metadataJSON: String = "", recordingBeganAt: Timestamp,
    runningSince: Timestamp
  ) {
    self.init(
      startedAtUTC: startedAtUTC, firmwareVersion: firmwareVersion, boardName: boardName,
      address: driver.address, chip: PlumbRawChip(startup.identity),
      configuration: driver.configuration.configuration,
      scale: PlumbRawScale(driver.currentScale), policy: driver.policy,
      selfTest: startup.selfTest, mounting: mounting, calibrationID: calibrationID,
      metadataJSON: metadataJSON, recordingBeganAt: recordingBeganAt, runningSince: runningSince)
  }

  /// The configuration, checked (`nil` when it is not one the driver accepts).
  public var validatedConfiguration: ValidatedMPU6050Configuration? {
    try? configuration.validated()
  }

  /// The registers the driver writes for this configuration and part.
  public var registers: PlumbRawRegisters? {
    validatedConfiguration.map { PlumbRawRegisters($0, family: chip.family) }
  }

  /// The nominal sample period, ns.
  public var samplePeriodNanoseconds: Int64? { validatedConfiguration?.samplePeriodNanoseconds }

  /// Whether the recorded start-up was asked to self-test (`start(clock:selfTest:)`): a replay
  /// must ask the same. `false` only for the driver's "skipped by request"; a part whose
  /// self-test the driver skips by itself (MPU-6500 family) was asked.
  public var selfTestWasRequested: Bool {
    if case .notAvailable(let reason) = selfTest.outcome { return reason != "skipped by request" }
    return true
  }
}

// MARK: - Encoding

/// Codes for the enums the header and records store (restated in PLUMBRAW.md).
enum Codes {
  static func family(_ family: RegisterMapFamily) -> UInt8 { family == .mpu6050 ? 0 : 1 }
  static func family(_ code: UInt8) -> RegisterMapFamily? {
    switch code {
    case 0: .mpu6050
    case 1: .mpu6500
    default: nil
    }
  }
  static func sensor(_ sensor: MPU6050SelfTestReport.Sensor) -> UInt8 { sensor == .gyro ? 0 : 1 }
  static func sensor(_ code: UInt8) -> MPU6050SelfTestReport.Sensor? {
    switch code {
    case 0: .gyro
    case 1: .accelerometer
    default: nil
    }
  }
  static func axis(_ axis: SelfTestAxis) -> UInt8 {
    switch axis {
    case .x: 0
    case .y: 1
    case .z: 2
    }
  }
  static func axis(_ code: UInt8) -> SelfTestAxis? {
    switch code {
    case 0: .x
    case 1: .y
    case 2: .z
    default: nil
    }
  }
}

extension PlumbRawHeader {
  /// The header's bytes, CRC included. Throws when a field cannot be written.
  func encoded(path: String) throws(PlumbRawError) -> [UInt8] {
    func invalid(_ message: String) -> PlumbRawError {
      PlumbRawError(.invalidHeader, path: path, message)
    }
    guard isISO8601UTC(startedAtUTC) else {
      throw invalid(
        "startedAtUTC '\(startedAtUTC)' is not an ISO 8601 UTC time; give it as "
          + "YYYY-MM-DDTHH:MM:SSZ (fractions of a second allowed), e.g. 2025-03-14T09:26:53Z")
    }
    let validated: ValidatedMPU6050Configuration
    do {
      validated = try configuration.validated()
    } catch {
      throw invalid("the configuration is not one the driver accepts: \(error)")
    }
    guard scale.isFinite else {
      throw invalid(
        "the scale factors must be finite numbers that give finite values for every 16-bit count "
          + "(and counts per °C non-zero)")
    }
    for (name, value) in [
      ("startedAtUTC", startedAtUTC), ("firmwareVersion", firmwareVersion),
      ("boardName", boardName), ("chip name", chip.name), ("calibrationID", calibrationID),
    ] where value.utf8.count > Int(UInt16.max) {
      throw invalid("\(name) is \(value.utf8.count) bytes long; at most 65535 fit")
    }
    if case .notAvailable(let reason) = selfTest.outcome, reason.utf8.count > Int(UInt16.max) {
      throw invalid("the self-test reason is longer than 65535 bytes")
    }
    if case .measured(let results) = selfTest.outcome, results.count > 255 {
      throw invalid("the self-test has \(results.count) axis results; at most 255 fit")
    }
    guard metadataJSON.utf8.count <= 16 << 20 else {
      throw invalid("metadataJSON is \(metadataJSON.utf8.count) bytes; at most 16 MiB fit")
    }
    let limit = Int64(UInt32.max)
    let counts = [
      policy.attemptsPerTransfer, policy.failedReadsBeforeReinitialization,
      policy.stuckSampleCount ?? 0, policy.selfTestSamples,
    ]
    guard counts.allSatisfy({ Int64($0) <= limit }) else {
      throw invalid("a recovery-policy count is larger than 4294967295")
    }

    var out = ArrayEncoder()
    out.bytes(PlumbRawFormat.magic)
    out.u16(PlumbRawFormat.majorVersion)
    out.u16(PlumbRawFormat.minorVersion)
    out.u32(0)  // header length, patched below
    out.i64(recordingBeganAt.nanoseconds)
    out.i64(runningSince.nanoseconds)
    out.u8(hasBusTranscript ? 1 : 0)
    out.u8(address.rawValue)
    out.u8(chip.whoAmI)
    out.u8(Codes.family(chip.family))
    out.f64(configuration.sampleRateHertz)
    out.u8(configuration.lowPassFilter.rawValue)
    out.u8(configuration.gyroFullScale.rawValue)
    out.u8(configuration.accelerometerFullScale.rawValue)
    out.u8(configuration.dataReadyInterrupt ? 1 : 0)
    let registers = PlumbRawRegisters(validated, family: chip.family)
    for byte in [
      registers.sampleRateDivider, registers.config, registers.gyroConfig, registers.accelConfig,
      registers.accelConfig2, registers.interruptPinConfig, registers.interruptEnable,
      registers.powerManagement1,
    ] { out.u8(byte) }
    out.f64(scale.gyroRadiansPerSecondPerCount)
    out.f64(scale.accelerometerMetersPerSecondSquaredPerCount)
    out.f64(scale.temperatureCountsPerDegreeCelsius)
    out.f64(scale.temperatureOffsetCelsius)
    out.i64(validated.samplePeriodNanoseconds)
    out.u32(UInt32(policy.attemptsPerTransfer))
    out.u32(UInt32(policy.failedReadsBeforeReinitialization))
    out.u32(UInt32(policy.stuckSampleCount ?? 0))
    out.u32(UInt32(policy.selfTestSamples))
    out.i64(policy.configurationCheckIntervalNanoseconds)
    out.i64(policy.resetWaitNanoseconds)
    out.i64(policy.settleMinimumNanoseconds)
    out.i64(policy.backoffInitialNanoseconds)
    out.i64(policy.backoffMaximumNanoseconds)
    for row in [mounting.row0, mounting.row1, mounting.row2] {
      out.f64(row.x)
      out.f64(row.y)
      out.f64(row.z)
    }
    precondition(out.bytes.count == PlumbRawFormat.fixedHeaderLength, "header layout changed")
    out.string(startedAtUTC)
    out.string(firmwareVersion)
    out.string(boardName)
    out.string(chip.name)
    out.string(calibrationID)
    switch selfTest.outcome {
    case .notAvailable(let reason):
      out.u8(0)
      out.string(reason)
    case .measured(let results):
      out.u8(1)
      out.u8(UInt8(results.count))
      for result in results {
        out.u8(Codes.sensor(result.sensor))
        out.u8(Codes.axis(result.axis))
        out.u8(result.trimCode)
        out.f64(result.factoryTrimCounts)
        out.f64(result.responseCounts)
      }
    }
    out.longString(metadataJSON)
    out.patchU32(UInt32(out.bytes.count + 4), at: 12)
    out.u32(CRC32C.checksum(out.bytes))
    return out.bytes
  }

  /// Reads the header at the start of `bytes`; returns it and its length.
  static func decode(_ bytes: UnsafeRawBufferPointer, path: String) throws(PlumbRawError) -> (
    PlumbRawHeader, Int
  ) {
    let magic = PlumbRawFormat.magic
    guard bytes.count >= magic.count, zip(bytes, magic).allSatisfy({ $0 == $1 }) else {
      if !bytes.isEmpty, bytes.count < magic.count, zip(bytes, magic).allSatisfy({ $0 == $1 }) {
        throw PlumbRawError(
          .headerMalformed, path: path, offset: bytes.count,
          "the file ends inside the header (\(bytes.count) bytes): the recording was cut "
            + "before its first record and holds no samples")
      }
      throw PlumbRawError(.notPlumbRaw, path: path, offset: 0, notPlumbRawMessage(bytes))
    }
    var input = ByteCursor(bytes, offset: magic.count)
    guard let major = input.u16(), let minor = input.u16(), let length32 = input.u32() else {
      throw PlumbRawError(
        .headerMalformed, path: path, offset: 0,
        "the file ends inside the header (\(bytes.count) bytes): the recording was cut before "
          + "its first record and holds no samples")
    }
    guard major == PlumbRawFormat.majorVersion else {
      throw PlumbRawError(
        .unsupportedVersion, path: path, offset: 8,
        "format version \(major).\(minor); this reader reads version "
          + "\(PlumbRawFormat.majorVersion).x — "
          + (major > PlumbRawFormat.majorVersion
            ? "the file was made by a newer Plumb: read it with that version"
            : "the version number is damaged or the file was not written by Plumb"))
    }
    let length = Int(length32)
    guard length >= PlumbRawFormat.fixedHeaderLength + 4 + 16 else {
      throw PlumbRawError(
        .headerMalformed, path: path, offset: 12,
        "the header length field says \(length) bytes, less than a version-1 header's minimum; "
          + "the header is damaged")
    }
    guard length <= bytes.count else {
      throw PlumbRawError(
        .headerMalformed, path: path, offset: bytes.count,
        "the file ends inside the header (\(bytes.count) of its \(length) bytes): the recording "
          + "was cut before its first record and holds no samples")
    }
    let stored = ByteCursor(bytes, offset: length - 4).peekU32() ?? 0
    let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<(length - 4)]))
    guard stored == computed else {
      throw PlumbRawError(
        .headerCorrupt, path: path, offset: length - 4,
        "the header's CRC-32C is \(hex32(stored)) but its bytes give \(hex32(computed)): the "
          + "header is damaged, so nothing in the file can be trusted")
    }
    let header = UnsafeRawBufferPointer(rebasing: bytes[0..<(length - 4)])
    var field = ByteCursor(header, offset: 16)
    func malformed(_ message: String) -> PlumbRawError {
      PlumbRawError(.headerMalformed, path: path, offset: field.offset, message)
    }
    let cutShort = "the header's fields end early: it is damaged or was written by another tool"
    guard let began = field.i64(), let running = field.i64(), let flags = field.u8(),
      let addressByte = field.u8(), let whoAmI = field.u8(), let familyCode = field.u8(),
      let rate = field.f64(), let dlpfCode = field.u8(), let gyroCode = field.u8(),
      let accelCode = field.u8(), let dataReady = field.u8()
    else { throw malformed(cutShort) }
    guard let address = I2CAddress(rawValue: addressByte) else {
      throw malformed("the I2C address \(hex32(UInt32(addressByte))) is not a 7-bit address")
    }
    guard let family = Codes.family(familyCode) else {
      throw malformed("unknown register-map family code \(familyCode)")
    }
    guard let dlpf = DigitalLowPassFilter(rawValue: dlpfCode),
      let gyroRange = GyroFullScale(rawValue: gyroCode),
      let accelRange = AccelerometerFullScale(rawValue: accelCode), dataReady <= 1
    else {
      throw malformed(
        "the configuration codes (DLPF_CFG \(dlpfCode), FS_SEL \(gyroCode), AFS_SEL "
          + "\(accelCode), data-ready \(dataReady)) are not ones the driver uses")
    }
    let configuration = MPU6050Configuration(
      sampleRateHertz: rate, lowPassFilter: dlpf, gyroFullScale: gyroRange,
      accelerometerFullScale: accelRange, dataReadyInterrupt: dataReady == 1)
    guard let registerBytes = field.array(8) else { throw malformed(cutShort) }
    guard let validated = try? configuration.validated() else {
      throw malformed("the configuration (\(configuration)) is not one the driver accepts")
    }
    let expected = PlumbRawRegisters(validated, family: family)
    let stored8 = [
      expected.sampleRateDivider, expected.config, expected.gyroConfig, expected.accelConfig,
      expected.accelConfig2, expected.interruptPinConfig, expected.interruptEnable,
      expected.powerManagement1,
    ]
    guard registerBytes == stored8 else {
      throw malformed(
        "the register bytes \(registerBytes.map { hex32(UInt32($0)) }) disagree with the "
          + "configuration (\(configuration)), which gives \(stored8.map { hex32(UInt32($0)) })")
    }
    guard let gyroFactor = field.f64(), let accelFactor = field.f64(),
      let temperatureCounts = field.f64(), let temperatureOffset = field.f64(),
      let period = field.i64(), let attempts = field.u32(), let failedReads = field.u32(),
      let stuck = field.u32(), let selfTestSamples = field.u32(), let checkInterval = field.i64(),
      let resetWait = field.i64(), let settle = field.i64(), let backoffInitial = field.i64(),
      let backoffMaximum = field.i64()
    else { throw malformed(cutShort) }
    let scale = PlumbRawScale(
      gyroRadiansPerSecondPerCount: gyroFactor,
      accelerometerMetersPerSecondSquaredPerCount: accelFactor,
      temperatureCountsPerDegreeCelsius: temperatureCounts,
      temperatureOffsetCelsius: temperatureOffset)
    guard scale.isFinite else {
      throw malformed("a scale factor is not a finite number, or turns a 16-bit count into one")
    }
    guard period == validated.samplePeriodNanoseconds else {
      throw malformed(
        "the sample period \(period) ns disagrees with the configuration's "
          + "\(validated.samplePeriodNanoseconds) ns")
    }
    let policy = MPU6050RecoveryPolicy(
      attemptsPerTransfer: Int(attempts), failedReadsBeforeReinitialization: Int(failedReads),
      stuckSampleCount: stuck == 0 ? nil : Int(stuck),
      configurationCheckIntervalNanoseconds: checkInterval, resetWaitNanoseconds: resetWait,
      settleMinimumNanoseconds: settle, backoffInitialNanoseconds: backoffInitial,
      backoffMaximumNanoseconds: backoffMaximum, selfTestSamples: Int(selfTestSamples))
    var rows: [SIMD3<Double>] = []
    for _ in 0..<3 {
      guard let x = field.f64(), let y = field.f64(), let z = field.f64() else {
        throw malformed(cutShort)
      }
      rows.append(SIMD3(x, y, z))
    }
    func string(_ name: String, long: Bool = false) throws(PlumbRawError) -> String {
      let count: Int
      if long {
        guard let n = field.u32() else { throw malformed(cutShort) }
        count = Int(n)
      } else {
        guard let n = field.u16() else { throw malformed(cutShort) }
        count = Int(n)
      }
      guard let utf8 = field.array(count) else { throw malformed(cutShort) }
      guard let text = String(validating: utf8, as: UTF8.self) else {
        throw malformed("\(name) is not valid UTF-8")
      }
      return text
    }
    let started = try string("startedAtUTC")
    let firmware = try string("firmwareVersion")
    let board = try string("boardName")
    let chipName = try string("the chip name")
    let calibration = try string("calibrationID")
    guard let outcomeCode = field.u8() else { throw malformed(cutShort) }
    let selfTest: MPU6050SelfTestReport
    switch outcomeCode {
    case 0:
      selfTest = MPU6050SelfTestReport(outcome: .notAvailable(reason: try string("the reason")))
    case 1:
      guard let count = field.u8() else { throw malformed(cutShort) }
      var results: [MPU6050SelfTestReport.AxisResult] = []
      for _ in 0..<count {
        guard let sensorCode = field.u8(), let axisCode = field.u8(), let trim = field.u8(),
          let factory = field.f64(), let response = field.f64()
        else { throw malformed(cutShort) }
        guard let sensor = Codes.sensor(sensorCode), let axis = Codes.axis(axisCode) else {
          throw malformed("a self-test result names sensor \(sensorCode), axis \(axisCode)")
        }
        results.append(
          .init(
            sensor: sensor, axis: axis, trimCode: trim, factoryTrimCounts: factory,
            responseCounts: response))
      }
      selfTest = MPU6050SelfTestReport(outcome: .measured(results))
    default:
      throw malformed("unknown self-test outcome code \(outcomeCode)")
    }
    let metadata = try string("metadataJSON", long: true)
    // Fields a newer minor version appended are skipped: they end where the CRC starts.
    var result = PlumbRawHeader(
      startedAtUTC: started, firmwareVersion: firmware, boardName: board, address: address,
      chip: PlumbRawChip(whoAmI: whoAmI, name: chipName, family: family),
      configuration: configuration, scale: scale, policy: policy, selfTest: selfTest,
      mounting: PlumbRawMountingRotation(row0: rows[0], row1: rows[1], row2: rows[2]),
      calibrationID: calibration, metadataJSON: metadata,
      recordingBeganAt: Timestamp(nanoseconds: began),
      runningSince: Timestamp(nanoseconds: running), hasBusTranscript: flags & 1 != 0)
    result.version = PlumbRawVersion(major: major, minor: minor)
    return (result, length)
  }
}

/// What to say when the magic is wrong: recognise the usual mistakes.
func notPlumbRawMessage(_ bytes: UnsafeRawBufferPointer) -> String {
  if bytes.isEmpty {
    return "the file is empty (0 bytes): not a .plumbraw recording"
  }
  let prefix = String(decoding: bytes.prefix(16), as: UTF8.self)
  if prefix.hasPrefix("t_s,") || prefix.hasPrefix("t_s ") || prefix.hasPrefix("#")
    || prefix.contains(",gyr_") || prefix.hasPrefix("acc_") || prefix.hasPrefix("gyr_")
  {
    return
      "not a .plumbraw recording: it starts with '\(printable(prefix))', which looks like a "
      + "replay-layout CSV; name it .csv (plumb-cal and plumb replay read CSV by that extension)"
  }
  let magic = String(decoding: PlumbRawFormat.magic, as: UTF8.self)
  return
    "not a .plumbraw recording: the first bytes are '\(printable(prefix))', not the magic "
    + "'\(magic)'"
}

private func printable(_ text: String) -> String {
  String(
    text.unicodeScalars.map { scalar in
      scalar.value >= 0x20 && scalar.value < 0x7F ? Character(scalar) : "."
    })
}

func hex32(_ value: UInt32) -> String {
  let digits = Array("0123456789ABCDEF")
  var text = ""
  var started = false
  for shift in stride(from: 28, through: 0, by: -4) {
    let digit = Int((value >> UInt32(shift)) & 0xF)
    if digit != 0 || started || shift < 8 {
      started = true
      text.append(digits[digit])
    }
  }
  return "0x" + text
}
