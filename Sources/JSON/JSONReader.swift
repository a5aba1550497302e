/// A problem with the *content* of a JSON file: a missing key, a wrong type, a value out of
/// range. It names the key path and the line, and says what would be right.
public struct JSONContentError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The key path, e.g. `i2c.address` (empty for the whole document).
  public var keyPath: String
  /// Where the offending value starts, when it exists.
  public var position: SourcePosition?
  public var message: String

  public init(keyPath: String, position: SourcePosition?, message: String) {
    self.keyPath = keyPath
    self.position = position
    self.message = message
  }

  public var description: String {
    var text = keyPath.isEmpty ? "" : "key \"\(keyPath)\""
    if let position { text += (text.isEmpty ? "" : " ") + "(\(position))" }
    return (text.isEmpty ? "" : text + ": ") + message
  }
}

/// Typed, path-aware access to a parsed document. Every accessor names the key path in its
/// error, so a person can find and fix the line.
public struct JSONReader: Sendable {
  public let value: JSONValue
  public let keyPath: String
  /// Where this value and what it holds start.
  let tree: PositionTree

  public init(_ document: JSONDocument) {
    value = document.root
    keyPath = ""
    tree = document.positionTree
  }

  init(value: JSONValue, keyPath: String, tree: PositionTree) {
    self.value = value
    self.keyPath = keyPath
    self.tree = tree
  }

  /// Where this value starts in the file.
  public var position: SourcePosition? { tree.position }

  /// The reader of the member or element at `index` of this value.
  func child(_ index: Int, _ value: JSONValue, keyPath: String) -> JSONReader {
    let tree = index < self.tree.children.count ? self.tree.children[index] : self.tree
    return JSONReader(value: value, keyPath: keyPath, tree: tree)
  }

  /// An error about this value.
  public func error(_ message: String) -> JSONContentError {
    JSONContentError(keyPath: keyPath, position: position, message: message)
  }

  func childPath(_ key: String) -> String { keyPath.isEmpty ? key : keyPath + "." + key }

  /// The member `key`, which must exist.
  public func required(_ key: String) throws(JSONContentError) -> JSONReader {
    guard case .object(let members) = value else {
      throw error("expected an object, found \(value.kindDescription)")
    }
    guard let index = members.firstIndex(where: { $0.key == key }) else {
      throw JSONContentError(
        keyPath: childPath(key), position: position, message: "is missing")
    }
    return child(index, members[index].value, keyPath: childPath(key))
  }

  /// The member `key`, or `nil` when absent or `null`.
  public func optional(_ key: String) throws(JSONContentError) -> JSONReader? {
    guard case .object(let members) = value else {
      throw error("expected an object, found \(value.kindDescription)")
    }
    guard let index = members.firstIndex(where: { $0.key == key }), members[index].value != .null
    else { return nil }
    return child(index, members[index].value, keyPath: childPath(key))
  }

  /// Whether this is an object with a member named one of `keys`: for recognising what kind of
  /// document a file is (a calibration file given as a board file) before judging its keys.
  public func hasAnyKey(_ keys: [String]) -> Bool {
    guard case .object(let members) = value else { return false }
    return members.contains { keys.contains($0.key) }
  }

  /// Rejects members other than `allowed`, with a "did you mean" for near misses: a misspelt
  /// optional key would otherwise be silently ignored.
  public func rejectUnknownKeys(_ allowed: [String]) throws(JSONContentError) {
    guard case .object(let members) = value else {
      throw error("expected an object, found \(value.kindDescription)")
    }
    for (index, member) in members.enumerated() where !allowed.contains(member.key) {
      let close = allowed.first { closeEnough($0, member.key) }
      let hint = close.map { "; did you mean \"\($0)\"?" } ?? ""
      throw JSONContentError(
        keyPath: childPath(member.key),
        position: child(index, member.value, keyPath: "").position,
        message:
          "is not a known key\(hint) (known here: \(allowed.joined(separator: ", ")))")
    }
  }

  public func string() throws(JSONContentError) -> String {
    guard case .string(let s) = value else {
      throw error("expected a string, found \(value.kindDescription)")
    }
    return s
  }

  public func bool() throws(JSONContentError) -> Bool {
    guard case .bool(let b) = value else {
      throw error("expected true or false, found \(value.kindDescription)")
    }
    return b
  }

  /// A finite number, optionally within `range`. Out of it, the error gives the value, the
  /// range and `fix`: why the range is what it is and what to do (empty when the range says it).
  public func double(in range: ClosedRange<Double>? = nil, unit: String = "", fix: String = "")
    throws(JSONContentError)
    -> Double
  {
    guard case .number(let d, _) = value else {
      throw error(
        "expected a number\(unit.isEmpty ? "" : " in \(unit)"), found \(value.kindDescription)")
    }
    if let range, !range.contains(d) {
      throw error(
        "\(formatJSONNumber(d)) is out of range: expected \(formatJSONNumber(range.lowerBound)) … \(formatJSONNumber(range.upperBound))\(unit.isEmpty ? "" : " " + unit)\(fix.isEmpty ? "" : "; " + fix)"
      )
    }
    return d
  }

  /// A whole number, optionally within `range`.
  public func integer(in range: ClosedRange<Int>? = nil) throws(JSONContentError) -> Int {
    guard case .number(let d, _) = value else {
      throw error("expected a whole number, found \(value.kindDescription)")
    }
    guard d == d.rounded() else {
      throw error("expected a whole number, found \(formatJSONNumber(d))")
    }
    // Beyond ±9e15 a double no longer holds every whole number (nor fits every Int).
    guard abs(d) < 9e15 else {
      let expected =
        range.map { "\($0.lowerBound) … \($0.upperBound)" } ?? "at most 9e15 either way"
      throw error("\(formatJSONNumber(d)) is out of range: expected \(expected)")
    }
    let n = Int(d)
    if let range, !range.contains(n) {
      throw error("\(n) is out of range: expected \(range.lowerBound) … \(range.upperBound)")
    }
    return n
  }

  /// One of the whole numbers `allowed`; anything else (a fraction, 1e300) is refused with
  /// `refusal(value)`, which names the value and the choices.
  public func integer(oneOf allowed: [Int], refusal: (String) -> String)
    throws(JSONContentError) -> Int
  {
    let d = try double()
    guard let n = allowed.first(where: { Double($0) == d }) else {
      throw error(refusal(formatJSONNumber(d)))
    }
    return n
  }

  /// An integer written as a number or as a hex string (`"0x68"`), optionally within `range`.
  public func integerOrHex(in range: ClosedRange<Int>? = nil) throws(JSONContentError) -> Int {
    if case .string(let s) = value {
      let lower = s.lowercased()
      let digits = lower.dropFirst(2).utf8
      // Only hex digits after the prefix: `Int(_:radix:)` alone also takes a sign ("0x+68").
      let isHexDigit = { (byte: UInt8) in
        (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte)
      }
      guard lower.hasPrefix("0x"), !digits.isEmpty, digits.allSatisfy(isHexDigit),
        let n = Int(lower.dropFirst(2), radix: 16)
      else {
        throw error("expected a number or a hex string like \"0x68\", found \"\(s)\"")
      }
      if let range, !range.contains(n) {
        throw error(
          "\(s) is out of range: expected 0x\(String(range.lowerBound, radix: 16)) … 0x\(String(range.upperBound, radix: 16))"
        )
      }
      return n
    }
    return try integer(in: range)
  }

  /// One of `choices` (a string).
  public func choice(_ choices: [String]) throws(JSONContentError) -> String {
    let s = try string()
    guard choices.contains(s) else {
      let close = choices.first { closeEnough($0, s) }
      let hint = close.map { "; did you mean \"\($0)\"?" } ?? ""
      throw error(
        "\"\(s)\" is not one of \(choices.map { "\"\($0)\"" }.joined(separator: ", "))\(hint)")
    }
    return s
  }

  /// The elements of an array.
  public func array() throws(JSONContentError) -> [JSONReader] {
    guard case .array(let elements) = value else {
      throw error("expected an array, found \(value.kindDescription)")
    }
    return elements.enumerated().map { index, element in
      child(index, element, keyPath: "\(keyPath)[\(index)]")
    }
  }

  /// An array of exactly `count` numbers, each optionally within `range` (an element out of it
  /// is named by its index, with the range and `fix`, as `double(in:unit:fix:)` does).
  public func numbers(
    count: Int, in range: ClosedRange<Double>? = nil, unit: String = "", fix: String = ""
  ) throws(JSONContentError) -> [Double] {
    let elements = try array()
    guard elements.count == count else {
      throw error("expected \(count) numbers, found \(elements.count)")
    }
    var result: [Double] = []
    for element in elements { result.append(try element.double(in: range, unit: unit, fix: fix)) }
    return result
  }
}

func closeEnough(_ a: String, _ b: String) -> Bool {
  let a = Array(a.lowercased())
  let b = Array(b.lowercased())
  guard !a.isEmpty, !b.isEmpty, abs(a.count - b.count) <= 2 else { return false }
  var previous = Array(0...b.count)
  var current = [Int](repeating: 0, count: b.count + 1)
  for i in 1...a.count {
    current[0] = i
    for j in 1...b.count {
      let cost = a[i - 1] == b[j - 1] ? 0 : 1
      current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
    }
    swap(&previous, &current)
  }
  return previous[b.count] <= max(1, min(a.count, b.count) / 3)
}
