/// A JSON document as a value, with the position of every value in its source text, so that
/// files people write (board files, calibration files) get errors that name the key *and* the
/// line. Objects keep their keys in source order; writing is deterministic.
///
/// Plumb has its own small JSON reader instead of Foundation's `JSONDecoder` because its
/// messages must say where a problem is ("line 7, key i2c.address") and how to fix it, and
/// because the firmware should not need Foundation for its configuration.
public indirect enum JSONValue: Hashable, Sendable {
  case null
  case bool(Bool)
  /// A number, with the text it was written as (so integers stay integers).
  case number(Double, text: String)
  case string(String)
  case array([JSONValue])
  /// Members in source order; keys are unique (the parser rejects duplicates).
  case object([(key: String, value: JSONValue)])

  public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): true
    case (.bool(let a), .bool(let b)): a == b
    case (.number(let a, _), .number(let b, _)): a == b
    case (.string(let a), .string(let b)): a == b
    case (.array(let a), .array(let b)): a == b
    case (.object(let a), .object(let b)):
      a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    default: false
    }
  }

  public func hash(into hasher: inout Hasher) {
    switch self {
    case .null: hasher.combine(0)
    case .bool(let b): hasher.combine(b)
    case .number(let d, _): hasher.combine(d)
    case .string(let s): hasher.combine(s)
    case .array(let a): hasher.combine(a)
    case .object(let members):
      for member in members {
        hasher.combine(member.key)
        hasher.combine(member.value)
      }
    }
  }

  /// A number value from a `Double`, written in Swift's shortest round-trip form.
  public static func number(_ value: Double) -> JSONValue {
    .number(value, text: formatJSONNumber(value))
  }

  /// A number value from an integer.
  public static func integer(_ value: Int) -> JSONValue {
    .number(Double(value), text: String(value))
  }

  /// What kind of value this is, for messages: "a string", "an object", …
  public var kindDescription: String {
    switch self {
    case .null: "null"
    case .bool: "a boolean"
    case .number: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }

  /// The member `key` of an object, or `nil`.
  public subscript(key: String) -> JSONValue? {
    guard case .object(let members) = self else { return nil }
    return members.first { $0.key == key }?.value
  }

  /// The key path (`a.b[2]`) of the first number JSON cannot represent (NaN, an infinity),
  /// or `nil` when every number is finite: check it before `formatted()`, which requires them
  /// finite, to refuse such a document with the key instead of trapping.
  public func firstNonFiniteNumber(under path: String = "") -> String? {
    switch self {
    case .number(let value, _): return value.isFinite ? nil : path
    case .array(let items):
      for (index, item) in items.enumerated() {
        if let found = item.firstNonFiniteNumber(under: "\(path)[\(index)]") { return found }
      }
      return nil
    case .object(let members):
      for member in members {
        let inner = path.isEmpty ? member.key : "\(path).\(member.key)"
        if let found = member.value.firstNonFiniteNumber(under: inner) { return found }
      }
      return nil
    default: return nil
    }
  }
}

/// Formats a finite `Double` for JSON: integers without a fraction (when exact), everything else
/// in Swift's shortest representation that reads back to the same value. JSON has no NaN or
/// infinity: those come out as `NaN`, `Infinity` and `-Infinity` (JavaScript's spelling, which
/// no JSON reader accepts), so that a message can show them; a writer refuses them first
/// (`JSONValue.firstNonFiniteNumber`).
public func formatJSONNumber(_ value: Double) -> String {
  guard value.isFinite else { return value.isNaN ? "NaN" : value < 0 ? "-Infinity" : "Infinity" }
  if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
    return String(Int64(value))
  }
  return "\(value)"
}
