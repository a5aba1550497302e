import HardwareAbstraction
import Telemetry

/// The MAVLink component (FORMATS.md "MAVLink v2", "What Plumb answers"): while the stream is
/// MAVLink, packets from a ground station — on the serial line, and on the datagram link when
/// there is one — are checked by a `MAVLinkReceiver` and answered here.
///
/// - Commands (COMMAND_LONG, COMMAND_INT) get exactly one COMMAND_ACK each, `UNSUPPORTED` for
///   any Plumb does not carry out; a refusal also gets a STATUSTEXT that says why.
/// - Parameters (PARAM_REQUEST_LIST, PARAM_REQUEST_READ, PARAM_SET) are `PlumbParameter`s; a
///   change becomes the host command it stands for (`PlumbParameter.change(to:context:)`), is
///   obeyed through `obey(_:)` and so is recorded, and is answered with PARAM_VALUE.
/// - FILE_TRANSFER_PROTOCOL gets a NAK, so a ground station stops asking for files.
/// - REQUEST_DATA_STREAM is counted and not acted on: MAVProxy sends it at every connection
///   with its own rates, which would override the rates the user set.
///
/// Answers wait in a small queue and go out as the link's spare capacity allows (the same
/// credit host replies use), so a flood of requests never delays or drops a frame; a list of
/// parameters goes one PARAM_VALUE at a time. Nothing here allocates.
extension MAVLinkReceiverStatistics {
  /// Packets received and not accepted: bad CRC, unknown, MAVLink 1, unsupported flags, too
  /// long (those for another component are not errors).
  public var rejectedPackets: UInt64 {
    crcErrors + unknownMessages + mavlinkV1Packets + unsupportedFlags + oversizedPayloads
  }
}

extension FirmwareLoop {
  /// What the component has received and answered.
  public var mavlinkStatistics: MAVLinkComponentStatistics { mavlinkState.statistics }

  /// The serial receiver's counters (bad CRCs, unknown messages, packets for others…).
  public var mavlinkSerialReceiverStatistics: MAVLinkReceiverStatistics {
    mavlinkState.serialReceiver.statistics
  }

  /// The datagram receiver's counters.
  public var mavlinkDatagramReceiverStatistics: MAVLinkReceiverStatistics {
    mavlinkState.datagramReceiver.statistics
  }

  /// Feeds bytes from the serial line (or a datagram) to their receiver and answers each packet.
  ///
  /// The receiver is moved out of the loop while it reads (a never-used spare takes its place),
  /// so the answering may change the loop without touching it; moved, not copied, its buffer
  /// stays uniquely referenced and is written in place (no allocation).
  mutating func receiveMAVLink(_ bytes: UnsafeRawBufferPointer, fromDatagram: Bool) {
    var receiver: MAVLinkReceiver
    if fromDatagram {
      receiver = mavlinkState.datagramReceiver
      mavlinkState.datagramReceiver = mavlinkState.spareReceiver
    } else {
      receiver = mavlinkState.serialReceiver
      mavlinkState.serialReceiver = mavlinkState.spareReceiver
    }
    receiver.receive(bytes) { packet in handle(packet) }
    if fromDatagram {
      mavlinkState.datagramReceiver = receiver
    } else {
      mavlinkState.serialReceiver = receiver
    }
  }

  /// How many bytes of serial input the component may take now: each packet (at least 13
  /// bytes) brings at most two answers, which must find room in the queue. A flood waits in
  /// the kernel's buffer, and is answered at the pace the link carries the answers.
  var mavlinkInputRoom: Int {
    (MAVLinkOutbox.capacity - mavlinkState.outbox.count) / 2 * 13
  }

  /// Reads what the datagram link has: a datagram a step, and only while the answer queue has
  /// room for eight answers, so a flood waits in the socket's buffer rather than in the loop
  /// (answers a datagram packed with more requests than that finds no room for are counted in
  /// `answersDropped`).
  mutating func pollDatagrams() {
    guard datagramLink != nil, MAVLinkOutbox.capacity - mavlinkState.outbox.count >= 8 else {
      return
    }
    let received = datagramLink!.receive(into: scratch.datagram)
    guard received > 0, format == .mavlink else { return }
    receiveMAVLink(
      UnsafeRawBufferPointer(rebasing: scratch.datagram[0..<received]), fromDatagram: true)
  }

  private mutating func handle(_ packet: MAVLinkPacket) {
    switch packet.message {
    case .commandLong(let c):
      command(
        c.command, c.param1, c.param2, c.param3, c.param4, c.param5, c.param6, c.param7,
        from: packet)
    case .commandInt(let c):
      command(
        c.command, c.param1, c.param2, c.param3, c.param4, Float(c.x), Float(c.y), c.z,
        from: packet)
    case .paramRequestList:
      mavlinkState.statistics.parameterListRequests += 1
      mavlinkState.listCursor = 0
    case .paramRequestRead(let request):
      mavlinkState.statistics.parameterReadRequests += 1
      let parameter: PlumbParameter? =
        request.parameterIndex >= 0
        ? PlumbParameter(rawValue: Int(request.parameterIndex))
        : request.parameterID.withBytes { PlumbParameter.named($0) }
      guard let parameter else {
        mavlinkState.statistics.unknownParameters += 1
        return
      }
      answer(.paramValue(parameterValueMessage(parameter)))
    case .paramSet(let request):
      mavlinkState.statistics.parameterSets += 1
      guard let parameter = request.parameterID.withBytes({ PlumbParameter.named($0) }) else {
        mavlinkState.statistics.unknownParameters += 1
        var text = FixedText("no parameter ")
        text.append(request.parameterID.description, limit: 29)
        answer(reply: .error(text))
        return
      }
      switch parameter.change(to: request.value, context: commandContext) {
      case .success(let command):
        let reply = obey(command)
        if reply.status == .error {
          mavlinkState.statistics.parameterSetsRefused += 1
          answer(reply: reply)
        }
      case .failure(let error):
        mavlinkState.statistics.parameterSetsRefused += 1
        answer(reply: error.reply)
      }
      // The value now in effect: the new one, or the old one after a refusal.
      answer(.paramValue(parameterValueMessage(parameter)))
    case .fileTransferProtocol(let request):
      mavlinkState.statistics.fileTransferRequests += 1
      answer(
        .fileTransferProtocol(
          request.negativeAcknowledgement(
            toSystem: packet.systemID, component: packet.componentID)))
    case .requestDataStream:
      mavlinkState.statistics.dataStreamRequestsIgnored += 1
    case .heartbeat:
      mavlinkState.statistics.heartbeatsReceived += 1
    default:
      mavlinkState.statistics.otherMessages += 1
    }
  }

  /// Carries out a command (COMMAND_LONG's or COMMAND_INT's parameters, x and y as floats) and
  /// answers it with one COMMAND_ACK.
  private mutating func command(
    _ id: UInt16, _ p1: Float, _ p2: Float, _ p3: Float, _ p4: Float, _ p5: Float, _ p6: Float,
    _ p7: Float, from packet: MAVLinkPacket
  ) {
    mavlinkState.statistics.commands += 1
    var result = MAVLink.CommandResult.accepted
    switch id {
    case MAVLink.Command.setMessageInterval:
      result = setMessageInterval(messageID: p1, intervalMicroseconds: p2)
    case MAVLink.Command.getMessageInterval:
      guard let message = messageInterval(p1) else {
        result = refuse(MAVLink.CommandResult.denied, "no such message id")
        break
      }
      answer(.messageInterval(message))
    case MAVLink.Command.requestMessage:
      result = requestMessage(p1)
    case MAVLink.Command.requestAutopilotCapabilities:
      answer(.autopilotVersion(mavlinkState.autopilotVersion))
    case MAVLink.Command.preflightCalibration:
      // param1 = 1: gyro. Every other calibration (compass, baro, accelerometer, …) is not one
      // Plumb does on line: the accelerometer is calibrated on the bench.
      guard p1 == 1, p2 == 0, p3 == 0, p4 == 0, p5 == 0, p6 == 0, p7 == 0 else {
        result = refuse(MAVLink.CommandResult.unsupported, "only gyro: param1=1, the rest 0")
        break
      }
      let reply = obey(.calibrateGyro)
      answer(reply: reply)
      if reply.status == .error { result = MAVLink.CommandResult.temporarilyRejected }
    case MAVLink.Command.fixedMagCalYaw:
      // "Set the yaw to a known value": Plumb's tare makes the heading now read 0.
      guard p1 == 0 else {
        result = refuse(MAVLink.CommandResult.denied, "tare sets yaw 0: param1 must be 0")
        break
      }
      answer(reply: obey(.tare))
    default:
      result = MAVLink.CommandResult.unsupported
    }
    if result == MAVLink.CommandResult.unsupported {
      mavlinkState.statistics.commandsUnsupported += 1
    } else if result != MAVLink.CommandResult.accepted {
      mavlinkState.statistics.commandsRefused += 1
    }
    answer(
      .commandAck(
        MAVLinkMessage.CommandAck(
          command: id, result: result, targetSystem: packet.systemID,
          targetComponent: packet.componentID)))
  }

  /// Queues a STATUSTEXT saying why, and returns `result`.
  private mutating func refuse(_ result: UInt8, _ reason: StaticString) -> UInt8 {
    answer(reply: .error(FixedText(stringLiteral: reason)))
    return result
  }

  /// MAV_CMD_SET_MESSAGE_INTERVAL: param1 the message id, param2 the interval in µs (−1 off,
  /// 0 the default rate). Becomes a `set SR_…` change, checked like one.
  private mutating func setMessageInterval(messageID: Float, intervalMicroseconds: Float) -> UInt8 {
    guard messageID >= 0, messageID < 16_777_216, messageID == messageID.rounded(),
      let stream = MAVLinkStream(messageID: UInt32(messageID))
    else {
      return refuse(MAVLink.CommandResult.denied, "Plumb streams messages 1, 30, 31, 105")
    }
    let hertz: Float
    if intervalMicroseconds == -1 {
      hertz = 0
    } else if intervalMicroseconds == 0 {
      hertz = MAVLinkStreamRates.default[stream]
    } else if intervalMicroseconds > 0 {
      hertz = min(MAVLinkStreamRates.maximumHz, 1e6 / intervalMicroseconds)
    } else {
      return refuse(MAVLink.CommandResult.denied, "interval: -1 off, 0 default, or > 0 us")
    }
    let parameter: PlumbParameter
    switch stream {
    case .attitudeQuaternion: parameter = .attitudeQuaternionRate
    case .attitude: parameter = .attitudeRate
    case .highResIMU: parameter = .imuRate
    case .systemStatus: parameter = .systemStatusRate
    }
    switch parameter.change(to: hertz, context: commandContext) {
    case .success(let command):
      let reply = obey(command)
      if reply.status == .error {
        answer(reply: reply)
        return MAVLink.CommandResult.denied
      }
      return MAVLink.CommandResult.accepted
    case .failure(let error):
      answer(reply: error.reply)
      return MAVLink.CommandResult.denied
    }
  }

  /// MESSAGE_INTERVAL for a message id: a stream's actual interval (−1 when off), HEARTBEAT's
  /// second; `nil` for a message Plumb does not send.
  private func messageInterval(_ messageID: Float) -> MAVLinkMessage.MessageInterval? {
    guard messageID >= 0, messageID <= 65535, messageID == messageID.rounded() else { return nil }
    let id = UInt16(messageID)
    if id == 0 {
      return MAVLinkMessage.MessageInterval(messageID: 0, intervalMicroseconds: 1_000_000)
    }
    guard let stream = MAVLinkStream(messageID: UInt32(id)) else { return nil }
    let hertz = mavlinkRates.actualHz(stream, outputRateHz: outputRateHz)
    return MAVLinkMessage.MessageInterval(
      messageID: id, intervalMicroseconds: hertz > 0 ? Int32((1e6 / hertz).rounded()) : -1)
  }

  /// MAV_CMD_REQUEST_MESSAGE: AUTOPILOT_VERSION, HEARTBEAT, SYS_STATUS, ATTITUDE,
  /// ATTITUDE_QUATERNION, HIGHRES_IMU (the last frame's), MESSAGE_INTERVAL; others refused.
  private mutating func requestMessage(_ messageID: Float) -> UInt8 {
    guard messageID >= 0, messageID <= 65535, messageID == messageID.rounded() else {
      return refuse(MAVLink.CommandResult.denied, "message id must be a whole number")
    }
    switch UInt16(messageID) {
    case 148:
      answer(.autopilotVersion(mavlinkState.autopilotVersion))
    case 0, 1, 30, 31, 105:
      guard
        let message = TelemetryEncoder.message(
          UInt32(messageID), for: lastFrame, health: encoder.health,
          identity: settings.mavlink)
      else { return MAVLink.CommandResult.denied }
      answer(message)
    default:
      return refuse(MAVLink.CommandResult.denied, "Plumb sends messages 0, 1, 30, 31, 105, 148")
    }
    return MAVLink.CommandResult.accepted
  }

  /// PARAM_VALUE for `parameter`, with its index and the count.
  private func parameterValueMessage(_ parameter: PlumbParameter) -> MAVLinkMessage.ParamValue {
    MAVLinkMessage.ParamValue(
      parameterID: parameter.name.withUTF8Buffer {
        MAVLinkParameterID(bytes: UnsafeRawBufferPointer($0))
      },
      value: parameterValue(parameter), type: parameter.valueType.rawValue,
      count: UInt16(PlumbParameter.count), index: UInt16(parameter.rawValue))
  }

  /// A reply (a refusal's reason, a command's result) as a STATUSTEXT among the answers.
  private mutating func answer(reply: HostReply) {
    answer(.statusText(TelemetryEncoder.statusText(reply)))
  }

  private mutating func answer(_ message: MAVLinkMessage) {
    if !mavlinkState.outbox.append(message) {
      mavlinkState.statistics.answersDropped += 1
    }
  }

  /// Sends waiting answers, then the next PARAM_VALUEs of a list, while the reply credit
  /// covers them.
  mutating func sendMAVLinkAnswers() {
    guard format == .mavlink else {
      mavlinkState.outbox.removeAll()
      mavlinkState.listCursor = nil
      return
    }
    while let message = mavlinkState.outbox.first {
      guard sendMAVLink(message) else { return }
      mavlinkState.outbox.removeFirst()
    }
    while let index = mavlinkState.listCursor {
      guard let parameter = PlumbParameter(rawValue: index) else {
        mavlinkState.listCursor = nil
        return
      }
      guard sendMAVLink(.paramValue(parameterValueMessage(parameter))) else { return }
      mavlinkState.listCursor = index + 1
    }
  }

  /// Encodes and queues one answer when the reply credit covers it; `false` when it must wait.
  private mutating func sendMAVLink(_ message: MAVLinkMessage) -> Bool {
    // Charged at its untruncated length (what encoding may take), at most a burst's worth: an
    // FTP NAK is 266 untruncated, 28 on the wire.
    let longest = MAVLink.headerCount + message.info.maximumLength + MAVLink.checksumCount
    guard hasReplyCredit(bytes: min(longest, Int(Self.replyBurstBytes))) else { return false }
    if case .paramValue = message { mavlinkState.statistics.parameterValuesSent += 1 }
    let length = encoder.encode(message, into: scratch.frame)
    queueEncoded(length)
    return true
  }
}
