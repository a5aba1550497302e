/// What a `MAVLinkReceiver` did with the bytes it was given.
///
/// Every byte received is counted exactly once, in one of three counters, or is still held:
/// `bytesReceived == bytesAccepted + bytesIgnored + bytesSkipped + UInt64(pendingCount)`
/// (`MAVLinkReceiver.pendingCount`) after every call, and `packetsAccepted` is the number of
/// packets handed to the caller.
public struct MAVLinkReceiverStatistics: Hashable, Sendable {
  /// Bytes given to `receive`.
  public var bytesReceived: UInt64 = 0
  /// Bytes of the packets delivered (`packetsAccepted`), signatures included.
  public var bytesAccepted: UInt64 = 0
  /// Bytes of packets passed over whole, by their length: valid packets addressed to another
  /// component (`notForUs`), messages Plumb cannot check (`unknownMessages`) and MAVLink 1
  /// packets (`mavlinkV1Packets`).
  public var bytesIgnored: UInt64 = 0
  /// Bytes dropped while looking for a start byte: garbage between packets, and the bytes of a
  /// packet found bad (`crcErrors`, `unsupportedFlags`, `oversizedPayloads`), whose start byte is
  /// dropped and whose other bytes are searched again for a packet start, and the bytes of a
  /// header that cannot be checked and is not followed by a start byte where it ends (see
  /// `MAVLinkReceiver`).
  public var bytesSkipped: UInt64 = 0
  /// Packets delivered: valid, of a known message, addressed to Plumb or broadcast.
  public var packetsAccepted: UInt64 = 0
  /// MAVLink 2 headers of a known message whose CRC did not match.
  public var crcErrors: UInt64 = 0
  /// MAVLink 2 packets of a message id Plumb has no CRC_EXTRA for (SYSTEM_TIME, TIMESYNC, …):
  /// passed over by their declared length, never answered.
  public var unknownMessages: UInt64 = 0
  /// MAVLink 2 headers with an incompatibility flag other than "signed" (the spec says drop).
  public var unsupportedFlags: UInt64 = 0
  /// MAVLink 2 headers of a known message declaring more payload than the message has.
  public var oversizedPayloads: UInt64 = 0
  /// Valid packets whose `target_system`/`target_component` name another system or component
  /// (neither Plumb's nor 0, broadcast).
  public var notForUs: UInt64 = 0
  /// Delivered packets that carried a signature (included in `packetsAccepted`). The signature
  /// is skipped, not verified: Plumb has no key to check it with.
  public var signedPackets: UInt64 = 0
  /// MAVLink 1 packets (start byte 0xFE): passed over by their length; Plumb speaks MAVLink 2
  /// only.
  public var mavlinkV1Packets: UInt64 = 0

  public init() {}
}

/// The firmware's parser of the bytes a ground station sends (untrusted): finds the MAVLink 2
/// packets in them, checks each, and hands over those addressed to Plumb.
///
/// Give it the bytes as they come (a serial read or one UDP datagram); a packet split between
/// calls is completed by the next one. After garbage or a bad packet it resynchronises on the
/// next start byte, searching the bad packet's own bytes first, as `MAVLinkFramer` does.
///
/// A MAVLink 2 packet of an unknown message, or a MAVLink 1 packet, has no CRC Plumb can check:
/// its header could as well be garbage that happens to hold a start byte (in line noise, one
/// byte in 256 is 0xFD, and almost every id is unknown). Such a packet is passed over by its
/// declared length only when the byte after it is a start byte, as on a working link where the
/// next packet follows; otherwise its start byte is dropped as garbage and the search goes on
/// inside it, so a false header never swallows the packets behind it. While such a packet is
/// incomplete, a packet Plumb knows that ends inside it (complete, CRC correct) shows that its
/// header was garbage: that packet is delivered at once, not after the false one's length. The
/// one byte of look-ahead holds an unknown packet until the next byte arrives; a packet Plumb
/// knows is delivered as soon as its last byte is in.
///
/// Allocation-free after `init`: the buffer (`MAVLink.maximumPacketCount` + 1 bytes: the
/// longest packet and the byte after it) is made once and never grows; decoding works on the
/// stack. (A copy of a receiver gets its own buffer on its first write.)
public struct MAVLinkReceiver {
  /// The MAVLink 1 start byte.
  public static let v1StartByte: UInt8 = 0xFE
  /// Bytes of a MAVLink 1 packet besides its payload: `STX len seq sysid compid msgid` + CRC.
  public static let v1OverheadCount = 8

  /// Plumb's own identity: packets addressed elsewhere are counted, not delivered.
  public let systemID: UInt8
  public let componentID: UInt8
  public private(set) var statistics = MAVLinkReceiverStatistics()

  /// The bytes of the packet being assembled, from its start byte.
  private var buffer: [UInt8]
  private var count = 0
  /// How many bytes the front of the buffer needs before anything more can be decided.
  private var awaitedCount = 1

  public init(systemID: UInt8, componentID: UInt8) {
    self.systemID = systemID
    self.componentID = componentID
    buffer = [UInt8](repeating: 0, count: MAVLink.maximumPacketCount + 1)
  }

  /// Bytes held of a packet not yet complete.
  public var pendingCount: Int { count }

  /// Reads `bytes` and calls `handle` with each valid packet addressed to Plumb (or broadcast),
  /// in order. `handle` must not call back into the receiver.
  public mutating func receive(
    _ bytes: UnsafeRawBufferPointer, _ handle: (MAVLinkPacket) -> Void
  ) {
    statistics.bytesReceived += UInt64(bytes.count)
    var index = 0
    while index < bytes.count {
      if count == 0 {
        // Between packets: run to the next start byte.
        var next = index
        while next < bytes.count && !Self.isStart(bytes[next]) { next += 1 }
        statistics.bytesSkipped += UInt64(next - index)
        index = next
        if index == bytes.count { break }
      }
      // As many bytes as the front of the buffer needs (never more than it holds).
      let n = min(awaitedCount - count, bytes.count - index)
      let start = count
      buffer.withUnsafeMutableBytes { buffer in
        buffer.baseAddress!.advanced(by: start).copyMemory(
          from: bytes.baseAddress!.advanced(by: index), byteCount: n)
      }
      count += n
      index += n
      if count >= awaitedCount { process(handle) }
    }
  }

  /// `receive` for an array (tests and tools).
  public mutating func receive(_ bytes: [UInt8], _ handle: (MAVLinkPacket) -> Void) {
    bytes.withUnsafeBytes { receive($0, handle) }
  }

  /// Drops a partial packet (counted as skipped): for a port that was closed and opened again,
  /// whose next byte starts a new stream.
  public mutating func reset() {
    statistics.bytesSkipped += UInt64(count)
    count = 0
    awaitedCount = 1
  }

  @inline(__always)
  private static func isStart(_ byte: UInt8) -> Bool {
    byte == MAVLink.startByte || byte == v1StartByte
  }

  /// Decides what the buffered bytes are, as far as they allow; leaves either nothing or the
  /// start of one packet, with `awaitedCount` the bytes it needs.
  private mutating func process(_ handle: (MAVLinkPacket) -> Void) {
    while count > 0 {
      let first = buffer[0]
      if first == Self.v1StartByte {
        guard count >= 2 else {
          awaitedCount = 2
          return
        }
        switch passOver(Int(buffer[1]) + Self.v1OverheadCount) {
        case .some(true): statistics.mavlinkV1Packets += 1
        case .some(false): continue
        case .none:
          guard let start = packetEndingInside() else { return }
          skip(start)
        }
        continue
      }
      if first != MAVLink.startByte {
        var next = 1
        while next < count && !Self.isStart(buffer[next]) { next += 1 }
        skip(next)
        continue
      }
      guard count >= MAVLink.headerCount else {
        awaitedCount = MAVLink.headerCount
        return
      }
      let header = buffer.withUnsafeBytes { MAVLink.header($0) }
      let packetCount: Int
      switch header {
      case .success(let header):
        packetCount = header.packetCount
      case .failure(.unknownMessageID):
        // The flags are known (they are checked first): the length is the header's.
        let signed = buffer[2] & MAVLink.incompatibilityFlagSigned != 0
        let length =
          MAVLink.headerCount + Int(buffer[1]) + MAVLink.checksumCount
          + (signed ? MAVLink.signatureCount : 0)
        switch passOver(length) {
        case .some(true): statistics.unknownMessages += 1
        case .some(false): continue
        case .none:
          guard let start = packetEndingInside() else { return }
          skip(start)
        }
        continue
      case .failure(.unsupportedIncompatibilityFlags):
        statistics.unsupportedFlags += 1
        skip(1)
        continue
      case .failure:
        statistics.oversizedPayloads += 1
        skip(1)
        continue
      }
      guard count >= packetCount else {
        awaitedCount = packetCount
        return
      }
      let decoded = buffer.withUnsafeBytes {
        MAVLink.decode(packet: UnsafeRawBufferPointer(rebasing: $0[0..<packetCount]))
      }
      switch decoded {
      case .success(let packet):
        if packet.message.isAddressed(toSystem: systemID, component: componentID) {
          statistics.packetsAccepted += 1
          statistics.bytesAccepted += UInt64(packetCount)
          if buffer[2] & MAVLink.incompatibilityFlagSigned != 0 { statistics.signedPackets += 1 }
          drop(packetCount)
          handle(packet)
        } else {
          statistics.notForUs += 1
          statistics.bytesIgnored += UInt64(packetCount)
          drop(packetCount)
        }
      case .failure(.crcMismatch):
        statistics.crcErrors += 1
        skip(1)
      case .failure:
        // Fields beyond the payload: the message table and its reader disagree, which no
        // packet can cause; counted with the oversized payloads, never a trap.
        statistics.oversizedPayloads += 1
        skip(1)
      }
    }
    awaitedCount = 1
  }

  /// Where a MAVLink 2 packet of a known message starts that ends with the last byte buffered
  /// and is valid (CRC correct): searched after each byte while an unchecked packet is held,
  /// so each packet inside it is tried once, when its last byte arrives.
  private func packetEndingInside() -> Int? {
    buffer.withUnsafeBytes { bytes -> Int? in
      var start = 1
      while start + MAVLink.headerCount + MAVLink.checksumCount <= count {
        defer { start += 1 }
        guard bytes[start] == MAVLink.startByte else { continue }
        let candidate = UnsafeRawBufferPointer(rebasing: bytes[start..<count])
        guard case .success(let header) = MAVLink.header(candidate),
          header.packetCount == candidate.count,
          case .success = MAVLink.decode(packet: candidate)
        else { continue }
        return start
      }
      return nil
    }
  }

  /// Drops `n` buffered bytes as garbage.
  private mutating func skip(_ n: Int) {
    statistics.bytesSkipped += UInt64(n)
    drop(n)
  }

  /// A packet that cannot be checked, `length` bytes from the front: passed over (`true`) when
  /// the byte after it starts a packet; its start byte skipped as garbage (`false`) when not;
  /// `nil` until that byte is in (with `awaitedCount` one more byte, so that each byte is
  /// searched for a packet ending inside it).
  private mutating func passOver(_ length: Int) -> Bool? {
    guard count > length else {
      awaitedCount = count + 1
      return nil
    }
    guard Self.isStart(buffer[length]) else {
      skip(1)
      return false
    }
    statistics.bytesIgnored += UInt64(length)
    drop(length)
    return true
  }

  /// Removes `n` bytes from the front of the buffer.
  private mutating func drop(_ n: Int) {
    let remaining = count - n
    if remaining > 0 {
      buffer.withUnsafeMutableBytes { bytes in
        bytes.baseAddress!.copyMemory(from: bytes.baseAddress! + n, byteCount: remaining)
      }
    }
    count = remaining
  }
}
