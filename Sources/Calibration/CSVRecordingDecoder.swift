#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads the replay-layout CSV that `plumb replay` reads and `plumb export --csv` writes:
///
///     t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z[,temp_c]
///
/// seconds, rad/s, m/s² and °C. Columns are found by name in the header, so extra columns (for
/// example the optical truth of the BROAD recordings) are ignored; blank lines and lines starting
/// with `#` are skipped. Lines end with LF or CRLF; a UTF-8 byte-order mark may precede the
/// header. Every needed field must be a finite number and time must increase:
/// anything else is an error naming the line and the column.
public struct CSVRecordingDecoder: RecordingDecoder {
  public static let requiredColumns = ["t_s", "gyr_x", "gyr_y", "gyr_z", "acc_x", "acc_y", "acc_z"]
  public static let temperatureColumn = "temp_c"

  public init() {}

  public var fileExtensions: [String] { ["csv"] }

  /// A row of seven or eight numbers is rarely shorter.
  public var bytesPerSample: Int { 60 }

  public func read(
    _ input: inout RecordingBytes, path: String, _ body: (RecordingSample) -> Void
  ) throws(RecordingError) -> RecordingFacts {
    var rows = CSVRowReader(path: path)
    var keep = 0
    while true {
      try input.refill(keeping: keep)
      keep = try input.withWindow { (window, start, atEnd) throws(RecordingError) -> Int in
        guard let base = window.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
          return start
        }
        let end = window.count
        var index = 0
        if start == 0 && !rows.begun {
          // A UTF-8 byte-order mark before the header (Excel's "CSV UTF-8") is not part of it.
          guard atEnd || end >= 3 else { return 0 }
          if end >= 3 && base[0] == 0xEF && base[1] == 0xBB && base[2] == 0xBF { index = 3 }
          rows.begun = true
        }
        while index < end {
          var lineEnd = index
          while lineEnd < end && base[lineEnd] != 0x0A { lineEnd += 1 }
          // A line that may go on in the next window is read with it.
          if lineEnd == end && !atEnd { break }
          var contentEnd = lineEnd
          if contentEnd > index && base[contentEnd - 1] == 0x0D { contentEnd -= 1 }
          if let sample = try rows.line(base, from: index, to: contentEnd) { body(sample) }
          index = lineEnd + 1
        }
        return start + min(index, end)
      }
      if input.atEnd { break }
    }
    guard rows.hasHeader else {
      throw RecordingError(
        .malformed, path: path,
        "the file is empty: expected a header t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z[,temp_c] and rows of samples"
      )
    }
    return RecordingFacts(hasTemperature: rows.hasTemperature, locatedByLine: true)
  }
}

/// Reads the CSV a line at a time: the header, then one sample per row, every field checked.
struct CSVRowReader {
  let path: String
  /// Whether the start of the file (a byte-order mark) has been looked at.
  var begun = false
  var lineNumber = 0
  /// Column index → slot: 0 time, 1…6 channels, 7 temperature, -1 ignored; empty before the
  /// header.
  var slots: [Int] = []
  var needed = 0
  var hasTemperature = false
  var previousTime: Double?
  var values = [Double](repeating: 0, count: 8)
  var scratch = [CChar](repeating: 0, count: 80)

  init(path: String) { self.path = path }

  var hasHeader: Bool { !slots.isEmpty }

  /// Reads the line `base[from..<to]` (its line end removed): `nil` for the header, a blank or
  /// a comment line, the sample for a row.
  mutating func line(_ base: UnsafePointer<UInt8>, from index: Int, to contentEnd: Int)
    throws(RecordingError) -> RecordingSample?
  {
    lineNumber += 1
    var first = index
    while first < contentEnd && (base[first] == 0x20 || base[first] == 0x09) { first += 1 }
    if first == contentEnd || base[first] == UInt8(ascii: "#") { return nil }
    if slots.isEmpty {
      try header(base, from: index, to: contentEnd)
      return nil
    }
    var column = 0
    var cursor = index
    var parsed = 0
    while true {
      var fieldEnd = cursor
      while fieldEnd < contentEnd && base[fieldEnd] != UInt8(ascii: ",") { fieldEnd += 1 }
      if column < slots.count, slots[column] >= 0 {
        let value = try field(base, from: cursor, to: fieldEnd, slot: slots[column])
        values[slots[column]] = value
        parsed += 1
      }
      column += 1
      if fieldEnd >= contentEnd { break }
      cursor = fieldEnd + 1
    }
    if column != slots.count || parsed != needed {
      throw RecordingError(
        .malformed, path: path, location: "line \(lineNumber)",
        "the row has \(column) fields; the header has \(slots.count)")
    }
    if let previousTime, values[0] <= previousTime {
      throw RecordingError(
        .malformed, path: path, location: "line \(lineNumber)",
        "t_s \(values[0]) is not after the previous sample's \(previousTime): time must increase from row to row"
      )
    }
    previousTime = values[0]
    return RecordingSample(
      timeSeconds: values[0],
      values: SIMD8(
        values[1], values[2], values[3], values[4], values[5], values[6],
        hasTemperature ? values[7] : 0, 0),
      line: lineNumber)
  }

  /// Reads the header line: which column is which.
  mutating func header(_ base: UnsafePointer<UInt8>, from index: Int, to contentEnd: Int)
    throws(RecordingError)
  {
    // Split at the comma byte, as the rows are: split into `Character`s, a comma followed by a
    // combining mark would be one character and two columns one.
    let names = UnsafeBufferPointer(start: base + index, count: contentEnd - index)
      .split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
      .map { String(decoding: $0, as: UTF8.self).trimmingSpaces() }
    var missing: [String] = []
    let slots = names.map { name in
      if let i = CSVRecordingDecoder.requiredColumns.firstIndex(of: name) { return i }
      return name == CSVRecordingDecoder.temperatureColumn ? 7 : -1
    }
    for (i, name) in CSVRecordingDecoder.requiredColumns.enumerated() where !slots.contains(i) {
      missing.append(name)
    }
    if let number = Double(names.first ?? ""), number.isFinite {
      throw RecordingError(
        .malformed, path: path, location: "line \(lineNumber)",
        "the file starts with numbers, not a header: the first line must name the columns, t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z[,temp_c]"
      )
    }
    guard missing.isEmpty else {
      throw RecordingError(
        .malformed, path: path, location: "line \(lineNumber)",
        "the header lacks \(missing.joined(separator: ", ")): expected the columns t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z and optionally temp_c (seconds, rad/s, m/s², °C)"
      )
    }
    for slot in 0..<8 where slots.filter({ $0 == slot }).count > 1 {
      throw RecordingError(
        .malformed, path: path, location: "line \(lineNumber)",
        "the header names the column \(slot == 7 ? "temp_c" : CSVRecordingDecoder.requiredColumns[slot]) twice"
      )
    }
    self.slots = slots
    hasTemperature = slots.contains(7)
    needed = slots.filter { $0 >= 0 }.count
  }

  /// The number in the field `base[cursor..<fieldEnd]` of column `slot`.
  mutating func field(_ base: UnsafePointer<UInt8>, from cursor: Int, to fieldEnd: Int, slot: Int)
    throws(RecordingError) -> Double
  {
    let name =
      slot == 7
      ? CSVRecordingDecoder.temperatureColumn : CSVRecordingDecoder.requiredColumns[slot]
    var nonSpace = cursor
    while nonSpace < fieldEnd && (base[nonSpace] == 0x20 || base[nonSpace] == 0x09) {
      nonSpace += 1
    }
    if nonSpace == fieldEnd {
      throw RecordingError(
        .malformed, path: path, location: "line \(lineNumber)",
        "\(name) is empty: every row needs a value in every column")
    }
    var value: Double
    var after: Int
    if let (fast, end) = parseShortDecimal(base, from: nonSpace, to: fieldEnd) {
      value = fast
      after = end
    } else {
      // strtod needs a NUL-terminated string: copy the field (numbers longer than the scratch
      // buffer are not plausible and fail as "not a number").
      let length = min(fieldEnd - nonSpace, scratch.count - 1)
      var consumed = 0
      value = scratch.withUnsafeMutableBufferPointer { text in
        for j in 0..<length { text[j] = CChar(bitPattern: base[nonSpace + j]) }
        text[length] = 0
        var stop: UnsafeMutablePointer<CChar>?
        let parsed = strtod(text.baseAddress!, &stop)
        consumed = stop.map { $0 - text.baseAddress! } ?? 0
        return parsed
      }
      after = nonSpace + consumed
    }
    while after < fieldEnd && (base[after] == 0x20 || base[after] == 0x09) { after += 1 }
    if after != fieldEnd || after == nonSpace || !value.isFinite {
      let text = String(
        decoding: UnsafeBufferPointer(start: base + cursor, count: fieldEnd - cursor),
        as: UTF8.self
      ).trimmingSpaces()
      let problem =
        after != fieldEnd || after == nonSpace
        ? "\(name) is '\(text)', not a number"
        : "\(name) is \(text): a recording must hold finite numbers (a NaN usually marks a dropped sample; cut the recording there or re-export it)"
      throw RecordingError(.malformed, path: path, location: "line \(lineNumber)", problem)
    }
    return value
  }
}

/// Exact powers of ten, 10⁰ … 10²² (every one is a double without rounding).
private let exactPowersOfTen: [Double] = (0...22).map { k in
  var value = 1.0
  for _ in 0..<k { value *= 10 }
  return value
}

/// Parses a plain decimal (`-12.345`, `6.02e-3`) of at most 15 significant digits in
/// `base[from..<to]` exactly: the digits form an integer below 2⁵³ and the power of ten is exact,
/// so one multiplication or division rounds once, correctly (Clinger's fast path). Returns the
/// value and the index after the number, or `nil` for anything else (longer mantissas, large
/// exponents, `nan`, hex), which `strtod` then handles. Most exported recordings take this path,
/// which is several times faster than `strtod`.
@inline(__always)
func parseShortDecimal(_ base: UnsafePointer<UInt8>, from: Int, to: Int) -> (Double, Int)? {
  var i = from
  var negative = false
  if i < to && (base[i] == UInt8(ascii: "-") || base[i] == UInt8(ascii: "+")) {
    negative = base[i] == UInt8(ascii: "-")
    i += 1
  }
  var mantissa: UInt64 = 0
  var digits = 0
  var significant = 0
  var exponent = 0
  var seenDigit = false
  while i < to, base[i] >= 48, base[i] <= 57 {
    let d = UInt64(base[i] - 48)
    if significant > 0 || d != 0 { significant += 1 }
    mantissa = mantissa &* 10 &+ d
    digits += 1
    seenDigit = true
    i += 1
  }
  if i < to && base[i] == UInt8(ascii: ".") {
    i += 1
    while i < to, base[i] >= 48, base[i] <= 57 {
      let d = UInt64(base[i] - 48)
      if significant > 0 || d != 0 { significant += 1 }
      mantissa = mantissa &* 10 &+ d
      digits += 1
      exponent -= 1
      seenDigit = true
      i += 1
    }
  }
  guard seenDigit, significant <= 15, digits <= 19 else { return nil }
  if i < to && (base[i] == UInt8(ascii: "e") || base[i] == UInt8(ascii: "E")) {
    i += 1
    var exponentNegative = false
    if i < to && (base[i] == UInt8(ascii: "-") || base[i] == UInt8(ascii: "+")) {
      exponentNegative = base[i] == UInt8(ascii: "-")
      i += 1
    }
    var e = 0
    var exponentDigits = 0
    while i < to, base[i] >= 48, base[i] <= 57, exponentDigits < 5 {
      e = e * 10 + Int(base[i] - 48)
      exponentDigits += 1
      i += 1
    }
    guard exponentDigits > 0 else { return nil }
    exponent += exponentNegative ? -e : e
  }
  guard abs(exponent) <= 22 else { return nil }
  var value = Double(mantissa)
  value = exponent < 0 ? value / exactPowersOfTen[-exponent] : value * exactPowersOfTen[exponent]
  return (negative ? -value : value, i)
}

extension StringProtocol {
  func trimmingSpaces() -> String {
    var scalars = Substring(self)
    while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
    while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
    return String(scalars)
  }
}
