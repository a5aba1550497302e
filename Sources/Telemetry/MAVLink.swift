import ByteFormats

/// MAVLink v2 framing, the four telemetry messages Plumb streams (FORMATS.md "MAVLink v2") and
/// the messages of a MAVLink component (MAVLinkComponentMessages.swift), written from the MAVLink
/// specification ("Packet Serialization", `common.xml`, `standard.xml`); verified against
/// pymavlink by `tools/scripts/check_mavlink.py` and the vectors of `mavlink_vectors.py`.
///
/// A packet: `STX(0xFD) len incompat compat seq sysid compid msgid(3, LE) payload(len) crc(2, LE)`
/// and, when incompat bit 0 is set, a 13-byte signature. The payload's fields are sorted by type
/// size (largest first, extension fields last in declaration order); trailing zero bytes are cut
/// (at least one byte stays). The CRC is CRC-16/MCRF4XX over everything after STX, then over the
/// message's CRC_EXTRA, a hash of its definition that makes a sender and a receiver with
/// different definitions reject each other's packets.
public enum MAVLink {
  /// The v2 start byte.
  public static let startByte: UInt8 = 0xFD
  /// Bytes before the payload.
  public static let headerCount = 10
  /// Bytes after the payload (CRC), without a signature.
  public static let checksumCount = 2
  /// The signature appended when incompat flag 0x01 is set.
  public static let signatureCount = 13
  /// The longest possible packet: 10 + 255 + 2 + 13.
  public static let maximumPacketCount = 280
  /// `MAVLINK_IFLAG_SIGNED`, the only incompatibility flag v2 defines.
  public static let incompatibilityFlagSigned: UInt8 = 0x01

  /// What a receiver needs to know about a message id to check and decode it.
  public struct MessageInfo: Hashable, Sendable {
    public var id: UInt32
    public var name: StaticString
    /// The CRC_EXTRA byte of the message definition.
    public var crcExtra: UInt8
    /// Payload bytes of the base fields (the v1 length).
    public var baseLength: Int
    /// Payload bytes including extension fields.
    public var maximumLength: Int

    public static func == (a: MessageInfo, b: MessageInfo) -> Bool { a.id == b.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
  }

  /// HEARTBEAT (#0): `custom_mode u32, type u8, autopilot u8, base_mode u8, system_status u8,
  /// mavlink_version u8`.
  public static let heartbeat = MessageInfo(
    id: 0, name: "HEARTBEAT", crcExtra: 50, baseLength: 9, maximumLength: 9)
  /// ATTITUDE_QUATERNION (#31): `time_boot_ms u32, q1..q4 f32, rollspeed, pitchspeed, yawspeed f32`
  /// + extension `repr_offset_q f32[4]`.
  public static let attitudeQuaternion = MessageInfo(
    id: 31, name: "ATTITUDE_QUATERNION", crcExtra: 246, baseLength: 32, maximumLength: 48)
  /// HIGHRES_IMU (#105): `time_usec u64, xacc..zacc, xgyro..zgyro, xmag..zmag, abs_pressure,
  /// diff_pressure, pressure_alt, temperature f32, fields_updated u16` + extension `id u8`.
  public static let highResIMU = MessageInfo(
    id: 105, name: "HIGHRES_IMU", crcExtra: 93, baseLength: 62, maximumLength: 63)
  /// STATUSTEXT (#253): `severity u8, text char[50]` + extensions `id u16, chunk_seq u8`.
  public static let statusText = MessageInfo(
    id: 253, name: "STATUSTEXT", crcExtra: 83, baseLength: 51, maximumLength: 54)

  // The component messages (CRC_EXTRA and lengths printed from pymavlink 2.4.50's
  // `mavparse` of common.xml and standard.xml: `crc_extra`, `wire_min_length`, `wire_length`).

  /// SYS_STATUS (#1): `onboard_control_sensors_present, _enabled, _health u32, load,
  /// voltage_battery u16, current_battery i16, drop_rate_comm, errors_comm, errors_count1..4 u16,
  /// battery_remaining i8` + extensions `onboard_control_sensors_present_extended, _enabled_extended,
  /// _health_extended u32`.
  public static let systemStatus = MessageInfo(
    id: 1, name: "SYS_STATUS", crcExtra: 124, baseLength: 31, maximumLength: 43)
  /// PARAM_REQUEST_READ (#20): `param_index i16, target_system u8, target_component u8,
  /// param_id char[16]`.
  public static let paramRequestRead = MessageInfo(
    id: 20, name: "PARAM_REQUEST_READ", crcExtra: 214, baseLength: 20, maximumLength: 20)
  /// PARAM_REQUEST_LIST (#21): `target_system u8, target_component u8`.
  public static let paramRequestList = MessageInfo(
    id: 21, name: "PARAM_REQUEST_LIST", crcExtra: 159, baseLength: 2, maximumLength: 2)
  /// PARAM_VALUE (#22): `param_value f32, param_count u16, param_index u16, param_id char[16],
  /// param_type u8`.
  public static let paramValue = MessageInfo(
    id: 22, name: "PARAM_VALUE", crcExtra: 220, baseLength: 25, maximumLength: 25)
  /// PARAM_SET (#23): `param_value f32, target_system u8, target_component u8,
  /// param_id char[16], param_type u8`.
  public static let paramSet = MessageInfo(
    id: 23, name: "PARAM_SET", crcExtra: 168, baseLength: 23, maximumLength: 23)
  /// ATTITUDE (#30): `time_boot_ms u32, roll, pitch, yaw, rollspeed, pitchspeed, yawspeed f32`.
  public static let attitude = MessageInfo(
    id: 30, name: "ATTITUDE", crcExtra: 39, baseLength: 28, maximumLength: 28)
  /// REQUEST_DATA_STREAM (#66): `req_message_rate u16, target_system, target_component,
  /// req_stream_id, start_stop u8`.
  public static let requestDataStream = MessageInfo(
    id: 66, name: "REQUEST_DATA_STREAM", crcExtra: 148, baseLength: 6, maximumLength: 6)
  /// COMMAND_INT (#75): `param1..param4 f32, x i32, y i32, z f32, command u16, target_system,
  /// target_component, frame, current, autocontinue u8`.
  public static let commandInt = MessageInfo(
    id: 75, name: "COMMAND_INT", crcExtra: 158, baseLength: 35, maximumLength: 35)
  /// COMMAND_LONG (#76): `param1..param7 f32, command u16, target_system, target_component,
  /// confirmation u8`.
  public static let commandLong = MessageInfo(
    id: 76, name: "COMMAND_LONG", crcExtra: 152, baseLength: 33, maximumLength: 33)
  /// COMMAND_ACK (#77): `command u16, result u8` + extensions `progress u8, result_param2 i32,
  /// target_system u8, target_component u8`.
  public static let commandAck = MessageInfo(
    id: 77, name: "COMMAND_ACK", crcExtra: 143, baseLength: 3, maximumLength: 10)
  /// FILE_TRANSFER_PROTOCOL (#110): `target_network, target_system, target_component u8,
  /// payload u8[251]`.
  public static let fileTransferProtocol = MessageInfo(
    id: 110, name: "FILE_TRANSFER_PROTOCOL", crcExtra: 84, baseLength: 254, maximumLength: 254)
  /// AUTOPILOT_VERSION (#148, standard.xml): `capabilities u64, uid u64, flight_sw_version,
  /// middleware_sw_version, os_sw_version, board_version u32, vendor_id, product_id u16,
  /// flight_custom_version, middleware_custom_version, os_custom_version u8[8]` + extension
  /// `uid2 u8[18]`.
  public static let autopilotVersion = MessageInfo(
    id: 148, name: "AUTOPILOT_VERSION", crcExtra: 178, baseLength: 60, maximumLength: 78)
  /// MESSAGE_INTERVAL (#244): `interval_us i32, message_id u16`.
  public static let messageInterval = MessageInfo(
    id: 244, name: "MESSAGE_INTERVAL", crcExtra: 95, baseLength: 6, maximumLength: 6)

  /// The messages this decoder can check, by id; any other id is skipped.
  public static let knownMessages = [
    heartbeat, systemStatus, paramRequestRead, paramRequestList, paramValue, paramSet, attitude,
    attitudeQuaternion, requestDataStream, commandInt, commandLong, commandAck, highResIMU,
    fileTransferProtocol, autopilotVersion, messageInterval, statusText,
  ]

  /// The table entry for `id`, if Plumb knows it.
  @inlinable
  public static func info(forID id: UInt32) -> MessageInfo? {
    switch id {
    case 0: heartbeat
    case 1: systemStatus
    case 20: paramRequestRead
    case 21: paramRequestList
    case 22: paramValue
    case 23: paramSet
    case 30: attitude
    case 31: attitudeQuaternion
    case 66: requestDataStream
    case 75: commandInt
    case 76: commandLong
    case 77: commandAck
    case 105: highResIMU
    case 110: fileTransferProtocol
    case 148: autopilotVersion
    case 244: messageInterval
    case 253: statusText
    default: nil
    }
  }

  /// The longest packet of Plumb's per-frame telemetry stream (`TelemetryEncoder`): HIGHRES_IMU,
  /// 10 + 63 + 2. What one frame may cost on the link is counted from it.
  public static let maximumPlumbPacketCount = 75

  /// The longest packet Plumb may send at all, counted from every message it encodes at full
  /// length: FILE_TRANSFER_PROTOCOL, 10 + 254 + 2 (a truncated FTP NAK is 28; AUTOPILOT_VERSION
  /// 10 + 78 + 2 = 90). Unsigned: Plumb does not sign.
  public static let maximumSentPacketCount = 266

  // MARK: Constants from common.xml used by Plumb

  /// `MAV_TYPE_IMU`: the heartbeat's vehicle type (Plumb is an attitude/IMU component).
  public static let typeIMU: UInt8 = 40
  /// `MAV_AUTOPILOT_INVALID`: "No valid autopilot, e.g. a GCS or other MAVLink component".
  public static let autopilotInvalid: UInt8 = 8
  /// `MAV_AUTOPILOT_GENERIC`: what Plumb says as component 1, the system's main component.
  public static let autopilotGeneric: UInt8 = 0
  /// `MAV_STATE_BOOT`, `MAV_STATE_ACTIVE`, `MAV_STATE_CRITICAL`.
  public static let stateBoot: UInt8 = 1
  public static let stateActive: UInt8 = 4
  public static let stateCritical: UInt8 = 5
  /// `MAV_SEVERITY_WARNING` (refused commands) and `MAV_SEVERITY_INFO` (answers).
  public static let severityWarning: UInt8 = 4
  public static let severityInfo: UInt8 = 6
  /// `HIGHRES_IMU_UPDATED_XACC … ZGYRO | TEMPERATURE`: the fields Plumb fills.
  public static let highResIMUFieldsUpdated: UInt16 = 0x003F | 0x1000
  /// The `mavlink_version` a v2 heartbeat carries.
  public static let protocolVersion: UInt8 = 3

  // MARK: Encoding

  /// Writes one packet into `output` (room for the untruncated packet: at most
  /// `maximumSentPacketCount` bytes, `maximumPlumbPacketCount` for the telemetry messages);
  /// returns its length.
  public static func encode(_ packet: MAVLinkPacket, into output: UnsafeMutableRawBufferPointer)
    -> Int
  {
    let info = packet.message.info
    precondition(
      output.count >= headerCount + info.maximumLength + checksumCount,
      "a MAVLink packet needs room for its untruncated length")
    // The payload at full length, zero-filled, then cut.
    let payload = UnsafeMutableRawBufferPointer(
      rebasing: output[headerCount..<headerCount + info.maximumLength])
    payload.initializeMemory(as: UInt8.self, repeating: 0)
    var writer = ByteWriter(payload)
    packet.message.writePayload(to: &writer)
    var length = info.maximumLength
    while length > 1 && payload[length - 1] == 0 { length -= 1 }

    var header = ByteWriter(UnsafeMutableRawBufferPointer(rebasing: output[0..<headerCount]))
    header.write(startByte)
    header.write(UInt8(length))
    header.write(UInt8(0))  // incompat flags: unsigned
    header.write(UInt8(0))  // compat flags
    header.write(packet.sequence)
    header.write(packet.systemID)
    header.write(packet.componentID)
    header.write(UInt8(truncatingIfNeeded: info.id))
    header.write(UInt8(truncatingIfNeeded: info.id >> 8))
    header.write(UInt8(truncatingIfNeeded: info.id >> 16))

    var crc = CRC16MCRF4XX()
    crc.update(UnsafeRawBufferPointer(rebasing: output[1..<headerCount + length]))
    crc.update(info.crcExtra)
    var tail = ByteWriter(
      UnsafeMutableRawBufferPointer(
        rebasing: output[headerCount + length..<headerCount + length + 2]))
    tail.write(crc.value)
    return headerCount + length + checksumCount
  }

  // MARK: Decoding

  /// Why bytes starting with STX are not a packet Plumb can accept.
  public enum DecodeError: Error, Hashable, Sendable {
    /// An incompatibility flag other than "signed": the spec says drop the packet.
    case unsupportedIncompatibilityFlags(UInt8)
    /// A message id with no CRC_EXTRA here: it cannot be checked.
    case unknownMessageID(UInt32)
    /// The length exceeds the message's full length.
    case payloadTooLong(id: UInt32, length: Int)
    /// The CRC does not match.
    case crcMismatch(expected: UInt16, received: UInt16)
    /// The message's fields ran past its full (zero-extended) length: the message table and
    /// the reader disagree, which no packet can cause; reported, never a trap.
    case fieldsBeyondPayload(id: UInt32, ByteCursor.ShortInput)
  }

  /// What the header says, once 10 bytes are there.
  struct Header {
    var payloadLength: Int
    var incompatibilityFlags: UInt8
    var sequence: UInt8
    var systemID: UInt8
    var componentID: UInt8
    var messageID: UInt32

    var packetCount: Int {
      headerCount + payloadLength + checksumCount
        + (incompatibilityFlags & incompatibilityFlagSigned != 0 ? signatureCount : 0)
    }
  }

  /// Reads and checks a header (`bytes[0]` is STX, at least 10 bytes).
  static func header(_ bytes: UnsafeRawBufferPointer) -> Result<Header, DecodeError> {
    let header = Header(
      payloadLength: Int(bytes[1]), incompatibilityFlags: bytes[2], sequence: bytes[4],
      systemID: bytes[5], componentID: bytes[6],
      messageID: UInt32(bytes[7]) | UInt32(bytes[8]) << 8 | UInt32(bytes[9]) << 16)
    guard header.incompatibilityFlags & ~incompatibilityFlagSigned == 0 else {
      return .failure(.unsupportedIncompatibilityFlags(header.incompatibilityFlags))
    }
    guard let info = info(forID: header.messageID) else {
      return .failure(.unknownMessageID(header.messageID))
    }
    guard header.payloadLength <= info.maximumLength else {
      return .failure(.payloadTooLong(id: header.messageID, length: header.payloadLength))
    }
    return .success(header)
  }

  /// Decodes one complete packet (`bytes` from STX; its length at least the packet's). The
  /// signature, if any, is skipped, not verified.
  public static func decode(packet bytes: UnsafeRawBufferPointer) -> Result<
    MAVLinkPacket, DecodeError
  > {
    let header: Header
    switch self.header(bytes) {
    case .success(let h): header = h
    case .failure(let error): return .failure(error)
    }
    let info = info(forID: header.messageID)!
    let end = headerCount + header.payloadLength
    var crc = CRC16MCRF4XX()
    crc.update(UnsafeRawBufferPointer(rebasing: bytes[1..<end]))
    crc.update(info.crcExtra)
    let received = UInt16(bytes[end]) | UInt16(bytes[end + 1]) << 8
    guard crc.value == received else {
      return .failure(.crcMismatch(expected: crc.value, received: received))
    }
    let message = withUnsafeTemporaryAllocation(byteCount: info.maximumLength, alignment: 1) {
      full -> Result<MAVLinkMessage, ByteCursor.ShortInput> in
      full.initializeMemory(as: UInt8.self, repeating: 0)
      full.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[headerCount..<end]))
      var reader = ByteCursor(UnsafeRawBufferPointer(full))
      return Result { () throws(ByteCursor.ShortInput) in
        try MAVLinkMessage.read(id: header.messageID, from: &reader)
      }
    }
    switch message {
    case .success(let message):
      return .success(
        MAVLinkPacket(
          sequence: header.sequence, systemID: header.systemID, componentID: header.componentID,
          message: message))
    case .failure(let short):
      return .failure(.fieldsBeyondPayload(id: header.messageID, short))
    }
  }
}

/// One MAVLink packet: header identity plus a message.
public struct MAVLinkPacket: Hashable, Sendable {
  /// The sender's packet counter (wraps at 256).
  public var sequence: UInt8
  public var systemID: UInt8
  public var componentID: UInt8
  public var message: MAVLinkMessage

  public init(sequence: UInt8, systemID: UInt8, componentID: UInt8, message: MAVLinkMessage) {
    self.sequence = sequence
    self.systemID = systemID
    self.componentID = componentID
    self.message = message
  }
}

/// A quaternion as MAVLink sends it: four `float`s, w first.
public struct MAVLinkQuaternion: Hashable, Sendable {
  public var w: Float
  public var x: Float
  public var y: Float
  public var z: Float

  public init(w: Float, x: Float, y: Float, z: Float) {
    self.w = w
    self.x = x
    self.y = y
    self.z = z
  }

  public static let zero = MAVLinkQuaternion(w: 0, x: 0, y: 0, z: 0)
}

/// Three `float`s.
public struct MAVLinkVector: Hashable, Sendable {
  public var x: Float
  public var y: Float
  public var z: Float

  public init(x: Float, y: Float, z: Float) {
    self.x = x
    self.y = y
    self.z = z
  }

  public static let zero = MAVLinkVector(x: 0, y: 0, z: 0)
}

/// The messages Plumb sends and decodes, with MAVLink's field meanings and units. The telemetry
/// messages are below; the component messages are in MAVLinkComponentMessages.swift.
public enum MAVLinkMessage: Hashable, Sendable {
  case heartbeat(Heartbeat)
  case attitudeQuaternion(AttitudeQuaternion)
  case highResIMU(HighResIMU)
  case statusText(StatusText)
  case systemStatus(SystemStatus)
  case paramRequestRead(ParamRequestRead)
  case paramRequestList(ParamRequestList)
  case paramValue(ParamValue)
  case paramSet(ParamSet)
  case attitude(Attitude)
  case requestDataStream(RequestDataStream)
  case commandInt(CommandInt)
  case commandLong(CommandLong)
  case commandAck(CommandAck)
  case fileTransferProtocol(FileTransferProtocol)
  case autopilotVersion(AutopilotVersion)
  case messageInterval(MessageInterval)

  /// HEARTBEAT (#0).
  public struct Heartbeat: Hashable, Sendable {
    /// `MAV_TYPE`.
    public var type: UInt8
    /// `MAV_AUTOPILOT`.
    public var autopilot: UInt8
    /// `MAV_MODE_FLAG` bits.
    public var baseMode: UInt8
    public var customMode: UInt32
    /// `MAV_STATE`.
    public var systemStatus: UInt8
    public var mavlinkVersion: UInt8

    public init(
      type: UInt8, autopilot: UInt8, baseMode: UInt8 = 0, customMode: UInt32 = 0,
      systemStatus: UInt8, mavlinkVersion: UInt8 = MAVLink.protocolVersion
    ) {
      self.type = type
      self.autopilot = autopilot
      self.baseMode = baseMode
      self.customMode = customMode
      self.systemStatus = systemStatus
      self.mavlinkVersion = mavlinkVersion
    }
  }

  /// ATTITUDE_QUATERNION (#31): attitude body FRD → earth NED, rates in body FRD.
  public struct AttitudeQuaternion: Hashable, Sendable {
    /// ms since boot.
    public var timeBootMilliseconds: UInt32
    /// q1 … q4 = w, x, y, z.
    public var attitude: MAVLinkQuaternion
    /// rollspeed, pitchspeed, yawspeed, rad/s.
    public var rateRadiansPerSecond: MAVLinkVector
    /// Extension `repr_offset_q`; all zero = not supported.
    public var representationOffset: MAVLinkQuaternion

    public init(
      timeBootMilliseconds: UInt32, attitude: MAVLinkQuaternion,
      rateRadiansPerSecond: MAVLinkVector, representationOffset: MAVLinkQuaternion = .zero
    ) {
      self.timeBootMilliseconds = timeBootMilliseconds
      self.attitude = attitude
      self.rateRadiansPerSecond = rateRadiansPerSecond
      self.representationOffset = representationOffset
    }
  }

  /// HIGHRES_IMU (#105): readings in body FRD, SI units.
  public struct HighResIMU: Hashable, Sendable {
    /// µs since boot.
    public var timeMicroseconds: UInt64
    /// xacc, yacc, zacc: m/s².
    public var accelerationMetersPerSecondSquared: MAVLinkVector
    /// xgyro, ygyro, zgyro: rad/s.
    public var rateRadiansPerSecond: MAVLinkVector
    /// xmag, ymag, zmag: gauss.
    public var magneticFieldGauss: MAVLinkVector
    /// abs_pressure, hPa.
    public var absolutePressureHectopascals: Float
    /// diff_pressure, hPa.
    public var differentialPressureHectopascals: Float
    /// pressure_alt, m.
    public var pressureAltitudeMeters: Float
    /// temperature, °C.
    public var temperatureCelsius: Float
    /// `HIGHRES_IMU_UPDATED_FLAGS` bits: which fields hold new data.
    public var fieldsUpdated: UInt16
    /// Extension `id`: the IMU instance.
    public var id: UInt8

    public init(
      timeMicroseconds: UInt64, accelerationMetersPerSecondSquared: MAVLinkVector,
      rateRadiansPerSecond: MAVLinkVector, magneticFieldGauss: MAVLinkVector = .zero,
      absolutePressureHectopascals: Float = 0, differentialPressureHectopascals: Float = 0,
      pressureAltitudeMeters: Float = 0, temperatureCelsius: Float, fieldsUpdated: UInt16,
      id: UInt8 = 0
    ) {
      self.timeMicroseconds = timeMicroseconds
      self.accelerationMetersPerSecondSquared = accelerationMetersPerSecondSquared
      self.rateRadiansPerSecond = rateRadiansPerSecond
      self.magneticFieldGauss = magneticFieldGauss
      self.absolutePressureHectopascals = absolutePressureHectopascals
      self.differentialPressureHectopascals = differentialPressureHectopascals
      self.pressureAltitudeMeters = pressureAltitudeMeters
      self.temperatureCelsius = temperatureCelsius
      self.fieldsUpdated = fieldsUpdated
      self.id = id
    }
  }

  /// STATUSTEXT (#253).
  public struct StatusText: Hashable, Sendable {
    /// `MAV_SEVERITY`.
    public var severity: UInt8
    /// Up to 50 characters.
    public var text: FixedText
    /// Extension: non-zero for a message split into chunks.
    public var id: UInt16
    /// Extension: the chunk's index.
    public var chunkSequence: UInt8

    public init(severity: UInt8, text: FixedText, id: UInt16 = 0, chunkSequence: UInt8 = 0) {
      self.severity = severity
      var clipped = FixedText()
      clipped.append(text, limit: 50)
      self.text = clipped
      self.id = id
      self.chunkSequence = chunkSequence
    }
  }

  /// The message's table entry.
  public var info: MAVLink.MessageInfo {
    switch self {
    case .heartbeat: MAVLink.heartbeat
    case .attitudeQuaternion: MAVLink.attitudeQuaternion
    case .highResIMU: MAVLink.highResIMU
    case .statusText: MAVLink.statusText
    case .systemStatus: MAVLink.systemStatus
    case .paramRequestRead: MAVLink.paramRequestRead
    case .paramRequestList: MAVLink.paramRequestList
    case .paramValue: MAVLink.paramValue
    case .paramSet: MAVLink.paramSet
    case .attitude: MAVLink.attitude
    case .requestDataStream: MAVLink.requestDataStream
    case .commandInt: MAVLink.commandInt
    case .commandLong: MAVLink.commandLong
    case .commandAck: MAVLink.commandAck
    case .fileTransferProtocol: MAVLink.fileTransferProtocol
    case .autopilotVersion: MAVLink.autopilotVersion
    case .messageInterval: MAVLink.messageInterval
    }
  }

  /// Writes the full-length payload in wire order.
  func writePayload(to writer: inout ByteWriter) {
    switch self {
    case .heartbeat(let m):
      writer.write(m.customMode)
      writer.write(m.type)
      writer.write(m.autopilot)
      writer.write(m.baseMode)
      writer.write(m.systemStatus)
      writer.write(m.mavlinkVersion)
    case .attitudeQuaternion(let m):
      writer.write(m.timeBootMilliseconds)
      write(m.attitude, to: &writer)
      write(m.rateRadiansPerSecond, to: &writer)
      write(m.representationOffset, to: &writer)
    case .highResIMU(let m):
      writer.write(m.timeMicroseconds)
      write(m.accelerationMetersPerSecondSquared, to: &writer)
      write(m.rateRadiansPerSecond, to: &writer)
      write(m.magneticFieldGauss, to: &writer)
      writer.write(m.absolutePressureHectopascals)
      writer.write(m.differentialPressureHectopascals)
      writer.write(m.pressureAltitudeMeters)
      writer.write(m.temperatureCelsius)
      writer.write(m.fieldsUpdated)
      writer.write(m.id)
    case .statusText(let m):
      writer.write(m.severity)
      let start = writer.count
      writer.write(text: m.text)
      // char[50]: the rest stays zero (NUL-terminated when shorter).
      writer.count = start + 50
      writer.write(m.id)
      writer.write(m.chunkSequence)
    default:
      writeComponentPayload(to: &writer)
    }
  }

  private func write(_ q: MAVLinkQuaternion, to writer: inout ByteWriter) {
    writer.write(q.w)
    writer.write(q.x)
    writer.write(q.y)
    writer.write(q.z)
  }

  private func write(_ v: MAVLinkVector, to writer: inout ByteWriter) {
    writer.write(v.x)
    writer.write(v.y)
    writer.write(v.z)
  }

  /// Reads a full-length (zero-extended) payload of a known id.
  static func read(id: UInt32, from reader: inout ByteCursor) throws(ByteCursor.ShortInput)
    -> MAVLinkMessage
  {
    switch id {
    case 0:
      let customMode = try reader.readU32()
      let type = try reader.readU8()
      let autopilot = try reader.readU8()
      let baseMode = try reader.readU8()
      let systemStatus = try reader.readU8()
      let mavlinkVersion = try reader.readU8()
      return .heartbeat(
        Heartbeat(
          type: type, autopilot: autopilot, baseMode: baseMode, customMode: customMode,
          systemStatus: systemStatus, mavlinkVersion: mavlinkVersion))
    case 31:
      let time = try reader.readU32()
      let attitude = try readQuaternion(&reader)
      let rate = try readVector(&reader)
      let offset = try readQuaternion(&reader)
      return .attitudeQuaternion(
        AttitudeQuaternion(
          timeBootMilliseconds: time, attitude: attitude, rateRadiansPerSecond: rate,
          representationOffset: offset))
    case 105:
      let time = try reader.readU64()
      let acceleration = try readVector(&reader)
      let rate = try readVector(&reader)
      let magneticField = try readVector(&reader)
      let absolutePressure = try reader.readF32()
      let differentialPressure = try reader.readF32()
      let pressureAltitude = try reader.readF32()
      let temperature = try reader.readF32()
      let fieldsUpdated = try reader.readU16()
      let id = try reader.readU8()
      return .highResIMU(
        HighResIMU(
          timeMicroseconds: time, accelerationMetersPerSecondSquared: acceleration,
          rateRadiansPerSecond: rate, magneticFieldGauss: magneticField,
          absolutePressureHectopascals: absolutePressure,
          differentialPressureHectopascals: differentialPressure,
          pressureAltitudeMeters: pressureAltitude, temperatureCelsius: temperature,
          fieldsUpdated: fieldsUpdated, id: id))
    case 253:
      let severity = try reader.readU8()
      // 50 bytes of text, NUL-terminated unless it fills them.
      var text = FixedText()
      for byte in try reader.readSlice(50) {
        if byte == 0 { break }
        text.append(byte)
      }
      let id = try reader.readU16()
      let chunkSequence = try reader.readU8()
      return .statusText(
        StatusText(severity: severity, text: text, id: id, chunkSequence: chunkSequence))
    default:
      // An id in `MAVLink.info(forID:)` has a reader; were one missing, the table and the
      // readers would disagree: reported as `fieldsBeyondPayload`, never a trap.
      guard let message = try readComponentMessage(id: id, from: &reader) else {
        throw reader.shortInput(needing: Int.max)
      }
      return message
    }
  }

  private static func readQuaternion(_ reader: inout ByteCursor) throws(ByteCursor.ShortInput)
    -> MAVLinkQuaternion
  {
    let w = try reader.readF32()
    let x = try reader.readF32()
    let y = try reader.readF32()
    let z = try reader.readF32()
    return MAVLinkQuaternion(w: w, x: x, y: y, z: z)
  }

  private static func readVector(_ reader: inout ByteCursor) throws(ByteCursor.ShortInput)
    -> MAVLinkVector
  {
    let x = try reader.readF32()
    let y = try reader.readF32()
    let z = try reader.readF32()
    return MAVLinkVector(x: x, y: y, z: z)
  }
}
