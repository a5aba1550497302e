import AttitudeEstimation
import ByteFormats
import Geometry
import JSON
import Recording

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Which chip was calibrated.
public struct SensorIdentity: Sendable, Hashable {
  /// The WHO_AM_I register (0x75, RM §4.32): 0x68 on a genuine MPU-6050, other values on
  /// relabelled and clone parts.
  public var whoAmI: UInt8
  /// The part, e.g. "MPU-6050".
  public var name: String
  /// The user's label for this unit ("bench unit 3", a serial number).
  public var label: String

  public init(whoAmI: UInt8, name: String, label: String) {
    self.whoAmI = whoAmI
    self.name = name
    self.label = label
  }
}

/// Gyroscope bias and its temperature dependence, the file's `gyroscope` section: the bias
/// polynomial the firmware removes (`GyroBiasPolynomial`, bias(T) = bias + c₁·(T − T_ref) +
/// c₂·(T − T_ref)², rad/s) and the bias's standard error.
public struct GyroCalibration: Sendable, Hashable {
  /// The bias model.
  public var polynomial: GyroBiasPolynomial
  /// The bias's standard error, rad/s (Allan-derived, see `GyroBias.estimate`).
  public var biasUncertaintyRadiansPerSecond: Vector3
  /// G: the gyro's scale and axis misalignment (schema 2), the file's `gyroscope.matrix`.
  /// The corrected rate is G · (reading − bias(T)), in the accelerometer's calibrated axes
  /// (`plumb calibrate imu` fits both in one session, so the two sensors share their axes).
  /// `nil` when the unit's gyro was not calibrated so: the rate is then reading − bias(T).
  public var matrix: Matrix3?

  public var biasRadiansPerSecond: Vector3 {
    get { polynomial.biasRadiansPerSecond }
    set { polynomial.biasRadiansPerSecond = newValue }
  }
  public var referenceTemperatureCelsius: Double {
    get { polynomial.referenceTemperatureCelsius }
    set { polynomial.referenceTemperatureCelsius = newValue }
  }
  public var biasPerDegreeCelsius: Vector3 {
    get { polynomial.biasPerDegreeCelsius }
    set { polynomial.biasPerDegreeCelsius = newValue }
  }
  public var biasPerDegreeCelsiusSquared: Vector3 {
    get { polynomial.biasPerDegreeCelsiusSquared }
    set { polynomial.biasPerDegreeCelsiusSquared = newValue }
  }
  public var temperatureRangeCelsius: ClosedRange<Double>? {
    get { polynomial.temperatureRangeCelsius }
    set { polynomial.temperatureRangeCelsius = newValue }
  }

  public init(
    biasRadiansPerSecond: Vector3, biasUncertaintyRadiansPerSecond: Vector3,
    referenceTemperatureCelsius: Double, biasPerDegreeCelsius: Vector3 = .zero,
    biasPerDegreeCelsiusSquared: Vector3 = .zero,
    temperatureRangeCelsius: ClosedRange<Double>? = nil, matrix: Matrix3? = nil
  ) {
    self.matrix = matrix
    polynomial = GyroBiasPolynomial(
      biasRadiansPerSecond: biasRadiansPerSecond,
      referenceTemperatureCelsius: referenceTemperatureCelsius,
      biasPerDegreeCelsius: biasPerDegreeCelsius,
      biasPerDegreeCelsiusSquared: biasPerDegreeCelsiusSquared,
      temperatureRangeCelsius: temperatureRangeCelsius)
    self.biasUncertaintyRadiansPerSecond = biasUncertaintyRadiansPerSecond
  }

  /// The gyroscope section from the bench analyses: the static bias of a still recording and,
  /// when a warm-up was fitted, its temperature model. With a fit, the bias is the chosen fit's
  /// value at its reference temperature (the mean window temperature) and the coefficients are
  /// the chosen model's (c₂ = 0 on linear axes); without one, the bias is the still mean at
  /// `stillTemperatureCelsius` (25 °C when the recording had none) and the coefficients are 0.
  /// The uncertainty is the still recording's Allan-derived standard error either way.
  public init(
    staticBias: [AxisBias], stillTemperatureCelsius: Double?, temperatureFit: BiasTemperatureFit?
  ) {
    precondition(staticBias.count == 3, "one static bias per gyro axis")
    let uncertainty = Vector3(
      staticBias[0].standardError, staticBias[1].standardError, staticBias[2].standardError)
    if let fit = temperatureFit {
      let fits = fit.chosenFits
      self.init(
        biasRadiansPerSecond: Vector3(
          fits[0].coefficients[0], fits[1].coefficients[0], fits[2].coefficients[0]),
        biasUncertaintyRadiansPerSecond: uncertainty,
        referenceTemperatureCelsius: fit.referenceTemperatureCelsius,
        biasPerDegreeCelsius: Vector3(
          fits[0].coefficients[1], fits[1].coefficients[1], fits[2].coefficients[1]),
        biasPerDegreeCelsiusSquared: Vector3(
          fits[0].coefficients[2], fits[1].coefficients[2], fits[2].coefficients[2]),
        temperatureRangeCelsius: fit.temperatureRange)
    } else {
      self.init(
        biasRadiansPerSecond: Vector3(staticBias[0].bias, staticBias[1].bias, staticBias[2].bias),
        biasUncertaintyRadiansPerSecond: uncertainty,
        referenceTemperatureCelsius: stillTemperatureCelsius ?? 25)
    }
  }

  /// The bias at `temperature` °C, rad/s (`GyroBiasPolynomial.bias(atTemperature:)`: the
  /// polynomial within the fitted range, its tangent beyond).
  public func bias(atTemperature temperature: Double) -> Vector3 {
    polynomial.bias(atTemperature: temperature)
  }
}

/// Allan read-offs of one sensor, per axis (x, y, z). `nil` where the record was too short.
public struct SensorNoiseFigures: Sendable, Hashable {
  /// N: rad/√s (gyro, angle random walk) or m/s/√s (accel, velocity random walk).
  public var randomWalk: [Double?]
  /// B = σ_min/0.664: rad/s or m/s².
  public var biasInstability: [Double]
  /// K: rad/s/√s or m/s²/√s.
  public var rateRandomWalk: [Double?]

  public init(randomWalk: [Double?], biasInstability: [Double], rateRandomWalk: [Double?]) {
    precondition(randomWalk.count == 3 && biasInstability.count == 3 && rateRandomWalk.count == 3)
    self.randomWalk = randomWalk
    self.biasInstability = biasInstability
    self.rateRandomWalk = rateRandomWalk
  }
}

/// Noise figures from the Allan analysis.
public struct NoiseFigures: Sendable, Hashable {
  /// The sample period of the analysed recording, seconds.
  public var samplePeriodSeconds: Double
  public var gyroscope: SensorNoiseFigures?
  public var accelerometer: SensorNoiseFigures?

  public init(
    samplePeriodSeconds: Double, gyroscope: SensorNoiseFigures?,
    accelerometer: SensorNoiseFigures?
  ) {
    self.samplePeriodSeconds = samplePeriodSeconds
    self.gyroscope = gyroscope
    self.accelerometer = accelerometer
  }

  /// The figures of every sensor `analysis` covers fully.
  public init(_ analysis: AllanAnalysis) {
    samplePeriodSeconds = analysis.timing.samplePeriodSeconds
    func figures(_ sensor: InertialSensor) -> SensorNoiseFigures? {
      let readOffs = sensor.axes.compactMap { analysis.readOffs[$0] }
      guard readOffs.count == 3 else { return nil }
      return SensorNoiseFigures(
        randomWalk: readOffs.map(\.randomWalk), biasInstability: readOffs.map(\.biasInstability),
        rateRandomWalk: readOffs.map(\.rateRandomWalk))
    }
    gyroscope = figures(.gyroscope)
    accelerometer = figures(.accelerometer)
  }
}

/// The firmware's own bias estimate, written back on a clean shutdown. Kept apart from the bench
/// values and outside the content hash: it never replaces them, and writing it does not change
/// the calibration id.
public struct LiveBiasEstimate: Sendable, Hashable {
  /// The estimator's gyro bias at shutdown, rad/s.
  public var gyroBiasRadiansPerSecond: Vector3
  /// The die temperature then, °C.
  public var temperatureCelsius: Double
  /// When, ISO 8601 UTC (`2026-12-02T10:15:00Z`), given by the caller.
  public var written: String

  public init(gyroBiasRadiansPerSecond: Vector3, temperatureCelsius: Double, written: String) {
    self.gyroBiasRadiansPerSecond = gyroBiasRadiansPerSecond
    self.temperatureCelsius = temperatureCelsius
    self.written = written
  }
}

/// What a calibration file may hold. Each bound is what an MPU-6050-class IMU can physically
/// produce, so a value outside one is a damaged or mistyped file, not a poor unit: such values
/// (a gyro bias of 1e300 rad/s, a scale factor of 0) would otherwise load and steer the
/// estimator.
/// Refusals name the key, the value, the range and what to do. Temperatures, rest-detector
/// thresholds and the WHO_AM_I byte have ranges of their own, written where they are read.
public enum CalibrationLimits {
  /// The widest gyro full scale, ±2000 °/s (FS_SEL 3, PS §6.1), in rad/s: 34.907 rounded down
  /// (a reading at ≥ 98 % of the range is clipping anyway). No bias, bias uncertainty or Allan
  /// figure of a working gyro can exceed it.
  public static let gyroFullScaleRadiansPerSecond = 34.9
  /// The widest accelerometer full scale, ±16 g (AFS_SEL 3, PS §6.2), in m/s²: 16 × 9.80665 =
  /// 156.906, rounded down. No offset or Allan figure of a working accelerometer can exceed it.
  public static let accelFullScaleMetersPerSecondSquared = 156.9
  /// Die temperatures, °C: wider than the −40 … 85 °C the MPU-6050 is specified over, so that a
  /// chip read at its limits (and a little past them) still loads.
  public static let temperatureCelsius: ClosedRange<Double> = -60...150
  /// |c₁|, rad/s per °C: the bias may move by at most the full scale over the 125 °C operating
  /// span (34.9 / 125 = 0.279), a hundred times what a real unit shows.
  public static let biasPerDegreeCelsius = 0.28
  /// |c₂|, rad/s per °C²: the same for the quadratic term (34.9 / 125² = 0.00223).
  public static let biasPerDegreeCelsiusSquared = 0.0023
  /// An accelerometer scale factor (reading per true specific force, 1 for a perfect axis), and
  /// a diagonal entry of the full matrix (its inverse): the datasheet's tolerances are a few per
  /// cent; outside a factor of 2 the axis is not working.
  public static let accelScale: ClosedRange<Double> = 0.5...2
  /// |an off-diagonal entry| of the full matrix: cross-axis sensitivity (a few per cent) plus the
  /// misalignment of the sensor in the fixture; 0.5 is a 30° misalignment.
  public static let accelCrossAxis = 0.5
  /// A diagonal entry of the gyro matrix G (the inverse of an axis's sensitivity, 1 for a
  /// perfect axis): the datasheet's tolerance is ±3 % and ±2 % more over temperature (PS §6.1);
  /// outside ±20 % (0.8 … 1.25) the axis is broken or the full scale was not the one recorded.
  public static let gyroScale: ClosedRange<Double> = 0.8...1.25
  /// |an off-diagonal entry| of the gyro matrix: cross-axis sensitivity (±2 %, PS §6.1) plus
  /// the gyro's misalignment to the accelerometer on the same die; 0.1 (5.7°) is five times
  /// that.
  public static let gyroCrossAxis = 0.1
  /// The sample period of an analysed recording, s: the gyro's output data rates are
  /// 4 – 8000 Hz (PS §6.1).
  public static let samplePeriodSeconds: ClosedRange<Double> = (1.0 / 8000)...0.25
}

/// Why a calibration file could not be used.
public enum CalibrationFileError: Error, Hashable, Sendable, CustomStringConvertible {
  case unreadable(path: String, errno: Int32)
  case syntax(path: String, JSONSyntaxError)
  case content(path: String, JSONContentError)
  /// The bench values do not match the content hash: the file was edited by hand.
  case hashMismatch(path: String, JSONContentError)
  case unwritable(path: String, errno: Int32)
  /// The file is a board file (it has i2c, serial or dataReady settings), not a calibration.
  case boardFile(path: String)

  public var description: String {
    switch self {
    case .unreadable(let path, let code):
      "calibration file \(path): \(fileErrorMessage(code))"
    case .syntax(let path, let error):
      "calibration file \(path): \(error.position): not valid JSON: \(error.message)"
    case .content(let path, let error), .hashMismatch(let path, let error):
      "calibration file \(path): \(error)"
    case .unwritable(let path, let code):
      "calibration file \(path): cannot write: \(fileErrorText(code: code))"
    case .boardFile(let path):
      "\(path) is a board file, not a calibration file: give it with --board; a calibration file "
        + "comes from plumb-cal save or plumb calibrate accel"
    }
  }
}

/// A calibration file: bench results for one unit, signed by a content hash, plus a `live`
/// section the firmware may rewrite.
///
/// Layout (schema 1; schema 2 is the same with `gyroscope.matrix`, and is written only when a
/// file has one), keys in this order:
///
///     { "schema": 1, "calibrationId": "0x…", "contentHash": "sha256:…",
///       "sensor": {"whoAmI": "0x68", "name": …, "label": …}, "created": "…Z",
///       "gyroscope": {…}, "accelerometer": {…}, "noise": {…}, "restDetector": {…},
///       "live": {…} }
///
/// `gyroscope`, `accelerometer`, `noise`, `restDetector` and `live` are each optional. Every
/// number has a range (`CalibrationLimits`, and the rest-detector and temperature ranges where
/// they are read); a value outside it is refused on reading and on writing.
///
/// **Content hash**: SHA-256 of the canonical JSON of the document without `calibrationId`,
/// `contentHash` and `live`: keys sorted by their UTF-8 bytes, no whitespace, numbers in Swift's
/// shortest round-trip form (so `1.50` and `1.5` hash alike), strings JSON-escaped. The
/// calibration id (frames carry it) is the hash's first four bytes, big-endian. Writing is
/// deterministic: the same values give the same bytes, and so the same id.
///
/// Before 2026-12-05 Plumb's SHA-256 was wrong for a text 63 bytes past a multiple of 64 (one
/// file in 64): such a file is still read, its id kept (`contentHashAlgorithm`), and
/// `plumb-cal sign` re-signs it with the standard hash that any SHA-256 reproduces.
public struct CalibrationFile: Sendable, Hashable {
  /// The hash a file was signed with.
  public enum ContentHash: Sendable, Hashable {
    /// SHA-256.
    case sha256
    /// The digest of Plumb before 2026-12-05 (`SHA256.legacyPlumbHash`): SHA-256 but for a
    /// canonical text 63 bytes past a multiple of 64. Read and kept (an unchanged file keeps
    /// its id), never chosen for a new signature.
    case plumbBefore2026_12_05
  }

  /// The newest schema this Plumb writes and reads: 2 adds the gyroscope's `matrix`. A file
  /// without one is written as schema 1, which older Plumb reads too.
  public static let schemaVersion = 2
  /// Every schema this Plumb reads.
  public static let readableSchemas = [1, 2]
  public static let topLevelKeys = [
    "schema", "calibrationId", "contentHash", "sensor", "created", "gyroscope", "accelerometer",
    "noise", "restDetector", "live",
  ]

  public var sensor: SensorIdentity
  /// ISO 8601 UTC, given by the caller (the library reads no clock).
  public var created: String
  public var gyroscope: GyroCalibration?
  public var accelerometer: AccelerometerCorrection?
  public var noise: NoiseFigures?
  public var restDetector: RestDetectorThresholds?
  public var live: LiveBiasEstimate?
  /// The hash the file carries: `.sha256` for every file Plumb writes new or re-signs;
  /// `.plumbBefore2026_12_05` for a file read that was signed with the old digest, so that
  /// rewriting it unchanged (its `live` section) keeps its id.
  public var contentHashAlgorithm: ContentHash = .sha256
  /// The schema the file was read with (1 for a new file): a file keeps it when rewritten, so
  /// its hash and id do not change. The schema written is the larger of this and what the
  /// content needs (`writtenSchema`).
  public var schema = 1

  /// The schema the file is written with: 2 when the gyroscope has a matrix, else `schema`.
  public var writtenSchema: Int { max(schema, gyroscope?.matrix != nil ? 2 : 1) }

  public init(
    sensor: SensorIdentity, created: String, gyroscope: GyroCalibration? = nil,
    accelerometer: AccelerometerCorrection? = nil, noise: NoiseFigures? = nil,
    restDetector: RestDetectorThresholds? = nil, live: LiveBiasEstimate? = nil
  ) {
    self.sensor = sensor
    self.created = created
    self.gyroscope = gyroscope
    self.accelerometer = accelerometer
    self.noise = noise
    self.restDetector = restDetector
    self.live = live
  }

  // MARK: Hash and id

  /// SHA-256 of the canonical bench content (`contentHashAlgorithm`'s digest).
  public var contentHash: [UInt8] {
    let text = Array(canonicalJSON(benchValue).utf8)
    switch contentHashAlgorithm {
    case .sha256: return SHA256.hash(text)
    case .plumbBefore2026_12_05: return SHA256.legacyPlumbHash(text)
    }
  }

  /// `sha256:` and the hash in hex, as written in the file.
  public var contentHashText: String { "sha256:" + SHA256.hex(contentHash) }

  /// The calibration id: the content hash's first four bytes, big-endian.
  public var calibrationId: UInt32 {
    let h = contentHash
    return UInt32(h[0]) << 24 | UInt32(h[1]) << 16 | UInt32(h[2]) << 8 | UInt32(h[3])
  }

  /// `0x` and eight hex digits.
  public var calibrationIdText: String { hexWord(calibrationId) }

  // MARK: Writing

  /// The document as JSON text (deterministic, two-space indentation, newline at the end).
  public func formatted() -> String {
    guard case .object(var members) = benchValue else { return "" }
    members.insert(("calibrationId", .string(calibrationIdText)), at: 1)
    members.insert(("contentHash", .string(contentHashText)), at: 2)
    if let liveValue { members.append(("live", liveValue)) }
    return JSONValue.object(members).formatted()
  }

  /// The `live` section, when there is one.
  var liveValue: JSONValue? {
    live.map { live in
      .object([
        ("gyroBiasRadiansPerSecond", vector(live.gyroBiasRadiansPerSecond)),
        ("temperatureCelsius", .number(live.temperatureCelsius)),
        ("written", .string(live.written)),
      ])
    }
  }

  /// Writes the file atomically (temporary file, fsync, rename), once it is known to load: a
  /// value the loader refuses (a bias beyond the full scale, from a recording of a unit that
  /// moved) is refused here with the same message, and nothing is written.
  public func write(toPath path: String) throws(CalibrationFileError) {
    // JSON has no NaN or infinity (and the hash and the formatter need finite numbers).
    if let key = liveValue.map({ JSONValue.object([("live", $0)]) })?.firstNonFiniteNumber()
      ?? benchValue.firstNonFiniteNumber()
    {
      throw .content(
        path: path,
        JSONContentError(
          keyPath: key, position: nil,
          message: "not a finite number (NaN or an infinity): the analysis that gave it had no "
            + "usable data; nothing was written"))
    }
    let bytes = Array(formatted().utf8)
    _ = try CalibrationFile.parse(bytes, path: path)
    do {
      try writeFileAtomically(bytes, to: path)
    } catch {
      throw .unwritable(path: path, errno: error.code)
    }
  }

  /// Replaces only the `live` section of the file at `path`: the bench values are loaded,
  /// verified against their hash and written back unchanged (same bytes, same id). This is what
  /// the firmware calls on a clean shutdown.
  public static func writeLive(_ live: LiveBiasEstimate, toPath path: String)
    throws(CalibrationFileError)
  {
    var file = try load(path: path)
    file.live = live
    try file.write(toPath: path)
  }

  /// The hashed part of the document, in writing order.
  var benchValue: JSONValue {
    var members: [(key: String, value: JSONValue)] = [
      ("schema", .integer(writtenSchema)),
      (
        "sensor",
        .object([
          ("whoAmI", .string(hexByte(sensor.whoAmI, uppercase: false))),
          ("name", .string(sensor.name)),
          ("label", .string(sensor.label)),
        ])
      ),
      ("created", .string(created)),
    ]
    if let g = gyroscope {
      var gyro: [(key: String, value: JSONValue)] = [
        ("biasRadiansPerSecond", vector(g.biasRadiansPerSecond)),
        ("biasUncertaintyRadiansPerSecond", vector(g.biasUncertaintyRadiansPerSecond)),
        ("referenceTemperatureCelsius", .number(g.referenceTemperatureCelsius)),
        ("biasPerDegreeCelsius", vector(g.biasPerDegreeCelsius)),
        ("biasPerDegreeCelsiusSquared", vector(g.biasPerDegreeCelsiusSquared)),
      ]
      if let range = g.temperatureRangeCelsius {
        gyro.append(
          (
            "temperatureRangeCelsius",
            .array([.number(range.lowerBound), .number(range.upperBound)])
          ))
      }
      if let m = g.matrix {
        gyro.append(("matrix", .array([vector(m.row0), vector(m.row1), vector(m.row2)])))
      }
      members.append(("gyroscope", .object(gyro)))
    }
    if let a = accelerometer {
      var accel: [(key: String, value: JSONValue)] = [
        ("offsetMetersPerSecondSquared", vector(a.offset))
      ]
      switch a.form {
      case .perAxis: accel.append(("scale", vector(a.scale)))
      case .fullMatrix:
        accel.append(
          ("matrix", .array([vector(a.matrix.row0), vector(a.matrix.row1), vector(a.matrix.row2)])))
      }
      members.append(("accelerometer", .object(accel)))
    }
    if let n = noise {
      var noise: [(key: String, value: JSONValue)] = [
        ("samplePeriodSeconds", .number(n.samplePeriodSeconds))
      ]
      if let g = n.gyroscope {
        noise.append(
          (
            "gyroscope",
            .object([
              ("angleRandomWalkRadiansPerRootSecond", optionalNumbers(g.randomWalk)),
              ("biasInstabilityRadiansPerSecond", .array(g.biasInstability.map { .number($0) })),
              ("rateRandomWalkRadiansPerSecondPerRootSecond", optionalNumbers(g.rateRandomWalk)),
            ])
          ))
      }
      if let a = n.accelerometer {
        noise.append(
          (
            "accelerometer",
            .object([
              ("velocityRandomWalkMetersPerSecondPerRootSecond", optionalNumbers(a.randomWalk)),
              (
                "biasInstabilityMetersPerSecondSquared",
                .array(a.biasInstability.map { .number($0) })
              ),
              (
                "rateRandomWalkMetersPerSecondSquaredPerRootSecond",
                optionalNumbers(a.rateRandomWalk)
              ),
            ])
          ))
      }
      members.append(("noise", .object(noise)))
    }
    if let r = restDetector {
      members.append(
        (
          "restDetector",
          .object([
            ("gyroDeviationRadiansPerSecond", .number(r.gyroDeviationRadiansPerSecond)),
            (
              "accelDeviationMetersPerSecondSquared",
              .number(r.accelDeviationMetersPerSecondSquared)
            ),
            ("windowSeconds", .number(r.windowSeconds)),
            ("dwellSeconds", .number(r.dwellSeconds)),
            ("noiseMultiple", .number(r.noiseMultiple)),
          ])
        ))
    }
    return .object(members)
  }

  // MARK: Reading

  /// Reads and validates the file at `path`, including its content hash.
  public static func load(path: String, verifyingHash: Bool = true) throws(CalibrationFileError)
    -> CalibrationFile
  {
    let bytes: [UInt8]
    do {
      // A calibration file is a few kilobytes; 16 MiB is no calibration file.
      bytes = try readFile(path, limit: 16 << 20)
    } catch {
      throw .unreadable(path: path, errno: error.code)
    }
    return try parse(bytes, path: path, verifyingHash: verifyingHash)
  }

  /// Validates calibration-file bytes; `path` is for messages. With `verifyingHash: false` a
  /// file whose bench values were edited is accepted (for re-signing it deliberately).
  public static func parse(_ bytes: [UInt8], path: String, verifyingHash: Bool = true)
    throws(CalibrationFileError) -> CalibrationFile
  {
    let document: JSONDocument
    do {
      document = try JSONDocument(parsing: bytes)
    } catch {
      throw .syntax(path: path, error)
    }
    let root = JSONReader(document)
    if root.hasAnyKey(["i2c", "serial", "dataReady"]) { throw .boardFile(path: path) }
    var file: CalibrationFile
    do {
      file = try content(root)
    } catch {
      throw .content(path: path, error)
    }
    guard verifyingHash else { return file }
    do throws(JSONContentError) {
      let hashReader = try root.required("contentHash")
      let stored = try hashReader.string()
      if stored != file.contentHashText {
        var legacy = file
        legacy.contentHashAlgorithm = .plumbBefore2026_12_05
        if stored == legacy.contentHashText { file = legacy }
      }
      guard stored == file.contentHashText else {
        throw hashReader.error(
          "the bench values do not match the content hash (stored \(stored), computed \(file.contentHashText)): the file was edited after it was written. Regenerate it from the bench recordings, or, if the edit is deliberate, re-sign it with `plumb-cal sign \(path)` (which gives the file a new calibration id)"
        )
      }
      let idReader = try root.required("calibrationId")
      let id = try idReader.string()
      guard id.lowercased() == file.calibrationIdText else {
        throw idReader.error(
          "\(id) is not the id derived from the content hash (\(file.calibrationIdText)); re-sign the file with `plumb-cal sign \(path)`"
        )
      }
    } catch {
      throw .hashMismatch(path: path, error)
    }
    return file
  }

  static func content(_ root: JSONReader) throws(JSONContentError) -> CalibrationFile {
    try root.rejectUnknownKeys(topLevelKeys)
    let schemaReader = try root.required("schema")
    let schema = try schemaReader.integer(oneOf: readableSchemas) {
      "this Plumb reads calibration files of schema 1 and 2, not \($0)"
    }
    _ = try root.required("calibrationId").string()
    _ = try root.required("contentHash").string()

    let sensorReader = try root.required("sensor")
    try sensorReader.rejectUnknownKeys(["whoAmI", "name", "label"])
    let whoAmI = try sensorReader.required("whoAmI").integerOrHex(in: 0...255)
    let sensor = SensorIdentity(
      whoAmI: UInt8(whoAmI), name: try sensorReader.required("name").string(),
      label: try sensorReader.required("label").string())

    let createdReader = try root.required("created")
    let created = try createdReader.string()
    guard isISO8601UTC(created) else {
      throw createdReader.error(
        "\"\(created)\" is not an ISO 8601 UTC time like \"2026-12-02T10:15:00Z\"")
    }

    var gyroscope: GyroCalibration?
    if let g = try root.optional("gyroscope") {
      try g.rejectUnknownKeys([
        "biasRadiansPerSecond", "biasUncertaintyRadiansPerSecond", "referenceTemperatureCelsius",
        "biasPerDegreeCelsius", "biasPerDegreeCelsiusSquared", "temperatureRangeCelsius",
        "matrix",
      ])
      var matrix: Matrix3?
      if let m = try g.optional("matrix") {
        guard schema >= 2 else {
          throw m.error(
            "a gyroscope matrix needs schema 2 (this file says 1): regenerate the file with `plumb calibrate imu`"
          )
        }
        matrix = try readGyroMatrix(m)
      }
      var range: ClosedRange<Double>?
      if let r = try g.optional("temperatureRangeCelsius") {
        let values = try r.numbers(
          count: 2, in: CalibrationLimits.temperatureCelsius, unit: "°C", fix: temperatureFix)
        guard values[0] <= values[1] else {
          throw r.error("expected [lowest, highest], found the highest first")
        }
        range = values[0]...values[1]
      }
      let c1 = CalibrationLimits.biasPerDegreeCelsius
      let c2 = CalibrationLimits.biasPerDegreeCelsiusSquared
      gyroscope = GyroCalibration(
        biasRadiansPerSecond: try readVector(
          try g.required("biasRadiansPerSecond"), in: -gyroFullScale...gyroFullScale, unit: "rad/s",
          fix: "no bias of a working gyro exceeds its ±2000 °/s full scale: \(gyroRemeasure)"),
        biasUncertaintyRadiansPerSecond: try readVector(
          try g.required("biasUncertaintyRadiansPerSecond"), in: 0...gyroFullScale, unit: "rad/s",
          fix:
            "an uncertainty is not negative, nor larger than the ±2000 °/s full scale: \(gyroRemeasure)"
        ),
        referenceTemperatureCelsius: try g.required("referenceTemperatureCelsius").double(
          in: CalibrationLimits.temperatureCelsius, unit: "°C", fix: temperatureFix),
        biasPerDegreeCelsius: try readVector(
          try g.required("biasPerDegreeCelsius"), in: -c1...c1, unit: "rad/s per °C",
          fix: temperatureModelFix),
        biasPerDegreeCelsiusSquared: try readVector(
          try g.required("biasPerDegreeCelsiusSquared"), in: -c2...c2, unit: "rad/s per °C²",
          fix: temperatureModelFix),
        temperatureRangeCelsius: range, matrix: matrix)
    }

    var accelerometer: AccelerometerCorrection?
    if let a = try root.optional("accelerometer") {
      try a.rejectUnknownKeys(["offsetMetersPerSecondSquared", "scale", "matrix"])
      let offset = try readVector(
        try a.required("offsetMetersPerSecondSquared"), in: -accelFullScale...accelFullScale,
        unit: "m/s²",
        fix: "no offset of a working accelerometer exceeds its ±16 g full scale: \(accelRemeasure)")
      let scaleReader = try a.optional("scale")
      let matrixReader = try a.optional("matrix")
      let scaleFix =
        "a scale factor (reading per true specific force) outside it is not a working axis: \(accelRemeasure)"
      if let scaleReader, matrixReader == nil {
        let scale = try readVector(
          scaleReader, in: CalibrationLimits.accelScale, unit: "", fix: scaleFix)
        accelerometer = AccelerometerCorrection(offset: offset, scale: scale)
      } else if let matrixReader, scaleReader == nil {
        let rows = try matrixReader.array()
        guard rows.count == 3 else {
          throw matrixReader.error("expected 3 rows of 3 numbers, found \(rows.count) rows")
        }
        // The diagonal is the inverse of a scale factor; the rest is cross-axis coupling.
        let cross = CalibrationLimits.accelCrossAxis
        var entries: [Vector3] = []
        for (row, reader) in rows.enumerated() {
          let elements = try reader.array()
          guard elements.count == 3 else {
            throw reader.error("expected 3 numbers, found \(elements.count)")
          }
          var values: [Double] = []
          for (column, element) in elements.enumerated() {
            values.append(
              row == column
                ? try element.double(in: CalibrationLimits.accelScale, fix: scaleFix)
                : try element.double(
                  in: -cross...cross,
                  fix:
                    "an off-diagonal entry is cross-axis coupling and misalignment, at most 30° of it: \(accelRemeasure)"
                ))
          }
          entries.append(Vector3(values[0], values[1], values[2]))
        }
        let matrix = Matrix3(rows: entries[0], entries[1], entries[2])
        guard matrix.inverse != nil else { throw matrixReader.error("the matrix is singular") }
        accelerometer = AccelerometerCorrection(offset: offset, matrix: matrix)
      } else {
        throw a.error("give either \"scale\" (per axis) or \"matrix\" (3×3), not both or neither")
      }
    }

    var noise: NoiseFigures?
    if let n = try root.optional("noise") {
      try n.rejectUnknownKeys(["samplePeriodSeconds", "gyroscope", "accelerometer"])
      let period = try n.required("samplePeriodSeconds").double(
        in: CalibrationLimits.samplePeriodSeconds, unit: "s",
        fix: "the MPU-6050 samples at 4 – 8000 Hz: \(noiseRemeasure)")
      var gyro: SensorNoiseFigures?
      if let g = try n.optional("gyroscope") {
        try g.rejectUnknownKeys([
          "angleRandomWalkRadiansPerRootSecond", "biasInstabilityRadiansPerSecond",
          "rateRandomWalkRadiansPerSecondPerRootSecond",
        ])
        gyro = SensorNoiseFigures(
          randomWalk: try readOptionalNumbers(
            try g.required("angleRandomWalkRadiansPerRootSecond"), upTo: gyroFullScale,
            unit: "rad/√s"),
          biasInstability: try readNoiseNumbers(
            try g.required("biasInstabilityRadiansPerSecond"), upTo: gyroFullScale, unit: "rad/s"),
          rateRandomWalk: try readOptionalNumbers(
            try g.required("rateRandomWalkRadiansPerSecondPerRootSecond"), upTo: gyroFullScale,
            unit: "rad/s/√s"))
      }
      var accel: SensorNoiseFigures?
      if let a = try n.optional("accelerometer") {
        try a.rejectUnknownKeys([
          "velocityRandomWalkMetersPerSecondPerRootSecond",
          "biasInstabilityMetersPerSecondSquared",
          "rateRandomWalkMetersPerSecondSquaredPerRootSecond",
        ])
        accel = SensorNoiseFigures(
          randomWalk: try readOptionalNumbers(
            try a.required("velocityRandomWalkMetersPerSecondPerRootSecond"),
            upTo: accelFullScale, unit: "m/s/√s"),
          biasInstability: try readNoiseNumbers(
            try a.required("biasInstabilityMetersPerSecondSquared"), upTo: accelFullScale,
            unit: "m/s²"),
          rateRandomWalk: try readOptionalNumbers(
            try a.required("rateRandomWalkMetersPerSecondSquaredPerRootSecond"),
            upTo: accelFullScale, unit: "m/s²/√s"))
      }
      noise = NoiseFigures(samplePeriodSeconds: period, gyroscope: gyro, accelerometer: accel)
    }

    var restDetector: RestDetectorThresholds?
    if let r = try root.optional("restDetector") {
      try r.rejectUnknownKeys([
        "gyroDeviationRadiansPerSecond", "accelDeviationMetersPerSecondSquared", "windowSeconds",
        "dwellSeconds", "noiseMultiple",
      ])
      let fix = "regenerate the thresholds from a still recording with `plumb-cal save`"
      restDetector = RestDetectorThresholds(
        gyroDeviationRadiansPerSecond: try r.required("gyroDeviationRadiansPerSecond").double(
          in: 1e-9...10, unit: "rad/s", fix: fix),
        accelDeviationMetersPerSecondSquared: try r.required(
          "accelDeviationMetersPerSecondSquared"
        ).double(in: 1e-9...50, unit: "m/s²", fix: fix),
        windowSeconds: try r.required("windowSeconds").double(in: 0.01...60, unit: "s", fix: fix),
        dwellSeconds: try r.required("dwellSeconds").double(in: 0...600, unit: "s", fix: fix),
        noiseMultiple: try r.required("noiseMultiple").double(in: 1...100, fix: fix))
    }

    var live: LiveBiasEstimate?
    if let l = try root.optional("live") {
      try l.rejectUnknownKeys(["gyroBiasRadiansPerSecond", "temperatureCelsius", "written"])
      let writtenReader = try l.required("written")
      let written = try writtenReader.string()
      guard isISO8601UTC(written) else {
        throw writtenReader.error(
          "\"\(written)\" is not an ISO 8601 UTC time like \"2026-12-02T10:15:00Z\"")
      }
      // Written by the firmware, not the bench: a bad value means the file was damaged.
      let liveFix =
        "delete the \"live\" section (the firmware writes it again at its next clean shutdown)"
      live = LiveBiasEstimate(
        gyroBiasRadiansPerSecond: try readVector(
          try l.required("gyroBiasRadiansPerSecond"), in: -gyroFullScale...gyroFullScale,
          unit: "rad/s", fix: "no bias exceeds the gyro's ±2000 °/s full scale; \(liveFix)"),
        temperatureCelsius: try l.required("temperatureCelsius").double(
          in: CalibrationLimits.temperatureCelsius, unit: "°C", fix: liveFix),
        written: written)
    }

    var file = CalibrationFile(
      sensor: sensor, created: created, gyroscope: gyroscope, accelerometer: accelerometer,
      noise: noise, restDetector: restDetector, live: live)
    file.schema = schema
    return file
  }
}

/// The gyroscope's `matrix`: three rows of three numbers, each diagonal entry within
/// `CalibrationLimits.gyroScale` and each other within ±`gyroCrossAxis`. Those limits are what
/// keeps the matrix invertible and orientation-preserving: every eigenvalue lies within 0.2 of
/// a diagonal entry ≥ 0.8 (Gershgorin), so none is near zero or negative — a singular matrix
/// (a zero row, a dead axis) or a mirroring one (a −1 on the diagonal: a sign that belongs in
/// the board file's mounting) fails on its diagonal, with the reason.
func readGyroMatrix(_ reader: JSONReader) throws(JSONContentError) -> Matrix3 {
  let rows = try reader.array()
  guard rows.count == 3 else {
    throw reader.error("expected 3 rows of 3 numbers, found \(rows.count) rows")
  }
  let fix = "regenerate the matrix with `plumb calibrate imu`"
  let cross = CalibrationLimits.gyroCrossAxis
  var entries: [Vector3] = []
  for (row, rowReader) in rows.enumerated() {
    let elements = try rowReader.array()
    guard elements.count == 3 else {
      throw rowReader.error("expected 3 numbers, found \(elements.count)")
    }
    var values: [Double] = []
    for (column, element) in elements.enumerated() {
      values.append(
        row == column
          ? try element.double(
            in: CalibrationLimits.gyroScale,
            fix:
              "a diagonal entry is the inverse of an axis's sensitivity, within ±3 % on a working MPU-6050 (±20 % allowed); a value outside it (0 makes the matrix singular, a negative one mirrors an axis, which belongs in the board file's mounting) is a broken axis or a session recorded at another full scale: \(fix)"
          )
          : try element.double(
            in: -cross...cross,
            fix:
              "an off-diagonal entry is cross-axis sensitivity and gyro-to-accelerometer misalignment, ±2 % on a working MPU-6050 (±10 % allowed): \(fix)"
          ))
    }
    entries.append(Vector3(values[0], values[1], values[2]))
  }
  return Matrix3(rows: entries[0], entries[1], entries[2])
}

// MARK: - Helpers

func vector(_ v: Vector3) -> JSONValue { .array([.number(v.x), .number(v.y), .number(v.z)]) }

func optionalNumbers(_ values: [Double?]) -> JSONValue {
  .array(values.map { $0.map { JSONValue.number($0) } ?? .null })
}

/// x, y, z, each within `range` (see `CalibrationLimits`).
func readVector(
  _ reader: JSONReader, in range: ClosedRange<Double>, unit: String, fix: String
) throws(JSONContentError) -> Vector3 {
  let values = try reader.numbers(count: 3, in: range, unit: unit, fix: fix)
  return Vector3(values[0], values[1], values[2])
}

private let gyroFullScale = CalibrationLimits.gyroFullScaleRadiansPerSecond
private let accelFullScale = CalibrationLimits.accelFullScaleMetersPerSecondSquared
private let gyroRemeasure = "measure it again with `plumb-cal gyro` on a still recording"
private let accelRemeasure = "calibrate the accelerometer again (`plumb calibrate accel`)"
private let noiseRemeasure = "analyse the still recording again with `plumb-cal allan`"
private let temperatureFix =
  "that is already wider than the −40 … 85 °C the MPU-6050 works over: \(gyroRemeasure)"
private let temperatureModelFix =
  "the bias cannot move by more than the ±2000 °/s full scale over the chip's 125 °C operating range: fit it again with `plumb-cal gyro` on a warm-up recording"

/// A noise figure: not negative, and no larger than the sensor's full scale `fullScale` (in the
/// figure's unit). N and K/√3 are Allan deviations at τ = 1 s and 0.664·B is the smallest one;
/// no Allan deviation of a working sensor exceeds its full scale.
func readNoiseFigure(_ reader: JSONReader, upTo fullScale: Double, unit: String)
  throws(JSONContentError) -> Double
{
  try reader.double(
    in: 0...fullScale, unit: unit,
    fix:
      "a noise figure is not negative, and what it stands for cannot exceed the sensor's full scale: \(noiseRemeasure)"
  )
}

/// Three noise figures (x, y, z), each possibly `null` ("not reached").
func readOptionalNumbers(_ reader: JSONReader, upTo fullScale: Double, unit: String)
  throws(JSONContentError) -> [Double?]
{
  let elements = try reader.array()
  guard elements.count == 3 else {
    throw reader.error(
      "expected 3 values (x, y, z; null where not reached), found \(elements.count)")
  }
  var result: [Double?] = []
  for element in elements {
    result.append(
      element.value == .null ? nil : try readNoiseFigure(element, upTo: fullScale, unit: unit))
  }
  return result
}

/// Three noise figures (x, y, z).
func readNoiseNumbers(_ reader: JSONReader, upTo fullScale: Double, unit: String)
  throws(JSONContentError) -> [Double]
{
  let elements = try reader.array()
  guard elements.count == 3 else {
    throw reader.error("expected 3 numbers (x, y, z), found \(elements.count)")
  }
  var result: [Double] = []
  for element in elements {
    result.append(try readNoiseFigure(element, upTo: fullScale, unit: unit))
  }
  return result
}

/// Canonical JSON: object keys sorted by UTF-8 bytes, no whitespace, numbers in shortest
/// round-trip form, strings JSON-escaped. Two documents with the same values give the same text.
public func canonicalJSON(_ value: JSONValue) -> String {
  switch value {
  case .null: return "null"
  case .bool(let b): return b ? "true" : "false"
  case .number(let d, _): return formatJSONNumber(d)
  case .string(let s): return quoteJSONString(s)
  case .array(let elements): return "[" + elements.map(canonicalJSON).joined(separator: ",") + "]"
  case .object(let members):
    let sorted = members.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
    return "{"
      + sorted.map { quoteJSONString($0.key) + ":" + canonicalJSON($0.value) }.joined(
        separator: ",") + "}"
  }
}
