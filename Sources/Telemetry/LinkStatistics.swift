/// What a `StreamDecoder` has seen on the link (FORMATS.md "Decoding and link statistics").
///
/// Every byte is accounted for: `bytesReceived == bytesAccepted + bytesSkipped + pendingBytes`
/// (pending: the start of a frame still arriving; `StreamDecoder.finish()` moves it to skipped).
public struct LinkStatistics: Hashable, Sendable {
  /// Bytes given to the decoder.
  public var bytesReceived: UInt64 = 0
  /// Bytes of valid frames, packets and lines; for binary also every 0x00 delimiter.
  public var bytesAccepted: UInt64 = 0
  /// Bytes that were not part of a valid frame: garbage, damaged frames, frames of a message
  /// Plumb cannot check.
  public var bytesSkipped: UInt64 = 0
  /// Valid frames of any kind (telemetry, replies, MAVLink packets).
  public var frames: UInt64 = 0
  /// Frames carrying an attitude (binary and text telemetry, ATTITUDE_QUATERNION).
  public var telemetryFrames: UInt64 = 0
  /// Replies to host commands (binary reply frames, `$PLMBR` lines, STATUSTEXT `OK`/`ERR`).
  public var replies: UInt64 = 0
  /// Complete candidates whose CRC or checksum did not match.
  public var crcErrors: UInt64 = 0
  /// Candidates with the wrong shape: broken COBS, wrong length, unknown version or kind,
  /// unparsable fields, overlong lines, unsupported MAVLink flags, over-long payloads.
  public var malformed: UInt64 = 0
  /// MAVLink headers naming a message id Plumb has no CRC_EXTRA for (skipped; they cannot be
  /// told from garbage).
  public var unknownMessageIDs: UInt64 = 0
  /// Times the decoder found a valid frame after skipping bytes: each is the end of one
  /// stretch of damage (or of joining a stream mid-frame).
  public var resyncs: UInt64 = 0
  /// Times the sequence number jumped forward by more than one.
  public var sequenceGaps: UInt64 = 0
  /// Frames (MAVLink: packets) the gaps lost.
  public var framesLost: UInt64 = 0
  /// Frames that repeated the previous sequence number.
  public var duplicates: UInt64 = 0
  /// Frames whose sequence number went backwards (a restarted sender, or reordering).
  public var outOfOrder: UInt64 = 0
  /// MAVLink packets from a system/component other than the first one seen (not
  /// sequence-checked).
  public var packetsFromOtherSources: UInt64 = 0
  /// Times automatic detection settled on a format.
  public var formatDetections: UInt64 = 0
  /// Latency samples (the frames' own edge-to-write field; MAVLink does not carry it).
  public var latencyCount: UInt64 = 0
  public var latencySumMicroseconds: UInt64 = 0
  public var latencyMinimumMicroseconds: UInt32 = .max
  public var latencyMaximumMicroseconds: UInt32 = 0

  public init() {}

  /// Mean latency, µs, or `nil` before the first sample.
  public var meanLatencyMicroseconds: Double? {
    latencyCount == 0 ? nil : Double(latencySumMicroseconds) / Double(latencyCount)
  }

  /// Bytes received but not yet accepted or skipped.
  public var pendingBytes: UInt64 { bytesReceived - bytesAccepted - bytesSkipped }

  mutating func recordLatency(_ microseconds: UInt32) {
    latencyCount += 1
    latencySumMicroseconds += UInt64(microseconds)
    latencyMinimumMicroseconds = min(latencyMinimumMicroseconds, microseconds)
    latencyMaximumMicroseconds = max(latencyMaximumMicroseconds, microseconds)
  }

  /// The sum of two stretches of the same link (counts add; extremes combine).
  func adding(_ other: LinkStatistics) -> LinkStatistics {
    var sum = LinkStatistics()
    sum.bytesReceived = bytesReceived + other.bytesReceived
    sum.bytesAccepted = bytesAccepted + other.bytesAccepted
    sum.bytesSkipped = bytesSkipped + other.bytesSkipped
    sum.frames = frames + other.frames
    sum.telemetryFrames = telemetryFrames + other.telemetryFrames
    sum.replies = replies + other.replies
    sum.crcErrors = crcErrors + other.crcErrors
    sum.malformed = malformed + other.malformed
    sum.unknownMessageIDs = unknownMessageIDs + other.unknownMessageIDs
    sum.resyncs = resyncs + other.resyncs
    sum.sequenceGaps = sequenceGaps + other.sequenceGaps
    sum.framesLost = framesLost + other.framesLost
    sum.duplicates = duplicates + other.duplicates
    sum.outOfOrder = outOfOrder + other.outOfOrder
    sum.packetsFromOtherSources = packetsFromOtherSources + other.packetsFromOtherSources
    sum.formatDetections = formatDetections + other.formatDetections
    sum.latencyCount = latencyCount + other.latencyCount
    sum.latencySumMicroseconds = latencySumMicroseconds + other.latencySumMicroseconds
    sum.latencyMinimumMicroseconds = min(
      latencyMinimumMicroseconds, other.latencyMinimumMicroseconds)
    sum.latencyMaximumMicroseconds = max(
      latencyMaximumMicroseconds, other.latencyMaximumMicroseconds)
    return sum
  }
}

/// Follows a wrapping sequence number of `bits` bits.
struct SequenceTracker {
  let bits: Int
  var last: UInt32?

  init(bits: Int) { self.bits = bits }

  /// Records `sequence`: a step of one is in order; 0 a duplicate; up to half the range a gap;
  /// more than half the range a step backwards.
  mutating func observe(_ sequence: UInt32, into statistics: inout LinkStatistics) {
    defer { last = sequence }
    guard let last else { return }
    let mask: UInt32 = bits == 32 ? .max : (1 << UInt32(bits)) - 1
    let step = (sequence &- last) & mask
    let half = (mask >> 1) + 1
    switch step {
    case 1: break
    case 0: statistics.duplicates += 1
    case 2..<half:
      statistics.sequenceGaps += 1
      statistics.framesLost += UInt64(step - 1)
    default: statistics.outOfOrder += 1
    }
  }
}
