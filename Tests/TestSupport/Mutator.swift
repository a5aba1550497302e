import Randomness

/// Seeded mutations of a valid input, for tests that feed a parser damaged input: the same seed
/// gives the same mutants on every run and platform, so a failure names an input that can be
/// rebuilt. Each `mutate` applies one to three edits: a flipped bit, a random byte, a deleted,
/// duplicated or swapped range, a cut, or one of `tokens` (values a parser finds hard: huge and
/// tiny numbers, `-0`, overflowing integers, deep nesting, long strings) inserted, written over
/// the bytes there, or (in text) put in place of a number or a quoted string — the edit that
/// most often keeps a document well-formed, so it reaches the code that reads the values.
public struct Mutator {
  public var random: SeededGenerator
  public let tokens: [[UInt8]]
  /// Whether the input is text (JSON): then numbers and quoted strings are replaced by tokens.
  public let isText: Bool

  public init(seed: UInt64, tokens: [String]) {
    random = SeededGenerator(seed: seed)
    self.tokens = tokens.map { Array($0.utf8) }
    isText = true
  }

  public init(seed: UInt64, byteTokens: [[UInt8]]) {
    random = SeededGenerator(seed: seed)
    tokens = byteTokens
    isText = false
  }

  /// Little-endian values that stress a binary reader: the extremes of 64- and 32-bit integers,
  /// NaN, the infinities and huge, tiny and negative doubles.
  public static let binaryTokens: [[UInt8]] = {
    func bytes(_ value: UInt64, _ count: Int) -> [UInt8] {
      (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
    let doubles: [Double] = [
      .nan, .infinity, -.infinity, 1e300, -1e300, .leastNonzeroMagnitude, -0.0, 0, -1,
    ]
    let integers: [UInt64] = [
      0, 1, UInt64(bitPattern: Int64.min), UInt64(Int64.max), UInt64.max, 0x8000_0000, 0xFFFF_FFFF,
    ]
    return doubles.map { bytes($0.bitPattern, 8) } + integers.map { bytes($0, 8) }
      + integers.map { bytes($0, 4) } + [[0], [0xFF], [0x7F], [0x80], [0xFF, 0xFF]]
  }()

  /// A uniform integer in `0..<bound` (`bound` > 0).
  public mutating func below(_ bound: Int) -> Int {
    Int(random.next() % UInt64(bound))
  }

  /// Tokens that stress a JSON reader and the code that reads numbers and strings from it.
  public static let jsonTokens: [String] = [
    "1e400", "-1e400", "1e-400", "-0", "-0.0", "9223372036854775807", "9223372036854775808",
    "-9223372036854775809", "18446744073709551616", "1e308", "-1.7976931348623157e308",
    "4.9e-324", "99999999999999999999999999", "0.1", "1.5", "NaN", "Infinity", "-Infinity",
    "nan", "1e", "-", "01", "0x68", "\"0x68\"", "\"0x\"", "\"0xFFFFFFFFFFFFFFFFFFFF\"",
    "\"0x-1\"", "\"\"", "null", "true", "[]", "{}", "[1,2,3]", "[[1,0,0],[0,1,0],[0,0,1]]",
    "[1e300,0,0]", "[[1e300,0,0],[0,1e300,0],[0,0,1e300]]", "[[0,0,0],[0,0,0],[0,0,0]]",
    "\"\\u0000\"", "\"\\ud800\"", "\"\\udc00\\ud800\"", "\"\\uD83D\\uDE00\"", "\"\u{FEFF}\"",
    "\"2026-12-02T10:15:00Z\"", "\"2026-12-02T10:15:00.123456789012345678901234567890Z\"",
    "\"2026-12-02T10:15:00.Z\"", "\"9999-99-99T99:99:99Z\"", "\"/dev/i2c-1\"", "\"simulated\"",
    ",", ":", "\"", "\\", "{\"a\":1,\"a\":2}", "[1,]", "{\"a\":1,}",
    String(repeating: "[", count: 200) + String(repeating: "]", count: 200),
    String(repeating: "{\"a\":", count: 100) + "1" + String(repeating: "}", count: 100),
    "\"" + String(repeating: "a", count: 5000) + "\"",
    "[" + Array(repeating: "0", count: 300).joined(separator: ",") + "]",
  ]

  /// `input` with one to three edits.
  public mutating func mutate(_ input: [UInt8]) -> [UInt8] {
    var bytes = input
    for _ in 0..<(1 + below(3)) { edit(&bytes) }
    return bytes
  }

  mutating func edit(_ bytes: inout [UInt8]) {
    guard !bytes.isEmpty else {
      bytes =
        tokens.isEmpty ? [UInt8(truncatingIfNeeded: random.next())] : tokens[below(tokens.count)]
      return
    }
    let at = below(bytes.count)
    let choice = below(20)
    if isText && choice < 8 {
      // Replace a number or a quoted string value (not a key).
      let values = valueRanges(in: bytes)
      guard !values.isEmpty else { return }
      let range = values[below(values.count)]
      // Half the time a token of the same kind: a string for a string, a number for a number.
      let isString = bytes[range.lowerBound] == 0x22
      let sameKind = tokens.filter { ($0.first == 0x22) == isString }
      let choices = below(2) == 0 && !sameKind.isEmpty ? sameKind : tokens
      bytes.replaceSubrange(range, with: choices[below(choices.count)])
      return
    }
    if !tokens.isEmpty && choice >= 14 {
      let token = tokens[below(tokens.count)]
      if choice < 17 {
        bytes.insert(contentsOf: token, at: at)
      } else {
        bytes.replaceSubrange(at..<min(bytes.count, at + token.count), with: token)
      }
      return
    }
    switch choice % 6 {
    case 0: bytes[at] ^= 1 << UInt8(below(8))
    case 1: bytes[at] = UInt8(truncatingIfNeeded: random.next())
    case 2: bytes.removeSubrange(at..<min(bytes.count, at + 1 + below(16)))
    case 3:
      let range = at..<min(bytes.count, at + 1 + below(64))
      bytes.insert(contentsOf: bytes[range], at: below(bytes.count + 1))
    case 4: bytes.removeSubrange(at...)
    default: bytes.swapAt(at, below(bytes.count))
    }
  }

  /// Where the numbers and the quoted strings that are not keys are, in JSON-like text.
  func valueRanges(in bytes: [UInt8]) -> [Range<Int>] {
    let quote = UInt8(ascii: "\"")
    let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
    let numberBytes = Set("0123456789-+.eE".utf8)
    var ranges: [Range<Int>] = []
    var index = 0
    while index < bytes.count {
      if bytes[index] == quote {
        var end = index + 1
        while end < bytes.count, bytes[end] != quote {
          end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1
        }
        end = min(bytes.count, end + 1)
        var next = end
        while next < bytes.count, bytes[next] == 0x20 || bytes[next] == 0x0A { next += 1 }
        if next == bytes.count || bytes[next] != UInt8(ascii: ":") { ranges.append(index..<end) }
        index = end
      } else if digits.contains(bytes[index]) || bytes[index] == UInt8(ascii: "-") {
        var end = index + 1
        while end < bytes.count, numberBytes.contains(bytes[end]) { end += 1 }
        ranges.append(index..<end)
        index = end
      } else {
        index += 1
      }
    }
    return ranges
  }
}
