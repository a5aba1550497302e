/// The checksums the formats use. Each is a value you feed bytes to; nothing allocates.
///
/// | name | where | poly | init | reflected | xorout | check("123456789") |
/// |---|---|---|---|---|---|---|
/// | CRC-16/CCITT-FALSE | binary frames | 0x1021 | 0xFFFF | no | 0 | 0x29B1 |
/// | CRC-16/MCRF4XX ("X.25" in MAVLink) | MAVLink v2 | 0x1021 (0x8408 reflected) | 0xFFFF | yes | 0 | 0x6F91 |
/// | NMEA XOR | text lines | — | 0 | — | — | 0x31 |
///
/// The check values are the catalogue's (Greg Cook, "Catalogue of parametrised CRC algorithms")
/// and are asserted by the tests.
public struct CRC16CCITTFalse: Hashable, Sendable {
  /// The running value.
  public private(set) var value: UInt16 = 0xFFFF

  public init() {}

  /// Feeds one byte, most significant bit first.
  public mutating func update(_ byte: UInt8) {
    value = crc16CCITTTables.withUnsafeBufferPointer { Self.step(value, byte, $0) }
  }

  /// Feeds `bytes` four at a time ("slicing by 4": four lookups and no shifts of the register
  /// per four bytes), the rest one at a time. The binary encoder runs this over every frame.
  public mutating func update(_ bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress else { return }
    let count = bytes.count
    var crc = value
    crc16CCITTTables.withUnsafeBufferPointer { tables in
      var index = 0
      let wholeWords = count & ~3
      while index < wholeWords {
        // The first two bytes meet the register; the last two only pass through the tables.
        let word = UInt32(bigEndian: base.loadUnaligned(fromByteOffset: index, as: UInt32.self))
        let x = crc ^ UInt16(truncatingIfNeeded: word >> 16)
        crc =
          tables[3 * 256 + Int(x >> 8)] ^ tables[2 * 256 + Int(x & 0xFF)]
          ^ tables[256 + Int((word >> 8) & 0xFF)] ^ tables[Int(word & 0xFF)]
        index &+= 4
      }
      while index < count {
        crc = Self.step(crc, base.load(fromByteOffset: index, as: UInt8.self), tables)
        index &+= 1
      }
    }
    value = crc
  }

  /// One byte through the first table: a byte at a time instead of a bit at a time.
  @inline(__always)
  private static func step(_ crc: UInt16, _ byte: UInt8, _ tables: UnsafeBufferPointer<UInt16>)
    -> UInt16
  {
    (crc << 8) ^ tables[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
  }

  /// The CRC of `bytes`.
  public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt16 {
    var crc = CRC16CCITTFalse()
    crc.update(bytes)
    return crc.value
  }
}

/// CRC-16/CCITT-FALSE tables, four of 256 entries one after the other. Table 0, entry b: the
/// register after shifting b through it bit by bit from zero (polynomial 0x1021), so one lookup
/// replaces eight shifts. Table k, entry b: the same followed by k zero bytes (table k−1's
/// entry shifted through one more byte). The CRC is linear, so four bytes — the first two
/// XORed with the register — are the XOR of their entries in tables 3, 2, 1 and 0.
private let crc16CCITTTables: [UInt16] = {
  var tables = [UInt16](repeating: 0, count: 4 * 256)
  for byte in 0..<256 {
    var crc = UInt16(byte) << 8
    for _ in 0..<8 {
      crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
    }
    tables[byte] = crc
  }
  for table in 1..<4 {
    for byte in 0..<256 {
      let previous = tables[(table - 1) * 256 + byte]
      tables[table * 256 + byte] = (previous << 8) ^ tables[Int(previous >> 8)]
    }
  }
  return tables
}()

/// MAVLink's checksum: CRC-16/MCRF4XX, which the MAVLink documentation and pymavlink call X.25
/// (`x25crc`), accumulated over the frame after the STX byte and then over the message's
/// CRC_EXTRA byte.
public struct CRC16MCRF4XX: Hashable, Sendable {
  public private(set) var value: UInt16 = 0xFFFF

  public init() {}

  /// Feeds one byte (the MAVLink reference `crc_accumulate`, reflected polynomial 0x8408).
  public mutating func update(_ byte: UInt8) {
    var tmp = byte ^ UInt8(truncatingIfNeeded: value)
    tmp ^= tmp << 4
    let t = UInt16(tmp)
    value = (value >> 8) ^ (t << 8) ^ (t << 3) ^ (t >> 4)
  }
  public mutating func update(_ bytes: UnsafeRawBufferPointer) {
    for byte in bytes { update(byte) }
  }
  public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt16 {
    var crc = CRC16MCRF4XX()
    crc.update(bytes)
    return crc.value
  }
}

/// The NMEA 0183 sentence checksum: XOR of every byte between `$` and `*`. It catches every
/// single-bit error but no pair of flips in the same bit column; the text format is for people,
/// the binary and MAVLink formats are for machines.
public struct NMEAChecksum: Hashable, Sendable {
  public private(set) var value: UInt8 = 0

  public init() {}
  public mutating func update(_ byte: UInt8) { value ^= byte }
  public mutating func update(_ bytes: UnsafeRawBufferPointer) {
    for byte in bytes { update(byte) }
  }
  public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt8 {
    var sum = NMEAChecksum()
    sum.update(bytes)
    return sum.value
  }
}
