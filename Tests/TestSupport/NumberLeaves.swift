import JSON

/// One number in a JSON document: where it is, what it is, and the document with it replaced.
public struct NumberLeaf {
  /// The key path a `JSONReader` names the number by (`gyroscope.biasRadiansPerSecond[2]`).
  public let keyPath: String
  public let value: Double
  let replace: (Double) -> JSONValue

  /// The whole document with this number replaced by `replacement`.
  public func replaced(by replacement: Double) -> JSONValue { replace(replacement) }
}

/// Every number in `value`, in document order.
public func numberLeaves(in value: JSONValue, keyPath: String = "") -> [NumberLeaf] {
  switch value {
  case .number(let number, _):
    return [NumberLeaf(keyPath: keyPath, value: number) { .number($0) }]
  case .array(let elements):
    return elements.indices.flatMap { index in
      numberLeaves(in: elements[index], keyPath: "\(keyPath)[\(index)]").map { leaf in
        NumberLeaf(keyPath: leaf.keyPath, value: leaf.value) { replacement in
          var copy = elements
          copy[index] = leaf.replaced(by: replacement)
          return .array(copy)
        }
      }
    }
  case .object(let members):
    return members.indices.flatMap { index in
      let key = members[index].key
      return numberLeaves(
        in: members[index].value, keyPath: keyPath.isEmpty ? key : keyPath + "." + key
      )
      .map { leaf in
        NumberLeaf(keyPath: leaf.keyPath, value: leaf.value) { replacement in
          var copy = members
          copy[index].value = leaf.replaced(by: replacement)
          return .object(copy)
        }
      }
    }
  case .null, .bool, .string:
    return []
  }
}

/// `value` once for every number in it, with that number replaced by `replacement`, each with
/// the number's key path: for tests that every numeric field of a file format refuses an
/// impossible value by name.
public func everyNumberReplaced(in value: JSONValue, by replacement: Double)
  -> [(keyPath: String, document: JSONValue)]
{
  numberLeaves(in: value).map { ($0.keyPath, $0.replaced(by: replacement)) }
}

/// The numbers of `document` that are outside the range `documentedRange` gives for their key
/// path (its indices dropped: `a.b[2]` is looked up as `a.b`, with the indices passed along),
/// or that have none: what a loader that accepted `document` promised not to let through.
public func numbersOutsideTheirRanges(
  in document: JSONValue,
  _ documentedRange: (_ key: String, _ indices: [Int]) -> ClosedRange<Double>?
) -> [String] {
  numberLeaves(in: document).compactMap { leaf in
    let parts = leaf.keyPath.split(separator: "[", omittingEmptySubsequences: false)
    let indices = parts.dropFirst().compactMap { Int($0.dropLast()) }
    guard let range = documentedRange(String(parts[0]), indices) else {
      return "\(leaf.keyPath) = \(formatJSONNumber(leaf.value)) has no documented range"
    }
    return range.contains(leaf.value)
      ? nil : "\(leaf.keyPath) = \(formatJSONNumber(leaf.value)) is outside \(range)"
  }
}
