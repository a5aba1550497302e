import AttitudeEstimation
import ByteFormats
import Calibration
import CommandLineSupport
import Firmware
import Geometry
import Glibc
import PlumbRuntime
import Recording

/// `plumb replay --input IN.csv --output OUT.csv`: the attitude estimator over a recording.
///
/// Exit status (sysexits.h): 0 done; 64 usage error; 65 the input is malformed (the message
/// names the line and the problem); 66 the input cannot be read; 73 the output cannot be
/// created. The output is written to a temporary file beside it and renamed into place only
/// when every line succeeded, so a failed replay never leaves a partial output file.
struct ReplayCommand {
  static let spec = CommandSpec(
    name: "plumb replay",
    abstract: "run the attitude estimator over a recording (.plumbraw or CSV)",
    discussion: """
      Runs Plumb's attitude estimator, with its default settings, over a recording and writes
      one line of estimates per sample.

      INPUT: a .plumbraw recording (`plumb record`; read with its recorded scale and mounting,
      so the estimator sees body axes as the firmware did), or a CSV file whose header starts
          t_s,gyr_x,gyr_y,gyr_z,acc_x,acc_y,acc_z
      (more columns may follow and are ignored, except an eighth named temp_c, the die
      temperature in °C), then one sample per line: time in seconds, strictly increasing, at
      any rate (the interval comes from t_s); angular rate in rad/s; specific force in m/s²
      (about +9.8 on the up axis at rest); body axes. Lines end with LF or CRLF; a UTF-8
      byte-order mark may precede the header.

      OUTPUT: a CSV file with the header
          \(ReplayFormat.outputHeader)
      and exactly one line per input line: t_s copied verbatim; the attitude quaternion (w, x,
      y, z), mapping body vectors into the reference frame (z up, x = the heading at start;
      without a magnetometer the heading is relative and drifts slowly); gravity's direction in
      the body; linear acceleration (m/s²); bias-corrected rate (rad/s); gyro bias and its 1σ
      uncertainty (rad/s); rest (1/0); the estimator's flags (bits: 0 initialising, 1 at rest,
      2 acceleration rejected, 3 recovering, 4 gap, 5 clipped input, 6 time rejected,
      7 impossible input, 8 rest started, 9 bias limited, 10 heading uncertain); samples missed
      before this one. A sample no sensor gives (a rate and force beyond 10⁴ together: a unit or a column
      gone wrong) is refused and its line repeats the attitude before it (bit 7): said on
      standard error with the first one's line, and when every sample is refused, exit 65. The attitude is the estimator's own: each
      rate is integrated over the interval before its sample, as that interval's mean, so it
      holds half a period after t_s, less (for chip data) the low-pass filter's delay; `plumb
      run` frames carry it to their sample time (FORMATS.md, Time).

      --calibration CAL.json applies a calibration file as the firmware does: each reading is
      taken as the chip's own (sensor axes: a .plumbraw's always are; a CSV's then must be),
      corrected — the accelerometer's offset and matrix, the gyro's bias model at the sample's
      temp_c (its reference value without one) and its matrix — then turned by the recording's
      mounting (identity for a CSV); the estimator starts from the file's bias, noise and rest
      figures. The content hash is checked, as the firmware checks it.

      The output is written beside OUT.csv and renamed into place only when every line
      succeeded: a malformed line (named, with the problem) leaves no partial file.
      Exit status: 0 done, 64 usage, 65 malformed input, 66 unreadable input, 73 output not
      creatable.
      """,
    options: [
      .option(
        "input", value: "IN",
        help: "the recording to read: a .plumbraw file (plumb record) or a CSV (IN.csv)",
        required: true),
      .option(
        "output", value: "OUT.csv", help: "where to write the estimates (replaced only on success)",
        required: true),
      .flag(
        "skip-damaged",
        help: "read past damage in the middle of a .plumbraw input (the samples around it; a gap)"),
      .option(
        "calibration", value: "CAL.json",
        help:
          "apply a calibration file as the firmware does: the readings are the chip's (sensor "
          + "axes), corrected and then mounted"),
    ],
    examples: [
      "gzip -dc 01_undisturbed_slow_rotation_A.csv.gz > trial.csv",
      "plumb replay --input trial.csv --output trial-estimates.csv",
      "plumb replay --input bench.plumbraw --calibration unit-3.json --output estimates.csv",
    ])

  static let subcommand = CommandGroup.Subcommand(spec) { arguments in
    let input = arguments.value("input") ?? ""
    let output = arguments.value("output") ?? ""
    try arguments.refuseOutput("output", overwriting: [CommandInput(input, "the --input file")])
    let skipDamaged = arguments.flag("skip-damaged")
    if skipDamaged && !input.hasSuffix(".plumbraw") {
      throw UsageError(
        "--skip-damaged reads past damage in a .plumbraw recording; \(input) is read as CSV, "
          + "where a malformed line is named instead",
        spec: spec)
    }
    var calibration: CalibrationFile?
    if let path = arguments.value("calibration") {
      do throws(CalibrationFileError) {
        calibration = try CalibrationFile.load(path: path)
      } catch {
        if case .unreadable = error { throw CommandFailure(.noInput, "\(error)") }
        throw CommandFailure(.dataError, "\(error)")
      }
    }
    _ = try ReplayCommand(
      inputPath: input, outputPath: output, skipDamaged: skipDamaged, calibration: calibration
    ).run()
  }

  var inputPath: String
  var outputPath: String
  /// `--skip-damaged`: read past damage in the middle of a .plumbraw input.
  var skipDamaged = false
  /// `--calibration`: applied as the firmware applies it (`FirmwareSettings.apply`): the
  /// sample correction (accelerometer, gyro bias model and matrix) before the mounting, and the
  /// estimator's bias seed, noise figures and rest thresholds.
  var calibration: CalibrationFile?

  /// Replays; returns the number of samples.
  func run() throws(CommandFailure) -> Int {
    var text: String
    var mounting = Matrix3.identity
    if inputPath.hasSuffix(".plumbraw") {
      (text, mounting) = try Self.rawRecordingAsCSV(inputPath, skipDamaged: skipDamaged)
    } else {
      do {
        text = try readTextFile(inputPath)
      } catch {
        throw CommandFailure(
          .noInput,
          "cannot read \(inputPath): "
            + (error.code == ENODEV
              ? "it is a device, not a file: give a recording file (.csv or .plumbraw)"
              : String(cString: strerror(error.code))))
      }
    }
    var settings = AttitudeEstimator.Settings.default
    var correction: SampleCorrection?
    if let calibration {
      var firmware = FirmwareSettings()
      firmware.apply(calibration: calibration, mounting: mounting)
      settings = firmware.estimator
      correction = firmware.correction
    }
    settings.sampleClock.nominalPeriodSeconds = nil  // the rate comes from t_s
    var estimator = AttitudeEstimator(settings: settings)

    let output: AtomicFile
    do {
      output = try AtomicFile(path: outputPath)
    } catch {
      throw cannotWrite(error)
    }

    var buffer = ReplayFormat.outputHeader + "\n"
    var count = 0
    var lineNumber = 0
    var previous: Int64?
    var hasTemperature = false
    var writeFailure: AtomicFile.Failure?
    var impossible = 0
    var firstImpossibleLine = 0
    do throws(ReplayFormat.InputError) {
      let lines = ReplayFormat.lines(text)
      if lines.allSatisfy({ $0.trimmingCharacters().isEmpty }) {
        throw ReplayFormat.InputError(
          line: 1,
          message:
            "the file is empty: it needs the header \(ReplayFormat.inputColumns.joined(separator: ","))[,temp_c] and a line per sample"
        )
      }
      for line in lines {
        lineNumber += 1
        if lineNumber == 1 {
          hasTemperature = try ReplayFormat.checkHeader(line)
          continue
        }
        if line.trimmingCharacters().isEmpty { continue }
        var (timeText, nanoseconds, sample) = try ReplayFormat.parse(
          line, number: lineNumber, temperature: hasTemperature)
        if let correction {
          sample.angularRateRadiansPerSecond = correction.angularRate(
            sensor: sample.angularRateRadiansPerSecond,
            temperatureCelsius: sample.temperatureCelsius)
          sample.specificForceMetersPerSecondSquared = correction.specificForce(
            sensor: sample.specificForceMetersPerSecondSquared)
        } else if mounting != .identity {
          sample.angularRateRadiansPerSecond = mounting * sample.angularRateRadiansPerSecond
          sample.specificForceMetersPerSecondSquared =
            mounting * sample.specificForceMetersPerSecondSquared
        }
        if let p = previous, nanoseconds <= p {
          throw ReplayFormat.InputError(
            line: lineNumber,
            message:
              "t_s \(timeText) does not increase (the previous sample was at \(Double(p) * 1e-9) s)"
          )
        }
        previous = nanoseconds
        let estimate = estimator.update(sample)
        if estimate.flags.contains(.invalidInput) {
          if impossible == 0 { firstImpossibleLine = lineNumber }
          impossible += 1
        }
        buffer += ReplayFormat.format(timeText: timeText, estimate)
        buffer += "\n"
        count += 1
        if buffer.utf8.count > 1 << 20 {
          do {
            try output.write(buffer)
          } catch {
            writeFailure = error
            break
          }
          buffer = ""
        }
      }
    } catch {
      throw CommandFailure(.dataError, "\(inputPath): \(error.description)")
    }
    if impossible > 0 {
      let what =
        "\(impossible == count ? "all \(count)" : "\(impossible) of \(count)") samples "
        + "(the first at line \(firstImpossibleLine)) hold a rate and force no sensor gives "
        + "(beyond 10⁴ together): refused by the estimator, their lines repeat the attitude "
        + "before them (flag bit 7); check the columns' units: rad/s and m/s²"
      if impossible == count { throw CommandFailure(.dataError, "\(inputPath): \(what)") }
      printError("plumb: warning: \(inputPath): \(what)")
    }
    if let writeFailure { throw cannotWrite(writeFailure) }
    do {
      try output.write(buffer)
      try output.commit()
    } catch {
      throw cannotWrite(error)
    }
    return count
  }

  /// The output could not be written, naming it and what to do: EX_IOERR (74) when its device
  /// could not take it (a full disk), EX_CANTCREAT (73) when the path is wrong. Nothing partial
  /// is left at `outputPath`.
  func cannotWrite(_ error: AtomicFile.Failure) -> CommandFailure {
    let code = ExitCode(outputErrno: error.errno.rawValue)
    let advice =
      code == .ioError
      ? "; free space on that device, or write elsewhere"
      : error.errno.rawValue == ENXIO ? "" : "; check the folder exists and can be written to"
    return CommandFailure(
      code,
      "cannot write \(outputPath): \(error.message)\(advice) (nothing was written to "
        + "\(outputPath))")
  }

  /// A .plumbraw recording in the CSV layout (through `exportCSV`, the one conversion of recorded
  /// counts), and its mounting rotation.
  static func rawRecordingAsCSV(_ path: String, skipDamaged: Bool) throws(CommandFailure) -> (
    String, Matrix3
  ) {
    let reader = try openRecording(path, skipDamaged: skipDamaged)
    let (text, selection) = exportCSVText(reader: reader)
    if let note = selection.outOfOrderNote { printError("plumb: warning: \(path): \(note)") }
    let m = reader.header.mounting
    let mounting = Matrix3(
      rows: Vector3(m.row0.x, m.row0.y, m.row0.z), Vector3(m.row1.x, m.row1.y, m.row1.z),
      Vector3(m.row2.x, m.row2.y, m.row2.z))
    return (text, mounting)
  }
}
