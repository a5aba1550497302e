import ByteFormats
import Geometry
import JSON
import Telemetry
import Testing

/// The MAVLink CRC_EXTRA algorithm (mavgen, "CRC_EXTRA calculation"): X.25 over the message name
/// and each base field's type and name (wire order), each followed by a space, plus the array
/// length byte for arrays; then the two bytes of the CRC XORed together.
private func crcExtra(_ name: String, _ fields: [(type: String, name: String, arrayLength: UInt8)])
  -> UInt8
{
  var crc = CRC16MCRF4XX()
  func feed(_ text: String) {
    for byte in text.utf8 { crc.update(byte) }
  }
  feed(name + " ")
  for field in fields {
    feed(field.type + " ")
    feed(field.name + " ")
    if field.arrayLength > 0 { crc.update(field.arrayLength) }
  }
  return UInt8(crc.value & 0xFF) ^ UInt8(crc.value >> 8)
}

/// One scripted stream: 201 frames at 100 Hz through four segments, with two replies. The
/// attitudes use only + − × ÷ √ (no libm), so the bytes are the same on every machine.
struct MAVLinkScenario {
  struct Step {
    var frame: TelemetryFrame
    var segment: String
    var replyAfter: HostReply?
  }

  static let identity = MAVLinkIdentity(systemID: 1, componentID: 200)

  static var steps: [Step] {
    (0...200).map { k in
      var frame = TelemetryFrame()
      frame.sequence = UInt32(k)
      frame.sampleTimeNanoseconds = 5_000_000_000 + Int64(k) * 10_000_000
      let segment: String
      switch k {
      case 0..<50:
        segment = "level"
        frame.flags = k == 0 ? [.initialising] : [.rest]
      case 50..<100:
        segment = "roll_right"
        frame.attitude = Quaternion(w: 1, x: 0.006 * Double(k - 49), y: 0, z: 0).normalized
        frame.rateRadiansPerSecond = Vector3(0.5, 0, 0)
      case 100..<150:
        segment = "yaw_clockwise"
        frame.attitude = Quaternion(w: 1, x: 0, y: 0, z: -0.008 * Double(k - 99)).normalized
        frame.rateRadiansPerSecond = Vector3(0, 0, -0.8)
      default:
        segment = "pitch_up"
        frame.attitude = Quaternion(w: 1, x: 0, y: -0.005 * Double(k - 149), z: 0).normalized
        frame.rateRadiansPerSecond = Vector3(0, -0.5, 0)
        frame.linearAccelerationMetersPerSecondSquared = Vector3(0.5, 0, 0)
        if k == 170 { frame.flags = [.gap, .degradedTiming] }
      }
      frame.gravityBodyMetersPerSecondSquared = frame.attitude.inverseRotate(
        Vector3(0, 0, -standardGravity))
      frame.temperatureCelsius = 25 + 0.01 * Double(k)
      frame.latencyMicroseconds = 900
      var reply: HostReply?
      if k == 120 { reply = .ok("tare") }
      if k == 180 { reply = HostCommandError.rateNotDivisor(hertz: 30, sampleRateHz: 100).reply }
      return Step(frame: frame, segment: segment, replyAfter: reply)
    }
  }

  /// The stream's bytes and the sidecar describing every packet in Plumb's terms.
  static func generate() -> (stream: [UInt8], sidecar: JSONValue) {
    var encoder = TelemetryEncoder(format: .mavlink, outputRateHz: 100, mavlink: identity)
    var stream: [UInt8] = []
    var packets: [JSONValue] = []
    var sequence = 0
    func vector(_ v: Vector3) -> JSONValue { .array([.number(v.x), .number(v.y), .number(v.z)]) }
    for (k, step) in steps.enumerated() {
      let frame = step.frame
      stream += encoder.encode(frame)
      let heartbeat = k % 100 == 0
      if heartbeat {
        let status: Int = k == 0 ? 1 : k == 100 ? 4 : 5
        packets.append(
          .object([
            ("seq", .integer(sequence % 256)), ("msgid", .integer(0)),
            ("name", .string("HEARTBEAT")),
            ("type", .integer(40)), ("autopilot", .integer(8)), ("base_mode", .integer(0)),
            ("custom_mode", .integer(0)), ("system_status", .integer(status)),
            ("mavlink_version", .integer(3)),
          ]))
        sequence += 1
      }
      let q = frame.attitude
      packets.append(
        .object([
          ("seq", .integer(sequence % 256)), ("msgid", .integer(31)),
          ("name", .string("ATTITUDE_QUATERNION")), ("frame", .integer(k)),
          ("segment", .string(step.segment)),
          ("time_boot_ms", .integer(Int(frame.sampleTimeNanoseconds / 1_000_000))),
          ("plumb_attitude", .array([.number(q.w), .number(q.x), .number(q.y), .number(q.z)])),
          ("plumb_rate", vector(frame.rateRadiansPerSecond)),
        ]))
      sequence += 1
      if k % 10 == 0 {
        packets.append(
          .object([
            ("seq", .integer(sequence % 256)), ("msgid", .integer(30)),
            ("name", .string("ATTITUDE")), ("frame", .integer(k)),
            ("time_boot_ms", .integer(Int(frame.sampleTimeNanoseconds / 1_000_000))),
            ("plumb_attitude", .array([.number(q.w), .number(q.x), .number(q.y), .number(q.z)])),
            ("plumb_rate", vector(frame.rateRadiansPerSecond)),
          ]))
        sequence += 1
      }
      if k % 2 == 0 {
        packets.append(
          .object([
            ("seq", .integer(sequence % 256)), ("msgid", .integer(105)),
            ("name", .string("HIGHRES_IMU")), ("frame", .integer(k)),
            ("time_usec", .integer(Int(frame.sampleTimeNanoseconds / 1000))),
            ("plumb_specific_force", vector(frame.specificForceBodyMetersPerSecondSquared)),
            ("plumb_rate", vector(frame.rateRadiansPerSecond)),
            ("temperature", .number(frame.temperatureCelsius)),
            ("fields_updated", .integer(0x103F)),
          ]))
        sequence += 1
      }
      if heartbeat {
        // The encoder's health is not brought up to date here (the loop does that): zeros.
        let unhealthy = frame.flags.contains(.i2cRecovery) || frame.flags.contains(.clipping)
        packets.append(
          .object([
            ("seq", .integer(sequence % 256)), ("msgid", .integer(1)),
            ("name", .string("SYS_STATUS")), ("frame", .integer(k)),
            ("onboard_control_sensors_present", .integer(3)),
            ("onboard_control_sensors_enabled", .integer(3)),
            ("onboard_control_sensors_health", .integer(unhealthy ? 0 : 3)),
            ("load", .integer(0)), ("voltage_battery", .integer(65535)),
            ("current_battery", .integer(-1)), ("battery_remaining", .integer(-1)),
            ("drop_rate_comm", .integer(0)), ("errors_comm", .integer(0)),
          ]))
        sequence += 1
      }
      if let reply = step.replyAfter {
        stream += encoder.encode(reply)
        packets.append(
          .object([
            ("seq", .integer(sequence % 256)), ("msgid", .integer(253)),
            ("name", .string("STATUSTEXT")),
            ("severity", .integer(reply.status == .ok ? 6 : 4)),
            ("text", .string(reply.description)),
          ]))
        sequence += 1
      }
    }
    let sidecar = JSONValue.object([
      (
        "description",
        .string(
          "Plumb MAVLink v2 golden stream: 201 frames at 100 Hz (level, roll right, yaw clockwise, "
            + "pitch up) with two replies. Plumb values are in Plumb's frames (reference z up, "
            + "body x forward y left z up); check_mavlink.py converts them to NED/FRD itself.")
      ),
      ("system_id", .integer(1)), ("component_id", .integer(200)),
      (
        "crc_extra",
        .object([
          ("HEARTBEAT", .integer(50)), ("ATTITUDE_QUATERNION", .integer(246)),
          ("HIGHRES_IMU", .integer(93)), ("STATUSTEXT", .integer(83)), ("ATTITUDE", .integer(39)),
          ("SYS_STATUS", .integer(124)),
        ])
      ),
      ("packet_count", .integer(packets.count)), ("packets", .array(packets)),
    ])
    return (stream, sidecar)
  }
}

@Suite struct MAVLinkTests {
  /// CRC_EXTRA recomputed from the field lists in common.xml, restated here.
  @Test func crcExtraMatchesTheMessageDefinitions() {
    let heartbeat = crcExtra(
      "HEARTBEAT",
      [
        ("uint32_t", "custom_mode", 0), ("uint8_t", "type", 0), ("uint8_t", "autopilot", 0),
        ("uint8_t", "base_mode", 0), ("uint8_t", "system_status", 0),
        ("uint8_t", "mavlink_version", 0),
      ])
    let attitude = crcExtra(
      "ATTITUDE_QUATERNION",
      [("uint32_t", "time_boot_ms", 0)]
        + ["q1", "q2", "q3", "q4", "rollspeed", "pitchspeed", "yawspeed"].map { ("float", $0, 0) })
    let imu = crcExtra(
      "HIGHRES_IMU",
      [("uint64_t", "time_usec", 0)]
        + [
          "xacc", "yacc", "zacc", "xgyro", "ygyro", "zgyro", "xmag", "ymag", "zmag", "abs_pressure",
          "diff_pressure", "pressure_alt", "temperature",
        ].map { ("float", $0, 0) } + [("uint16_t", "fields_updated", 0)])
    let statusText = crcExtra("STATUSTEXT", [("uint8_t", "severity", 0), ("char", "text", 50)])
    #expect([heartbeat, attitude, imu, statusText] == [50, 246, 93, 83])
    #expect(MAVLink.heartbeat.crcExtra == heartbeat)
    #expect(MAVLink.attitudeQuaternion.crcExtra == attitude)
    #expect(MAVLink.highResIMU.crcExtra == imu)
    #expect(MAVLink.statusText.crcExtra == statusText)
    #expect(MAVLink.heartbeat.id == 0 && MAVLink.attitudeQuaternion.id == 31)
    #expect(MAVLink.highResIMU.id == 105 && MAVLink.statusText.id == 253)
  }

  /// Packets pymavlink 2.4.50 produced for the same messages (`msg.pack(mav)`), pasted here.
  @Test(arguments: [
    (
      MAVLinkMessage.heartbeat(.init(type: 40, autopilot: 8, systemStatus: 4)), UInt8(7),
      "fd0900000701c8000000000000002808000403b3da"
    ),
    (
      .attitudeQuaternion(
        .init(
          timeBootMilliseconds: 1000, attitude: MAVLinkQuaternion(w: 1, x: 0, y: 0, z: 0),
          rateRadiansPerSecond: .zero)), 8, "fd0800000801c81f0000e80300000000803fea9b"
    ),
    (
      .statusText(.init(severity: 6, text: "OK tare")), 9,
      "fd0800000901c8fd0000064f4b2074617265543f"
    ),
  ])
  func bytesMatchPymavlink(message: MAVLinkMessage, sequence: UInt8, expected: String) {
    var output = [UInt8](repeating: 0, count: 128)
    let packet = MAVLinkPacket(sequence: sequence, systemID: 1, componentID: 200, message: message)
    let n = output.withUnsafeMutableBytes { MAVLink.encode(packet, into: $0) }
    #expect(hex(Array(output[0..<n])) == expected)
    let back = Array(output[0..<n]).withUnsafeBytes { MAVLink.decode(packet: $0) }
    #expect(back == .success(packet))
  }

  @Test func trailingZerosAreCutButOneByteStays() {
    var output = [UInt8](repeating: 0xAA, count: 128)
    let empty = MAVLinkPacket(
      sequence: 0, systemID: 1, componentID: 1,
      message: .attitudeQuaternion(
        .init(timeBootMilliseconds: 0, attitude: .zero, rateRadiansPerSecond: .zero)))
    let n = output.withUnsafeMutableBytes { MAVLink.encode(empty, into: $0) }
    #expect(n == 13 && output[1] == 1, "payload length 1: the first byte is never cut")
    #expect(Array(output[0..<n]).withUnsafeBytes { MAVLink.decode(packet: $0) } == .success(empty))
  }

  @Test func aLevelStillFrameSendsNoNegativeZeros() {
    // (0, −0, −0) rates would be non-zero bytes on the wire and stop the truncation.
    var encoder = TelemetryEncoder(format: .mavlink)
    let bytes = encoder.encode(TelemetryFrame())
    let heartbeat = 21
    #expect(bytes[heartbeat + 1] == 8, "ATTITUDE_QUATERNION payload: time_boot_ms and q1 only")
    #expect(bytes[heartbeat + 20 + 1] == 1, "ATTITUDE payload: all zero, one byte stays")
    // HIGHRES_IMU 74; SYS_STATUS 43 (the battery fields say "not measured": UINT16_MAX, −1, −1).
    #expect(bytes.count == heartbeat + 20 + 13 + 74 + 43)
  }

  @Test func scheduleAndSequenceAt100Hz() {
    var encoder = TelemetryEncoder(format: .mavlink, outputRateHz: 100)
    var decoder = StreamDecoder(format: .mavlink)
    var ids: [UInt32] = []
    var sequences: [UInt8] = []
    for k in 0..<300 {
      var frame = TelemetryFrame()
      frame.sequence = UInt32(k)
      decoder.decode(encoder.encode(frame)) { message in
        guard case .mavlink(let packet) = message else { return }
        ids.append(packet.message.info.id)
        sequences.append(packet.sequence)
      }
    }
    #expect(ids.filter { $0 == 0 }.count == 3, "HEARTBEAT at 1 Hz: frames 0, 100, 200")
    #expect(ids.filter { $0 == 31 }.count == 300, "ATTITUDE_QUATERNION every frame")
    #expect(ids.filter { $0 == 105 }.count == 150, "HIGHRES_IMU every 2nd frame at 100 Hz")
    #expect(ids.filter { $0 == 30 }.count == 30, "ATTITUDE every 10th frame at 100 Hz")
    #expect(ids.filter { $0 == 1 }.count == 3, "SYS_STATUS at 1 Hz")
    #expect(ids.count == 486)
    for i in 1..<sequences.count { #expect(sequences[i] == sequences[i - 1] &+ 1) }
    #expect(decoder.statistics.framesLost == 0 && decoder.statistics.crcErrors == 0)
    #expect(MAVLinkStreamRates.default.divider(.highResIMU, outputRateHz: 50) == 1)
    #expect(MAVLinkStreamRates.default.divider(.highResIMU, outputRateHz: 200) == 4)
  }

  @Test func heartbeatStatusFollowsTheFlags() {
    #expect(TelemetryEncoder.systemStatus([.initialising, .degradedTiming]) == 1)
    #expect(TelemetryEncoder.systemStatus([.i2cRecovery]) == 5)
    #expect(TelemetryEncoder.systemStatus([.degradedTiming]) == 5)
    #expect(TelemetryEncoder.systemStatus([.rest, .gap, .clipping]) == 4)
  }

  @Test func timeBootMillisecondsComesFromTheSampleTime() {
    #expect(TelemetryEncoder.timeBootMilliseconds(1_234_567_890) == 1234)
    #expect(TelemetryEncoder.timeBootMilliseconds(-5) == 0)
    #expect(TelemetryEncoder.timeBootMilliseconds(Int64(UInt32.max) * 1_000_000 + 7_000_000) == 6)
  }

  @Test func goldenStreamAndSidecar() {
    let (stream, sidecar) = MAVLinkScenario.generate()
    expectGolden("mavlink_stream.raw", stream)
    expectGolden("mavlink_stream.json", Array(sidecar.formatted().utf8))
  }

  @Test func goldenStreamDecodesBackToTheScenario() {
    let (stream, _) = MAVLinkScenario.generate()
    let steps = MAVLinkScenario.steps
    var decoder = StreamDecoder(format: .mavlink)
    var samples: [AttitudeSample] = []
    var replies: [HostReply] = []
    decoder.decode(stream) { message in
      if let sample = message.attitudeSample { samples.append(sample) }
      if let reply = message.hostReply { replies.append(reply) }
    }
    decoder.finish()
    let statistics = decoder.statistics
    // 201 ATTITUDE_QUATERNION, 101 HIGHRES_IMU, 21 ATTITUDE, 3 HEARTBEAT, 3 SYS_STATUS, 2 replies.
    #expect(statistics.frames == 331 && statistics.telemetryFrames == 201)
    #expect(statistics.bytesSkipped == 0 && statistics.crcErrors == 0 && statistics.framesLost == 0)
    #expect(statistics.bytesAccepted == UInt64(stream.count))
    #expect(
      replies.map(\.description) == ["OK tare", "ERR 30 Hz does not divide 100 Hz: try 25 or 50"])
    #expect(samples.count == steps.count)
    for (sample, step) in zip(samples, steps) {
      #expect(sample.attitude.angle(to: step.frame.attitude) < 1e-6)
      #expect(
        sample.sampleTimeNanoseconds == step.frame.sampleTimeNanoseconds / 1_000_000 * 1_000_000)
    }
  }

  @Test func signedPacketsAreAcceptedAndUnknownFlagsRefused() {
    var output = [UInt8](repeating: 0, count: 128)
    let packet = MAVLinkPacket(
      sequence: 3, systemID: 1, componentID: 200,
      message: .heartbeat(.init(type: 40, autopilot: 8, systemStatus: 4)))
    let n = output.withUnsafeMutableBytes { MAVLink.encode(packet, into: $0) }
    var signed = Array(output[0..<n - 2])
    signed[2] = 0x01  // MAVLINK_IFLAG_SIGNED: the CRC covers the flags, so recompute it
    var crc = CRC16MCRF4XX()
    signed[1...].withUnsafeBytes { crc.update($0) }
    crc.update(50)
    signed +=
      [UInt8(crc.value & 0xFF), UInt8(crc.value >> 8)] + [UInt8](repeating: 0x5A, count: 13)
    var decoder = StreamDecoder(format: .mavlink)
    var decoded: [DecodedMessage] = []
    decoder.decode(signed) { decoded.append($0) }
    #expect(decoded == [.mavlink(packet)])
    var unknownFlags = signed
    unknownFlags[2] = 0x02
    #expect(
      unknownFlags.withUnsafeBytes { MAVLink.decode(packet: $0) }
        == .failure(.unsupportedIncompatibilityFlags(2)))
  }
}
