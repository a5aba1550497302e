import Calibration
import CommandLineSupport
import Geometry
import TestSupport
import Testing

@testable import plumb_cal

#if canImport(Glibc)
  import Glibc
#endif

/// `plumb-cal` end to end, through its command group: exit statuses and the files it writes.
@Suite struct PlumbCalCommandTests {
  let group = CommandGroup(
    name: "plumb-cal", abstract: "test",
    subcommands: [allanCommand, gyroCommand, saveCommand, signCommand, checkCommand])

  func temporaryPath(_ name: String) -> String { "/tmp/plumb-cal-test-\(getpid())-\(name)" }

  func writeCSV(_ recording: InertialRecording, to path: String) {
    var text = "t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z,temp_c\n"
    for i in 0..<recording.count {
      text += "\(recording.timeSeconds[i])"
      for axis in InertialAxis.allCases { text += ",\(recording.samples(axis)[i])" }
      text += ",\(recording.temperatureCelsius![i])\n"
    }
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
  }

  func read(_ path: String) -> String {
    let fd = open(path, O_RDONLY)
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
      let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if n <= 0 { break }
      bytes += chunk[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  @Test func exitStatusesFollowSysexits() {
    #expect(group.run([]) == 64)
    #expect(group.run(["allan"]) == 64)
    #expect(group.run(["allan", "x.csv", "--axes", "gyros"]) == 64)
    #expect(group.run(["allan", "/nonexistent/still.csv"]) == 66)
    #expect(group.run(["allan", "/nonexistent/still.plumbraw"]) == 66)
    #expect(group.run(["check", "/nonexistent/unit.json"]) == 66)
  }

  /// Issue 21: `plumb-cal allan` on a CSV whose gyro axis was exactly constant, or held 1e308,
  /// trapped (SIGILL, "Unexpectedly found nil"). Every command that analyses the recording now
  /// refuses it as bad data (65), the table and the plot included; nothing is written.
  @Test(arguments: [0.001, 1e308])
  func anAxisWithoutNoiseIsBadDataNotACrash(value: Double) {
    var recording = StillSensorSimulation.seed000.record(sampleCount: 1500, seed: 5)
    recording.channels[InertialAxis.gyroX.rawValue] = (0..<recording.count).map {
      value == 1e308 && $0.isMultiple(of: 2) ? -value : value
    }
    let csv = temporaryPath("stuck-\(value).csv")
    let plot = temporaryPath("stuck-\(value).svg")
    let calibration = temporaryPath("stuck-\(value).json")
    defer {
      for path in [csv, plot, calibration] { unlink(path) }
    }
    writeCSV(recording, to: csv)
    for arguments in [
      ["allan", csv], ["allan", csv, "--table"], ["allan", csv, "--axes", "gyro", "--plot", plot],
      ["gyro", csv], ["save", csv, "--output", calibration],
    ] {
      #expect(group.run(arguments) == 65, "\(arguments)")
    }
    #expect(access(plot, F_OK) != 0 && access(calibration, F_OK) != 0)
    #expect(group.run(["allan", csv, "--axes", "accel"]) == 0)
  }

  /// plumb-cal reads `plumb record`'s .plumbraw files as well as CSV: its help says so where
  /// it takes a recording.
  @Test func helpNamesThePlumbRawFormatWhereARecordingIsTaken() {
    for (spec, line) in [
      (allanSpec, "  REC"), (gyroSpec, "  REC"), (saveSpec, "  REC"), (saveSpec, "  --warm-up REC"),
    ] {
      let lines = spec.help.split(separator: "\n").filter { $0.hasPrefix(line + " ") }
      #expect(lines.count == 1, "\(spec.name): \(spec.help)")
      #expect(lines.allSatisfy { $0.contains(".plumbraw") }, "\(spec.name): \(lines)")
    }
  }

  /// A plot or calibration file written over the recording it is made from would destroy the
  /// recording: refused (64) before anything is written, the recording untouched.
  @Test func anOutputNamingTheInputRecordingIsRefused() {
    let recording = StillSensorSimulation.seed000.record(sampleCount: 600, seed: 5)
    let csv = temporaryPath("input.csv")
    let warmUp = temporaryPath("warm-up.csv")
    let link = temporaryPath("link.csv")
    defer {
      for path in [csv, warmUp, link] { unlink(path) }
    }
    writeCSV(recording, to: csv)
    writeCSV(recording, to: warmUp)
    symlink(csv, link)
    let original = read(csv)
    for arguments in [
      ["allan", csv, "--plot", csv], ["allan", csv, "--plot", link], ["gyro", csv, "--plot", csv],
      ["save", csv, "--output", csv], ["save", csv, "--warm-up", warmUp, "--output", warmUp],
    ] {
      #expect(group.run(arguments) == 64, "\(arguments)")
      #expect(read(csv) == original, "\(arguments)")
    }
    #expect(read(warmUp) == original)
  }

  /// A board file given to plumb-cal check or sign is named as one (65), not reported as a
  /// calibration file with unknown keys.
  @Test func aBoardFileGivenAsACalibrationFileIsNamedAsOne() throws {
    let board = temporaryPath("board.json")
    defer { unlink(board) }
    let text = #"{"schema": 1, "name": "b", "i2c": {"bus": "/dev/i2c-1", "address": 104}}"#
    let fd = open(board, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    #expect(group.run(["check", board]) == 65)
    #expect(group.run(["sign", board]) == 65)
    #expect(read(board) == text)
    #expect {
      _ = try CalibrationFile.load(path: board)
    } throws: { error in
      "\(error)".contains("\(board) is a board file, not a calibration file: give it with --board")
    }
  }

  /// A file signed with Plumb's SHA-256 of before 2026-12-05 (`LegacyContentHashTests`): check
  /// accepts it with its id, and sign re-signs it with the standard hash (its id changes).
  @Test func signGivesAnOldDigestsFileTheStandardHash() throws {
    let path = temporaryPath("legacy.json")
    defer { unlink(path) }
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    _ = Array(LegacyContentHashTests.signedBeforeTheFix.utf8).withUnsafeBytes {
      write(fd, $0.baseAddress, $0.count)
    }
    close(fd)
    #expect(group.run(["check", path]) == 0)
    #expect(try CalibrationFile.load(path: path).calibrationIdText == "0xc03adf6a")
    #expect(group.run(["sign", path]) == 0)
    let resigned = try CalibrationFile.load(path: path)
    #expect(resigned.contentHashAlgorithm == .sha256)
    #expect(resigned.calibrationIdText == "0x71db8265")
    #expect(group.run(["check", path]) == 0)
  }

  /// A calibration file reached through a symbolic link (`current.json` → `unit-3.json`) is
  /// replaced where the link points; the link stays a link.
  @Test func saveWritesThroughASymbolicLink() throws {
    let csv = temporaryPath("linked-still.csv")
    let target = temporaryPath("unit-3.json")
    let link = temporaryPath("current.json")
    defer {
      for path in [csv, target, link] { unlink(path) }
    }
    var simulation = StillSensorSimulation.seed000
    simulation.startTemperatureCelsius = 25
    simulation.finalTemperatureCelsius = 25
    writeCSV(simulation.record(sampleCount: 3000, seed: 12), to: csv)
    #expect(group.run(["save", csv, "--output", target, "--created", "2026-12-02T10:00:00Z"]) == 0)
    symlink(target, link)
    #expect(
      group.run([
        "save", csv, "--output", link, "--label", "relabelled", "--created", "2026-12-02T11:00:00Z",
      ]) == 0)
    var status = stat()
    #expect(lstat(link, &status) == 0 && (status.st_mode & S_IFMT) == S_IFLNK)
    #expect(try CalibrationFile.load(path: target).sensor.label == "relabelled")
  }

  /// `plumb-cal save` over a calibration file that holds what it does not write — the
  /// accelerometer correction of six turned poses, the live bias, a warm-up's temperature fit —
  /// silently dropped it all (and the label). It now refuses (exit 73, the file untouched)
  /// unless told: --update keeps those sections (and the label), --replace drops them.
  @Test func saveDoesNotDropWhatItDoesNotWrite() throws {
    let csv = temporaryPath("keep-still.csv")
    let json = temporaryPath("keep-unit.json")
    defer {
      for path in [csv, json] { unlink(path) }
    }
    var simulation = StillSensorSimulation.seed000
    simulation.startTemperatureCelsius = 25
    simulation.finalTemperatureCelsius = 25
    writeCSV(simulation.record(sampleCount: 3000, seed: 14), to: csv)
    #expect(
      group.run([
        "save", csv, "--output", json, "--label", "unit 7", "--created", "2026-12-02T10:00:00Z",
      ]) == 0)
    var file = try CalibrationFile.load(path: json)
    file.accelerometer = AccelerometerCorrection(
      offset: Vector3(0.1, -0.2, 0.05), scale: Vector3(1.01, 0.99, 1.0))
    try file.write(toPath: json)
    let before = read(json)

    #expect(group.run(["save", csv, "--output", json, "--created", "2026-12-03T10:00:00Z"]) == 73)
    #expect(read(json) == before)

    #expect(
      group.run(["save", csv, "--output", json, "--update", "--created", "2026-12-03T10:00:00Z"])
        == 0)
    let updated = try CalibrationFile.load(path: json)
    #expect(updated.accelerometer == file.accelerometer)
    #expect(updated.sensor.label == "unit 7")

    #expect(
      group.run(["save", csv, "--output", json, "--replace", "--created", "2026-12-03T11:00:00Z"])
        == 0)
    let replaced = try CalibrationFile.load(path: json)
    #expect(replaced.accelerometer == nil && replaced.sensor.label == "unlabelled")
    #expect(group.run(["save", csv, "--output", json, "--update", "--replace"]) == 64)
  }

  /// The gyro matrix of `plumb calibrate imu` lives in the gyroscope section, which save
  /// rewrites: save must neither drop it silently nor without --update keep it.
  @Test func saveKeepsTheGyroMatrixOnlyWithUpdate() throws {
    let csv = temporaryPath("matrix-still.csv")
    let json = temporaryPath("matrix-unit.json")
    defer {
      for path in [csv, json] { unlink(path) }
    }
    var simulation = StillSensorSimulation.seed000
    simulation.startTemperatureCelsius = 25
    simulation.finalTemperatureCelsius = 25
    writeCSV(simulation.record(sampleCount: 3000, seed: 15), to: csv)
    #expect(group.run(["save", csv, "--output", json, "--created", "2026-12-02T10:00:00Z"]) == 0)
    var file = try CalibrationFile.load(path: json)
    let matrix = Matrix3(
      rows: Vector3(0.98, 0.01, 0), Vector3(-0.004, 1.01, 0.002), Vector3(0, 0.006, 0.99))
    file.gyroscope?.matrix = matrix
    try file.write(toPath: json)
    let before = read(json)
    #expect(group.run(["save", csv, "--output", json, "--created", "2026-12-03T10:00:00Z"]) == 73)
    #expect(read(json) == before)
    #expect(
      group.run(["save", csv, "--output", json, "--update", "--created", "2026-12-03T10:00:00Z"])
        == 0)
    #expect(try CalibrationFile.load(path: json).gyroscope?.matrix == matrix)
    #expect(
      group.run(["save", csv, "--output", json, "--replace", "--created", "2026-12-03T11:00:00Z"])
        == 0)
    #expect(try CalibrationFile.load(path: json).gyroscope?.matrix == nil)
  }

  @Test func allanPlotsAndTablesAndSaveWritesACheckableFile() throws {
    var simulation = StillSensorSimulation.seed000
    simulation.startTemperatureCelsius = 25
    simulation.finalTemperatureCelsius = 25
    let recording = simulation.record(sampleCount: 3000, seed: 12)
    let csv = temporaryPath("still.csv")
    let svg = temporaryPath("allan.svg")
    let json = temporaryPath("unit.json")
    defer {
      for path in [csv, svg, json] { unlink(path) }
    }
    writeCSV(recording, to: csv)
    #expect(group.run(["allan", csv, "--plot", svg, "--axes", "gyro"]) == 0)
    let plot = read(svg)
    #expect(plot.hasPrefix("<svg"))
    #expect(plot.contains("Gyroscope: overlapping Allan deviation"))
    #expect(!plot.contains("Accelerometer"))
    #expect(plot.contains("slope −½"))

    let analysis = try AllanAnalysis.analyze(recording)
    let table = allanTable(analysis).split(separator: "\n")
    #expect(table.first == "tau_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z")
    #expect(table.count == analysis.tauSeconds.count + 1)
    #expect(table[1].hasPrefix("0.01,"))
    #expect(table[1].split(separator: ",").count == 7)

    #expect(
      group.run([
        "save", csv, "--output", json, "--label", "test unit", "--created", "2026-12-02T10:00:00Z",
      ]) == 0)
    let file = try CalibrationFile.load(path: json)
    #expect(file.sensor.label == "test unit")
    #expect(file.noise?.gyroscope != nil && file.restDetector != nil)
    #expect(group.run(["check", json]) == 0)
    // Same inputs, same bytes.
    let first = read(json)
    #expect(
      group.run([
        "save", csv, "--output", json, "--label", "test unit", "--created", "2026-12-02T10:00:00Z",
      ]) == 0)
    #expect(read(json) == first)
    #expect(group.run(["save", csv, "--output", json, "--created", "yesterday"]) == 64)
  }

  /// A bench recording of a real chip, whose oscillator is 0.7 % fast: the decades table shows
  /// the points nearest 0.01, 0.1 and 1 s with the τ they have, and N is read (it used to say
  /// "not reached" on every axis, and `save` wrote no noise figures).
  @Test func aChipThatIsNotExactly100HzStillGetsItsNoiseReadOff() throws {
    var simulation = StillSensorSimulation.seed000
    simulation.samplePeriodSeconds = 0.0099305
    let recording = simulation.record(sampleCount: 30_000, seed: 3)
    let analysis = try AllanAnalysis.analyze(recording)
    let report = allanReport(
      analysis, source: recording.source,
      thresholds: RestDetectorThresholds.derive(from: recording, timing: analysis.timing),
      sensors: [.gyroscope, .accelerometer])
    for tau in ["τ = 0.0099305 s", "τ = 0.099305 s", "τ = 1.003 s", "τ = 10 s"] {
      #expect(report.contains(tau), "\(tau) missing from:\n\(report)")
    }
    #expect(!report.contains("angle random walk N         rad/√s      not reached"), "\(report)")
    let csv = temporaryPath("off-rate.csv")
    let json = temporaryPath("off-rate.json")
    defer {
      for path in [csv, json] { unlink(path) }
    }
    writeCSV(recording, to: csv)
    #expect(
      group.run(["save", csv, "--output", json, "--created", "2026-12-04T08:00:00Z"]) == 0)
    let file = try CalibrationFile.load(path: json)
    #expect(file.noise?.gyroscope?.randomWalk.allSatisfy { $0 != nil } == true)
  }

  /// A bench recording that lost samples (a missed edge, a bus lock-up) is analysed, not
  /// refused: `plumb-cal allan`, `gyro` and `save` exited 65 for one missing sample and told the
  /// user to cut the file, which no command does. Now the report says where the gaps are and
  /// the figures are those of the whole recording.
  @Test func aRecordingWithGapsIsAnalysedAndTheGapsAreSaid() throws {
    var simulation = StillSensorSimulation.seed000
    simulation.samplePeriodSeconds = 0.0099305
    let whole = simulation.record(sampleCount: 30_000, seed: 5)
    var kept = Array(0..<whole.count)
    kept.removeSubrange(20_000..<20_173)  // a 1.7 s bus lock-up
    kept.remove(at: 7000)  // a missed edge
    let gappy = InertialRecording(
      source: "gappy.csv", timeSeconds: kept.map { whole.timeSeconds[$0] },
      channels: whole.channels.map { column in kept.map { column[$0] } },
      temperatureCelsius: whole.temperatureCelsius.map { column in kept.map { column[$0] } })
    let csv = temporaryPath("gappy.csv")
    let json = temporaryPath("gappy.json")
    defer {
      for path in [csv, json] { unlink(path) }
    }
    writeCSV(gappy, to: csv)
    #expect(group.run(["allan", csv]) == 0)
    #expect(group.run(["gyro", csv]) == 0)
    #expect(group.run(["save", csv, "--output", json, "--created", "2026-12-04T10:00:00Z"]) == 0)
    let analysis = try AllanAnalysis.analyze(gappy)
    let report = allanReport(
      analysis, source: gappy.source,
      thresholds: RestDetectorThresholds.derive(from: gappy, timing: analysis.timing),
      sensors: [.gyroscope])
    #expect(
      report.contains("2 gaps in the samples (174 samples missing, 0.6 % of the span"),
      "\(report)")
    #expect(report.contains("the first before sample 7001, the longest 1.728 s"), "\(report)")
    let file = try CalibrationFile.load(path: json)
    let reference = try AllanAnalysis.analyze(whole)
    for axis in InertialSensor.gyroscope.axes {
      let n = try #require(file.noise?.gyroscope?.randomWalk[axis.component])
      let expected = try #require(reference.readOffs[axis]?.randomWalk)
      #expect(abs(n - expected) / expected < 0.01, "\(axis): N \(n) against \(expected)")
    }
  }
}

/// `plumb-cal allan --html` and `plumb-cal gyro --html` (issue 26): the text report's figures
/// as tables on one self-contained page with the plot inline.
@Suite struct PlumbCalHTMLTests {
  let group = CommandGroup(
    name: "plumb-cal", abstract: "test", subcommands: [allanCommand, gyroCommand])
  let files = PlumbCalCommandTests()

  /// The figures of a text report's tables: the value cells (the last `count` words) of every
  /// indented line whose last word is a number.
  func figures(_ report: String, count: Int = 3) -> [String] {
    report.split(separator: "\n").filter { $0.hasPrefix("  ") }.flatMap { line -> [String] in
      let words = line.split(separator: " ").map(String.init)
      guard words.count > count,
        Double(words.last!.filter { $0 != "+" }) != nil
      else { return [] }
      return Array(words.suffix(count))
    }
  }

  @Test func allanWritesItsFiguresAndPlotOnOnePage() throws {
    let recording = StillSensorSimulation.seed000.record(sampleCount: 3000, seed: 12)
    // A hostile file name: shown as text, never as markup.
    let csv = files.temporaryPath("<script>alert(1).csv")
    let html = files.temporaryPath("allan.html")
    let again = files.temporaryPath("allan-again.html")
    defer {
      for path in [csv, html, again] { unlink(path) }
    }
    files.writeCSV(recording, to: csv)
    #expect(group.run(["allan", csv, "--html", html]) == 0)
    #expect(group.run(["allan", csv, "--html", again]) == 0)
    let page = files.read(html)
    #expect(page == files.read(again))
    #expect(HTMLCheck.problems(page) == [])
    #expect(!page.contains("<script>"))
    #expect(page.contains("&lt;script&gt;alert(1).csv"))
    #expect(page.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""))
    #expect(page.contains("Gyroscope: overlapping Allan deviation"))
    // Every figure of the text report's tables is a cell of the page.
    let analysis = try AllanAnalysis.analyze(recording)
    let text = allanReport(
      analysis, source: csv,
      thresholds: RestDetectorThresholds.derive(from: recording, timing: analysis.timing),
      sensors: [.gyroscope, .accelerometer])
    let cells = HTMLCheck.cells(page)
    let expected = figures(text)
    #expect(expected.count >= 3 * 2 * 6)
    for figure in expected { #expect(cells.contains(figure), "\(figure)") }
    #expect(page.contains("angle random walk N"))
    #expect(page.contains("bias instability B"))
    #expect(page.contains("rate random walk K"))
    #expect(page.contains("minimum σ at τ"))
  }

  @Test func gyroWritesTheTemperatureFitOnOnePage() throws {
    var simulation = StillSensorSimulation.seed000
    simulation.startTemperatureCelsius = 22
    simulation.finalTemperatureCelsius = 42
    let recording = simulation.record(sampleCount: 20_000, seed: 4)
    let csv = files.temporaryPath("warm-up.csv")
    let html = files.temporaryPath("gyro.html")
    defer {
      for path in [csv, html] { unlink(path) }
    }
    files.writeCSV(recording, to: csv)
    #expect(group.run(["gyro", csv, "--html", html]) == 0)
    let page = files.read(html)
    #expect(HTMLCheck.problems(page) == [])
    #expect(page.contains("Bias versus temperature"))
    #expect(page.split(separator: "<svg xmlns=").count == 2)
    // The static bias and the fits: three figures per row, numbers but for the chosen model.
    let cells = HTMLCheck.cells(page)
    #expect(cells.count == 3 * 15)
    #expect(cells.suffix(6).prefix(3).allSatisfy { ["linear", "quadratic"].contains($0) })
    #expect(cells.dropLast(6).allSatisfy { Double($0) != nil }, "\(cells)")
    for row in ["bias (rad/s)", "standard error (rad/s)", "linear c1 (rad/s/°C)", "chosen"] {
      #expect(page.contains("<th scope=\"row\">\(row)</th>"), "\(row)")
    }
  }

  /// An output that cannot be written fails as --plot does (the same status, the path named).
  @Test func anUnwritablePageFailsAsAPlotDoes() {
    let recording = StillSensorSimulation.seed000.record(sampleCount: 1500, seed: 5)
    let csv = files.temporaryPath("unwritable.csv")
    defer { unlink(csv) }
    files.writeCSV(recording, to: csv)
    let plot = group.run(["allan", csv, "--plot", "/nonexistent/folder/allan.svg"])
    #expect(plot != 0)
    #expect(group.run(["allan", csv, "--html", "/nonexistent/folder/allan.html"]) == plot)
    #expect(group.run(["gyro", csv, "--html", "/nonexistent/folder/gyro.html"]) == plot)
    #expect(group.run(["allan", csv, "--html", csv]) == 64)
  }
}
