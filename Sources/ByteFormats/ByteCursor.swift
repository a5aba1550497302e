/// Little-endian reading with bounds checks, for bytes that come from outside (a file that may
/// be cut short or damaged, a serial line): every read past the end returns `nil` (or, in the
/// throwing form, throws `ByteCursor.ShortInput` naming the offset) and never traps.
///
/// The cursor does not own the bytes: it is valid as long as the buffer it was made with.
/// Nothing allocates except `array(_:)`.
public struct ByteCursor {
  /// The bytes being read.
  public let bytes: UnsafeRawBufferPointer
  /// The offset of the next byte to read, from the start of `bytes`.
  @inlinable public var offset: Int { position }
  /// `offset`, stored (settable only here; inlinable so reads compile to plain loads).
  @usableFromInline var position: Int

  /// A read that needed more bytes than remained: where it started and how many it needed.
  public struct ShortInput: Error, Hashable, Sendable, CustomStringConvertible {
    /// The offset, from the start of the cursor's bytes, where the read began.
    public var offset: Int
    /// How many bytes the read needed.
    public var needed: Int
    /// How many bytes remained at `offset`.
    public var available: Int

    @inlinable
    public init(offset: Int, needed: Int, available: Int) {
      self.offset = offset
      self.needed = needed
      self.available = available
    }

    public var description: String {
      "at byte \(offset) a \(needed)-byte field was expected, but \(available) "
        + "byte\(available == 1 ? "" : "s") remained"
    }
  }

  @inlinable
  public init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
    self.bytes = bytes
    position = offset
  }

  /// How many bytes are left to read (0 when the offset is at or past the end).
  @inlinable
  public var remaining: Int { max(0, bytes.count - offset) }

  /// Whether `count` more bytes can be read from a valid offset (one inside the buffer or
  /// at its end: a cursor made with an offset outside it reads nothing, not even 0 bytes).
  @inlinable
  func fits(_ count: Int) -> Bool {
    // Past the end, `bytes.count - position` is negative: less than any count.
    count >= 0 && position >= 0 && bytes.count - position >= count
  }

  // MARK: Reads that return nil on short input

  @inlinable
  public mutating func u8() -> UInt8? {
    guard fits(1) else { return nil }
    defer { position += 1 }
    return bytes[offset]
  }

  // One unaligned little-endian load each: a replay decodes every record once or twice.
  @inlinable
  public mutating func u16() -> UInt16? {
    guard fits(2) else { return nil }
    defer { position += 2 }
    return UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
  }

  @inlinable
  public mutating func u32() -> UInt32? {
    guard fits(4) else { return nil }
    defer { position += 4 }
    return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
  }

  @inlinable
  public mutating func u64() -> UInt64? {
    guard fits(8) else { return nil }
    defer { position += 8 }
    return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
  }

  @inlinable public mutating func i16() -> Int16? {
    u16().map { Int16(bitPattern: $0) }
  }
  @inlinable public mutating func i32() -> Int32? {
    u32().map { Int32(bitPattern: $0) }
  }
  @inlinable public mutating func i64() -> Int64? {
    u64().map { Int64(bitPattern: $0) }
  }
  @inlinable public mutating func f32() -> Float? {
    u32().map { Float(bitPattern: $0) }
  }
  @inlinable public mutating func f64() -> Double? {
    u64().map { Double(bitPattern: $0) }
  }

  /// `count` bytes as a new array (allocates: for headers, not for per-sample paths).
  @inlinable
  public mutating func array(_ count: Int) -> [UInt8]? {
    slice(count).map { Array($0) }
  }

  /// A view of the next `count` bytes, without copying.
  @inlinable
  public mutating func slice(_ count: Int) -> UnsafeRawBufferPointer? {
    guard fits(count) else { return nil }
    defer { position += count }
    return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
  }

  /// Moves past `count` bytes; `false` (and no move) when fewer remain.
  @inlinable
  public mutating func skip(_ count: Int) -> Bool {
    guard fits(count) else { return false }
    position += count
    return true
  }

  /// The little-endian u32 at the current offset, without moving (`nil` when fewer than 4
  /// bytes remain).
  @inlinable
  public func peekU32() -> UInt32? {
    var copy = self
    return copy.u32()
  }

  // MARK: Reads that throw on short input

  /// The error a read of `needed` bytes at the current offset would throw.
  @inlinable
  public func shortInput(needing needed: Int) -> ShortInput {
    ShortInput(offset: offset, needed: needed, available: remaining)
  }

  @inlinable @inline(__always)
  public mutating func readU8() throws(ShortInput) -> UInt8 {
    guard let value = u8() else { throw shortInput(needing: 1) }
    return value
  }

  @inlinable @inline(__always)
  public mutating func readU16() throws(ShortInput) -> UInt16 {
    guard let value = u16() else { throw shortInput(needing: 2) }
    return value
  }

  @inlinable @inline(__always)
  public mutating func readU32() throws(ShortInput) -> UInt32 {
    guard let value = u32() else { throw shortInput(needing: 4) }
    return value
  }

  @inlinable @inline(__always)
  public mutating func readU64() throws(ShortInput) -> UInt64 {
    guard let value = u64() else { throw shortInput(needing: 8) }
    return value
  }

  @inlinable @inline(__always)
  public mutating func readI16() throws(ShortInput) -> Int16 { Int16(bitPattern: try readU16()) }
  @inlinable @inline(__always)
  public mutating func readI32() throws(ShortInput) -> Int32 { Int32(bitPattern: try readU32()) }
  @inlinable @inline(__always)
  public mutating func readI64() throws(ShortInput) -> Int64 { Int64(bitPattern: try readU64()) }
  @inlinable @inline(__always)
  public mutating func readF32() throws(ShortInput) -> Float { Float(bitPattern: try readU32()) }
  @inlinable @inline(__always)
  public mutating func readF64() throws(ShortInput) -> Double {
    Double(bitPattern: try readU64())
  }

  /// A view of the next `count` bytes, without copying.
  @inlinable @inline(__always)
  public mutating func readSlice(_ count: Int) throws(ShortInput) -> UnsafeRawBufferPointer {
    guard let value = slice(count) else { throw shortInput(needing: max(0, count)) }
    return value
  }

  /// Moves past `count` bytes.
  @inlinable @inline(__always)
  public mutating func readSkipping(_ count: Int) throws(ShortInput) {
    guard skip(count) else { throw shortInput(needing: max(0, count)) }
  }
}
