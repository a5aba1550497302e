import JSON
import Testing

@Suite struct JSONParserTests {
  @Test func parsesEveryKindAndKeepsKeyOrder() throws {
    let text = """
      {"b": 1, "a": [true, false, null], "c": {"d": "x\\u00e9\\n", "e": -2.5e3}, "f": 0.1}
      """
    let document = try JSONDocument(parsing: text)
    guard case .object(let members) = document.root else {
      Issue.record("not an object")
      return
    }
    #expect(members.map(\.key) == ["b", "a", "c", "f"])
    #expect(document.root["a"] == .array([.bool(true), .bool(false), .null]))
    #expect(document.root["c"]?["d"] == .string("xé\n"))
    #expect(document.root["c"]?["e"] == .number(-2500))
    #expect(document.root["f"] == .number(0.1))
  }

  @Test func recordsLinesAndColumnsByKeyPath() throws {
    let text = "{\n  \"i2c\": {\n    \"address\": \"0x68\"\n  },\n  \"list\": [1,\n 2]\n}"
    let document = try JSONDocument(parsing: text)
    #expect(document.positions["i2c.address"] == SourcePosition(line: 3, column: 16))
    #expect(document.positions["list[1]"] == SourcePosition(line: 6, column: 2))
  }

  @Test(arguments: [
    ("", "line 1, column 1: the file is empty"),
    ("{\"a\": 1,}", "trailing comma"),
    ("{\"a\": 0x68}", "JSON has no hex numbers"),
    ("{\"a\": 1, \"a\": 2}", "appears twice"),
    ("{'a': 1}", "expected a key in double quotes"),
    ("{\"a\": 'x'}", "single quotes"),
    ("{\"a\": 1} x", "unexpected text after the end"),
    ("{\"a\": \"abc", "unexpected end of file inside a string"),
    ("{\"a\": 012}", "leading zeros"),
    ("{\n\"a\" 1}", "line 2, column 5: expected ':'"),
    ("[1e999]", "out of range"),
    // Found by the board bring-up audit: a binary file (an ELF executable) was reported as
    // "unexpected character ''" with the raw control byte, and a non-ASCII character as the
    // Latin-1 letter of its first byte ('Ã' for 'é').
    ("\u{7F}ELF", "line 1, column 1: unexpected byte 0x7F; expected a value (is this a JSON"),
    ("{\"a\": é}", "unexpected character 'é'; expected a value"),
  ])
  func syntaxErrorsSayWhereAndWhat(text: String, expected: String) {
    #expect {
      _ = try JSONDocument(parsing: text)
    } throws: { error in
      "\(error)".contains(expected)
    }
  }

  /// Found by the board bring-up audit: a byte that starts no UTF-8 character was shown as its
  /// Latin-1 letter.
  @Test func aByteThatIsNotUTF8IsShownInHex() {
    #expect {
      _ = try JSONDocument(parsing: [0x7B, 0x22, 0x61, 0x22, 0x3A, 0xFF, 0x7D])
    } throws: { error in
      "\(error)".contains("line 1, column 6: unexpected byte 0xFF; expected a value")
    }
  }

  @Test func writesDeterministicallyAndReadsBack() throws {
    let value = JSONValue.object([
      ("name", .string("pi \"4\"")), ("rate", .integer(100)), ("tau", .number(0.35)),
      (
        "rotation",
        .array([.array([.integer(1), .integer(0)]), .array([.integer(0), .integer(1)])])
      ),
      ("empty", .object([])),
    ])
    let text = value.formatted()
    #expect(
      text == """
        {
          "name": "pi \\"4\\"",
          "rate": 100,
          "tau": 0.35,
          "rotation": [
            [1, 0],
            [0, 1]
          ],
          "empty": {}
        }

        """)
    #expect(try JSONDocument(parsing: text).root == value)
    #expect(
      value.compact()
        == #"{"name": "pi \"4\"", "rate": 100, "tau": 0.35, "rotation": [[1, 0], [0, 1]], "empty": {}}"#
    )
  }
}

@Suite struct JSONReaderTests {
  let document = try! JSONDocument(
    parsing: """
      {
        "i2c": {"bus": "/dev/i2c-1", "address": "0x68", "speed": 400000},
        "format": "binray",
        "mounting": [1, 0, 0]
      }
      """)

  @Test func readsTypedValues() throws {
    let reader = JSONReader(document)
    let i2c = try reader.required("i2c")
    #expect(try i2c.required("bus").string() == "/dev/i2c-1")
    #expect(try i2c.required("address").integerOrHex(in: 0...0x7F) == 0x68)
    #expect(try i2c.required("speed").integer() == 400_000)
    #expect(try reader.required("mounting").numbers(count: 3) == [1, 0, 0])
    #expect(try reader.optional("serial") == nil)
  }

  /// Found by the fuzzing pass: `Int(_:radix:)` takes a sign, so "0x+68" read as 0x68 and
  /// "0x-1" as -1 (with no range to stop it). After `0x` come hex digits and nothing else.
  @Test(arguments: [
    "0x+68", "0x-1", "0x", "0x 68", "0x68 ", "0x6_8", "0x68h", "0xg8", "+0x68", "68",
  ])
  func hexStringsAreOnlyHexDigitsAfterTheirPrefix(text: String) throws {
    let reader = JSONReader(try JSONDocument(parsing: "{\"whoAmI\": \"\(text)\"}"))
    #expect {
      _ = try reader.required("whoAmI").integerOrHex()
    } throws: { error in
      let message = "\(error)"
      return message.contains("key \"whoAmI\"") && message.contains("\"\(text)\"")
        && message.contains("a hex string like \"0x68\"")
    }
  }

  @Test(arguments: [("0x68", 0x68), ("0X68", 0x68), ("0x0068", 0x68), ("0xfF", 0xFF), ("0x0", 0)])
  func hexStringsInEitherCaseRead(text: String, value: Int) throws {
    let reader = JSONReader(try JSONDocument(parsing: "{\"whoAmI\": \"\(text)\"}"))
    #expect(try reader.required("whoAmI").integerOrHex() == value)
  }

  @Test func errorsNameTheKeyPathTheLineAndTheFix() {
    let reader = JSONReader(document)
    #expect {
      try reader.required("format").choice(["binary", "text", "mavlink"])
    } throws: { error in
      let text = "\(error)"
      return text.contains("key \"format\"") && text.contains("line 3")
        && text.contains("did you mean \"binary\"?")
    }
    #expect {
      try reader.required("i2c").required("adress")
    } throws: { error in
      "\(error)".contains("key \"i2c.adress\"") && "\(error)".contains("is missing")
    }
    #expect {
      try reader.required("i2c").rejectUnknownKeys(["bus", "adress"])
    } throws: { error in
      "\(error)".contains("i2c.address") && "\(error)".contains("did you mean \"adress\"?")
    }
    #expect {
      try reader.required("i2c").required("speed").integer(in: 10_000...400_000 - 1)
    } throws: { error in
      "\(error)".contains("out of range")
    }
  }

  /// JSON has no NaN or infinity: a writer finds them by key before formatting, and formatting
  /// one (in a message) shows it instead of trapping.
  @Test func nonFiniteNumbersAreFoundByKeyAndNeverTrap() {
    let document = JSONValue.object([
      ("a", .number(1)), ("b", .object([("c", .array([.number(2), .number(.nan)]))])),
      ("d", .number(.infinity)),
    ])
    #expect(document.firstNonFiniteNumber() == "b.c[1]")
    #expect(JSONValue.object([("a", .number(1))]).firstNonFiniteNumber() == nil)
    #expect(formatJSONNumber(.nan) == "NaN")
    #expect(formatJSONNumber(-.infinity) == "-Infinity")
    #expect(formatJSONNumber(0.5) == "0.5" && formatJSONNumber(3) == "3")
  }
}
