import ByteFormats
import Geometry
import Telemetry
import Testing

func encodeBinaryIMU(_ frame: TelemetryFrame) -> [UInt8] {
  var encoder = TelemetryEncoder(format: .binaryIMU)
  return encoder.encode(frame)
}

/// The golden frames of `binary_v1.hex` with the figures kind 3 adds (FORMATS.md §3).
enum GoldenIMU {
  static var level: TelemetryFrame {
    var frame = Golden.level
    frame.uncertainty = EstimateUncertainty(
      tiltRadians: 0.0012, headingRadians: 0.05,
      gyroBiasRadiansPerSecond: Vector3(0.0001, 0.0001, 0.0002),
      gyroNoiseRadiansPerSecond: 0.00175, accelerometerNoiseMetersPerSecondSquared: 0.0394)
    return frame
  }

  static var banked: TelemetryFrame {
    var frame = Golden.banked
    frame.uncertainty = EstimateUncertainty(
      tiltRadians: 0.0087, headingRadians: 0.35,
      gyroBiasRadiansPerSecond: Vector3(0.00123, 0.00045, 0.0021),
      gyroNoiseRadiansPerSecond: 0.00175, accelerometerNoiseMetersPerSecondSquared: 0.0394)
    return frame
  }

  /// Every σ at an edge: saturated (10 rad → 65 534), unknown (NaN, and a negative value no
  /// σ is → 0xFFFF), zero; the rate NaN and huge.
  static var extreme: TelemetryFrame {
    var frame = Golden.extreme
    frame.rateRadiansPerSecond = Vector3(.nan, 1e40, -35)
    frame.uncertainty = EstimateUncertainty(
      tiltRadians: 10, headingRadians: .nan, gyroBiasRadiansPerSecond: Vector3(0, -1, 0.7),
      gyroNoiseRadiansPerSecond: .infinity, accelerometerNoiseMetersPerSecondSquared: 6.5534)
    return frame
  }

  static var all: [(String, TelemetryFrame)] {
    [("A level", level), ("B banked", banked), ("C extreme", extreme)]
  }
}

@Suite struct BinaryIMUFormatTests {
  @Test func goldenVectors() {
    let entries = GoldenIMU.all.map { (comment: "imu \($0.0)", bytes: encodeBinaryIMU($0.1)) }
    expectGolden("binary_imu_v1.hex", hexFile(entries))
  }

  @Test func everyIMUFrameIs89BytesBetweenTwoDelimiters() {
    var random = SplitMix64(seed: 89)
    for _ in 0..<500 {
      let wire = encodeBinaryIMU(randomIMUFrame(&random))
      #expect(wire.count == 89)
      #expect(wire.count == BinaryFormat.imuFrameCount)
      #expect(wire.first == 0 && wire.last == 0)
      #expect(!wire[1..<88].contains(0))
    }
  }

  /// Restates FORMATS.md's kind-3 table: offsets, scales and the CRC, read back by hand.
  @Test func layoutMatchesTheSpecTable() {
    let frame = GoldenIMU.banked
    let p = payload(of: encodeBinaryIMU(frame))
    #expect(p.count == 86)
    #expect(p[0] == 1, "version")
    #expect(p[1] == 0x03, "kind: imu")
    #expect(le(p, 2, as: UInt32.self) == 2, "sequence")
    #expect(le(p, 6, as: Int64.self) == 1_010_000_000, "sample time, ns")
    #expect(f32(p, 14) == Float(0.897635659657183))
    #expect(f32(p, 26) == Float(-0.3473967306812714))
    #expect(f32(p, 30) == Float(0.1), "rate x, rad/s")
    #expect(f32(p, 34) == Float(-0.2))
    #expect(f32(p, 38) == Float(0.3))
    // Specific force, body, 0.005 m/s² per count: attitude⁻¹ · linear − gravity in body.
    let f = frame.specificForceBodyMetersPerSecondSquared
    #expect(le(p, 42, as: Int16.self) == Int16((f.x / 0.005).rounded()))
    #expect(le(p, 44, as: Int16.self) == Int16((f.y / 0.005).rounded()))
    #expect(le(p, 46, as: Int16.self) == Int16((f.z / 0.005).rounded()))
    #expect(le(p, 48, as: Int16.self) == -615, "gyro bias x, 2e-5 rad/s per count")
    #expect(le(p, 50, as: Int16.self) == 228)
    #expect(le(p, 52, as: Int16.self) == 3945)
    #expect(le(p, 54, as: Int16.self) == 3147, "temperature, 0.01 °C")
    #expect(le(p, 56, as: UInt16.self) == 0b1001_0010, "flags")
    #expect(le(p, 58, as: UInt32.self) == 3, "missed samples")
    #expect(le(p, 62, as: UInt32.self) == 1234, "latency, µs")
    #expect(le(p, 66, as: UInt32.self) == 0x1234_5678, "calibration id")
    #expect(le(p, 70, as: UInt16.self) == 87, "tilt σ, 1e-4 rad: 0.0087")
    #expect(le(p, 72, as: UInt16.self) == 3500, "heading σ: 0.35")
    #expect(le(p, 74, as: UInt16.self) == 123, "bias σ x, 1e-5 rad/s")
    #expect(le(p, 76, as: UInt16.self) == 45)
    #expect(le(p, 78, as: UInt16.self) == 210)
    #expect(le(p, 80, as: UInt16.self) == 175, "gyro noise σ, 1e-5 rad/s")
    #expect(le(p, 82, as: UInt16.self) == 394, "accelerometer noise σ, 1e-4 m/s²")
    let crc = Array(p[0..<84]).withUnsafeBytes { CRC16CCITTFalse.checksum($0) }
    #expect(le(p, 84, as: UInt16.self) == crc, "CRC-16/CCITT-FALSE over bytes 0…83, LE")
  }

  @Test func sigmasSaturateAndMarkUnknown() {
    let p = payload(of: encodeBinaryIMU(GoldenIMU.extreme))
    #expect(le(p, 70, as: UInt16.self) == 65534, "10 rad saturates")
    #expect(le(p, 72, as: UInt16.self) == 0xFFFF, "NaN is unknown")
    #expect(le(p, 74, as: UInt16.self) == 0, "zero")
    #expect(le(p, 76, as: UInt16.self) == 0xFFFF, "a negative σ is no σ: unknown")
    #expect(le(p, 80, as: UInt16.self) == 65534, "infinity saturates")
    #expect(le(p, 82, as: UInt16.self) == 65534)
    guard case .imu(let back)? = decodeOne(encodeBinaryIMU(GoldenIMU.extreme)) else {
      Issue.record("frame C did not decode")
      return
    }
    #expect(back.uncertainty.headingRadians.isNaN)
    #expect(back.uncertainty.gyroBiasRadiansPerSecond.y.isNaN)
    #expect(back.uncertainty.tiltRadians == 6.5534)
    #expect(back.rateRadiansPerSecond.x.isNaN, "a NaN rate stays NaN (f32)")
    #expect(back.rateRadiansPerSecond.y == .infinity, "beyond f32: infinity, not a wrap")
  }

  @Test func seededRoundTripKeepsEveryFieldToItsResolution() {
    var random = SplitMix64(seed: 0xB3)
    for _ in 0..<2000 {
      let frame = randomIMUFrame(&random)
      guard case .imu(let back)? = decodeOne(encodeBinaryIMU(frame)) else {
        Issue.record("frame did not decode")
        return
      }
      #expect(back.sequence == frame.sequence)
      #expect(back.sampleTimeNanoseconds == frame.sampleTimeNanoseconds)
      #expect(back.attitude.w == Double(Float(frame.attitude.w)))
      #expect(back.attitude.z == Double(Float(frame.attitude.z)))
      #expect(back.rateRadiansPerSecond.x == Double(Float(frame.rateRadiansPerSecond.x)))
      #expect(back.rateRadiansPerSecond.y == Double(Float(frame.rateRadiansPerSecond.y)))
      #expect(back.rateRadiansPerSecond.z == Double(Float(frame.rateRadiansPerSecond.z)))
      let force =
        BinaryFormat.carriedSpecificForce(of: back) - frame.specificForceBodyMetersPerSecondSquared
      #expect(max(abs(force.x), abs(force.y), abs(force.z)) <= 0.0025 + 1e-9)
      // The linear acceleration is recomputed from the carried force and the f32 attitude.
      let linear =
        back.linearAccelerationMetersPerSecondSquared
        - frame.linearAccelerationMetersPerSecondSquared
      #expect(linear.length < 0.0025 * 3.0.squareRoot() + 1e-4)
      let bias = back.gyroBiasRadiansPerSecond - frame.gyroBiasRadiansPerSecond
      #expect(max(abs(bias.x), abs(bias.y), abs(bias.z)) <= 1e-5 + 1e-12)
      #expect(back.flags == frame.flags)
      #expect(back.missedSamples == frame.missedSamples)
      #expect(back.latencyMicroseconds == frame.latencyMicroseconds)
      #expect(back.calibrationID == frame.calibrationID)
      let u = back.uncertainty
      let v = frame.uncertainty
      #expect(abs(u.tiltRadians - v.tiltRadians) <= 0.5e-4 + 1e-12)
      #expect(abs(u.headingRadians - v.headingRadians) <= 0.5e-4 + 1e-12)
      #expect(abs(u.gyroBiasRadiansPerSecond.z - v.gyroBiasRadiansPerSecond.z) <= 0.5e-5 + 1e-12)
      #expect(abs(u.gyroNoiseRadiansPerSecond - v.gyroNoiseRadiansPerSecond) <= 0.5e-5 + 1e-12)
      #expect(
        abs(
          u.accelerometerNoiseMetersPerSecondSquared - v.accelerometerNoiseMetersPerSecondSquared)
          <= 0.5e-4 + 1e-12)
    }
  }

  /// A stream mixing both kinds and replies, cut into odd chunks: every frame comes out once,
  /// as its kind, in order.
  @Test func bothKindsAndRepliesDecodeFromOneStream() {
    var random = SplitMix64(seed: 0x31)
    var stream: [UInt8] = []
    var expected: [String] = []
    for i in 0..<60 {
      let frame = randomIMUFrame(&random, sequence: UInt32(i))
      switch i % 3 {
      case 0:
        stream += encodeBinaryIMU(frame)
        expected.append("imu \(i)")
      case 1:
        stream += encodeBinary(frame)
        expected.append("binary \(i)")
      default:
        stream += encodeBinaryIMU(frame)
        stream += encodeBinary(HostReply.ok("tare"))
        expected += ["imu \(i)", "reply"]
      }
    }
    for format in [nil, TelemetryFormat.binaryIMU, .binary] {
      var decoder = StreamDecoder(format: format)
      var seen: [String] = []
      var offset = 0
      var size = 1
      while offset < stream.count {
        let end = min(stream.count, offset + size)
        decoder.decode(Array(stream[offset..<end])) { message in
          switch message {
          case .binaryIMU(let f): seen.append("imu \(f.sequence)")
          case .binary(let f): seen.append("binary \(f.sequence)")
          case .reply: seen.append("reply")
          default: seen.append("other")
          }
        }
        offset = end
        size = size % 97 + 7
      }
      #expect(seen == expected, "format \(String(describing: format))")
      #expect(decoder.statistics.crcErrors == 0 && decoder.statistics.malformed == 0)
      #expect(decoder.statistics.framesLost == 0)
      #expect(decoder.statistics.bytesSkipped == 0)
    }
  }

  /// A frame of a kind this reader does not know (a later version's), with a valid CRC, is
  /// skipped and counted, and the next frame decodes: how readers before kind 3 treat it, and
  /// how this one will treat kind 4.
  @Test func anUnknownKindIsSkippedAndTheNextFrameDecodes() {
    var body = payload(of: encodeBinaryIMU(GoldenIMU.level))
    body[1] = 0x04
    let crc = Array(body[0..<84]).withUnsafeBytes { CRC16CCITTFalse.checksum($0) }
    body[84] = UInt8(crc & 0xFF)
    body[85] = UInt8(crc >> 8)
    var encoded = [UInt8](repeating: 0, count: 128)
    let n = body.withUnsafeBytes { b in encoded.withUnsafeMutableBytes { COBS.encode(b, into: $0) }
    }!
    let stream = [0] + Array(encoded[0..<n]) + [0] + encodeBinaryIMU(GoldenIMU.banked)
    var decoder = StreamDecoder(format: .binaryIMU)
    var frames: [TelemetryFrame] = []
    decoder.decode(stream) { if case .binaryIMU(let f) = $0 { frames.append(f) } }
    #expect(frames.map(\.sequence) == [2])
    #expect(decoder.statistics.malformed == 1)
    #expect(decoder.statistics.crcErrors == 0)
  }

  /// A damaged byte anywhere in a kind-3 frame costs that frame only, never a wrong one.
  @Test func aDamagedByteCostsItsFrameOnly() {
    let good = encodeBinaryIMU(GoldenIMU.banked)
    for index in 1..<(good.count - 1) {
      var damaged = good
      damaged[index] ^= 0x5A
      let stream = encodeBinaryIMU(GoldenIMU.level) + damaged + encodeBinaryIMU(GoldenIMU.level)
      var decoder = StreamDecoder(format: .binaryIMU)
      var sequences: [UInt32] = []
      decoder.decode(stream) { if case .binaryIMU(let f) = $0 { sequences.append(f.sequence) } }
      #expect(sequences == [1, 1], "byte \(index)")
      let s = decoder.statistics
      #expect(s.crcErrors + s.malformed >= 1, "byte \(index)")
    }
  }
}

/// A random frame with every field in kind 3's carried range.
func randomIMUFrame(_ random: inout SplitMix64, sequence: UInt32? = nil) -> TelemetryFrame {
  var frame = randomFrame(&random, sequence: sequence)
  // Components within ±90 m/s², so that the specific force (gravity added, any attitude)
  // stays inside the ±163.8 m/s² the int16 carries.
  frame.linearAccelerationMetersPerSecondSquared = random.vector(90)
  let bias = random.vector(0.3)
  frame.uncertainty = EstimateUncertainty(
    tiltRadians: random.uniform(0, 6.5), headingRadians: random.uniform(0, 6.5),
    gyroBiasRadiansPerSecond: Vector3(abs(bias.x), abs(bias.y), abs(bias.z)),
    gyroNoiseRadiansPerSecond: random.uniform(0, 0.6),
    accelerometerNoiseMetersPerSecondSquared: random.uniform(0, 6.5))
  return frame
}
