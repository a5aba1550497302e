import ByteFormats
import Geometry
import Telemetry
import Testing

func encodeBinary(_ frame: TelemetryFrame) -> [UInt8] {
  var encoder = TelemetryEncoder(format: .binary)
  return encoder.encode(frame)
}

func encodeBinary(_ reply: HostReply) -> [UInt8] {
  var encoder = TelemetryEncoder(format: .binary)
  return encoder.encode(reply)
}

/// The payload inside a wire frame (COBS undone), by the test's own reading of the spec.
func payload(of wire: [UInt8]) -> [UInt8] {
  var out = [UInt8](repeating: 0, count: 128)
  let inner = Array(wire[1..<wire.count - 1])
  let n = try! inner.withUnsafeBytes { e in out.withUnsafeMutableBytes { COBS.decode(e, into: $0) }
  }
  .get()
  return Array(out[0..<n])
}

func le<T: FixedWidthInteger>(_ bytes: [UInt8], _ offset: Int, as: T.Type) -> T {
  var value: T = 0
  for i in 0..<(T.bitWidth / 8) { value |= T(bytes[offset + i]) << (8 * i) }
  return value
}

func f32(_ bytes: [UInt8], _ offset: Int) -> Float {
  Float(bitPattern: le(bytes, offset, as: UInt32.self))
}

func decodeOne(_ wire: [UInt8]) -> BinaryFormat.Message? {
  let inner = Array(wire[1..<wire.count - 1])
  return try? inner.withUnsafeBytes { BinaryFormat.decode(encoded: $0) }.get()
}

@Suite struct BinaryFormatTests {
  @Test func goldenVectors() {
    var entries = Golden.all.map { (comment: "telemetry \($0.0)", bytes: encodeBinary($0.1)) }
    entries.append((comment: "reply OK tare", bytes: encodeBinary(.ok("tare"))))
    entries.append(
      (
        comment: "reply ERR unknown command \"foo\"",
        bytes: encodeBinary(HostCommandError.unknownCommand("foo").reply)
      ))
    expectGolden("binary_v1.hex", hexFile(entries))
  }

  @Test func everyTelemetryFrameIs63BytesBetweenTwoDelimiters() {
    var random = SplitMix64(seed: 63)
    for _ in 0..<500 {
      let wire = encodeBinary(randomFrame(&random))
      #expect(wire.count == 63)
      #expect(wire.first == 0 && wire.last == 0)
      #expect(!wire[1..<62].contains(0))
    }
  }

  /// Restates FORMATS.md's layout table: offsets, scales and the CRC, read back by hand.
  @Test func layoutMatchesTheSpecTable() {
    let p = payload(of: encodeBinary(Golden.banked))
    #expect(p.count == 60)
    #expect(p[0] == 1, "version")
    #expect(p[1] == 0x01, "kind: telemetry")
    #expect(le(p, 2, as: UInt32.self) == 2, "sequence")
    #expect(le(p, 6, as: Int64.self) == 1_010_000_000, "sample time, ns")
    #expect(f32(p, 14) == Float(0.897635659657183))
    #expect(f32(p, 18) == Float(0.20599112279858978))
    #expect(f32(p, 22) == Float(-0.17644656798009617))
    #expect(f32(p, 26) == Float(-0.3473967306812714))
    // Gyro bias, 2e-5 rad/s per count: −0.0123 → −615, 0.00456 → 228, 0.0789 → 3945.
    #expect(le(p, 30, as: Int16.self) == -615)
    #expect(le(p, 32, as: Int16.self) == 228)
    #expect(le(p, 34, as: Int16.self) == 3945)
    // Linear acceleration, 0.005 m/s² per count: 1.25 → 250, −0.5 → −100, 0.125 → 25.
    #expect(le(p, 36, as: Int16.self) == 250)
    #expect(le(p, 38, as: Int16.self) == -100)
    #expect(le(p, 40, as: Int16.self) == 25)
    // Temperature, 0.01 °C per count: 31.47 → 3147.
    #expect(le(p, 42, as: Int16.self) == 3147)
    #expect(le(p, 44, as: UInt16.self) == 0b1001_0010, "flags: gap | recovering | calibration")
    #expect(le(p, 46, as: UInt32.self) == 3, "missed samples")
    #expect(le(p, 50, as: UInt32.self) == 1234, "latency, µs")
    #expect(le(p, 54, as: UInt32.self) == 0x1234_5678, "calibration id")
    let crc = Array(p[0..<58]).withUnsafeBytes { CRC16CCITTFalse.checksum($0) }
    #expect(le(p, 58, as: UInt16.self) == crc, "CRC-16/CCITT-FALSE over bytes 0…57, LE")
  }

  @Test func flagBitsAreTheDocumentedOnes() {
    let documented: [(TelemetryFlags, UInt16)] = [
      (.rest, 1), (.gap, 2), (.clipping, 4), (.accelerationRejected, 8), (.recovering, 16),
      (.degradedTiming, 32), (.i2cRecovery, 64), (.calibrationLoaded, 128), (.initialising, 256),
      (.gimbalLockNear, 512), (.headingUncertain, 1024),
    ]
    for (flag, bit) in documented { #expect(flag.rawValue == bit) }
    #expect(TelemetryFlags.all.rawValue == 0x07FF)
  }

  @Test func saturatesAndMarksNotANumber() {
    guard case .telemetry(let frame)? = decodeOne(encodeBinary(Golden.extreme)) else {
      Issue.record("frame C did not decode")
      return
    }
    #expect(frame.gyroBiasRadiansPerSecond.x.isNaN, "NaN travels as 0x8000")
    #expect(frame.gyroBiasRadiansPerSecond.y == 32767 * 2e-5)
    #expect(frame.gyroBiasRadiansPerSecond.z == -32767 * 2e-5)
    #expect(frame.linearAccelerationMetersPerSecondSquared.x == 32767 * 0.005)
    #expect(frame.linearAccelerationMetersPerSecondSquared.y == -32767 * 0.005)
    #expect(frame.temperatureCelsius == -32767 * 0.01)
    #expect(frame.sequence == .max && frame.sampleTimeNanoseconds == .min)
    #expect(frame.missedSamples == .max && frame.latencyMicroseconds == .max)
  }

  @Test func seededRoundTripKeepsEveryFieldToItsResolution() {
    var random = SplitMix64(seed: 0xB1)
    for _ in 0..<2000 {
      let frame = randomFrame(&random)
      guard case .telemetry(let back)? = decodeOne(encodeBinary(frame)) else {
        Issue.record("frame did not decode")
        return
      }
      #expect(back.sequence == frame.sequence)
      #expect(back.sampleTimeNanoseconds == frame.sampleTimeNanoseconds)
      #expect(back.attitude.w == Double(Float(frame.attitude.w)))
      #expect(back.attitude.x == Double(Float(frame.attitude.x)))
      #expect(back.attitude.y == Double(Float(frame.attitude.y)))
      #expect(back.attitude.z == Double(Float(frame.attitude.z)))
      let bias = back.gyroBiasRadiansPerSecond - frame.gyroBiasRadiansPerSecond
      #expect(max(abs(bias.x), abs(bias.y), abs(bias.z)) <= 1e-5 + 1e-12)
      let acc =
        back.linearAccelerationMetersPerSecondSquared
        - frame.linearAccelerationMetersPerSecondSquared
      #expect(max(abs(acc.x), abs(acc.y), abs(acc.z)) <= 0.0025 + 1e-12)
      #expect(abs(back.temperatureCelsius - frame.temperatureCelsius) <= 0.005 + 1e-12)
      #expect(back.flags == frame.flags)
      #expect(back.missedSamples == frame.missedSamples)
      #expect(back.latencyMicroseconds == frame.latencyMicroseconds)
      #expect(back.calibrationID == frame.calibrationID)
      #expect(back.rateRadiansPerSecond.x.isNaN, "binary frames carry no rate")
      let down = back.attitude.rotate(back.gravityBodyMetersPerSecondSquared)
      #expect((down - Vector3(0, 0, -9.80665)).length < 1e-5, "gravity recomputed from attitude")
    }
  }

  @Test func repliesRoundTrip() {
    for reply in [
      HostReply.ok("tare"), .error("x"), .ok(""),
      HostReply(.ok, FixedText(String(repeating: "z", count: 60))),
    ] {
      let wire = encodeBinary(reply)
      #expect(wire.count <= BinaryFormat.maximumReplyFrameCount)
      #expect(decodeOne(wire) == .reply(reply))
    }
    #expect(encodeBinary(HostReply(.ok, FixedText(String(repeating: "z", count: 60)))).count == 55)
  }

  @Test func otherVersionsAndKindsAreRejectedAfterTheCRC() {
    for (version, kind, expected) in [
      (UInt8(2), UInt8(1), BinaryFormat.DecodeError.unknownVersion(2)),
      (1, 9, .unknownKind(9)),
    ] {
      var body = payload(of: encodeBinary(Golden.level))
      body[0] = version
      body[1] = kind
      let crc = Array(body[0..<58]).withUnsafeBytes { CRC16CCITTFalse.checksum($0) }
      body[58] = UInt8(crc & 0xFF)
      body[59] = UInt8(crc >> 8)
      var encoded = [UInt8](repeating: 0, count: 80)
      let n = body.withUnsafeBytes { b in
        encoded.withUnsafeMutableBytes { COBS.encode(b, into: $0) }
      }!
      let result = Array(encoded[0..<n]).withUnsafeBytes { BinaryFormat.decode(encoded: $0) }
      #expect(result == .failure(expected))
    }
  }

  /// A telemetry frame or a reply cut after every byte of its body, with a valid CRC: the
  /// decoder reads its fields through a bounds-checked cursor, so each cut is `wrongLength`
  /// (or, for a reply cut inside its text, a shorter text's length mismatch), never a trap.
  @Test func aPayloadCutAnywhereWithAValidCRCIsAWrongLength() {
    for wire in [encodeBinary(Golden.level), encodeBinary(HostReply(.ok, FixedText("rate 100")))] {
      let full = payload(of: wire)
      let body = Array(full[0..<(full.count - 2)])
      for cut in 0..<body.count {
        var cutBody = Array(body[0..<cut])
        let crc = cutBody.withUnsafeBytes { CRC16CCITTFalse.checksum($0) }
        cutBody += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        var encoded = [UInt8](repeating: 0, count: 128)
        let n = cutBody.withUnsafeBytes { b in
          encoded.withUnsafeMutableBytes { COBS.encode(b, into: $0) }
        }!
        let result = Array(encoded[0..<n]).withUnsafeBytes { BinaryFormat.decode(encoded: $0) }
        // Fewer than two bytes of body: the whole payload is under the 4-byte minimum.
        #expect(result == .failure(.wrongLength(cut < 2 ? cut + 2 : cut)), "cut at \(cut)")
      }
    }
  }
}

/// A random frame with every field in its carried range.
func randomFrame(_ random: inout SplitMix64, sequence: UInt32? = nil) -> TelemetryFrame {
  let attitude = random.quaternion()
  return TelemetryFrame(
    sequence: sequence ?? UInt32(truncatingIfNeeded: random.next()),
    sampleTimeNanoseconds: Int64(bitPattern: random.next() >> 2),
    attitude: attitude,
    gyroBiasRadiansPerSecond: random.vector(0.6),
    rateRadiansPerSecond: random.vector(5),
    linearAccelerationMetersPerSecondSquared: random.vector(150),
    gravityBodyMetersPerSecondSquared: attitude.inverseRotate(Vector3(0, 0, -standardGravity)),
    temperatureCelsius: random.uniform(-40, 85),
    flags: TelemetryFlags(
      rawValue: UInt16(truncatingIfNeeded: random.next()) & TelemetryFlags.all.rawValue),
    missedSamples: UInt32(truncatingIfNeeded: random.next()),
    latencyMicroseconds: UInt32(truncatingIfNeeded: random.next() % 100_000),
    calibrationID: UInt32(truncatingIfNeeded: random.next()))
}
