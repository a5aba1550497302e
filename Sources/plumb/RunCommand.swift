import CommandLineSupport
import Firmware
import LinuxHardware
import PlumbRuntime
import Telemetry

let runSpec = CommandSpec(
  name: "plumb run",
  abstract: "run the firmware: read the IMU, estimate attitude, stream frames",
  discussion: """
    With Boards/simulated.json the real driver and loop run on a simulated MPU-6050 moving
    through a scripted motion: in real time by default, as fast as possible with --fast (a
    real-time run suspended for over a second, Ctrl-Z then fg, meets the gap a board would: the
    samples of that time are missed, counted and flagged).
    Frames go to the board's serial device, or to --serial PATH (a tty or pty in raw mode, a
    file, or a named pipe whose reader is already running: `mkfifo f; plumb-monitor f &`; a
    full pipe drops frames, counted, and never stalls the loop). On a terminal, binary frames are shown as text. SIGINT, SIGTERM,
    SIGQUIT and SIGHUP (the terminal closed) finish the frame, flush, close, write the learnt gyro bias
    back to the board's calibration file and exit 0; so does standard output's reader going
    away (`plumb run … | head`). Exit status: 64 usage, 69 hardware missing or not answering
    (the sensor, its data-ready line, the serial device), 73 an output that cannot be created,
    74 an output that failed while written (a full disk: frames to a file stop the run there, the
    file ending with its last whole frame; a --record stops and the frames go on),
    78 the board or calibration file (the message names the key); with --replay, 66 a
    recording that cannot be read and 65 one that does not replay. Host commands (tare, format,
    rate, status, version, set, calibrate gyro) are read from the serial line (from standard input
    when writing to a terminal).
    In MAVLink, Plumb is a component ground stations talk to (FORMATS.md "MAVLink v2"): it
    answers commands, parameters (`plumb params` lists them) and file requests; --mavlink-udp
    sends the stream over UDP as well (--serial none: only there). Parameters changed while
    running are kept in the state folder: --state-dir, or $STATE_DIRECTORY (systemd), or
    /var/lib/plumb on a real board when it exists.
    """,
  options: [
    .option("board", value: "FILE", help: "the board file (see Boards/README.md)"),
    .option(
      "serial", value: "PATH",
      help: "write frames here instead of the board's device (none: nowhere, with --mavlink-udp)"),
    .option(
      "format", value: "FORMAT", help: "binary, binary-imu, text or mavlink (default: the board's)"),
    .option("duration", value: "SECONDS", help: "stop after this much sample time"),
    .flag("fast", help: "simulated board: run on the manual clock as fast as possible"),
    .option(
      "record", value: "REC", help: "also record the raw samples to the file REC (.plumbraw format)"
    ),
    .option(
      "replay", value: "REC",
      help:
        "replay a .plumbraw recording (plumb record, --record) through the driver and loop "
        + "instead of a board (as fast as possible)"),
    .flag(
      "overwrite",
      help:
        "with --record: replace REC if it exists and is a recording (or empty); refused otherwise"),
    .flag("realtime", help: "with --replay: at the recording's own pace, not as fast as possible"),
    .flag(
      "skip-damaged",
      help: "with --replay: read past damage in the middle of the recording (said; a gap)"),
    .option(
      "mavlink-udp", value: "HOST:PORT",
      help:
        "MAVLink over UDP as well: to HOST:PORT (a ground station listening there), or "
        + "listen:[ADDR:]PORT (to whoever sends there); commands are answered on it"),
    .option(
      "state-dir", value: "DIR",
      help: "keep parameters changed while running in DIR/parameters.json (default: see above)"),
  ],
  examples: [
    "plumb run --board Boards/simulated.json",
    "plumb run --board Boards/simulated.json --fast --duration 60 --format binary --serial out.bin",
    "plumb run --board /etc/plumb/board.json",
    "plumb run --replay capture.plumbraw --serial replayed.bin",
    "plumb run --replay capture.plumbraw --realtime --serial /dev/ttyUSB0",
    "plumb run --board Boards/simulated.json --serial none --mavlink-udp 127.0.0.1:14550",
  ])

func runCommand(_ arguments: ParsedArguments) throws {
  var format = try arguments.choice("format", from: TelemetryFormat.allCases.map(\.rawValue))
    .flatMap(TelemetryFormat.init(rawValue:))
  var udp: UDPEndpointSpec?
  if let text = arguments.value("mavlink-udp") {
    do {
      udp = try UDPEndpointSpec.parse(text)
    } catch {
      throw UsageError(error.description, spec: runSpec)
    }
    if arguments.value("replay") != nil {
      throw UsageError(
        "--mavlink-udp is for a board; a --replay writes its frames to --serial", spec: runSpec)
    }
    // The UDP link carries the MAVLink stream: the serial line then carries it too.
    if let format, format != .mavlink {
      throw UsageError(
        "--mavlink-udp sends the MAVLink stream, and --format \(format.rawValue) asks for another; "
          + "drop --format (or give --format mavlink)", spec: runSpec)
    }
    format = .mavlink
  }
  let serialPath = arguments.value("serial").map { $0 == "none" ? "/dev/null" : $0 }
  let duration = try arguments.double("duration", in: 0.01...31_536_000)
  if let replay = arguments.value("replay") {
    if arguments.value("board") != nil || arguments.value("record") != nil || duration != nil {
      throw UsageError(
        "--replay takes its board, settings and length from the recording; drop --board, --record and --duration",
        spec: runSpec)
    }
    try arguments.refuseOutput(
      "serial", overwriting: [CommandInput(replay, "the --replay recording")])
    installStopHandlers()
    var options = RunOptions(serialPath: serialPath, log: { printError($0) })
    options.realTime = arguments.flag("realtime")
    options.skipDamaged = arguments.flag("skip-damaged")
    let summary: RunSummary
    do {
      summary = try replayRecording(path: replay, format: format, options: options)
    } catch {
      switch error {
      case .framesStopped(let summary):
        printError(summary.description)
        throw CommandFailure(exitCode(for: error), error.description)
      case .replayInput, .framesFile, .serial:
        throw CommandFailure(exitCode(for: error), error.description)
      default:
        // What the recording holds does not replay (its calibration, its start-up).
        throw CommandFailure(.dataError, error.description)
      }
    }
    printError(summary.description)
    if let damage = summary.damage { throw CommandFailure(.dataError, damage) }
    return
  }
  guard let boardPath = arguments.value("board") else {
    throw UsageError("missing '--board FILE' (or '--replay REC')", spec: runSpec)
  }
  if arguments.flag("realtime") {
    throw UsageError(
      "--realtime paces a --replay; a board runs in real time already (--fast for the simulated one as fast as possible)",
      spec: runSpec)
  }
  let setup: PlumbSetup
  do {
    setup = try PlumbSetup.load(boardPath: boardPath, format: format)
  } catch {
    throw CommandFailure(.configuration, error.description)
  }
  try refuseFastOnARealBoard(arguments, setup: setup)
  if arguments.value("serial") == "none", udp == nil, setup.mavlinkUDP == nil {
    throw UsageError(
      "--serial none sends the frames nowhere; give --mavlink-udp as well (or mavlink.udp in the board file)",
      spec: runSpec)
  }
  let inputs = boardInputs(setup)
  try arguments.refuseOutput("record", overwriting: inputs)
  try arguments.refuseOutput(
    "serial",
    overwriting: inputs
      + (arguments.value("record").map { [CommandInput($0, "the --record file")] } ?? []))
  if let record = arguments.value("record") {
    try checkRecordingOutput(record, option: "--record", overwrite: arguments.flag("overwrite"))
  } else if arguments.flag("overwrite") {
    throw UsageError("--overwrite replaces an existing --record file; there is none", spec: runSpec)
  }
  installStopHandlers()
  var options = RunOptions(
    serialPath: serialPath, durationSeconds: duration,
    fast: arguments.flag("fast"), recordPath: arguments.value("record"), log: { printError($0) })
  options.overwriteRecording = arguments.flag("overwrite")
  options.mavlinkUDP = udp ?? setup.mavlinkUDP
  options.stateFolder = arguments.value("state-dir")
  do {
    let summary = try runPlumb(setup, options: options)
    printError(summary.description)
    if let record = options.recordPath { printError(summary.recordedLine(path: record)) }
  } catch {
    switch error {
    case .recordingStopped(_, let summary), .framesStopped(let summary):
      printError(summary.description)
    default: break
    }
    throw CommandFailure(exitCode(for: error), error.description)
  }
}

/// The files a run reads before it writes: the board file and the calibration file it names
/// (outputs must not name them).
func boardInputs(_ setup: PlumbSetup) -> [CommandInput] {
  [CommandInput(setup.boardPath, "the board file")]
    + (setup.board.calibrationPath.map { [CommandInput($0, "the board's calibration file")] } ?? [])
}

/// The exit status of a failed `plumb run` or `plumb record` (sysexits.h).
func exitCode(for error: RunError) -> ExitCode {
  switch error {
  case .setup, .simulation, .start(.invalidSettings): .configuration
  case .recording, .framesFile: .cannotCreate
  // A full disk is 74 from the first byte on, as for every output; a path that cannot take the
  // file is 73.
  case .recordingNotStarted(let error):
    error.errno.map { ExitCode(outputErrno: $0.rawValue) } ?? .cannotCreate
  case .recordingStopped, .framesStopped: .ioError
  case .replayInput(let input): input.kind == .unreadable ? .noInput : .dataError
  default: .unavailable
  }
}

/// `--fast` (`plumb run`, `plumb record`) runs the simulated board on its manual clock; a real
/// chip keeps its own time, so on a real board the flag would be silently ignored.
func refuseFastOnARealBoard(_ arguments: ParsedArguments, setup: PlumbSetup) throws(UsageError) {
  guard arguments.flag("fast"), !setup.board.isSimulated else { return }
  throw UsageError(
    "--fast runs the simulated board on its manual clock, faster than real time; "
      + "\(setup.board.name) (\(setup.boardPath)) is a real board, which runs at the chip's "
      + "own pace: drop --fast",
    spec: arguments.spec)
}
