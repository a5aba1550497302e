import Geometry
import Telemetry
import Testing

func encodeText(_ frame: TelemetryFrame) -> String {
  var encoder = TelemetryEncoder(format: .text)
  return String(decoding: encoder.encode(frame), as: UTF8.self)
}

func encodeText(_ reply: HostReply) -> String {
  var encoder = TelemetryEncoder(format: .text)
  return String(decoding: encoder.encode(reply), as: UTF8.self)
}

/// `body` with `$`, the NMEA checksum (computed here, independently) and CR LF.
private func sentence(_ body: String) -> String {
  var sum: UInt8 = 0
  for byte in body.utf8 { sum ^= byte }
  let digits = Array("0123456789ABCDEF")
  return "$" + body + "*" + String(digits[Int(sum >> 4)]) + String(digits[Int(sum & 0xF)])
    + "\r\n"
}

private func decodeLine(_ line: String) -> Result<TextFormat.Message, TextFormat.DecodeError> {
  Array(line.utf8).withUnsafeBytes { TextFormat.decode(line: $0) }
}

@Suite struct TextFormatTests {
  @Test func goldenVectors() {
    var text = ""
    for (_, frame) in Golden.all { text += encodeText(frame) }
    text += encodeText(.ok("tare"))
    text += encodeText(HostCommandError.unknownCommand("foo").reply)
    expectGolden("text_v1.txt", Array(text.utf8))
  }

  /// The golden lines, restated field by field from FORMATS.md.
  @Test func goldenLinesReadAsDocumented() {
    #expect(encodeText(Golden.level) == sentence("PLMB,1,1.000,0.00,0.00,0.00,0081,0,850,25.00"))
    #expect(
      encodeText(Golden.banked) == sentence("PLMB,2,1.010,30.00,10.00,45.00,0092,3,1234,31.47"))
    let widest = sentence(
      "PLMB,4294967295,-9223372036.855,-179.50,-89.50,-179.50,03FF,4294967295,4294967295,-999.99")
    #expect(encodeText(Golden.extreme) == widest)
    #expect(widest.utf8.count == 95)
    #expect(TextFormat.maximumLineCount == 95)
    #expect(encodeText(.ok("tare")) == sentence("PLMBR,OK,tare"))
    #expect(
      encodeText(HostCommandError.unknownCommand("foo").reply)
        == sentence("PLMBR,ERR,unknown command \"foo\""))
  }

  @Test func numbersAreFixedPointRoundedHalfAwayFromZero() {
    let cases: [(Double, Int, String)] = [
      (1.5, 2, "1.50"), (0.125, 2, "0.13"), (-0.125, 2, "-0.13"), (-0.004, 2, "0.00"),
      (179.999, 2, "180.00"), (-179.996, 2, "-180.00"), (12.3456, 3, "12.346"), (7, 0, "7"),
      (-0.0, 2, "0.00"), (.nan, 2, "nan"), (.infinity, 2, "inf"), (-.infinity, 1, "-inf"),
      (123_456_789.25, 1, "123456789.3"),
    ]
    for (value, decimals, expected) in cases {
      var text = FixedText()
      text.append(fixed: value, decimals: decimals)
      #expect(text.description == expected, "\(value) with \(decimals) decimals")
    }
  }

  @Test func valuesBeyondTheFieldWidthPrintAsInfinity() {
    var frame = Golden.level
    frame.temperatureCelsius = 1000
    #expect(encodeText(frame).contains(",inf*"))
    frame.temperatureCelsius = .nan
    #expect(encodeText(frame).contains(",nan*"))
  }

  @Test func gimbalLockIsFlaggedFromTheLinesOwnPitch() {
    for (pitchDegrees, flagged) in [(84.0, false), (86.0, true), (-86.0, true), (0.0, false)] {
      let attitude = NEDEulerAngles(
        rollRadians: 0.2, pitchRadians: pitchDegrees * radiansPerDegree, yawRadians: 1
      ).plumbAttitude
      let line = encodeText(TelemetryFrame(attitude: attitude))
      guard case .success(.telemetry(let decoded)) = decodeLine(line) else {
        Issue.record("line did not decode: \(line)")
        continue
      }
      #expect(decoded.flags.contains(.gimbalLockNear) == flagged, "pitch \(pitchDegrees)°")
    }
  }

  @Test func seededRoundTripWithinTheLinesResolution() {
    var random = SplitMix64(seed: 0x7E57)
    for _ in 0..<2000 {
      let frame = randomFrame(&random)
      let line = encodeText(frame)
      #expect(line.utf8.count <= TextFormat.maximumLineCount)
      guard case .success(.telemetry(let back)) = decodeLine(line) else {
        Issue.record("line did not decode: \(line)")
        return
      }
      let euler = NEDEulerAngles(plumbAttitude: frame.attitude)
      #expect(back.sequence == frame.sequence)
      var milliseconds = frame.sampleTimeNanoseconds / 1_000_000
      if frame.sampleTimeNanoseconds % 1_000_000 < 0 { milliseconds -= 1 }
      #expect(back.sampleTimeMilliseconds == milliseconds)
      #expect(abs(back.rollDegrees - euler.rollRadians * degreesPerRadian) <= 0.005 + 1e-9)
      #expect(abs(back.pitchDegrees - euler.pitchRadians * degreesPerRadian) <= 0.005 + 1e-9)
      #expect(abs(back.yawDegrees - euler.yawRadians * degreesPerRadian) <= 0.005 + 1e-9)
      #expect(abs(back.temperatureCelsius - frame.temperatureCelsius) <= 0.005 + 1e-9)
      #expect(back.missedSamples == frame.missedSamples)
      #expect(back.latencyMicroseconds == frame.latencyMicroseconds)
      var flags = frame.flags
      if euler.isNearGimbalLock { flags.insert(.gimbalLockNear) }
      #expect(back.flags == flags)
      if !euler.isNearGimbalLock {
        // Three angles each within 0.005°: the attitude within about 0.015°.
        #expect(back.attitude.angle(to: frame.attitude) * degreesPerRadian < 0.02)
      }
    }
  }

  @Test func damagedLinesAreRejected() {
    let good = encodeText(Golden.banked)
    var flipped = Array(good.utf8)
    flipped[10] ^= 0x01
    if case .failure(.checksumMismatch) = Array(flipped).withUnsafeBytes({
      TextFormat.decode(line: $0)
    }) {
    } else {
      Issue.record("a flipped digit must fail the checksum")
    }
    #expect(decodeLine(sentence("PLMB,2,1.010,30.00")) == .failure(.malformed))
    #expect(
      decodeLine(sentence("PLMB,x,1.010,30.00,10.00,45.00,0092,3,1234,31.47"))
        == .failure(.badField(index: 1)))
    #expect(
      decodeLine(sentence("PLMB,2,1.01,30.00,10.00,45.00,0092,3,1234,31.47"))
        == .failure(.badField(index: 2)))
    #expect(
      decodeLine(sentence("PLMB,2,1.010,30.00,10.00,45.00,92,3,1234,31.47"))
        == .failure(.badField(index: 6)))
    #expect(
      decodeLine(sentence("PLMB,2,1.010,30.00,10.00,45.00,0092,3,1234,31.47,9"))
        == .failure(.malformed))
    #expect(decodeLine(sentence("XYZ,1")) == .failure(.malformed))
    #expect(decodeLine("$PLMB,1*00") == .failure(.malformed), "no line end")
    // NMEA tools write the checksum in either case; a bare LF line end is accepted too.
    var bytes = Array(sentence("PLMBR,OK,ok").utf8)  // checksum 41
    bytes.removeLast(2)  // CR LF
    bytes[bytes.count - 2] |= 0x20  // checksum in lower case ('0'…'9' keep their value)
    bytes[bytes.count - 1] |= 0x20
    bytes.append(0x0A)
    #expect(bytes.withUnsafeBytes { TextFormat.decode(line: $0) } == .success(.reply(.ok("ok"))))
  }
}

@Suite struct DecodedMessageTests {
  /// A text line's time is milliseconds; the widest one the format allows (−9223372036.855 s)
  /// does not fit in nanoseconds. Decoding it must saturate, not trap (found by the monitor).
  @Test func theWidestTextTimeSaturatesInsteadOfTrapping() {
    var decoder = StreamDecoder(format: .text)
    var samples: [AttitudeSample] = []
    decoder.decode(Array(encodeText(Golden.extreme).utf8)) { message in
      if let sample = message.attitudeSample { samples.append(sample) }
    }
    #expect(samples.count == 1)
    #expect(samples.first?.sampleTimeNanoseconds == Int64.min)
  }
}
