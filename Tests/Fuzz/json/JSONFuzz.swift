import FuzzSupport
import JSON

/// The JSON parser (Sources/JSON) as board and calibration files reach it: any bytes.
///
/// Properties: no trap and no hang; a refusal names a position inside the text; an accepted
/// document writes (`formatted()`, `compact()`) to text that parses back to the same value, and
/// writing that again gives the same bytes; every value has a position inside the text.
@main enum JSONFuzz {
  static func main() { runLibFuzzer(LLVMFuzzerTestOneInput) }

  static func test(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    let lines = 1 + bytes.lazy.filter { $0 == 0x0A }.count
    let document: JSONDocument
    do {
      document = try JSONDocument(parsing: bytes)
    } catch {
      require(
        error.position.line >= 1 && error.position.line <= lines && error.position.column >= 1
          && error.position.column <= bytes.count + 1,
        "a syntax error names a position in the text",
        "\(error.position) in \(bytes.count) bytes of \(lines) lines")
      require(!error.message.isEmpty, "a syntax error says what is wrong")
      return
    }
    let root = document.root

    for (path, position) in document.positions {
      require(
        position.line >= 1 && position.line <= lines && position.column >= 1
          && position.column <= bytes.count + 1,
        "every value's position is in the text", "\(path): \(position)")
    }
    require(document.positions[""] != nil, "the root has a position")

    for (style, text) in [("formatted", root.formatted()), ("compact", root.compact())] {
      let again: JSONDocument
      do {
        again = try JSONDocument(parsing: text)
      } catch {
        propertyViolated(
          "what the writer writes parses (\(style))", "\(error) in \(text.prefix(300))")
      }
      require(
        again.root == root, "parse(write(x)) == x (\(style))",
        "\(text.prefix(300)) read back as \(again.root.compact().prefix(300))")
      let rewritten = style == "formatted" ? again.root.formatted() : again.root.compact()
      require(
        rewritten == text, "writing is deterministic (\(style))",
        "\(text.prefix(200)) became \(rewritten.prefix(200))")
    }
  }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  JSONFuzz.test(fuzzInput(data, size))
  return 0
}
