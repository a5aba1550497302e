extension JSONValue {
  /// The value as JSON text: two-space indentation, members in their stored order, one
  /// trailing newline. The same value always gives the same bytes.
  public func formatted() -> String {
    var output = ""
    write(to: &output, indent: 0)
    return output + "\n"
  }

  /// The value as compact JSON on one line (no spaces).
  public func compact() -> String {
    var output = ""
    writeCompact(to: &output)
    return output
  }

  private func write(to output: inout String, indent: Int) {
    let pad = String(repeating: "  ", count: indent + 1)
    let closing = String(repeating: "  ", count: indent)
    switch self {
    case .array(let elements) where !elements.isEmpty:
      if elements.allSatisfy(\.isScalar) {
        writeCompact(to: &output)
        return
      }
      output += "[\n"
      for (i, element) in elements.enumerated() {
        output += pad
        element.write(to: &output, indent: indent + 1)
        output += i + 1 < elements.count ? ",\n" : "\n"
      }
      output += closing + "]"
    case .object(let members) where !members.isEmpty:
      output += "{\n"
      for (i, member) in members.enumerated() {
        output += pad + quoteJSONString(member.key) + ": "
        member.value.write(to: &output, indent: indent + 1)
        output += i + 1 < members.count ? ",\n" : "\n"
      }
      output += closing + "}"
    default:
      writeCompact(to: &output)
    }
  }

  private var isScalar: Bool {
    switch self {
    case .array, .object: false
    default: true
    }
  }

  private func writeCompact(to output: inout String) {
    switch self {
    case .null: output += "null"
    case .bool(let b): output += b ? "true" : "false"
    case .number(_, let text): output += text
    case .string(let s): output += quoteJSONString(s)
    case .array(let elements):
      output += "["
      for (i, element) in elements.enumerated() {
        if i > 0 { output += ", " }
        element.writeCompact(to: &output)
      }
      output += "]"
    case .object(let members):
      output += "{"
      for (i, member) in members.enumerated() {
        if i > 0 { output += ", " }
        output += quoteJSONString(member.key) + ": "
        member.value.writeCompact(to: &output)
      }
      output += "}"
    }
  }
}

/// A string as a JSON string literal.
public func quoteJSONString(_ text: String) -> String {
  var output = "\""
  for scalar in text.unicodeScalars {
    switch scalar {
    case "\"": output += "\\\""
    case "\\": output += "\\\\"
    case "\n": output += "\\n"
    case "\r": output += "\\r"
    case "\t": output += "\\t"
    case _ where scalar.value < 0x20:
      let hex = String(scalar.value, radix: 16)
      output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    default: output.unicodeScalars.append(scalar)
    }
  }
  return output + "\""
}
