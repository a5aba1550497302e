/// Decodes a telemetry byte stream as a host receives it: in chunks of any size (a frame may be
/// split anywhere), from any point in the stream, with damage.
///
/// It finds frames (binary delimiters, `$ … \n` lines, MAVLink STX), checks them (CRC,
/// checksum, version, length), resynchronises after garbage, follows sequence numbers, and
/// counts everything in `statistics`. Buffers are allocated once at `init` and bounded (61,
/// 128 and 280 bytes); decoding allocates nothing per byte.
///
/// **Automatic detection** (`format: nil`): until the first valid frame all three framers read
/// every byte; the first to produce a valid frame wins, and from then on only it reads. If the
/// winner then sees `redetectAfterBytes` bytes without a valid frame (the sender changed
/// format), detection starts again. The statistics of a detection stretch are the winner's.
public struct StreamDecoder: Sendable {
  /// In automatic mode, bytes without a valid frame after which the format is detected again
  /// (about 7 of the largest MAVLink frames, 89 ms at 115200 baud).
  public static let redetectAfterBytes = 1024

  /// The format asked for at `init` (`nil`: detect it).
  public let requestedFormat: TelemetryFormat?
  /// The format being decoded: the requested one, or the detected one (`nil` while detecting).
  public private(set) var format: TelemetryFormat?

  private var binary = BinaryFramer()
  private var text = TextFramer()
  private var mavlink = MAVLinkFramer()
  /// Counts of finished detection stretches.
  private var committed = LinkStatistics()
  private var bytesReceived: UInt64 = 0
  private var bytesSinceFrame = 0
  private var bytesAtStretchStart: UInt64 = 0

  /// A decoder for `format`, or one that detects the format when `format` is `nil`.
  public init(format: TelemetryFormat? = nil) {
    requestedFormat = format
    self.format = format
  }

  /// Everything counted so far.
  public var statistics: LinkStatistics {
    var total = committed
    if let format { total = total.adding(book(format).statistics) }
    total.bytesReceived = bytesReceived
    return total
  }

  /// Decodes `bytes`, calling `body` with each message in stream order.
  public mutating func decode(
    _ bytes: UnsafeRawBufferPointer, _ body: (DecodedMessage) throws -> Void
  ) rethrows {
    for byte in bytes { try decode(byte: byte, body) }
  }

  /// Decodes an array's bytes (for tools and tests).
  public mutating func decode(_ bytes: [UInt8], _ body: (DecodedMessage) throws -> Void) rethrows {
    for byte in bytes { try decode(byte: byte, body) }
  }

  /// Decodes one byte.
  public mutating func decode(byte: UInt8, _ body: (DecodedMessage) throws -> Void) rethrows {
    bytesReceived += 1
    guard let format else {
      try detect(byte, body)
      return
    }
    var found = false
    switch format {
    case .binary:
      binary.push(byte)
      while binary.hasMessage, let message = binary.poll() {
        found = true
        try body(message)
      }
    case .text:
      text.push(byte)
      while text.hasMessage, let message = text.poll() {
        found = true
        try body(message)
      }
    case .mavlink:
      mavlink.push(byte)
      while mavlink.mayHaveMessage, let message = mavlink.poll() {
        found = true
        try body(message)
      }
    }
    guard requestedFormat == nil else { return }
    bytesSinceFrame = found ? 0 : bytesSinceFrame + 1
    if bytesSinceFrame >= Self.redetectAfterBytes { startDetection() }
  }

  /// Ends the stream: a partial frame still buffered is counted as skipped, so that
  /// afterwards `bytesReceived == bytesAccepted + bytesSkipped`.
  public mutating func finish() {
    startDetection()
    if let requestedFormat { format = requestedFormat }
  }

  private func book(_ format: TelemetryFormat) -> FramerBook {
    switch format {
    case .binary: binary.book
    case .text: text.book
    case .mavlink: mavlink.book
    }
  }

  private mutating func detect(_ byte: UInt8, _ body: (DecodedMessage) throws -> Void) rethrows {
    binary.push(byte)
    mavlink.push(byte)
    text.push(byte)
    if binary.hasMessage, let message = binary.poll() {
      lock(.binary)
      try body(message)
    } else if mavlink.mayHaveMessage, let message = mavlink.poll() {
      lock(.mavlink)
      try body(message)
      while mavlink.mayHaveMessage, let more = mavlink.poll() { try body(more) }
    } else if text.hasMessage, let message = text.poll() {
      lock(.text)
      try body(message)
    }
  }

  private mutating func lock(_ winner: TelemetryFormat) {
    format = winner
    bytesSinceFrame = 0
    if winner != .binary { binary.restart() }
    if winner != .text { text.restart() }
    if winner != .mavlink { mavlink.restart() }
    switch winner {
    case .binary: binary.book.statistics.formatDetections += 1
    case .text: text.book.statistics.formatDetections += 1
    case .mavlink: mavlink.book.statistics.formatDetections += 1
    }
  }

  /// Closes the current stretch (its partial frame counts as skipped) and detects again.
  private mutating func startDetection() {
    switch format {
    case .binary?:
      binary.discardPending()
      committed = committed.adding(binary.book.statistics)
    case .text?:
      text.discardPending()
      committed = committed.adding(text.book.statistics)
    case .mavlink?:
      mavlink.discardPending()
      committed = committed.adding(mavlink.book.statistics)
    case nil:
      // No winner: everything since the stretch began was unusable.
      committed.bytesSkipped += bytesReceived - bytesAtStretchStart
    }
    format = nil
    bytesSinceFrame = 0
    bytesAtStretchStart = bytesReceived
    binary.restart()
    text.restart()
    mavlink.restart()
  }
}
