import Boards
import ByteFormats
import Calibration
import CommandLineSupport
import Geometry
import MPU6050
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
  abstract: "guided calibration: accelerometer (six positions) or whole IMU (poses and turns)",
  discussion: """
    plumb calibrate imu --board FILE: one session of still poses and hand turns calibrates both
    sensors (Tedaldi, Pretto & Menegatti, ICRA 2014). Put the board down anywhere and hold it
    still; then turn it by hand about the axis asked for (any angle from 30° to 180°, that axis
    level), put it down, hold still 2 s, and so on, until each body axis has --turns-per-axis
    turns (13 poses or so, 2–3 minutes). Each step is checked as it happens — a pose too short,
    a pose that moved, a turn too small or about the vertical, a turn about another axis than
    asked, samples lost or the gyro clipping — and said with what to do. Then the accelerometer's
    offset and symmetric scale-and-misalignment matrix are fitted to |a| = g over the poses, and
    the gyro's 3×3 matrix (scale and misalignment, in the accelerometer's axes) to the turns:
    each turn's integrated rotation must carry one pose's gravity onto the next's. Prints both,
    their standard errors, the residuals and a verdict (good, usable, poor: poor is not
    written). The file gets the accelerometer section and the gyroscope's matrix (schema 2); an
    existing gyroscope bias model (plumb-cal save, with its temperature fit) is kept, else the
    session's bias is written. --plot draws the residuals per pose; --html writes the figures,
    the residuals and that plot on one self-contained page. --recording REC runs the
    same session over a recording of one (plumb record while following the instructions, e.g.
    on a board with no terminal at hand): the same checks and messages, then the fit; the board
    file still names the axes (its mounting) and the unit.

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
    .flag("full-matrix", help: "accel: solve the full 3×3 matrix (needs carefully level poses)"),
    .option(
      "turns-per-axis", value: "N", help: "imu: turns about each body axis (3–20)", default: "4"),
    .option("hold", value: "SECONDS", help: "imu: how long each pose is held still", default: "2"),
    .option(
      "gravity", value: "M/S²",
      help:
        "imu: the local g the accelerometer is scaled to (9.78 at the equator, 9.83 at the poles)",
      default: "9.80665"),
    .option("plot", value: "FILE.svg", help: "imu: write the residuals per pose"),
    .option(
      "html", value: "FILE.html",
      help: "imu: write the solution, the residuals and their plot as one self-contained page"),
    .option(
      "recording", value: "REC",
      help:
        "imu: run the session over a recording of one (.plumbraw from plumb record, or the CSV "
        + "layout in the chip's axes) instead of the board"),
  ],
  positionals: [
    PositionalSpec("SENSOR", help: "imu (gyro and accelerometer together) or accel (six positions)")
  ],
  examples: [
    "plumb calibrate imu --board /etc/plumb/board.json --output /etc/plumb/calibration/unit1.json",
    "plumb calibrate imu --board Boards/simulated.json --output sim-cal.json --plot residuals.svg",
    "plumb calibrate imu --board Boards/simulated.json --output sim-cal.json --html imu.html",
    "plumb calibrate imu --board /etc/plumb/board.json --recording session.plumbraw --output unit1.json",
    "plumb calibrate accel --board /etc/plumb/board.json --output /etc/plumb/calibration/unit1.json",
    "plumb calibrate accel --board Boards/simulated.json --output sim-cal.json",
  ])

func calibrateCommand(_ arguments: ParsedArguments) throws {
  let sensor = arguments.positionals[0]
  guard sensor == "accel" || sensor == "imu" else {
    throw UsageError(
      "'\(sensor)' cannot be calibrated this way: use imu (gyro and accelerometer together) or accel (gyro biases alone come from `plumb-cal gyro`)",
      spec: calibrateSpec)
  }
  let output = arguments.value("output")!
  let boardPath = arguments.value("board")!
  let imu = sensor == "imu"
  let turnsPerAxis = try arguments.integer("turns-per-axis", in: 3...20) ?? 4
  let hold = try arguments.double("hold", in: 1...30) ?? 2
  let gravity = try arguments.double("gravity", in: 9.7...9.9) ?? standardGravity
  if !imu,
    let option = ["turns-per-axis", "hold", "gravity", "plot", "html", "recording"].first(where: {
      arguments.value($0) != nil
    })
  {
    throw UsageError("--\(option) is for plumb calibrate imu", spec: calibrateSpec)
  }
  if imu, arguments.flag("full-matrix") {
    throw UsageError(
      "--full-matrix is for plumb calibrate accel (imu always fits the full matrix)",
      spec: calibrateSpec)
  }
  let plot = arguments.value("plot")
  let setup: PlumbSetup
  do {
    setup = try PlumbSetup.load(boardPath: boardPath)
  } catch {
    throw CommandFailure(.configuration, "\(error)")
  }
  let existing = try checkCalibrationOutput(output, boardPath: boardPath)
  for option in ["plot", "html"] {
    try arguments.refuseOutput(
      option,
      overwriting: [
        CommandInput(boardPath, "the board file"), CommandInput(output, "the calibration file"),
      ])
  }
  let recordingPath = arguments.value("recording")
  var recording: InertialRecording?
  if let recordingPath {
    do throws(RecordingError) {
      recording = try RecordingLoader.standard(corruption: .fail).load(path: recordingPath)
    } catch {
      throw CommandFailure(error.kind == .unreadable ? .noInput : .dataError, error.description)
    }
    for note in recording?.notes ?? [] {
      printError("plumb: warning: \(recordingPath): \(note)")
    }
  }
  installStopHandlers()
  var file: CalibrationFile
  let chip: RecordedChip
  if imu {
    var options = IMUCalibrationOptions(gravity: gravity)
    options.session.turnsPerAxis = turnsPerAxis
    options.session.holdSeconds = hold
    let result: IMUCalibrationResult
    do {
      let instruct: (String) -> Void = { printError("plumb: " + $0) }
      if let recording {
        result = try calibrateIMU(
          recording: recording, sensorToBody: setup.board.mounting, options: options,
          instruct: instruct)
      } else {
        result = try calibrateIMU(setup, options: options, instruct: instruct)
      }
    } catch .stopped {
      let signal = stopSignal.load(ordering: .relaxed)
      throw CommandFailure(
        ExitCode(stoppedBy: signal) ?? .interrupted,
        "stopped by \(signalName(signal)) before the session was complete: \(output) was not "
          + "written; run it again to calibrate")
    } catch .solve(let error) {
      throw CommandFailure(.dataError, "\(error) (\(output) was not written)")
    } catch .recordingEnded(let samples, let poses, let counts) {
      throw CommandFailure(
        .dataError,
        "\(recordingPath ?? ""): \(IMUCalibrationRunError.recordingEnded(samples: samples, poses: poses, turnCounts: counts)) (\(output) was not written)"
      )
    } catch {
      throw CommandFailure(.unavailable, "\(error)")
    }
    chip = result.chip
    printIMUSolution(result)
    if let plot {
      try writeText(imuResidualFigure(result, board: setup.board.name).svg(), to: plot)
      print("wrote \(plot)")
    }
    if let html = arguments.value("html") {
      let page = imuCalibrationHTML(
        result, board: setup.board.name, boardPath: boardPath, recordingPath: recordingPath)
      try writeText(page.html(), to: html)
      print("wrote \(html)")
    }
    let (verdict, reason) = result.solution.verdict
    guard verdict != .poor else {
      throw CommandFailure(.dataError, "verdict: poor — \(reason) (\(output) was not written)")
    }
    file = existing ?? newCalibrationFile(chip, arguments: arguments, setup: setup)
    file.accelerometer = result.solution.accelerometer
    let s = result.solution
    if var gyroscope = file.gyroscope {
      gyroscope.matrix = s.gyroMatrix
      file.gyroscope = gyroscope
      print(
        "gyroscope: the file's bias model is kept (a long still recording's); the matrix is added")
    } else {
      file.gyroscope = GyroCalibration(
        biasRadiansPerSecond: s.gyroBias, biasUncertaintyRadiansPerSecond: s.gyroBiasUncertainty,
        referenceTemperatureCelsius: s.temperatureCelsius.isFinite ? s.temperatureCelsius : 25,
        matrix: s.gyroMatrix)
      print(
        "gyroscope: the session's bias is written (no temperature model: plumb-cal gyro on a warm-up adds one)"
      )
    }
  } else {
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
    chip = RecordedChip(whoAmI: result.identity.whoAmI, name: result.identity.model.name)
    printSixPosition(result.solution)
    file = existing ?? newCalibrationFile(chip, arguments: arguments, setup: setup)
    file.accelerometer = result.solution.correction
    if file.gyroscope?.matrix != nil {
      // G maps the gyro into the axes the IMU session's accelerometer matrix defined; another
      // accelerometer correction defines slightly different ones.
      printError(
        "plumb calibrate: warning: \(output) has a gyro matrix from plumb calibrate imu, fitted in "
          + "that session's accelerometer axes; this accelerometer correction replaces them, and "
          + "the two sensors' axes may now differ by a few tenths of a degree: run plumb "
          + "calibrate imu again to calibrate both together")
    }
  }
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

/// The output is checked before the poses, which a person spends minutes on: an existing file
/// must be a calibration file (its sections are replaced, the rest kept, and returned), and a
/// new one must be creatable.
func checkCalibrationOutput(_ output: String, boardPath: String) throws -> CalibrationFile? {
  if sameFile(output, boardPath) {
    throw CommandFailure(
      .usage,
      "--output \(output) is the board file: give the calibration file's path (the board file "
        + "points at it with \"calibration\")")
  }
  switch existingOutput(at: output) {
  case .folder:
    throw CommandFailure(
      .cannotCreate,
      "--output \(output) is a folder: give a calibration file's name, e.g. \(output)/unit.json")
  case .stream:
    return nil  // a device or a pipe (/dev/stdout): written to, nothing to keep
  case .file:
    do {
      return try CalibrationFile.load(path: output)
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
    return nil
  }
}

func newCalibrationFile(_ chip: RecordedChip, arguments: ParsedArguments, setup: PlumbSetup)
  -> CalibrationFile
{
  CalibrationFile(
    sensor: SensorIdentity(
      whoAmI: chip.whoAmI, name: chip.name,
      label: arguments.value("label") ?? setup.board.name),
    created: utcTimestamp())
}

// For people: offsets to 0.1 mm/s², scales to 1 ppm, residuals to 0.1 mm/s², tilts to 0.1°
// (the file keeps every digit).
private func f(_ value: Double, _ digits: Int) -> String { NumberText.fixed(value, digits) }

func printMatrix(_ m: Matrix3, label: String) {
  let pad = String(repeating: " ", count: label.count)
  for (index, row) in [m.row0, m.row1, m.row2].enumerated() {
    print("  \(index == 0 ? label : pad)\(f(row.x, 6))  \(f(row.y, 6))  \(f(row.z, 6))")
  }
}

func printSixPosition(_ solution: SixPositionCalibration) {
  print("accelerometer calibration (\(solution.correction.form.rawValue)):")
  let o = solution.correction.offset
  let k = solution.correction.scale
  print("  offset (m/s²): x \(f(o.x, 4))  y \(f(o.y, 4))  z \(f(o.z, 4))")
  print("  scale:         x \(f(k.x, 6))  y \(f(k.y, 6))  z \(f(k.z, 6))")
  if solution.correction.form == .fullMatrix {
    printMatrix(solution.correction.matrix, label: "matrix:        ")
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
}

func printIMUSolution(_ result: IMUCalibrationResult) {
  let s = result.solution
  let o = s.accelerometer.offset
  let e = s.accelerometerStandardErrors
  print(
    "IMU calibration: \(s.accelerometerResiduals.count) poses, \(s.turnResiduals.count) turns "
      + "(x \(result.turnCounts[0]), y \(result.turnCounts[1]), z \(result.turnCounts[2])), "
      + "sample period \(f(result.samplePeriodSeconds * 1000, 4)) ms")
  print("accelerometer (offset and symmetric matrix, |a| fitted to \(f(s.gravity, 5)) m/s²):")
  print(
    "  offset (m/s²): x \(f(o.x, 4))  y \(f(o.y, 4))  z \(f(o.z, 4))  (± \(f(max(e[6], e[7], e[8]), 4)))"
  )
  printMatrix(s.accelerometer.matrix, label: "matrix:        ")
  print("  matrix entries known to ± \(f(e[0..<6].max() ?? 0, 6))")
  print("gyroscope (rate = G · (reading − bias), in the accelerometer's axes):")
  printMatrix(s.gyroMatrix, label: "G:             ")
  let g = s.gyroMatrix
  let scale = [g.row0.x, g.row1.y, g.row2.z].map { f((1 / $0 - 1) * 100, 3) }
  print(
    "  sensitivity error: x \(scale[0]) %  y \(scale[1]) %  z \(scale[2]) % (G known to ± \(f(s.gyroMatrixUncertainty * 100, 3)) %)"
  )
  let b = s.gyroBias * degreesPerRadian
  print("  bias over the session (°/s): x \(f(b.x, 4))  y \(f(b.y, 4))  z \(f(b.z, 4))")
  for (index, residual) in s.accelerometerResiduals.enumerated() {
    var line = "  pose \(index + 1): |a| − g \(f(residual * 1000, 1)) mm/s²"
    if let turn = s.turnFromPose.firstIndex(of: index - 1) {
      line +=
        "; turn \(f(s.turnAngles[turn] * degreesPerRadian, 1))° before it, off by \(f(s.turnResiduals[turn] * degreesPerRadian, 3))°"
    }
    print(line)
  }
  for refusal in result.refusals { print("  not used: \(refusal)") }
  let (verdict, reason) = s.verdict
  print("verdict: \(verdict.rawValue) — \(reason)")
}

/// The residuals per pose: |corrected a| − g, and the gravity direction each turn predicted
/// at the pose it ended on against the one measured there.
func imuResidualFigure(_ result: IMUCalibrationResult, board: String) -> Figure {
  let s = result.solution
  let poses = (1...max(1, s.accelerometerResiduals.count)).map(Double.init)
  let turnPoses = s.turnFromPose.map { Double($0 + 2) }
  return Figure(
    title: "plumb calibrate imu, \(board): verdict \(s.verdict.verdict.rawValue)",
    charts: [
      Chart(
        title:
          "Accelerometer: |A·(a − o)| − g per pose (RMS \(f(s.accelerometerResidualRMS * 1000, 2)) mm/s²)",
        xAxis: Axis("pose"), yAxis: Axis("residual (mm/s²)"),
        series: [
          Series(
            "poses", x: poses, y: s.accelerometerResiduals.map { $0 * 1000 }, stroke: nil,
            marker: .circle, markerColor: .blue)
        ], legend: nil),
      Chart(
        title:
          "Gyroscope: each turn's predicted gravity against the pose it ended on (RMS \(f(s.turnResidualRMS * degreesPerRadian, 3))°)",
        xAxis: Axis("pose the turn ended on"), yAxis: Axis("residual (°)"),
        series: [
          Series(
            "turns", x: turnPoses, y: s.turnResiduals.map { $0 * degreesPerRadian }, stroke: nil,
            marker: .circle, markerColor: .red)
        ], legend: nil),
    ], chartHeight: 320)
}

/// The working directory, or nil when it cannot be read (removed under the process).
func currentDirectory() -> String? {
  var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
  return buffer.withUnsafeMutableBufferPointer { pointer -> String? in
    guard let base = pointer.baseAddress, getcwd(base, pointer.count) != nil else { return nil }
    return String(cString: base)
  }
}
