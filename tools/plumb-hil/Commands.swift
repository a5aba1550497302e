import Boards
import BuildInfo
import ByteFormats
import Calibration
import CommandLineSupport
import Firmware
import HIL
import MPU6050Simulation
import MotionScenarios
import PlumbRuntime
import Telemetry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

let runSpec = CommandSpec(
  name: "plumb-hil run",
  abstract: "play a scenario (with faults) through the real driver and loop, judge the frames",
  discussion: """
    The simulated MPU-6050 moves through SCENARIO (plumb-hil scenarios) with the fault plan
    PLAN applied to the chip, the bus and the data-ready line (plumb-hil faults); the real
    driver and loop run on it, frames go over a simulated 115200-baud UART, and a host decodes
    them and compares every frame with the truth at its sample time (inclination error: the
    angle between the true and estimated gravity directions; heading error: the yaw difference
    after removing the first frame's offset). Every sample the chip produced is reconciled with
    what the host received or the loop counted.

    The run ends with one line on standard output:
      hil: scenario=S faults=F frames=N missed=M silent_losses=K incl_rms_deg=E heading_rms_deg=H

    Ctrl-C (SIGINT), SIGTERM, SIGQUIT or SIGHUP ends the run at the next loop step: the summary line (ending
    " interrupted") and the report ("interrupted": true) cover the run up to there.

    --board FILE plays the scenario against a board file's configuration — the sample rate,
    filter and ranges, the output format, rate and baud rate, and the mounting (the simulated
    chip sits on the body as the file says, and the firmware is told) — instead of the
    firmware's defaults (100 Hz, DLPF 44 Hz, binary at 115200 baud, chip axes = body axes).
    The board's hardware (bus, data-ready line, serial device) is simulated, and its
    calibration file belongs to its real unit: it is not applied (give the simulated unit's own
    with --calibration). --format chooses the encoding over the board's.

    --junit FILE.xml writes the run for a CI test reporter: one test case for the
    reconciliation (no silent loss) and one per --limit, passed or failed with the figure; an
    error case when the firmware did not start or the run was interrupted; the settings and
    figures as properties. No times or host names: the same run writes the same bytes.

    Exit status: 0 done; 1 the chip produced samples that neither reached the host nor were
    counted (silent_losses > 0), or a --limit was exceeded (each limit's verdict is printed on
    standard error, e.g. "limit incl_rms_deg ≤ 2: 0.412 — pass"); 64 usage error; 65 (66) the
    calibration file is invalid (cannot be read); 70 the firmware did not start; 73 the report,
    the frames, the truth or the JUnit file cannot be written (checked before the run); 78 the board file
    is missing or wrong (the message names the key); 128 + the signal when interrupted: 130
    SIGINT, 143 SIGTERM, 129 SIGHUP, 131 SIGQUIT.
    """,
  options: [
    .option("faults", value: "PLAN", help: "a fault plan (plumb-hil faults)", default: "none"),
    .option(
      "seconds", value: "N", help: "simulated seconds (default: the scenario's natural length)"),
    .option("seed", value: "S", help: "seeds the scenario, the unit and the faults", default: "1"),
    .option(
      "report", value: "DIR",
      help: "write report.json, the plots (attitude error, rest, gyro bias, latency) and "
        + "report.html (the checks, the figures and the plots on one page, readable offline) there"),
    .option(
      "format", value: "FORMAT",
      help: "binary, binary-imu, text or mavlink (default: the board file's, or binary)"),
    .option(
      "board", value: "FILE",
      help: "a board file: its sensor settings, output and mounting are played (the hardware is "
        + "simulated; its calibration is not applied)"),
    .option(
      "fault-start", value: "SECONDS", help: "when the fault plan's faults begin", default: "5"),
    .option("frames", value: "FILE", help: "also write the bytes the host received to FILE"),
    .option(
      "truth", value: "FILE.csv",
      help: "also write, for every frame compared with the truth, a CSV row: sequence, "
        + "sample_time_ns, truth_w, truth_x, truth_y, truth_z (the true attitude, body → "
        + "reference), incl_err_deg"),
    .option(
      "unit", value: "UNIT",
      help: "the simulated chip: typical (uncalibrated, errors drawn within the datasheet's "
        + "limits), noisy (datasheet noise only) or ideal (no error, no noise: at rest its "
        + "bursts repeat exactly and the driver drops them as repeated reads; use noisy for "
        + "runs with rests)", default: "typical"),
    .option(
      "calibration", value: "CAL.json",
      help: "a calibration file for the firmware, as a board file's \"calibration\" key gives "
        + "it: the simulated unit's own (plumb record, plumb-cal save and plumb calibrate imu or accel "
        + "on a simulated board file with the same seed)"),
    .option(
      "plain-filter", value: "TAU",
      help: "run seed 001's plain complementary filter (time constant TAU seconds; no rest "
        + "detection, bias estimation or rejection; a calibration's bias still subtracted) "
        + "instead of Plumb's estimator, to compare"),
    .flag(
      "realtime",
      help: "the chip on the real clock, frames over a real pseudo-terminal (timing in the report)"),
    .option(
      "monitor-link", value: "PATH",
      help: "with --realtime: pass the received bytes on, as they arrive, to a pseudo-terminal "
        + "linked at PATH for plumb-monitor PATH (its directory must exist)"),
    .option(
      "junit", value: "FILE.xml",
      help: "also write a JUnit XML report for CI (each check and --limit a test case)"),
    .option(
      "limit", value: "NAME=MAX",
      help: "fail the run (exit 1) when a figure exceeds MAX; repeatable. NAME: "
        + HILLimit.Metric.allCases.map { "\($0.rawValue) (\($0.meaning))" }.joined(separator: ", "),
      repeating: true),
  ],
  positionals: [PositionalSpec("SCENARIO", help: "a scenario (plumb-hil scenarios)")],
  examples: [
    "plumb-hil run tilt",
    "plumb-hil run handheld --seconds 60 --faults bus-lockup --report /tmp/hil",
    "plumb-hil run push --format mavlink",
    "plumb-hil run handheld --seconds 60 --board Boards/raspberry-pi-4.json --limit incl_rms_deg=2",
    "plumb-hil run rest-turn --seconds 5 --realtime --report /tmp/hil-rt",
    "plumb-hil run handheld --seconds 30 --realtime --monitor-link /tmp/plumb-hil-tty "
      + "(and plumb-monitor /tmp/plumb-hil-tty --reopen)",
  ])

let scenariosSpec = CommandSpec(
  name: "plumb-hil scenarios", abstract: "list the scenarios: one name first on each line")

let faultsSpec = CommandSpec(
  name: "plumb-hil faults", abstract: "list the fault plans: one name first on each line")

let soakSpec = CommandSpec(
  name: "plumb-hil soak",
  abstract: "hours of simulated time at full speed with random faults; memory and reconciliation",
  discussion: """
    The handheld scenario with the soak fault plan (random NACKs and EIO, lost, late, duplicated
    and jittered edges, a brown-out every ten minutes), serial unplugs, garbage on the command
    input and status commands, all seeded. Memory (VmRSS, VmHWM from /proc/self/status) is read
    every simulated hour. Passes when the loop ran to the end, every sample is reconciled
    (silent_losses = 0) and the resident set grew by at most 2 MiB after the first hour.

    Exit status: 0 passed; 1 a check failed; 64 usage error.
    """,
  options: [
    .option("hours", value: "H", help: "simulated hours", default: "24"),
    .option("seed", value: "S", help: "seeds everything", default: "1"),
    .option(
      "report", value: "DIR",
      help: "write the report there (report.json, the plots, and report.html with the checks)"),
    .option(
      "junit", value: "FILE.xml", help: "also write a JUnit XML report for CI (one case per check)"),
  ],
  examples: ["plumb-hil soak", "plumb-hil soak --hours 1 --report /tmp/soak"])

func scenarioListing() -> String {
  ScenarioCatalog.entries.map { pad($0.name, 24) + $0.summary + "\n" }.joined()
}

func faultListing() -> String {
  SimulatedMPU6050FaultPlan.catalogue.map { pad($0.name, 22) + $0.summary + "\n" }.joined()
}

func pad(_ text: String, _ width: Int) -> String {
  text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
}

func runCommand(_ arguments: ParsedArguments) throws {
  let spec = arguments.spec
  let scenario = arguments.positionals[0]
  guard ScenarioCatalog.entry(named: scenario) != nil else {
    throw UsageError(HILError.unknownScenario(scenario).description, spec: spec)
  }
  let faults = arguments.value("faults") ?? "none"
  guard SimulatedMPU6050FaultPlan.names.contains(faults) else {
    throw UsageError(HILError.unknownFaultPlan(faults).description, spec: spec)
  }
  let formatName = try arguments.choice(
    "format", from: TelemetryFormat.allCases.map(\.rawValue))
  let format = formatName.map { TelemetryFormat(rawValue: $0)! }
  var options = HILOptions(
    scenario: scenario, faults: faults,
    seconds: try arguments.double("seconds", in: 0.5...(30 * 86_400)),
    seed: UInt64(try arguments.integer("seed", in: 0...Int.max) ?? 1),
    format: format ?? .binary, realTime: arguments.flag("realtime") ? LinuxRealTimeHost() : nil)
  if let boardPath = arguments.value("board") {
    try applyBoard(boardPath, format: format, to: &options)
  }
  options.monitorLinkPath = arguments.value("monitor-link")
  options.faultStartSeconds = try arguments.double("fault-start", in: 0...(30 * 86_400)) ?? 5
  let unitName = try arguments.choice("unit", from: ["typical", "noisy", "ideal"]) ?? "typical"
  switch unitName {
  case "noisy": options.unit = .noisy(seed: options.seed)
  case "ideal": options.unit = .ideal
  default: break
  }
  if let path = arguments.value("calibration") {
    do throws(CalibrationFileError) {
      options.calibration = FirmwareCalibration(try CalibrationFile.load(path: path))
    } catch {
      switch error {
      case .unreadable: throw CommandFailure(.noInput, error.description)
      default: throw CommandFailure(.dataError, error.description)
      }
    }
  }
  options.plainFilterSeconds = try arguments.double("plain-filter", in: 0.01...1000)
  var limits: [HILLimit] = []
  for text in arguments.values("limit") {
    do {
      limits.append(try HILLimit(parsing: text))
    } catch {
      throw UsageError("--limit \(error.description)", spec: spec)
    }
  }
  let framesPath = arguments.value("frames")
  let junitPath = arguments.value("junit")
  let truthPath = arguments.value("truth")
  options.keepBytes = framesPath != nil
  options.keepTruth = truthPath != nil
  // The outputs are checked now, not found unwritable after the run.
  do {
    if let report = arguments.value("report") { try prepareReportDirectory(report) }
    if let framesPath { try checkWritableFile(framesPath) }
    if let junitPath { try checkWritableFile(junitPath) }
    if let truthPath { try checkWritableFile(truthPath) }
  } catch {
    throw CommandFailure(.cannotCreate, error.description)
  }
  /// Writes the JUnit report, if asked for.
  func writeJUnit(_ report: HILJUnitReport) throws(CommandFailure) {
    guard let junitPath else { return }
    do {
      try writeBytes(Array(report.xml.utf8), to: junitPath)
    } catch {
      throw outputFailure(error)
    }
  }
  // Ctrl-C (or SIGTERM, SIGQUIT, SIGHUP) ends the run at the next loop step; the summary and the report still
  // come, marked as interrupted.
  installStopHandlers()
  options.shouldStop = { stopRequested.load(ordering: .relaxed) }
  let result: HILResult
  do {
    result = try runHIL(options)
  } catch {
    switch error {
    case .startFailed:
      try writeJUnit(
        HILJUnitReport(
          failedToStart: error.description, scenario: options.scenario, faults: options.faults,
          unit: unitName, seed: options.seed, seconds: options.seconds))
      throw CommandFailure(.software, error.description)
    case .pseudoTerminal: throw CommandFailure(.unavailable, error.description)
    default: throw CommandFailure(.usage, error.description)
    }
  }
  if let report = arguments.value("report") {
    do {
      try result.writeReport(
        to: report, checks: result.checks(limits: limits), version: PlumbVersion.current)
    } catch {
      throw outputFailure(error)
    }
    printError("plumb-hil: report in \(report)/ (report.json, four plots and report.html)")
  }
  if let framesPath {
    do {
      try writeBytes(result.bytes, to: framesPath)
    } catch {
      throw outputFailure(error)
    }
  }
  if let truthPath {
    do {
      try writeBytes(Array(truthCSV(result.truthRows).utf8), to: truthPath)
    } catch {
      throw outputFailure(error)
    }
  }
  try writeJUnit(
    HILJUnitReport(result: result, unit: unitName, seconds: options.seconds, limits: limits))
  print(result.summaryLine)
  let verdicts = limits.map { $0.verdict(on: result) }
  for verdict in verdicts { printError("plumb-hil: \(verdict.line)") }
  if result.interrupted {
    let signal = stopSignal.load(ordering: .relaxed)
    throw CommandFailure(
      ExitCode(stoppedBy: signal) ?? .interrupted,
      "interrupted by \(signalName(signal)) after \(NumberText.fixed(result.seconds, 2)) s "
        + "of simulated time: "
        + (arguments.value("report") == nil
          ? "the summary covers" : "the summary and the report cover")
        + " the run up to there"
    )
  }
  if result.accounting.silentLosses > 0 {
    throw CommandFailure(
      .failure,
      "\(result.accounting.silentLosses) samples were lost silently (see the reconciliation in "
        + "the report)")
  }
  let failed = verdicts.filter { !$0.passed }
  if !failed.isEmpty {
    throw CommandFailure(
      .failure,
      "\(failed.count) of \(verdicts.count) limits failed: "
        + failed.map(\.line).joined(separator: "; "))
  }
}

/// `--board FILE`: the board file's sensor settings, output and mounting, as `plumb run` would
/// build them (the same checks, the same messages); its calibration file is its real unit's and
/// is neither read nor applied.
func applyBoard(_ path: String, format: TelemetryFormat?, to options: inout HILOptions) throws {
  let board: BoardDefinition
  let settings: FirmwareSettings
  do throws(SetupError) {
    do {
      board = try BoardFile.load(path: path)
    } catch {
      throw .board(error)
    }
    // Its simulation section is not played (the scenario and faults come from the command
    // line), but a wrong one is a wrong board file, as plumb check-board says.
    if let simulation = board.simulation {
      try PlumbSetup.checkSimulation(simulation, boardPath: path)
    }
    do {
      settings = try PlumbSetup.firmwareSettings(board: board, calibration: nil, format: format)
    } catch {
      guard case .settings(let key, let message, nil) = error else { throw error }
      throw .settings(key: key, message, boardPath: path)
    }
  } catch {
    throw CommandFailure(.configuration, error.description)
  }
  options.sensor = settings.sensor
  options.outputRateHz = settings.outputRateHz
  options.baudRate = settings.baudRate
  options.format = settings.format
  options.mounting = board.mounting
  options.boardPath = path
  if let calibration = board.calibrationPath {
    printError(
      "plumb-hil: the board's calibration file (\(calibration)) belongs to its real unit and is "
        + "not applied to the simulated one; give the simulated unit's own with --calibration")
  }
}

func soakCommand(_ arguments: ParsedArguments) throws {
  let hours = try arguments.double("hours", in: 0.01...(30 * 24)) ?? 24
  let seed = UInt64(try arguments.integer("seed", in: 0...Int.max) ?? 1)
  let options = Soak.options(seconds: hours * 3600, seed: seed)
  let junitPath = arguments.value("junit")
  do {
    if let report = arguments.value("report") { try prepareReportDirectory(report) }
    if let junitPath { try checkWritableFile(junitPath) }
  } catch {
    throw CommandFailure(.cannotCreate, error.description)
  }
  var memory: [MemorySample] = []
  let started = wallSeconds()
  let result: HILResult
  do throws(HILError) {
    result = try runHIL(options) { simulated in
      // One reading per simulated hour (and the first minute, before the plots' bins fill).
      let minute = Int((simulated / 60).rounded())
      guard minute == 1 || minute % 60 == 0 || hours < 1 else { return }
      guard let usage = MemoryUsage.current() else { return }
      memory.append(MemorySample(seconds: simulated, usage: usage))
      printError(
        "soak: \(NumberText.fixed(simulated / 3600, 2)) h simulated in \(NumberText.fixed(wallSeconds() - started, 0)) s, "
          + "VmRSS \(usage.residentKilobytes) KiB, VmHWM \(usage.peakResidentKilobytes) KiB")
    }
  } catch {
    throw CommandFailure(.software, error.description)
  }
  let elapsed = wallSeconds() - started
  let verdict = SoakVerdict(result: result, memory: memory, requestedSeconds: hours * 3600)
  if let report = arguments.value("report") {
    do {
      try result.writeReport(
        to: report, checks: verdict.checks.map(\.html), tool: "plumb-hil soak",
        version: PlumbVersion.current)
    } catch {
      throw outputFailure(error)
    }
  }
  if let junitPath {
    do {
      try writeBytes(Array(HILJUnitReport(soak: verdict, hours: hours).xml.utf8), to: junitPath)
    } catch {
      throw outputFailure(error)
    }
  }
  for line in verdict.lines(wallSeconds: elapsed) { print(line) }
  print(result.summaryLine)
  if !verdict.passed {
    throw CommandFailure(.failure, "the soak failed: " + verdict.failures.joined(separator: "; "))
  }
}

func wallSeconds() -> Double {
  var now = timespec()
  clock_gettime(CLOCK_MONOTONIC, &now)
  return Double(now.tv_sec) + Double(now.tv_nsec) * 1e-9
}

/// An output written after the run that failed: 74 when its device could not take it (a full
/// disk), 73 when the path is wrong (the paths were checked before the run, so that is rare).
func outputFailure(_ error: HILReportError) -> CommandFailure {
  CommandFailure(error.errno.map { ExitCode(outputErrno: $0) } ?? .cannotCreate, error.description)
}
