/// Plumb's run-time settings, as MAVLink's parameter protocol and the `set` host command show
/// and change them (FORMATS.md "Parameters"). Each has a MAVLink name (at most 16 characters),
/// a type, units and a range; a change is checked like a host command (range, whole numbers,
/// output rates that divide the sample rate, the link budget) and becomes one, so a recording
/// notes it and a replay makes the same change after the same sample.
///
/// Only settings that may change while the loop runs are here: the hardware (bus, chip, pins,
/// serial line, mounting) stays in the board file, the calibration in its file.
public enum PlumbParameter: Int, CaseIterable, Hashable, Sendable {
  /// `OUT_RATE_HZ`: frames per second, a divisor of the sample rate (the `rate` command).
  case outputRate = 0
  /// `SR_ATTQ_HZ`: ATTITUDE_QUATERNION's rate.
  case attitudeQuaternionRate
  /// `SR_ATT_HZ`: ATTITUDE's rate.
  case attitudeRate
  /// `SR_IMU_HZ`: HIGHRES_IMU's rate.
  case imuRate
  /// `SR_SYS_HZ`: SYS_STATUS's rate.
  case systemStatusRate
  /// `ATT_TAU_S`: the inclination filter's time constant.
  case inclinationTimeConstant
  /// `ATT_REJ_ON`: whether sustained accelerations are rejected (1) or not (0).
  case rejectsAccelerations
  /// `ATT_REJ_LO`: below this sustained acceleration the accelerometer is fully trusted.
  case rejectionLowerThreshold
  /// `ATT_REJ_HI`: above this the inclination filter stops.
  case rejectionUpperThreshold
  /// `ATT_REST_HOLD`: whether the attitude is held at rest (1) or integrated (0).
  case holdsAttitudeAtRest
  /// `ATT_TARE`: write 1 to zero the heading now (the `tare` command); reads 0.
  case tare

  /// How many parameters there are (indices 0 ..< count): PARAM_VALUE's `param_count`.
  public static let count = 11

  /// MAVLink's `MAV_PARAM_TYPE` for a parameter.
  public enum ValueType: UInt8, Hashable, Sendable {
    /// `MAV_PARAM_TYPE_INT32`: whole numbers (sent as a float holding the number, "C cast").
    case int32 = 6
    /// `MAV_PARAM_TYPE_REAL32`.
    case real32 = 9

    public var name: String { self == .int32 ? "INT32" : "REAL32" }
  }

  /// The name ground stations show (`OUT_RATE_HZ`).
  public var name: StaticString {
    switch self {
    case .outputRate: "OUT_RATE_HZ"
    case .attitudeQuaternionRate: "SR_ATTQ_HZ"
    case .attitudeRate: "SR_ATT_HZ"
    case .imuRate: "SR_IMU_HZ"
    case .systemStatusRate: "SR_SYS_HZ"
    case .inclinationTimeConstant: "ATT_TAU_S"
    case .rejectsAccelerations: "ATT_REJ_ON"
    case .rejectionLowerThreshold: "ATT_REJ_LO"
    case .rejectionUpperThreshold: "ATT_REJ_HI"
    case .holdsAttitudeAtRest: "ATT_REST_HOLD"
    case .tare: "ATT_TARE"
    }
  }

  public var valueType: ValueType {
    switch self {
    case .outputRate, .tare, .rejectsAccelerations, .holdsAttitudeAtRest: .int32
    default: .real32
    }
  }

  /// The unit, as MAVLink's parameter metadata writes it ("Hz", "s"; "" for none).
  public var units: String {
    switch self {
    case .outputRate, .attitudeQuaternionRate, .attitudeRate, .imuRate, .systemStatusRate: "Hz"
    case .inclinationTimeConstant: "s"
    case .rejectionLowerThreshold, .rejectionUpperThreshold: "m/s/s"
    case .tare, .rejectsAccelerations, .holdsAttitudeAtRest: ""
    }
  }

  /// The values a change may take (checked further where the parameter says).
  public var range: ClosedRange<Float> {
    switch self {
    case .outputRate: 1...1000
    case .attitudeQuaternionRate, .attitudeRate, .imuRate, .systemStatusRate:
      0...MAVLinkStreamRates.maximumHz
    case .inclinationTimeConstant: 0.5...10
    case .rejectionLowerThreshold: 0.25...5
    case .rejectionUpperThreshold: 0.5...10
    case .tare, .rejectsAccelerations, .holdsAttitudeAtRest: 0...1
    }
  }
  // The estimator's ranges (`AttitudeEstimator.Tunables`, which says why), restated here
  // because Telemetry does not see the estimator; FirmwareTests checks that they agree.

  /// Whether the parameter is kept in the state folder when changed (`ATT_TARE` is an action).
  public var persists: Bool { self != .tare }

  /// One line on what it does, for `plumb params` and FORMATS.md.
  public var summary: String {
    switch self {
    case .outputRate:
      "frames per second, a divisor of the sample rate (the rate command)"
    case .attitudeQuaternionRate:
      "ATTITUDE_QUATERNION per second (0 off; above the output rate: every frame)"
    case .attitudeRate: "ATTITUDE (roll, pitch, yaw) per second (0 off)"
    case .imuRate: "HIGHRES_IMU per second (0 off)"
    case .systemStatusRate: "SYS_STATUS per second (0 off)"
    case .inclinationTimeConstant:
      "the complementary filter's time constant: longer trusts the gyro longer"
    case .rejectsAccelerations: "1: sustained accelerations do not tilt the estimate; 0: off"
    case .rejectionLowerThreshold:
      "below this sustained acceleration the accelerometer is fully trusted"
    case .rejectionUpperThreshold: "above this sustained acceleration the tilt is gyro only"
    case .holdsAttitudeAtRest: "1: the attitude is held still while the board rests; 0: off"
    case .tare: "write 1 to zero the heading now (the tare command); reads 0"
    }
  }

  /// The stream a rate parameter sets.
  public var stream: MAVLinkStream? {
    switch self {
    case .attitudeQuaternionRate: .attitudeQuaternion
    case .attitudeRate: .attitude
    case .imuRate: .highResIMU
    case .systemStatusRate: .systemStatus
    default: nil
    }
  }

  /// The parameter named `name` (ASCII, compared without case; MAVLink's 16-byte ids are
  /// NUL-padded: trailing NULs are ignored).
  public static func named(_ name: UnsafeRawBufferPointer) -> PlumbParameter? {
    var length = name.count
    while length > 0 && name[length - 1] == 0 { length -= 1 }
    // Over the raw values: iterating an array costs an allocation per element in an
    // unoptimised build, and a ground station's PARAM_SET is answered on the loop.
    for raw in 0..<count {
      let parameter = PlumbParameter(rawValue: raw)!
      let matches = parameter.name.withUTF8Buffer { expected -> Bool in
        guard expected.count == length else { return false }
        for i in 0..<length where asciiUppercase(name[i]) != expected[i] { return false }
        return true
      }
      if matches { return parameter }
    }
    return nil
  }

  /// The parameter named `name` (tools and tests).
  public static func named(_ name: String) -> PlumbParameter? {
    var copy = name
    return copy.withUTF8 { named(UnsafeRawBufferPointer($0)) }
  }

  /// `name` as a String.
  public var nameString: String { name.description }

  /// A value as people read it: whole numbers without a fraction (`100`, `0.25`).
  public static func text(_ value: Float) -> String {
    value == value.rounded() && abs(value) < 1e9 ? String(Int(value)) : "\(value)"
  }

  /// Checks a change to `value` against the range, the type and, where they apply, the sample
  /// rate and the link budget in `context`; the command that makes it, or why not.
  public func change(to value: Float, context: HostCommandContext) -> Result<
    HostCommand, HostCommandError
  > {
    guard value.isFinite, range.contains(value) else {
      return .failure(.parameterOutOfRange(self, value: value))
    }
    if valueType == .int32, value != value.rounded() {
      return .failure(.parameterNotWhole(self, value: value))
    }
    switch self {
    case .outputRate:
      return HostCommand.rate(checking: Int(value), context: context)
    case .attitudeQuaternionRate, .attitudeRate, .imuRate, .systemStatusRate:
      if context.format == .mavlink, let stream {
        var rates = context.mavlinkRates
        rates[stream] = value
        if case .failure(let refusal) = LinkBudget.check(
          format: .mavlink, outputRateHz: context.outputRateHz, baudRate: context.baudRate,
          sampleRateHz: context.sampleRateHz, mavlinkRates: rates)
        {
          return .failure(.linkBudget(refusal))
        }
      }
      return .success(.set(self, value))
    case .inclinationTimeConstant, .rejectsAccelerations, .rejectionLowerThreshold,
      .rejectionUpperThreshold, .holdsAttitudeAtRest:
      return .success(.set(self, value))
    case .tare:
      return .success(value == 1 ? .tare : .set(self, value))
    }
  }
}

private func asciiUppercase(_ byte: UInt8) -> UInt8 {
  byte >= 0x61 && byte <= 0x7A ? byte - 0x20 : byte
}

/// Decimal numbers as a person or a recording writes them (`25`, `-0.5`, `2.50`, `+3`, `1e-05`:
/// Swift writes a Float below 10⁻⁴ with an exponent), parsed without allocating: at most 15
/// significant digits. The digits form an exact integer below 2⁵³; scaled by a power of ten up to
/// 10²² (an exact double) it is one correctly rounded operation, the double nearest the decimal;
/// further (a subnormal Float's `1e-45`) two, still well within what a Float's rounding needs.
public enum DecimalNumber {
  private static let powersOfTen: [Double] = [
    1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
  ]

  public static func parse(_ word: UnsafeRawBufferPointer) -> Double? {
    var index = 0
    var negative = false
    if index < word.count, word[index] == UInt8(ascii: "-") || word[index] == UInt8(ascii: "+") {
      negative = word[index] == UInt8(ascii: "-")
      index += 1
    }
    var mantissa: Int64 = 0
    var significant = 0
    var digits = 0
    var scale = 0
    var seenPoint = false
    while index < word.count {
      let byte = word[index]
      if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { break }
      index += 1
      if byte == UInt8(ascii: "."), !seenPoint {
        seenPoint = true
        continue
      }
      guard byte >= 0x30, byte <= 0x39 else { return nil }
      digits += 1
      if seenPoint { scale -= 1 }
      if significant > 0 || byte != 0x30 { significant += 1 }
      guard significant <= 15, scale >= -60 else { return nil }
      mantissa = mantissa * 10 + Int64(byte - 0x30)
    }
    guard digits > 0 else { return nil }
    if index < word.count {
      // An exponent: e, an optional sign, one to three digits.
      index += 1
      var exponentNegative = false
      if index < word.count, word[index] == UInt8(ascii: "-") || word[index] == UInt8(ascii: "+") {
        exponentNegative = word[index] == UInt8(ascii: "-")
        index += 1
      }
      var exponent = 0
      var exponentDigits = 0
      while index < word.count {
        let byte = word[index]
        guard byte >= 0x30, byte <= 0x39, exponentDigits < 3 else { return nil }
        exponent = exponent * 10 + Int(byte - 0x30)
        exponentDigits += 1
        index += 1
      }
      guard exponentDigits > 0 else { return nil }
      scale += exponentNegative ? -exponent : exponent
    }
    var value = Double(mantissa)
    if mantissa != 0 {
      guard scale >= -60, scale <= 60 else { return nil }
      var remaining = scale
      while remaining < 0 {
        let step = min(-remaining, 22)
        value /= powersOfTen[step]
        remaining += step
      }
      while remaining > 0 {
        let step = min(remaining, 22)
        value *= powersOfTen[step]
        remaining -= step
      }
    }
    return negative ? -value : value
  }
}
