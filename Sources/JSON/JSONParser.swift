/// A place in a text file, 1-based, for messages.
public struct SourcePosition: Hashable, Sendable, CustomStringConvertible {
  public var line: Int
  public var column: Int

  public init(line: Int, column: Int) {
    self.line = line
    self.column = column
  }

  public var description: String { "line \(line), column \(column)" }
}

/// A JSON text that is not valid JSON (RFC 8259), with where and what.
public struct JSONSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
  public var position: SourcePosition
  public var message: String

  public var description: String { "\(position): \(message)" }
}

/// Where a value starts, and where each member or element inside it starts (in their order).
/// A tree rather than a table by key path: a table repeats the parent's path in every child's
/// key, which for a long key over a long array takes memory quadratic in the file's size.
struct PositionTree: Sendable {
  var position: SourcePosition
  var children: [PositionTree] = []
}

/// A parsed document: the value tree plus the source position of every value, addressed by its
/// key path (`i2c.address`, `mounting.rotation[1]`).
public struct JSONDocument: Sendable {
  public var root: JSONValue
  let positionTree: PositionTree

  /// Parses `text` (UTF-8 JSON; a leading BOM is ignored).
  public init(parsing text: String) throws(JSONSyntaxError) {
    try self.init(parsing: Array(text.utf8))
  }

  /// Parses raw bytes.
  public init(parsing bytes: [UInt8]) throws(JSONSyntaxError) {
    var parser = JSONParser(bytes)
    (root, positionTree) = try parser.parseDocument()
  }

  /// Where each value starts, by key path (`""` for the root). Built on each call: readers
  /// find positions through `JSONReader.position`.
  public var positions: [String: SourcePosition] {
    var table: [String: SourcePosition] = [:]
    func add(_ value: JSONValue, _ tree: PositionTree, path: String) {
      table[path] = tree.position
      switch value {
      case .object(let members):
        for (member, child) in zip(members, tree.children) {
          add(member.value, child, path: path.isEmpty ? member.key : path + "." + member.key)
        }
      case .array(let elements):
        for (index, (element, child)) in zip(elements, tree.children).enumerated() {
          add(element, child, path: "\(path)[\(index)]")
        }
      default: break
      }
    }
    add(root, positionTree, path: "")
    return table
  }
}

/// A recursive-descent RFC 8259 parser that tracks lines and columns.
struct JSONParser {
  let bytes: [UInt8]
  var index = 0
  var line = 1
  var lineStart = 0
  var depth = 0

  init(_ bytes: [UInt8]) {
    self.bytes = bytes
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    lineStart = index
  }

  var position: SourcePosition { SourcePosition(line: line, column: index - lineStart + 1) }

  func fail(_ message: String) -> JSONSyntaxError {
    JSONSyntaxError(position: position, message: message)
  }

  mutating func parseDocument() throws(JSONSyntaxError) -> (JSONValue, PositionTree) {
    skipWhitespace()
    guard index < bytes.count else { throw fail("the file is empty; expected a JSON object") }
    let parsed = try parseValue()
    skipWhitespace()
    guard index == bytes.count else {
      throw fail("unexpected text after the end of the JSON value")
    }
    return parsed
  }

  mutating func skipWhitespace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x09, 0x0D: index += 1
      case 0x0A:
        index += 1
        line += 1
        lineStart = index
      default: return
      }
    }
  }

  mutating func parseValue() throws(JSONSyntaxError) -> (JSONValue, PositionTree) {
    skipWhitespace()
    guard index < bytes.count else { throw fail("unexpected end of file; expected a value") }
    let start = position
    switch bytes[index] {
    case UInt8(ascii: "{"): return try parseObject(start)
    case UInt8(ascii: "["): return try parseArray(start)
    default: return (try parseScalar(), PositionTree(position: start))
    }
  }

  /// The byte at `index`, in hex, in an error: a control byte or one that is not UTF-8.
  func unexpectedByte() -> JSONSyntaxError {
    let digits = Array("0123456789ABCDEF")
    let byte = bytes[index]
    return fail(
      "unexpected byte 0x\(digits[Int(byte >> 4)])\(digits[Int(byte & 0x0F)]); expected a value (is this a JSON text file?)"
    )
  }

  mutating func parseScalar() throws(JSONSyntaxError) -> JSONValue {
    switch bytes[index] {
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"):
      try expectWord("true")
      return .bool(true)
    case UInt8(ascii: "f"):
      try expectWord("false")
      return .bool(false)
    case UInt8(ascii: "n"):
      try expectWord("null")
      return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
    case UInt8(ascii: "'"): throw fail("strings use double quotes in JSON, not single quotes")
    case 0x21...0x7E, 0x80...:
      // A non-ASCII byte starts a UTF-8 character: name that character, not the byte's Latin-1
      // letter; a byte that starts none is not text.
      let character = String(decoding: bytes[index..<min(index + 4, bytes.count)], as: UTF8.self)
        .first
      guard let character, character != "\u{FFFD}" else { throw unexpectedByte() }
      throw fail("unexpected character '\(character)'; expected a value")
    default:
      // A control byte: printed as it is, it would be invisible.
      throw unexpectedByte()
    }
  }

  mutating func expectWord(_ word: String) throws(JSONSyntaxError) {
    let utf8 = Array(word.utf8)
    guard index + utf8.count <= bytes.count, Array(bytes[index..<index + utf8.count]) == utf8 else {
      throw fail("unexpected text; expected \(word)")
    }
    index += utf8.count
  }

  mutating func parseObject(_ start: SourcePosition) throws(JSONSyntaxError) -> (
    JSONValue, PositionTree
  ) {
    depth += 1
    defer { depth -= 1 }
    guard depth <= 64 else { throw fail("nesting deeper than 64 levels") }
    index += 1
    var members: [(key: String, value: JSONValue)] = []
    var tree = PositionTree(position: start)
    // The keys seen, for the duplicate check: a set, as a search of `members` would take time
    // quadratic in the number of keys.
    var keys: Set<String> = []
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
      index += 1
      return (.object(members), tree)
    }
    while true {
      skipWhitespace()
      guard index < bytes.count else { throw fail("unexpected end of file inside an object") }
      guard bytes[index] == UInt8(ascii: "\"") else {
        if bytes[index] == UInt8(ascii: "}") {
          throw fail("a trailing comma before '}' is not allowed in JSON")
        }
        throw fail("expected a key in double quotes")
      }
      let keyPosition = position
      let key = try parseString()
      guard keys.insert(key).inserted else {
        throw JSONSyntaxError(position: keyPosition, message: "the key \"\(key)\" appears twice")
      }
      skipWhitespace()
      guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
        throw fail("expected ':' after the key \"\(key)\"")
      }
      index += 1
      let (value, child) = try parseValue()
      members.append((key, value))
      tree.children.append(child)
      skipWhitespace()
      guard index < bytes.count else { throw fail("unexpected end of file inside an object") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      if bytes[index] == UInt8(ascii: "}") {
        index += 1
        return (.object(members), tree)
      }
      throw fail("expected ',' or '}' after the value of \"\(key)\"")
    }
  }

  mutating func parseArray(_ start: SourcePosition) throws(JSONSyntaxError) -> (
    JSONValue, PositionTree
  ) {
    depth += 1
    defer { depth -= 1 }
    guard depth <= 64 else { throw fail("nesting deeper than 64 levels") }
    index += 1
    var elements: [JSONValue] = []
    var tree = PositionTree(position: start)
    skipWhitespace()
    if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
      index += 1
      return (.array(elements), tree)
    }
    while true {
      skipWhitespace()
      if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
        throw fail("a trailing comma before ']' is not allowed in JSON")
      }
      let (element, child) = try parseValue()
      elements.append(element)
      tree.children.append(child)
      skipWhitespace()
      guard index < bytes.count else { throw fail("unexpected end of file inside an array") }
      if bytes[index] == UInt8(ascii: ",") {
        index += 1
        continue
      }
      if bytes[index] == UInt8(ascii: "]") {
        index += 1
        return (.array(elements), tree)
      }
      throw fail("expected ',' or ']' in an array")
    }
  }

  mutating func parseString() throws(JSONSyntaxError) -> String {
    index += 1
    var chunkStart = index
    var utf8: [UInt8] = []
    while true {
      guard index < bytes.count else { throw fail("unexpected end of file inside a string") }
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") {
        utf8.append(contentsOf: bytes[chunkStart..<index])
        index += 1
        break
      }
      if byte < 0x20 {
        throw fail(
          byte == 0x0A ? "a string cannot span lines" : "a control character inside a string")
      }
      if byte == UInt8(ascii: "\\") {
        utf8.append(contentsOf: bytes[chunkStart..<index])
        index += 1
        guard index < bytes.count else { throw fail("unexpected end of file inside a string") }
        let escape = bytes[index]
        index += 1
        switch escape {
        case UInt8(ascii: "\""): utf8.append(0x22)
        case UInt8(ascii: "\\"): utf8.append(0x5C)
        case UInt8(ascii: "/"): utf8.append(0x2F)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
          var code = try parseHex4()
          if (0xD800...0xDBFF).contains(code) {
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
              bytes[index + 1] == UInt8(ascii: "u")
            else { throw fail("an unpaired UTF-16 surrogate in a \\u escape") }
            index += 2
            let low = try parseHex4()
            guard (0xDC00...0xDFFF).contains(low) else {
              throw fail("an unpaired UTF-16 surrogate in a \\u escape")
            }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
          }
          guard let scalar = Unicode.Scalar(code) else {
            throw fail("an invalid \\u escape")
          }
          utf8.append(contentsOf: Array(String(Character(scalar)).utf8))
        default:
          throw fail("an unknown escape '\\\(Character(Unicode.Scalar(escape)))' in a string")
        }
        chunkStart = index
        continue
      }
      index += 1
    }
    guard let text = String(validating: utf8, as: UTF8.self) else {
      throw fail("a string that is not valid UTF-8")
    }
    return text
  }

  mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
    guard index + 4 <= bytes.count else { throw fail("a \\u escape needs four hex digits") }
    var value: UInt32 = 0
    for _ in 0..<4 {
      let byte = bytes[index]
      let digit: UInt32
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
      default: throw fail("a \\u escape needs four hex digits")
      }
      value = value * 16 + digit
      index += 1
    }
    return value
  }

  mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
    let start = index
    let startPosition = position
    if bytes[index] == UInt8(ascii: "-") { index += 1 }
    func digits(_ parser: inout JSONParser) -> Int {
      var count = 0
      while parser.index < parser.bytes.count,
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(parser.bytes[parser.index])
      {
        parser.index += 1
        count += 1
      }
      return count
    }
    let integerStart = index
    let integerDigits = digits(&self)
    guard integerDigits > 0 else { throw fail("a number needs digits") }
    if integerDigits > 1 && bytes[integerStart] == UInt8(ascii: "0") {
      throw JSONSyntaxError(
        position: startPosition,
        message: "numbers cannot have leading zeros (for hex, write a string like \"0x68\")")
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      index += 1
      guard digits(&self) > 0 else { throw fail("a digit must follow the decimal point") }
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
      index += 1
      if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")
      {
        index += 1
      }
      guard digits(&self) > 0 else { throw fail("an exponent needs digits") }
    }
    if index < bytes.count,
      bytes[index] == UInt8(ascii: "x") || bytes[index] == UInt8(ascii: "X")
    {
      throw JSONSyntaxError(
        position: startPosition, message: "JSON has no hex numbers: write a string like \"0x68\"")
    }
    let text = String(decoding: bytes[start..<index], as: UTF8.self)
    guard let value = Double(text), value.isFinite else {
      throw JSONSyntaxError(position: startPosition, message: "the number \(text) is out of range")
    }
    return .number(value, text: text)
  }
}
