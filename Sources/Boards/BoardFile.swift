import Geometry
import JSON
import Telemetry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Why a board file could not be used. Every case names the file; content errors name the key
/// and the line, and say what would be right.
public enum BoardFileError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The file could not be read (`errno`).
  case unreadable(path: String, errno: Int32)
  /// The file is not valid JSON.
  case syntax(path: String, JSONSyntaxError)
  /// The JSON is valid but a key is missing, misspelt, of the wrong type or out of range.
  case content(path: String, JSONContentError)
  /// The file is a calibration file (it has a calibration id or a content hash), not a board.
  case calibrationFile(path: String)

  public var description: String {
    switch self {
    case .unreadable(let path, let code):
      let reason: String
      switch code {
      case ENOENT: reason = "no such file (the board files that come with Plumb are in Boards/)"
      case EACCES: reason = "permission denied"
      case EISDIR: reason = "is a folder, not a board file"
      case EFBIG:
        reason =
          "larger than 1 MiB, which no board file is (they are a few hundred bytes): give the board file (the shipped ones are in Boards/)"
      default: reason = String(cString: strerror(code))
      }
      return "board file \(path): \(reason)"
    case .syntax(let path, let error):
      return "board file \(path): \(error.position): not valid JSON: \(error.message)"
    case .content(let path, let error):
      return "board file \(path): \(error)"
    case .calibrationFile(let path):
      return "\(path) is a calibration file, not a board file: name it in the board file's "
        + "\"calibration\" key, and give the board file (Boards/ has the shipped ones)"
    }
  }
}

/// Reading and validating board files.
public enum BoardFile {
  /// The keys a board file may have at the top level.
  public static let topLevelKeys = [
    "schema", "name", "description", "i2c", "dataReady", "serial", "mounting", "sensor", "output",
    "mavlink", "calibration", "simulation",
  ]

  /// The longest board file read, bytes: a board file is a few hundred bytes, and a path to a
  /// device that never ends (`/dev/zero`) must not be read until memory runs out.
  public static let maximumBytes = 1 << 20

  /// Reads and validates the board file at `path`.
  public static func load(path: String) throws(BoardFileError) -> BoardDefinition {
    let bytes: [UInt8]
    do {
      bytes = try readWholeFile(path, limit: maximumBytes)
    } catch {
      throw .unreadable(path: path, errno: error.code)
    }
    return try parse(bytes, path: path)
  }

  /// Validates board-file text; `path` is used in messages and to resolve the calibration file.
  public static func parse(_ bytes: [UInt8], path: String) throws(BoardFileError) -> BoardDefinition
  {
    let document: JSONDocument
    do {
      document = try JSONDocument(parsing: bytes)
    } catch {
      throw .syntax(path: path, error)
    }
    let root = JSONReader(document)
    if root.hasAnyKey(["calibrationId", "contentHash"]) { throw .calibrationFile(path: path) }
    do {
      return try definition(from: root, path: path)
    } catch {
      throw .content(path: path, error)
    }
  }

  static func definition(from root: JSONReader, path: String) throws(JSONContentError)
    -> BoardDefinition
  {
    try root.rejectUnknownKeys(topLevelKeys)
    _ = try root.required("schema").integer(oneOf: [BoardDefinition.schemaVersion]) {
      "this Plumb reads board files of schema \(BoardDefinition.schemaVersion), not \($0)"
    }
    let name = try root.required("name").string()
    guard !name.isEmpty else { throw try root.required("name").error("must not be empty") }
    let description = try root.optional("description")?.string() ?? ""

    let i2cReader = try root.required("i2c")
    try i2cReader.rejectUnknownKeys(["bus", "address"])
    let bus = try i2cReader.required("bus").string()
    guard bus == "simulated" || bus.hasPrefix("/dev/") else {
      throw try i2cReader.required("bus").error(
        "expected a device path like \"/dev/i2c-1\" (or \"simulated\"), found \"\(bus)\"")
    }
    let address = try i2cReader.optional("address")?.integerOrHex(in: 0x08...0x77) ?? 0x68
    let i2c = I2CSettings(bus: bus, address: UInt8(address))

    let dataReadyReader = try root.required("dataReady")
    try dataReadyReader.rejectUnknownKeys(["chip", "line", "wired"])
    let wired = try dataReadyReader.optional("wired")?.bool() ?? true
    let chip = try dataReadyReader.required("chip").string()
    guard !chip.isEmpty else {
      throw try dataReadyReader.required("chip").error(
        "must name a GPIO chip by path, name or label (see `gpiodetect`)")
    }
    let lineReader = try dataReadyReader.required("line")
    let line: LineSelector
    if case .string(let lineName) = lineReader.value {
      guard !lineName.isEmpty else { throw lineReader.error("must not be empty") }
      line = .name(lineName)
    } else {
      line = .offset(try lineReader.integer(in: 0...1023))
    }
    let dataReady = DataReadySettings(chip: chip, line: line, isWired: wired)

    let serialReader = try root.required("serial")
    try serialReader.rejectUnknownKeys(["device", "baud"])
    let device = try serialReader.required("device").string()
    guard device == "stdout" || device.hasPrefix("/") else {
      throw try serialReader.required("device").error(
        "expected an absolute device path like \"/dev/serial0\", or \"stdout\"")
    }
    let baudRates = SerialSettings.supportedBaudRates
    let baud =
      try serialReader.optional("baud")?.integer(oneOf: baudRates) {
        "\($0) is not a supported baud rate: use one of \(baudRates.map(String.init).joined(separator: ", "))"
      } ?? 115_200
    let serial = SerialSettings(device: device, baudRate: baud)

    let mounting =
      try root.optional("mounting").map { reader throws(JSONContentError) in
        try mountingRotation(reader)
      } ?? .identity

    var sensor = SensorSettings()
    if let reader = try root.optional("sensor") {
      try reader.rejectUnknownKeys(["sampleRateHz", "dlpfHz", "gyroRangeDps", "accelRangeG"])
      if let r = try reader.optional("sampleRateHz") {
        sensor.sampleRateHz = try r.double(in: 4...8000, unit: "Hz")
        // The frames go out every Nth sample, a whole number of them per second.
        guard sensor.sampleRateHz == sensor.sampleRateHz.rounded() else {
          let rates = (1...256).filter { 1000 % $0 == 0 }.map { String(1000 / $0) }
          throw r.error(
            "\(formatJSONNumber(sensor.sampleRateHz)) Hz is not a whole number of hertz: Plumb sends every Nth sample, a whole number of frames per second, so it samples at a whole rate: 1000 Hz ÷ N (\(rates.joined(separator: ", "))), or 8000 Hz ÷ N with dlpfHz 260"
          )
        }
      }
      if let r = try reader.optional("dlpfHz") {
        sensor.dlpfBandwidthHz = try r.integer(oneOf: [260, 184, 94, 44, 21, 10, 5]) {
          "\($0) Hz is not a DLPF setting of the MPU-6050: use one of 260, 184, 94, 44, 21, 10, 5 (the accelerometer bandwidths of DLPF_CFG 0…6)"
        }
      }
      if let r = try reader.optional("gyroRangeDps") {
        sensor.gyroRangeDegreesPerSecond = try r.integer(oneOf: [250, 500, 1000, 2000]) {
          "±\($0) °/s is not a gyro range: use 250, 500, 1000 or 2000"
        }
      }
      if let r = try reader.optional("accelRangeG") {
        sensor.accelRangeG = try r.integer(oneOf: [2, 4, 8, 16]) {
          "±\($0) g is not an accelerometer range: use 2, 4, 8 or 16"
        }
      }
    }

    var output = OutputSettings()
    if let reader = try root.optional("output") {
      try reader.rejectUnknownKeys(["format", "rateHz"])
      if let r = try reader.optional("format") {
        output.format = TelemetryFormat(
          rawValue: try r.choice(TelemetryFormat.allCases.map(\.rawValue)))!
      }
      if let r = try reader.optional("rateHz") {
        let asked = try r.double(unit: "Hz")
        guard asked == asked.rounded() else {
          throw r.error(
            "\(formatJSONNumber(asked)) Hz is not a whole number of frames per second: give 1 … 1000 Hz, dividing the sensor's sample rate (every Nth sample is sent)"
          )
        }
        output.rateHz = try r.double(in: 1...1000, unit: "Hz")
        let ratio = sensor.sampleRateHz / output.rateHz
        guard abs(ratio - ratio.rounded()) < 1e-9, ratio >= 1 else {
          throw r.error(
            "\(formatJSONNumber(output.rateHz)) Hz must divide the sensor's \(formatJSONNumber(sensor.sampleRateHz)) Hz sample rate (every Nth sample is sent)"
          )
        }
      } else {
        output.rateHz = sensor.sampleRateHz
      }
    } else {
      output.rateHz = sensor.sampleRateHz
    }

    var mavlink = MAVLinkSettings()
    if let reader = try root.optional("mavlink") {
      try reader.rejectUnknownKeys(["systemId", "componentId", "udp"])
      if let r = try reader.optional("systemId") { mavlink.systemId = try r.integer(in: 1...255) }
      if let r = try reader.optional("componentId") {
        mavlink.componentId = try r.integer(in: 1...255)
      }
      if let r = try reader.optional("udp") {
        let text = try r.string()
        guard !text.isEmpty else {
          throw r.error("expected HOST:PORT (e.g. \"127.0.0.1:14550\") or \"listen:PORT\"")
        }
        mavlink.udp = text
      }
    }

    let calibrationPath = try root.optional("calibration").map { reader throws(JSONContentError) in
      let relative = try reader.string()
      guard !relative.isEmpty else { throw reader.error("must be a path to a calibration file") }
      return resolve(relative, against: path)
    }

    var simulation: SimulationSettings?
    if let reader = try root.optional("simulation") {
      try reader.rejectUnknownKeys(["scenario", "seed", "oscillatorErrorPercent", "faults"])
      var settings = SimulationSettings()
      if let r = try reader.optional("scenario") { settings.scenario = try r.string() }
      if let r = try reader.optional("seed") {
        settings.seed = UInt64(try r.integer(in: 0...Int(Int32.max)))
      }
      if let r = try reader.optional("oscillatorErrorPercent") {
        settings.oscillatorErrorPercent = try r.double(in: -10...10, unit: "%")
      }
      if let r = try reader.optional("faults") { settings.faults = try r.string() }
      simulation = settings
    }
    if (simulation != nil) != (bus == "simulated") {
      throw try root.required("i2c").required("bus").error(
        simulation == nil
          ? "\"simulated\" needs a \"simulation\" section describing the simulated world"
          : "a board with a \"simulation\" section must use the bus \"simulated\"")
    }

    return BoardDefinition(
      name: name, description: description, i2c: i2c, dataReady: dataReady, serial: serial,
      mounting: mounting, sensor: sensor, output: output, mavlink: mavlink,
      calibrationPath: calibrationPath, simulation: simulation)
  }

  /// What `mounting.rollPitchYawDegrees` accepts, degrees: one turn either way. Beyond it an
  /// angle is a typo (a 1e300° angle is also meaningless: its sine is noise).
  public static let mountingAngleRangeDegrees: ClosedRange<Double> = -360...360

  /// The mounting rotation: `{"sensorToBody": [[…],[…],[…]]}` (rows of the matrix that maps
  /// sensor axes to body axes) or `{"rollPitchYawDegrees": [r, p, y]}` (body = Rz(y)·Ry(p)·Rx(r)·sensor).
  static func mountingRotation(_ reader: JSONReader) throws(JSONContentError) -> Matrix3 {
    try reader.rejectUnknownKeys(["sensorToBody", "rollPitchYawDegrees"])
    // Both: one of them would be ignored without a word (a copied board keeps its matrix).
    guard !reader.hasAnyKey(["sensorToBody"]) || !reader.hasAnyKey(["rollPitchYawDegrees"]) else {
      throw reader.error(
        "give either \"sensorToBody\" or \"rollPitchYawDegrees\", not both: they are two ways to write the one rotation; delete the one you did not mean"
      )
    }
    if let matrixReader = try reader.optional("sensorToBody") {
      let rows = try matrixReader.array()
      guard rows.count == 3 else {
        throw matrixReader.error("expected 3 rows of 3 numbers, found \(rows.count) rows")
      }
      var values: [[Double]] = []
      for row in rows { values.append(try row.numbers(count: 3)) }
      let matrix = Matrix3(
        rows: Vector3(values[0][0], values[0][1], values[0][2]),
        Vector3(values[1][0], values[1][1], values[1][2]),
        Vector3(values[2][0], values[2][1], values[2][2]))
      guard matrix.isRotation(tolerance: 1e-3) else {
        let rule =
          "is not a rotation: rows must be unit length, mutually perpendicular, and right-handed"
        // An entry outside -1 … 1 is the mistake to name (and its determinant may overflow).
        let largest = values.joined().max { abs($0) < abs($1) } ?? 0
        guard abs(largest) <= 1.001 else {
          throw matrixReader.error(
            "\(rule); it has an entry of \(formatJSONNumber(largest)), where a rotation's entries are between -1 and 1"
          )
        }
        throw matrixReader.error(
          "\(rule) (determinant +1, found \(formatJSONNumber((matrix.determinant * 1000).rounded() / 1000))); a mirror (determinant -1) usually means one axis has the wrong sign"
        )
      }
      return matrix
    }
    if let anglesReader = try reader.optional("rollPitchYawDegrees") {
      let angles = try anglesReader.numbers(
        count: 3, in: mountingAngleRangeDegrees, unit: "°",
        fix:
          "a mounting angle is at most one turn either way (write 270 as -90, or use \"sensorToBody\")"
      ).map { $0 * radiansPerDegree }
      let q =
        Quaternion(axis: .unitZ, angle: angles[2]) * Quaternion(axis: .unitY, angle: angles[1])
        * Quaternion(axis: .unitX, angle: angles[0])
      return Matrix3(q)
    }
    throw reader.error("give either \"sensorToBody\" (a 3×3 rotation) or \"rollPitchYawDegrees\"")
  }

  /// `relative` resolved against the folder of `boardPath`, unless it is absolute.
  public static func resolve(_ relative: String, against boardPath: String) -> String {
    if relative.hasPrefix("/") { return relative }
    guard let slash = boardPath.lastIndex(of: "/") else { return relative }
    return String(boardPath[...slash]) + relative
  }

  /// What a board file at `boardPath` must give as its `"calibration"` to name the file at
  /// `path` — both as a command was given them, relative to `workingDirectory` unless absolute:
  /// the path from the board file's folder (`resolve` reads it against that folder, not against
  /// wherever the firmware is started), so that the board file and its calibration can be moved
  /// together. Absolute when the two share nothing but the root (`/etc/plumb/board.json` and
  /// `/home/pi/unit.json`: a path climbing out of /etc says less than the absolute one).
  /// Computed on the text of the paths (`.` and `..` folded, no symbolic link followed), as
  /// `resolve` and the kernel read them when nothing in between is a link.
  public static func calibrationReference(
    to path: String, boardPath: String, workingDirectory: String
  ) -> String {
    func absolute(_ p: String) -> [Substring] {
      let full = p.hasPrefix("/") ? p : workingDirectory + "/" + p
      var parts: [Substring] = []
      for part in full.split(separator: "/", omittingEmptySubsequences: true) {
        if part == "." { continue }
        if part == ".." {
          if !parts.isEmpty { parts.removeLast() }
          continue
        }
        parts.append(part)
      }
      return parts
    }
    let target = absolute(path)
    let folder = absolute(boardPath).dropLast()
    var common = 0
    while common < folder.count && common < target.count - 1
      && folder[folder.startIndex + common] == target[common]
    {
      common += 1
    }
    if common == 0 { return "/" + target.joined(separator: "/") }
    let up = Array(repeating: "..", count: folder.count - common)
    return (up + target[common...].map(String.init)).joined(separator: "/")
  }
}

/// An errno from reading a file.
public struct FileReadError: Error, Hashable, Sendable {
  public var code: Int32
  public init(code: Int32) { self.code = code }
}

/// Reads a whole file with POSIX calls (no Foundation on the firmware side).
///
/// A file longer than `limit` bytes fails with `EFBIG` once `limit` bytes are read, so a path
/// to an endless device (`/dev/zero`) ends instead of filling memory. The file is opened without
/// blocking (a named pipe that nothing writes to would otherwise hang `open` for ever) and then
/// read blocking: a pipe with a writer is read to its end, one without reads as empty.
public func readWholeFile(_ path: String, limit: Int = Int.max) throws(FileReadError) -> [UInt8] {
  let fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
  guard fd >= 0 else { throw FileReadError(code: errno) }
  defer { close(fd) }
  let flags = fcntl(fd, F_GETFL)
  if flags >= 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
  var result: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 65536)
  while true {
    let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
    if n < 0 {
      if errno == EINTR { continue }
      throw FileReadError(code: errno)
    }
    if n == 0 { break }
    guard n <= limit - result.count else { throw FileReadError(code: EFBIG) }
    result.append(contentsOf: chunk[0..<n])
  }
  return result
}
