import Telemetry

/// Everything a monitor has counted: the decoder's `LinkStatistics` (frames, CRC errors,
/// resyncs, bytes skipped, sequence gaps — FORMATS.md §6), plus what the monitor adds:
/// latency percentiles, the frame rate measured from the frames' own sample times, and the
/// device's disconnections.
public struct MonitorStatistics: Hashable, Sendable {
  /// The decoder's counters.
  public var link = LinkStatistics()
  /// The format being decoded: the one asked for, or the one detected (`nil` before).
  public var format: TelemetryFormat?
  /// Telemetry frames: frames that carry an attitude (binary and text frames, MAVLink
  /// ATTITUDE_QUATERNION packets).
  public var telemetryFrames: UInt64 = 0
  /// MAVLink HEARTBEAT packets.
  public var heartbeats: UInt64 = 0
  /// The frames' edge-to-write latency (binary and text; MAVLink does not carry it).
  public var latency = LatencyHistogram()
  /// The sample time of the first telemetry frame in the rate window, ns.
  public var firstSampleTimeNanoseconds: Int64?
  /// The sample time of the latest telemetry frame in the rate window, ns.
  public var lastSampleTimeNanoseconds: Int64?
  /// Telemetry frames in the rate window (from the first to the latest sample time).
  public var framesInRateWindow: UInt64 = 0
  /// Times the sample time went backwards (a restarted board): the rate window starts again.
  public var sampleTimeResets: UInt64 = 0
  /// Times the serial device went away (`SerialError.disconnected`).
  public var disconnects: UInt64 = 0
  /// Times it was opened again (`--reopen`).
  public var reopens: UInt64 = 0

  public init() {}

  /// Seconds of sample time the rate window spans.
  public var sampleTimeSpanSeconds: Double? {
    guard let first = firstSampleTimeNanoseconds, let last = lastSampleTimeNanoseconds else {
      return nil
    }
    return Double(Self.nanoseconds(from: first, to: last)) / 1e9
  }

  /// `last − first` (`last ≥ first`), ns: unsigned, as two 64-bit sample times (frames carry
  /// any) may be up to 2⁶⁴ − 1 ns apart.
  static func nanoseconds(from first: Int64, to last: Int64) -> UInt64 {
    UInt64(bitPattern: last &- first)
  }

  /// Frames per second of sample time: (frames in the window − 1) / span. Measured from the
  /// frames' own timestamps (the chip's data-ready edges), so it is the rate the board
  /// produced and delivered, independent of when the bytes reached this host; frames lost on
  /// the way lower it. `nil` with fewer than two frames.
  public var frameRateHz: Double? {
    guard framesInRateWindow >= 2, let first = firstSampleTimeNanoseconds,
      let last = lastSampleTimeNanoseconds, last > first
    else { return nil }
    // Frames × 10⁹ / ns: both exact in a Double (below 2⁵³ ns, 104 days), so the one division
    // rounds once.
    return Double(framesInRateWindow - 1) * 1e9 / Double(Self.nanoseconds(from: first, to: last))
  }

  /// The lost units are frames for binary and text, packets for MAVLink (its sequence
  /// numbers count packets).
  public var lossUnit: String { format == .mavlink ? "packets" : "frames" }
}
