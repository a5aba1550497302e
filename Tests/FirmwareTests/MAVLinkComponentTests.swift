import AttitudeEstimation
import Firmware
import HardwareAbstraction
import MPU6050Simulation
import MotionScenarios
import SimulatedHardware
import Telemetry
import TestSupport
import Testing

/// A ground station on the other end of the line: packets from system 255, component 190
/// (MAVProxy's and QGroundControl's defaults), encoded with Plumb's encoder (itself checked
/// against pymavlink's bytes in TelemetryTests).
private struct GroundStation {
  var sequence: UInt8 = 0

  mutating func packet(_ message: MAVLinkMessage) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: MAVLink.maximumPacketCount)
    let packet = MAVLinkPacket(
      sequence: sequence, systemID: 255, componentID: 190, message: message)
    sequence &+= 1
    let count = bytes.withUnsafeMutableBytes { MAVLink.encode(packet, into: $0) }
    return Array(bytes[0..<count])
  }

  mutating func command(
    _ id: UInt16, _ p1: Float = 0, _ p2: Float = 0, p7: Float = 0, system: UInt8 = 1,
    component: UInt8 = 200
  ) -> [UInt8] {
    packet(
      .commandLong(
        MAVLinkMessage.CommandLong(
          targetSystem: system, targetComponent: component, command: id, confirmation: 0,
          param1: p1, param2: p2, param3: 0, param4: 0, param5: 0, param6: 0, param7: p7)))
  }

  mutating func set(_ name: String, _ value: Float) -> [UInt8] {
    packet(
      .paramSet(
        MAVLinkMessage.ParamSet(
          targetSystem: 1, targetComponent: 200, parameterID: MAVLinkParameterID(name),
          value: value, type: MAVLink.parameterTypeReal32)))
  }
}

/// What the ground station received, decoded.
private struct Received {
  var packets: [MAVLinkPacket] = []
  var statistics: LinkStatistics

  init(_ bytes: [UInt8]) {
    var decoder = StreamDecoder(format: .mavlink)
    var packets: [MAVLinkPacket] = []
    decoder.decode(bytes) { message in
      if case .mavlink(let packet) = message { packets.append(packet) }
    }
    decoder.finish()
    self.packets = packets
    statistics = decoder.statistics
  }

  var acks: [MAVLinkMessage.CommandAck] {
    packets.compactMap { if case .commandAck(let m) = $0.message { m } else { nil } }
  }
  var parameterValues: [MAVLinkMessage.ParamValue] {
    packets.compactMap { if case .paramValue(let m) = $0.message { m } else { nil } }
  }
  var texts: [String] {
    packets.compactMap {
      if case .statusText(let m) = $0.message { m.text.description } else { nil }
    }
  }
  func count(_ id: UInt32) -> Int { packets.filter { $0.message.info.id == id }.count }
}

@Suite struct MAVLinkComponentTests {
  private func rig(motion: any MotionSource = RestingMotion()) throws -> Rig {
    try Rig(motion: motion, settings: FirmwareSettings(selfTest: false, format: .mavlink))
  }

  /// Runs the loop for `seconds`, injecting `inputs[k]` before step k, and decodes the output.
  private func run(
    _ rig: Rig, seconds: Double, inputs: [Int: [UInt8]] = [:], start: Bool = true
  ) throws -> Received {
    if start { try rig.loop.start() }
    var received: [UInt8] = []
    var step = 0
    let end = rig.clock.now() + .nanoseconds(Int64(seconds * 1e9))
    while rig.clock.now() < end {
      if let bytes = inputs[step] { rig.port.inject(bytes) }
      rig.loop.step()
      received += rig.port.takeWritten()
      step += 1
    }
    return Received(received)
  }

  @Test func aParameterListSendsEachParameterOnceWithItsIndexAndCount() throws {
    let rig = try rig()
    var station = GroundStation()
    let list = station.packet(
      .paramRequestList(MAVLinkMessage.ParamRequestList(targetSystem: 1, targetComponent: 200)))
    let received = try run(rig, seconds: 1, inputs: [10: list])
    let values = received.parameterValues
    let count = PlumbParameter.allCases.count
    #expect(values.count == count)
    #expect(values.map(\.index) == (0..<count).map { UInt16($0) })
    #expect(values.allSatisfy { $0.count == UInt16(count) })
    for value in values {
      let parameter = try #require(PlumbParameter(rawValue: Int(value.index)))
      #expect(value.parameterID.description == parameter.nameString)
      #expect(value.value == rig.loop.parameterValue(parameter))
      #expect(value.type == parameter.valueType.rawValue)
    }
    #expect(values.first { $0.parameterID.description == "SR_IMU_HZ" }?.value == 50)
    #expect(rig.loop.mavlinkStatistics.parameterValuesSent == UInt64(count))
    #expect(received.statistics.crcErrors == 0 && received.statistics.framesLost == 0)
  }

  @Test func aParameterIsReadByNameOrIndex() throws {
    let rig = try rig()
    var station = GroundStation()
    let byName = station.packet(
      .paramRequestRead(
        MAVLinkMessage.ParamRequestRead(
          targetSystem: 1, targetComponent: 200, parameterID: MAVLinkParameterID("att_tau_s"),
          parameterIndex: -1)))
    let byIndex = station.packet(
      .paramRequestRead(
        MAVLinkMessage.ParamRequestRead(
          targetSystem: 1, targetComponent: 200, parameterID: MAVLinkParameterID(""),
          parameterIndex: 0)))
    let unknown = station.packet(
      .paramRequestRead(
        MAVLinkMessage.ParamRequestRead(
          targetSystem: 1, targetComponent: 200, parameterID: MAVLinkParameterID("NOPE"),
          parameterIndex: -1)))
    let received = try run(rig, seconds: 0.5, inputs: [10: byName, 11: byIndex, 12: unknown])
    #expect(
      received.parameterValues.map(\.parameterID.description) == ["ATT_TAU_S", "OUT_RATE_HZ"])
    #expect(rig.loop.mavlinkStatistics.unknownParameters == 1)
  }

  /// PARAM_SET changes the stream: HIGHRES_IMU from 50 Hz to 25 Hz, answered with the new value.
  @Test func aParameterSetChangesAStreamRate() throws {
    let rig = try rig()
    var station = GroundStation()
    let before = try run(rig, seconds: 2)
    // (The UART may still hold the last frame or two.)
    #expect(abs(before.count(105) - before.count(31) / 2) <= 1, "every 2nd frame")
    let answer = try run(rig, seconds: 0.1, inputs: [0: station.set("SR_IMU_HZ", 25)], start: false)
    #expect(answer.parameterValues.map(\.value) == [25])
    let after = try run(rig, seconds: 2, start: false)
    #expect(abs(after.count(31) - 200) <= 2)
    #expect(abs(after.count(105) - 50) <= 1, "every 4th frame")
    #expect(rig.loop.parameterValue(.imuRate) == 25)
    #expect(rig.loop.parameterChanges == 1)
  }

  /// A value out of range, or one the line cannot carry, is answered with the value unchanged
  /// and a STATUSTEXT saying why.
  @Test func aRefusedParameterSetAnswersTheOldValueAndTheReason() throws {
    let rig = try rig()
    var station = GroundStation()
    let received = try run(
      rig, seconds: 0.5,
      inputs: [
        10: station.set("SR_IMU_HZ", 5000), 20: station.set("SR_IMU_HZ", 100),
        30: station.set("OUT_RATE_HZ", 30), 40: station.set("NOPE", 1),
      ])
    #expect(received.parameterValues.map(\.value) == [50, 50, 100])
    #expect(
      received.texts == [
        "ERR SR_IMU_HZ 5000: must be 0 to 1000 Hz",
        "ERR 12264 B/s > 9792 B/s at 115200 baud; max 50 Hz",
        "ERR 30 Hz does not divide 100 Hz: try 25 or 50",
        "ERR no parameter NOPE",
      ])
    #expect(rig.loop.mavlinkStatistics.parameterSetsRefused == 3)
    #expect(rig.loop.parameterChanges == 0)
  }

  @Test func everyCommandGetsOneAcknowledgement() throws {
    let rig = try rig()
    var station = GroundStation()
    let inputs: [Int: [UInt8]] = [
      10: station.command(MAVLink.Command.setMessageInterval, 30, 50_000),
      12: station.command(MAVLink.Command.getMessageInterval, 30),
      14: station.command(MAVLink.Command.requestMessage, 148),
      16: station.command(MAVLink.Command.requestAutopilotCapabilities, 1),
      18: station.command(410),  // MAV_CMD_GET_HOME_POSITION: no position here
      20: station.command(MAVLink.Command.setMessageInterval, 0, 100_000),  // HEARTBEAT stays
      22: station.command(MAVLink.Command.fixedMagCalYaw, 0),
      24: station.command(MAVLink.Command.requestMessage, 1),
      26: station.command(MAVLink.Command.requestProtocolVersion, 1),
    ]
    let received = try run(rig, seconds: 2, inputs: inputs)
    let acks = received.acks
    #expect(
      acks.map(\.command) == [
        MAVLink.Command.setMessageInterval, MAVLink.Command.getMessageInterval,
        MAVLink.Command.requestMessage, MAVLink.Command.requestAutopilotCapabilities, 410,
        MAVLink.Command.setMessageInterval, MAVLink.Command.fixedMagCalYaw,
        MAVLink.Command.requestMessage, MAVLink.Command.requestProtocolVersion,
      ])
    #expect(
      acks.map(\.result) == [
        MAVLink.CommandResult.accepted, MAVLink.CommandResult.accepted,
        MAVLink.CommandResult.accepted,
        MAVLink.CommandResult.accepted, MAVLink.CommandResult.unsupported,
        MAVLink.CommandResult.denied,
        MAVLink.CommandResult.accepted, MAVLink.CommandResult.accepted,
        MAVLink.CommandResult.unsupported,
      ])
    #expect(acks.allSatisfy { $0.targetSystem == 255 && $0.targetComponent == 190 })
    // ATTITUDE at 20 Hz after SET_MESSAGE_INTERVAL (50 000 µs), and MESSAGE_INTERVAL says so.
    let intervals = received.packets.compactMap {
      if case .messageInterval(let m) = $0.message { m } else { nil }
    }
    #expect(
      intervals == [MAVLinkMessage.MessageInterval(messageID: 30, intervalMicroseconds: 50_000)])
    #expect(rig.loop.parameterValue(.attitudeRate) == 20)
    #expect(received.count(148) == 2, "AUTOPILOT_VERSION for both requests")
    let version = received.packets.compactMap {
      if case .autopilotVersion(let m) = $0.message { m } else { nil }
    }.first
    #expect((version?.capabilities ?? 0) & MAVLink.protocolCapabilityVersion2 != 0)
    #expect(version?.flightSoftwareVersion == 0x0001_00FF, "0.1.0, official")
    #expect(received.texts.contains { $0.hasPrefix("OK tare heading") })
    #expect(rig.loop.mavlinkStatistics.commands == 9)
    #expect(rig.loop.mavlinkStatistics.commandsUnsupported == 2)
  }

  /// MAV_CMD_PREFLIGHT_CALIBRATION (gyro) takes the bias from the rest the board is in; while it
  /// moves it is refused for now, with the reason.
  @Test func gyroCalibrationIsTakenAtRestAndRefusedInMotion() throws {
    let still = try rig()
    var station = GroundStation()
    let atRest = try run(
      still, seconds: 8,
      inputs: [700: station.command(MAVLink.Command.preflightCalibration, 1)])
    #expect(atRest.acks.map(\.result) == [MAVLink.CommandResult.accepted])
    #expect(atRest.texts.contains { $0.hasPrefix("OK gyro bias") })

    let moving = try rig(motion: ScenarioCatalog.entry(named: "handheld")!.make(1, 30))
    let inMotion = try run(
      moving, seconds: 8,
      inputs: [
        700: station.command(MAVLink.Command.preflightCalibration, 1),
        710: station.command(MAVLink.Command.preflightCalibration, 0, 0, p7: 0),
      ])
    #expect(
      inMotion.acks.map(\.result) == [
        MAVLink.CommandResult.temporarilyRejected, MAVLink.CommandResult.unsupported,
      ])
    #expect(inMotion.texts.first?.hasPrefix("ERR not at rest") == true, "\(inMotion.texts)")
  }

  /// Any FTP request gets a NAK addressed to its sender, in its session, with seq + 1, so a
  /// ground station stops asking and falls back to the parameter protocol.
  @Test func fileTransferRequestsGetANak() throws {
    let rig = try rig()
    var station = GroundStation()
    var payload = MAVLinkFTPPayload(
      sequence: 41, session: 75, opcode: 4, size: 0, requestOpcode: 0)
    payload[data: 0] = UInt8(ascii: "@")
    let open = station.packet(
      .fileTransferProtocol(
        MAVLinkMessage.FileTransferProtocol(
          targetSystem: 1, targetComponent: 200, payload: payload)))
    let received = try run(rig, seconds: 0.3, inputs: [10: open])
    let naks = received.packets.compactMap {
      if case .fileTransferProtocol(let m) = $0.message { m } else { nil }
    }
    #expect(naks.count == 1)
    let nak = try #require(naks.first)
    #expect(nak.targetSystem == 255 && nak.targetComponent == 190)
    #expect(nak.payload.opcode == MAVLink.FTP.opcodeNAK && nak.payload.requestOpcode == 4)
    #expect(nak.payload.sequence == 42 && nak.payload.session == 75 && nak.payload.size == 1)
    #expect(nak.payload[data: 0] == MAVLink.FTP.errorUnknownCommand)
  }

  /// Packets for another system or component, corrupted ones and unknown messages are counted
  /// and get no answer; REQUEST_DATA_STREAM is counted and changes nothing.
  @Test func packetsNotForPlumbGetNoAnswer() throws {
    let rig = try rig()
    var station = GroundStation()
    var corrupted = station.command(410)
    corrupted[14] ^= 0x40
    let inputs: [Int: [UInt8]] = [
      10: station.command(410, system: 2),
      12: station.command(410, component: 1),
      14: corrupted,
      16: [0xFD, 3, 0, 0, 9, 255, 190, 2, 0, 0, 1, 2, 3, 0x11, 0x22],  // SYSTEM_TIME-sized id 2
      18: station.packet(
        .requestDataStream(
          MAVLinkMessage.RequestDataStream(
            targetSystem: 1, targetComponent: 200, streamID: 0, rateHertz: 4, startStop: 1))),
      20: station.command(410, system: 0, component: 0),  // broadcast: answered
    ]
    let received = try run(rig, seconds: 1, inputs: inputs)
    #expect(received.acks.count == 1)
    let serial = rig.loop.mavlinkSerialReceiverStatistics
    #expect(serial.notForUs == 2 && serial.crcErrors == 1 && serial.unknownMessages == 1)
    #expect(rig.loop.mavlinkStatistics.dataStreamRequestsIgnored == 1)
    #expect(rig.loop.parameterValue(.imuRate) == 50)
  }

  /// A ground station sending valid commands as fast as the line carries them: every one is
  /// answered, in turn, at the pace the link's spare capacity allows, and the 100 Hz frames are
  /// neither delayed nor dropped.
  @Test func aFloodOfValidCommandsNeitherDelaysNorDropsFrames() throws {
    let rig = try rig()
    try rig.loop.start()
    var station = GroundStation()
    var received: [UInt8] = []
    var sent = 0
    var largestBacklog = 0
    let end = rig.clock.now() + .seconds(5)
    while rig.clock.now() < end {
      // Two COMMAND_LONGs (45 B each) a period: 9 000 B/s, more than the spare capacity.
      for _ in 0..<2 where rig.port.inject(station.command(410)) { sent += 1 }
      rig.loop.step()
      largestBacklog = max(largestBacklog, rig.port.bufferedOutputCount)
      received += rig.port.takeWritten()
    }
    // The station stops; the loop answers what waits, then finishes.
    let settle = rig.clock.now() + .seconds(10)
    while rig.clock.now() < settle {
      rig.loop.step()
      received += rig.port.takeWritten()
    }
    rig.finish(after: received)
    let decoded = Received(rig.received)
    let status = rig.loop.status
    #expect(status.framesDroppedQueueFull == 0 && status.repliesDropped == 0)
    #expect(decoded.count(31) == Int(status.framesQueued))
    #expect(decoded.statistics.framesLost == 0 && decoded.statistics.crcErrors == 0)
    #expect(largestBacklog < 400, "\(largestBacklog) bytes waiting in the UART")
    #expect(sent > 500)
    #expect(decoded.acks.count == sent, "every command answered, \(sent) sent")
    #expect(rig.loop.mavlinkStatistics.answersDropped == 0)
  }

  /// Commands over the datagram link are answered there (and on the serial line), and the
  /// frames go there too.
  @Test func theDatagramLinkCarriesTheStreamAndItsAnswers() throws {
    let rig = try rig()
    let link = MemoryDatagramLink()
    rig.loop.datagramLink = link
    var station = GroundStation()
    link.inject(station.command(MAVLink.Command.requestMessage, 148))
    _ = try run(rig, seconds: 1)
    let overUDP = Received(link.sent.flatMap { $0 })
    #expect(overUDP.count(31) == Int(rig.loop.status.framesQueued))
    #expect(overUDP.acks.map(\.result) == [MAVLink.CommandResult.accepted])
    #expect(overUDP.count(148) == 1)
    #expect(overUDP.statistics.framesLost == 0)
  }

}

@Suite(.countsAllocations) struct MAVLinkAllocationTests {
  /// The answers and the streams allocate nothing on the loop.
  @Test func answeringAllocatesNothing() throws {
    let rig = try Rig(settings: FirmwareSettings(selfTest: false, format: .mavlink))
    try rig.loop.start()
    var station = GroundStation()
    let requests = [
      station.packet(
        .paramRequestList(MAVLinkMessage.ParamRequestList(targetSystem: 1, targetComponent: 200))),
      station.command(410), station.command(MAVLink.Command.requestMessage, 148),
      station.set("SR_ATT_HZ", 20), station.set("SR_ATT_HZ", 5000),
      station.command(MAVLink.Command.getMessageInterval, 105),
    ]
    var sink = [UInt8]()
    sink.reserveCapacity(1 << 20)
    var injected: UInt64 = 0
    var next = 0
    func step() {
      if rig.port.statistics.bytesRead == injected {
        rig.port.inject(requests[next % requests.count])
        injected += UInt64(requests[next % requests.count].count)
        next += 1
      }
      rig.loop.step()
      rig.port.takeWritten(into: &sink)
      if sink.count > 500_000 { sink.removeAll(keepingCapacity: true) }
    }
    for _ in 0..<300 { step() }
    let before = rig.loop.mavlinkStatistics.commands
    let allocations = AllocationCounter.count {
      for _ in 0..<3_000 { step() }
    }
    #expect(rig.loop.mavlinkStatistics.commands - before > 100)
    #expect(allocations == 0, "\(allocations) allocations in 3 000 samples with requests")
  }
}

@Suite struct GyroCaptureReplyTests {
  /// Every refusal of `calibrate gyro` fits a reply whole, and says how long to hold still.
  @Test func everyRefusalFitsAReply() {
    let reasons: [GyroBiasCaptureRefusal.Reason] = [
      .restDetectionOff, .initialising, .moving, .movedRecently, .dwellRefused(.notSteady),
      .dwellRefused(.biasJump), .dwellRefused(.slowTurn(rateRadiansPerSecond: 0.01)),
      .dwellRefused(.accelerating),
    ]
    for reason in reasons {
      let refusal = GyroBiasCaptureRefusal(
        reason: reason, stillSeconds: 12.5, holdSeconds: 10.25, dwellSeconds: 3)
      let text = SimulatedLoop.shortReason(refusal)
      #expect(text.count <= HostReply.maximumTextLength, "\(text)")
      if reason != .restDetectionOff { #expect(text.description.hasSuffix("10.3 s"), "\(text)") }
    }
  }
}

@Suite struct ParameterRangeTests {
  /// The parameter table restates the estimator's ranges (Telemetry does not see it): they agree.
  @Test func theEstimatorsRangesAreTheParameters() {
    typealias T = AttitudeEstimator.Tunables
    func float(_ range: ClosedRange<Double>) -> ClosedRange<Float> {
      Float(range.lowerBound)...Float(range.upperBound)
    }
    #expect(PlumbParameter.inclinationTimeConstant.range == float(T.timeConstantRange))
    #expect(PlumbParameter.rejectionLowerThreshold.range == float(T.lowerThresholdRange))
    #expect(PlumbParameter.rejectionUpperThreshold.range == float(T.upperThresholdRange))
    // And the defaults a ground station sees are the estimator's.
    let loop = try? Rig(settings: FirmwareSettings(selfTest: false, format: .mavlink)).loop
    let defaults = T.default
    #expect(loop?.parameterValue(.inclinationTimeConstant) == Float(defaults.timeConstantSeconds))
    #expect(
      loop?.parameterValue(.rejectionLowerThreshold)
        == Float(defaults.rejectionLowerThresholdMetersPerSecondSquared))
  }
}
