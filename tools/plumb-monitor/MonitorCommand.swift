import CommandLineSupport
import HardwareAbstraction
import LinuxHardware
import Monitoring
import Synchronization
import Telemetry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

let monitorSpec = CommandSpec(
  name: "plumb-monitor",
  abstract: "decode a Plumb telemetry stream and report frames and link statistics",
  discussion: """
    INPUT is a serial device (/dev/ttyUSB0, /dev/serial0, /dev/serial/by-id/…, a
    pseudo-terminal), a recorded stream file, a pipe, or - for standard input. Any of Plumb's
    formats is detected (binary, text, MAVLink v2), or named with --format. Damaged bytes are
    skipped and counted; frames are checked (CRC or checksum) and followed by sequence number.

    Statistics: frames, frames lost to sequence gaps, CRC errors, resyncs, bytes skipped,
    latency min/mean/p99/max (from each frame's own edge-to-write field), and the frame rate
    measured from the frames' sample times.

    --json frames carry every field their format has (FORMATS.md): sequence, sample time,
    roll/pitch/yaw and the attitude quaternion; flags, temperature, missed samples and latency
    (binary, text); calibration id, gyro-bias estimate (body, rad/s) and linear acceleration
    (reference frame, m/s²) (binary).

    The run ends at the end of a file, after --count frames or --duration seconds, on Ctrl-C
    (SIGINT), SIGTERM, SIGQUIT or a hang-up (SIGHUP), with the statistics, or, with --send and
    none of those, once the replies are in.

    Exit status: 0 done; 1 an expectation (--expect-frames, --expect-rate) was not met or a
    command was refused or unanswered; 64 usage error; 65 no Plumb stream in the input;
    66 the input is missing, unreadable or not a terminal; 69 the device is busy; 74 an I/O
    error, or the device disconnected (without --reopen).
    """,
  options: [
    .option(
      "baud", value: "RATE",
      help: "serial speed (8N1): 9600, 19200, 38400, 57600, 115200, 230400, 460800 or 921600",
      default: "115200"),
    .option(
      "format", value: "FORMAT", help: "binary, text, mavlink, or auto to detect it",
      default: "auto"),
    .flag("quiet", help: "no frame lines: statistics, replies and notices only"),
    .flag("json", help: "one JSON object per line (frames, replies, statistics, notices, result)"),
    .option("count", value: "N", help: "stop after N telemetry frames"),
    .option(
      "duration", value: "SECONDS", help: "stop after this long (wall time, CLOCK_MONOTONIC)"),
    .option(
      "stats-every", value: "SECONDS", help: "print statistics every this much sample time"),
    .option(
      "expect-frames", value: "N", help: "exit 1 unless at least N telemetry frames arrive"),
    .option(
      "expect-rate", value: "HZ",
      help: "exit 1 unless the frame rate (from sample times) is within --rate-tolerance of HZ"),
    .option(
      "rate-tolerance", value: "PERCENT", help: "tolerance of --expect-rate", default: "2"),
    .option(
      "send", value: "LINE",
      help: "send a host command (status, tare, version, format F, rate HZ) and print the reply; "
        + "may be repeated", repeating: true),
    .flag(
      "reopen",
      help: "when the serial device is not there yet or disappears, wait for it and carry on"),
    .option(
      "web", value: "[ADDR:]PORT",
      help: "also serve a live page (3D attitude, plots, flags, link) at http://ADDR:PORT/; "
        + "ADDR 127.0.0.1 (this machine only) unless given, e.g. --web 8080"),
    .flag(
      "web-commands",
      help: "with --web: the page gets buttons that send host commands (tare, status, format, "
        + "rate) to the board"),
  ],
  positionals: [
    PositionalSpec(
      "INPUT", help: "serial device, pseudo-terminal, recorded stream file, or - for stdin")
  ],
  examples: [
    "plumb-monitor /dev/ttyUSB0",
    "plumb-monitor /dev/serial/by-id/usb-FTDI_FT232R_USB_UART_A10K1ABC-if00-port0 --reopen",
    "plumb-monitor /dev/serial0 --baud 921600 --quiet --stats-every 10",
    "plumb-monitor /dev/ttyUSB0 --send status",
    "plumb-monitor capture.bin --quiet --expect-frames 6000 --expect-rate 100",
    "plumb run --board Boards/simulated.json --duration 5 | plumb-monitor - --json",
    "plumb-monitor /dev/ttyUSB0 --web 8080",
    "plumb-monitor /dev/serial0 --reopen --web 0.0.0.0:8080 --web-commands",
  ])

/// The command line, validated.
struct MonitorCommandLine {
  var input: String
  var baudRate: Int?
  var style: MonitorPrinter.Style
  var options: MonitorOptions
  /// `--web`, `--web-commands`.
  var web: MonitorWebOptions?
}

/// The longest host command line (FORMATS.md §7: 64 bytes before the line end).
let maximumCommandBytes = 64

/// Checks every option before anything is opened; errors name the option.
func parseMonitorCommandLine(_ arguments: ParsedArguments) throws(UsageError)
  -> MonitorCommandLine
{
  let spec = arguments.spec
  if arguments.flag("quiet") && arguments.flag("json") {
    throw UsageError("--quiet and --json cannot be combined (--json is for scripts)", spec: spec)
  }
  let baudRate = try arguments.integer("baud")
  if let baudRate, !TermiosSerialPort.supportedBaudRates.contains(baudRate) {
    let rates = TermiosSerialPort.supportedBaudRates.map(String.init).joined(separator: ", ")
    throw UsageError("'--baud' must be one of \(rates), not \(baudRate)", spec: spec)
  }
  let formatName =
    try arguments.choice("format", from: TelemetryFormat.allCases.map(\.rawValue) + ["auto"])
    ?? "auto"
  var options = MonitorOptions(format: TelemetryFormat(rawValue: formatName))
  options.frameLimit = try arguments.integer("count", in: 1...Int.max).map(UInt64.init)
  options.durationNanoseconds = try arguments.double("duration", in: 0.001...31_536_000)
    .map(nanoseconds)
  options.statisticsIntervalNanoseconds = try arguments.double(
    "stats-every", in: 0.001...31_536_000
  ).map(nanoseconds)
  options.expectedFrames = try arguments.integer("expect-frames", in: 1...Int.max)
    .map(UInt64.init)
  options.expectedRateHz = try arguments.double("expect-rate", in: 0.001...1_000_000)
  options.rateTolerance = (try arguments.double("rate-tolerance", in: 0...100) ?? 2) / 100
  for line in arguments.values("send") {
    let bytes = Array(line.utf8)
    guard !bytes.isEmpty, bytes.count <= maximumCommandBytes else {
      throw UsageError(
        "'--send' needs a command of 1 to \(maximumCommandBytes) bytes, e.g. --send status",
        spec: spec)
    }
    guard bytes.allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 }) else {
      throw UsageError(
        "'--send \(line)': commands are printable ASCII on one line", spec: spec)
    }
    // The board ignores a blank line and would never answer it.
    guard bytes.contains(where: { $0 != 0x20 && $0 != 0x09 }) else {
      throw UsageError(
        "'--send' needs a command, not only spaces: status, tare, version, format F or rate HZ",
        spec: spec)
    }
  }
  options.commands = arguments.values("send")
  options.reopen = arguments.flag("reopen")
  let style: MonitorPrinter.Style =
    arguments.flag("json") ? .json : arguments.flag("quiet") ? .quiet : .frames
  return MonitorCommandLine(
    input: arguments.positionals[0], baudRate: baudRate, style: style, options: options,
    web: try parseWebOptions(arguments))
}

/// Seconds to whole nanoseconds (the ranges above keep it far from overflow).
func nanoseconds(_ seconds: Double) -> Int64 { Int64((seconds * 1e9).rounded()) }

/// Opens the input; a serial device with `TermiosSerialPort` (raw 8N1 at `baudRate`).
func openMonitorInput(_ command: MonitorCommandLine) throws(CommandFailure) -> MonitorInput {
  let input: MonitorInput
  do throws(MonitorError) {
    input = try openPath(command)
  } catch {
    throw CommandFailure(exitCode(for: error), error.description)
  }
  return try checked(input, command)
}

func openPath(_ command: MonitorCommandLine) throws(MonitorError) -> MonitorInput {
  try MonitorInput.open(path: command.input, baudRate: command.baudRate) {
    (path, baudRate) throws(SerialError) -> any SerialPort in
    try TermiosSerialPort(path: path, baudRate: baudRate)
  }
}

/// What only a serial device can do (send commands, reopen) refused on anything else.
func checked(_ input: MonitorInput, _ command: MonitorCommandLine) throws(CommandFailure)
  -> MonitorInput
{
  if input.kind != .serialDevice {
    if !command.options.commands.isEmpty {
      throw CommandFailure(.usage, MonitorError.cannotSend(input: input.name).description)
    }
    if command.options.reopen {
      throw CommandFailure(
        .usage, "--reopen waits for a serial device to come back, but \(input.name) is not one")
    }
    if command.web?.configuration.commandsEnabled == true {
      throw CommandFailure(
        .usage,
        "--web-commands sends host commands to a serial device, but \(input.name) is not one: "
          + "leave it out to watch the page")
    }
  }
  return input
}

/// With `--reopen`, a device that is not there yet is waited for, as after a disconnect: a USB
/// adapter plugged in after the monitor started, a `plumb-hil --monitor-link` run that has not
/// made its pseudo-terminal yet. One notice on standard error, then a look every
/// `intervalNanoseconds` until it appears or `shouldStop()` (SIGINT/SIGTERM: the missing device's
/// error and exit status). Without `--reopen`, a missing device is the error at once.
func openMonitorInputWaiting(
  _ command: MonitorCommandLine, intervalNanoseconds: Int64 = 200_000_000,
  shouldStop: () -> Bool
) throws(CommandFailure) -> MonitorInput {
  let clock = LinuxMonotonicClock()
  var announced = false
  while true {
    let input: MonitorInput
    do throws(MonitorError) {
      input = try openPath(command)
    } catch {
      guard case .inputMissing = error, command.options.reopen, !shouldStop() else {
        throw CommandFailure(exitCode(for: error), error.description)
      }
      if !announced {
        printError("plumb-monitor: waiting for \(command.input) to appear (--reopen)")
        announced = true
      }
      clock.sleep(until: clock.now().advanced(byNanoseconds: intervalNanoseconds))
      continue
    }
    return try checked(input, command)
  }
}

/// Runs the session and prints through `write`; throws the failure that sets the exit status.
func runMonitor<Clock: MonotonicClock>(
  _ command: MonitorCommandLine, input: MonitorInput, clock: inout Clock, web: MonitorWeb? = nil,
  shouldStop: () -> Bool, write: (MonitorLine) -> Void
) throws(CommandFailure) {
  let printer = MonitorPrinter(style: command.style, inputName: input.name)
  if command.baudRate != nil && input.kind != .serialDevice && command.style != .json {
    write(
      MonitorLine(
        "plumb-monitor: --baud ignored: \(input.name) is not a serial device", isDiagnostic: true))
  }
  let hub = web?.hub
  let result = MonitorSession.run(
    input, options: command.options, clock: &clock, shouldStop: shouldStop, live: web?.hooks()
  ) { event in
    hub?.publish(event)
    for line in printer.lines(for: event) { write(line) }
  }
  input.close()
  for line in printer.lines(for: result) { write(line) }
  if case .failed(let error) = result.ending {
    throw CommandFailure(exitCode(for: error), error.description)
  }
  if !result.failures.isEmpty {
    throw CommandFailure(
      .failure, result.failures.map(\.description).joined(separator: "; "))
  }
}

/// The sysexits status for an input failure.
func exitCode(for error: MonitorError) -> ExitCode {
  switch error {
  case .inputMissing, .permissionDenied, .notATerminal, .isADirectory, .unsupportedInput:
    return .noInput
  case .serial(let serial):
    switch serial.kind {
    case .busy: return .unavailable
    case .unsupportedBaudRate: return .usage
    case .deviceMissing, .permissionDenied, .notATerminal: return .noInput
    default: return .ioError
    }
  case .readFailed, .disconnected: return .ioError
  case .cannotSend: return .usage
  case .notAPlumbStream, .emptyInput: return .dataError
  }
}

/// Set by SIGINT, SIGTERM, SIGHUP (the terminal closed) and SIGQUIT (Ctrl-\); the session
/// checks it every iteration and ends cleanly, with the statistics.
let stopRequested = Atomic<Bool>(false)

/// Installs the handlers, and unblocks the signals: a process inherits its parent's signal
/// mask, and launchers that spawn from thread pools start children with them blocked, which
/// would leave a `kill -INT` pending for ever.
func installStopHandlers() {
  var unblock = sigset_t()
  sigemptyset(&unblock)
  for number in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
    _ = signal(number) { _ in stopRequested.store(true, ordering: .relaxed) }
    sigaddset(&unblock, number)
  }
  sigprocmask(SIG_UNBLOCK, &unblock, nil)
}

/// The whole command: parse, open, run, print; returns the exit status.
func plumbMonitor(_ arguments: [String]) -> Int32 {
  runCommand(arguments, spec: monitorSpec) { parsed in
    let command = try parseMonitorCommandLine(parsed)
    installStopHandlers()
    let web = try command.web.map { options throws(CommandFailure) in
      try MonitorWeb.start(options, input: command.input)
    }
    if let web { printError(web.announcement()) }
    defer { if let web { printError(web.finish()) } }
    let input = try openMonitorInputWaiting(command) {
      stopRequested.load(ordering: .relaxed)
    }
    var clock = LinuxMonotonicClock()
    do {
      try runMonitor(
        command, input: input, clock: &clock, web: web,
        shouldStop: {
          stopRequested.load(ordering: .relaxed)
            || standardOutputErrno.load(ordering: .relaxed) != 0
        }
      ) { line in
        if line.isDiagnostic { printError(line.text) } else { printLine(line.text) }
      }
    } catch {
      try checkStandardOutput()
      throw error
    }
    try checkStandardOutput()
  }
}

/// The errno of the first write to standard output that failed (0 while none has): the lines
/// are the monitor's output, and a run whose output is lost (a full disk) ends there, with 74.
let standardOutputErrno = Atomic<Int32>(0)

/// Fails the command when standard output could not be written.
func checkStandardOutput() throws(CommandFailure) {
  let code = standardOutputErrno.load(ordering: .relaxed)
  guard code != 0 else { return }
  throw CommandFailure(
    .ioError,
    "cannot write to standard output: \(String(cString: strerror(code)).lowercased()); the "
      + "monitor stopped there (free space where its output goes, or send it elsewhere)")
}

/// Writes `text` and a newline to standard output at once (one `write(2)` per line, so
/// `plumb-monitor … --json | consumer` sees every line as it happens, whatever stdio buffers).
/// A failed write is kept in `standardOutputErrno`, and nothing more is written.
func printLine(_ text: String) {
  guard standardOutputErrno.load(ordering: .relaxed) == 0 else { return }
  var bytes = Array((text + "\n").utf8)[...]
  while !bytes.isEmpty {
    let written = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    if written < 0 && errno == EINTR { continue }
    guard written > 0 else {
      standardOutputErrno.store(written < 0 ? errno : EIO, ordering: .relaxed)
      return
    }
    bytes = bytes.dropFirst(written)
  }
}
