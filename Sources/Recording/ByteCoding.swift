/// Little-endian writing into a preallocated buffer: how records are encoded on the hot path.
///
/// The caller sizes the buffer for the largest record (`PlumbRawFormat.maximumRecordLength`);
/// writing past the end traps, which would be a bug in the encoder, never a data error.
struct RawEncoder {
  let buffer: UnsafeMutableRawBufferPointer
  private(set) var count = 0

  init(_ buffer: UnsafeMutableRawBufferPointer) {
    self.buffer = buffer
  }

  mutating func u8(_ value: UInt8) {
    buffer[count] = value
    count += 1
  }

  mutating func u16(_ value: UInt16) {
    buffer.storeBytes(of: value.littleEndian, toByteOffset: count, as: UInt16.self)
    count += 2
  }

  mutating func u32(_ value: UInt32) {
    buffer.storeBytes(of: value.littleEndian, toByteOffset: count, as: UInt32.self)
    count += 4
  }

  mutating func u64(_ value: UInt64) {
    buffer.storeBytes(of: value.littleEndian, toByteOffset: count, as: UInt64.self)
    count += 8
  }

  mutating func i32(_ value: Int32) { u32(UInt32(bitPattern: value)) }
  mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }
  mutating func f64(_ value: Double) { u64(value.bitPattern) }

  mutating func bytes(_ source: UnsafeRawBufferPointer) {
    for byte in source { u8(byte) }
  }

  /// Overwrites one byte already written (the record's length, once the payload is known).
  mutating func patch(_ value: UInt8, at offset: Int) {
    buffer[offset] = value
  }

  /// The bytes written so far.
  var written: UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(rebasing: buffer[0..<count])
  }
}

/// Little-endian writing into a growing array: how the header is encoded (once per file).
struct ArrayEncoder {
  private(set) var bytes: [UInt8] = []

  mutating func u8(_ value: UInt8) { bytes.append(value) }
  mutating func u16(_ value: UInt16) {
    u8(UInt8(truncatingIfNeeded: value))
    u8(UInt8(truncatingIfNeeded: value >> 8))
  }
  mutating func u32(_ value: UInt32) {
    u16(UInt16(truncatingIfNeeded: value))
    u16(UInt16(truncatingIfNeeded: value >> 16))
  }
  mutating func u64(_ value: UInt64) {
    u32(UInt32(truncatingIfNeeded: value))
    u32(UInt32(truncatingIfNeeded: value >> 32))
  }
  mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }
  mutating func f64(_ value: Double) { u64(value.bitPattern) }
  mutating func bytes(_ values: [UInt8]) { bytes.append(contentsOf: values) }

  /// A UTF-8 string with a 16-bit length in front.
  mutating func string(_ value: String) {
    let utf8 = Array(value.utf8)
    u16(UInt16(utf8.count))
    bytes(utf8)
  }

  /// A UTF-8 string with a 32-bit length in front.
  mutating func longString(_ value: String) {
    let utf8 = Array(value.utf8)
    u32(UInt32(utf8.count))
    bytes(utf8)
  }

  mutating func patchU32(_ value: UInt32, at offset: Int) {
    for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
  }
}
