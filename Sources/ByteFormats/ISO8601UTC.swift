/// Whether `text` is `YYYY-MM-DDTHH:MM:SS[.fraction]Z` with plausible field values: the check of
/// the UTC times recordings and calibration files carry. Any number of fraction digits: checked, not summed.
public func isISO8601UTC(_ text: String) -> Bool {
  let bytes = Array(text.utf8)
  guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return false }
  func digits(_ range: Range<Int>) -> Int? {
    var value = 0
    for index in range {
      let byte = bytes[index]
      guard byte >= 0x30, byte <= 0x39 else { return nil }
      value = value * 10 + Int(byte - 0x30)
    }
    return value
  }
  guard let year = digits(0..<4), bytes[4] == UInt8(ascii: "-"), let month = digits(5..<7),
    bytes[7] == UInt8(ascii: "-"), let day = digits(8..<10), bytes[10] == UInt8(ascii: "T"),
    let hour = digits(11..<13), bytes[13] == UInt8(ascii: ":"), let minute = digits(14..<16),
    bytes[16] == UInt8(ascii: ":"), let second = digits(17..<19)
  else { return false }
  guard year >= 1970, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
    second <= 60
  else { return false }
  let rest = bytes[19..<(bytes.count - 1)]
  if rest.isEmpty { return true }
  guard rest.first == UInt8(ascii: "."), rest.count >= 2 else { return false }
  return rest.dropFirst().allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
}
