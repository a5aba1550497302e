import ByteFormats
import Telemetry
import Testing

/// Packets pymavlink 2.4.50 packed (`msg.pack(mav)`, MAVLink 2) for the field values written in
/// `tools/scripts/mavlink_vectors.py`, printed by `.venv/bin/python
/// tools/scripts/mavlink_vectors.py` and pasted here. Plumb is 1/200; the ground station 255/190.
enum PymavlinkVectors {
  static let attitude = """
    fd1c00000a01c81e0000393000000000003f000080be0000c03f0000003e000080bd00000040a41d
    """
  static let sysStatus = """
    fd1f00000b01c8010000030000000300000003000000fa00ffffffff000007000100020003000400
    ffd2ff
    """
  static let sysStatusExtended = """
    fd2400000c01c8010000030000800300000001000000e80338319600190000000000000000000000
    5001000000018e62
    """
  static let autopilotVersion = """
    fd4e00000d01c89400000a200000000000000807060504030201ff02010000000000000001060700
    000034127856a1b2c3d4e5f60718000000000000000001020304050607080102030405060708090a
    0b0c0d0e0f1011122769
    """
  static let autopilotVersionNoUid2 = """
    fd1300000e01c89400000a200000000000000000000000000000ff02015745
    """
  static let commandAck = "fd0a00000f01c84d00000002000000000000ffbe9789"
  static let commandAckShort = "fd0300001001c84d000016a403b079"
  static let commandAckProgress = "fd0a00001101c84d0000f1000528f9ffffffffbebc52"
  static let paramValue = """
    fd1900001201c81600000000c84205000200494d555f524154455f485a000000000006e093
    """
  static let paramValue16 = """
    fd1900001301c81600000000003f050004004142434445464748494a4b4c4d4e4f5009d795
    """
  static let messageInterval = "fd0500001401c8f40000102700001e88de"
  static let messageIntervalOff = "fd0500001501c8f40000ffffffff69bdff"
  static let ftpNak = "fd1000001601c86e000000ffbe2a0000810103000000000000077fed"
  static let statustextError = """
    fd1600001701c8fd000003494d55206c6f73743a204932432074696d656f7574e2f6
    """
  static let gcsHeartbeat = "fd09000000ffbe000000000000000608c00403e473"
  static let commandLong = """
    fd20000001ffbe4c0000000014430000000000000000000000000000000000000000000000000002
    01c83f78
    """
  static let commandLongInterval = """
    fd21000002ffbe4c00000000f04100409c46000000000000000000000000000000000000c0bfff01
    01c8016254
    """
  static let commandInt = """
    fd23000003ffbe4b00000000f84100409c450000803e000000c0eb32a4f8b168de3a00004841ff01
    01c80600010901
    """
  static let paramRequestList = "fd02000004ffbe15000001c8dfe2"
  static let paramRequestRead = "fd0f000005ffbe140000ffff01c8494d555f524154455f485a81d6"
  static let paramRequestReadIndex = "fd03000006ffbe1400000300017629"
  static let paramSet = "fd17000007ffbe1700000000484301c8494d555f524154455f485a0000000000065cf4"
  static let requestDataStream = "fd06000008ffbe4200000a0001c800018ab8"
  static let ftpRequest = "fd10000009ffbe6e00000001c82900000301000000000000002fadec"
  static let commandLongOther = """
    fd2000000affbe4c00000000803f0000000000000000000000000000000000000000000000009001
    02017473
    """
  static let commandLongBroadcast = """
    fd1e00000bffbe4c0000000000000000000000000000000000000000000000000000000000000702
    1446
    """
  static let commandLongOtherComponent = """
    fd2000000cffbe4c00000000803f0000000000000000000000000000000000000000000000009001
    0101652a
    """
  static let systemTime = "fd0a00000dffbe02000000401e18240a06008813d6be"
  static let timesync = "fd0c00000effbe6f0000000000000000000015cd5b07292d"
  static let commandLongSigned = """
    fd2001000fffbe4c00000000803f0000000000000000000000000000000000000000000000000802
    01c8ca3700050403020100478f5bb17835
    """
  static let v1Heartbeat = "fe0910ffbe00000000000608c0040347cc"
}

/// The component messages against pymavlink: the field values below restate those of
/// `mavlink_vectors.py`; the table constants restate common.xml, not the source.
@Suite struct MAVLinkComponentMessagesTests {
  static let plumb = (system: UInt8(1), component: UInt8(200))
  static let station = (system: UInt8(255), component: UInt8(190))

  /// Every message Plumb sends: pymavlink's bytes decode to the fields, and Plumb's encoder
  /// writes exactly those bytes.
  static let sent: [(name: String, sequence: UInt8, message: MAVLinkMessage, hex: String)] = [
    (
      "ATTITUDE", 10,
      .attitude(
        .init(
          timeBootMilliseconds: 12345, rollRadians: 0.5, pitchRadians: -0.25, yawRadians: 1.5,
          rateRadiansPerSecond: MAVLinkVector(x: 0.125, y: -0.0625, z: 2))),
      PymavlinkVectors.attitude
    ),
    (
      "SYS_STATUS", 11,
      .systemStatus(
        .init(
          sensorsPresent: 3, sensorsEnabled: 3, sensorsHealth: 3, loadPermille: 250,
          communicationErrors: 7, errorsCount1: 1, errorsCount2: 2, errorsCount3: 3,
          errorsCount4: 4)),
      PymavlinkVectors.sysStatus
    ),
    (
      "SYS_STATUS with extensions", 12,
      .systemStatus(
        .init(
          sensorsPresent: 0x8000_0003, sensorsEnabled: 3, sensorsHealth: 1, loadPermille: 1000,
          batteryVoltageMillivolts: 12600, batteryCurrentCentiamperes: 150,
          batteryRemainingPercent: 80, dropRateCommunicationCentipercent: 25,
          sensorsPresentExtended: 1, sensorsEnabledExtended: 1)),
      PymavlinkVectors.sysStatusExtended
    ),
    (
      "AUTOPILOT_VERSION", 13,
      .autopilotVersion(
        .init(
          capabilities: 8192 | 2 | 8, flightSoftwareVersion: 0x0001_02FF,
          osSoftwareVersion: 0x0601_0000, boardVersion: 7,
          flightCustomVersion: MAVLinkBytes8([0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6, 0x07, 0x18]),
          osCustomVersion: MAVLinkBytes8(Array(1...8)), vendorID: 0x1234, productID: 0x5678,
          uid: 0x0102_0304_0506_0708, uid2: MAVLinkBytes18(Array(1...18)))),
      PymavlinkVectors.autopilotVersion
    ),
    (
      "AUTOPILOT_VERSION without uid2", 14,
      .autopilotVersion(.init(capabilities: 8202, flightSoftwareVersion: 0x0001_02FF)),
      PymavlinkVectors.autopilotVersionNoUid2
    ),
    (
      "COMMAND_ACK", 15,
      .commandAck(.init(command: 512, result: 0, targetSystem: 255, targetComponent: 190)),
      PymavlinkVectors.commandAck
    ),
    (
      "COMMAND_ACK without extensions", 16, .commandAck(.init(command: 42006, result: 3)),
      PymavlinkVectors.commandAckShort
    ),
    (
      "COMMAND_ACK in progress", 17,
      .commandAck(
        .init(
          command: 241, result: 5, progress: 40, resultParameter2: -7, targetSystem: 255,
          targetComponent: 190)),
      PymavlinkVectors.commandAckProgress
    ),
    (
      "PARAM_VALUE", 18,
      .paramValue(.init(parameterID: "IMU_RATE_HZ", value: 100, type: 6, count: 5, index: 2)),
      PymavlinkVectors.paramValue
    ),
    (
      "PARAM_VALUE with a 16-character name", 19,
      .paramValue(
        .init(parameterID: "ABCDEFGHIJKLMNOP", value: 0.5, type: 9, count: 5, index: 4)),
      PymavlinkVectors.paramValue16
    ),
    (
      "MESSAGE_INTERVAL", 20, .messageInterval(.init(messageID: 30, intervalMicroseconds: 10000)),
      PymavlinkVectors.messageInterval
    ),
    (
      "MESSAGE_INTERVAL off", 21,
      .messageInterval(.init(messageID: 105, intervalMicroseconds: -1)),
      PymavlinkVectors.messageIntervalOff
    ),
    (
      "FILE_TRANSFER_PROTOCOL NAK", 22,
      .fileTransferProtocol(
        .init(
          targetSystem: 1, targetComponent: 200,
          payload: MAVLinkFTPPayload(sequence: 41, opcode: 3, size: 1)
        ).negativeAcknowledgement(toSystem: 255, component: 190)),
      PymavlinkVectors.ftpNak
    ),
    (
      "STATUSTEXT", 23, .statusText(.init(severity: 3, text: "IMU lost: I2C timeout")),
      PymavlinkVectors.statustextError
    ),
  ]

  /// What a ground station sends Plumb: pymavlink's bytes decode to the fields.
  static let received: [(name: String, sequence: UInt8, message: MAVLinkMessage, hex: String)] = [
    (
      "HEARTBEAT of a GCS", 0,
      .heartbeat(.init(type: 6, autopilot: 8, baseMode: 192, systemStatus: 4)),
      PymavlinkVectors.gcsHeartbeat
    ),
    (
      "COMMAND_LONG", 1,
      .commandLong(.init(targetSystem: 1, targetComponent: 200, command: 512, param1: 148)),
      PymavlinkVectors.commandLong
    ),
    (
      "COMMAND_LONG with every field", 2,
      .commandLong(
        .init(
          targetSystem: 1, targetComponent: 200, command: 511, confirmation: 1, param1: 30,
          param2: 20000, param7: -1.5)),
      PymavlinkVectors.commandLongInterval
    ),
    (
      "COMMAND_INT", 3,
      .commandInt(
        .init(
          targetSystem: 1, targetComponent: 200, frame: 6, command: 511, autocontinue: 1,
          param1: 31, param2: 5000, param3: 0.25, param4: -2, x: -123_456_789, y: 987_654_321,
          z: 12.5)),
      PymavlinkVectors.commandInt
    ),
    (
      "PARAM_REQUEST_LIST", 4, .paramRequestList(.init(targetSystem: 1, targetComponent: 200)),
      PymavlinkVectors.paramRequestList
    ),
    (
      "PARAM_REQUEST_READ by name", 5,
      .paramRequestRead(.init(targetSystem: 1, targetComponent: 200, parameterID: "IMU_RATE_HZ")),
      PymavlinkVectors.paramRequestRead
    ),
    (
      "PARAM_REQUEST_READ by index", 6,
      .paramRequestRead(.init(targetSystem: 1, targetComponent: 0, parameterIndex: 3)),
      PymavlinkVectors.paramRequestReadIndex
    ),
    (
      "PARAM_SET", 7,
      .paramSet(
        .init(
          targetSystem: 1, targetComponent: 200, parameterID: "IMU_RATE_HZ", value: 200, type: 6)),
      PymavlinkVectors.paramSet
    ),
    (
      "REQUEST_DATA_STREAM", 8,
      .requestDataStream(
        .init(targetSystem: 1, targetComponent: 200, streamID: 0, rateHertz: 10, startStop: 1)),
      PymavlinkVectors.requestDataStream
    ),
    (
      "FILE_TRANSFER_PROTOCOL ListDirectory", 9,
      .fileTransferProtocol(
        .init(
          targetSystem: 1, targetComponent: 200,
          payload: {
            var payload = MAVLinkFTPPayload(sequence: 41, opcode: 3, size: 1)
            payload[data: 0] = UInt8(ascii: "/")
            return payload
          }())),
      PymavlinkVectors.ftpRequest
    ),
  ]

  @Test(arguments: sent.indices)
  func plumbEncodesWhatPymavlinkPacks(index: Int) {
    let (name, sequence, message, hexText) = Self.sent[index]
    let packet = MAVLinkPacket(
      sequence: sequence, systemID: Self.plumb.system, componentID: Self.plumb.component,
      message: message)
    var output = [UInt8](repeating: 0, count: MAVLink.maximumSentPacketCount)
    let n = output.withUnsafeMutableBytes { MAVLink.encode(packet, into: $0) }
    #expect(hex(Array(output[0..<n])) == hex(bytes(hex: hexText)), "\(name)")
    let decoded = bytes(hex: hexText).withUnsafeBytes { MAVLink.decode(packet: $0) }
    #expect(decoded == .success(packet), "\(name)")
  }

  @Test(arguments: received.indices)
  func pymavlinkPacketsDecodeToTheirFields(index: Int) {
    let (name, sequence, message, hexText) = Self.received[index]
    let packet = MAVLinkPacket(
      sequence: sequence, systemID: Self.station.system, componentID: Self.station.component,
      message: message)
    let decoded = bytes(hex: hexText).withUnsafeBytes { MAVLink.decode(packet: $0) }
    #expect(decoded == .success(packet), "\(name)")
    // Plumb's encoder agrees with pymavlink in both directions.
    var output = [UInt8](repeating: 0, count: MAVLink.maximumSentPacketCount)
    let n = output.withUnsafeMutableBytes { MAVLink.encode(packet, into: $0) }
    #expect(Array(output[0..<n]) == bytes(hex: hexText), "\(name)")
  }

  /// The table restated from common.xml/standard.xml as pymavlink's parser reads them
  /// (`mavlink_vectors.py` prints it): id, CRC_EXTRA, base and full payload length.
  @Test func theMessageTableMatchesTheXML() {
    let expected: [(UInt32, StaticString, UInt8, Int, Int)] = [
      (0, "HEARTBEAT", 50, 9, 9), (1, "SYS_STATUS", 124, 31, 43),
      (20, "PARAM_REQUEST_READ", 214, 20, 20), (21, "PARAM_REQUEST_LIST", 159, 2, 2),
      (22, "PARAM_VALUE", 220, 25, 25), (23, "PARAM_SET", 168, 23, 23),
      (30, "ATTITUDE", 39, 28, 28), (31, "ATTITUDE_QUATERNION", 246, 32, 48),
      (66, "REQUEST_DATA_STREAM", 148, 6, 6), (75, "COMMAND_INT", 158, 35, 35),
      (76, "COMMAND_LONG", 152, 33, 33), (77, "COMMAND_ACK", 143, 3, 10),
      (105, "HIGHRES_IMU", 93, 62, 63), (110, "FILE_TRANSFER_PROTOCOL", 84, 254, 254),
      (148, "AUTOPILOT_VERSION", 178, 60, 78), (244, "MESSAGE_INTERVAL", 95, 6, 6),
      (253, "STATUSTEXT", 83, 51, 54),
    ]
    #expect(MAVLink.knownMessages.count == expected.count)
    for (id, name, crcExtra, baseLength, maximumLength) in expected {
      guard let info = MAVLink.info(forID: id) else {
        Issue.record("no table entry for \(id)")
        continue
      }
      #expect("\(info.name)" == "\(name)")
      #expect(info.crcExtra == crcExtra, "\(name)")
      #expect(info.baseLength == baseLength && info.maximumLength == maximumLength, "\(name)")
      #expect(MAVLink.knownMessages.contains(info))
    }
    for id: UInt32 in [2, 29, 32, 111, 147, 149, 245, 252, 254, 1 << 23] {
      #expect(MAVLink.info(forID: id) == nil)
    }
    #expect(MAVLink.maximumSentPacketCount == 10 + 254 + 2)
    #expect(MAVLink.maximumPlumbPacketCount == 10 + 63 + 2)
  }

  /// common.xml's numbers, restated.
  @Test func constantsMatchCommonXML() {
    #expect(MAVLink.Command.preflightCalibration == 241)
    #expect(MAVLink.Command.getMessageInterval == 510)
    #expect(MAVLink.Command.setMessageInterval == 511)
    #expect(MAVLink.Command.requestMessage == 512)
    #expect(MAVLink.Command.requestProtocolVersion == 519)
    #expect(MAVLink.Command.requestAutopilotCapabilities == 520)
    #expect(MAVLink.Command.fixedMagCalYaw == 42006)
    #expect(
      [
        MAVLink.CommandResult.accepted, MAVLink.CommandResult.temporarilyRejected,
        MAVLink.CommandResult.denied, MAVLink.CommandResult.unsupported,
        MAVLink.CommandResult.failed, MAVLink.CommandResult.inProgress,
      ] == [0, 1, 2, 3, 4, 5])
    #expect(MAVLink.parameterTypeInt32 == 6 && MAVLink.parameterTypeReal32 == 9)
    #expect(MAVLink.severityError == 3)
    #expect(MAVLink.sensor3DGyro == 1 && MAVLink.sensor3DAccel == 2)
    #expect(MAVLink.protocolCapabilityVersion2 == 8192)
    #expect(MAVLink.protocolCapabilityParamFloat == 2)
    #expect(MAVLink.protocolCapabilityCommandInt == 8)
    #expect(MAVLink.FTP.opcodeNAK == 129 && MAVLink.FTP.opcodeACK == 128)
    #expect(MAVLink.FTP.errorUnknownCommand == 7)
  }

  @Test func theFTPNAKAnswersTheRequest() {
    var request = MAVLinkFTPPayload(
      sequence: 0xFFFF, session: 3, opcode: 5, size: 16, burstComplete: 1, offset: 4096)
    request[data: 0] = 0x55
    let ftp = MAVLinkMessage.FileTransferProtocol(
      targetNetwork: 7, targetSystem: 1, targetComponent: 200, payload: request)
    let nak = ftp.negativeAcknowledgement(toSystem: 255, component: 190)
    #expect(nak.targetNetwork == 0 && nak.targetSystem == 255 && nak.targetComponent == 190)
    #expect(nak.payload.sequence == 0, "seq + 1 wraps")
    #expect(nak.payload.session == 3 && nak.payload.opcode == 129)
    #expect(nak.payload.requestOpcode == 5 && nak.payload.size == 1)
    #expect(nak.payload.burstComplete == 0 && nak.payload.offset == 0)
    #expect(nak.payload[data: 0] == 7)
    #expect((1..<MAVLinkFTPPayload.dataCount).allSatisfy { nak.payload[data: $0] == 0 })
    let failed = ftp.negativeAcknowledgement(toSystem: 255, component: 190, error: 1)
    #expect(failed.payload[data: 0] == 1)
    // The header over the bytes: `<HBBBBBBI` (pymavlink's mavftp_op).
    #expect(request[0] == 0xFF && request[1] == 0xFF && request[2] == 3 && request[3] == 5)
    #expect(request[4] == 16 && request[5] == 0 && request[6] == 1 && request[7] == 0)
    #expect(request[8] == 0x00 && request[9] == 0x10 && request[10] == 0 && request[11] == 0)
    #expect(request[12] == 0x55)
  }

  @Test func aParameterIDIsSixteenNULPaddedBytes() {
    let name: MAVLinkParameterID = "IMU_RATE_HZ"
    #expect(name == MAVLinkParameterID("IMU_RATE_HZ"))
    #expect(name.length == 11 && name.description == "IMU_RATE_HZ")
    #expect((11..<16).allSatisfy { name[$0] == 0 })
    let full = MAVLinkParameterID("ABCDEFGHIJKLMNOPQRS")
    #expect(full.length == 16 && full.description == "ABCDEFGHIJKLMNOP", "cut to 16, no NUL")
    #expect(full == "ABCDEFGHIJKLMNOP")
    #expect(name != "IMU_RATE_H" && name != "IMU_RATE_HZ_")
    #expect(MAVLinkParameterID().length == 0 && MAVLinkParameterID().description.isEmpty)
    // Bytes after a NUL count: a packet's bytes decode and encode back unchanged.
    var tail = name
    tail[14] = 0x41
    #expect(tail != name && tail.description == "IMU_RATE_HZ")
    #expect(Set([name, MAVLinkParameterID("IMU_RATE_HZ"), tail]).count == 2)
  }

  @Test func inlineArraysHoldTheirBytesWithoutPadding() {
    #expect(MemoryLayout<MAVLinkParameterID>.size == 16)
    #expect(MemoryLayout<MAVLinkBytes8>.size == 8)
    #expect(MemoryLayout<MAVLinkBytes18>.size == 18)
    #expect(MemoryLayout<MAVLinkFTPPayload>.size == 251)
    var uid2 = MAVLinkBytes18()
    uid2[17] = 9
    #expect(uid2.withBytes { Array($0) } == [UInt8](repeating: 0, count: 17) + [9])
    #expect(
      uid2 != MAVLinkBytes18() && uid2 == MAVLinkBytes18([UInt8](repeating: 0, count: 17) + [9]))
    var payload = MAVLinkFTPPayload()
    payload[250] = 1
    #expect(payload[data: 238] == 1 && payload != MAVLinkFTPPayload())
  }

  @Test func targetsAndAddressing() {
    let forPlumb = MAVLinkMessage.commandLong(
      .init(targetSystem: 1, targetComponent: 200, command: 512))
    #expect(forPlumb.target! == (1, 200))
    #expect(forPlumb.isAddressed(toSystem: 1, component: 200))
    #expect(!forPlumb.isAddressed(toSystem: 1, component: 1))
    #expect(!forPlumb.isAddressed(toSystem: 2, component: 200))
    let allComponents = MAVLinkMessage.paramRequestList(.init(targetSystem: 1, targetComponent: 0))
    #expect(allComponents.isAddressed(toSystem: 1, component: 200))
    #expect(!allComponents.isAddressed(toSystem: 3, component: 200))
    let broadcast = MAVLinkMessage.paramRequestList(.init(targetSystem: 0, targetComponent: 0))
    #expect(broadcast.isAddressed(toSystem: 9, component: 9))
    let heartbeat = MAVLinkMessage.heartbeat(.init(type: 6, autopilot: 8, systemStatus: 4))
    #expect(heartbeat.target == nil && heartbeat.isAddressed(toSystem: 1, component: 200))
    let ftp = MAVLinkMessage.fileTransferProtocol(
      .init(targetSystem: 1, targetComponent: 201, payload: .init()))
    #expect(ftp.target! == (1, 201))
    #expect(
      MAVLinkMessage.commandAck(.init(command: 1, result: 0, targetSystem: 4, targetComponent: 5))
        .target! == (4, 5))
  }
}
