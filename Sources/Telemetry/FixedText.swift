/// Up to 64 bytes of printable ASCII stored inline: reply texts and echoed command words travel
/// through the loop and the decoders without a heap allocation.
///
/// Only printable ASCII (0x20 … 0x7E) is stored; anything else is replaced by `?`, so the text
/// can be put into a line, a frame or a STATUSTEXT without escaping. Appending beyond the
/// capacity drops the excess and sets `isTruncated`.
public struct FixedText: Hashable, Sendable, CustomStringConvertible,
  ExpressibleByStringLiteral
{
  /// The most bytes a `FixedText` holds.
  public static let capacity = 64

  private var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
    (0, 0, 0, 0, 0, 0, 0, 0)
  private var length: UInt8 = 0
  /// Bytes the limit (`capacity`, or a smaller one given to `append`) dropped.
  public private(set) var isTruncated = false

  public init() {}

  /// The text's ASCII, truncated to `limit` bytes.
  public init(_ text: String, limit: Int = FixedText.capacity) {
    append(text, limit: limit)
  }

  public init(stringLiteral value: StaticString) {
    append(value)
  }

  /// Bytes stored.
  public var count: Int { Int(length) }

  public var isEmpty: Bool { length == 0 }

  /// The byte at `index` (`0 ..< count`).
  public subscript(index: Int) -> UInt8 {
    precondition(index >= 0 && index < count, "FixedText index \(index) out of 0..<\(count)")
    return withBytes { $0[index] }
  }

  /// Calls `body` with the stored bytes.
  public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try withUnsafeBytes(of: storage) { try body(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
  }

  /// Appends one byte (non-printable ones as `?`) unless `count` has reached `limit`; returns
  /// whether it was stored.
  @discardableResult
  public mutating func append(_ byte: UInt8, limit: Int = FixedText.capacity) -> Bool {
    guard count < min(limit, FixedText.capacity) else {
      isTruncated = true
      return false
    }
    let value = (0x20...0x7E).contains(byte) ? byte : UInt8(ascii: "?")
    let index = count
    withUnsafeMutableBytes(of: &storage) { $0[index] = value }
    length += 1
    return true
  }

  /// Appends the bytes of `bytes`.
  public mutating func append(_ bytes: UnsafeRawBufferPointer, limit: Int = FixedText.capacity) {
    for byte in bytes where !append(byte, limit: limit) { return }
  }

  /// Appends a static string (allocation-free).
  public mutating func append(_ text: StaticString, limit: Int = FixedText.capacity) {
    text.withUTF8Buffer { append(UnsafeRawBufferPointer($0), limit: limit) }
  }

  /// Appends another text.
  public mutating func append(_ text: FixedText, limit: Int = FixedText.capacity) {
    text.withBytes { append($0, limit: limit) }
  }

  /// Appends a string's UTF-8 (non-ASCII bytes become `?`).
  public mutating func append(_ text: String, limit: Int = FixedText.capacity) {
    for byte in text.utf8 where !append(byte, limit: limit) { return }
  }

  /// Appends an integer in decimal (allocation-free).
  public mutating func append<I: BinaryInteger>(decimal value: I, limit: Int = FixedText.capacity) {
    withUnsafeTemporaryAllocation(byteCount: 24, alignment: 1) { scratch in
      var writer = ByteWriter(scratch)
      DecimalFormat.writeInteger(Int64(clamping: value), to: &writer)
      append(UnsafeRawBufferPointer(rebasing: scratch[0..<writer.count]), limit: limit)
    }
  }

  /// Appends `value` with exactly `decimals` (0 … 9) digits after the point (see
  /// `DecimalFormat`); magnitudes of 10^(18 − decimals) and more print as `inf`.
  public mutating func append(
    fixed value: Double, decimals: Int, limit: Int = FixedText.capacity
  ) {
    let decimals = max(0, min(9, decimals))
    withUnsafeTemporaryAllocation(byteCount: 40, alignment: 1) { scratch in
      var writer = ByteWriter(scratch)
      DecimalFormat.writeFixed(
        value, decimals: decimals, maximumIntegerDigits: 18 - decimals, to: &writer)
      append(UnsafeRawBufferPointer(rebasing: scratch[0..<writer.count]), limit: limit)
    }
  }

  /// Removes everything.
  public mutating func removeAll() {
    self = FixedText()
  }

  /// Whether the text equals `other` ignoring ASCII case.
  public func equalsIgnoringCase(_ other: StaticString) -> Bool {
    other.withUTF8Buffer { literal in
      guard literal.count == count else { return false }
      return withBytes { mine in
        for i in 0..<count where asciiLowercase(mine[i]) != asciiLowercase(literal[i]) {
          return false
        }
        return true
      }
    }
  }

  /// Whether the text starts with `prefix` (case-sensitive).
  public func hasPrefix(_ prefix: StaticString) -> Bool {
    prefix.withUTF8Buffer { literal in
      guard literal.count <= count else { return false }
      return withBytes { mine in
        for i in 0..<literal.count where mine[i] != literal[i] { return false }
        return true
      }
    }
  }

  public var description: String {
    withBytes { String(decoding: $0, as: UTF8.self) }
  }

  public static func == (a: FixedText, b: FixedText) -> Bool {
    guard a.count == b.count else { return false }
    return a.withBytes { x in b.withBytes { y in x.elementsEqual(y) } }
  }

  public func hash(into hasher: inout Hasher) {
    withBytes { hasher.combine(bytes: $0) }
  }
}

@inline(__always)
func asciiLowercase(_ byte: UInt8) -> UInt8 {
  (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
}
