import Calibration
import FuzzSupport

/// The replay-layout CSV decoder (`CSVRecordingDecoder`, Sources/Calibration) as `plumb-cal`
/// and `plumb replay` reach it: any bytes, then what every bench analysis does first with the
/// samples, measuring their timing (`SampleTiming.measure`).
///
/// Properties, besides no trap and no hang:
/// - a refusal names the file and a line of it;
/// - what is accepted holds finite numbers at strictly increasing times, each sample at a line
///   of the file, every value exactly the number its field's text is (Swift's own `Double`
///   parser as the reference, so the decoder's fast path must round as it does);
/// - decode(encode(x)) == x: the samples written as the export writes them (shortest text that
///   reads back to the same double) decode to the same bits;
/// - the timing of any accepted recording is measured or refused naming the file.
@main enum CSVFuzz {
  static func main() { runLibFuzzer(LLVMFuzzerTestOneInput) }

  static let path = "/srv/bench/still.csv"

  static func test(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    let lines = lines(of: bytes)
    let recording: InertialRecording
    do {
      recording = try CSVRecordingDecoder().decode(bytes, path: path)
    } catch {
      require(
        error.description.hasPrefix(path) && !error.message.isEmpty,
        "a refusal names the file and says what is wrong", error.description)
      if let location = error.location {
        let number = location.hasPrefix("line ") ? Int(location.dropFirst(5)) : nil
        require(
          number.map { (1...max(1, lines.count)).contains($0) } ?? false,
          "a refusal's location is a line of the file", "\(location) of \(lines.count) lines")
      }
      return
    }

    let count = recording.count
    guard case .lines(let sampleLines) = recording.locations, sampleLines.count == count else {
      propertyViolated("every CSV sample has its line", "\(recording.locations)")
    }
    let temperature = recording.temperatureCelsius
    for index in 0..<count {
      let time = recording.timeSeconds[index]
      require(time.isFinite, "times are finite", "\(time) at sample \(index)")
      if index > 0 {
        require(
          time > recording.timeSeconds[index - 1], "times increase strictly",
          "\(recording.timeSeconds[index - 1]) then \(time)")
        require(sampleLines[index] > sampleLines[index - 1], "samples are in line order")
      }
      for channel in recording.channels {
        require(channel[index].isFinite, "values are finite", "\(channel[index])")
      }
      if let temperature {
        require(temperature[index].isFinite, "temperatures are finite", "\(temperature[index])")
      }
    }
    checkAgainstReference(recording, sampleLines: sampleLines, lines: lines)
    checkRoundTrip(recording)

    do {
      let timing = try SampleTiming.measure(recording)
      require(
        timing.samplePeriodSeconds > 0 && timing.sampleCount == count,
        "a measured timing has a period and counts the samples", "\(timing)")
    } catch {
      require(
        error.description.hasPrefix(path), "a timing refusal names the file", error.description)
    }
  }

  /// The file's lines, without their `\n` and a `\r` before it, and without the UTF-8 byte
  /// order mark a file may start with (the decoder skips it: a first line `<BOM># comment` is a
  /// comment, not the header).
  static func lines(of bytes: [UInt8]) -> [ArraySlice<UInt8>] {
    let hasByteOrderMark =
      bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF
    let text = hasByteOrderMark ? bytes[3...] : bytes[...]
    var lines = text.split(separator: 0x0A, omittingEmptySubsequences: false)
    if bytes.last == 0x0A { lines.removeLast() }
    return lines.map { $0.last == 0x0D ? $0.dropLast() : $0 }
  }

  /// Reads each sample's fields again from its line, by the header's column names, and compares
  /// every value with what Swift's `Double(String)` makes of the field's text.
  static func checkAgainstReference(
    _ recording: InertialRecording, sampleLines: [Int], lines: [ArraySlice<UInt8>]
  ) {
    guard
      let header = lines.first(where: { line in
        let text = trimmed(line, leading: [0x20, 0x09])
        return !text.isEmpty && text.first != UInt8(ascii: "#")
      })
    else { propertyViolated("an accepted file has a header", "") }
    let names = header.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map {
      String(decoding: trimmed($0, leading: [0x20, 0x09]), as: UTF8.self)
    }
    let columns = CSVRecordingDecoder.requiredColumns + [CSVRecordingDecoder.temperatureColumn]
    for (index, lineNumber) in sampleLines.enumerated() {
      let fields = lines[lineNumber - 1].split(
        separator: UInt8(ascii: ","), omittingEmptySubsequences: false)
      require(fields.count == names.count, "a sample's row has the header's fields")
      for (slot, name) in columns.enumerated() {
        guard let column = names.firstIndex(of: name) else { continue }
        // strtod skips C's white space before a number; the decoder trims spaces and tabs.
        let text = String(
          decoding: trimmed(fields[column], leading: [0x20, 0x09, 0x0B, 0x0C, 0x0D]), as: UTF8.self)
        let decoded: Double =
          switch slot {
          case 0: recording.timeSeconds[index]
          case 7: recording.temperatureCelsius?[index] ?? .nan
          default: recording.channels[slot - 1][index]
          }
        guard let reference = Double(text) else {
          propertyViolated(
            "an accepted field is a number", "line \(lineNumber), \(name): '\(text)'")
        }
        require(
          sameBits(reference, decoded), "a field decodes to the number its text is",
          "line \(lineNumber), \(name): '\(text)' is \(reference), decoded \(decoded)")
      }
    }
  }

  /// `bytes` without spaces and tabs at the end and `leading` bytes at the start.
  static func trimmed(_ bytes: ArraySlice<UInt8>, leading: Set<UInt8>) -> ArraySlice<UInt8> {
    var slice = bytes
    while let first = slice.first, leading.contains(first) { slice.removeFirst() }
    while let last = slice.last, last == 0x20 || last == 0x09 { slice.removeLast() }
    return slice
  }

  /// The samples written as `plumb export --csv` writes numbers (Swift's shortest round-trip
  /// text) read back to the same bits.
  static func checkRoundTrip(_ recording: InertialRecording) {
    var text = "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z"
    if recording.temperatureCelsius != nil { text += ",temp_c" }
    text += "\n"
    for index in 0..<recording.count {
      text += recording.timeSeconds[index].description
      for channel in recording.channels { text += "," + channel[index].description }
      if let temperature = recording.temperatureCelsius {
        text += "," + temperature[index].description
      }
      text += "\n"
    }
    let again: InertialRecording
    do {
      again = try CSVRecordingDecoder().decode(Array(text.utf8), path: path)
    } catch {
      propertyViolated("what was read writes to a CSV that reads", "\(error)")
    }
    require(
      sameBits(again.timeSeconds, recording.timeSeconds)
        && zip(again.channels, recording.channels).allSatisfy(sameBits)
        && (again.temperatureCelsius == nil) == (recording.temperatureCelsius == nil)
        && sameBits(again.temperatureCelsius ?? [], recording.temperatureCelsius ?? []),
      "decode(encode(samples)) == samples", String(text.prefix(400)))
  }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  CSVFuzz.test(fuzzInput(data, size))
  return 0
}
