import ByteFormats
import FuzzSupport
import Telemetry

/// The firmware's MAVLink receiver (Sources/Telemetry/MAVLinkReceiver.swift) on any bytes a
/// ground station, a noisy serial line or an attacker could send, as Plumb (system 1, component
/// 200) receives them.
///
/// Each input is read twice: as it is, and with the CRC of every packet of a known message
/// recomputed, so that mutations get past the checksum into the payloads and the targeting.
///
/// Properties, besides no trap and no hang: after every call every byte received is accepted,
/// ignored, skipped or still pending, and `packetsAccepted` is the number of packets delivered;
/// the input in pieces of random sizes gives the same packets and counters as at once; every
/// delivered packet is addressed to Plumb or broadcast, and `MAVLink.encode` writes it as a
/// packet that decodes to the same message (the same bytes again); `reset()` leaves nothing
/// pending and keeps the count exact.
@main enum MAVLinkReceiverFuzz {
  static func main() { runLibFuzzer(LLVMFuzzerTestOneInput) }

  static let systemID: UInt8 = 1
  static let componentID: UInt8 = 200

  static func test(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    check(bytes)
    let repaired = repairingChecksums(bytes)
    if repaired != bytes { check(repaired) }
  }

  static func accountsForEveryByte(_ receiver: MAVLinkReceiver, delivered: Int) -> Bool {
    let s = receiver.statistics
    return s.bytesReceived
      == s.bytesAccepted + s.bytesIgnored + s.bytesSkipped + UInt64(receiver.pendingCount)
      && s.packetsAccepted == UInt64(delivered)
  }

  static func check(_ bytes: [UInt8]) {
    var whole = MAVLinkReceiver(systemID: systemID, componentID: componentID)
    var packets: [MAVLinkPacket] = []
    whole.receive(bytes) { packets.append($0) }
    require(
      accountsForEveryByte(whole, delivered: packets.count),
      "every byte is accepted, ignored, skipped or pending",
      "\(whole.statistics), pending \(whole.pendingCount), \(packets.count) delivered")
    require(whole.statistics.bytesReceived == UInt64(bytes.count), "every byte is received")

    var pieces = MAVLinkReceiver(systemID: systemID, componentID: componentID)
    var piecePackets: [MAVLinkPacket] = []
    var offset = 0
    for size in ChunkSizes(count: bytes.count, seed: UInt64(bytes.count) &* 37) {
      pieces.receive(Array(bytes[offset..<offset + size])) { piecePackets.append($0) }
      offset += size
      require(
        accountsForEveryByte(pieces, delivered: piecePackets.count),
        "every byte is accounted for after every call", "\(pieces.statistics) at \(offset)")
    }
    require(
      piecePackets.map(encode) == packets.map(encode) && pieces.statistics == whole.statistics
        && pieces.pendingCount == whole.pendingCount,
      "bytes in pieces give what they give at once",
      "\(piecePackets.count) packets in pieces, \(packets.count) at once; "
        + "\(pieces.statistics) against \(whole.statistics)")

    for packet in packets {
      require(
        packet.message.isAddressed(toSystem: systemID, component: componentID),
        "a delivered packet is addressed to Plumb or broadcast", "\(packet)")
      let encoded = encode(packet)
      let again = encoded.withUnsafeBytes { MAVLink.decode(packet: $0) }
      guard case .success(let packetAgain) = again, encode(packetAgain) == encoded else {
        propertyViolated(
          "MAVLink.decode(MAVLink.encode(packet)) == packet", "\(packet) via \(hexDump(encoded))")
      }
      var receiver = MAVLinkReceiver(systemID: systemID, componentID: componentID)
      var received: [MAVLinkPacket] = []
      receiver.receive(encoded) { received.append($0) }
      require(
        received.count == 1 && encode(received[0]) == encoded,
        "the receiver takes a packet Plumb's encoder wrote", hexDump(encoded))
    }

    whole.reset()
    require(
      whole.pendingCount == 0 && accountsForEveryByte(whole, delivered: packets.count),
      "reset() drops what is pending and keeps the count exact", "\(whole.statistics)")
  }

  static func encode(_ packet: MAVLinkPacket) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: MAVLink.maximumPacketCount)
    let count = bytes.withUnsafeMutableBytes { MAVLink.encode(packet, into: $0) }
    return Array(bytes[0..<count])
  }

  /// `bytes` with the CRC of every packet of a known message recomputed (X.25 over the header
  /// after STX and the payload, then the message's CRC_EXTRA), walking packet by packet (as
  /// fuzz-mavlink does).
  static func repairingChecksums(_ bytes: [UInt8]) -> [UInt8] {
    var repaired = bytes
    var start = 0
    while start + MAVLink.headerCount <= repaired.count {
      guard repaired[start] == MAVLink.startByte else {
        start += 1
        continue
      }
      let payloadLength = Int(repaired[start + 1])
      let id =
        UInt32(repaired[start + 7]) | UInt32(repaired[start + 8]) << 8
        | UInt32(repaired[start + 9]) << 16
      let end = start + MAVLink.headerCount + payloadLength
      guard let info = MAVLink.info(forID: id), payloadLength <= info.maximumLength,
        end + MAVLink.checksumCount <= repaired.count
      else {
        start += 1
        continue
      }
      var crc = CRC16MCRF4XX()
      repaired.withUnsafeBytes { crc.update(UnsafeRawBufferPointer(rebasing: $0[start + 1..<end])) }
      crc.update(info.crcExtra)
      repaired[end] = UInt8(truncatingIfNeeded: crc.value)
      repaired[end + 1] = UInt8(truncatingIfNeeded: crc.value >> 8)
      let signed = repaired[start + 2] & MAVLink.incompatibilityFlagSigned != 0
      start = end + MAVLink.checksumCount + (signed ? MAVLink.signatureCount : 0)
    }
    return repaired
  }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  MAVLinkReceiverFuzz.test(fuzzInput(data, size))
  return 0
}
