/// Number formatting for messages, without Foundation: `333.333`, `100`, `-0.25`.
///
/// Rounds to `fractionDigits` decimals and drops trailing zeros. Only for text meant for people
/// (errors, reports); never on the sample path.
func decimal(_ value: Double, fractionDigits: Int = 3) -> String {
  guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
  var scale = 1.0
  for _ in 0..<fractionDigits { scale *= 10 }
  let scaled = (abs(value) * scale).rounded()
  guard scaled < 9.0e15 else { return String(value) }
  let whole = UInt64(scaled / scale)
  var fraction = UInt64(scaled) - whole * UInt64(scale)
  var text = (value < 0 && scaled != 0 ? "-" : "") + String(whole)
  if fraction > 0 {
    var digits = fractionDigits
    while fraction % 10 == 0 {
      fraction /= 10
      digits -= 1
    }
    let body = String(fraction)
    text += "." + String(repeating: "0", count: digits - body.count) + body
  }
  return text
}
