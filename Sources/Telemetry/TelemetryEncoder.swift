import Geometry

/// MAVLink identity: who the packets say they are from (the board file's `mavlink` section).
public struct MAVLinkIdentity: Hashable, Sendable {
  /// `sysid`, 1 … 255 (MAVLink reserves 0 for broadcast).
  public var systemID: UInt8
  /// `compid`; `MAV_COMP_ID_IMU` = 200 by default.
  public var componentID: UInt8

  public init(systemID: UInt8 = 1, componentID: UInt8 = 200) {
    self.systemID = systemID
    self.componentID = componentID
  }

  /// The heartbeat's `autopilot`: `MAV_AUTOPILOT_INVALID` ("no valid autopilot, e.g. a GCS or
  /// other MAVLink component") beside a flight controller, as MAVLink asks of a component; as
  /// component 1 (`MAV_COMP_ID_AUTOPILOT1`), the system's main component on its own,
  /// `MAV_AUTOPILOT_GENERIC`, which ground stations take for a vehicle to talk to (MAVProxy
  /// 1.8.75 adopts no target whose autopilot is INVALID: FORMATS.md "Ground stations").
  public var autopilot: UInt8 {
    componentID == 1 ? MAVLink.autopilotGeneric : MAVLink.autopilotInvalid
  }
}

/// Turns frames and replies into bytes for one format, keeping the state a format needs
/// (MAVLink's packet sequence and its heartbeat and IMU schedule).
///
/// Allocation-free: every call writes into the caller's buffer, which must hold
/// `maximumFrameBytes` (frames) or `maximumReplyBytes` (replies). The same frames in give the
/// same bytes out.
public struct TelemetryEncoder: Sendable {
  /// The room one frame needs in any format: MAVLink's HEARTBEAT (21) + ATTITUDE_QUATERNION
  /// (44) + ATTITUDE (40) + HIGHRES_IMU (74), and the untruncated SYS_STATUS (10 + 43 + 2: a
  /// packet is written at full length, then cut) = 234. A frame takes at most 222 of them.
  public static let maximumFrameBytes = 234
  /// The most bytes one reply produces in any format (a STATUSTEXT with extensions, 66).
  public static let maximumReplyBytes = 66

  public let format: TelemetryFormat
  public let outputRateHz: Int
  public let mavlinkIdentity: MAVLinkIdentity
  /// MAVLink's stream rates, as asked (the actual ones follow from the output rate).
  public let mavlinkRates: MAVLinkStreamRates
  /// What SYS_STATUS reports; its owner (the loop) keeps it up to date.
  public var health = MAVLinkHealth()
  /// The next MAVLink packet sequence number.
  public private(set) var packetSequence: UInt8 = 0
  /// Frames encoded so far.
  public private(set) var framesEncoded: UInt64 = 0
  private var flagsSinceHeartbeat: TelemetryFlags = []
  private let heartbeatDivider: UInt64
  /// Each stream goes with every n-th frame; 0 when it is off.
  private let attitudeQuaternionDivider: UInt64
  private let attitudeDivider: UInt64
  private let imuDivider: UInt64
  private let systemStatusDivider: UInt64

  /// An encoder for `format` at `outputRateHz` (which, with `mavlinkRates`, sets MAVLink's
  /// schedule; other formats ignore both).
  public init(
    format: TelemetryFormat, outputRateHz: Int = 100, mavlink: MAVLinkIdentity = MAVLinkIdentity(),
    mavlinkRates: MAVLinkStreamRates = .default
  ) {
    self.format = format
    self.outputRateHz = max(1, outputRateHz)
    self.mavlinkIdentity = mavlink
    self.mavlinkRates = mavlinkRates
    let output = self.outputRateHz
    self.heartbeatDivider = UInt64(output)
    func divider(_ stream: MAVLinkStream) -> UInt64 {
      UInt64(mavlinkRates.divider(stream, outputRateHz: output) ?? 0)
    }
    self.attitudeQuaternionDivider = divider(.attitudeQuaternion)
    self.attitudeDivider = divider(.attitude)
    self.imuDivider = divider(.highResIMU)
    self.systemStatusDivider = divider(.systemStatus)
  }

  /// The same stream at another output rate (host command `rate HZ`): MAVLink's schedule
  /// follows the new rate, and its packet sequence carries on, because it numbers the link's
  /// packets: started again, every reader would count the jump as packets lost.
  public func atOutputRate(_ hertz: Int) -> TelemetryEncoder {
    continued(format: format, outputRateHz: hertz, mavlinkRates: mavlinkRates)
  }

  /// The same stream with other MAVLink stream rates (parameters, SET_MESSAGE_INTERVAL): the
  /// packet sequence and the frame count carry on, so the streams that did not change keep
  /// their phase.
  public func withStreamRates(_ rates: MAVLinkStreamRates) -> TelemetryEncoder {
    var encoder = continued(format: format, outputRateHz: outputRateHz, mavlinkRates: rates)
    encoder.framesEncoded = framesEncoded
    encoder.flagsSinceHeartbeat = flagsSinceHeartbeat
    return encoder
  }

  /// The same link in `newFormat` (host command `format F`): `self` when it is the format
  /// already (nothing restarts), otherwise a new encoder that carries MAVLink's packet sequence
  /// on, for the same reason as `atOutputRate`.
  public func inFormat(_ newFormat: TelemetryFormat) -> TelemetryEncoder {
    guard newFormat != format else { return self }
    return continued(format: newFormat, outputRateHz: outputRateHz, mavlinkRates: mavlinkRates)
  }

  private func continued(
    format: TelemetryFormat, outputRateHz: Int, mavlinkRates: MAVLinkStreamRates
  ) -> TelemetryEncoder {
    var encoder = TelemetryEncoder(
      format: format, outputRateHz: outputRateHz, mavlink: mavlinkIdentity,
      mavlinkRates: mavlinkRates)
    encoder.packetSequence = packetSequence
    encoder.health = health
    return encoder
  }

  /// Writes everything `frame` produces; returns the byte count. (Inlined, like
  /// `BinaryFormat.encode`: passing a frame otherwise costs a copy of it.)
  @inline(__always)
  public mutating func encode(_ frame: TelemetryFrame, into output: UnsafeMutableRawBufferPointer)
    -> Int
  {
    precondition(output.count >= Self.maximumFrameBytes, "give the encoder 234 bytes of buffer")
    defer { framesEncoded &+= 1 }
    switch format {
    case .binary:
      return BinaryFormat.encode(frame, into: output)
    case .binaryIMU:
      return BinaryFormat.encodeIMU(frame, into: output)
    case .text:
      return TextFormat.encode(frame, into: output)
    case .mavlink:
      return encodeMAVLink(frame, into: output)
    }
  }

  /// Writes a reply in the stream's format; returns the byte count.
  public mutating func encode(_ reply: HostReply, into output: UnsafeMutableRawBufferPointer)
    -> Int
  {
    precondition(output.count >= Self.maximumReplyBytes, "give the encoder 66 bytes of buffer")
    switch format {
    case .binary, .binaryIMU:
      return BinaryFormat.encode(reply, into: output)
    case .text:
      return TextFormat.encode(reply, into: output)
    case .mavlink:
      return writePacket(.statusText(Self.statusText(reply)), into: output)
    }
  }

  /// A reply as MAVLink's STATUSTEXT: `OK text` at `MAV_SEVERITY_INFO`, `ERR text` at
  /// `MAV_SEVERITY_WARNING`.
  public static func statusText(_ reply: HostReply) -> MAVLinkMessage.StatusText {
    var text = FixedText()
    text.append(reply.status == .ok ? "OK " : "ERR ")
    text.append(reply.text)
    return MAVLinkMessage.StatusText(
      severity: reply.status == .ok ? MAVLink.severityInfo : MAVLink.severityWarning, text: text)
  }

  /// The bytes of one frame, for tools and tests (allocates).
  public mutating func encode(_ frame: TelemetryFrame) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: Self.maximumFrameBytes)
    let count = bytes.withUnsafeMutableBytes { encode(frame, into: $0) }
    bytes.removeSubrange(count...)
    return bytes
  }

  /// The bytes of one reply, for tools and tests (allocates).
  public mutating func encode(_ reply: HostReply) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: Self.maximumReplyBytes)
    let count = bytes.withUnsafeMutableBytes { encode(reply, into: $0) }
    bytes.removeSubrange(count...)
    return bytes
  }

  // MARK: MAVLink

  private mutating func encodeMAVLink(
    _ frame: TelemetryFrame, into output: UnsafeMutableRawBufferPointer
  ) -> Int {
    var count = 0
    flagsSinceHeartbeat.formUnion(frame.flags)
    let n = framesEncoded
    if n % heartbeatDivider == 0 {
      let heartbeat = MAVLinkMessage.Heartbeat(
        type: MAVLink.typeIMU, autopilot: mavlinkIdentity.autopilot,
        systemStatus: Self.systemStatus(flagsSinceHeartbeat))
      count += writePacket(.heartbeat(heartbeat), into: rest(output, count))
      flagsSinceHeartbeat = []
    }
    if Self.due(n, attitudeQuaternionDivider) {
      count += writePacket(
        .attitudeQuaternion(Self.attitudeQuaternion(frame)), into: rest(output, count))
    }
    if Self.due(n, attitudeDivider) {
      count += writePacket(.attitude(Self.attitude(frame)), into: rest(output, count))
    }
    if Self.due(n, imuDivider) {
      count += writePacket(.highResIMU(Self.highResIMU(frame)), into: rest(output, count))
    }
    if Self.due(n, systemStatusDivider) {
      count += writePacket(.systemStatus(health.message(frame.flags)), into: rest(output, count))
    }
    return count
  }

  /// ATTITUDE_QUATERNION for a frame: its attitude in NED/FRD, the body rates in FRD.
  @inline(__always)
  static func attitudeQuaternion(_ frame: TelemetryFrame) -> MAVLinkMessage.AttitudeQuaternion {
    let q = MAVLinkFrames.nedAttitude(fromPlumb: frame.attitude)
    return MAVLinkMessage.AttitudeQuaternion(
      timeBootMilliseconds: timeBootMilliseconds(frame.sampleTimeNanoseconds),
      attitude: MAVLinkQuaternion(w: Float(q.w), x: Float(q.x), y: Float(q.y), z: Float(q.z)),
      rateRadiansPerSecond: vector(MAVLinkFrames.flipYZ(frame.rateRadiansPerSecond)))
  }

  /// HIGHRES_IMU for a frame: the corrected rates and specific force in FRD, the temperature.
  @inline(__always)
  static func highResIMU(_ frame: TelemetryFrame) -> MAVLinkMessage.HighResIMU {
    MAVLinkMessage.HighResIMU(
      timeMicroseconds: frame.sampleTimeNanoseconds < 0
        ? 0 : UInt64(frame.sampleTimeNanoseconds / 1000),
      accelerationMetersPerSecondSquared: vector(
        MAVLinkFrames.flipYZ(frame.specificForceBodyMetersPerSecondSquared)),
      rateRadiansPerSecond: vector(MAVLinkFrames.flipYZ(frame.rateRadiansPerSecond)),
      temperatureCelsius: Float(frame.temperatureCelsius),
      fieldsUpdated: MAVLink.highResIMUFieldsUpdated)
  }

  /// Whether frame `n` carries a stream that goes every `divider`-th frame (0: off). The
  /// usual divider, 1, needs no division.
  @inline(__always)
  private static func due(_ n: UInt64, _ divider: UInt64) -> Bool {
    divider == 1 || (divider != 0 && n % divider == 0)
  }

  /// Writes one packet of Plumb's (a reply to a ground station) with the link's next sequence
  /// number; returns its length. `output` holds `MAVLink.maximumSentPacketCount` bytes.
  public mutating func encode(
    _ message: MAVLinkMessage, into output: UnsafeMutableRawBufferPointer
  ) -> Int {
    writePacket(message, into: output)
  }

  private mutating func writePacket(
    _ message: MAVLinkMessage, into output: UnsafeMutableRawBufferPointer
  ) -> Int {
    let packet = MAVLinkPacket(
      sequence: packetSequence, systemID: mavlinkIdentity.systemID,
      componentID: mavlinkIdentity.componentID, message: message)
    packetSequence &+= 1
    return MAVLink.encode(packet, into: output)
  }

  private func rest(_ output: UnsafeMutableRawBufferPointer, _ offset: Int)
    -> UnsafeMutableRawBufferPointer
  {
    UnsafeMutableRawBufferPointer(rebasing: output[offset...])
  }

  /// `time_boot_ms`: the sample time in whole ms, wrapping at 2³² ms (49.7 days) as MAVLink's
  /// uint32 does; 0 before the clock's epoch.
  public static func timeBootMilliseconds(_ nanoseconds: Int64) -> UInt32 {
    nanoseconds < 0 ? 0 : UInt32(truncatingIfNeeded: nanoseconds / 1_000_000)
  }

  /// The heartbeat's `MAV_STATE` for the flags seen since the last heartbeat.
  public static func systemStatus(_ flags: TelemetryFlags) -> UInt8 {
    if flags.contains(.initialising) { return MAVLink.stateBoot }
    // Two tests, not `isDisjoint(with: [...])`: the set literal is built on the heap (three
    // allocations a heartbeat in an unoptimised build).
    if flags.contains(.degradedTiming) || flags.contains(.i2cRecovery) {
      return MAVLink.stateCritical
    }
    return MAVLink.stateActive
  }

  private static func vector(_ v: Vector3) -> MAVLinkVector {
    MAVLinkVector(x: Float(v.x), y: Float(v.y), z: Float(v.z))
  }
}
