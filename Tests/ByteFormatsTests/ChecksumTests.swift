import ByteFormats
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
    expectTableMatchesBitwise(CRC16CCITTFalse.self, upTo: 80, seed: 0x9E37_79B9_7F4A_7C15, bitwise)
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

  @Test("CRC-32C is the Castagnoli CRC (check value of \"123456789\")")
  func crcCheckValue() {
    #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    #expect(CRC32C.checksum([]) == 0)
  }

  @Test("CRC-32C eight bytes at a time equals the bit-by-bit definition, any length, any split")
  func crcMatchesTheBitwiseDefinition() {
    func bitwise(_ bytes: [UInt8]) -> UInt32 {
      var crc: UInt32 = 0xFFFF_FFFF
      for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
      }
      return crc ^ 0xFFFF_FFFF
    }
    expectTableMatchesBitwise(CRC32C.self, upTo: 100, seed: 0x0123_4567_89AB_CDEF, bitwise)
  }
}

/// A checksum fed whole buffers or single bytes: both table-driven CRCs.
private protocol FedChecksum {
  associatedtype Value: Equatable
  init()
  var value: Value { get }
  mutating func update(_ bytes: UnsafeRawBufferPointer)
  mutating func update(_ byte: UInt8)
  static func checksum(_ bytes: UnsafeRawBufferPointer) -> Value
}

extension CRC16CCITTFalse: FedChecksum {}
extension CRC32C: FedChecksum {}

/// `C` against `bitwise` for every length from 0 to `maximum` of seeded bytes, fed whole and
/// in three pieces (a buffer, one byte, a buffer): the table paths (whole words, then the
/// rest) cannot differ from the definition at any length or split.
private func expectTableMatchesBitwise<C: FedChecksum>(
  _: C.Type, upTo maximum: Int, seed: UInt64, _ bitwise: ([UInt8]) -> C.Value,
  sourceLocation: SourceLocation = #_sourceLocation
) {
  var state = seed
  let data: [UInt8] = (0..<maximum).map { _ in
    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    return UInt8(truncatingIfNeeded: state >> 56)
  }
  for length in 0...maximum {
    let bytes = Array(data[0..<length])
    let expected = bitwise(bytes)
    #expect(
      bytes.withUnsafeBytes { C.checksum($0) } == expected, "\(length) bytes",
      sourceLocation: sourceLocation)
    var pieces = C()
    bytes.withUnsafeBytes { raw in
      let cut = length / 3
      pieces.update(UnsafeRawBufferPointer(rebasing: raw[0..<cut]))
      if cut < length { pieces.update(raw[cut]) }
      if cut + 1 < length { pieces.update(UnsafeRawBufferPointer(rebasing: raw[(cut + 1)...])) }
    }
    #expect(pieces.value == expected, "\(length) bytes in pieces", sourceLocation: sourceLocation)
  }
}
