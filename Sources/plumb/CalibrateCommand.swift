import Boards
import ByteFormats
import Calibration
import CommandLineSupport
import Plotting
import PlumbRuntime
import Recording

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

let calibrateSpec = CommandSpec(
  name: "plumb calibrate",
  abstract: "guided six-position accelerometer calibration",
  discussion: """
    plumb calibrate accel --board FILE: asks for each face of the board in turn (+z, −z, +x, −x,
    +y, −y up), waits until the board is still on it, averages 2 s, refuses a pose more than 10°
    from axis-aligned or on the wrong face (and says which), then solves the offset and scale of
    each axis (--full-matrix: the full 3×3 scale-and-misalignment matrix) and reports the
    residual of each pose (|corrected| − g). The result goes into the calibration file (created,
    or its accelerometer section replaced: gyro and noise sections are kept), signed with its
    content hash; point the board file's "calibration" key at it (the command prints that line,
    with the path from the board file's folder, which is how the board file reads it; absolute
    when the two share no folder but the root). CAL.json is checked before
    the first pose (an existing file must be a calibration file; a new one must be creatable),
    so no turning of the board is wasted. With --full-matrix a pose more than 1° from level is
    warned about: the matrix takes the tilt for misalignment. On the simulated board the motion
    follows the instructions by itself, so the procedure runs unattended.
    """,
  options: [
    .option("board", value: "FILE", help: "the board file", required: true),
    .option(
      "output", value: "CAL.json", help: "the calibration file to write or update",
      required: true),
    .option("label", value: "TEXT", help: "a name for this unit, kept in the file"),
    .flag("full-matrix", help: "solve the full 3×3 matrix (needs carefully level poses)"),
  ],
  positionals: [PositionalSpec("SENSOR", help: "accel (the only sensor calibrated this way)")],
  examples: [
    "plumb calibrate accel --board /etc/plumb/board.json --output /etc/plumb/calibration/unit1.json",
    "plumb calibrate accel --board Boards/simulated.json --output sim-cal.json",
  ])

func calibrateCommand(_ arguments: ParsedArguments) throws {
  guard arguments.positionals[0] == "accel" else {
    throw UsageError(
      "'\(arguments.positionals[0])' cannot be calibrated this way: use accel (gyro biases come from `plumb-cal gyro`)",
      spec: calibrateSpec)
  }
  let output = arguments.value("output")!
  let boardPath = arguments.value("board")!
  let setup: PlumbSetup
  do {
    setup = try PlumbSetup.load(boardPath: boardPath)
  } catch {
    throw CommandFailure(.configuration, "\(error)")
  }
  // The output is checked before the poses, which a person spends minutes on: an existing file
  // must be a calibration file (its accelerometer section is replaced, the rest kept), and a
  // new one must be creatable.
  if sameFile(output, boardPath) {
    throw CommandFailure(
      .usage,
      "--output \(output) is the board file: give the calibration file's path (the board file "
        + "points at it with \"calibration\")")
  }
  var existing: CalibrationFile?
  switch existingOutput(at: output) {
  case .folder:
    throw CommandFailure(
      .cannotCreate,
      "--output \(output) is a folder: give a calibration file's name, e.g. \(output)/unit.json")
  case .stream:
    break  // a device or a pipe (/dev/stdout): written to, nothing to keep
  case .file:
    do {
      existing = try CalibrationFile.load(path: output)
    } catch {
      throw CommandFailure(
        .dataError,
        "\(error) — refusing to overwrite it; give another --output or fix the file")
    }
  case .nothing:
    do {
      _ = try AtomicFile(path: output)  // created beside the target, removed unused
    } catch {
      throw CommandFailure(
        .cannotCreate,
        "cannot write \(output): \(error.message); check the folder exists and can be written to")
    }
  }
  installStopHandlers()
  let result: AccelerometerCalibrationResult
  do {
    result = try calibrateAccelerometer(
      setup, options: AccelerometerCalibrationOptions(fullMatrix: arguments.flag("full-matrix")),
      instruct: { printError("plumb: " + $0) })
  } catch .stopped {
    // Stopped by a signal: nothing measured is kept, so not the 0 of a finished run.
    let signal = stopSignal.load(ordering: .relaxed)
    throw CommandFailure(
      ExitCode(stoppedBy: signal) ?? .interrupted,
      "stopped by \(signalName(signal)) before all six poses were measured: \(output) was not "
        + "written; run it again to calibrate")
  } catch {
    throw CommandFailure(.unavailable, "\(error)")
  }
  let solution = result.solution
  // For people: offsets to 0.1 mm/s², scales to 1 ppm, residuals to 0.1 mm/s², tilts to 0.1°
  // (the file keeps every digit).
  func f(_ value: Double, _ digits: Int) -> String { NumberText.fixed(value, digits) }
  print("accelerometer calibration (\(solution.correction.form.rawValue)):")
  let o = solution.correction.offset
  let k = solution.correction.scale
  print("  offset (m/s²): x \(f(o.x, 4))  y \(f(o.y, 4))  z \(f(o.z, 4))")
  print("  scale:         x \(f(k.x, 6))  y \(f(k.y, 6))  z \(f(k.z, 6))")
  if solution.correction.form == .fullMatrix {
    let m = solution.correction.matrix
    for (label, row) in [
      ("matrix:        ", m.row0), ("               ", m.row1), ("               ", m.row2),
    ] {
      print("  \(label)\(f(row.x, 6))  \(f(row.y, 6))  \(f(row.z, 6))")
    }
  }
  for (pose, residual) in zip(solution.poses, solution.residuals) {
    print(
      "  \(pose.face): residual \(f(residual * 1000, 1)) mm/s² (tilt \(f(pose.tiltDegrees, 1))°)")
  }
  let worstTilt = solution.poses.map(\.tiltDegrees).max() ?? 0
  if solution.correction.form == .fullMatrix, worstTilt > 1 {
    printError(
      "plumb calibrate: a pose read \(f(worstTilt, 1))° from level: --full-matrix takes a tilted pose "
        + "for misalignment (the residuals above show what it cost); on a level bench with a "
        + "square block every pose reads under 1°, or drop --full-matrix (per axis is not affected)"
    )
  }
  var file: CalibrationFile
  if let existing {
    file = existing
  } else {
    let identity = result.identity
    file = CalibrationFile(
      sensor: SensorIdentity(
        whoAmI: identity.whoAmI, name: identity.model.name,
        label: arguments.value("label") ?? setup.board.name),
      created: utcTimestamp())
  }
  file.accelerometer = solution.correction
  do throws(CalibrationFileError) {
    try file.write(toPath: output)
  } catch {
    if case .unwritable(_, let code) = error {
      throw CommandFailure(ExitCode(outputErrno: code), "\(error) (\(output) was not changed)")
    }
    throw CommandFailure(.dataError, "\(error)")
  }
  print("wrote \(output) (calibration id \(file.calibrationIdText))")
  // The board file reads the path against its own folder, not against this command's.
  let reference =
    currentDirectory().map {
      BoardFile.calibrationReference(to: output, boardPath: boardPath, workingDirectory: $0)
    } ?? output
  print("point the board file at it: \"calibration\": \"\(reference)\"")
}

/// The working directory, or nil when it cannot be read (removed under the process).
func currentDirectory() -> String? {
  var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
  return buffer.withUnsafeMutableBufferPointer { pointer -> String? in
    guard let base = pointer.baseAddress, getcwd(base, pointer.count) != nil else { return nil }
    return String(cString: base)
  }
}
