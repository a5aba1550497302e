import ByteFormats
import Calibration
import CommandLineSupport
import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

let saveSpec = CommandSpec(
  name: "plumb-cal save",
  abstract: "analyse bench recordings and write (or update) a calibration file",
  discussion: """
    From a still recording: the gyro's static bias with its uncertainty, the Allan noise figures
    of all six axes, and rest-detector thresholds from the unit's own noise. From an optional
    warm-up recording (with temp_c): the gyro bias versus temperature (auto-chosen model). The
    file is signed with its content hash; its calibration id is printed.

    Over an existing calibration file that holds what this command does not write — the
    accelerometer correction (plumb calibrate accel or imu), the gyro matrix (plumb calibrate
    imu), the live section a clean shutdown wrote, a warm-up's temperature fit when no --warm-up
    is given — it refuses (exit 73) and names them, rather than drop them: --update keeps the
    accelerometer and live sections, the gyro matrix and the label (unless --label is given),
    and a given --warm-up fits the temperature again; --replace writes the new file and drops
    them.
    """,
  options: [
    .option("output", value: "FILE.json", help: "the calibration file to write", required: true),
    .option(
      "warm-up", value: "REC",
      help: "a still warm-up recording (.plumbraw or .csv) for bias vs temperature"),
    .option(
      "label", value: "TEXT",
      help: "your label for this unit (default: unlabelled, or the existing file's with --update)"),
    .option(
      "who-am-i", value: "BYTE",
      help: "the chip's WHO_AM_I value (default: a .plumbraw recording's, else 0x68)"),
    .option(
      "name", value: "PART", help: "the part (default: a .plumbraw recording's, else MPU-6050)"),
    .option(
      "created", value: "ISO8601", help: "creation time, UTC (default: now)"),
    .flag(
      "update",
      help:
        "keep the accelerometer and live sections, the gyro matrix and the label of an existing "
        + "FILE.json"),
    .flag("replace", help: "overwrite an existing FILE.json, dropping what this does not write"),
    skipDamagedFlag,
  ],
  positionals: [
    PositionalSpec("REC", help: "a still recording (.plumbraw or .csv), an hour or two")
  ],
  examples: [
    "plumb-cal save still-2h.csv --warm-up warm-up.csv --label 'unit 3' --output unit-3.json"
  ])

let saveCommand = CommandGroup.Subcommand(saveSpec) { arguments in
  let output = arguments.value("output")!
  var givenWhoAmI: UInt8?
  if let whoAmIText = arguments.value("who-am-i") {
    let lower = whoAmIText.lowercased()
    guard
      let value = lower.hasPrefix("0x") ? UInt8(lower.dropFirst(2), radix: 16) : UInt8(lower)
    else {
      throw UsageError(
        "'--who-am-i' must be a byte like 0x68, not '\(whoAmIText)'", spec: saveSpec)
    }
    givenWhoAmI = value
  }
  let created = arguments.value("created") ?? currentUTCTime()
  guard isISO8601UTC(created) else {
    throw UsageError(
      "'--created' must be an ISO 8601 UTC time like 2026-12-02T10:15:00Z, not '\(created)'",
      spec: saveSpec)
  }
  let update = arguments.flag("update")
  let replace = arguments.flag("replace")
  if existingOutput(at: output) == .folder {
    throw CommandFailure(
      .cannotCreate,
      "--output \(output) is a folder: give a calibration file's name, e.g. \(output)/unit.json")
  }
  if update && replace {
    throw UsageError(
      "'--update' keeps what '--replace' drops: give one of them", spec: saveSpec)
  }
  try arguments.refuseOutput(
    "output",
    overwriting: [CommandInput(arguments.positionals[0], "the still recording REC")]
      + (arguments.value("warm-up").map { [CommandInput($0, "the --warm-up recording")] } ?? []))
  let still = try loadRecording(
    arguments.positionals[0], skipDamaged: arguments.flag("skip-damaged"))
  let analysis: AllanAnalysis
  do throws(RecordingError) {
    analysis = try AllanAnalysis.analyze(still)
  } catch {
    throw failure(error)
  }
  if let note = analysis.timing.gapNote {
    printError("plumb-cal: note: \(arguments.positionals[0]): \(note)")
  }
  let chip = try recordedChip(still, given: givenWhoAmI, name: arguments.value("name"))
  let biases = GyroBias.estimate(still, allan: analysis)
  var fit: BiasTemperatureFit?
  if let warmUpPath = arguments.value("warm-up") {
    let warmUp = try loadRecording(warmUpPath, skipDamaged: arguments.flag("skip-damaged"))
    if let other = warmUp.chip, let recorded = still.chip, other.whoAmI != recorded.whoAmI {
      throw CommandFailure(
        .dataError,
        "\(warmUpPath) was recorded from a \(other.name) (WHO_AM_I \(hexByte(other.whoAmI))), "
          + "\(arguments.positionals[0]) from a \(recorded.name) (\(hexByte(recorded.whoAmI))): "
          + "give both recordings of the same unit")
    }
    let timing: SampleTiming
    do throws(RecordingError) {
      timing = try SampleTiming.measure(warmUp)
    } catch {
      throw failure(error)
    }
    if let note = timing.gapNote { printError("plumb-cal: note: \(warmUpPath): \(note)") }
    do throws(TemperatureFitError) {
      fit = try BiasTemperatureFit.fit(warmUp, timing: timing)
    } catch {
      throw CommandFailure(.dataError, "\(warmUpPath): \(error)")
    }
  }
  // What an existing file holds that this would not write: refused unless told.
  var existing: CalibrationFile?
  // Only a file can hold a calibration to keep: a device or a pipe (/dev/stdout) is written to.
  if existingOutput(at: output) == .file && !replace {
    do throws(CalibrationFileError) {
      existing = try CalibrationFile.load(path: output, verifyingHash: false)
    } catch {
      throw calibrationFailure(error)
    }
  }
  if let existing, !update {
    var kept: [String] = []
    if existing.accelerometer != nil {
      kept.append("an accelerometer correction (plumb calibrate accel)")
    }
    if existing.live != nil { kept.append("a live bias (written at a clean shutdown)") }
    if existing.gyroscope?.matrix != nil {
      kept.append("a gyro scale-and-misalignment matrix (plumb calibrate imu)")
    }
    if let range = existing.gyroscope?.temperatureRangeCelsius, fit == nil {
      kept.append(
        "a gyro temperature fit over \(range.lowerBound)…\(range.upperBound) °C (give the "
          + "warm-up recording with --warm-up to fit it again)")
    }
    if !kept.isEmpty {
      throw CommandFailure(
        .cannotCreate,
        "\(output) already holds \(kept.joined(separator: ", ")), which this would drop: "
          + "--update keeps the accelerometer and live sections and the gyro matrix, --replace "
          + "drops them")
    }
  }
  if let existing, update, let range = existing.gyroscope?.temperatureRangeCelsius, fit == nil {
    throw CommandFailure(
      .cannotCreate,
      "\(output) has a gyro temperature fit over \(range.lowerBound)…\(range.upperBound) °C, "
        + "which this would drop: give the warm-up recording with --warm-up to fit it again, "
        + "or --replace")
  }
  let stillTemperature = still.temperatureCelsius.map { $0.reduce(0, +) / Double($0.count) }
  var file = CalibrationFile(
    sensor: SensorIdentity(
      whoAmI: chip.whoAmI, name: chip.name,
      label: arguments.value("label") ?? (update ? existing?.sensor.label : nil)
        ?? "unlabelled"),
    created: created,
    gyroscope: GyroCalibration(
      staticBias: biases, stillTemperatureCelsius: stillTemperature, temperatureFit: fit),
    noise: NoiseFigures(analysis),
    restDetector: RestDetectorThresholds.derive(from: still, timing: analysis.timing))
  if update {
    guard let existing else {
      throw CommandFailure(
        .noInput, "\(output): no calibration file to update (leave out --update to create it)")
    }
    file.accelerometer = existing.accelerometer
    file.live = existing.live
    file.gyroscope?.matrix = existing.gyroscope?.matrix
  }
  do throws(CalibrationFileError) {
    try file.write(toPath: output)
  } catch {
    throw calibrationFailure(error)
  }
  print("\(output): written; calibration id \(file.calibrationIdText)")
}

/// Now, ISO 8601 UTC, to the second (the tool may read the wall clock; the library does not).
func currentUTCTime() -> String {
  var now = time(nil)
  var parts = tm()
  gmtime_r(&now, &parts)
  func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
  return
    "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
}

/// The part the calibration is for: a `.plumbraw` recording's header says which answered
/// (start-up's identification); a CSV does not, and then `--who-am-i` and `--name` say, by
/// default an MPU-6050 (0x68). A `--who-am-i` that contradicts the header is refused: the
/// recording, or the option, is of another part.
func recordedChip(_ recording: InertialRecording, given: UInt8?, name: String?)
  throws(CommandFailure) -> RecordedChip
{
  guard let recorded = recording.chip else {
    return RecordedChip(whoAmI: given ?? 0x68, name: name ?? "MPU-6050")
  }
  if let given, given != recorded.whoAmI {
    throw CommandFailure(
      .dataError,
      "\(recording.source) was recorded from a \(recorded.name) (WHO_AM_I "
        + "\(hexByte(recorded.whoAmI))), not --who-am-i \(hexByte(given)): leave --who-am-i out to "
        + "take the recording's, or give a recording of this part")
  }
  return RecordedChip(whoAmI: recorded.whoAmI, name: name ?? recorded.name)
}
