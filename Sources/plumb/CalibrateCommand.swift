import Calibration
import CommandLineSupport
import PlumbRuntime

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
    content hash; point the board file's "calibration" key at it. On the simulated board the
    motion follows the instructions by itself, so the procedure runs unattended.
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
  let setup: PlumbSetup
  do {
    setup = try PlumbSetup.load(boardPath: arguments.value("board")!)
  } catch {
    throw CommandFailure(.configuration, "\(error)")
  }
  installStopHandlers()
  let result: AccelerometerCalibrationResult
  do {
    result = try calibrateAccelerometer(
      setup, options: AccelerometerCalibrationOptions(fullMatrix: arguments.flag("full-matrix")),
      instruct: { printError("plumb: " + $0) })
  } catch {
    throw CommandFailure(.unavailable, "\(error)")
  }
  let solution = result.solution
  print("accelerometer calibration (\(solution.correction.form.rawValue)):")
  let o = solution.correction.offset
  let k = solution.correction.scale
  print("  offset (m/s²): x \(o.x)  y \(o.y)  z \(o.z)")
  print("  scale:         x \(k.x)  y \(k.y)  z \(k.z)")
  for (pose, residual) in zip(solution.poses, solution.residuals) {
    print("  \(pose.face): residual \(residual) m/s² (tilt \(pose.tiltDegrees)°)")
  }
  var file: CalibrationFile
  if fileExists(output) {
    do {
      file = try CalibrationFile.load(path: output)
    } catch {
      throw CommandFailure(
        .dataError,
        "\(error) — refusing to overwrite it; give another --output or fix the file")
    }
  } else {
    let identity = result.identity
    file = CalibrationFile(
      sensor: SensorIdentity(
        whoAmI: identity.whoAmI, name: identity.model.name,
        label: arguments.value("label") ?? setup.board.name),
      created: utcTimestamp())
  }
  file.accelerometer = solution.correction
  do {
    try file.write(toPath: output)
  } catch {
    throw CommandFailure(.cannotCreate, "\(error)")
  }
  print("wrote \(output) (calibration id \(file.calibrationIdText))")
  print("point the board file at it: \"calibration\": \"\(output)\"")
}
