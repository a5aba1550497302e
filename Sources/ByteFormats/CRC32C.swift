/// CRC-32C (Castagnoli): the checksum of every `.plumbraw` header and record.
///
/// Parameters (Greg Cook's "Catalogue of parametrised CRC algorithms", CRC-32/ISCSI):
/// polynomial 0x1EDC6F41 (0x82F63B78 reflected), initial value 0xFFFFFFFF, input and output
/// reflected, final XOR 0xFFFFFFFF, check value ("123456789") 0xE3069283. Chosen over CRC-32
/// (IEEE) for its larger Hamming distance on short messages (Castagnoli 1993), which is why
/// ext4, Btrfs and iSCSI use it for small metadata blocks like these records.
///
/// Table-driven, eight bytes at a time ("slicing by 8", eight lookups per eight bytes), then
/// four, the rest one at a time: a replay checks every record of a recording when it opens it. Nothing
/// allocates once the tables exist (they are built on first use).
public struct CRC32C: Hashable, Sendable {
  /// The running register (before the final XOR).
  @usableFromInline var register: UInt32 = 0xFFFF_FFFF

  // Inlinable: the recording writer and the replay reader check every record, across modules.
  @inlinable public init() {}

  /// The checksum of everything fed so far.
  @inlinable public var value: UInt32 { register ^ 0xFFFF_FFFF }

  /// Feeds `bytes`.
  @inlinable
  public mutating func update(_ bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress else { return }
    let count = bytes.count
    var crc = register
    CRC32C.tables.withUnsafeBufferPointer { tables in
      var index = 0
      let wholeWords = count & ~7
      while index < wholeWords {
        // The first four bytes meet the register; the last four only pass through the tables.
        let low =
          crc ^ UInt32(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt32.self))
        let high = UInt32(
          littleEndian: base.loadUnaligned(fromByteOffset: index &+ 4, as: UInt32.self))
        // Two halves of four terms each: Swift 6.0 cannot type-check the eight-term XOR in
        // reasonable time.
        let fromLow: UInt32 =
          tables[7 * 256 + Int(low & 0xFF)] ^ tables[6 * 256 + Int((low >> 8) & 0xFF)]
          ^ tables[5 * 256 + Int((low >> 16) & 0xFF)] ^ tables[4 * 256 + Int(low >> 24)]
        let fromHigh: UInt32 =
          tables[3 * 256 + Int(high & 0xFF)] ^ tables[2 * 256 + Int((high >> 8) & 0xFF)]
          ^ tables[256 + Int((high >> 16) & 0xFF)] ^ tables[Int(high >> 24)]
        crc = fromLow ^ fromHigh
        index &+= 8
      }
      if count &- index >= 4 {
        // Four bytes at once through tables 3 to 0 ("slicing by 4"): a sample record's body
        // (29 bytes) ends with five after its whole words, a byte at a time the dearest part.
        let word =
          crc ^ UInt32(littleEndian: base.loadUnaligned(fromByteOffset: index, as: UInt32.self))
        crc =
          tables[3 * 256 + Int(word & 0xFF)] ^ tables[2 * 256 + Int((word >> 8) & 0xFF)]
          ^ tables[256 + Int((word >> 16) & 0xFF)] ^ tables[Int(word >> 24)]
        index &+= 4
      }
      while index < count {
        let byte = base.load(fromByteOffset: index, as: UInt8.self)
        crc = tables[Int(UInt8(truncatingIfNeeded: crc) ^ byte)] ^ (crc >> 8)
        index &+= 1
      }
    }
    register = crc
  }

  /// Feeds one byte.
  @inlinable
  public mutating func update(_ byte: UInt8) {
    register = CRC32C.tables[Int(UInt8(truncatingIfNeeded: register) ^ byte)] ^ (register >> 8)
  }

  /// The checksum of `bytes`.
  @inlinable
  public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
    var crc = CRC32C()
    crc.update(bytes)
    return crc.value
  }

  /// The checksum of `bytes`.
  public static func checksum(_ bytes: [UInt8]) -> UInt32 {
    bytes.withUnsafeBytes { checksum($0) }
  }

  /// Eight tables of 256 entries, one after the other. Table 0, entry n: the register after
  /// shifting n through 8 zero bits (the reflected polynomial). Table k, entry n: the same
  /// followed by k zero bytes. The CRC is linear, so eight bytes — the first four XORed with
  /// the register — are the XOR of their entries in tables 7 down to 0.
  @usableFromInline static let tables: [UInt32] = {
    var tables = [UInt32](repeating: 0, count: 8 * 256)
    for index in 0..<256 {
      var value = UInt32(index)
      for _ in 0..<8 {
        value = value & 1 != 0 ? (value >> 1) ^ 0x82F6_3B78 : value >> 1
      }
      tables[index] = value
    }
    for table in 1..<8 {
      for index in 0..<256 {
        let previous = tables[(table - 1) * 256 + index]
        tables[table * 256 + index] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
      }
    }
    return tables
  }()
}
