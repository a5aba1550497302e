import ByteFormats

// The messages that make Plumb a MAVLink component (common.xml and standard.xml): what it sends
// besides its telemetry (ATTITUDE, SYS_STATUS, AUTOPILOT_VERSION, COMMAND_ACK, PARAM_VALUE,
// MESSAGE_INTERVAL, FTP NAKs) and what a ground station sends it (commands, parameter protocol,
// data stream requests, FTP). Field names follow common.xml in Swift's spelling with the unit
// added; the wire order (largest type first, extensions last) is in `writePayload` and `read`.

// MARK: - Constants from common.xml

extension MAVLink {
  /// `MAV_CMD` ids Plumb answers (common.xml; each checked against pymavlink 2.4.50's
  /// `mavlink.MAV_CMD_…`). A COMMAND_LONG or COMMAND_INT carries one in `command`; the
  /// COMMAND_ACK answering it repeats it.
  public enum Command {
    /// `MAV_CMD_PREFLIGHT_CALIBRATION`: param1 gyro, param5 accelerometer (1 = calibrate).
    public static let preflightCalibration: UInt16 = 241
    /// `MAV_CMD_GET_MESSAGE_INTERVAL`: param1 message id; answered with MESSAGE_INTERVAL.
    public static let getMessageInterval: UInt16 = 510
    /// `MAV_CMD_SET_MESSAGE_INTERVAL`: param1 message id, param2 interval µs (−1 off, 0 default).
    public static let setMessageInterval: UInt16 = 511
    /// `MAV_CMD_REQUEST_MESSAGE`: param1 message id; the message is sent once.
    public static let requestMessage: UInt16 = 512
    /// `MAV_CMD_REQUEST_PROTOCOL_VERSION` (deprecated for REQUEST_MESSAGE, still sent by
    /// ground stations).
    public static let requestProtocolVersion: UInt16 = 519
    /// `MAV_CMD_REQUEST_AUTOPILOT_CAPABILITIES`: answered with AUTOPILOT_VERSION (deprecated
    /// for REQUEST_MESSAGE, still sent by ground stations).
    public static let requestAutopilotCapabilities: UInt16 = 520
    /// `MAV_CMD_FIXED_MAG_CAL_YAW`: magnetometer calibration from a known yaw (Plumb has no
    /// magnetometer: it refuses it).
    public static let fixedMagCalYaw: UInt16 = 42006
  }

  /// `MAV_RESULT`: COMMAND_ACK's `result`. (Not named `Result`, which would hide Swift's.)
  public enum CommandResult {
    /// `MAV_RESULT_ACCEPTED`: valid, supported and executed.
    public static let accepted: UInt8 = 0
    /// `MAV_RESULT_TEMPORARILY_REJECTED`: valid, but not now (retrying may work).
    public static let temporarilyRejected: UInt8 = 1
    /// `MAV_RESULT_DENIED`: invalid parameters (retrying the same will not work).
    public static let denied: UInt8 = 2
    /// `MAV_RESULT_UNSUPPORTED`: the command is not supported (unknown to the component).
    public static let unsupported: UInt8 = 3
    /// `MAV_RESULT_FAILED`: valid and supported, but it failed.
    public static let failed: UInt8 = 4
    /// `MAV_RESULT_IN_PROGRESS`: running; `progress` says how far (0–100 %, 255 unknown).
    public static let inProgress: UInt8 = 5
  }

  /// MAVLink FTP (mavlink.io "File Transfer Protocol"; pymavlink's `MAV_FTP_OPCODE_…`,
  /// `MAV_FTP_ERR_…`): what Plumb needs to refuse every request.
  public enum FTP {
    /// `MAV_FTP_OPCODE_ACK`.
    public static let opcodeACK: UInt8 = 128
    /// `MAV_FTP_OPCODE_NAK`: `data[0]` is the error code, `size` 1 (2 for `FailErrno`).
    public static let opcodeNAK: UInt8 = 129
    /// `MAV_FTP_ERR_UNKNOWNCOMMAND`: "Unknown command / opcode", Plumb's answer to any request
    /// (it has no file system to offer).
    public static let errorUnknownCommand: UInt8 = 7
  }

  /// `MAV_PARAM_TYPE_INT32`: PARAM_VALUE/PARAM_SET `param_type` of a 32-bit signed integer.
  public static let parameterTypeInt32: UInt8 = 6
  /// `MAV_PARAM_TYPE_REAL32`: a 32-bit float.
  public static let parameterTypeReal32: UInt8 = 9
  /// `MAV_SEVERITY_ERROR`: STATUSTEXT severity of an error ("indicates an error in secondary or
  /// redundant systems").
  public static let severityError: UInt8 = 3
  /// `MAV_SYS_STATUS_SENSOR_3D_GYRO`: SYS_STATUS sensor bit of the gyroscope.
  public static let sensor3DGyro: UInt32 = 1
  /// `MAV_SYS_STATUS_SENSOR_3D_ACCEL`: SYS_STATUS sensor bit of the accelerometer.
  public static let sensor3DAccel: UInt32 = 2
  /// `MAV_PROTOCOL_CAPABILITY_PARAM_FLOAT`: AUTOPILOT_VERSION capability, the parameter protocol
  /// with `param_value` as a float.
  public static let protocolCapabilityParamFloat: UInt64 = 2
  /// `MAV_PROTOCOL_CAPABILITY_COMMAND_INT`: COMMAND_INT is understood.
  public static let protocolCapabilityCommandInt: UInt64 = 8
  /// `MAV_PROTOCOL_CAPABILITY_PARAM_ENCODE_C_CAST`: parameter values travel as the float of
  /// their value (an INT32 of 25 as 25.0), not as their bytes.
  public static let protocolCapabilityParamEncodeCCast: UInt64 = 131072
  /// `MAV_PROTOCOL_CAPABILITY_MAVLINK2`: the component speaks MAVLink 2. (Not named
  /// `…MAVLink2`: Swift 6.0.3's swift-format takes the "Link" for the type's name repeated.)
  public static let protocolCapabilityVersion2: UInt64 = 8192
}

// MARK: - The messages

extension MAVLinkMessage {
  /// SYS_STATUS (#1): the component's health, sent at 1 Hz beside HEARTBEAT. The sensor fields
  /// are `MAV_SYS_STATUS_SENSOR` bits (`MAVLink.sensor3DGyro`, `.sensor3DAccel`, …).
  public struct SystemStatus: Hashable, Sendable {
    /// `onboard_control_sensors_present`: sensors fitted.
    public var sensorsPresent: UInt32
    /// `onboard_control_sensors_enabled`: sensors in use.
    public var sensorsEnabled: UInt32
    /// `onboard_control_sensors_health`: sensors healthy (a set bit is "healthy").
    public var sensorsHealth: UInt32
    /// `load`: main-loop time used, in 0.1 % (0 … 1000).
    public var loadPermille: UInt16
    /// `voltage_battery`, mV; `UInt16.max` = not sent.
    public var batteryVoltageMillivolts: UInt16
    /// `current_battery`, 10 mA; −1 = not sent.
    public var batteryCurrentCentiamperes: Int16
    /// `battery_remaining`, %; −1 = not sent.
    public var batteryRemainingPercent: Int8
    /// `drop_rate_comm`: packets dropped on the link, in 0.01 % (0 … 10000).
    public var dropRateCommunicationCentipercent: UInt16
    /// `errors_comm`: communication errors (bad packets received).
    public var communicationErrors: UInt16
    /// `errors_count1` … `errors_count4`: autopilot-specific error counters.
    public var errorsCount1: UInt16
    public var errorsCount2: UInt16
    public var errorsCount3: UInt16
    public var errorsCount4: UInt16
    /// Extensions `onboard_control_sensors_present_extended`, `…_enabled_extended`,
    /// `…_health_extended`: `MAV_SYS_STATUS_SENSOR_EXTENDED` bits.
    public var sensorsPresentExtended: UInt32
    public var sensorsEnabledExtended: UInt32
    public var sensorsHealthExtended: UInt32

    public init(
      sensorsPresent: UInt32, sensorsEnabled: UInt32, sensorsHealth: UInt32,
      loadPermille: UInt16 = 0, batteryVoltageMillivolts: UInt16 = .max,
      batteryCurrentCentiamperes: Int16 = -1, batteryRemainingPercent: Int8 = -1,
      dropRateCommunicationCentipercent: UInt16 = 0, communicationErrors: UInt16 = 0,
      errorsCount1: UInt16 = 0, errorsCount2: UInt16 = 0, errorsCount3: UInt16 = 0,
      errorsCount4: UInt16 = 0, sensorsPresentExtended: UInt32 = 0,
      sensorsEnabledExtended: UInt32 = 0, sensorsHealthExtended: UInt32 = 0
    ) {
      self.sensorsPresent = sensorsPresent
      self.sensorsEnabled = sensorsEnabled
      self.sensorsHealth = sensorsHealth
      self.loadPermille = loadPermille
      self.batteryVoltageMillivolts = batteryVoltageMillivolts
      self.batteryCurrentCentiamperes = batteryCurrentCentiamperes
      self.batteryRemainingPercent = batteryRemainingPercent
      self.dropRateCommunicationCentipercent = dropRateCommunicationCentipercent
      self.communicationErrors = communicationErrors
      self.errorsCount1 = errorsCount1
      self.errorsCount2 = errorsCount2
      self.errorsCount3 = errorsCount3
      self.errorsCount4 = errorsCount4
      self.sensorsPresentExtended = sensorsPresentExtended
      self.sensorsEnabledExtended = sensorsEnabledExtended
      self.sensorsHealthExtended = sensorsHealthExtended
    }
  }

  /// PARAM_REQUEST_READ (#20): "send me this parameter", by name or (`parameterIndex` ≥ 0) by
  /// index; answered with PARAM_VALUE.
  public struct ParamRequestRead: Hashable, Sendable {
    public var targetSystem: UInt8
    public var targetComponent: UInt8
    /// `param_id`: the name (ignored when `parameterIndex` is not −1).
    public var parameterID: MAVLinkParameterID
    /// `param_index`: −1 = use `parameterID`.
    public var parameterIndex: Int16

    public init(
      targetSystem: UInt8, targetComponent: UInt8, parameterID: MAVLinkParameterID = .init(),
      parameterIndex: Int16 = -1
    ) {
      self.targetSystem = targetSystem
      self.targetComponent = targetComponent
      self.parameterID = parameterID
      self.parameterIndex = parameterIndex
    }
  }

  /// PARAM_REQUEST_LIST (#21): "send me all parameters"; answered with one PARAM_VALUE each.
  public struct ParamRequestList: Hashable, Sendable {
    public var targetSystem: UInt8
    public var targetComponent: UInt8

    public init(targetSystem: UInt8, targetComponent: UInt8) {
      self.targetSystem = targetSystem
      self.targetComponent = targetComponent
    }
  }

  /// PARAM_VALUE (#22): one parameter, its place in the list and the list's length; sent on
  /// request and after every PARAM_SET (the value in force, changed or not).
  public struct ParamValue: Hashable, Sendable {
    /// `param_id`.
    public var parameterID: MAVLinkParameterID
    /// `param_value`: always a float on the wire. How an integer parameter is carried in it is
    /// the sender's choice, advertised in AUTOPILOT_VERSION: its bytes reinterpreted
    /// (`MAV_PROTOCOL_CAPABILITY_PARAM_ENCODE_BYTEWISE`) or converted, exact up to 2²⁴
    /// (`MAV_PROTOCOL_CAPABILITY_PARAM_ENCODE_C_CAST`).
    public var value: Float
    /// `param_type` (`MAV_PARAM_TYPE`: `MAVLink.parameterTypeInt32`, `.parameterTypeReal32`).
    public var type: UInt8
    /// `param_count`: parameters the component has.
    public var count: UInt16
    /// `param_index`: this one's index (0 ..< count).
    public var index: UInt16

    public init(
      parameterID: MAVLinkParameterID, value: Float, type: UInt8, count: UInt16, index: UInt16
    ) {
      self.parameterID = parameterID
      self.value = value
      self.type = type
      self.count = count
      self.index = index
    }
  }

  /// PARAM_SET (#23): "set this parameter"; answered with PARAM_VALUE.
  public struct ParamSet: Hashable, Sendable {
    public var targetSystem: UInt8
    public var targetComponent: UInt8
    /// `param_id`.
    public var parameterID: MAVLinkParameterID
    /// `param_value` (see `ParamValue.value`).
    public var value: Float
    /// `param_type` (`MAV_PARAM_TYPE`).
    public var type: UInt8

    public init(
      targetSystem: UInt8, targetComponent: UInt8, parameterID: MAVLinkParameterID,
      value: Float, type: UInt8
    ) {
      self.targetSystem = targetSystem
      self.targetComponent = targetComponent
      self.parameterID = parameterID
      self.value = value
      self.type = type
    }
  }

  /// ATTITUDE (#30): Euler angles of body FRD in earth NED (aerospace order: yaw about z, then
  /// pitch about y, then roll about x) and the body rates.
  public struct Attitude: Hashable, Sendable {
    /// `time_boot_ms`: ms since boot.
    public var timeBootMilliseconds: UInt32
    /// `roll`, rad (−π … π).
    public var rollRadians: Float
    /// `pitch`, rad (−π/2 … π/2).
    public var pitchRadians: Float
    /// `yaw`, rad (−π … π).
    public var yawRadians: Float
    /// `rollspeed`, `pitchspeed`, `yawspeed`: rad/s about body x, y, z.
    public var rateRadiansPerSecond: MAVLinkVector

    public init(
      timeBootMilliseconds: UInt32, rollRadians: Float, pitchRadians: Float, yawRadians: Float,
      rateRadiansPerSecond: MAVLinkVector = .zero
    ) {
      self.timeBootMilliseconds = timeBootMilliseconds
      self.rollRadians = rollRadians
      self.pitchRadians = pitchRadians
      self.yawRadians = yawRadians
      self.rateRadiansPerSecond = rateRadiansPerSecond
    }
  }

  /// REQUEST_DATA_STREAM (#66): the old way to ask for a group of messages at a rate
  /// (`MAV_DATA_STREAM`); superseded by `MAV_CMD_SET_MESSAGE_INTERVAL`.
  public struct RequestDataStream: Hashable, Sendable {
    public var targetSystem: UInt8
    public var targetComponent: UInt8
    /// `req_stream_id` (`MAV_DATA_STREAM`; 0 = all).
    public var streamID: UInt8
    /// `req_message_rate`, Hz.
    public var rateHertz: UInt16
    /// `start_stop`: 1 start, 0 stop.
    public var startStop: UInt8

    public init(
      targetSystem: UInt8, targetComponent: UInt8, streamID: UInt8, rateHertz: UInt16,
      startStop: UInt8
    ) {
      self.targetSystem = targetSystem
      self.targetComponent = targetComponent
      self.streamID = streamID
      self.rateHertz = rateHertz
      self.startStop = startStop
    }
  }

  /// COMMAND_INT (#75): a `MAV_CMD` with positional parameters as scaled integers; answered
  /// with COMMAND_ACK.
  public struct CommandInt: Hashable, Sendable {
    public var targetSystem: UInt8
    public var targetComponent: UInt8
    /// `frame` (`MAV_FRAME`) of `x`, `y`, `z`.
    public var frame: UInt8
    /// `command` (`MAV_CMD`, e.g. `MAVLink.Command.setMessageInterval`).
    public var command: UInt16
    /// `current`, `autocontinue`: unused outside missions (0).
    public var current: UInt8
    public var autocontinue: UInt8
    /// `param1` … `param4`: as the command defines them.
    public var param1: Float
    public var param2: Float
    public var param3: Float
    public var param4: Float
    /// `x`, `y`: param5 and param6 as integers (latitude, longitude in degE7 for global frames).
    public var x: Int32
    public var y: Int32
    /// `z`: param7.
    public var z: Float

    public init(
      targetSystem: UInt8, targetComponent: UInt8, frame: UInt8 = 0, command: UInt16,
      current: UInt8 = 0, autocontinue: UInt8 = 0, param1: Float = 0, param2: Float = 0,
      param3: Float = 0, param4: Float = 0, x: Int32 = 0, y: Int32 = 0, z: Float = 0
    ) {
      self.targetSystem = targetSystem
      self.targetComponent = targetComponent
      self.frame = frame
      self.command = command
      self.current = current
      self.autocontinue = autocontinue
      self.param1 = param1
      self.param2 = param2
      self.param3 = param3
      self.param4 = param4
      self.x = x
      self.y = y
      self.z = z
    }
  }

  /// COMMAND_LONG (#76): a `MAV_CMD` with seven float parameters; answered with COMMAND_ACK.
  public struct CommandLong: Hashable, Sendable {
    public var targetSystem: UInt8
    public var targetComponent: UInt8
    /// `command` (`MAV_CMD`, e.g. `MAVLink.Command.requestMessage`).
    public var command: UInt16
    /// `confirmation`: 0 the first time, +1 on each retransmission.
    public var confirmation: UInt8
    /// `param1` … `param7`: as the command defines them.
    public var param1: Float
    public var param2: Float
    public var param3: Float
    public var param4: Float
    public var param5: Float
    public var param6: Float
    public var param7: Float

    public init(
      targetSystem: UInt8, targetComponent: UInt8, command: UInt16, confirmation: UInt8 = 0,
      param1: Float = 0, param2: Float = 0, param3: Float = 0, param4: Float = 0,
      param5: Float = 0, param6: Float = 0, param7: Float = 0
    ) {
      self.targetSystem = targetSystem
      self.targetComponent = targetComponent
      self.command = command
      self.confirmation = confirmation
      self.param1 = param1
      self.param2 = param2
      self.param3 = param3
      self.param4 = param4
      self.param5 = param5
      self.param6 = param6
      self.param7 = param7
    }
  }

  /// COMMAND_ACK (#77): the answer to a COMMAND_LONG or COMMAND_INT.
  public struct CommandAck: Hashable, Sendable {
    /// `command`: the `MAV_CMD` answered.
    public var command: UInt16
    /// `result` (`MAV_RESULT`: `MAVLink.CommandResult`).
    public var result: UInt8
    /// Extension `progress`: with `inProgress`, percent done (255 unknown); with a refusal, an
    /// optional reason.
    public var progress: UInt8
    /// Extension `result_param2`: command-specific detail (e.g. the failing parameter).
    public var resultParameter2: Int32
    /// Extensions `target_system`, `target_component`: who sent the command.
    public var targetSystem: UInt8
    public var targetComponent: UInt8

    public init(
      command: UInt16, result: UInt8, progress: UInt8 = 0, resultParameter2: Int32 = 0,
      targetSystem: UInt8 = 0, targetComponent: UInt8 = 0
    ) {
      self.command = command
      self.result = result
      self.progress = progress
      self.resultParameter2 = resultParameter2
      self.targetSystem = targetSystem
      self.targetComponent = targetComponent
    }
  }

  /// FILE_TRANSFER_PROTOCOL (#110): one MAVLink FTP operation. The 251-byte payload is held
  /// whole, inline (`MAVLinkFTPPayload`), so any request decodes and encodes back unchanged.
  public struct FileTransferProtocol: Hashable, Sendable {
    /// `target_network`: 0 = broadcast (the only network Plumb has).
    public var targetNetwork: UInt8
    public var targetSystem: UInt8
    public var targetComponent: UInt8
    /// `payload`: the FTP header and data.
    public var payload: MAVLinkFTPPayload

    public init(
      targetNetwork: UInt8 = 0, targetSystem: UInt8, targetComponent: UInt8,
      payload: MAVLinkFTPPayload
    ) {
      self.targetNetwork = targetNetwork
      self.targetSystem = targetSystem
      self.targetComponent = targetComponent
      self.payload = payload
    }

    /// The NAK that answers this request (mavlink.io FTP, "NAK"): opcode `MAVLink.FTP.opcodeNAK`,
    /// `req_opcode` the request's opcode, `seq_number` the request's + 1 (wrapping), the
    /// request's session, `size` 1, `data[0]` = `error`; `burst_complete`, `offset` and the rest
    /// of `data` zero; addressed to the request's sender (`systemID`, `componentID`: the sending
    /// packet's header) on network 0.
    public func negativeAcknowledgement(
      toSystem systemID: UInt8, component componentID: UInt8,
      error: UInt8 = MAVLink.FTP.errorUnknownCommand
    ) -> FileTransferProtocol {
      var reply = MAVLinkFTPPayload(
        sequence: payload.sequence &+ 1, session: payload.session, opcode: MAVLink.FTP.opcodeNAK,
        size: 1, requestOpcode: payload.opcode)
      reply[data: 0] = error
      return FileTransferProtocol(
        targetNetwork: 0, targetSystem: systemID, targetComponent: componentID, payload: reply)
    }
  }

  /// AUTOPILOT_VERSION (#148, standard.xml): what the component is and can do; sent on
  /// `MAV_CMD_REQUEST_MESSAGE` (148) or `MAV_CMD_REQUEST_AUTOPILOT_CAPABILITIES`.
  public struct AutopilotVersion: Hashable, Sendable {
    /// `capabilities`: `MAV_PROTOCOL_CAPABILITY` bits (`MAVLink.protocolCapabilityVersion2`, …).
    public var capabilities: UInt64
    /// `flight_sw_version`, `middleware_sw_version`, `os_sw_version`: versions as
    /// `major << 24 | minor << 16 | patch << 8 | FIRMWARE_VERSION_TYPE` (0 = not given).
    public var flightSoftwareVersion: UInt32
    public var middlewareSoftwareVersion: UInt32
    public var osSoftwareVersion: UInt32
    /// `board_version`: hardware/board version (0 = not given).
    public var boardVersion: UInt32
    /// `flight_custom_version`, `middleware_custom_version`, `os_custom_version`: commonly the
    /// first 8 bytes of a git hash (binary, not text).
    public var flightCustomVersion: MAVLinkBytes8
    public var middlewareCustomVersion: MAVLinkBytes8
    public var osCustomVersion: MAVLinkBytes8
    /// `vendor_id`, `product_id`: the board's USB-style ids (0 = not given).
    public var vendorID: UInt16
    public var productID: UInt16
    /// `uid`: a 64-bit unique id (0 = none; `uid2` is preferred).
    public var uid: UInt64
    /// Extension `uid2`: an 18-byte unique id (all zero = none).
    public var uid2: MAVLinkBytes18

    public init(
      capabilities: UInt64, flightSoftwareVersion: UInt32 = 0,
      middlewareSoftwareVersion: UInt32 = 0, osSoftwareVersion: UInt32 = 0,
      boardVersion: UInt32 = 0, flightCustomVersion: MAVLinkBytes8 = .init(),
      middlewareCustomVersion: MAVLinkBytes8 = .init(), osCustomVersion: MAVLinkBytes8 = .init(),
      vendorID: UInt16 = 0, productID: UInt16 = 0, uid: UInt64 = 0, uid2: MAVLinkBytes18 = .init()
    ) {
      self.capabilities = capabilities
      self.flightSoftwareVersion = flightSoftwareVersion
      self.middlewareSoftwareVersion = middlewareSoftwareVersion
      self.osSoftwareVersion = osSoftwareVersion
      self.boardVersion = boardVersion
      self.flightCustomVersion = flightCustomVersion
      self.middlewareCustomVersion = middlewareCustomVersion
      self.osCustomVersion = osCustomVersion
      self.vendorID = vendorID
      self.productID = productID
      self.uid = uid
      self.uid2 = uid2
    }
  }

  /// MESSAGE_INTERVAL (#244): the interval at which a message is sent; the answer to
  /// `MAV_CMD_GET_MESSAGE_INTERVAL` (and sent after a SET).
  public struct MessageInterval: Hashable, Sendable {
    /// `message_id`.
    public var messageID: UInt16
    /// `interval_us`: µs between messages; −1 = not sent, 0 = not available.
    public var intervalMicroseconds: Int32

    public init(messageID: UInt16, intervalMicroseconds: Int32) {
      self.messageID = messageID
      self.intervalMicroseconds = intervalMicroseconds
    }
  }

  /// The (system, component) the message is addressed to, for messages that carry
  /// `target_system`/`target_component` (COMMAND_*, PARAM_REQUEST_*, PARAM_SET,
  /// REQUEST_DATA_STREAM, FILE_TRANSFER_PROTOCOL, and COMMAND_ACK's extensions); `nil` for
  /// broadcast messages. 0 in either is a broadcast to all systems or all components.
  public var target: (system: UInt8, component: UInt8)? {
    switch self {
    case .heartbeat, .attitudeQuaternion, .highResIMU, .statusText, .systemStatus, .attitude,
      .paramValue, .autopilotVersion, .messageInterval:
      nil
    case .paramRequestRead(let m): (m.targetSystem, m.targetComponent)
    case .paramRequestList(let m): (m.targetSystem, m.targetComponent)
    case .paramSet(let m): (m.targetSystem, m.targetComponent)
    case .requestDataStream(let m): (m.targetSystem, m.targetComponent)
    case .commandInt(let m): (m.targetSystem, m.targetComponent)
    case .commandLong(let m): (m.targetSystem, m.targetComponent)
    case .commandAck(let m): (m.targetSystem, m.targetComponent)
    case .fileTransferProtocol(let m): (m.targetSystem, m.targetComponent)
    }
  }

  /// Whether a component (`systemID`, `componentID`) should act on the message: it has no
  /// target, or each target id is the component's or 0 (broadcast).
  public func isAddressed(toSystem systemID: UInt8, component componentID: UInt8) -> Bool {
    guard let target else { return true }
    return (target.system == 0 || target.system == systemID)
      && (target.component == 0 || target.component == componentID)
  }
}

// MARK: - Wire order

extension MAVLinkMessage {
  /// Writes the full-length payload of a component message in wire order (fields sorted by
  /// type size, largest first; extensions last, in declaration order).
  func writeComponentPayload(to writer: inout ByteWriter) {
    switch self {
    case .heartbeat, .attitudeQuaternion, .highResIMU, .statusText:
      break  // Plumb's telemetry messages: `writePayload` writes them.
    case .systemStatus(let m):
      writer.write(m.sensorsPresent)
      writer.write(m.sensorsEnabled)
      writer.write(m.sensorsHealth)
      writer.write(m.loadPermille)
      writer.write(m.batteryVoltageMillivolts)
      writer.write(m.batteryCurrentCentiamperes)
      writer.write(m.dropRateCommunicationCentipercent)
      writer.write(m.communicationErrors)
      writer.write(m.errorsCount1)
      writer.write(m.errorsCount2)
      writer.write(m.errorsCount3)
      writer.write(m.errorsCount4)
      writer.write(UInt8(bitPattern: m.batteryRemainingPercent))
      writer.write(m.sensorsPresentExtended)
      writer.write(m.sensorsEnabledExtended)
      writer.write(m.sensorsHealthExtended)
    case .paramRequestRead(let m):
      writer.write(m.parameterIndex)
      writer.write(m.targetSystem)
      writer.write(m.targetComponent)
      m.parameterID.withBytes { writer.write($0) }
    case .paramRequestList(let m):
      writer.write(m.targetSystem)
      writer.write(m.targetComponent)
    case .paramValue(let m):
      writer.write(m.value)
      writer.write(m.count)
      writer.write(m.index)
      m.parameterID.withBytes { writer.write($0) }
      writer.write(m.type)
    case .paramSet(let m):
      writer.write(m.value)
      writer.write(m.targetSystem)
      writer.write(m.targetComponent)
      m.parameterID.withBytes { writer.write($0) }
      writer.write(m.type)
    case .attitude(let m):
      writer.write(m.timeBootMilliseconds)
      writer.write(m.rollRadians)
      writer.write(m.pitchRadians)
      writer.write(m.yawRadians)
      writer.write(m.rateRadiansPerSecond.x)
      writer.write(m.rateRadiansPerSecond.y)
      writer.write(m.rateRadiansPerSecond.z)
    case .requestDataStream(let m):
      writer.write(m.rateHertz)
      writer.write(m.targetSystem)
      writer.write(m.targetComponent)
      writer.write(m.streamID)
      writer.write(m.startStop)
    case .commandInt(let m):
      writer.write(m.param1)
      writer.write(m.param2)
      writer.write(m.param3)
      writer.write(m.param4)
      writer.write(UInt32(bitPattern: m.x))
      writer.write(UInt32(bitPattern: m.y))
      writer.write(m.z)
      writer.write(m.command)
      writer.write(m.targetSystem)
      writer.write(m.targetComponent)
      writer.write(m.frame)
      writer.write(m.current)
      writer.write(m.autocontinue)
    case .commandLong(let m):
      writer.write(m.param1)
      writer.write(m.param2)
      writer.write(m.param3)
      writer.write(m.param4)
      writer.write(m.param5)
      writer.write(m.param6)
      writer.write(m.param7)
      writer.write(m.command)
      writer.write(m.targetSystem)
      writer.write(m.targetComponent)
      writer.write(m.confirmation)
    case .commandAck(let m):
      writer.write(m.command)
      writer.write(m.result)
      writer.write(m.progress)
      writer.write(UInt32(bitPattern: m.resultParameter2))
      writer.write(m.targetSystem)
      writer.write(m.targetComponent)
    case .fileTransferProtocol(let m):
      writer.write(m.targetNetwork)
      writer.write(m.targetSystem)
      writer.write(m.targetComponent)
      m.payload.withBytes { writer.write($0) }
    case .autopilotVersion(let m):
      writer.write(m.capabilities)
      writer.write(m.uid)
      writer.write(m.flightSoftwareVersion)
      writer.write(m.middlewareSoftwareVersion)
      writer.write(m.osSoftwareVersion)
      writer.write(m.boardVersion)
      writer.write(m.vendorID)
      writer.write(m.productID)
      m.flightCustomVersion.withBytes { writer.write($0) }
      m.middlewareCustomVersion.withBytes { writer.write($0) }
      m.osCustomVersion.withBytes { writer.write($0) }
      m.uid2.withBytes { writer.write($0) }
    case .messageInterval(let m):
      writer.write(UInt32(bitPattern: m.intervalMicroseconds))
      writer.write(m.messageID)
    }
  }

  /// Reads the full-length (zero-extended) payload of a component message; `nil` for an id
  /// that is not one.
  static func readComponentMessage(id: UInt32, from reader: inout ByteCursor)
    throws(ByteCursor.ShortInput) -> MAVLinkMessage?
  {
    switch id {
    case 1:
      let present = try reader.readU32()
      let enabled = try reader.readU32()
      let health = try reader.readU32()
      let load = try reader.readU16()
      let voltage = try reader.readU16()
      let current = try reader.readI16()
      let dropRate = try reader.readU16()
      let errors = try reader.readU16()
      let count1 = try reader.readU16()
      let count2 = try reader.readU16()
      let count3 = try reader.readU16()
      let count4 = try reader.readU16()
      let remaining = Int8(bitPattern: try reader.readU8())
      let presentExtended = try reader.readU32()
      let enabledExtended = try reader.readU32()
      let healthExtended = try reader.readU32()
      return .systemStatus(
        SystemStatus(
          sensorsPresent: present, sensorsEnabled: enabled, sensorsHealth: health,
          loadPermille: load, batteryVoltageMillivolts: voltage,
          batteryCurrentCentiamperes: current, batteryRemainingPercent: remaining,
          dropRateCommunicationCentipercent: dropRate, communicationErrors: errors,
          errorsCount1: count1, errorsCount2: count2, errorsCount3: count3, errorsCount4: count4,
          sensorsPresentExtended: presentExtended, sensorsEnabledExtended: enabledExtended,
          sensorsHealthExtended: healthExtended))
    case 20:
      let index = try reader.readI16()
      let system = try reader.readU8()
      let component = try reader.readU8()
      let name = MAVLinkParameterID(bytes: try reader.readSlice(MAVLinkParameterID.count))
      return .paramRequestRead(
        ParamRequestRead(
          targetSystem: system, targetComponent: component, parameterID: name,
          parameterIndex: index))
    case 21:
      let system = try reader.readU8()
      let component = try reader.readU8()
      return .paramRequestList(ParamRequestList(targetSystem: system, targetComponent: component))
    case 22:
      let value = try reader.readF32()
      let count = try reader.readU16()
      let index = try reader.readU16()
      let name = MAVLinkParameterID(bytes: try reader.readSlice(MAVLinkParameterID.count))
      let type = try reader.readU8()
      return .paramValue(
        ParamValue(parameterID: name, value: value, type: type, count: count, index: index))
    case 23:
      let value = try reader.readF32()
      let system = try reader.readU8()
      let component = try reader.readU8()
      let name = MAVLinkParameterID(bytes: try reader.readSlice(MAVLinkParameterID.count))
      let type = try reader.readU8()
      return .paramSet(
        ParamSet(
          targetSystem: system, targetComponent: component, parameterID: name, value: value,
          type: type))
    case 30:
      let time = try reader.readU32()
      let roll = try reader.readF32()
      let pitch = try reader.readF32()
      let yaw = try reader.readF32()
      let rollRate = try reader.readF32()
      let pitchRate = try reader.readF32()
      let yawRate = try reader.readF32()
      return .attitude(
        Attitude(
          timeBootMilliseconds: time, rollRadians: roll, pitchRadians: pitch, yawRadians: yaw,
          rateRadiansPerSecond: MAVLinkVector(x: rollRate, y: pitchRate, z: yawRate)))
    case 66:
      let rate = try reader.readU16()
      let system = try reader.readU8()
      let component = try reader.readU8()
      let stream = try reader.readU8()
      let startStop = try reader.readU8()
      return .requestDataStream(
        RequestDataStream(
          targetSystem: system, targetComponent: component, streamID: stream, rateHertz: rate,
          startStop: startStop))
    case 75:
      let param1 = try reader.readF32()
      let param2 = try reader.readF32()
      let param3 = try reader.readF32()
      let param4 = try reader.readF32()
      let x = try reader.readI32()
      let y = try reader.readI32()
      let z = try reader.readF32()
      let command = try reader.readU16()
      let system = try reader.readU8()
      let component = try reader.readU8()
      let frame = try reader.readU8()
      let current = try reader.readU8()
      let autocontinue = try reader.readU8()
      return .commandInt(
        CommandInt(
          targetSystem: system, targetComponent: component, frame: frame, command: command,
          current: current, autocontinue: autocontinue, param1: param1, param2: param2,
          param3: param3, param4: param4, x: x, y: y, z: z))
    case 76:
      let param1 = try reader.readF32()
      let param2 = try reader.readF32()
      let param3 = try reader.readF32()
      let param4 = try reader.readF32()
      let param5 = try reader.readF32()
      let param6 = try reader.readF32()
      let param7 = try reader.readF32()
      let command = try reader.readU16()
      let system = try reader.readU8()
      let component = try reader.readU8()
      let confirmation = try reader.readU8()
      return .commandLong(
        CommandLong(
          targetSystem: system, targetComponent: component, command: command,
          confirmation: confirmation, param1: param1, param2: param2, param3: param3,
          param4: param4, param5: param5, param6: param6, param7: param7))
    case 77:
      let command = try reader.readU16()
      let result = try reader.readU8()
      let progress = try reader.readU8()
      let resultParameter2 = try reader.readI32()
      let system = try reader.readU8()
      let component = try reader.readU8()
      return .commandAck(
        CommandAck(
          command: command, result: result, progress: progress,
          resultParameter2: resultParameter2, targetSystem: system, targetComponent: component))
    case 110:
      let network = try reader.readU8()
      let system = try reader.readU8()
      let component = try reader.readU8()
      let payload = MAVLinkFTPPayload(bytes: try reader.readSlice(MAVLinkFTPPayload.count))
      return .fileTransferProtocol(
        FileTransferProtocol(
          targetNetwork: network, targetSystem: system, targetComponent: component,
          payload: payload))
    case 148:
      let capabilities = try reader.readU64()
      let uid = try reader.readU64()
      let flight = try reader.readU32()
      let middleware = try reader.readU32()
      let os = try reader.readU32()
      let board = try reader.readU32()
      let vendor = try reader.readU16()
      let product = try reader.readU16()
      let flightCustom = MAVLinkBytes8(bytes: try reader.readSlice(MAVLinkBytes8.count))
      let middlewareCustom = MAVLinkBytes8(bytes: try reader.readSlice(MAVLinkBytes8.count))
      let osCustom = MAVLinkBytes8(bytes: try reader.readSlice(MAVLinkBytes8.count))
      let uid2 = MAVLinkBytes18(bytes: try reader.readSlice(MAVLinkBytes18.count))
      return .autopilotVersion(
        AutopilotVersion(
          capabilities: capabilities, flightSoftwareVersion: flight,
          middlewareSoftwareVersion: middleware, osSoftwareVersion: os, boardVersion: board,
          flightCustomVersion: flightCustom, middlewareCustomVersion: middlewareCustom,
          osCustomVersion: osCustom, vendorID: vendor, productID: product, uid: uid, uid2: uid2))
    case 244:
      let interval = try reader.readI32()
      let messageID = try reader.readU16()
      return .messageInterval(MessageInterval(messageID: messageID, intervalMicroseconds: interval))
    default:
      return nil
    }
  }
}
