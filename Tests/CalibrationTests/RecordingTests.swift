import ByteFormats
import Calibration
import Randomness
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct RecordingTests {
  let decoder = CSVRecordingDecoder()

  func decode(_ text: String) throws -> InertialRecording {
    try decoder.decode(Array(text.utf8), path: "rec.csv")
  }

  func expectError(_ text: String, _ kind: RecordingError.Kind, _ fragments: [String]) {
    #expect {
      _ = try decode(text)
    } throws: { error in
      guard let e = error as? RecordingError else { return false }
      return e.kind == kind && fragments.allSatisfy { e.description.contains($0) }
    }
  }

  static let header = "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z"

  @Test func readsColumnsByNameAndSkipsCommentsAndBlankLines() throws {
    let text = """
      # exported by a test
      acc_z,t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,movement,temp_c

      9.81,0.00,0.1,0.2,0.3,1,2,nan,25.5\r
      9.80,0.01,-0.1,-0.2,-0.3,1.5,2.5,1,25.6
      """
    let r = try decode(text)
    #expect(r.count == 2)
    #expect(r.timeSeconds == [0, 0.01])
    #expect(r.samples(.gyroX) == [0.1, -0.1])
    #expect(r.samples(.accelZ) == [9.81, 9.80])
    #expect(r.temperatureCelsius == [25.5, 25.6])
    // The ignored column may hold anything, NaN included.
    #expect(r.location(ofSample: 1) == "line 5")
  }

  /// Issue 21: a UTF-8 byte-order mark before the header (Excel's "CSV UTF-8") was read as
  /// part of the first column's name: "the header lacks t_s". It is not part of the text.
  @Test func aByteOrderMarkBeforeTheHeaderIsNotPartOfIt() throws {
    let plain = try decode(Self.header + "\r\n0,1,2,3,4,5,6\r\n0.01,1,2,3,4,5,6\r\n")
    let marked = try decode("\u{FEFF}" + Self.header + "\r\n0,1,2,3,4,5,6\r\n0.01,1,2,3,4,5,6\r\n")
    #expect(marked.count == 2 && marked.timeSeconds == plain.timeSeconds)
    #expect(marked.samples(.accelZ) == plain.samples(.accelZ))
    // Only before the header: one inside a row is an error that says what it is.
    expectError(
      Self.header + "\n0,1,2,3,4,5,6\n\u{FEFF}0.01,1,2,3,4,5,6\n", .malformed,
      ["line 3", "t_s", "not a number"])
  }

  @Test func numbersReadExactlyAsTheirDecimalText() throws {
    // Short decimals take an exact fast path, long ones strtod: both must give the double
    // nearest the text, as Swift's own parser does.
    var random = SeededGenerator(seed: 77)
    var texts = [
      "0.1", "-0.000123", "+2.5", "1e-7", "6.02E+3", "123456789012345", "1234567890123456789",
      "0.30000000000000004", "9.80665", "1.7976931348623157e308", "4.9e-324", "-0", "007.50",
    ]
    for _ in 0..<300 {
      let value = (random.nextUniform() - 0.5) * 20 * Double(1 << Int(random.next() % 12))
      texts.append("\(value)")
      texts.append(NumberTextForTests.nineDigits(value))
    }
    var csv = RecordingTests.header + "\n"
    for (i, text) in texts.enumerated() { csv += "\(i),\(text),0,0,0,0,0\n" }
    let recording = try decode(csv)
    for (parsed, text) in zip(recording.samples(.gyroX), texts) {
      #expect(parsed == Double(text)!, "\(text)")
    }
  }

  @Test func temperatureIsOptional() throws {
    let r = try decode(RecordingTests.header + "\n0,1,2,3,4,5,6\n")
    #expect(r.temperatureCelsius == nil)
  }

  @Test func malformedInputNamesTheLineAndColumn() {
    let h = RecordingTests.header
    expectError(h + "\n0,1,2,3,4,5,6\n0.01,1,x,3,4,5,6\n", .malformed, ["line 3", "gyr_y is 'x'"])
    expectError(
      h + "\n0,1,2,3,4,5,6\n0.01,1,nan,3,4,5,6\n", .malformed, ["line 3", "gyr_y", "finite"])
    expectError(h + "\n0,1,2,3,4,5,inf\n", .malformed, ["line 2", "acc_z"])
    expectError(h + "\n0,1,2,3,4,5\n", .malformed, ["line 2", "6 fields", "header has 7"])
    expectError(h + "\n0,1,,3,4,5,6\n", .malformed, ["line 2", "gyr_y is empty"])
    expectError(
      h + "\n0.02,1,2,3,4,5,6\n0.01,1,2,3,4,5,6\n", .malformed, ["line 3", "time must increase"])
    expectError(h + "\n0.02,1,2,3,4,5,6\n0.02,1,2,3,4,5,6\n", .malformed, ["line 3", "not after"])
    expectError("t_s,gyr_x,gyr_y,acc_x,acc_y,acc_z\n", .malformed, ["line 1", "lacks gyr_z"])
    expectError("0,1,2,3,4,5,6\n", .malformed, ["line 1", "not a header"])
    expectError("", .malformed, ["empty"])
    expectError(h + ",gyr_x\n", .malformed, ["twice"])
  }

  func uniformRecording(_ times: [Double]) -> InertialRecording {
    InertialRecording(
      source: "rec.csv", timeSeconds: times,
      channels: [[Double]](repeating: [Double](repeating: 0, count: times.count), count: 6),
      temperatureCelsius: nil, locations: .lines(times.indices.map { $0 + 2 }))
  }

  /// The first sample of each averaging window `TemperatureWindows` (and the rest detector's
  /// statistics) use for `length`-sample windows over `count` samples: each sample's
  /// temperature is its index, so a window's mean temperature is its first index + (length − 1)/2.
  func windowStarts(_ timing: SampleTiming, length: Int, count: Int) -> [Int] {
    var windows = TemperatureWindows(
      timing: timing, windowSeconds: Double(length) * timing.samplePeriodSeconds)
    for i in 0..<count {
      windows.add(
        RecordingSample(timeSeconds: 0, values: SIMD8(0, 0, 0, 0, 0, 0, Double(i), 0), line: 0),
        index: i)
    }
    return windows.temperatures.map { Int($0 - Double(length - 1) / 2) }
  }

  /// A bench recording of hours loses a sample now and then (a missed edge, a bus error, a
  /// FIFO overflow): the analyses used to refuse the whole file for one missing sample and
  /// tell the user to cut it, which no command does. Gaps are now measured, and the samples
  /// between them are analysed as runs of their own.
  @Test func gapsAreMeasuredAsRunsBetweenThem() throws {
    var times = (0..<1000).map { Double($0) * 0.00993 }
    times.removeSubrange(600..<700)  // a 1 s hole after index 599
    times.removeSubrange(400..<403)  // three samples lost after index 399
    let timing = try SampleTiming.measure(uniformRecording(times))
    #expect(timing.runs == [0..<400, 400..<597, 597..<897])
    #expect(timing.gapCount == 2)
    #expect(timing.missingSamples == 103)
    #expect(timing.sampleCount == 897)
    // The period comes from within the runs: the holes do not bias it.
    #expect(abs(timing.samplePeriodSeconds - 0.00993) < 1e-12)
    #expect(abs(timing.durationSeconds - 897 * 0.00993) < 1e-9)
    #expect(abs(timing.spanSeconds - 1000 * 0.00993) < 1e-9)
    let note = try #require(timing.gapNote)
    #expect(note.contains("2 gaps"), "\(note)")
    #expect(note.contains("103 samples missing"), "\(note)")
    #expect(note.contains("line 402"), "\(note)")  // the first sample after the first gap
    // Windows never straddle a gap: 100-sample windows are whole within each run (their first
    // samples, from their mean "temperature", which is the sample's index here).
    let starts = [0, 100, 200, 300, 400, 597, 697, 797]
    #expect(windowStarts(timing, length: 100, count: 897) == starts)
    // No gap: one run, no note, the windows of before.
    let whole = try SampleTiming.measure(uniformRecording((0..<1000).map { Double($0) * 0.01 }))
    #expect(whole.runs == [0..<1000])
    #expect(whole.gapCount == 0 && whole.missingSamples == 0 && whole.gapNote == nil)
    #expect(windowStarts(whole, length: 300, count: 1000) == [0, 300, 600])
  }

  /// A time far ahead (a clock set mid-recording, two files joined) is a gap too, but bridging
  /// a year of holes would take gigabytes: a recording that is mostly missing is refused,
  /// naming the longest gap.
  @Test func aRecordingThatIsMostlyGapsIsRefusedNamingTheLongestGap() {
    var times = (0..<1000).map { Double($0) * 0.01 }
    for i in 700..<1000 { times[i] += 3.0e7 }  // a year later
    #expect {
      _ = try SampleTiming.measure(uniformRecording(times))
    } throws: { error in
      guard let e = error as? RecordingError else { return false }
      return e.kind == .notUniform && e.location == "line 702"
        && e.message.contains("mostly holes") && e.message.contains("gap of 3")
        && e.message.contains("split")
    }
  }

  /// Found by fuzzing (fuzz-csv, this minimised input): a time far ahead of the rest, 1e34 s,
  /// is a gap of about 10³⁶ samples, more than an `Int` counts, and measuring the timing
  /// trapped converting it; an interval too long for a double (−1e308 s to 1.7e308 s) trapped
  /// the same way. Both are recordings that are mostly holes, refused as such.
  @Test func aGapOfMoreSamplesThanAnIntHoldsIsRefusedAsMostlyHoles() throws {
    let fuzzed = try decode(
      "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z,\n0,5,4,1,3,0,9,\n.019,0,0,1,6,3,6,\n"
        + ".04,3,6,5,3,6,3,\n1e34,5,9,1,6,5,6,6")
    var beyondADouble = (0..<10).map { -1e308 + Double($0) * 1e293 }
    beyondADouble.append(1.7e308)
    for (recording, line, gap) in [
      (fuzzed, "line 5", "gap of 1e+34 s"), (uniformRecording(beyondADouble), "line 12", "gap of"),
    ] {
      #expect {
        _ = try SampleTiming.measure(recording)
      } throws: { error in
        guard let e = error as? RecordingError else { return false }
        return e.kind == .notUniform && e.location == line && e.message.contains("mostly holes")
          && e.message.contains(gap)
      }
    }
  }

  /// Found by fuzzing (fuzz-csv): the header was split into Swift `Character`s, and a comma
  /// followed by a combining mark (U+0301) is one character, not a comma, so the header lost a
  /// column the rows have: the rows of the file were refused ("the row has 9 fields; the header
  /// has 8"), and rows short of that column were accepted. Columns are split at the comma byte,
  /// as the rows are.
  @Test func aCombiningMarkAfterACommaInTheHeaderDoesNotMergeTwoColumns() throws {
    let header = "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z,note,\u{301}x\n"
    let recording = try decode(header + "0,1,2,3,4,5,6,a,b\n0.01,1,2,3,4,5,7,a,b\n")
    #expect(recording.timeSeconds == [0, 0.01])
    #expect(recording.channels[5] == [6, 7])
    expectError(
      header + "0,1,2,3,4,5,6,a\n", .malformed,
      ["line 2", "the row has 8 fields; the header has 9"])
  }

  @Test func extraSamplesAreRejectedWithTheirLine() {
    var extra = (0..<100).map { Double($0) * 0.01 }
    extra.insert(0.502, at: 51)
    #expect {
      _ = try SampleTiming.measure(uniformRecording(extra))
    } throws: { error in
      guard let e = error as? RecordingError else { return false }
      return e.kind == .notUniform && e.location == "line 53"
        && e.message.contains("extra or duplicated sample")
    }
  }

  @Test func periodComesFromTheSpanNotTheQuantisedMedian() throws {
    // A true period of 9.93 ms stamped to the whole millisecond: the intervals are 9 or 10 ms
    // and their median is 10 ms (0.7 % off); the span gives the period.
    let times = (0..<10_000).map { (Double($0) * 0.00993 * 1000).rounded(.down) / 1000 }
    let timing = try SampleTiming.measure(uniformRecording(times))
    #expect(abs(timing.medianIntervalSeconds - 0.010) < 1e-12)
    #expect(abs(timing.samplePeriodSeconds - 0.00993) < 1e-6)
  }

  @Test func loaderPicksByExtensionAndExplainsMissingFormats() throws {
    #expect {
      _ = try RecordingLoader.standard.load(path: "/nonexistent/still.plumbraw")
    } throws: { error in
      guard let e = error as? RecordingError else { return false }
      return e.kind == .unreadable && e.description.contains("no such file")
    }
    // A folder is named as one (not as a file without an extension), with the formats to give.
    #expect {
      _ = try RecordingLoader.standard.load(path: "/tmp")
    } throws: { error in
      guard let e = error as? RecordingError else { return false }
      return e.kind == .unreadable && e.description.hasPrefix("/tmp: is a folder")
        && e.message.contains(".plumbraw")
    }
    #expect {
      _ = try RecordingLoader.standard.load(path: "/tmp/still.txt")
    } throws: { error in
      (error as? RecordingError)?.message.contains("unknown recording format '.txt'") ?? false
    }
    #expect {
      _ = try RecordingLoader.standard.load(path: "/nonexistent/still.csv")
    } throws: { error in
      guard let e = error as? RecordingError else { return false }
      return e.kind == .unreadable && e.description.contains("no such file")
    }
    let path = "/tmp/plumb-recording-test-\(getpid()).csv"
    let text = RecordingTests.header + "\n0,1,2,3,4,5,6\n0.01,1,2,3,4,5,6\n"
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    defer { unlink(path) }
    let recording = try RecordingLoader.standard.load(path: path)
    #expect(recording.count == 2)
    #expect(recording.source == path)
  }
}

enum NumberTextForTests {
  /// `value` with nine significant digits, as an exporter might write it.
  static func nineDigits(_ value: Double) -> String {
    guard value != 0 else { return "0" }
    var exponent = 0
    var m = abs(value)
    while m >= 10 {
      m /= 10
      exponent += 1
    }
    while m < 1 {
      m *= 10
      exponent -= 1
    }
    let digits = Int((m * 1e8).rounded())
    return (value < 0 ? "-" : "")
      + "\(digits / 100_000_000).\(String(digits % 100_000_000).leftPadded(8))e\(exponent)"
  }
}

extension String {
  fileprivate func leftPadded(_ width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}
