import AttitudeEstimation
import ByteFormats
import Firmware
import JSON
import Telemetry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The parameters changed at run time (MAVLink PARAM_SET, SET_MESSAGE_INTERVAL, the `set` and
/// `rate` host commands), kept in the state folder so they survive a restart:
/// `STATE/parameters.json`, replaced atomically (a temporary file, then a rename) after each
/// change.
///
/// ```json
/// { "schema": 1, "parameters": { "OUT_RATE_HZ": 100, "SR_IMU_HZ": 25, "ATT_TAU_S": 2 } }
/// ```
///
/// The board file stays the source of truth for the hardware: only `PlumbParameter`s are here,
/// and a stored value is checked as a change would be. A stored value Plumb cannot use (a name
/// it does not know, a value out of range, a file that is not this JSON) is reported at start
/// and left out, and the file is rewritten at the next change — never a refusal to start.
///
/// Where the state folder is: `--state-dir DIR`; else `$STATE_DIRECTORY` (what systemd's
/// `StateDirectory=plumb` sets, `/var/lib/plumb`); else `/var/lib/plumb` when it exists, on a
/// real board. The simulated board keeps nothing unless told where.
public struct ParameterStore: Sendable {
  /// The file's name in the state folder.
  public static let fileName = "parameters.json"
  /// The folder systemd makes for the service (tools/systemd/plumb.service).
  public static let systemFolder = "/var/lib/plumb"

  public let folder: String
  public var path: String {
    folder.hasSuffix("/") ? folder + Self.fileName : folder + "/" + Self.fileName
  }

  public init(folder: String) { self.folder = folder }

  /// The folder to use: `explicit` (`--state-dir`), else `$STATE_DIRECTORY` (its first entry),
  /// else `/var/lib/plumb` when `defaultToSystemFolder` and it exists; `nil` for none.
  public static func folder(explicit: String?, defaultToSystemFolder: Bool) -> String? {
    if let explicit { return explicit }
    if let variable = getenv("STATE_DIRECTORY") {
      let value = String(cString: variable)
      if let first = value.split(separator: ":").first, !first.isEmpty { return String(first) }
    }
    guard defaultToSystemFolder else { return nil }
    var status = stat()
    guard stat(systemFolder, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return nil }
    return systemFolder
  }

  /// What was read: the values, and what was left out and why (for the start-up log).
  public struct Contents: Sendable {
    public var values: [(parameter: PlumbParameter, value: Float)] = []
    public var warnings: [String] = []
  }

  /// Reads the file; a missing file is no values and no warning.
  public func load() -> Contents {
    var contents = Contents()
    let bytes: [UInt8]
    do {
      bytes = try POSIXFile.readAll(path)
    } catch {
      if error.errno.rawValue != ENOENT {
        contents.warnings.append(
          "cannot read the stored parameters \(path): \(fileErrorText(error.errno)); "
            + "starting from the board file's settings")
      }
      return contents
    }
    let root: JSONValue
    do {
      root = try JSONDocument(parsing: bytes).root
    } catch {
      contents.warnings.append(
        "the stored parameters \(path) are not JSON (\(error)); starting from the board file's "
          + "settings (the file is replaced at the next change; delete it to silence this)")
      return contents
    }
    guard case .object(let members) = root,
      let schema = members.first(where: { $0.key == "schema" })?.value,
      case .number(1, _) = schema,
      let stored = members.first(where: { $0.key == "parameters" })?.value,
      case .object(let entries) = stored
    else {
      contents.warnings.append(
        "the stored parameters \(path) are not {\"schema\": 1, \"parameters\": {…}}; starting "
          + "from the board file's settings (the file is replaced at the next change)")
      return contents
    }
    for (name, value) in entries {
      guard let parameter = PlumbParameter.named(name), parameter.persists else {
        contents.warnings.append("\(path): \"\(name)\" is not a parameter Plumb keeps; left out")
        continue
      }
      guard case .number(let number, _) = value, parameter.range.contains(Float(number)),
        parameter.valueType == .real32 || number == number.rounded()
      else {
        contents.warnings.append(
          "\(path): \(name) must be a number from \(PlumbParameter.text(parameter.range.lowerBound)) "
            + "to \(PlumbParameter.text(parameter.range.upperBound))"
            + (parameter.units.isEmpty ? "" : " " + parameter.units)
            + (parameter.valueType == .int32 ? ", whole" : "") + "; left out")
        continue
      }
      contents.values.append((parameter, Float(number)))
    }
    return contents
  }

  /// The file's text for `values`, in `PlumbParameter` order.
  public static func text(_ values: [(parameter: PlumbParameter, value: Float)]) -> String {
    let members = values.sorted { $0.parameter.rawValue < $1.parameter.rawValue }.map {
      (
        key: $0.parameter.nameString,
        value: JSONValue.number(Double($0.value), text: PlumbParameter.text($0.value))
      )
    }
    return JSONValue.object([
      (key: "schema", value: .number(1, text: "1")), (key: "parameters", value: .object(members)),
    ]).formatted() + "\n"
  }

  /// Replaces the file with `values`; the error names the file and the fix.
  public func save(_ values: [(parameter: PlumbParameter, value: Float)])
    throws(ParameterStoreError)
  {
    do throws(AtomicFile.Failure) {
      try AtomicFile.write(Array(Self.text(values).utf8), to: path)
    } catch {
      throw ParameterStoreError(path: path, message: error.message)
    }
  }

  /// The values a loop has now that are kept.
  public static func values<Bus, Line, Port, Clock>(
    of loop: FirmwareLoop<Bus, Line, Port, Clock>
  ) -> [(parameter: PlumbParameter, value: Float)] {
    PlumbParameter.allCases.filter(\.persists).map { ($0, loop.parameterSetting($0)) }
  }
}

/// A parameter file that could not be written.
public struct ParameterStoreError: Error, Sendable, CustomStringConvertible {
  public var path: String
  public var message: String

  public var description: String {
    "cannot keep the changed parameters in \(path): \(message) (the change holds until Plumb "
      + "stops; make the folder writable by Plumb's user, or pass --state-dir)"
  }
}

extension PlumbSetup {
  /// Applies stored parameter values to the settings: the output rate, MAVLink's asked stream
  /// rates (from the defaults), the estimator's time constant; then fits the streams to the
  /// line again (`mavlinkLowering`). Values that do not fit now (an output rate that does not
  /// divide this board's sample rate) are reported and left out.
  public mutating func apply(storedParameters values: [(parameter: PlumbParameter, value: Float)])
    -> [String]
  {
    var warnings: [String] = []
    settings.mavlinkRates = .default
    defer { mavlinkLowering = fitMAVLinkStreams() }
    for (parameter, value) in values {
      switch parameter {
      case .outputRate:
        let hertz = Int(value)
        let sampleRate = Int(settings.sensor.sampleRateHertz.rounded())
        guard hertz >= 1, hertz <= sampleRate, sampleRate % hertz == 0 else {
          warnings.append(
            "stored OUT_RATE_HZ \(hertz) does not divide the \(sampleRate) Hz sample rate; "
              + "the board file's \(settings.outputRateHz) Hz stays")
          continue
        }
        settings.outputRateHz = hertz
      case .attitudeQuaternionRate, .attitudeRate, .imuRate, .systemStatusRate:
        settings.mavlinkRates[parameter.stream!] = value
      case .inclinationTimeConstant:
        settings.estimator.inclination.timeConstantSeconds = Double(value)
      case .rejectsAccelerations:
        settings.estimator.accelerationRejection.isEnabled = value == 1
      case .rejectionLowerThreshold:
        settings.estimator.accelerationRejection.lowerThresholdMetersPerSecondSquared = Double(
          value)
      case .rejectionUpperThreshold:
        settings.estimator.accelerationRejection.upperThresholdMetersPerSecondSquared = Double(
          value)
      case .holdsAttitudeAtRest:
        settings.estimator.holdsAttitudeAtRest = value == 1
      case .tare:
        break
      }
    }
    return warnings
  }

  /// The parameters' values these settings start the loop with, in `PlumbParameter` order (as
  /// `FirmwareLoop.parameterValue(_:)` reports them).
  public func parameterValues() -> [(parameter: PlumbParameter, value: Float)] {
    PlumbParameter.allCases.map { parameter in
      switch parameter {
      case .outputRate: (parameter, Float(settings.outputRateHz))
      case .attitudeQuaternionRate, .attitudeRate, .imuRate, .systemStatusRate:
        (
          parameter,
          Float(
            settings.mavlinkRates.actualHz(
              parameter.stream!, outputRateHz: settings.outputRateHz))
        )
      case .inclinationTimeConstant, .rejectsAccelerations, .rejectionLowerThreshold,
        .rejectionUpperThreshold, .holdsAttitudeAtRest:
        (parameter, Self.tunableValue(parameter, settings.estimator))
      case .tare: (parameter, 0)
      }
    }
  }

  static func tunableValue(_ parameter: PlumbParameter, _ settings: AttitudeEstimator.Settings)
    -> Float
  {
    let tunables = AttitudeEstimator.Tunables(settings: settings)
    switch parameter {
    case .inclinationTimeConstant: return Float(tunables.timeConstantSeconds)
    case .rejectsAccelerations: return tunables.rejectsAccelerations ? 1 : 0
    case .rejectionLowerThreshold:
      return Float(tunables.rejectionLowerThresholdMetersPerSecondSquared)
    case .rejectionUpperThreshold:
      return Float(tunables.rejectionUpperThresholdMetersPerSecondSquared)
    case .holdsAttitudeAtRest: return tunables.holdsAttitudeAtRest ? 1 : 0
    default: return 0
    }
  }

  /// Lowers MAVLink's stream rates to what the serial line carries (`MAVLinkStreamRates.fitted`)
  /// when the stream is MAVLink; returns what was lowered, for the start-up log.
  mutating func fitMAVLinkStreams() -> [MAVLinkStreamRates.Lowering] {
    guard settings.format == .mavlink,
      let (rates, lowered) = settings.mavlinkRates.fitted(
        outputRateHz: settings.outputRateHz, baudRate: settings.baudRate)
    else { return [] }
    settings.mavlinkRates = rates
    return lowered
  }
}
