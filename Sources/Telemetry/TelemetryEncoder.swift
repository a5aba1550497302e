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
}

/// Which MAVLink messages go with which frame (FORMATS.md "MAVLink v2", "Schedule").
public enum MAVLinkSchedule {
  /// HIGHRES_IMU goes at most this often: at 100 Hz it is every second frame, which keeps a
  /// 100 Hz stream at 70 % of 115200 baud (HIGHRES_IMU at 100 Hz would need 103 %).
  public static let maximumIMURateHz = 50

  /// HIGHRES_IMU goes with every `n`-th frame: ⌈rate / 50⌉.
  public static func imuDivider(outputRateHz: Int) -> Int {
    max(1, (outputRateHz + maximumIMURateHz - 1) / maximumIMURateHz)
  }

  /// HEARTBEAT goes with every `n`-th frame (1 Hz): n = the output rate.
  public static func heartbeatDivider(outputRateHz: Int) -> Int { max(1, outputRateHz) }
}

/// Turns frames and replies into bytes for one format, keeping the state a format needs
/// (MAVLink's packet sequence and its heartbeat and IMU schedule).
///
/// Allocation-free: every call writes into the caller's buffer, which must hold
/// `maximumFrameBytes` (frames) or `maximumReplyBytes` (replies). The same frames in give the
/// same bytes out.
public struct TelemetryEncoder: Sendable {
  /// The most bytes one frame produces in any format: MAVLink's HEARTBEAT (21) +
  /// ATTITUDE_QUATERNION (44) + HIGHRES_IMU (75) = 140.
  public static let maximumFrameBytes = 140
  /// The most bytes one reply produces in any format (a STATUSTEXT with extensions, 66).
  public static let maximumReplyBytes = 66

  public let format: TelemetryFormat
  public let outputRateHz: Int
  public let mavlinkIdentity: MAVLinkIdentity
  /// The next MAVLink packet sequence number.
  public private(set) var packetSequence: UInt8 = 0
  /// Frames encoded so far.
  public private(set) var framesEncoded: UInt64 = 0
  private var flagsSinceHeartbeat: TelemetryFlags = []
  private let imuDivider: Int
  private let heartbeatDivider: Int

  /// An encoder for `format` at `outputRateHz` (which sets MAVLink's heartbeat and IMU
  /// schedule; other formats ignore it).
  public init(
    format: TelemetryFormat, outputRateHz: Int = 100, mavlink: MAVLinkIdentity = MAVLinkIdentity()
  ) {
    self.format = format
    self.outputRateHz = max(1, outputRateHz)
    self.mavlinkIdentity = mavlink
    self.imuDivider = MAVLinkSchedule.imuDivider(outputRateHz: self.outputRateHz)
    self.heartbeatDivider = MAVLinkSchedule.heartbeatDivider(outputRateHz: self.outputRateHz)
  }

  /// The same stream at another output rate (host command `rate HZ`): MAVLink's heartbeat and
  /// IMU schedule follow the new rate, and its packet sequence carries on, because it numbers
  /// the link's packets: started again, every reader would count the jump as packets lost.
  public func atOutputRate(_ hertz: Int) -> TelemetryEncoder {
    var encoder = TelemetryEncoder(format: format, outputRateHz: hertz, mavlink: mavlinkIdentity)
    encoder.packetSequence = packetSequence
    return encoder
  }

  /// The same link in `newFormat` (host command `format F`): `self` when it is the format
  /// already (nothing restarts), otherwise a new encoder that carries MAVLink's packet sequence
  /// on, for the same reason as `atOutputRate`.
  public func inFormat(_ newFormat: TelemetryFormat) -> TelemetryEncoder {
    guard newFormat != format else { return self }
    var encoder = TelemetryEncoder(
      format: newFormat, outputRateHz: outputRateHz, mavlink: mavlinkIdentity)
    encoder.packetSequence = packetSequence
    return encoder
  }

  /// Writes everything `frame` produces; returns the byte count. (Inlined, like
  /// `BinaryFormat.encode`: passing a frame otherwise costs a copy of it.)
  @inline(__always)
  public mutating func encode(_ frame: TelemetryFrame, into output: UnsafeMutableRawBufferPointer)
    -> Int
  {
    precondition(output.count >= Self.maximumFrameBytes, "give the encoder 140 bytes of buffer")
    defer { framesEncoded &+= 1 }
    switch format {
    case .binary:
      return BinaryFormat.encode(frame, into: output)
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
    case .binary:
      return BinaryFormat.encode(reply, into: output)
    case .text:
      return TextFormat.encode(reply, into: output)
    case .mavlink:
      var text = FixedText()
      text.append(reply.status == .ok ? "OK " : "ERR ")
      text.append(reply.text)
      let message = MAVLinkMessage.StatusText(
        severity: reply.status == .ok ? MAVLink.severityInfo : MAVLink.severityWarning, text: text)
      return writePacket(.statusText(message), into: output)
    }
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
    if framesEncoded % UInt64(heartbeatDivider) == 0 {
      let heartbeat = MAVLinkMessage.Heartbeat(
        type: MAVLink.typeIMU, autopilot: MAVLink.autopilotInvalid,
        systemStatus: Self.systemStatus(flagsSinceHeartbeat))
      count += writePacket(.heartbeat(heartbeat), into: rest(output, count))
      flagsSinceHeartbeat = []
    }
    let q = MAVLinkFrames.nedAttitude(fromPlumb: frame.attitude)
    let attitude = MAVLinkMessage.AttitudeQuaternion(
      timeBootMilliseconds: Self.timeBootMilliseconds(frame.sampleTimeNanoseconds),
      attitude: MAVLinkQuaternion(w: Float(q.w), x: Float(q.x), y: Float(q.y), z: Float(q.z)),
      rateRadiansPerSecond: Self.vector(MAVLinkFrames.flipYZ(frame.rateRadiansPerSecond)))
    count += writePacket(.attitudeQuaternion(attitude), into: rest(output, count))
    if framesEncoded % UInt64(imuDivider) == 0 {
      let imu = MAVLinkMessage.HighResIMU(
        timeMicroseconds: frame.sampleTimeNanoseconds < 0
          ? 0 : UInt64(frame.sampleTimeNanoseconds / 1000),
        accelerationMetersPerSecondSquared: Self.vector(
          MAVLinkFrames.flipYZ(frame.specificForceBodyMetersPerSecondSquared)),
        rateRadiansPerSecond: Self.vector(MAVLinkFrames.flipYZ(frame.rateRadiansPerSecond)),
        temperatureCelsius: Float(frame.temperatureCelsius),
        fieldsUpdated: MAVLink.highResIMUFieldsUpdated)
      count += writePacket(.highResIMU(imu), into: rest(output, count))
    }
    return count
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
