import Telemetry
import Testing

/// The run-time parameters (FORMATS.md "Parameters") and MAVLink's stream rates.
@Suite struct ParameterTests {
  private func parse(_ line: String, context: HostCommandContext = HostCommandContext())
    -> Result<HostCommand, HostCommandError>?
  {
    var parser = HostCommandParser()
    parser.receive(Array((line + "\n").utf8))
    return parser.poll(context: context)
  }

  private let mavlink = HostCommandContext(format: .mavlink)

  @Test func namesFitMAVLinkAndAreUnique() {
    let names = PlumbParameter.allCases.map(\.nameString)
    #expect(Set(names).count == names.count)
    for name in names { #expect(name.utf8.count <= 16, "\(name): param_id is char[16]") }
    #expect(PlumbParameter.named("sr_imu_hz") == .imuRate, "names are compared without case")
    // MAVLink pads param_id with NULs.
    let padded: [UInt8] = Array("ATT_TAU_S".utf8) + [UInt8](repeating: 0, count: 7)
    #expect(padded.withUnsafeBytes { PlumbParameter.named($0) } == .inclinationTimeConstant)
    #expect(PlumbParameter.named("SR_IMU") == nil && PlumbParameter.named("") == nil)
  }

  @Test func setParsesIntoTheCommandItStandsFor() {
    #expect(parse("set SR_IMU_HZ 25", context: mavlink) == .success(.set(.imuRate, 25)))
    #expect(parse("SET att_tau_s 2.5") == .success(.set(.inclinationTimeConstant, 2.5)))
    #expect(parse("set OUT_RATE_HZ 50") == .success(.rate(hertz: 50)), "the rate command")
    #expect(parse("set ATT_TARE 1") == .success(.tare), "the tare command")
    #expect(parse("set ATT_TARE 0") == .success(.set(.tare, 0)), "does nothing, accepted")
    #expect(parse("calibrate gyro") == .success(.calibrateGyro))
    #expect(parse("Calibrate GYRO") == .success(.calibrateGyro))
  }

  @Test func setRefusesWithAReasonThatFitsAReply() {
    let cases: [(String, HostCommandError)] = [
      ("set", .missingArgument(.set)),
      ("set SR_IMU_HZ", .missingArgument(.set)),
      ("set SR_IMU_HZ 1 2", .unexpectedArgument(.set, "2")),
      ("set NOPE 1", .unknownParameter("NOPE")),
      ("set SR_IMU_HZ fast", .invalidNumber("fast")),
      ("set SR_IMU_HZ 1e", .invalidNumber("1e")),
      ("set SR_IMU_HZ 1e1000", .invalidNumber("1e1000")),
      ("set SR_IMU_HZ 2000", .parameterOutOfRange(.imuRate, value: 2000)),
      ("set SR_IMU_HZ -1", .parameterOutOfRange(.imuRate, value: -1)),
      ("set ATT_TAU_S 0.01", .parameterOutOfRange(.inclinationTimeConstant, value: 0.01)),
      ("set OUT_RATE_HZ 2.5", .parameterNotWhole(.outputRate, value: 2.5)),
      ("set OUT_RATE_HZ 30", .rateNotDivisor(hertz: 30, sampleRateHz: 100)),
      ("set OUT_RATE_HZ 200", .rateOutOfRange(hertz: 200, sampleRateHz: 100)),
      ("set ATT_TARE 2", .parameterOutOfRange(.tare, value: 2)),
      ("calibrate", .missingArgument(.calibrate)),
      ("calibrate accel", .unexpectedArgument(.calibrate, "accel")),
    ]
    for (line, error) in cases {
      #expect(parse(line) == .failure(error), "\(line)")
      #expect(error.reply.text.count <= HostReply.maximumTextLength, "\(line)")
    }
    #expect(
      HostCommandError.parameterOutOfRange(.imuRate, value: 2000).reply.description
        == "ERR SR_IMU_HZ 2000: must be 0 to 1000 Hz")
    #expect(
      HostCommandError.parameterOutOfRange(.inclinationTimeConstant, value: 0.01).reply
        .description == "ERR ATT_TAU_S 0.01: must be 0.5 to 10 s")
  }

  /// A stream rate that would overfill the line is refused like a `rate` command (115200 baud:
  /// HIGHRES_IMU at 100 Hz as well would need 106 %).
  @Test func streamRatesAreHeldToTheLinkBudget() {
    guard case .failure(.linkBudget(let refusal))? = parse("set SR_IMU_HZ 100", context: mavlink)
    else {
      Issue.record("HIGHRES_IMU at 100 Hz must not fit 115200 baud beside the other streams")
      return
    }
    #expect(refusal.bytesPerSecond == 4400 + 7400 + 400 + 43 + 21)
    // In another format the streams are not on the line: the check waits for `format mavlink`.
    #expect(parse("set SR_IMU_HZ 100") == .success(.set(.imuRate, 100)))
    var fast = mavlink
    fast.baudRate = 230_400
    #expect(parse("set SR_IMU_HZ 100", context: fast) == .success(.set(.imuRate, 100)))
  }

  /// A recording notes a `set` by its line; the line must read back as the same Float, for the
  /// values MAVLink brings (any float in range).
  @Test func setLinesReadBackAsTheSameValue() {
    var generator = SplitMix64(seed: 7)
    for _ in 0..<2000 {
      let value = Float(Double(generator.next() % 1_000_000_000) / 1e6)
      let parameter = PlumbParameter.imuRate
      let line = HostCommand.set(parameter, value).line
      #expect(parse(line) == .success(.set(parameter, value)), "\(line)")
    }
    // Swift writes the smallest with an exponent (1e-05, and a subnormal's 1e-45).
    for value: Float in [0, 0.1, 1 / 3, 99.99999, 1000, 0.00001, 1.2345e-7, .leastNonzeroMagnitude]
    {
      let line = HostCommand.set(.attitudeRate, value).line
      #expect(parse(line) == .success(.set(.attitudeRate, value)), "\(line)")
    }
  }

  @Test func decimalNumbersParseExactly() {
    func number(_ text: String) -> Double? {
      Array(text.utf8).withUnsafeBytes { DecimalNumber.parse($0) }
    }
    #expect(number("25") == 25 && number("+3") == 3 && number("-0.5") == -0.5)
    #expect(number("0.1") == 0.1 && number("2.50") == 2.5 && number(".5") == 0.5)
    #expect(number("123456789012345") == 123_456_789_012_345)
    #expect(number("1234567890123456") == nil, "16 significant digits")
    #expect(number("") == nil && number("-") == nil && number(".") == nil)
    #expect(number("1.2.3") == nil && number("0x10") == nil && number("1e") == nil)
    #expect(number("1e5") == 100_000 && number("2.5E-3") == 0.0025)
    // Beyond 10²² two roundings: near, and the same Float.
    #expect(number("1e-45").map { Float($0) } == Float("1e-45"))
    #expect(number("-0") == 0 && number("1e+2") == 100 && number("1e1000") == nil)
  }

  @Test func streamDividersFollowTheOutputRate() {
    let rates = MAVLinkStreamRates.default
    #expect(rates.divider(.attitudeQuaternion, outputRateHz: 100) == 1)
    #expect(rates.divider(.attitudeQuaternion, outputRateHz: 1000) == 1, "every frame")
    #expect(rates.divider(.highResIMU, outputRateHz: 100) == 2)
    #expect(rates.divider(.attitude, outputRateHz: 100) == 10)
    #expect(rates.divider(.systemStatus, outputRateHz: 100) == 100)
    #expect(rates.divider(.attitude, outputRateHz: 5) == 1, "above the output rate: every frame")
    var custom = rates
    custom.highResIMUHz = 30
    #expect(custom.divider(.highResIMU, outputRateHz: 100) == 3)
    #expect(abs(custom.actualHz(.highResIMU, outputRateHz: 100) - 100.0 / 3) < 1e-12)
    custom.highResIMUHz = 0
    #expect(custom.divider(.highResIMU, outputRateHz: 100) == nil)
    #expect(custom.actualHz(.highResIMU, outputRateHz: 100) == 0)
    #expect(
      custom.bytesPerSecond(outputRateHz: 100) == rates.bytesPerSecond(outputRateHz: 100) - 3700)
  }

  /// At start-up the streams are lowered to fit the line, HIGHRES_IMU first, and what was
  /// lowered is said.
  @Test func streamsAreLoweredToFitTheLine() throws {
    let (same, none) = try #require(
      MAVLinkStreamRates.default.fitted(outputRateHz: 100, baudRate: 115_200))
    #expect(same == .default && none.isEmpty, "the defaults fit 115200 baud")

    let (slow, lowered) = try #require(
      MAVLinkStreamRates.default.fitted(outputRateHz: 100, baudRate: 57_600))
    #expect(LinkBudget.fits(slow.bytesPerSecond(outputRateHz: 100), baudRate: 57_600))
    // 4 896 B/s allowed; ATTITUDE_QUATERNION, ATTITUDE, SYS_STATUS and the heartbeat take
    // 4 864: HIGHRES_IMU goes down to 1 Hz, and ATTITUDE to what is left (8 a second,
    // every 13th frame).
    #expect(lowered.map(\.stream) == [.highResIMU, .attitude])
    #expect(lowered.map(\.description) == ["HIGHRES_IMU 50 Hz → 1 Hz", "ATTITUDE 10 Hz → 7.69 Hz"])
    #expect(slow.actualHz(.attitudeQuaternion, outputRateHz: 100) == 100)

    var asked = MAVLinkStreamRates.default
    asked.highResIMUHz = 100
    asked.attitudeHz = 100
    let (fitted, steps) = try #require(asked.fitted(outputRateHz: 100, baudRate: 115_200))
    #expect(LinkBudget.fits(fitted.bytesPerSecond(outputRateHz: 100), baudRate: 115_200))
    #expect(steps.map(\.stream) == [.highResIMU])
    #expect(fitted.attitudeHz == 100, "HIGHRES_IMU went down first, and that was enough")

    #expect(MAVLinkStreamRates.default.fitted(outputRateHz: 100, baudRate: 100) == nil)
    let (crawl, _) = try #require(
      MAVLinkStreamRates.default.fitted(outputRateHz: 100, baudRate: 2400))
    #expect(LinkBudget.fits(crawl.bytesPerSecond(outputRateHz: 100), baudRate: 2400))
  }
}

@Suite struct ParameterCountTests {
  @Test func theCountsAreTheCases() {
    #expect(PlumbParameter.count == PlumbParameter.allCases.count)
    #expect(MAVLinkStream.count == MAVLinkStream.allCases.count)
  }
}

@Suite struct HeartbeatIdentityTests {
  /// Beside a flight controller Plumb is "no autopilot"; as component 1 it is the system's main
  /// component, which ground stations adopt as a vehicle.
  @Test func theAutopilotFollowsTheComponentID() {
    for (component, autopilot) in [
      (UInt8(200), MAVLink.autopilotInvalid), (1, MAVLink.autopilotGeneric),
    ] {
      var encoder = TelemetryEncoder(
        format: .mavlink, mavlink: MAVLinkIdentity(systemID: 7, componentID: component))
      var decoder = StreamDecoder(format: .mavlink)
      var heartbeats: [MAVLinkPacket] = []
      decoder.decode(encoder.encode(TelemetryFrame())) { message in
        if case .mavlink(let packet) = message, case .heartbeat = packet.message {
          heartbeats.append(packet)
        }
      }
      #expect(heartbeats.count == 1)
      guard case .heartbeat(let heartbeat)? = heartbeats.first?.message else { continue }
      #expect(heartbeat.autopilot == autopilot && heartbeat.type == MAVLink.typeIMU)
      #expect(heartbeats.first?.systemID == 7 && heartbeats.first?.componentID == component)
    }
  }
}
