/// Decodes a telemetry byte stream as a host receives it: in chunks of any size (a frame may be
/// split anywhere), from any point in the stream, with damage.
///
/// It finds frames (binary delimiters, `$ … \n` lines, MAVLink STX), checks them (CRC,
/// checksum, version, length), resynchronises after garbage, follows sequence numbers, and
/// counts everything in `statistics`. Buffers are allocated once at `init` and bounded (61,
/// 128 and 280 bytes); decoding allocates nothing per byte.
///
/// **Automatic detection** (`format: nil`): until the first valid frame all three framers read
/// every byte; the first to produce a valid frame wins, and from then on it alone is counted.
/// The two others keep reading in the background, from the end of the winner's latest frame,
/// so a sender that changes format (host command `format X`) is followed at its first message
/// in the new format: the `OK format X` reply, which already travels in it, is delivered, and
/// no frame is lost or counted as damage. If no framer finds a valid frame in
/// `redetectAfterBytes` bytes, detection starts again. The statistics of a detection stretch
/// are the winner's (and, when the format changes, the bytes the winner still held after its
/// latest frame count as skipped), so every byte is counted once.
public struct StreamDecoder: Sendable {
  /// In automatic mode, bytes without a valid frame after which the format is detected again
  /// (about 7 of the largest MAVLink frames, 89 ms at 115200 baud).
  public static let redetectAfterBytes = 1024

  /// The format asked for at `init` (`nil`: detect it).
  public let requestedFormat: TelemetryFormat?
  /// The framing being decoded: the requested format, or the detected one (`nil` while
  /// detecting). Both binary formats are framed alike and read by one framer, which takes
  /// either kind of frame: this says `.binary` for both (a message says which it is).
  public private(set) var format: TelemetryFormat?

  private var binary = BinaryFramer()
  private var text = TextFramer()
  private var mavlink = MAVLinkFramer()
  /// Counts of finished detection stretches.
  private var committed = LinkStatistics()
  private var bytesReceived: UInt64 = 0
  private var bytesSinceFrame = 0
  private var bytesAtStretchStart: UInt64 = 0
  /// The winner's counts at the end of its latest frame (automatic detection).
  private var winnerAtLastFrame = LinkStatistics()
  /// Bytes the winner held after its latest frame when it was delivered (automatic detection):
  /// a MAVLink packet found by resynchronising inside the framer's buffer leaves bytes there,
  /// and the other framers start after them, so on a format change they are skipped here.
  private var winnerPendingAtLastFrame = 0

  /// A decoder for `format`, or one that detects the format when `format` is `nil`.
  public init(format: TelemetryFormat? = nil) {
    requestedFormat = format
    self.format = format.map(Self.framing)
  }

  /// The framing of `format`: `.binary` for both binary formats.
  public static func framing(_ format: TelemetryFormat) -> TelemetryFormat {
    format == .binaryIMU ? .binary : format
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
    case .binary, .binaryIMU:
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
    if found {
      // The background framers start again after this byte: what they count is exactly the
      // bytes the winner has not accounted for, less those it still holds (`markFrame`).
      markFrame(of: format)
      restartBackground(except: format)
      bytesSinceFrame = 0
      return
    }
    if try followSwitch(from: format, byte, body) { return }
    bytesSinceFrame += 1
    if bytesSinceFrame >= Self.redetectAfterBytes { startDetection() }
  }

  /// Feeds `byte` to the two framers of the other formats; when one of them completes a valid
  /// message, the sender has changed format: the winner's stretch ends at its latest frame
  /// (what it made of the bytes since is dropped: they belong to the new format) and the new
  /// format's framer, whose counts cover exactly those bytes, takes over.
  private mutating func followSwitch(
    from current: TelemetryFormat, _ byte: UInt8, _ body: (DecodedMessage) throws -> Void
  ) rethrows -> Bool {
    var winner: TelemetryFormat?
    if current != .binary {
      binary.push(byte)
      if binary.hasMessage { winner = .binary }
    }
    if current != .text, winner == nil {
      text.push(byte)
      if text.hasMessage { winner = .text }
    }
    if current != .mavlink, winner == nil {
      mavlink.push(byte)
      if mavlink.mayHaveMessage, let message = mavlink.poll() {
        switchFormat(from: current, to: .mavlink)
        try body(message)
        while mavlink.mayHaveMessage, let more = mavlink.poll() { try body(more) }
        markFrame(of: .mavlink)
        return true
      }
    }
    guard let winner else { return false }
    switchFormat(from: current, to: winner)
    switch winner {
    case .binary, .binaryIMU: if let message = binary.poll() { try body(message) }
    case .text: if let message = text.poll() { try body(message) }
    case .mavlink: break
    }
    return true
  }

  private mutating func switchFormat(from old: TelemetryFormat, to new: TelemetryFormat) {
    committed = committed.adding(winnerAtLastFrame)
    committed.bytesSkipped += UInt64(winnerPendingAtLastFrame)
    switch old {
    case .binary, .binaryIMU: binary.restart()
    case .text: text.restart()
    case .mavlink: mavlink.restart()
    }
    lock(new)
  }

  /// Restarts the framers of the other formats, with the sequence their first frame after a
  /// switch must follow: binary and text number frames with the same counter, so each carries
  /// on from the winner's; a sender that switches to MAVLink starts a new packet sequence.
  private mutating func restartBackground(except winner: TelemetryFormat) {
    switch winner {
    case .binary, .binaryIMU:
      text.restart()
      text.sequence.last = binary.sequence.last
      mavlink.restart()
      mavlink.forgetSequence()
    case .text:
      binary.restart()
      binary.sequence.last = text.sequence.last
      mavlink.restart()
      mavlink.forgetSequence()
    case .mavlink:
      binary.restart()
      binary.sequence.last = nil
      text.restart()
      text.sequence.last = nil
    }
  }

  /// Ends the stream: a partial frame still buffered is counted as skipped, so that
  /// afterwards `bytesReceived == bytesAccepted + bytesSkipped`.
  public mutating func finish() {
    startDetection()
    if let requestedFormat { format = Self.framing(requestedFormat) }
  }

  private func book(_ format: TelemetryFormat) -> FramerBook {
    switch format {
    case .binary, .binaryIMU: binary.book
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
      markFrame(of: .mavlink)
    } else if text.hasMessage, let message = text.poll() {
      lock(.text)
      try body(message)
    }
  }

  private mutating func lock(_ winner: TelemetryFormat) {
    format = winner
    bytesSinceFrame = 0
    restartBackground(except: winner)
    switch winner {
    case .binary, .binaryIMU: binary.book.statistics.formatDetections += 1
    case .text: text.book.statistics.formatDetections += 1
    case .mavlink: mavlink.book.statistics.formatDetections += 1
    }
    markFrame(of: winner)
  }

  /// Notes the winner's counts, and the bytes it still holds, after the frames it delivered
  /// for the current byte: where a format change takes up the count.
  private mutating func markFrame(of winner: TelemetryFormat) {
    winnerAtLastFrame = book(winner).statistics
    winnerPendingAtLastFrame =
      switch winner {
      case .binary, .binaryIMU: binary.pendingCount
      case .text: text.pendingCount
      case .mavlink: mavlink.pendingCount
      }
  }

  /// Closes the current stretch (its partial frame counts as skipped) and detects again.
  private mutating func startDetection() {
    switch format {
    case .binary?, .binaryIMU?:
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
