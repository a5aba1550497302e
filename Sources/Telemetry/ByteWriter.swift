/// Little-endian writes into a caller's buffer. The encoders check the buffer size once, up
/// front, against the format's maximum, so the writes themselves are unchecked beyond the
/// buffer pointer's own bounds checks in debug builds; `count` stays within the buffer, so it
/// advances by wrapping addition (no overflow check per field of every frame).
struct ByteWriter {
  let buffer: UnsafeMutableRawBufferPointer
  var count: Int = 0

  init(_ buffer: UnsafeMutableRawBufferPointer) {
    self.buffer = buffer
  }

  var remaining: Int { buffer.count - count }

  mutating func write(_ byte: UInt8) {
    buffer[count] = byte
    count &+= 1
  }

  // Multi-byte values: one unaligned little-endian store each (encoders run per frame).
  mutating func write(_ value: UInt16) {
    buffer.storeBytes(of: value.littleEndian, toByteOffset: count, as: UInt16.self)
    count &+= 2
  }

  mutating func write(_ value: Int16) { write(UInt16(bitPattern: value)) }

  mutating func write(_ value: UInt32) {
    buffer.storeBytes(of: value.littleEndian, toByteOffset: count, as: UInt32.self)
    count &+= 4
  }

  mutating func write(_ value: UInt64) {
    buffer.storeBytes(of: value.littleEndian, toByteOffset: count, as: UInt64.self)
    count &+= 8
  }

  mutating func write(_ value: Int64) { write(UInt64(bitPattern: value)) }

  mutating func write(_ value: Float) { write(value.bitPattern) }

  mutating func write(_ bytes: UnsafeRawBufferPointer) {
    for byte in bytes { write(byte) }
  }

  mutating func write(_ text: StaticString) {
    text.withUTF8Buffer { write(UnsafeRawBufferPointer($0)) }
  }

  mutating func write(text: FixedText) {
    text.withBytes { write($0) }
  }
}
