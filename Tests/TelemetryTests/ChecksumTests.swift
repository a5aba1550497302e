import Telemetry
import Testing

/// The catalogue check string.
private let check: [UInt8] = Array("123456789".utf8)

@Suite struct ChecksumTests {
  @Test func crc16CCITTFalseCheckValue() {
    // CRC-16/CCITT-FALSE (a.k.a. CRC-16/IBM-3740): check = 0x29B1.
    #expect(check.withUnsafeBytes { CRC16CCITTFalse.checksum($0) } == 0x29B1)
    #expect([UInt8]().withUnsafeBytes { CRC16CCITTFalse.checksum($0) } == 0xFFFF)
  }

  /// The table-driven CRC (four bytes at a time, then one at a time) against the polynomial
  /// shifted bit by bit, for every length from 0 to 80 and for the data fed in pieces.
  @Test func crc16CCITTFalseMatchesTheBitwiseDefinition() {
    func bitwise(_ bytes: [UInt8]) -> UInt16 {
      var crc: UInt16 = 0xFFFF
      for byte in bytes {
        crc ^= UInt16(byte) << 8
        for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
      }
      return crc
    }
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    let data: [UInt8] = (0..<80).map { _ in
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return UInt8(truncatingIfNeeded: state >> 56)
    }
    for length in 0...80 {
      let bytes = Array(data[0..<length])
      let expected = bitwise(bytes)
      #expect(bytes.withUnsafeBytes { CRC16CCITTFalse.checksum($0) } == expected, "\(length) bytes")
      var pieces = CRC16CCITTFalse()
      bytes.withUnsafeBytes { raw in
        let cut = length / 3
        pieces.update(UnsafeRawBufferPointer(rebasing: raw[0..<cut]))
        if cut < length { pieces.update(raw[cut]) }
        if cut + 1 < length { pieces.update(UnsafeRawBufferPointer(rebasing: raw[(cut + 1)...])) }
      }
      #expect(pieces.value == expected, "\(length) bytes in pieces")
    }
  }

  @Test func crc16MCRF4XXCheckValue() {
    // CRC-16/MCRF4XX, MAVLink's "X.25": check = 0x6F91.
    #expect(check.withUnsafeBytes { CRC16MCRF4XX.checksum($0) } == 0x6F91)
  }

  @Test func nmeaChecksumOfAKnownSentence() {
    // The XOR of "123456789" is 0x31; a classic NMEA sentence from the GPS literature:
    // $GPGLL,5300.97914,N,00259.98174,E,125926,A*28
    #expect(check.withUnsafeBytes { NMEAChecksum.checksum($0) } == 0x31)
    let body = Array("GPGLL,5300.97914,N,00259.98174,E,125926,A".utf8)
    #expect(body.withUnsafeBytes { NMEAChecksum.checksum($0) } == 0x28)
  }

  @Test func crcDetectsEverySingleBitFlipOfAFrame() {
    let frame = Array("$PLMB payload of some length!".utf8)
    let good = frame.withUnsafeBytes { CRC16CCITTFalse.checksum($0) }
    for bit in 0..<(frame.count * 8) {
      var flipped = frame
      flipped[bit / 8] ^= 1 << UInt8(bit % 8)
      #expect(flipped.withUnsafeBytes { CRC16CCITTFalse.checksum($0) } != good)
    }
  }
}

private func encode(_ payload: [UInt8]) -> [UInt8] {
  var output = [UInt8](
    repeating: 0xEE, count: COBS.maximumEncodedCount(payloadCount: payload.count))
  let n = payload.withUnsafeBytes { p in output.withUnsafeMutableBytes { COBS.encode(p, into: $0) }
  }
  return Array(output[0..<n!])
}

private func decode(_ encoded: [UInt8]) -> Result<[UInt8], COBS.DecodeError> {
  var output = [UInt8](repeating: 0, count: 1024)
  let result = encoded.withUnsafeBytes { e in
    output.withUnsafeMutableBytes { COBS.decode(e, into: $0) }
  }
  return result.map { Array(output[0..<$0]) }
}

@Suite struct COBSTests {
  /// The examples of the COBS article on Wikipedia (Cheshire & Baker's algorithm), without the
  /// trailing delimiter.
  @Test(
    arguments: [
      ([0x00], [0x01, 0x01]),
      ([0x00, 0x00], [0x01, 0x01, 0x01]),
      ([0x00, 0x11, 0x00], [0x01, 0x02, 0x11, 0x01]),
      ([0x11, 0x22, 0x00, 0x33], [0x03, 0x11, 0x22, 0x02, 0x33]),
      ([0x11, 0x22, 0x33, 0x44], [0x05, 0x11, 0x22, 0x33, 0x44]),
      ([0x11, 0x00, 0x00, 0x00], [0x02, 0x11, 0x01, 0x01, 0x01]),
    ] as [([UInt8], [UInt8])])
  func knownEncodings(payload: [UInt8], encoded: [UInt8]) throws {
    #expect(encode(payload) == encoded)
    #expect(try decode(encoded).get() == payload)
  }

  @Test func runsOf254And255NonZeroBytes() throws {
    let run254 = (1...254).map { UInt8($0) }
    // 253: the longest payload a single block holds without filling it.
    let run253 = Array(run254.prefix(253))
    #expect(encode(run253) == [0xFE] + run253)
    #expect(encode(run253 + [0]) == [0xFE] + run253 + [0x01])
    // 254 non-zero bytes: one full block, no trailing code byte.
    #expect(encode(run254) == [0xFF] + run254)
    let run255 = run254 + [0xFF]
    #expect(encode(run255) == [0xFF] + run254 + [0x02, 0xFF])
    let zeroThenRun = [0x00] + run254
    #expect(encode(zeroThenRun) == [0x01, 0xFF] + run254)
    for payload in [run254, run255, zeroThenRun] {
      #expect(try decode(encode(payload)).get() == payload)
    }
  }

  @Test func seededRoundTripsIncludingZeroHeavyAndLongPayloads() throws {
    var random = SplitMix64(seed: 0xC0B5)
    for trial in 0..<2000 {
      let length = Int(random.next() % 700)
      let zeroShare = [0.0, 0.5, 0.95, 1.0][trial % 4]
      let payload = (0..<length).map { _ -> UInt8 in
        random.uniform(0, 1) < zeroShare ? 0 : UInt8(1 + random.next() % 255)
      }
      let encoded = encode(payload)
      #expect(!encoded.contains(0), "COBS output must have no zero byte")
      #expect(encoded.count <= COBS.maximumEncodedCount(payloadCount: length))
      #expect(encoded.count <= length + (length + 253) / 254 + 1)
      #expect(try decode(encoded).get() == payload)
    }
  }

  @Test func brokenEncodingsAreRejectedNotMisread() {
    #expect(decode([]) == .failure(.empty))
    #expect(decode([0x05, 0x11, 0x22]) == .failure(.truncatedBlock(offset: 0)))
    #expect(decode([0x03, 0x11, 0x00]) == .failure(.zeroByte(offset: 2)))
    var small = [UInt8](repeating: 0, count: 2)
    let result = [UInt8]([0x04, 1, 2, 3]).withUnsafeBytes { e in
      small.withUnsafeMutableBytes { COBS.decode(e, into: $0) }
    }
    #expect(result == .failure(.outputTooSmall))
  }
}
