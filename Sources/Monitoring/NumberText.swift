import Telemetry

/// `value` with exactly `decimals` digits after the point, rounded half away from zero, the
/// same on every machine and locale (Telemetry's `DecimalFormat`); `nan`, `inf`, `-inf`.
func fixed(_ value: Double, _ decimals: Int) -> String {
  var text = FixedText()
  text.append(fixed: value, decimals: decimals)
  return text.description
}

/// `text` right-aligned in `width` characters.
func padLeft(_ text: String, _ width: Int) -> String {
  text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
}

/// `text` left-aligned in `width` characters.
func padRight(_ text: String, _ width: Int) -> String {
  text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

/// Four uppercase hex digits.
func hex16(_ value: UInt16) -> String {
  let digits = String(value, radix: 16, uppercase: true)
  return String(repeating: "0", count: 4 - digits.count) + digits
}

/// `0x` and eight lowercase hex digits.
func hex32(_ value: UInt32) -> String {
  let digits = String(value, radix: 16)
  return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
}
