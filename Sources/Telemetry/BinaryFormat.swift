import ByteFormats
import Geometry

/// The binary format, version 1 (FORMATS.md "Binary"): every frame is
/// `0x00 · COBS(payload · CRC) · 0x00`, little-endian, CRC-16/CCITT-FALSE over the payload.
///
/// The leading and trailing delimiters cost one byte more than a trailing one alone, and buy
/// this: a corrupted delimiter never takes the neighbouring frame with it, so one damaged byte
/// costs at most the frame it is in.
public enum BinaryFormat {
  /// The format version, byte 0 of every payload. A decoder rejects other versions.
  public static let version: UInt8 = 1

  /// What a payload carries, byte 1.
  public enum Kind: UInt8, Hashable, Sendable {
    case telemetry = 0x01
    case reply = 0x02
    /// Telemetry with the rate, the specific force and the uncertainties (`binary-imu`).
    case imu = 0x03
  }

  /// Telemetry payload bytes before the CRC (offsets in FORMATS.md).
  public static let telemetryPayloadCount = 58
  /// A telemetry frame on the wire: 2 delimiters + COBS(58 + 2 CRC) = 2 + 61.
  public static let telemetryFrameCount = 63
  /// The longest reply frame on the wire: 2 + COBS(4 + 46 + 2).
  public static let maximumReplyFrameCount = 55
  /// IMU payload bytes before the CRC (kind 3; offsets in FORMATS.md).
  public static let imuPayloadCount = 84
  /// An IMU frame on the wire: 2 delimiters + COBS(84 + 2 CRC) = 2 + 87.
  public static let imuFrameCount = 89
  /// The longest COBS block between delimiters that can be valid (an IMU frame's). Readers
  /// before kind 3 took 61: to them a kind-3 block is overlong, skipped as malformed.
  static let maximumEncodedCount = 87

  /// LSB of the gyroscope bias, rad/s: ±0.655 rad/s (±37.5 °/s) in an int16 covers the
  /// MPU-6050's specified zero-rate output of ±20 °/s (PS §6.1) at 0.0011 °/s resolution.
  public static let gyroBiasLSBRadiansPerSecond = 2e-5
  /// LSB of linear acceleration, m/s²: ±163.8 m/s² covers the ±16 g range (PS §6.2) at 0.5 mg.
  public static let linearAccelerationLSBMetersPerSecondSquared = 0.005
  /// LSB of temperature, °C: ±327 °C at 0.01 °C (the sensor resolves 1/340 °C, RM §4.18).
  public static let temperatureLSBCelsius = 0.01
  /// The int16 value that means "not a number" in the scaled fields.
  public static let notANumber: Int16 = .min
  /// LSB of the attitude's uncertainties (tilt and heading σ), rad: up to 6.55 rad at 0.006°.
  public static let attitudeSigmaLSBRadians = 1e-4
  /// LSB of the gyro bias's σ and the gyro's sample noise, rad/s: up to 0.655 rad/s.
  public static let gyroSigmaLSBRadiansPerSecond = 1e-5
  /// LSB of the accelerometer's sample noise, m/s²: up to 6.55 m/s².
  public static let accelerometerSigmaLSBMetersPerSecondSquared = 1e-4
  /// The uint16 value that means "unknown" (NaN) in the σ fields; larger values saturate at
  /// 65 534.
  public static let unknownSigma: UInt16 = .max

  /// Writes one telemetry frame (63 bytes) into `output`, which must hold 63 bytes; returns 63.
  ///
  /// In one buffer, in place (this runs for every sample): the payload is written where its
  /// encoding goes, one byte after the leading delimiter's slot and the first COBS code's, the
  /// CRC after it, and `COBS.encodeInPlace` then replaces the code slot and each zero with the
  /// distance to the next zero. The bytes are those of `finish` (CRC, then COBS between two
  /// delimiters) without the scratch payload and the copy. Inlined into its caller so that
  /// the frame, some 170 bytes, is read where the caller keeps it instead of being copied to
  /// be passed.
  @inline(__always)
  public static func encode(_ frame: TelemetryFrame, into output: UnsafeMutableRawBufferPointer)
    -> Int
  {
    precondition(output.count >= telemetryFrameCount, "binary frames need 63 bytes of buffer")
    let payload = UnsafeMutableRawBufferPointer(rebasing: output[2..<(2 + telemetryPayloadCount)])
    var writer = ByteWriter(payload)
    writeHead(.telemetry, frame, to: &writer)
    writeScaled(frame.gyroBiasRadiansPerSecond, lsb: gyroBiasLSBRadiansPerSecond, to: &writer)
    writeScaled(
      frame.linearAccelerationMetersPerSecondSquared,
      lsb: linearAccelerationLSBMetersPerSecondSquared, to: &writer)
    writer.write(scaled(frame.temperatureCelsius, lsb: temperatureLSBCelsius))
    writer.write(frame.flags.rawValue)
    writer.write(frame.missedSamples)
    writer.write(frame.latencyMicroseconds)
    writer.write(frame.calibrationID)
    return finishInPlace(output, payloadCount: telemetryPayloadCount)
  }

  /// Writes one IMU frame (kind 3, 89 bytes) into `output`, which must hold 89 bytes; returns
  /// 89. In place, as `encode(_:into:)` does.
  @inline(__always)
  public static func encodeIMU(_ frame: TelemetryFrame, into output: UnsafeMutableRawBufferPointer)
    -> Int
  {
    precondition(output.count >= imuFrameCount, "binary-imu frames need 89 bytes of buffer")
    let payload = UnsafeMutableRawBufferPointer(rebasing: output[2..<(2 + imuPayloadCount)])
    var writer = ByteWriter(payload)
    writeHead(.imu, frame, to: &writer)
    writer.write(Float(frame.rateRadiansPerSecond.x))
    writer.write(Float(frame.rateRadiansPerSecond.y))
    writer.write(Float(frame.rateRadiansPerSecond.z))
    writeScaled(
      frame.specificForceBodyMetersPerSecondSquared,
      lsb: linearAccelerationLSBMetersPerSecondSquared, to: &writer)
    writeScaled(frame.gyroBiasRadiansPerSecond, lsb: gyroBiasLSBRadiansPerSecond, to: &writer)
    writer.write(scaled(frame.temperatureCelsius, lsb: temperatureLSBCelsius))
    writer.write(frame.flags.rawValue)
    writer.write(frame.missedSamples)
    writer.write(frame.latencyMicroseconds)
    writer.write(frame.calibrationID)
    let u = frame.uncertainty
    writer.write(sigma(u.tiltRadians, lsb: attitudeSigmaLSBRadians))
    writer.write(sigma(u.headingRadians, lsb: attitudeSigmaLSBRadians))
    writer.write(sigma(u.gyroBiasRadiansPerSecond.x, lsb: gyroSigmaLSBRadiansPerSecond))
    writer.write(sigma(u.gyroBiasRadiansPerSecond.y, lsb: gyroSigmaLSBRadiansPerSecond))
    writer.write(sigma(u.gyroBiasRadiansPerSecond.z, lsb: gyroSigmaLSBRadiansPerSecond))
    writer.write(sigma(u.gyroNoiseRadiansPerSecond, lsb: gyroSigmaLSBRadiansPerSecond))
    writer.write(
      sigma(
        u.accelerometerNoiseMetersPerSecondSquared,
        lsb: accelerometerSigmaLSBMetersPerSecondSquared))
    return finishInPlace(output, payloadCount: imuPayloadCount)
  }

  /// Both telemetry kinds' first fields: version, kind, sequence, sample time, attitude.
  @inline(__always)
  private static func writeHead(_ kind: Kind, _ frame: TelemetryFrame, to writer: inout ByteWriter)
  {
    writer.write(version)
    writer.write(kind.rawValue)
    writer.write(frame.sequence)
    writer.write(frame.sampleTimeNanoseconds)
    writer.write(Float(frame.attitude.w))
    writer.write(Float(frame.attitude.x))
    writer.write(Float(frame.attitude.y))
    writer.write(Float(frame.attitude.z))
  }

  /// The CRC after the payload written at `output[2…]`, then COBS in place between two
  /// delimiters; returns the frame's length on the wire.
  @inline(__always)
  private static func finishInPlace(_ output: UnsafeMutableRawBufferPointer, payloadCount: Int)
    -> Int
  {
    let payload = UnsafeRawBufferPointer(rebasing: output[2..<(2 + payloadCount)])
    let crc = CRC16CCITTFalse.checksum(payload)
    output.storeBytes(of: crc.littleEndian, toByteOffset: 2 + payloadCount, as: UInt16.self)
    let base = output.baseAddress!
    base.storeBytes(of: 0, as: UInt8.self)
    let encoded = COBS.encodeInPlace(base + 1, count: payloadCount + 2)
    base.storeBytes(of: 0, toByteOffset: 1 + encoded, as: UInt8.self)
    return encoded + 2
  }

  /// A standard deviation in counts of `lsb`: rounded half up, saturating at 65 534; NaN (and
  /// a negative value, which no σ is) is `unknownSigma`.
  @inline(__always)
  static func sigma(_ value: Double, lsb: Double) -> UInt16 {
    guard value >= 0 else { return unknownSigma }
    let counts = value / lsb
    guard counts < 65534 else { return 65534 }
    return UInt16(truncatingIfNeeded: Int32(counts + 0.5))
  }

  /// Counts back to the σ, divided by the counts per unit (10⁴, 10⁵: exact) rather than
  /// multiplied by the step, so that 12 counts of 10⁻⁵ read 0.00012, not 0.00012000000000000002.
  static func unsigma(_ counts: UInt16, lsb: Double) -> Double {
    counts == unknownSigma ? .nan : Double(counts) / (1 / lsb).rounded()
  }

  /// Writes one reply frame (at most 55 bytes) into `output`; returns its length.
  public static func encode(_ reply: HostReply, into output: UnsafeMutableRawBufferPointer) -> Int {
    precondition(output.count >= maximumReplyFrameCount, "binary replies need 55 bytes of buffer")
    return withUnsafeTemporaryAllocation(
      byteCount: 4 + HostReply.maximumTextLength + 2, alignment: 1
    ) { payload in
      var writer = ByteWriter(payload)
      writer.write(version)
      writer.write(Kind.reply.rawValue)
      writer.write(reply.status.rawValue)
      writer.write(UInt8(reply.text.count))
      writer.write(text: reply.text)
      return finish(payload: payload, count: writer.count, into: output)
    }
  }

  /// Appends the CRC, COBS-encodes between two delimiters.
  private static func finish(
    payload: UnsafeMutableRawBufferPointer, count: Int, into output: UnsafeMutableRawBufferPointer
  ) -> Int {
    let crc = CRC16CCITTFalse.checksum(UnsafeRawBufferPointer(rebasing: payload[0..<count]))
    var writer = ByteWriter(UnsafeMutableRawBufferPointer(rebasing: payload[count..<count + 2]))
    writer.write(crc)
    output[0] = 0
    let encoded = COBS.encode(
      UnsafeRawBufferPointer(rebasing: payload[0..<count + 2]),
      into: UnsafeMutableRawBufferPointer(rebasing: output[1...]))!
    output[1 + encoded] = 0
    return encoded + 2
  }

  /// Inlined (seven per frame) with wrapping arithmetic: `whole` is within ±32 767 (|counts| is
  /// below 32 767, and rounding moves it by one at most), so the overflow checks could never
  /// fire.
  @inline(__always)
  static func scaled(_ value: Double, lsb: Double) -> Int16 {
    guard !value.isNaN else { return notANumber }
    let counts = value / lsb
    guard counts < 32767 else { return 32767 }
    guard counts > -32767 else { return -32767 }
    // Rounded half away from zero by hand: `rounded(.toNearestOrAwayFromZero)` is a libm call,
    // seven per frame. The fraction `counts − whole` is exact for |counts| < 2¹⁵.
    var whole = Int32(counts)
    let fraction = counts - Double(whole)
    if fraction >= 0.5 {
      whole &+= 1
    } else if fraction <= -0.5 {
      whole &-= 1
    }
    return Int16(truncatingIfNeeded: whole)
  }

  @inline(__always)
  private static func writeScaled(_ v: Vector3, lsb: Double, to writer: inout ByteWriter) {
    writer.write(scaled(v.x, lsb: lsb))
    writer.write(scaled(v.y, lsb: lsb))
    writer.write(scaled(v.z, lsb: lsb))
  }

  static func unscaled(_ counts: Int16, lsb: Double) -> Double {
    counts == notANumber ? .nan : Double(counts) * lsb
  }

  /// What one decoded binary payload is.
  public enum Message: Hashable, Sendable {
    case telemetry(TelemetryFrame)
    case reply(HostReply)
    /// A kind-3 frame: the rate and specific force carried, the linear acceleration and
    /// gravity recomputed from them and the attitude.
    case imu(TelemetryFrame)
  }

  /// Why a block between delimiters is not a valid frame.
  public enum DecodeError: Error, Hashable, Sendable {
    /// The COBS encoding is broken.
    case cobs(COBS.DecodeError)
    /// The CRC does not match.
    case crcMismatch(expected: UInt16, received: UInt16)
    /// Byte 0 is not a version this decoder knows.
    case unknownVersion(UInt8)
    /// Byte 1 is not a known kind.
    case unknownKind(UInt8)
    /// The payload length does not fit its kind.
    case wrongLength(Int)
  }

  /// Decodes one COBS block (the bytes between two delimiters).
  ///
  /// The CRC is checked before the version and kind, so random damage counts as a CRC error
  /// and a well-formed frame of an unknown version as `unknownVersion`.
  ///
  /// Kind-1 frames do not carry the bias-corrected rate or the uncertainties: the decoded
  /// frame has NaN there. Gravity is recomputed from the attitude: `attitude⁻¹ · (0, 0,
  /// −9.80665)`.
  public static func decode(encoded: UnsafeRawBufferPointer) -> Result<Message, DecodeError> {
    withUnsafeTemporaryAllocation(byteCount: maximumEncodedCount, alignment: 1) { payload in
      let count: Int
      switch COBS.decode(encoded, into: payload) {
      case .success(let n): count = n
      case .failure(let error): return .failure(.cobs(error))
      }
      guard count >= 4 else { return .failure(.wrongLength(count)) }
      let body = UnsafeRawBufferPointer(rebasing: payload[0..<count - 2])
      // The last two of at least four bytes: there.
      let received = UInt16(
        littleEndian: UnsafeRawBufferPointer(payload).loadUnaligned(
          fromByteOffset: count - 2, as: UInt16.self))
      let expected = CRC16CCITTFalse.checksum(body)
      guard expected == received else {
        return .failure(.crcMismatch(expected: expected, received: received))
      }
      return decodePayload(body)
    }
  }

  /// The payload's fields, read through a bounds-checked cursor: a payload shorter than its
  /// kind needs is `wrongLength`, never a trap.
  private static func decodePayload(_ body: UnsafeRawBufferPointer) -> Result<Message, DecodeError>
  {
    do {
      return try decodeFields(body)
    } catch {
      return .failure(.wrongLength(body.count))
    }
  }

  private static func decodeFields(_ body: UnsafeRawBufferPointer) throws(ByteCursor.ShortInput)
    -> Result<Message, DecodeError>
  {
    var reader = ByteCursor(body)
    let version = try reader.readU8()
    guard version == self.version else { return .failure(.unknownVersion(version)) }
    let kindByte = try reader.readU8()
    guard let kind = Kind(rawValue: kindByte) else { return .failure(.unknownKind(kindByte)) }
    switch kind {
    case .telemetry:
      guard body.count == telemetryPayloadCount else { return .failure(.wrongLength(body.count)) }
      var frame = TelemetryFrame()
      frame.sequence = try reader.readU32()
      frame.sampleTimeNanoseconds = try reader.readI64()
      let w = Double(try reader.readF32())
      let x = Double(try reader.readF32())
      let y = Double(try reader.readF32())
      let z = Double(try reader.readF32())
      frame.attitude = Quaternion(w: w, x: x, y: y, z: z)
      frame.gyroBiasRadiansPerSecond = try readScaled(&reader, lsb: gyroBiasLSBRadiansPerSecond)
      frame.linearAccelerationMetersPerSecondSquared = try readScaled(
        &reader, lsb: linearAccelerationLSBMetersPerSecondSquared)
      frame.temperatureCelsius = unscaled(try reader.readI16(), lsb: temperatureLSBCelsius)
      frame.flags = TelemetryFlags(rawValue: try reader.readU16())
      frame.missedSamples = try reader.readU32()
      frame.latencyMicroseconds = try reader.readU32()
      frame.calibrationID = try reader.readU32()
      frame.rateRadiansPerSecond = Vector3(.nan, .nan, .nan)
      frame.gravityBodyMetersPerSecondSquared = frame.attitude.inverseRotate(
        Vector3(0, 0, -standardGravity))
      frame.uncertainty = .notCarried
      return .success(.telemetry(frame))
    case .imu:
      guard body.count == imuPayloadCount else { return .failure(.wrongLength(body.count)) }
      return .success(.imu(try decodeIMUFields(&reader)))
    case .reply:
      guard body.count >= 4 else { return .failure(.wrongLength(body.count)) }
      let statusByte = try reader.readU8()
      let length = Int(try reader.readU8())
      guard let status = HostReply.Status(rawValue: statusByte),
        length <= HostReply.maximumTextLength, body.count == 4 + length
      else { return .failure(.wrongLength(body.count)) }
      var text = FixedText()
      text.append(try reader.readSlice(length))
      return .success(.reply(HostReply(status, text)))
    }
  }

  /// Kind 3's fields after the version and kind. The linear acceleration (reference frame) is
  /// recomputed: `attitude · f + (0, 0, −9.80665)`, f the specific force carried.
  private static func decodeIMUFields(_ reader: inout ByteCursor) throws(ByteCursor.ShortInput)
    -> TelemetryFrame
  {
    var frame = TelemetryFrame()
    frame.sequence = try reader.readU32()
    frame.sampleTimeNanoseconds = try reader.readI64()
    let w = Double(try reader.readF32())
    let x = Double(try reader.readF32())
    let y = Double(try reader.readF32())
    let z = Double(try reader.readF32())
    frame.attitude = Quaternion(w: w, x: x, y: y, z: z)
    let rx = Double(try reader.readF32())
    let ry = Double(try reader.readF32())
    let rz = Double(try reader.readF32())
    frame.rateRadiansPerSecond = Vector3(rx, ry, rz)
    let force = try readScaled(&reader, lsb: linearAccelerationLSBMetersPerSecondSquared)
    frame.gyroBiasRadiansPerSecond = try readScaled(&reader, lsb: gyroBiasLSBRadiansPerSecond)
    frame.temperatureCelsius = unscaled(try reader.readI16(), lsb: temperatureLSBCelsius)
    frame.flags = TelemetryFlags(rawValue: try reader.readU16())
    frame.missedSamples = try reader.readU32()
    frame.latencyMicroseconds = try reader.readU32()
    frame.calibrationID = try reader.readU32()
    var u = EstimateUncertainty()
    u.tiltRadians = unsigma(try reader.readU16(), lsb: attitudeSigmaLSBRadians)
    u.headingRadians = unsigma(try reader.readU16(), lsb: attitudeSigmaLSBRadians)
    let bx = unsigma(try reader.readU16(), lsb: gyroSigmaLSBRadiansPerSecond)
    let by = unsigma(try reader.readU16(), lsb: gyroSigmaLSBRadiansPerSecond)
    let bz = unsigma(try reader.readU16(), lsb: gyroSigmaLSBRadiansPerSecond)
    u.gyroBiasRadiansPerSecond = Vector3(bx, by, bz)
    u.gyroNoiseRadiansPerSecond = unsigma(try reader.readU16(), lsb: gyroSigmaLSBRadiansPerSecond)
    u.accelerometerNoiseMetersPerSecondSquared = unsigma(
      try reader.readU16(), lsb: accelerometerSigmaLSBMetersPerSecondSquared)
    frame.uncertainty = u
    let gravity = Vector3(0, 0, -standardGravity)
    frame.gravityBodyMetersPerSecondSquared = frame.attitude.inverseRotate(gravity)
    frame.linearAccelerationMetersPerSecondSquared = frame.attitude.rotate(force) + gravity
    return frame
  }

  /// The specific force a decoded kind-3 frame carried, exactly: the frame holds it as linear
  /// acceleration (reference frame), and turning it back leaves rounding of 10⁻¹² m/s² around
  /// a multiple of the 0.005 m/s² step the wire carries, which this removes.
  public static func carriedSpecificForce(of frame: TelemetryFrame) -> Vector3 {
    let f = frame.specificForceBodyMetersPerSecondSquared
    let lsb = linearAccelerationLSBMetersPerSecondSquared
    func carried(_ v: Double) -> Double { v.isFinite ? (v / lsb).rounded() * lsb : v }
    return Vector3(carried(f.x), carried(f.y), carried(f.z))
  }

  private static func readScaled(_ reader: inout ByteCursor, lsb: Double)
    throws(ByteCursor.ShortInput) -> Vector3
  {
    let x = unscaled(try reader.readI16(), lsb: lsb)
    let y = unscaled(try reader.readI16(), lsb: lsb)
    let z = unscaled(try reader.readI16(), lsb: lsb)
    return Vector3(x, y, z)
  }
}
