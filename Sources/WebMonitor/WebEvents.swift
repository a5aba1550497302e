import Geometry
import JSON
import Monitoring
import Telemetry

/// The event stream's events as Server-Sent Events text (README.md, "The event stream"): each
/// `event: NAME\ndata: JSON\n\n`, the JSON on one line, a missing or non-finite number `null`.
public enum WebEvents {
  /// What opens every stream: the browser reconnects one second after it breaks.
  public static let streamPreamble = "retry: 1000\n\n"
  /// Sent after 5 s with nothing else, so proxies and the browser see the stream alive.
  public static let keepalive = ": keepalive\n\n"

  /// `event: NAME\ndata: JSON\n\n`.
  public static func event(_ name: String, _ data: JSONValue) -> String {
    "event: \(name)\ndata: \(data.compact())\n\n"
  }

  /// `hello`: who is talking and what the page may offer.
  public static func hello(input: String, version: String, commandsEnabled: Bool, maxRateHz: Int)
    -> JSONValue
  {
    .object([
      ("tool", .string("plumb-monitor")), ("version", .string(version)),
      ("input", .string(input)), ("commands", .bool(commandsEnabled)),
      ("maxRateHz", .integer(maxRateHz)),
    ])
  }

  /// `frame`: one decoded frame; `received` the telemetry frames decoded so far.
  public static func frame(_ frame: MonitorFrame, received: UInt64) -> JSONValue {
    let q = frame.attitude
    var members: [(key: String, value: JSONValue)] = [
      ("seq", .integer(Int(frame.sequence))),
      ("t", number(Double(frame.sampleTimeNanoseconds) / 1e9)),
      ("format", .string(frame.format.rawValue)),
      ("q", .array([number(q.w), number(q.x), number(q.y), number(q.z)])),
      ("roll", number(frame.angles.rollRadians * degreesPerRadian)),
      ("pitch", number(frame.angles.pitchRadians * degreesPerRadian)),
      ("yaw", number(frame.angles.yawRadians * degreesPerRadian)),
    ]
    if let flags = frame.flags {
      members.append(("flags", .array(MonitorPrinter.flagNames(flags).map { .string($0) })))
      members.append(("flagBits", .integer(Int(flags.rawValue))))
    } else {
      members.append(("flags", .null))
      members.append(("flagBits", .null))
    }
    members.append(("temperature", frame.temperatureCelsius.map(number) ?? .null))
    members.append(
      ("biasDps", vector(frame.gyroBiasRadiansPerSecond, scale: degreesPerRadian)))
    members.append(
      ("latencyMs", frame.latencyMicroseconds.map { number(Double($0) / 1000) } ?? .null))
    members.append(("missed", frame.missedSamples.map { .integer(Int($0)) } ?? .null))
    members.append(
      ("linearAcceleration", vector(frame.linearAccelerationMetersPerSecondSquared, scale: 1)))
    members.append(("calibrationId", frame.calibrationID.map { .integer(Int($0)) } ?? .null))
    members.append(("sigma", frame.uncertainty.map(sigma) ?? .null))
    members.append(("received", count(received)))
    return .object(members)
  }

  /// The estimator's uncertainties (`binary-imu` frames), 1σ in degrees and °/s.
  static func sigma(_ u: EstimateUncertainty) -> JSONValue {
    var members: [(key: String, value: JSONValue)] = []
    members.append(("tiltDeg", number(u.tiltRadians * degreesPerRadian)))
    members.append(("headingDeg", number(u.headingRadians * degreesPerRadian)))
    members.append(("biasDps", vector(u.gyroBiasRadiansPerSecond, scale: degreesPerRadian)))
    return .object(members)
  }

  /// `stats`: the monitor's latest statistics (`nil`: none given yet, the counters `null`), the
  /// frames the hub has seen, and the server's own counters.
  public static func stats(
    _ s: WebLinkSummary?, frames: UInt64, format: TelemetryFormat?,
    server: WebServerStatistics
  ) -> JSONValue {
    func counter(_ value: (WebLinkSummary) -> UInt64) -> JSONValue {
      s.map { count(value($0)) } ?? .null
    }
    let serverMembers: [(key: String, value: JSONValue)] = [
      ("clients", .integer(server.clients)), ("eventsDropped", count(server.eventsDropped)),
      ("badRequests", count(server.badRequests)),
      ("framesCoalesced", count(server.framesCoalesced)),
    ]
    // Built member by member: one literal of them all is more than Swift 6.0.3's type checker
    // takes in reasonable time.
    var members: [(key: String, value: JSONValue)] = []
    let formatName: JSONValue = (s?.format ?? format).map { .string($0.rawValue) } ?? .null
    members.append(("format", formatName))
    members.append(("frames", count(frames)))
    members.append(("lost", counter(\.framesLost)))
    members.append(("crcErrors", counter(\.crcErrors)))
    members.append(("resyncs", counter(\.resyncs)))
    members.append(("bytesSkipped", counter(\.bytesSkipped)))
    let rate: JSONValue = s?.frameRateHz.map(number) ?? .null
    members.append(("rateHz", rate))
    let mean: JSONValue = s?.latencyMeanMilliseconds.map(number) ?? .null
    members.append(("latencyMeanMs", mean))
    let p99: JSONValue = s?.latencyP99Milliseconds.map(number) ?? .null
    members.append(("latencyP99Ms", p99))
    members.append(("disconnects", counter(\.disconnects)))
    members.append(("reopens", counter(\.reopens)))
    members.append(("heartbeats", counter(\.heartbeats)))
    members.append(("server", .object(serverMembers)))
    return .object(members)
  }

  /// `reply`: a host command's answer.
  public static func reply(_ reply: HostReply) -> JSONValue {
    .object([
      ("status", .string(reply.status == .ok ? "OK" : "ERR")),
      ("text", .string(reply.text.description)),
    ])
  }

  /// `notice`: what happened to the link or the session.
  public static func notice(_ notice: MonitorNotice) -> JSONValue {
    let kind: String
    let text: String
    switch notice {
    case .formatDetected(let format):
      kind = "formatDetected"
      text = "detected \(format.rawValue) frames"
    case .sent(let command):
      kind = "sent"
      text = "sent \"\(command)\""
    case .noReply(let commands, let waited):
      kind = "noReply"
      let seconds = formatJSONNumber((Double(waited) / 1e8).rounded() / 10)
      text = "no reply to \(commands.joined(separator: ", ")) within \(seconds) s"
    case .disconnected(let input, _):
      kind = "disconnected"
      text = "\(input) disconnected (USB adapter unplugged?)"
    case .waitingForDevice(let input):
      kind = "waitingForDevice"
      text = "waiting for \(input) to come back"
    case .reopenRefused(let error):
      kind = "reopenRefused"
      text = "\(error.device ?? "the device") is back but cannot be opened yet: \(error.remedy)"
    case .reopened(let input):
      kind = "reopened"
      text = "\(input) is back; reading again"
    }
    return .object([("kind", .string(kind)), ("text", .string(text))])
  }

  static func number(_ value: Double) -> JSONValue { value.isFinite ? .number(value) : .null }

  static func count(_ value: UInt64) -> JSONValue { .number(Double(value), text: String(value)) }

  static func vector(_ v: Vector3?, scale: Double) -> JSONValue {
    guard let v else { return .null }
    return .array([number(v.x * scale), number(v.y * scale), number(v.z * scale)])
  }
}

/// The numbers of `MonitorStatistics` the `stats` event shows, taken out of it (the latency
/// percentiles computed) when the loop publishes them: the hub keeps these few words, not the
/// statistics, whose latency histogram (72 KiB) the loop would otherwise copy on its next frame
/// (copy on write) every time it published.
public struct WebLinkSummary: Hashable, Sendable {
  public var format: TelemetryFormat?
  public var framesLost: UInt64
  public var crcErrors: UInt64
  public var resyncs: UInt64
  public var bytesSkipped: UInt64
  public var frameRateHz: Double?
  public var latencyMeanMilliseconds: Double?
  public var latencyP99Milliseconds: Double?
  public var disconnects: UInt64
  public var reopens: UInt64
  public var heartbeats: UInt64

  public init(_ s: MonitorStatistics) {
    format = s.format
    framesLost = s.link.framesLost
    crcErrors = s.link.crcErrors
    resyncs = s.link.resyncs
    bytesSkipped = s.link.bytesSkipped
    frameRateHz = s.frameRateHz
    latencyMeanMilliseconds = s.latency.meanMicroseconds.map { $0 / 1000 }
    latencyP99Milliseconds = s.latency.p99Microseconds.map { Double($0) / 1000 }
    disconnects = s.disconnects
    reopens = s.reopens
    heartbeats = s.heartbeats
  }
}
