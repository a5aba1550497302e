/// The per-format state machines behind `StreamDecoder`. Each takes one byte at a time into a
/// buffer allocated once, emits at most what complete frames it holds, and accounts for every
/// byte in its own `LinkStatistics`.

/// Shared bookkeeping: the resync rule and the sequence/latency counters.
struct FramerBook {
  var statistics = LinkStatistics()
  /// Bytes were skipped since the last valid frame.
  var outOfSync = false

  mutating func skip(_ count: Int) {
    guard count > 0 else { return }
    statistics.bytesSkipped += UInt64(count)
    outOfSync = true
  }

  mutating func accept(_ count: Int) {
    statistics.bytesAccepted += UInt64(count)
    statistics.frames += 1
    if outOfSync {
      statistics.resyncs += 1
      outOfSync = false
    }
  }
}

// MARK: - Binary

struct BinaryFramer {
  var book = FramerBook()
  var sequence = SequenceTracker(bits: 32)
  private var buffer = [UInt8](repeating: 0, count: BinaryFormat.maximumEncodedCount)
  private var count = 0
  /// After an overlong block: drop bytes until the next delimiter.
  private var discarding = false
  private var ready: DecodedMessage? {
    didSet { hasMessage = ready != nil }
  }
  /// Whether `poll` has a message: checked before calling it, because `poll` returns a large
  /// optional (hundreds of bytes copied) and a stream decoder asks after every byte.
  private(set) var hasMessage = false

  var pendingCount: Int { count }

  mutating func push(_ byte: UInt8) {
    if byte == 0 {
      book.statistics.bytesAccepted += 1  // a delimiter is framing, never garbage
      if discarding {
        discarding = false
      } else if count > 0 {
        let length = count
        count = 0
        finish(length)
      }
      return
    }
    if discarding {
      book.skip(1)
      return
    }
    guard count < buffer.count else {
      // Longer than any valid frame: it cannot be one.
      book.skip(count + 1)
      book.statistics.malformed += 1
      count = 0
      discarding = true
      return
    }
    buffer[count] = byte
    count += 1
  }

  /// Counts a telemetry frame of either kind: its bytes, its sequence, its latency.
  private mutating func acceptTelemetry(_ frame: TelemetryFrame, length: Int) {
    book.accept(length)
    book.statistics.telemetryFrames += 1
    sequence.observe(frame.sequence, into: &book.statistics)
    book.statistics.recordLatency(frame.latencyMicroseconds)
  }

  private mutating func finish(_ length: Int) {
    let result = buffer.withUnsafeBytes {
      BinaryFormat.decode(encoded: UnsafeRawBufferPointer(rebasing: $0[0..<length]))
    }
    switch result {
    case .success(.telemetry(let frame)):
      acceptTelemetry(frame, length: length)
      ready = .binary(frame)
    case .success(.imu(let frame)):
      acceptTelemetry(frame, length: length)
      ready = .binaryIMU(frame)
    case .success(.reply(let reply)):
      book.accept(length)
      book.statistics.replies += 1
      ready = .reply(reply)
    case .failure(.crcMismatch):
      book.skip(length)
      book.statistics.crcErrors += 1
    case .failure:
      book.skip(length)
      book.statistics.malformed += 1
    }
  }

  mutating func poll() -> DecodedMessage? {
    // Called after every byte: answer "nothing" from the tag alone, without copying the
    // (large) optional out and writing `nil` back.
    guard case .some(let message) = ready else { return nil }
    ready = nil
    return message
  }

  /// Counts a partial frame as skipped and forgets it.
  mutating func discardPending() {
    book.skip(count)
    count = 0
    discarding = false
  }

  /// Forgets a partial frame and the counters; keeps sequence tracking.
  mutating func restart() {
    book = FramerBook()
    count = 0
    discarding = false
    ready = nil
  }
}

// MARK: - Text

struct TextFramer {
  /// Longer than any valid line (95 bytes), so an overlong line is surely garbage.
  static let capacity = 128

  var book = FramerBook()
  var sequence = SequenceTracker(bits: 32)
  private var buffer = [UInt8](repeating: 0, count: TextFramer.capacity)
  private var count = 0
  private var ready: DecodedMessage? {
    didSet { hasMessage = ready != nil }
  }
  /// Whether `poll` has a message: checked before calling it, because `poll` returns a large
  /// optional (hundreds of bytes copied) and a stream decoder asks after every byte.
  private(set) var hasMessage = false

  var pendingCount: Int { count }

  mutating func push(_ byte: UInt8) {
    if byte == UInt8(ascii: "$") {
      if count > 0 {
        // A line that never ended: a new one starts here.
        book.skip(count)
        book.statistics.malformed += 1
      }
      buffer[0] = byte
      count = 1
      return
    }
    guard count > 0 else {
      book.skip(1)  // between lines
      return
    }
    guard count < buffer.count else {
      book.skip(count + 1)
      book.statistics.malformed += 1
      count = 0
      return
    }
    buffer[count] = byte
    count += 1
    if byte == UInt8(ascii: "\n") {
      let length = count
      count = 0
      finish(length)
    }
  }

  private mutating func finish(_ length: Int) {
    let result = buffer.withUnsafeBytes {
      TextFormat.decode(line: UnsafeRawBufferPointer(rebasing: $0[0..<length]))
    }
    switch result {
    case .success(.telemetry(let line)):
      book.accept(length)
      book.statistics.telemetryFrames += 1
      sequence.observe(line.sequence, into: &book.statistics)
      book.statistics.recordLatency(line.latencyMicroseconds)
      ready = .text(line)
    case .success(.reply(let reply)):
      book.accept(length)
      book.statistics.replies += 1
      ready = .reply(reply)
    case .failure(.checksumMismatch):
      book.skip(length)
      book.statistics.crcErrors += 1
    case .failure:
      book.skip(length)
      book.statistics.malformed += 1
    }
  }

  mutating func poll() -> DecodedMessage? {
    // Called after every byte: answer "nothing" from the tag alone, without copying the
    // (large) optional out and writing `nil` back.
    guard case .some(let message) = ready else { return nil }
    ready = nil
    return message
  }

  mutating func discardPending() {
    book.skip(count)
    count = 0
  }

  mutating func restart() {
    book = FramerBook()
    count = 0
    ready = nil
  }
}

// MARK: - MAVLink

struct MAVLinkFramer {
  var book = FramerBook()
  var sequence = SequenceTracker(bits: 8)
  /// The (sysid, compid) whose packet sequence is followed: the first one seen.
  private var source: (system: UInt8, component: UInt8)?
  private var buffer = [UInt8](repeating: 0, count: MAVLink.maximumPacketCount)
  private var count = 0
  /// The length of the packet whose header is at the front of the buffer, once its header has
  /// been read (0 before): `poll` waits for that many bytes without reading the header again.
  private var awaitedCount = 0

  var pendingCount: Int { count }

  /// Whether `poll` could return a packet: bytes are buffered and the packet whose header was
  /// read is complete (`poll` returns `nil` without side effects otherwise). Checked before
  /// calling `poll`, which returns a large optional, after every byte.
  var mayHaveMessage: Bool { count > 0 && count >= awaitedCount }

  mutating func push(_ byte: UInt8) {
    if count == 0 && byte != MAVLink.startByte {
      book.skip(1)
      return
    }
    // `poll` runs after every push and leaves fewer bytes than one packet, so this fits.
    buffer[count] = byte
    count += 1
  }

  /// Drops `n` bytes from the front of the buffer as skipped.
  private mutating func drop(_ n: Int, skipped: Bool) {
    awaitedCount = 0
    if skipped { book.skip(n) }
    let remaining = count - n
    if remaining > 0 {
      buffer.withUnsafeMutableBytes { bytes in
        bytes.baseAddress!.copyMemory(from: bytes.baseAddress! + n, byteCount: remaining)
      }
    }
    count = remaining
  }

  mutating func poll() -> DecodedMessage? {
    // Most bytes arrive inside a packet whose header was read already.
    guard count >= awaitedCount else { return nil }
    while count > 0 {
      if buffer[0] != MAVLink.startByte {
        var next = 1
        while next < count && buffer[next] != MAVLink.startByte { next += 1 }
        drop(next, skipped: true)
        continue
      }
      guard count >= MAVLink.headerCount else { return nil }
      let header = buffer.withUnsafeBytes { MAVLink.header(UnsafeRawBufferPointer($0)) }
      let packetCount: Int
      switch header {
      case .success(let h):
        packetCount = h.packetCount
      case .failure(.unknownMessageID):
        book.statistics.unknownMessageIDs += 1
        drop(1, skipped: true)
        continue
      case .failure:
        book.statistics.malformed += 1
        drop(1, skipped: true)
        continue
      }
      guard count >= packetCount else {
        awaitedCount = packetCount
        return nil
      }
      let decoded = buffer.withUnsafeBytes {
        MAVLink.decode(packet: UnsafeRawBufferPointer(rebasing: $0[0..<packetCount]))
      }
      switch decoded {
      case .success(let packet):
        book.accept(packetCount)
        drop(packetCount, skipped: false)
        record(packet)
        return .mavlink(packet)
      case .failure(.crcMismatch):
        book.statistics.crcErrors += 1
        drop(1, skipped: true)
      case .failure:
        book.statistics.malformed += 1
        drop(1, skipped: true)
      }
    }
    return nil
  }

  private mutating func record(_ packet: MAVLinkPacket) {
    switch packet.message {
    case .attitudeQuaternion: book.statistics.telemetryFrames += 1
    case .statusText:
      if DecodedMessage.mavlink(packet).hostReply != nil { book.statistics.replies += 1 }
    default: break
    }
    if source == nil { source = (packet.systemID, packet.componentID) }
    if let source, source.system == packet.systemID, source.component == packet.componentID {
      sequence.observe(UInt32(packet.sequence), into: &book.statistics)
    } else {
      book.statistics.packetsFromOtherSources += 1
    }
  }

  mutating func discardPending() {
    book.skip(count)
    count = 0
    awaitedCount = 0
  }

  /// Follows the next packet's source and sequence afresh (a sender that switched to MAVLink
  /// starts a new packet sequence).
  mutating func forgetSequence() {
    source = nil
    sequence.last = nil
  }

  mutating func restart() {
    book = FramerBook()
    count = 0
    awaitedCount = 0
  }
}
