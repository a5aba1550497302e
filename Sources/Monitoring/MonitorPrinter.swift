import Geometry
import HardwareAbstraction
import JSON
import Telemetry

/// One line of output, and whether it is a diagnostic (standard error) or data (standard output).
public struct MonitorLine: Hashable, Sendable {
  public var text: String
  /// Goes to standard error: notices and failures in the human styles, so that standard output
  /// holds only frames and statistics.
  public var isDiagnostic: Bool

  public init(_ text: String, isDiagnostic: Bool = false) {
    self.text = text
    self.isDiagnostic = isDiagnostic
  }
}

/// Turns monitor events into lines for a person or a script.
///
/// - `frames` (default): one line per frame (sequence, sample time, roll/pitch/yaw in degrees,
///   flags, temperature, missed samples, latency), replies, heartbeats, a statistics line every
///   `--stats-every`, and a summary at the end.
/// - `quiet`: no frames or heartbeats; replies, statistics, notices and the summary.
/// - `json`: one compact JSON object per line on standard output for everything (`"type"`:
///   `frame`, `reply`, `heartbeat`, `stats`, `notice`, `result`), in SI units with the unit in
///   each key (degrees only in the `…Degrees` keys); a missing or non-finite value is `null`.
public struct MonitorPrinter: Sendable {
  public enum Style: String, Hashable, Sendable {
    case frames, quiet, json
  }

  public var style: Style
  /// The input's name, for the summary.
  public var inputName: String

  public init(style: Style, inputName: String) {
    self.style = style
    self.inputName = inputName
  }

  /// The lines for one event (none for frames in `quiet`).
  public func lines(for event: MonitorEvent) -> [MonitorLine] {
    switch style {
    case .json: return [MonitorLine(Self.json(event).compact())]
    case .frames, .quiet: return humanLines(event)
    }
  }

  /// The lines that close a run: the failures, and in JSON the verdict.
  public func lines(for result: MonitorResult) -> [MonitorLine] {
    if style == .json {
      var members: [(key: String, value: JSONValue)] = [
        ("type", .string("result")), ("ending", .string(Self.name(of: result.ending))),
        ("passed", .bool(result.passed)),
        ("failures", .array(result.failures.map { .string($0.description) })),
      ]
      if case .failed(let error) = result.ending {
        members.append(("error", .string(error.description)))
      }
      return [MonitorLine(JSONValue.object(members).compact())]
    }
    return result.failures.map { MonitorLine("FAILED: \($0)", isDiagnostic: true) }
  }

  // MARK: People

  private func humanLines(_ event: MonitorEvent) -> [MonitorLine] {
    switch event {
    case .frame(let frame):
      return style == .quiet ? [] : [MonitorLine(Self.frameLine(frame))]
    case .heartbeat(let system, let component, let status, _):
      guard style != .quiet else { return [] }
      return [
        MonitorLine(
          "heartbeat  system \(system) component \(component)  state \(Self.stateName(status))")
      ]
    case .mavlinkMessage:
      return []
    case .reply(let reply):
      return [MonitorLine("reply  \(reply)")]
    case .statistics(let statistics, let final):
      return final
        ? Self.summary(statistics, input: inputName).map { MonitorLine($0) }
        : [MonitorLine(Self.statisticsLine(statistics))]
    case .notice(let notice):
      return [MonitorLine("plumb-monitor: " + Self.text(notice), isDiagnostic: true)]
    }
  }

  /// `seq 12  t 1.010000000 s  roll  30.00°  pitch  10.00°  yaw  45.00°  flags 0092 gap,…  31.47 °C  missed 3  latency 1234 µs`.
  public static func frameLine(_ frame: MonitorFrame) -> String {
    var parts: [String] = []
    if frame.format == .mavlink {
      parts.append("pkt " + padLeft(String(frame.sequence), 3))
      parts.append("t " + milliseconds(frame.sampleTimeNanoseconds) + " s")
    } else {
      parts.append("seq " + padLeft(String(frame.sequence), 6))
      parts.append(
        "t "
          + (frame.format == .binary
            ? Timestamp(nanoseconds: frame.sampleTimeNanoseconds).description
            : milliseconds(frame.sampleTimeNanoseconds)) + " s")
    }
    parts.append("roll " + degrees(frame.angles.rollRadians))
    parts.append("pitch " + degrees(frame.angles.pitchRadians))
    parts.append("yaw " + degrees(frame.angles.yawRadians))
    if let flags = frame.flags {
      let names = flagNames(flags)
      parts.append(
        "flags " + hex16(flags.rawValue) + (names.isEmpty ? "" : " " + names.joined(separator: ","))
      )
    }
    if let temperature = frame.temperatureCelsius {
      parts.append(padLeft(fixed(temperature, 2), 6) + " °C")
    }
    if let missed = frame.missedSamples { parts.append("missed \(missed)") }
    if let latency = frame.latencyMicroseconds { parts.append("latency \(latency) µs") }
    if frame.angles.isNearGimbalLock {
      parts.append("(near gimbal lock: roll and yaw ill-defined)")
    }
    return parts.joined(separator: "  ")
  }

  /// One line for `--stats-every`.
  public static func statisticsLine(_ s: MonitorStatistics) -> String {
    var text = "stats  \(s.telemetryFrames) frames"
    if let rate = s.frameRateHz { text += " at \(fixed(rate, 2)) Hz" }
    text += "; lost \(s.link.framesLost) \(s.lossUnit) in \(s.link.sequenceGaps) gaps"
    text += "; CRC errors \(s.link.crcErrors); malformed \(s.link.malformed)"
    text +=
      "; resyncs \(s.link.resyncs); skipped \(s.link.bytesSkipped) of \(s.link.bytesReceived) B"
    if let latency = latencyText(s.latency) { text += "; latency µs " + latency }
    return text
  }

  /// The end-of-run summary, a few aligned lines.
  public static func summary(_ s: MonitorStatistics, input: String) -> [String] {
    let format = s.format.map(MonitorError.formatName) ?? "no format detected"
    var lines = ["--- \(input): \(format) ---"]
    func row(_ label: String, _ value: String) { lines.append(padRight(label, 14) + value) }
    row(
      "frames",
      "\(s.telemetryFrames) telemetry, \(s.link.replies) replies"
        + (s.heartbeats > 0 ? ", \(s.heartbeats) heartbeats" : "")
        + " (\(s.link.frames) valid in all)")
    if let rate = s.frameRateHz, let span = s.sampleTimeSpanSeconds {
      row("rate", "\(fixed(rate, 2)) Hz over \(fixed(span, 3)) s of sample time")
    } else {
      row("rate", "not measured (fewer than two frames)")
    }
    if s.sampleTimeResets > 0 {
      row("", "sample time went backwards \(s.sampleTimeResets) times (board restarted?)")
    }
    row(
      "lost",
      "\(s.link.framesLost) \(s.lossUnit) in \(s.link.sequenceGaps) sequence gaps; "
        + "\(s.link.duplicates) duplicates; \(s.link.outOfOrder) out of order")
    row(
      "errors",
      "CRC \(s.link.crcErrors); malformed \(s.link.malformed); resyncs \(s.link.resyncs)"
        + (s.link.unknownMessageIDs > 0 ? "; unknown MAVLink ids \(s.link.unknownMessageIDs)" : ""))
    row("bytes", "\(s.link.bytesReceived) received; \(s.link.bytesSkipped) skipped")
    row("latency (µs)", latencyText(s.latency) ?? "not carried by this format")
    if s.disconnects > 0 || s.reopens > 0 {
      row("device", "\(s.disconnects) disconnects; \(s.reopens) reopens")
    }
    return lines
  }

  static func latencyText(_ latency: LatencyHistogram) -> String? {
    guard let mean = latency.meanMicroseconds, let p99 = latency.p99Microseconds else {
      return nil
    }
    return
      "min \(latency.minimumMicroseconds) mean \(fixed(mean, 1)) p99 \(p99) "
      + "max \(latency.maximumMicroseconds)"
  }

  static func text(_ notice: MonitorNotice) -> String {
    switch notice {
    case .formatDetected(let format):
      return "detected \(MonitorError.formatName(format)) frames"
    case .sent(let command):
      return "sent \"\(command)\""
    case .noReply(let commands, let waited):
      return
        "no reply to \(commands.map { "\"\($0)\"" }.joined(separator: ", ")) within "
        + "\(fixed(Double(waited) * 1e-9, 1)) s"
    case .disconnected(let input, _):
      return "\(input) disconnected (USB adapter unplugged?)"
    case .waitingForDevice(let input):
      return "waiting for \(input) to come back (Ctrl-C to stop)"
    case .reopenRefused(let error):
      return "\(error.device ?? "the device") is back but cannot be opened yet: \(error.remedy)"
    case .reopened(let input):
      return "\(input) is back; reading again"
    }
  }

  /// The names of the set flags (FORMATS.md §1); reserved bits as `bit11` … `bit15`.
  public static func flagNames(_ flags: TelemetryFlags) -> [String] {
    let known: [(TelemetryFlags, String)] = [
      (.rest, "rest"), (.gap, "gap"), (.clipping, "clipping"),
      (.accelerationRejected, "accelerationRejected"), (.recovering, "recovering"),
      (.degradedTiming, "degradedTiming"), (.i2cRecovery, "i2cRecovery"),
      (.calibrationLoaded, "calibrationLoaded"), (.initialising, "initialising"),
      (.gimbalLockNear, "gimbalLockNear"), (.headingUncertain, "headingUncertain"),
    ]
    var names = known.filter { flags.contains($0.0) }.map(\.1)
    for bit in 11..<16 where flags.rawValue & (1 << UInt16(bit)) != 0 { names.append("bit\(bit)") }
    return names
  }

  /// MAVLink `MAV_STATE` names for the states Plumb sends.
  static func stateName(_ state: UInt8) -> String {
    switch state {
    case 1: "BOOT"
    case 3: "STANDBY"
    case 4: "ACTIVE"
    case 5: "CRITICAL"
    case 6: "EMERGENCY"
    default: "state \(state)"
    }
  }

  static func degrees(_ radians: Double) -> String {
    padLeft(fixed(radians * degreesPerRadian, 2), 7) + "°"
  }

  /// Seconds with 3 decimals from ns, rounded toward −∞ to the ms like the text format (text
  /// and MAVLink carry ms), exact: `1.010`, `-9223372036.855`.
  static func milliseconds(_ nanoseconds: Int64) -> String {
    var milliseconds = nanoseconds / 1_000_000
    if nanoseconds % 1_000_000 < 0 { milliseconds -= 1 }
    let sign = milliseconds < 0 ? "-" : ""
    let magnitude = milliseconds.magnitude
    let fraction = String(magnitude % 1000)
    return sign + "\(magnitude / 1000)." + String(repeating: "0", count: 3 - fraction.count)
      + fraction
  }

  // MARK: Scripts

  static func json(_ event: MonitorEvent) -> JSONValue {
    switch event {
    case .frame(let frame):
      var members: [(key: String, value: JSONValue)] = [
        ("type", .string("frame")), ("format", .string(frame.format.rawValue)),
        (frame.format == .mavlink ? "packetSequence" : "sequence", .integer(Int(frame.sequence))),
        (
          "sampleTimeNanoseconds",
          .number(Double(frame.sampleTimeNanoseconds), text: String(frame.sampleTimeNanoseconds))
        ),
        ("rollDegrees", number(frame.angles.rollRadians * degreesPerRadian)),
        ("pitchDegrees", number(frame.angles.pitchRadians * degreesPerRadian)),
        ("yawDegrees", number(frame.angles.yawRadians * degreesPerRadian)),
        (
          "attitude",
          .array([
            number(frame.attitude.w), number(frame.attitude.x), number(frame.attitude.y),
            number(frame.attitude.z),
          ])
        ),
      ]
      if let flags = frame.flags {
        members.append(("flags", .integer(Int(flags.rawValue))))
        members.append(("flagNames", .array(flagNames(flags).map { .string($0) })))
      }
      if let value = frame.temperatureCelsius {
        members.append(("temperatureCelsius", number(value)))
      }
      if let value = frame.missedSamples { members.append(("missedSamples", .integer(Int(value)))) }
      if let value = frame.latencyMicroseconds {
        members.append(("latencyMicroseconds", .integer(Int(value))))
      }
      if let value = frame.calibrationID {
        members.append(("calibrationId", .string(hex32(value))))
      }
      if let v = frame.gyroBiasRadiansPerSecond {
        members.append(
          ("gyroBiasRadiansPerSecond", .array([number(v.x), number(v.y), number(v.z)])))
      }
      if let v = frame.linearAccelerationMetersPerSecondSquared {
        members.append(
          (
            "linearAccelerationMetersPerSecondSquared",
            .array([number(v.x), number(v.y), number(v.z)])
          ))
      }
      if let v = frame.rateRadiansPerSecond {
        members.append(("rateRadiansPerSecond", .array([number(v.x), number(v.y), number(v.z)])))
      }
      if let v = frame.specificForceMetersPerSecondSquared {
        members.append(
          (
            "specificForceMetersPerSecondSquared",
            .array([number(v.x), number(v.y), number(v.z)])
          ))
      }
      if let u = frame.uncertainty { members.append(("uncertainty", json(u))) }
      return .object(members)
    case .reply(let reply):
      return .object([
        ("type", .string("reply")), ("status", .string(reply.status == .ok ? "OK" : "ERR")),
        ("text", .string(reply.text.description)),
      ])
    case .heartbeat(let system, let component, let status, let m):
      var members: [(key: String, value: JSONValue)] = [
        ("type", .string("heartbeat")), ("systemId", .integer(Int(system))),
        ("componentId", .integer(Int(component))), ("systemStatus", .string(stateName(status))),
      ]
      members.append(("mavType", .integer(Int(m.type))))
      members.append(("autopilot", .integer(Int(m.autopilot))))
      members.append(("baseMode", .integer(Int(m.baseMode))))
      members.append(("customMode", .integer(Int(m.customMode))))
      members.append(("mavlinkVersion", .integer(Int(m.mavlinkVersion))))
      return .object(members)
    case .mavlinkMessage(let packet):
      return mavlinkJSON(packet)
    case .statistics(let s, let final):
      var members: [(key: String, value: JSONValue)] = [
        ("type", .string("stats")), ("final", .bool(final)),
        ("format", s.format.map { .string($0.rawValue) } ?? .null),
        ("telemetryFrames", count(s.telemetryFrames)), ("frames", count(s.link.frames)),
        ("replies", count(s.link.replies)), ("heartbeats", count(s.heartbeats)),
        ("framesLost", count(s.link.framesLost)), ("sequenceGaps", count(s.link.sequenceGaps)),
        ("duplicates", count(s.link.duplicates)), ("outOfOrder", count(s.link.outOfOrder)),
        ("crcErrors", count(s.link.crcErrors)), ("malformed", count(s.link.malformed)),
        ("unknownMessageIds", count(s.link.unknownMessageIDs)),
        ("resyncs", count(s.link.resyncs)), ("bytesReceived", count(s.link.bytesReceived)),
        ("bytesAccepted", count(s.link.bytesAccepted)),
        ("bytesSkipped", count(s.link.bytesSkipped)),
        ("frameRateHz", s.frameRateHz.map(number) ?? .null),
        ("sampleTimeSpanSeconds", s.sampleTimeSpanSeconds.map(number) ?? .null),
        ("sampleTimeResets", count(s.sampleTimeResets)),
        ("disconnects", count(s.disconnects)), ("reopens", count(s.reopens)),
      ]
      if let mean = s.latency.meanMicroseconds, let p99 = s.latency.p99Microseconds {
        members.append(
          (
            "latencyMicroseconds",
            .object([
              ("count", count(s.latency.count)),
              ("min", .integer(Int(s.latency.minimumMicroseconds))), ("mean", number(mean)),
              ("p99", .integer(Int(p99))), ("max", .integer(Int(s.latency.maximumMicroseconds))),
            ])
          ))
      } else {
        members.append(("latencyMicroseconds", .null))
      }
      return .object(members)
    case .notice(let notice):
      var members: [(key: String, value: JSONValue)] = [("type", .string("notice"))]
      switch notice {
      case .formatDetected(let format):
        members += [("notice", .string("formatDetected")), ("format", .string(format.rawValue))]
      case .sent(let command):
        members += [("notice", .string("sent")), ("command", .string(command))]
      case .noReply(let commands, let waited):
        members += [
          ("notice", .string("noReply")), ("commands", .array(commands.map { .string($0) })),
          ("waitedSeconds", number(Double(waited) * 1e-9)),
        ]
      case .disconnected(let input, _):
        members += [("notice", .string("disconnected")), ("input", .string(input))]
      case .waitingForDevice(let input):
        members += [("notice", .string("waitingForDevice")), ("input", .string(input))]
      case .reopenRefused(let error):
        members += [("notice", .string("reopenRefused")), ("error", .string(error.description))]
      case .reopened(let input):
        members += [("notice", .string("reopened")), ("input", .string(input))]
      }
      members.append(("message", .string(text(notice))))
      return .object(members)
    }
  }

  static func number(_ value: Double) -> JSONValue { value.isFinite ? .number(value) : .null }

  /// A MAVLink telemetry message with every field, named as MAVLink's XML (and pymavlink)
  /// name them, in MAVLink's units and frames (NED/FRD).
  static func mavlinkJSON(_ packet: MAVLinkPacket) -> JSONValue {
    func vector(_ v: MAVLinkVector) -> [JSONValue] {
      [number(Double(v.x)), number(Double(v.y)), number(Double(v.z))]
    }
    var members: [(key: String, value: JSONValue)] = [("type", .string("mavlink"))]
    members.append(("systemId", .integer(Int(packet.systemID))))
    members.append(("componentId", .integer(Int(packet.componentID))))
    members.append(("packetSequence", .integer(Int(packet.sequence))))
    switch packet.message {
    case .highResIMU(let m):
      let a = vector(m.accelerationMetersPerSecondSquared)
      let g = vector(m.rateRadiansPerSecond)
      let b = vector(m.magneticFieldGauss)
      members.append(("message", .string("HIGHRES_IMU")))
      members.append(
        ("time_usec", .number(Double(m.timeMicroseconds), text: "\(m.timeMicroseconds)")))
      members += [("xacc", a[0]), ("yacc", a[1]), ("zacc", a[2])]
      members += [("xgyro", g[0]), ("ygyro", g[1]), ("zgyro", g[2])]
      members += [("xmag", b[0]), ("ymag", b[1]), ("zmag", b[2])]
      members.append(("abs_pressure", number(Double(m.absolutePressureHectopascals))))
      members.append(("diff_pressure", number(Double(m.differentialPressureHectopascals))))
      members.append(("pressure_alt", number(Double(m.pressureAltitudeMeters))))
      members.append(("temperature", number(Double(m.temperatureCelsius))))
      members.append(("fields_updated", .integer(Int(m.fieldsUpdated))))
      members.append(("id", .integer(Int(m.id))))
    case .attitude(let m):
      let w = vector(m.rateRadiansPerSecond)
      members.append(("message", .string("ATTITUDE")))
      members.append(("time_boot_ms", .integer(Int(m.timeBootMilliseconds))))
      members.append(("roll", number(Double(m.rollRadians))))
      members.append(("pitch", number(Double(m.pitchRadians))))
      members.append(("yaw", number(Double(m.yawRadians))))
      members += [("rollspeed", w[0]), ("pitchspeed", w[1]), ("yawspeed", w[2])]
    case .systemStatus(let m):
      members.append(("message", .string("SYS_STATUS")))
      members.append(("onboard_control_sensors_present", .integer(Int(m.sensorsPresent))))
      members.append(("onboard_control_sensors_enabled", .integer(Int(m.sensorsEnabled))))
      members.append(("onboard_control_sensors_health", .integer(Int(m.sensorsHealth))))
      members.append(("load", .integer(Int(m.loadPermille))))
      members.append(("voltage_battery", .integer(Int(m.batteryVoltageMillivolts))))
      members.append(("current_battery", .integer(Int(m.batteryCurrentCentiamperes))))
      members.append(("battery_remaining", .integer(Int(m.batteryRemainingPercent))))
      members.append(("drop_rate_comm", .integer(Int(m.dropRateCommunicationCentipercent))))
      members.append(("errors_comm", .integer(Int(m.communicationErrors))))
      members.append(("errors_count1", .integer(Int(m.errorsCount1))))
      members.append(("errors_count2", .integer(Int(m.errorsCount2))))
      members.append(("errors_count3", .integer(Int(m.errorsCount3))))
      members.append(("errors_count4", .integer(Int(m.errorsCount4))))
      members.append(
        ("onboard_control_sensors_present_extended", .integer(Int(m.sensorsPresentExtended))))
      members.append(
        ("onboard_control_sensors_enabled_extended", .integer(Int(m.sensorsEnabledExtended))))
      members.append(
        ("onboard_control_sensors_health_extended", .integer(Int(m.sensorsHealthExtended))))
    default:
      members.append(("message", .string("\(packet.message)")))
    }
    return .object(members)
  }

  /// One standard deviation each (`binary-imu`): null where the frame said unknown.
  static func json(_ u: EstimateUncertainty) -> JSONValue {
    let b = u.gyroBiasRadiansPerSecond
    var members: [(key: String, value: JSONValue)] = []
    members.append(("tiltRadians", number(u.tiltRadians)))
    members.append(("headingRadians", number(u.headingRadians)))
    members.append(("gyroBiasRadiansPerSecond", .array([number(b.x), number(b.y), number(b.z)])))
    members.append(("gyroNoiseRadiansPerSecond", number(u.gyroNoiseRadiansPerSecond)))
    members.append(
      (
        "accelerometerNoiseMetersPerSecondSquared",
        number(u.accelerometerNoiseMetersPerSecondSquared)
      ))
    return .object(members)
  }

  static func count(_ value: UInt64) -> JSONValue { .number(Double(value), text: String(value)) }

  static func name(of ending: MonitorEnding) -> String {
    switch ending {
    case .endOfInput: "endOfInput"
    case .frameLimitReached: "frameLimitReached"
    case .durationElapsed: "durationElapsed"
    case .interrupted: "interrupted"
    case .repliesReceived: "repliesReceived"
    case .noReply: "noReply"
    case .failed: "failed"
    }
  }
}
