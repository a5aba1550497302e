#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Deterministic number formatting for plots, reports and text tables, without Foundation: the
/// one `fixed(_:_:)` of the tools and libraries (the firmware's allocation-free text frames
/// write through Telemetry's `DecimalFormat`, which rounds the same way).
///
/// `String(format:)` would pull Foundation into every tool and depends on the C locale; these
/// functions give the same bytes on every platform for the same `Double`, which keeps plots and
/// reports byte-for-byte reproducible.
public enum NumberText {
  /// `value` with exactly `digits` digits after the decimal point (`fixed(3.14159, 2)` is
  /// `"3.14"`), right-aligned in `width` characters when it is shorter. Rounds half away from
  /// zero on the decimal value nearest the binary one; a value that rounds to zero has no minus
  /// sign. Non-finite values are written `nan`, `inf`, `-inf`; a value whose scaled magnitude
  /// reaches 9·10¹⁵ (past the integers a `Double` holds exactly) as Swift's shortest text.
  public static func fixed(_ value: Double, _ digits: Int, width: Int = 0) -> String {
    padLeft(unpadded(value, digits), width)
  }

  static func unpadded(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite else { return nonFinite(value) }
    let digits = max(0, min(digits, 15))
    let scale = power10(digits)
    let scaled = (abs(value) * scale).rounded(.toNearestOrAwayFromZero)
    guard scaled < 9.0e15 else { return "\(value)" }
    let integer = UInt64(scaled)
    var text = String(integer)
    if digits > 0 {
      if text.count <= digits {
        text = String(repeating: "0", count: digits - text.count + 1) + text
      }
      text.insert(".", at: text.index(text.endIndex, offsetBy: -digits))
    }
    return (value < 0 && integer != 0 ? "-" : "") + text
  }

  /// `value` in scientific notation with `significant` significant digits, e.g.
  /// `scientific(0.00020034, 4)` is `"2.003e-4"`. Zero is `"0"`.
  public static func scientific(_ value: Double, _ significant: Int) -> String {
    guard value.isFinite else { return nonFinite(value) }
    guard value != 0 else { return "0" }
    let significant = max(1, min(significant, 16))
    let (mantissa, exponent) = decompose(abs(value), significant: significant)
    return (value < 0 ? "-" : "") + unpadded(mantissa, significant - 1) + "e\(exponent)"
  }

  /// `value` with `significant` significant digits in plain decimal notation when its exponent
  /// lies in −4 … 5, in scientific notation otherwise; trailing zeros after the point dropped.
  /// Suited to labels: `0.01`, `1`, `250`, `3.5e-7`.
  public static func compact(_ value: Double, _ significant: Int = 6) -> String {
    guard value.isFinite else { return nonFinite(value) }
    guard value != 0 else { return "0" }
    let significant = max(1, min(significant, 15))
    let (mantissa, exponent) = decompose(abs(value), significant: significant)
    if exponent < -4 || exponent > 5 {
      return (value < 0 ? "-" : "") + trimZeros(unpadded(mantissa, significant - 1))
        + "e\(exponent)"
    }
    let decimals = max(0, significant - 1 - exponent)
    return trimZeros(unpadded(value, decimals))
  }

  /// `value` padded on the left with spaces to `width` characters (for right-aligned columns).
  public static func padLeft(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
  }

  /// `value` padded on the right with spaces to `width` characters.
  public static func padRight(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
  }

  /// 10 raised to `exponent`, exact for |exponent| ≤ 22 (where powers of ten are exact doubles).
  static func power10(_ exponent: Int) -> Double {
    var result = 1.0
    for _ in 0..<abs(exponent) { result *= 10 }
    return exponent < 0 ? 1 / result : result
  }

  /// The mantissa in [1, 10) rounded to `significant` digits, and the decimal exponent.
  static func decompose(_ magnitude: Double, significant: Int) -> (Double, Int) {
    var exponent = Int(log10(magnitude).rounded(.down))
    var mantissa = magnitude / pow(10, Double(exponent))
    if mantissa < 1 {
      mantissa *= 10
      exponent -= 1
    } else if mantissa >= 10 {
      mantissa /= 10
      exponent += 1
    }
    let scale = power10(significant - 1)
    mantissa = (mantissa * scale).rounded(.toNearestOrAwayFromZero) / scale
    if mantissa >= 10 {
      mantissa /= 10
      exponent += 1
    }
    return (mantissa, exponent)
  }

  static func trimZeros(_ text: String) -> String {
    guard text.contains(".") else { return text }
    var result = text
    while result.hasSuffix("0") { result.removeLast() }
    if result.hasSuffix(".") { result.removeLast() }
    return result
  }

  static func nonFinite(_ value: Double) -> String {
    value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf")
  }
}
