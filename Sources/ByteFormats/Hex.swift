/// `0x3B`: a byte as two hexadecimal digits with a `0x` prefix, upper-case unless
/// `uppercase` is false (`0x3b`: calibration files store WHO_AM_I that way).
public func hexByte(_ value: UInt8, uppercase: Bool = true) -> String {
  let digits: StaticString = "0123456789ABCDEF0123456789abcdef"
  let base = uppercase ? 0 : 16
  return digits.withUTF8Buffer { table in
    "0x"
      + String(
        decoding: [table[base + Int(value >> 4)], table[base + Int(value & 0x0F)]], as: UTF8.self)
  }
}

/// Lower-case hexadecimal of `bytes`, two digits a byte, no prefix (`e3b0c4…`: digests).
public func hexDigits(_ bytes: [UInt8]) -> String {
  let digits: StaticString = "0123456789abcdef"
  return digits.withUTF8Buffer { table in
    var text: [UInt8] = []
    text.reserveCapacity(2 * bytes.count)
    for byte in bytes {
      text.append(table[Int(byte >> 4)])
      text.append(table[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }
}

/// `0x` and the eight lower-case hex digits of `value` (`0x0000beef`): how a calibration id is
/// written.
public func hexWord(_ value: UInt32) -> String {
  "0x"
    + hexDigits([
      UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF),
    ])
}
