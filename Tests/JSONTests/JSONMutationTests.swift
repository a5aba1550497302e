import JSON
import TestSupport
import Testing

/// Damaged JSON, made by seeded mutation of a valid document: the parser must accept it or say
/// where and what, never trap; whatever it accepts reads back through every accessor and
/// formats to text that parses to the same value.
@Suite struct JSONMutationTests {
  static let valid = """
    {
      "schema": 1, "name": "t\\u00e9st \\"q\\"", "list": [1, -2.5e3, 0.1, true, false, null],
      "nested": {"a": {"b": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}, "hex": "0x68"},
      "big": 123456789012, "tiny": 1e-9, "empty": {}, "none": []
    }
    """

  /// Calls every accessor on every value under `reader`; their errors must say something.
  func readEverything(_ reader: JSONReader) {
    func check(_ body: () throws(JSONContentError) -> Void) {
      do { try body() } catch { #expect(!error.description.isEmpty) }
    }
    check { () throws(JSONContentError) in _ = try reader.integer(in: 0...255) }
    check { () throws(JSONContentError) in _ = try reader.integerOrHex(in: 0x08...0x77) }
    check { () throws(JSONContentError) in _ = try reader.integerOrHex() }
    check { () throws(JSONContentError) in _ = try reader.double(in: -1...1, unit: "m") }
    check { () throws(JSONContentError) in _ = try reader.string() }
    check { () throws(JSONContentError) in _ = try reader.bool() }
    check { () throws(JSONContentError) in _ = try reader.choice(["schema", "name", "text"]) }
    check { () throws(JSONContentError) in _ = try reader.numbers(count: 3) }
    check { () throws(JSONContentError) in
      try reader.rejectUnknownKeys(["schema", "name", "list", "nested"])
    }
    check { () throws(JSONContentError) in _ = try reader.required("schema") }
    if case .object(let members) = reader.value {
      for member in members {
        do {
          readEverything(try reader.required(member.key))
        } catch {
          Issue.record("a member the parser produced is not readable: \(error)")
        }
      }
    }
    if let elements = try? reader.array() { elements.forEach(readEverything) }
  }

  @Test("3000 seeded mutants of a document parse or fail with a message, never trap")
  func mutantsParseOrFailClearly() throws {
    let original = Array(Self.valid.utf8)
    var accepted = 0
    for seed in 0..<3000 as Range<UInt64> {
      var mutator = Mutator(seed: seed, tokens: Mutator.jsonTokens)
      let bytes = mutator.mutate(original)
      let document: JSONDocument
      do {
        document = try JSONDocument(parsing: bytes)
      } catch {
        #expect(!error.message.isEmpty && error.position.line >= 1, "seed \(seed)")
        continue
      }
      accepted += 1
      readEverything(JSONReader(document))
      let again = try JSONDocument(parsing: document.root.formatted())
      #expect(again.root == document.root, "seed \(seed): formatting changed the value")
    }
    // Not vacuous: a good share of the mutants are still JSON (a number or a string replaced).
    #expect(accepted > 300)
  }
}

@Suite struct JSONSizeTests {
  @Test("a long key over a long array takes memory in proportion to the file")
  func longKeyOverLongArray() {
    // A table of positions by key path held the 20 000-byte key once per element: 200 MB
    // for this 40 KB file.
    let key = String(repeating: "k", count: 20_000)
    let text = "{\"\(key)\": [" + Array(repeating: "0", count: 10_000).joined(separator: ",") + "]}"
    var document: JSONDocument?
    var live: Int64 = 0
    _ = AllocationCounter.count {
      document = try? JSONDocument(parsing: text)
      live = AllocationCounter.liveBytes
    }
    #expect(document != nil)
    // Not in the sanitized builds, whose runtime owns malloc: there the heap cannot be counted.
    if AllocationCounter.isAvailable {
      #expect(
        live < 100 * Int64(text.utf8.count), "\(live) bytes for a \(text.utf8.count)-byte file")
    }
    // Positions are still found: the array starts after the key.
    let array = document.flatMap { try? JSONReader($0).required(key) }
    #expect(array?.position == SourcePosition(line: 1, column: 20_006))
  }

  @Test("a duplicate key after 20 000 others is found (with a set, not a search per key)")
  func duplicateAfterManyKeys() {
    let members = (0..<20_000).map { "\"k\($0)\": 0" }.joined(separator: ",")
    #expect {
      _ = try JSONDocument(parsing: "{\(members), \"k5\": 1}")
    } throws: { error in
      "\(error)".contains("the key \"k5\" appears twice")
    }
  }
}
