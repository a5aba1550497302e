import Geometry

/// One thing a `StreamDecoder` found in the byte stream.
public enum DecodedMessage: Hashable, Sendable {
  /// The telemetry frame a binary message carries, of either kind.
  public var binaryFrame: TelemetryFrame? {
    switch self {
    case .binary(let frame), .binaryIMU(let frame): frame
    default: nil
    }
  }

  /// A binary telemetry frame (rate is NaN: binary frames do not carry it; gravity is recomputed
  /// from the attitude).
  case binary(TelemetryFrame)
  /// A binary IMU frame (kind 3, format `binary-imu`): every field of `TelemetryFrame`, the
  /// linear acceleration and gravity recomputed from the specific force and the attitude.
  case binaryIMU(TelemetryFrame)
  /// A `$PLMB` line.
  case text(TextTelemetry)
  /// A MAVLink packet of a known message (including STATUSTEXT replies).
  case mavlink(MAVLinkPacket)
  /// A reply to a host command from a binary reply frame or a `$PLMBR` line.
  case reply(HostReply)

  /// The attitude sample the message carries, in Plumb's convention, if it carries one:
  /// binary and text telemetry, and MAVLink's ATTITUDE_QUATERNION (converted back from NED/FRD).
  public var attitudeSample: AttitudeSample? {
    switch self {
    case .binary(let frame), .binaryIMU(let frame):
      return AttitudeSample(
        sequence: frame.sequence, sampleTimeNanoseconds: frame.sampleTimeNanoseconds,
        attitude: frame.attitude, flags: frame.flags, missedSamples: frame.missedSamples,
        latencyMicroseconds: frame.latencyMicroseconds)
    case .text(let line):
      return AttitudeSample(
        sequence: line.sequence,
        sampleTimeNanoseconds: saturatingNanoseconds(milliseconds: line.sampleTimeMilliseconds),
        attitude: line.attitude, flags: line.flags, missedSamples: line.missedSamples,
        latencyMicroseconds: line.latencyMicroseconds)
    case .mavlink(let packet):
      guard case .attitudeQuaternion(let m) = packet.message else { return nil }
      let q = Quaternion(
        w: Double(m.attitude.w), x: Double(m.attitude.x), y: Double(m.attitude.y),
        z: Double(m.attitude.z))
      return AttitudeSample(
        sequence: nil, sampleTimeNanoseconds: Int64(m.timeBootMilliseconds) * 1_000_000,
        attitude: MAVLinkFrames.plumbAttitude(fromNED: q), flags: nil, missedSamples: nil,
        latencyMicroseconds: nil)
    case .reply:
      return nil
    }
  }

  /// The host reply the message carries: a binary or text reply, or a STATUSTEXT whose text
  /// starts with `OK ` or `ERR ` (how Plumb sends replies over MAVLink).
  public var hostReply: HostReply? {
    switch self {
    case .reply(let reply):
      return reply
    case .mavlink(let packet):
      guard case .statusText(let m) = packet.message else { return nil }
      let status: HostReply.Status
      let prefixLength: Int
      if m.text.hasPrefix("OK ") {
        (status, prefixLength) = (.ok, 3)
      } else if m.text.hasPrefix("ERR ") {
        (status, prefixLength) = (.error, 4)
      } else {
        return nil
      }
      var text = FixedText()
      m.text.withBytes { text.append(UnsafeRawBufferPointer(rebasing: $0[prefixLength...])) }
      return HostReply(status, text)
    default:
      return nil
    }
  }
}

/// What every attitude-carrying format has in common, in Plumb's units and frames.
public struct AttitudeSample: Hashable, Sendable {
  /// The frame sequence number (binary and text; MAVLink carries only a packet sequence).
  public var sequence: UInt32?
  /// Sample time, ns (text: to the ms; MAVLink: `time_boot_ms`, to the ms, wrapping at 2³² ms).
  public var sampleTimeNanoseconds: Int64
  /// Body → reference (z up) attitude.
  public var attitude: Quaternion
  public var flags: TelemetryFlags?
  public var missedSamples: UInt32?
  public var latencyMicroseconds: UInt32?
}

/// Milliseconds to nanoseconds, saturating at the ends of Int64 (a text line can carry a time
/// of about ±292 million years; a real one never does, but decoding must not trap on it).
func saturatingNanoseconds(milliseconds: Int64) -> Int64 {
  let (product, overflow) = milliseconds.multipliedReportingOverflow(by: 1_000_000)
  if overflow { return milliseconds < 0 ? .min : .max }
  return product
}
