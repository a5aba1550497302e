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
    value = crc16CCITTTable.withUnsafeBufferPointer { Self.step(value, byte, $0) }
  }
  public mutating func update(_ bytes: UnsafeRawBufferPointer) {
    var crc = value
    crc16CCITTTable.withUnsafeBufferPointer { table in
      for byte in bytes { crc = Self.step(crc, byte, table) }
    }
    value = crc
  }

  /// One byte through the table: a byte at a time instead of a bit at a time (eight times
  /// fewer steps; the binary encoder spends most of its time here otherwise).
  @inline(__always)
  private static func step(_ crc: UInt16, _ byte: UInt8, _ table: UnsafeBufferPointer<UInt16>)
    -> UInt16
  {
    (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
  }

  /// The CRC of `bytes`.
  public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt16 {
    var crc = CRC16CCITTFalse()
    crc.update(bytes)
    return crc.value
  }
}

/// CRC-16/CCITT-FALSE of every byte value: entry b is the CRC register after shifting b
/// through it bit by bit (polynomial 0x1021), so one lookup replaces eight shifts.
private let crc16CCITTTable: [UInt16] = (0..<256).map { byte in
  var crc = UInt16(byte) << 8
  for _ in 0..<8 {
    crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
  }
  return crc
}

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
