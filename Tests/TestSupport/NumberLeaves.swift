import JSON

/// `value` once for every number in it, with that number replaced by `replacement`, each with
/// the key path a `JSONReader` names that number by (`gyroscope.biasRadiansPerSecond[2]`): for
/// tests that every numeric field of a file format refuses an impossible value by name.
public func everyNumberReplaced(in value: JSONValue, by replacement: Double, keyPath: String = "")
  -> [(keyPath: String, document: JSONValue)]
{
  switch value {
  case .number:
    return [(keyPath, .number(replacement))]
  case .array(let elements):
    return elements.indices.flatMap { index in
      everyNumberReplaced(in: elements[index], by: replacement, keyPath: "\(keyPath)[\(index)]")
        .map { leaf in
          var copy = elements
          copy[index] = leaf.document
          return (leaf.keyPath, JSONValue.array(copy))
        }
    }
  case .object(let members):
    return members.indices.flatMap { index in
      let key = members[index].key
      let path = keyPath.isEmpty ? key : keyPath + "." + key
      return everyNumberReplaced(in: members[index].value, by: replacement, keyPath: path).map {
        leaf in
        var copy = members
        copy[index].value = leaf.document
        return (leaf.keyPath, JSONValue.object(copy))
      }
    }
  case .null, .bool, .string:
    return []
  }
}
