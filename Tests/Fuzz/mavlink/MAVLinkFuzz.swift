import ByteFormats
import FuzzSupport
import Telemetry

/// The MAVLink v2 parser (Sources/Telemetry/MAVLink.swift): the framer a host's decoder runs
/// (`StreamDecoder(format: .mavlink)`) and the packet codec (`MAVLink.decode(packet:)`,
/// `MAVLink.encode`), on any bytes.
///
/// Each input is read twice: as it is (damage, resynchronisation, CRC errors), and with the CRC
/// of every packet it holds recomputed, so that mutations get past the checksum into the
/// payloads (a 16-bit CRC with a per-message seed is hard to guess).
///
/// Properties, besides no trap and no hang: the stream in pieces of random sizes decodes to the
/// packets it decodes to at once, and after `finish()` every byte is accepted or skipped; every
/// decoded packet encodes to bytes that decode to the same packet; a packet of a message whose
/// every byte is a field (not STATUSTEXT, whose text ends at its first NUL) in canonical form
/// (unsigned, no flags, a payload of one byte or more without trailing zeros: what
/// `MAVLink.encode` writes) encodes back to its own bytes.
@main enum MAVLinkFuzz {
  static func main() { runLibFuzzer(LLVMFuzzerTestOneInput) }

  static func test(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    check(bytes)
    let repaired = repairingChecksums(bytes)
    if repaired != bytes { check(repaired) }
  }

  static func check(_ bytes: [UInt8]) {
    var whole = StreamDecoder(format: .mavlink)
    var packets: [MAVLinkPacket] = []
    whole.decode(bytes) { message in
      guard case .mavlink(let packet) = message else {
        propertyViolated("a MAVLink decoder delivers MAVLink packets", "\(message)")
      }
      packets.append(packet)
    }
    whole.finish()
    let statistics = whole.statistics
    require(
      statistics.bytesReceived == UInt64(bytes.count)
        && statistics.bytesAccepted + statistics.bytesSkipped == statistics.bytesReceived,
      "after finish() every byte is accepted or skipped", "\(statistics)")
    require(
      statistics.frames == UInt64(packets.count), "the statistics count the packets delivered",
      "\(statistics.frames) counted, \(packets.count) delivered")

    var pieces = StreamDecoder(format: .mavlink)
    var piecePackets: [[UInt8]] = []
    var offset = 0
    for size in ChunkSizes(count: bytes.count, seed: UInt64(bytes.count) &* 31) {
      pieces.decode(Array(bytes[offset..<offset + size])) { message in
        if case .mavlink(let packet) = message { piecePackets.append(encode(packet)) }
      }
      offset += size
    }
    pieces.finish()
    require(
      piecePackets == packets.map(encode) && pieces.statistics == statistics,
      "bytes fed in pieces decode as they do at once",
      "\(piecePackets.count) packets in pieces, \(packets.count) at once")

    for packet in packets {
      let encoded = encode(packet)
      var again: [MAVLinkPacket] = []
      var decoder = StreamDecoder(format: .mavlink)
      decoder.decode(encoded) { if case .mavlink(let p) = $0 { again.append(p) } }
      require(
        again.count == 1 && encode(again[0]) == encoded,
        "decode(encode(packet)) == packet", "\(packet) via \(hexDump(encoded))")
    }

    checkPacketCodec(bytes)
  }

  /// `MAVLink.decode(packet:)` on every whole packet the bytes hold where a header starts.
  static func checkPacketCodec(_ bytes: [UInt8]) {
    var start = 0
    while start + MAVLink.headerCount <= bytes.count {
      defer { start += 1 }
      guard bytes[start] == MAVLink.startByte else { continue }
      let payloadLength = Int(bytes[start + 1])
      let signed = bytes[start + 2] & MAVLink.incompatibilityFlagSigned != 0
      let length =
        MAVLink.headerCount + payloadLength + MAVLink.checksumCount
        + (signed ? MAVLink.signatureCount : 0)
      guard start + length <= bytes.count else { continue }
      let packetBytes = Array(bytes[start..<start + length])
      let decoded = packetBytes.withUnsafeBytes { MAVLink.decode(packet: $0) }
      guard case .success(let packet) = decoded else { continue }
      let encoded = encode(packet)
      let payload = packetBytes[MAVLink.headerCount..<MAVLink.headerCount + payloadLength]
      let id =
        UInt32(bytes[start + 7]) | UInt32(bytes[start + 8]) << 8 | UInt32(bytes[start + 9]) << 16
      let canonical =
        id != MAVLink.statusText.id && !signed && bytes[start + 2] == 0 && bytes[start + 3] == 0
        && payloadLength >= 1 && (payloadLength == 1 || payload.last != 0)
      if canonical {
        require(
          encoded == packetBytes, "a canonical packet encodes back to its own bytes",
          "\(hexDump(packetBytes)) became \(hexDump(encoded))")
      }
      let again = encoded.withUnsafeBytes { MAVLink.decode(packet: $0) }
      guard case .success(let packetAgain) = again, encode(packetAgain) == encoded else {
        propertyViolated(
          "MAVLink.decode(MAVLink.encode(packet)) == packet", "\(packet) via \(hexDump(encoded))")
      }
    }
  }

  static func encode(_ packet: MAVLinkPacket) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: MAVLink.maximumPacketCount)
    let count = bytes.withUnsafeMutableBytes { MAVLink.encode(packet, into: $0) }
    return Array(bytes[0..<count])
  }

  /// `bytes` with the CRC of every packet of a known message recomputed (X.25 over the header
  /// after STX and the payload, then the message's CRC_EXTRA), walking packet by packet.
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
  MAVLinkFuzz.test(fuzzInput(data, size))
  return 0
}
