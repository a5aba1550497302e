import Calibration
import Dispatch
import Foundation
import HardwareAbstraction
import PlumbRuntime
import Randomness
import Recording
import Testing

/// A recording whose CRCs are whole but whose times are not (a time written over by a bad
/// card, a tool that edited the file): `plumb run --replay` must end and say where the
/// recording is damaged, not poll its way towards a sample dated centuries ahead.
@Suite("Replaying damaged recordings")
struct DamagedReplayTests {
  /// `source` copied to `destination` record by record, the `index`-th sample record (of
  /// `count`; negative counts from the end) dated `nanoseconds`.
  func redate(
    _ source: String, to destination: String, sample index: Int, nanoseconds: Int64
  ) throws {
    let reader = try PlumbRawReader(contentsOf: source)
    let records = Array(reader.records())
    let samples = records.indices.filter {
      if case .sample = records[$0] { return true }
      return false
    }
    let target = samples[index >= 0 ? index : samples.count + index]
    let writer = try PlumbRawWriter(creating: destination, header: reader.header)
    for (position, record) in records.enumerated() {
      if position == target, case .sample(var sample) = record {
        sample.timestamp = Timestamp(nanoseconds: nanoseconds)
        try writer.append(.sample(sample))
      } else {
        try writer.append(record)
      }
    }
    try writer.close()
  }

  /// A live run of `seconds` on `board`, recorded in `directory`: the recording's path.
  func liveRecording(
    board: String, seconds: Int, in directory: URL, extra: [String] = []
  ) throws -> String {
    let live = directory.appendingPathComponent("live.plumbraw").path
    let run = try runPlumb(
      ["run", "--board", board, "--fast", "--duration", "\(seconds)", "--serial", "/dev/null"]
        + extra + ["--record", live])
    #expect(run.status == 0, "\(run.standardError)")
    return live
  }

  /// Runs plumb, killing it after `seconds` (a replay that never ends fails the test instead of
  /// hanging it).
  func runPlumbWithin(_ seconds: Int, _ arguments: [String]) throws -> ProcessResult {
    try runPlumb(arguments) { process in
      DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) {
        if process.isRunning { process.terminate() }
      }
    }
  }

  @Test(
    "a sample dated far after its neighbours ends the replay with a message naming the file",
    arguments: [-1, 100])
  func sampleDatedFarAhead(index: Int) throws {
    let directory = try temporaryDirectory()
    let live = try liveRecording(board: "Boards/simulated.json", seconds: 3, in: directory)
    let damaged = directory.appendingPathComponent("damaged.plumbraw").path
    // 285 years after the epoch of the monotonic clock: valid for the format, no real run's.
    try redate(live, to: damaged, sample: index, nanoseconds: 9_000_000_000_000_000_000)
    let replay = try runPlumbWithin(
      60,
      [
        "run", "--replay", damaged, "--serial", directory.appendingPathComponent("out").path,
      ])
    #expect(replay.status == 65, "\(replay.standardError)")
    #expect(replay.standardError.contains("\(damaged) is damaged"), "\(replay.standardError)")
    // The samples before the damage were replayed (their frames written).
    let frames = try Data(contentsOf: directory.appendingPathComponent("out"))
    #expect(frames.count > 1_000)
  }

  /// `record` dated `time`.
  func redated(_ record: PlumbRawRecord, _ time: Timestamp) -> PlumbRawRecord {
    switch record {
    case .sample(var r):
      r.timestamp = time
      return .sample(r)
    case .unavailable(var r):
      r.timestamp = time
      return .unavailable(r)
    case .missedSamples(var r):
      r.timestamp = time
      return .missedSamples(r)
    case .reinitialization(var r):
      r.timestamp = time
      return .reinitialization(r)
    case .configurationChange(var r):
      r.timestamp = time
      return .configurationChange(r)
    case .note(var r):
      r.timestamp = time
      return .note(r)
    case .timerWake(var r):
      r.timestamp = time
      return .timerWake(r)
    default: return record
    }
  }

  /// Seeded edits at the level of records, each a file whose every CRC is whole: a record
  /// dated at an extreme or shifted, deleted, repeated, swapped with the next, or a sample's
  /// bytes replaced. They reach the replay chip, the driver and the loop, which the byte-level
  /// mutations of RecordingTests stop short of (the reader refuses most of those).
  @Test(
    "300 seeded record-level mutants of recordings with faults replay or fail clearly",
    arguments: ["brownout", "broken-wire"])
  func recordLevelMutants(faults: String) throws {
    let directory = try temporaryDirectory()
    var board = try String(
      contentsOfFile: "\(repositoryRoot)/Boards/simulated.json", encoding: .utf8)
    board = board.replacingOccurrences(
      of: #""scenario": "handheld""#, with: #""scenario": "handheld", "faults": "\#(faults)""#)
    let boardPath = directory.appendingPathComponent("board.json").path
    try board.write(toFile: boardPath, atomically: true, encoding: .utf8)
    let live = try liveRecording(board: boardPath, seconds: 4, in: directory)
    let reader = try PlumbRawReader(contentsOf: live)
    let original = Array(reader.records())
    #expect(original.count > 400)
    let extremes: [Int64] = [
      .max, .min, 0, -1, 1, .max - 1, .min + 1, 9_000_000_000_000_000_000,
      -9_000_000_000_000_000_000,
    ]
    var random = SeededGenerator(seed: faults == "brownout" ? 1 : 2)
    func below(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
    var replayed = 0
    var damaged = 0
    for mutant in 0..<150 {
      var records = original
      for _ in 0...below(3) {
        let at = below(records.count)
        switch below(6) {
        case 0:
          records[at] = redated(
            records[at], Timestamp(nanoseconds: extremes[below(extremes.count)]))
        case 1:
          let shift = Int64(below(2_000_000_001)) - 1_000_000_000
          let time = records[at].timestamp.nanoseconds
          records[at] = redated(records[at], Timestamp(nanoseconds: time &+ shift))
        case 2: records.remove(at: at)
        case 3: records.insert(records[at], at: at)
        case 4: if at + 1 < records.count { records.swapAt(at, at + 1) }
        default:
          if case .sample(var sample) = records[at] {
            sample.bytes = PlumbRawBurstBytes(
              (0..<14).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            records[at] = .sample(sample)
          }
        }
      }
      let path = directory.appendingPathComponent("mutant-\(mutant).plumbraw").path
      let writer = try PlumbRawWriter(creating: path, header: reader.header)
      for record in records { try writer.append(record) }
      try writer.close()
      do {
        let summary = try replayRecording(
          path: path, format: nil, options: RunOptions(serialPath: "/dev/null", log: { _ in }))
        replayed += 1
        if let damage = summary.damage {
          damaged += 1
          #expect(damage.hasPrefix("\(path) is damaged"), "mutant \(mutant): \(damage)")
        }
      } catch {
        #expect(error.description.contains(path), "mutant \(mutant): \(error)")
      }
      try FileManager.default.removeItem(atPath: path)
    }
    // Not vacuous: most mutants still replay; some are found damaged.
    #expect(replayed > 100, "\(replayed) replayed")
    #expect(damaged > 0, "\(damaged) damaged")
  }

  /// The recording's own settings (format, rates, baud, warm-up) are Plumb's metadata in its
  /// header: a damaged value there is named, not replaced by defaults that would give other
  /// frames than the live run's, and never a trap.
  @Test(arguments: [
    ("\"baudRate\": 115200", "\"baudRate\": 0"),
    ("\"baudRate\": 115200", "\"baudRate\": 9223372036854775807"),
    ("\"outputRateHz\": 100", "\"outputRateHz\": 0"),
    ("\"format\": \"binary\"", "\"format\": \"morse\""),
  ])
  func damagedRecordedSettingsAreNamed(original: String, damaged: String) throws {
    let directory = try temporaryDirectory()
    let live = try liveRecording(
      board: "Boards/simulated.json", seconds: 1, in: directory, extra: ["--format", "binary"])
    let reader = try PlumbRawReader(contentsOf: live)
    var header = reader.header
    #expect(header.metadataJSON.contains(original), "\(header.metadataJSON)")
    header.metadataJSON = header.metadataJSON.replacingOccurrences(of: original, with: damaged)
    let path = directory.appendingPathComponent("damaged.plumbraw").path
    let writer = try PlumbRawWriter(creating: path, header: header)
    for record in reader.records() { try writer.append(record) }
    try writer.close()
    let replay = try runPlumbWithin(60, ["run", "--replay", path, "--serial", "/dev/null"])
    #expect(replay.status == 65, "\(replay.standardError)")
    let key = String(damaged.split(separator: "\"")[0])
    #expect(
      replay.standardError.contains(path) && replay.standardError.contains(key),
      "\(replay.standardError)")
  }

  /// The estimator-only replay (and the export, and plumb-cal) take samples in time order: a
  /// sample dated ahead of the rest leaves those after it out. They are counted and said, not
  /// dropped silently.
  @Test func samplesLeftOutOfOrderAreSaid() throws {
    let directory = try temporaryDirectory()
    let live = try liveRecording(board: "Boards/simulated.json", seconds: 2, in: directory)
    let damaged = directory.appendingPathComponent("damaged.plumbraw").path
    try redate(live, to: damaged, sample: 100, nanoseconds: 9_000_000_000_000_000_000)
    let estimates = directory.appendingPathComponent("estimates.csv").path
    let replay = try runPlumb(["replay", "--input", damaged, "--output", estimates])
    #expect(replay.status == 0, "\(replay.standardError)")
    #expect(
      replay.standardError.contains("\(damaged): ")
        && replay.standardError.contains("out of order"),
      "\(replay.standardError)")
    let decoded = try PlumbRawDecoder().decode(
      Array(try Data(contentsOf: URL(fileURLWithPath: damaged))), path: damaged)
    #expect(decoded.notes.contains { $0.contains("out of order") }, "\(decoded.notes)")
  }

  /// A recording damaged in the middle (a bad SD card sector): every command that reads it told
  /// the user to "read it with the skip option", which none had. Now each names
  /// `--skip-damaged`, and with it reads past the damage, says what was skipped, and keeps the
  /// samples on either side — the analyses take the hole as a gap.
  @Test func aRecordingDamagedInTheMiddleIsSalvagedWithSkipDamaged() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var board = try String(
      contentsOfFile: "\(repositoryRoot)/Boards/simulated.json", encoding: .utf8)
    board = board.replacingOccurrences(
      of: #""scenario": "handheld""#, with: #""scenario": "long-stillness""#)
    let boardPath = directory.appendingPathComponent("still.json").path
    try board.write(toFile: boardPath, atomically: true, encoding: .utf8)
    let live = try liveRecording(board: boardPath, seconds: 30, in: directory)
    let whole = try PlumbRawReader(contentsOf: live)
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: live)))
    let middle = whole.headerLength + (bytes.count - whole.headerLength) / 2
    for offset in middle..<(middle + 100) { bytes[offset] ^= 0x5A }
    let damaged = directory.appendingPathComponent("damaged.plumbraw").path
    try Data(bytes).write(to: URL(fileURLWithPath: damaged))
    let csv = directory.appendingPathComponent("damaged.csv").path
    let estimates = directory.appendingPathComponent("estimates.csv").path
    let plumbCal = builtExecutable("plumb-cal")
    let commands: [(String, [String])] = [
      (plumbExecutable, ["export", damaged, "--csv", "--output", csv]),
      (plumbExecutable, ["replay", "--input", damaged, "--output", estimates]),
      (plumbExecutable, ["run", "--replay", damaged, "--serial", "/dev/null"]),
      (plumbCal, ["allan", damaged]),
      (plumbCal, ["gyro", damaged]),
    ]
    for (executable, arguments) in commands {
      let refused = try runPlumb(arguments, executable: executable)
      #expect(refused.status == 65, "\(arguments): \(refused.standardError)")
      #expect(
        refused.standardError.contains("damaged in the middle")
          && refused.standardError.contains("--skip-damaged"),
        "\(arguments): \(refused.standardError)")
      #expect(!refused.standardError.contains("the skip option"), "\(refused.standardError)")
      let salvaged = try runPlumb(arguments + ["--skip-damaged"], executable: executable)
      #expect(salvaged.status == 0, "\(arguments): \(salvaged.standardError)")
      #expect(
        salvaged.standardError.contains("skipped") && salvaged.standardError.contains("byte "),
        "\(arguments): \(salvaged.standardError)")
    }
    // The export holds the samples on either side of the damage: all but the few in it.
    let rows = try String(contentsOfFile: csv, encoding: .utf8).split(separator: "\n").count - 1
    #expect(rows < whole.sampleCount && rows > whole.sampleCount - 10, "\(rows) rows")
    // plumb-cal sees the hole as a gap.
    let allan = try runPlumb(["allan", damaged, "--skip-damaged"], executable: plumbCal)
    let report = String(decoding: allan.standardOutput, as: UTF8.self)
    #expect(report.contains("1 gap in the samples"), "\(report)")
  }

  /// A recording, a CSV or a calibration file given as a device that never ends (`/dev/zero`,
  /// through a link named like a recording) was read until memory ran out and the command
  /// crashed; a named pipe that nothing writes to hung it. Now a device is refused naming it,
  /// and such a pipe reads as empty — each in a moment, with a message naming the path.
  @Test func endlessDevicesAndSilentPipesAreRefusedNotReadForEver() throws {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    var paths: [String] = []
    for name in ["zero.plumbraw", "zero.csv", "zero.json"] {
      let link = directory.appendingPathComponent(name).path
      try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/dev/zero")
      paths.append(link)
    }
    let fifo = directory.appendingPathComponent("silent.plumbraw").path
    #expect(mkfifo(fifo, 0o600) == 0)
    let plumbCal = builtExecutable("plumb-cal")
    let out = directory.appendingPathComponent("out.csv").path
    let commands: [(String, [String], String)] = [
      (plumbExecutable, ["export", paths[0], "--csv", "--output", out], paths[0]),
      (plumbExecutable, ["replay", "--input", paths[1], "--output", out], paths[1]),
      (plumbExecutable, ["replay", "--input", paths[0], "--output", out], paths[0]),
      (plumbExecutable, ["run", "--replay", paths[0], "--serial", "/dev/null"], paths[0]),
      (plumbCal, ["allan", paths[0]], paths[0]),
      (plumbCal, ["gyro", paths[1]], paths[1]),
      (plumbCal, ["check", paths[2]], paths[2]),
      (plumbExecutable, ["export", fifo, "--csv", "--output", out], fifo),
      (plumbCal, ["allan", fifo], fifo),
    ]
    for (executable, arguments, path) in commands {
      let started = Date()
      let result = try runPlumb(arguments, executable: executable) { process in
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(20)) {
          if process.isRunning { process.terminate() }
        }
      }
      #expect(Date().timeIntervalSince(started) < 10, "\(arguments): took too long")
      #expect(
        result.status == 65 || result.status == 66, "\(arguments): \(result.standardError)")
      #expect(result.standardError.contains(path), "\(arguments): \(result.standardError)")
      #expect(!result.standardError.contains("Fatal error"), "\(result.standardError)")
    }
  }
}
