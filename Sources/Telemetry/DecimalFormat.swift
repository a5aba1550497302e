/// Deterministic, locale-independent decimal text for the text format, without Foundation or
/// `String(format:)`.
///
/// **Fixed-point output.** A value is scaled by 10^decimals, rounded half away from zero in
/// binary floating point (`Double.rounded(.toNearestOrAwayFromZero)`, the same on every IEEE 754
/// machine), then printed as an integer with the point inserted: `-1.5` with 2 decimals is
/// `-1.50`. A result that rounds to zero has no minus sign. NaN prints as `nan`; infinities and
/// values needing more than `maximumIntegerDigits` integer digits print as `inf` / `-inf`.
///
/// **Parsing** accepts exactly what the writer produces (optional `-`, digits, optional `.`
/// and digits; `nan`, `inf`, `-inf`): an integer mantissa of at most 18 digits divided by an
/// exact power of ten, which is the correctly rounded `Double` of the decimal whenever the
/// mantissa has at most 15 digits (every field the text format writes).
public enum DecimalFormat {
  static let powersOfTen: [Double] = (0...18).map { exponent in
    var value = 1.0
    for _ in 0..<exponent { value *= 10 }
    return value
  }

  /// The longest text `writeFixed` produces for these settings.
  public static func maximumFixedWidth(decimals: Int, maximumIntegerDigits: Int) -> Int {
    1 + maximumIntegerDigits + (decimals > 0 ? 1 + decimals : 0)
  }

  static func writeInteger(_ value: Int64, to writer: inout ByteWriter) {
    if value < 0 { writer.write(UInt8(ascii: "-")) }
    writeUnsigned(value.magnitude, minimumDigits: 1, to: &writer)
  }

  static func writeUnsigned(_ value: UInt64, minimumDigits: Int, to writer: inout ByteWriter) {
    // At most 20 digits; collect them backwards in a register-sized scratch.
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
    var n = value
    var count = 0
    withUnsafeMutableBytes(of: &digits) { scratch in
      repeat {
        scratch[count] = UInt8(ascii: "0") + UInt8(n % 10)
        n /= 10
        count += 1
      } while n > 0 || count < minimumDigits
      for i in stride(from: count - 1, through: 0, by: -1) { writer.write(scratch[i]) }
    }
  }

  static func writeFixed(
    _ value: Double, decimals: Int, maximumIntegerDigits: Int, to writer: inout ByteWriter
  ) {
    precondition(
      decimals >= 0 && maximumIntegerDigits >= 1 && decimals + maximumIntegerDigits <= 18,
      "fixed-point fields hold at most 18 digits")
    if value.isNaN {
      writer.write("nan")
      return
    }
    let scaled = (value * powersOfTen[decimals]).rounded(.toNearestOrAwayFromZero)
    let limit = powersOfTen[decimals + maximumIntegerDigits]
    guard scaled.magnitude < limit else {
      writer.write(value < 0 ? "-inf" : "inf")
      return
    }
    let integer = Int64(scaled)
    if integer < 0 { writer.write(UInt8(ascii: "-")) }
    let magnitude = integer.magnitude
    let unit = UInt64(powersOfTen[decimals])
    writeUnsigned(magnitude / unit, minimumDigits: 1, to: &writer)
    if decimals > 0 {
      writer.write(UInt8(ascii: "."))
      writeUnsigned(magnitude % unit, minimumDigits: decimals, to: &writer)
    }
  }

  /// Parses an unsigned decimal integer of at most `maximumDigits` digits.
  static func parseUnsigned(_ text: UnsafeRawBufferPointer, maximumDigits: Int = 19) -> UInt64? {
    guard !text.isEmpty, text.count <= maximumDigits else { return nil }
    var value: UInt64 = 0
    for byte in text {
      guard (0x30...0x39).contains(byte) else { return nil }
      let (times10, o1) = value.multipliedReportingOverflow(by: 10)
      let (sum, o2) = times10.addingReportingOverflow(UInt64(byte - 0x30))
      guard !o1, !o2 else { return nil }
      value = sum
    }
    return value
  }

  /// Parses what `writeFixed` writes.
  static func parseFixed(_ text: UnsafeRawBufferPointer) -> Double? {
    if equals(text, "nan") { return .nan }
    if equals(text, "inf") { return .infinity }
    if equals(text, "-inf") { return -.infinity }
    var index = 0
    var negative = false
    if index < text.count, text[index] == UInt8(ascii: "-") {
      negative = true
      index += 1
    }
    var mantissa: UInt64 = 0
    var digits = 0
    var fractionDigits = 0
    var seenPoint = false
    while index < text.count {
      let byte = text[index]
      index += 1
      if byte == UInt8(ascii: ".") {
        guard !seenPoint, digits > 0 else { return nil }
        seenPoint = true
        continue
      }
      guard (0x30...0x39).contains(byte), digits < 18 else { return nil }
      mantissa = mantissa * 10 + UInt64(byte - 0x30)
      digits += 1
      if seenPoint { fractionDigits += 1 }
    }
    guard digits > 0, !seenPoint || fractionDigits > 0 else { return nil }
    let magnitude = Double(mantissa) / powersOfTen[fractionDigits]
    return negative ? -magnitude : magnitude
  }

  static func equals(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
    literal.withUTF8Buffer { $0.elementsEqual(bytes) }
  }
}
