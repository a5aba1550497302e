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
/// with `#` are skipped. Every needed field must be a finite number and time must increase:
/// anything else is an error naming the line and the column.
public struct CSVRecordingDecoder: RecordingDecoder {
  public static let requiredColumns = ["t_s", "gyr_x", "gyr_y", "gyr_z", "acc_x", "acc_y", "acc_z"]
  public static let temperatureColumn = "temp_c"

  public init() {}

  public var fileExtensions: [String] { ["csv"] }

  public func decode(_ bytes: [UInt8], path: String) throws(RecordingError) -> InertialRecording {
    // A NUL after the last byte lets strtod stop on its own at the end of the buffer.
    var buffer = bytes
    buffer.append(0)
    var time: [Double] = []
    var channels = [[Double]](repeating: [], count: 6)
    var temperature: [Double] = []
    var lines: [Int32] = []
    let estimate = bytes.count / 60
    time.reserveCapacity(estimate)
    lines.reserveCapacity(estimate)
    for i in 0..<6 { channels[i].reserveCapacity(estimate) }

    var failure: RecordingError?
    var hasTemperature = false
    buffer.withUnsafeBufferPointer { raw in
      let base = raw.baseAddress!
      let end = bytes.count
      var index = 0
      var lineNumber: Int32 = 0
      // Column index → slot: 0 time, 1…6 channels, 7 temperature, -1 ignored.
      var slots: [Int] = []
      var values = [Double](repeating: 0, count: 8)
      var needed = 0
      while index < end {
        lineNumber += 1
        var lineEnd = index
        while lineEnd < end && base[lineEnd] != 0x0A { lineEnd += 1 }
        var contentEnd = lineEnd
        if contentEnd > index && base[contentEnd - 1] == 0x0D { contentEnd -= 1 }
        defer { index = lineEnd + 1 }
        var first = index
        while first < contentEnd && (base[first] == 0x20 || base[first] == 0x09) { first += 1 }
        if first == contentEnd || base[first] == UInt8(ascii: "#") { continue }

        if slots.isEmpty {
          let names = String(
            decoding: UnsafeBufferPointer(start: base + index, count: contentEnd - index),
            as: UTF8.self
          )
          .split(separator: ",", omittingEmptySubsequences: false)
          .map { $0.trimmingSpaces() }
          var missing: [String] = []
          slots = names.map { name in
            if let i = CSVRecordingDecoder.requiredColumns.firstIndex(of: name) { return i }
            return name == CSVRecordingDecoder.temperatureColumn ? 7 : -1
          }
          for (i, name) in CSVRecordingDecoder.requiredColumns.enumerated()
          where !slots.contains(i) {
            missing.append(name)
          }
          if let number = Double(names.first ?? ""), number.isFinite {
            failure = RecordingError(
              .malformed, path: path, location: "line \(lineNumber)",
              "the file starts with numbers, not a header: the first line must name the columns, t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z[,temp_c]"
            )
            return
          }
          guard missing.isEmpty else {
            failure = RecordingError(
              .malformed, path: path, location: "line \(lineNumber)",
              "the header lacks \(missing.joined(separator: ", ")): expected the columns t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z and optionally temp_c (seconds, rad/s, m/s², °C)"
            )
            return
          }
          for slot in 0..<8 where slots.filter({ $0 == slot }).count > 1 {
            failure = RecordingError(
              .malformed, path: path, location: "line \(lineNumber)",
              "the header names the column \(slot == 7 ? "temp_c" : CSVRecordingDecoder.requiredColumns[slot]) twice"
            )
            return
          }
          hasTemperature = slots.contains(7)
          needed = slots.filter { $0 >= 0 }.count
          continue
        }

        var column = 0
        var cursor = index
        var parsed = 0
        while true {
          var fieldEnd = cursor
          while fieldEnd < contentEnd && base[fieldEnd] != UInt8(ascii: ",") { fieldEnd += 1 }
          if column < slots.count, slots[column] >= 0 {
            let slot = slots[column]
            let name =
              slot == 7
              ? CSVRecordingDecoder.temperatureColumn
              : CSVRecordingDecoder.requiredColumns[slot]
            var nonSpace = cursor
            while nonSpace < fieldEnd && (base[nonSpace] == 0x20 || base[nonSpace] == 0x09) {
              nonSpace += 1
            }
            if nonSpace == fieldEnd {
              failure = RecordingError(
                .malformed, path: path, location: "line \(lineNumber)",
                "\(name) is empty: every row needs a value in every column")
              return
            }
            var stop: UnsafeMutablePointer<CChar>?
            let start = UnsafeMutableRawPointer(mutating: base + nonSpace)
              .assumingMemoryBound(to: CChar.self)
            let value = strtod(start, &stop)
            var after = stop.map { UnsafeRawPointer($0) - UnsafeRawPointer(base) } ?? nonSpace
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
              failure = RecordingError(
                .malformed, path: path, location: "line \(lineNumber)", problem)
              return
            }
            values[slot] = value
            parsed += 1
          }
          column += 1
          if fieldEnd >= contentEnd { break }
          cursor = fieldEnd + 1
        }
        if column != slots.count || parsed != needed {
          failure = RecordingError(
            .malformed, path: path, location: "line \(lineNumber)",
            "the row has \(column) fields; the header has \(slots.count)")
          return
        }
        if let previous = time.last, values[0] <= previous {
          failure = RecordingError(
            .malformed, path: path, location: "line \(lineNumber)",
            "t_s \(values[0]) is not after the previous sample's \(previous): time must increase from row to row"
          )
          return
        }
        time.append(values[0])
        for c in 0..<6 { channels[c].append(values[c + 1]) }
        if hasTemperature { temperature.append(values[7]) }
        lines.append(lineNumber)
      }
      if slots.isEmpty {
        failure = RecordingError(
          .malformed, path: path,
          "the file is empty: expected a header t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z[,temp_c] and rows of samples"
        )
      }
    }
    if let failure { throw failure }
    return InertialRecording(
      source: path, timeSeconds: time, channels: channels,
      temperatureCelsius: hasTemperature ? temperature : nil, locations: .lines(lines))
  }
}

extension StringProtocol {
  func trimmingSpaces() -> String {
    var scalars = Substring(self)
    while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
    while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
    return String(scalars)
  }
}
