import Calibration
import HardwareAbstraction
import MPU6050
import Recording
import RecordingTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Set PLUMB_REGENERATE_VECTORS=1 to rewrite the golden files (then review the diff).
let regenerateGolden = getenv("PLUMB_REGENERATE_VECTORS") != nil

func goldenPath(_ name: String) -> String {
  var path = #filePath
  while let last = path.last, last != "/" { path.removeLast() }
  return path + "Golden/" + name
}

/// A small recording with every case the sample selection handles: interrupt, poll and FIFO
/// samples, extreme counts, a repeated read and an out-of-order time (both skipped), a
/// configuration change half way, and records of other kinds in between (ignored).
func exportRecording() -> (PlumbRawHeader, [PlumbRawRecord]) {
  func sample(
    _ ns: Int64, _ words: [Int16], source: PlumbRawSampleSource = .interrupt,
    flags: PlumbRawSampleFlags = []
  ) -> PlumbRawRecord {
    let raw = MPU6050RawSample(
      accelerometer: SIMD3(words[0], words[1], words[2]), temperature: words[3],
      gyro: SIMD3(words[4], words[5], words[6]))
    return .sample(
      PlumbRawSample(
        timestamp: Timestamp(nanoseconds: ns), bytes: PlumbRawBurstBytes(raw), source: source,
        flags: flags))
  }
  let t0: Int64 = 5_000_000_000
  let records: [PlumbRawRecord] = [
    sample(t0, [0, 0, 8192, 0, 131, -131, 0]),
    .note(PlumbRawNote(timestamp: Timestamp(nanoseconds: t0), text: "start")),
    sample(t0 + 10_000_000, [-32768, 32767, 1, -521, 32767, -32768, 65]),
    sample(t0 + 10_000_000, [-32768, 32767, 1, -521, 32767, -32768, 65], flags: [.repeatedRead]),
    sample(t0 + 9_000_000, [1, 1, 1, 1, 1, 1, 1]),
    .unavailable(
      PlumbRawUnavailable(timestamp: Timestamp(nanoseconds: t0 + 15_000_000), reason: .stuckData)
    ),
    .configurationChange(
      PlumbRawConfigurationChange(
        timestamp: Timestamp(nanoseconds: t0 + 15_000_000),
        configuration: MPU6050Configuration(
          gyroFullScale: .degreesPerSecond1000, accelerometerFullScale: .standardGravities8),
        scale: PlumbRawScale(
          MPU6050Scale(
            gyroFullScale: .degreesPerSecond1000, accelerometerFullScale: .standardGravities8)))),
    sample(t0 + 20_000_123, [0, 0, 8192, 0, 131, -131, 0]),
    sample(
      t0 + 30_000_000, [-4096, 12, 4096, 1000, -7, 7, -1], source: .fifo,
      flags: [.timestampEstimated]),
    sample(t0 + 1_500_000_000, [3, -3, 4100, -1000, 0, 0, 2], source: .poll),
  ]
  return (plainHeader(), records)
}

/// The export recording's selected samples, converted with the driver's own conversion
/// (`MPU6050Conversion.convert` with an `MPU6050Scale`), not the recording's: rows of t_s, gyro
/// xyz, accel xyz, temperature.
func independentlyConverted() -> [[Double]] {
  var expected: [[Double]] = []
  var scale = MPU6050Scale(
    gyroFullScale: .degreesPerSecond500, accelerometerFullScale: .standardGravities4)
  var first: Int64?
  var previous: Int64 = .min
  for record in exportRecording().1 {
    if case .configurationChange(let change) = record {
      scale = MPU6050Scale(
        gyroFullScale: change.configuration.gyroFullScale,
        accelerometerFullScale: change.configuration.accelerometerFullScale)
    }
    guard case .sample(let s) = record, !s.flags.contains(.repeatedRead),
      s.timestamp.nanoseconds > previous
    else { continue }
    previous = s.timestamp.nanoseconds
    let origin = first ?? s.timestamp.nanoseconds
    first = origin
    let converted = s.bytes.withUnsafeBytes { MPU6050Conversion.convert(burst: $0, scale: scale)! }
    let rate = converted.angularRateRadiansPerSecond
    let force = converted.specificForceMetersPerSecondSquared
    expected.append([
      Double(s.timestamp.nanoseconds - origin) / 1e9, rate.x, rate.y, rate.z, force.x, force.y,
      force.z, converted.temperatureCelsius,
    ])
  }
  return expected
}

@Suite("CSV export and plumb-cal input")
struct ExportTests {
  func recordingFile() throws -> String {
    let (header, records) = exportRecording()
    let path = temporaryPath("export.plumbraw")
    let writer = try PlumbRawWriter(creating: path, header: header)
    for record in records { try writer.append(record) }
    try writer.close()
    return path
  }

  @Test("the CSV export's bytes are pinned by a golden file")
  func goldenCSV() throws {
    let reader = try PlumbRawReader(contentsOf: try recordingFile())
    let output = temporaryPath("export.csv")
    let selection = try exportCSV(reader: reader, to: output)
    #expect(
      selection == PlumbRawSampleSelection(selected: 5, skippedRepeats: 1, skippedOutOfOrder: 1))
    let bytes = readBytes(output)
    if regenerateGolden { writeBytes(bytes, to: goldenPath("export.csv")) }
    #expect(bytes == readBytes(goldenPath("export.csv")))
    // No temporary file is left behind (AtomicFile's: `.NAME.PID.partial` beside it).
    let folder = output[...output.lastIndex(of: "/")!]
    #expect(!fileExists("\(folder).export.csv.\(getpid()).partial"))
    #expect(fileExists(output))
  }

  @Test("every exported number parses back to exactly what the driver's conversion gives")
  func exportedNumbersAreExact() throws {
    let reader = try PlumbRawReader(contentsOf: try recordingFile())
    let output = temporaryPath("exact.csv")
    try exportCSV(reader: reader, to: output)
    let lines = String(decoding: readBytes(output), as: UTF8.self).split(separator: "\n")
    #expect(lines.first == "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z,temp_c")
    let expected = independentlyConverted()
    let parsed = lines.dropFirst().map { $0.split(separator: ",").map { Double(String($0))! } }
    #expect(parsed == expected)
    // t_s is exact: nine decimals of the integer nanoseconds.
    #expect(lines[3].hasPrefix("0.020000123,"))
  }

  /// Found by fuzzing (fuzz-plumbraw): beyond 2⁵³ ns (104 days) after the first sample,
  /// `Double(ns) / 1e9` rounds twice and can miss the double the CSV's exact `t_s` text reads
  /// as, by a microsecond; `plumb-cal` then read other times from a recording than from its
  /// export. 9 000 000 000.000000513 s is 9e9 s to the nearest double; rounded twice it was
  /// 9 000 000 000.000002 s.
  @Test("seconds are the CSV's t_s exactly, however long after the first sample")
  func secondsAreTheCSVsBeyond2To53Nanoseconds() throws {
    let path = temporaryPath("long.plumbraw")
    let writer = try PlumbRawWriter(creating: path, header: plainHeader())
    let burst = PlumbRawBurstBytes([UInt8](repeating: 1, count: 14))
    for ns: Int64 in [1_000_000_000, 9_000_000_001_000_000_513, 9_000_000_001_000_004_000] {
      try writer.append(
        .sample(PlumbRawSample(timestamp: Timestamp(nanoseconds: ns), bytes: burst)))
    }
    try writer.close()
    let reader = try PlumbRawReader(contentsOf: path)
    var seconds: [Double] = []
    reader.forEachSISample { seconds.append($0.relativeSeconds) }
    #expect(seconds == [0, 9e9, 9_000_000_000.000004])
    let csv = temporaryPath("long.csv")
    try exportCSV(reader: reader, to: csv)
    let lines = String(decoding: readBytes(csv), as: UTF8.self).split(separator: "\n")
    #expect(lines[2].hasPrefix("9000000000.000000513,"))
    #expect(lines.dropFirst().map { Double($0.split(separator: ",")[0])! } == seconds)
    #expect(try RecordingLoader.standard.load(path: path).timeSeconds == seconds)
  }

  @Test("the export replaces its target whole or not at all")
  func exportIsAtomic() throws {
    let reader = try PlumbRawReader(contentsOf: try recordingFile())
    let output = temporaryPath("keep.csv")
    writeBytes(Array("old".utf8), to: output)
    expectError(.writeFailed, ["cannot create the temporary file", "no such file"]) {
      try exportCSV(reader: reader, to: "/nonexistent/folder/out.csv")
    }
    try exportCSV(reader: reader, to: output)
    #expect(readBytes(output).count > 100)
  }

  @Test(".plumbraw through RecordingLoader.standard gives the driver's SI samples")
  func loaderReadsPlumbRaw() throws {
    let path = try recordingFile()
    let recording = try RecordingLoader.standard.load(path: path)
    let csvPath = temporaryPath("same.csv")
    try exportCSV(reader: try PlumbRawReader(contentsOf: path), to: csvPath)
    let fromCSV = try RecordingLoader.standard.load(path: csvPath)
    #expect(recording.count == 5)
    let expected = independentlyConverted()
    #expect(recording.timeSeconds == expected.map { $0[0] })
    for axis in InertialAxis.allCases {
      #expect(recording.samples(axis) == expected.map { $0[1 + axis.rawValue] })
    }
    #expect(recording.temperatureCelsius == expected.map { $0[7] })
    #expect(recording.timeSeconds == fromCSV.timeSeconds)
    #expect(recording.channels == fromCSV.channels)
    #expect(recording.temperatureCelsius == fromCSV.temperatureCelsius)
    #expect(recording.source == path)
    // First sample: 8192 counts at ±4 g is 1 g; 131 counts at ±500 °/s is 2 °/s (PS §6.1–6.2).
    #expect(recording.samples(.accelZ)[0] == 9.80665)
    #expect(abs(recording.samples(.gyroX)[0] - 2 * Double.pi / 180) < 1e-15)
    #expect(recording.temperatureCelsius?[0] == 36.53)
  }

  @Test("the loader reads a torn recording to its end and explains damaged or wrong files")
  func loaderErrors() throws {
    let path = try recordingFile()
    var bytes = readBytes(path)
    let torn = temporaryPath("torn.plumbraw")
    writeBytes(Array(bytes.dropLast(5)), to: torn)
    let tornRecording = try RecordingLoader.standard.load(path: torn)
    #expect(tornRecording.count == 4)
    // The cut is said (plumb-cal prints the notes), not silently read as a whole recording; so
    // is the fixture's one sample out of order.
    #expect(tornRecording.notes.count == 2)
    #expect(tornRecording.notes.first?.contains("not a whole record") == true)
    #expect(
      try RecordingLoader.standard.load(path: path).notes == [
        "1 sample was left out of order (dated no later than the sample before; a live "
          + "recording's times always increase, so a time in the file is damaged: a sample "
          + "dated far ahead leaves every one after it out)"
      ])
    let reader = try PlumbRawReader(bytes: bytes)
    bytes[reader.headerLength + 3] ^= 0x40
    let damaged = temporaryPath("damaged.plumbraw")
    writeBytes(bytes, to: damaged)
    #expect {
      _ = try RecordingLoader.standard.load(path: damaged)
    } throws: { error in
      guard let error = error as? RecordingError else { return false }
      return error.kind == .malformed
        && error.location == "record 0 at byte \(reader.headerLength)"
        && error.description.contains("damaged in the middle")
    }
    let csvNamedWrong = temporaryPath("still.plumbraw")
    writeBytes(Array("t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z\n".utf8), to: csvNamedWrong)
    #expect {
      _ = try RecordingLoader.standard.load(path: csvNamedWrong)
    } throws: { error in
      guard let error = error as? RecordingError else { return false }
      return error.kind == .unsupportedFormat && error.message.contains("name it .csv")
    }
  }
}
