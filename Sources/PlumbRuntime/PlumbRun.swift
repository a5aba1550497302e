import AttitudeEstimation
import Boards
import ByteFormats
import Firmware
import Glibc
import HardwareAbstraction
import LinuxHardware
import MPU6050
import MPU6050Simulation
import MotionScenarios
import Recording
import SimulatedHardware
import Telemetry

/// How `plumb run` (and `plumb record`) was asked to run.
public struct RunOptions: Sendable {
  /// Where frames go instead of the board's serial device: a tty or pty (raw mode), or a file.
  public var serialPath: String?
  /// Stop after this many seconds of sample time; `nil` runs until SIGINT/SIGTERM.
  public var durationSeconds: Double?
  /// Simulated boards only: run on the manual clock as fast as possible instead of in real time.
  public var fast: Bool
  /// Replays only: pace the recording at its own rate on CLOCK_MONOTONIC (each sample is
  /// taken when its recorded time comes round) instead of as fast as possible. The frames are
  /// the same bytes either way.
  public var realTime: Bool = false
  /// Replays only (`--skip-damaged`): read past damage in the middle of the recording instead
  /// of refusing it. The frames up to the damage are the live run's; after it the loop sees a
  /// gap where the lost records were, and the replay says so.
  public var skipDamaged: Bool = false
  /// Record the raw samples (and the bus transcript) here: a `.plumbraw` file.
  public var recordPath: String?
  /// Replace an existing file at `recordPath` (`--overwrite`); otherwise creating it fails.
  public var overwriteRecording: Bool = false
  /// End the run as soon as the recording stops (a full disk, the file deleted): `plumb record`,
  /// whose job is the recording. Otherwise (`plumb run --record`) the frames go on and the
  /// failure is said at once and again at the end. The frames are the other way round: when the
  /// file they go to cannot take more, a run whose job is the recording goes on (said at once
  /// and at the end), and any other run stops there.
  public var stopWhenRecordingStops: Bool = false
  /// Called for every sample the loop consumes.
  public var onSample: (@Sendable (ConsumedSample) -> Void)?
  /// Called now and then with the fraction done (0…1) when a duration is set: a progress bar.
  public var progress: (@Sendable (Double) -> Void)?
  /// Where messages for people go (standard error).
  public var log: @Sendable (String) -> Void
  /// The state folder changed parameters are kept in (`--state-dir`); `nil`: `$STATE_DIRECTORY`,
  /// or `/var/lib/plumb` on a real board when it exists (`ParameterStore.folder`).
  public var stateFolder: String?
  /// Send the MAVLink stream over UDP as well, and answer packets that come back
  /// (`--mavlink-udp HOST:PORT` or `listen:PORT`; `UDPLink.parse`).
  public var mavlinkUDP: UDPEndpointSpec?
  /// Where `runPlumb` keeps changed parameters (set by it from `stateFolder`).
  var parameterStore: ParameterStore?

  public init(
    serialPath: String? = nil, durationSeconds: Double? = nil, fast: Bool = false,
    recordPath: String? = nil, onSample: (@Sendable (ConsumedSample) -> Void)? = nil,
    progress: (@Sendable (Double) -> Void)? = nil, log: @escaping @Sendable (String) -> Void
  ) {
    self.serialPath = serialPath
    self.durationSeconds = durationSeconds
    self.fast = fast
    self.recordPath = recordPath
    self.onSample = onSample
    self.progress = progress
    self.log = log
  }
}

/// Why a run failed, with what to do.
public enum RunError: Error, CustomStringConvertible, Sendable {
  case setup(SetupError)
  case serial(SerialError)
  case i2c(I2CError)
  case dataReady(DataReadyError)
  case start(FirmwareStartError)
  case simulation(String)
  case recording(String)
  /// The recording could not be started (its file created, its header and start-up written);
  /// the file is not left.
  case recordingNotStarted(PlumbRawError)
  /// The recording started and then stopped (a full disk, the file deleted or moved): the
  /// writer's error and the run's summary. The file holds the records up to the failure.
  case recordingStopped(PlumbRawError, RunSummary)
  /// The recording to replay could not be read (missing, unreadable) or is not a recording.
  case replayInput(PlumbRawError)
  /// The file the frames went to stopped taking them (a full disk, a size limit): the run's
  /// summary says why, and what the file keeps.
  case framesStopped(RunSummary)
  /// The file the frames were to be written to could not be created or opened.
  case framesFile(path: String, SerialError)
  /// The UDP link for MAVLink could not be opened.
  case datagramLink(UDPLinkError)

  public var description: String {
    switch self {
    case .setup(let error): error.description
    case .serial(let error): error.description
    case .i2c(let error): error.description
    case .dataReady(let error): error.description
    case .start(let error): error.description
    case .simulation(let message): message
    case .recording(let message): message
    case .recordingNotStarted(let error): error.description
    case .recordingStopped(let error, let summary):
      summary.recordingStoppedMessage(error)
        + (summary.framesStoppedMessage.map { "; and " + $0 } ?? "")
    case .framesStopped(let summary): summary.framesStoppedMessage ?? "the frames stopped"
    case .replayInput(let error): error.description
    case .datagramLink(let error): error.description
    case .framesFile(let path, let error):
      "cannot write the frames to \(path)\(error.errno.map { ": \(fileErrorText($0))" } ?? ""); "
        + (error.errno?.rawValue == EISDIR
          ? "give a file name in that folder, or a device"
          : "check the folder exists and can be written to")
    }
  }
}

/// The final status of a run, for the summary line and for tests.
public struct RunSummary: Sendable {
  public var status: FirmwareStatus
  public var driver: MPU6050Counters
  public var sampleSeconds: Double
  /// What the rest detector decided during the run.
  public var rests: RestStatistics
  /// Gaps after which the estimator restarted the tilt from the accelerometer
  /// (`AttitudeEstimator.gapReacquisitions`).
  public var tiltRestarts: Int = 0
  /// Samples written to the recording (`RunOptions.recordPath`), repeated reads apart: the
  /// estimated ones and the loop's warm-up discards before them. Nil without a recording.
  public var recordedSamples: UInt64? = nil
  /// A replay that stopped before the recording's end because the recording is damaged there:
  /// what was found, for a person (nil when the whole recording replayed).
  public var damage: String? = nil
  /// The file the frames went to, when it stopped taking them (a full disk, a size limit):
  /// where, why, and the bytes of whole frames it keeps.
  public var framesFailure: (path: String, error: SerialError, bytesKept: Int64)? = nil
  /// What a ground station sent and was answered (MAVLink runs only).
  public var mavlink: MAVLinkComponentStatistics? = nil
  /// MAVLink packets received that were not accepted (bad CRC, unknown, MAVLink 1, bad flags).
  public var mavlinkRejected: UInt64 = 0
  /// The UDP link's counters, with `--mavlink-udp`.
  public var datagrams: DatagramStatistics? = nil
}

/// Runs the firmware for a board file's setup: on simulated hardware when the board is the
/// simulated one, on the Linux devices it names otherwise.
public func runPlumb(_ setup: PlumbSetup, options: RunOptions) throws(RunError) -> RunSummary {
  var setup = setup
  var options = options
  prepareParameters(&setup, &options)
  if let simulation = setup.board.simulation {
    return try runSimulated(setup, simulation: simulation, options: options)
  }
  return try runLinux(setup, options: options)
}

/// Reads the parameters kept in the state folder into the settings, fits MAVLink's streams to
/// the line, and says both.
func prepareParameters(_ setup: inout PlumbSetup, _ options: inout RunOptions) {
  guard
    let folder = ParameterStore.folder(
      explicit: options.stateFolder, defaultToSystemFolder: !setup.board.isSimulated)
  else {
    if setup.settings.format == .mavlink {
      options.log(
        "plumb: parameters changed while running are not kept (no state folder: --state-dir DIR)")
    }
    for lowering in setup.mavlinkLowering { logLowering(lowering, setup: setup, options: options) }
    return
  }
  let store = ParameterStore(folder: folder)
  let contents = store.load()
  for warning in contents.warnings { options.log("plumb: warning: " + warning) }
  for warning in setup.apply(storedParameters: contents.values) {
    options.log("plumb: warning: " + warning)
  }
  if !contents.values.isEmpty {
    options.log(
      "plumb: parameters from \(store.path): "
        + contents.values.map { "\($0.parameter.nameString) \(PlumbParameter.text($0.value))" }
        .joined(separator: ", "))
  }
  options.log("plumb: changed parameters are kept in \(store.path)")
  for lowering in setup.mavlinkLowering { logLowering(lowering, setup: setup, options: options) }
  options.parameterStore = store
}

private func logLowering(
  _ lowering: MAVLinkStreamRates.Lowering, setup: PlumbSetup, options: RunOptions
) {
  options.log(
    "plumb: MAVLink: \(lowering) to fit \(setup.settings.baudRate) baud "
      + "(\(LinkBudget.maximumUtilisationPercent) % of the line at most; a faster baud rate keeps it)"
  )
}

/// Opens (creates or truncates) a plain file for frames.
func openFramesFile(_ path: String) throws(RunError) -> SelectedPort {
  do {
    return .descriptor(try .file(path: path))
  } catch {
    throw .framesFile(path: path, error)
  }
}

/// Opens the output `plumb run` writes frames to.
func openOutput(_ setup: PlumbSetup, options: RunOptions) throws(RunError) -> SelectedPort {
  let target = options.serialPath ?? setup.board.serial.device
  if target == "stdout" || target == "-" {
    return .descriptor(.standardOutput(readsInput: isTerminal(0)))
  }
  switch pathKind(target) {
  case .characterDevice:
    do {
      return .termios(try TermiosSerialPort(path: target, baudRate: setup.board.serial.baudRate))
    } catch  where error.kind == .notATerminal {
      // A character device that is not a terminal (/dev/null): plain writes.
      do {
        return .descriptor(try .file(path: target))
      } catch {
        throw .serial(error)
      }
    } catch {
      throw .serial(error)
    }
  case .regularFile, .missing:
    if options.serialPath == nil, pathKind(target) == .missing {
      // The board names a device that is not there: say so, rather than creating a file.
      throw .serial(SerialError(.deviceMissing, errno: .noSuchFileOrDirectory, device: target))
    }
    return try openFramesFile(target)
  case .namedPipe:
    do {
      return .descriptor(try .namedPipe(path: target))
    } catch {
      throw .serial(error)
    }
  case .directory:
    throw .framesFile(path: target, SerialError(.ioError, errno: Errno(rawValue: EISDIR)))
  case .other:
    throw .serial(SerialError(.notATerminal, device: target))
  }
}

func runSimulated(
  _ setup: PlumbSetup, simulation: SimulationSettings, options: RunOptions
) throws(RunError) -> RunSummary {
  let clock = ManualClock()
  let seconds = options.durationSeconds ?? 24 * 3600
  guard let scenario = ScenarioCatalog.entry(named: simulation.scenario) else {
    throw .simulation(
      "board \(setup.boardPath): simulation.scenario \"\(simulation.scenario)\" is not a scenario; choose one of \(ScenarioCatalog.names.joined(separator: ", "))"
    )
  }
  let faultName = simulation.faults ?? "none"
  guard
    let plan = SimulatedMPU6050FaultPlan.named(
      faultName, start: clock.now() + .seconds(5), seed: simulation.seed)
  else {
    throw .simulation(
      "board \(setup.boardPath): simulation.faults \"\(faultName)\" is not a fault plan; choose one of \(SimulatedMPU6050FaultPlan.names.joined(separator: ", "))"
    )
  }
  var unit = SimulatedMPU6050Unit.typical(seed: simulation.seed)
  unit.oscillatorError = simulation.oscillatorErrorPercent / 100
  // The scenario moves the body; the breakout sits on it as the board file's mounting says.
  let board = SimulatedMPU6050Board(
    motion: MountedMotion.mount(
      scenario.make(simulation.seed, seconds), sensorToBody: setup.board.mounting),
    unit: unit, faultPlan: plan, clock: clock)
  var settings = setup.settings
  settings.interruptWired = settings.interruptWired && plan.interruptWired
  if options.serialPath == nil, setup.board.serial.device == "stdout", isTerminal(1),
    settings.format == .binary
  {
    // Binary frames on a terminal are noise: people get text.
    settings.format = .text
  }
  let port = try openOutput(setup, options: options)
  options.log(
    "plumb: simulated board, scenario \(scenario.name), faults \(faultName), seed \(simulation.seed)"
  )
  let pacing = options.fast ? nil : RealTimePacing(simulated: clock, stallsWhenLate: true)
  if let path = options.recordPath {
    let recorder = PlumbRawRecorder(recordingBeganAt: clock.now())
    var loop = try makeLoop(
      bus: PlumbRawBusTap(board.bus, clock: clock, recorder: recorder), line: board.line,
      port: port, clock: clock, settings: settings, options: options)
    try beginRecording(
      &loop, recorder: recorder, path: path, setup: setup, settings: settings,
      overwrite: options.overwriteRecording)
    return try drive(
      &loop, setup: setup, options: options, stalls: plan.hostStalls, pacing: pacing,
      recorder: recorder)
  }
  var loop = try makeLoop(
    bus: board.bus, line: board.line, port: port, clock: clock, settings: settings,
    options: options)
  return try drive(
    &loop, setup: setup, options: options, stalls: plan.hostStalls, pacing: pacing,
    recorder: nil)
}

func runLinux(_ setup: PlumbSetup, options: RunOptions) throws(RunError) -> RunSummary {
  let board = setup.board
  let bus: LinuxI2CBus
  do {
    bus = try LinuxI2CBus(path: board.i2c.bus)
  } catch {
    throw .i2c(error)
  }
  let line: SelectedLine
  if board.dataReady.isWired {
    let lineSelector: GPIOLineSelector
    switch board.dataReady.line {
    case .offset(let offset): lineSelector = .offset(UInt32(offset))
    case .name(let name): lineSelector = .name(name)
    }
    do {
      line = .gpio(
        try LinuxDataReadyLine(chip: GPIOChipSelector(board.dataReady.chip), line: lineSelector))
    } catch {
      throw .dataReady(error)
    }
    options.log(
      "plumb: data-ready: chip \(board.dataReady.chip), line \(lineSelector), rising edges "
        + "through libgpiod \(LinuxDataReadyLine.libgpiodAPI) (library "
        + "\(LinuxDataReadyLine.libgpiodVersion))")
  } else {
    line = .notWired
  }
  let port = try openOutput(setup, options: options)
  let realTime = requestRealTime()
  options.log("plumb: \(realTime.scheduling); \(realTime.memoryLocked)")
  let clock = LinuxMonotonicClock()
  if let path = options.recordPath {
    let recorder = PlumbRawRecorder(recordingBeganAt: clock.now())
    var loop = try makeLoop(
      bus: PlumbRawBusTap(bus, clock: clock, recorder: recorder), line: line, port: port,
      clock: clock, settings: setup.settings, options: options)
    try beginRecording(
      &loop, recorder: recorder, path: path, setup: setup, settings: setup.settings,
      overwrite: options.overwriteRecording)
    return try drive(
      &loop, setup: setup, options: options, stalls: [], pacing: nil, recorder: recorder)
  }
  var loop = try makeLoop(
    bus: bus, line: line, port: port, clock: clock, settings: setup.settings, options: options)
  return try drive(&loop, setup: setup, options: options, stalls: [], pacing: nil, recorder: nil)
}

/// Makes and starts the loop, and says what start-up found.
func makeLoop<Bus: I2CBus, Line: DataReadyLine, Port: SerialPort, Clock: MonotonicClock>(
  bus: Bus, line: Line, port: Port, clock: Clock, settings: FirmwareSettings,
  options: RunOptions
) throws(RunError) -> FirmwareLoop<Bus, Line, Port, Clock> {
  var link: UDPLink?
  if let spec = options.mavlinkUDP {
    do {
      link = try UDPLink(spec)
    } catch {
      throw .datagramLink(error)
    }
  }
  do {
    var loop = try FirmwareLoop(bus: bus, line: line, port: port, clock: clock, settings: settings)
    if let onSample = options.onSample { loop.onSample = onSample }
    if let link {
      options.log("plumb: MAVLink also over \(link.description)")
      loop.datagramLink = link
    }
    let report = try loop.start()
    options.log("plumb: " + report.description.split(separator: "\n").joined(separator: "; "))
    return loop
  } catch {
    throw .start(error)
  }
}

/// Holds a simulated world on its manual clock to the wall of CLOCK_MONOTONIC, so frames come
/// out at the chip's rate (`plumb run` on the simulated board without `--fast`).
struct RealTimePacing {
  let simulated: ManualClock
  let real = LinuxMonotonicClock()
  let simulatedStart: Timestamp
  let realStart: Timestamp
  /// Whether a lag of more than `stallThreshold` behind the wall clock is a host stall (the
  /// simulated board's live run): the process did not run (Ctrl-Z, SIGSTOP, a machine
  /// suspended), and on a board the chip went on sampling meanwhile, so the simulated world
  /// jumps over the lag and the loop meets the gap a board would give it: the samples of that
  /// time missed, counted and flagged. Otherwise (a replay, whose clock is the recording's)
  /// the world catches up as fast as it can.
  let stallsWhenLate: Bool

  /// Longer than any scheduling hiccup of a loaded machine: only a stopped process lags so.
  static let stallThreshold: Duration = .seconds(1)

  init(simulated: ManualClock, stallsWhenLate: Bool = false) {
    self.simulated = simulated
    self.stallsWhenLate = stallsWhenLate
    simulatedStart = simulated.now()
    realStart = real.now()
  }

  func wait() {
    let due = realStart + (simulated.now() - simulatedStart)
    let lag = real.now() - due
    if stallsWhenLate, lag > Self.stallThreshold {
      simulated.advance(by: lag)
      return
    }
    real.sleep(until: due)
  }
}

/// The run itself: steps the loop until the duration, a signal or the end; supervises; records;
/// finishes; writes the live bias back.
func drive<Bus: I2CBus, Line: DataReadyLine, Port: SerialPort, Clock: MonotonicClock>(
  _ loop: inout FirmwareLoop<Bus, Line, Port, Clock>, setup: PlumbSetup, options: RunOptions,
  stalls: [SimulatedMPU6050FaultPlan.HostStall], pacing: RealTimePacing?,
  recorder: PlumbRawRecorder?
) throws(RunError) -> RunSummary {
  let wall = LinuxMonotonicClock()
  if let warning = calibrationPartMismatch(setup, chip: loop.driver.identity) {
    options.log("plumb: warning: " + warning)
  }
  var supervision = Supervision(log: options.log)
  // The chip is identified, self-tested and configured, and the loop is about to wait for its
  // first sample: said as a status (a harness playing the chip starts its edges on it), not yet
  // READY=1.
  supervision.configured(
    "configured: \(setup.board.name), \(loop.format.rawValue) frames; converging")
  // READY=1 once the frames can be trusted: after the warm-up samples and the estimator's
  // convergence (the first frame no longer flagged `initialising`), as the unit promises.
  var announcedReady = false
  let start = loop.clock.now()
  let end = options.durationSeconds.map { start + .nanoseconds(Int64($0 * 1e9)) }
  var pendingStalls = stalls[...]
  var nextProgress = start
  var recordingFailure: PlumbRawError?
  var framesFailure: (path: String, error: SerialError, bytesKept: Int64)?
  var parametersSaved = loop.parameterChanges
  var parameterSaveFailed = false
  while !stopRequested.load(ordering: .relaxed) {
    let now = loop.clock.now()
    if let end, now >= end { break }
    // A simulated fault plan's host stall: the process does not run for a while.
    if let stall = pendingStalls.first, stall.at <= now, let manual = loop.clock as? ManualClock {
      manual.advance(by: stall.duration)
      pendingStalls = pendingStalls.dropFirst()
    }
    loop.step()
    if !announcedReady, loop.lastFrame.sequence > 0,
      !loop.lastFrame.flags.contains(.initialising)
    {
      supervision.ready("running: \(setup.board.name), \(loop.format.rawValue) frames")
      announcedReady = true
    }
    supervision.tick(at: wall.now()) { statusLine(loop.status) }
    if loop.parameterChanges != parametersSaved, let store = options.parameterStore {
      // A change is rare (a ground station's PARAM_SET, a host command): the file is replaced
      // then, between two samples.
      parametersSaved = loop.parameterChanges
      do {
        try store.save(ParameterStore.values(of: loop))
        parameterSaveFailed = false
      } catch {
        if !parameterSaveFailed { options.log("plumb: warning: \(error)") }
        parameterSaveFailed = true
      }
    }
    if framesFailure == nil, let failed = framesFileFailure(loop.port) {
      framesFailure = failed
      if !options.stopWhenRecordingStops { break }
      options.log(
        "plumb: the frames stopped (the recording goes on): "
          + framesStoppedText(failed.path, failed.error, bytesKept: failed.bytesKept))
    }
    if (loop.port as? SelectedPort)?.isStandardOutputGone == true {
      // Standard output cannot be reopened: its reader (`plumb run … | head`) left for good.
      options.log(
        "plumb: standard output was closed (its reader went away): stopping, as at SIGTERM")
      break
    }
    pacing?.wait()
    if let recorder, recordingFailure == nil, let failure = recorder.failure {
      recordingFailure = failure
      loop.observer = nil
      if options.stopWhenRecordingStops { break }
      options.log("plumb: recording stopped (the frames go on): \(failure)")
    }
    if let end, let progress = options.progress, now >= nextProgress {
      progress(Double(now.nanoseconds(since: start)) / Double(end.nanoseconds(since: start)))
      nextProgress = now + .milliseconds(500)
    }
  }
  supervision.stopping()
  // The samples' time, before `finish` spends some trying to flush what is queued.
  let sampleSeconds = Double(loop.clock.now().nanoseconds(since: start)) * 1e-9
  loop.finish()
  if let recorder {
    do {
      try recorder.close()
    } catch {
      if recordingFailure == nil { recordingFailure = error }
    }
  }
  writeLiveBias(
    setup: setup, estimateBody: loop.lastEstimate?.gyroBiasRadiansPerSecond,
    uncertaintyBody: loop.lastEstimate?.gyroBiasUncertaintyRadiansPerSecond,
    temperatureCelsius: loop.lastFrame.temperatureCelsius, log: options.log)
  var summary = RunSummary(
    status: loop.status, driver: loop.driver.counters, sampleSeconds: sampleSeconds,
    rests: loop.estimator.restStatistics, tiltRestarts: loop.estimator.gapReacquisitions,
    recordedSamples: recorder?.samplesRecorded)
  summary.framesFailure = framesFailure ?? framesFileFailure(loop.port)
  if loop.format == .mavlink || loop.datagramLink != nil {
    summary.mavlink = loop.mavlinkStatistics
    summary.mavlinkRejected =
      loop.mavlinkSerialReceiverStatistics.rejectedPackets
      + loop.mavlinkDatagramReceiverStatistics.rejectedPackets
    summary.datagrams = loop.datagramLink?.statistics
  }
  if let recordingFailure { throw .recordingStopped(recordingFailure, summary) }
  if summary.framesFailure != nil { throw .framesStopped(summary) }
  return summary
}

/// The file the frames go to, when it has stopped taking them: its path, why, and the bytes of
/// whole frames it keeps.
func framesFileFailure<Port: SerialPort>(_ port: Port) -> (
  path: String, error: SerialError, bytesKept: Int64
)? {
  guard let selected = port as? SelectedPort, let error = selected.writeFailure else { return nil }
  let path = error.device.map { $0 == "stdout" ? "standard output" : $0 } ?? "the frames file"
  return (path, error, selected.fileLength ?? 0)
}

/// Why the frames stopped and what the file keeps, for a person.
func framesStoppedText(_ path: String, _ error: SerialError, bytesKept: Int64) -> String {
  let reason = error.errno.map { fileErrorText($0) } ?? "the write failed"
  let advice: String
  switch error.errno?.rawValue {
  case EFBIG: advice = "raise the limit (ulimit -f), or write the frames to another file system"
  case EIO: advice = "the device failed (see dmesg): write the frames to another one"
  default: advice = "free space on that device, or write the frames to another one"
  }
  return "the frames could not be written to \(path) (\(reason)): "
    + "it keeps the \(bytesKept) bytes written before, whole frames up to the last one; \(advice)"
}

/// When the board's calibration file was made for another part than the chip that answered
/// (its `sensor.whoAmI`): what to tell a person. The chip has no serial number, so this is the
/// one sign of another unit's file that start-up can see. A warning, not a refusal: files made
/// with `plumb-cal save`'s default `--who-am-i 0x68` for a clone exist.
func calibrationPartMismatch(_ setup: PlumbSetup, chip: MPU6050Identity?) -> String? {
  guard let calibration = setup.calibration, let path = setup.board.calibrationPath,
    let chip, chip.whoAmI != calibration.sensor.whoAmI
  else { return nil }
  let sensor = calibration.sensor
  return "calibration file \(path) was made for WHO_AM_I \(hexByte(sensor.whoAmI)) "
    + "(\(sensor.name), \"\(sensor.label)\"); this chip answers \(hexByte(chip.whoAmI)) "
    + "(\(chip.model.name)): its bench values are probably another unit's. Measure this one "
    + "(plumb record on the bench, then plumb-cal save --who-am-i \(hexByte(chip.whoAmI))), "
    + "or remove the board's \"calibration\" key"
}

/// The `STATUS=` line systemd shows in `systemctl status plumb`.
func statusLine(_ status: FirmwareStatus) -> String {
  "\(status.samples) samples, \(status.missedSamples) missed, \(status.framesDroppedQueueFull + status.framesDroppedDisconnected) frames dropped, mode \(status.mode.rawValue)"
}

extension RunSummary {
  /// One line for people at the end of a run.
  public var description: String {
    let s = status
    return
      "plumb: \(String(format3(sampleSeconds))) s, \(s.samples) samples, \(s.framesQueued) frames, "
      + "\(s.missedSamples) missed, \(s.framesDroppedQueueFull + s.framesDroppedDisconnected) dropped, "
      + "\(driver.failedReads) failed reads, \(s.fallbackEntries) fallbacks, mode \(s.mode.rawValue), "
      + "\(rests.rests) rests" + refusedRests
      + (s.bytesNeverSent > 0
        ? ", \(s.bytesNeverSent) bytes of queued frames never sent (the port stopped taking "
          + "them)" : "")
      + (tiltRestarts > 0
        ? ", \(tiltRestarts) tilt restarts after gaps in the samples" : "")
      + (mavlink.map { "\n" + mavlinkLine($0) } ?? "")
  }

  /// What the MAVLink component received and answered, and the UDP link's counts.
  func mavlinkLine(_ m: MAVLinkComponentStatistics) -> String {
    var line =
      "plumb: MAVLink: \(m.commands) commands (\(m.commandsUnsupported) unsupported, "
      + "\(m.commandsRefused) refused), \(m.parameterSets) parameter sets "
      + "(\(m.parameterSetsRefused) refused), \(m.parameterValuesSent) PARAM_VALUE sent, "
      + "\(m.fileTransferRequests) FTP requests refused, \(m.dataStreamRequestsIgnored) "
      + "REQUEST_DATA_STREAM ignored, \(mavlinkRejected) bad packets"
    if m.answersDropped > 0 { line += ", \(m.answersDropped) answers dropped" }
    if let d = datagrams {
      line +=
        "; UDP: \(d.datagramsSent) datagrams sent, \(d.datagramsReceived) received, "
        + "\(d.sendsRefused + d.sendsWithoutPeer) not sent (no room or no peer yet), "
        + "\(d.sendErrors) refused by the network or the peer (nothing listening)"
    }
    return line
  }

  /// Why the frames stopped, when they did (`framesFailure`).
  public var framesStoppedMessage: String? {
    framesFailure.map { framesStoppedText($0.path, $0.error, bytesKept: $0.bytesKept) }
  }

  /// What `plumb record` wrote to `path`, in the counts a user checks against `plumb export`.
  public func recordedLine(path: String) -> String {
    "plumb: recorded \(recordedSamples ?? 0) samples to \(path) (\(status.warmUpSamplesDiscarded) "
      + "warm-up samples the loop discarded, as a replay does, then the \(status.samples) it "
      + "estimated from)"
  }

  /// Why the recording stopped, what its file holds now, and what to do.
  public func recordingStoppedMessage(_ error: PlumbRawError) -> String {
    if error.kind == .fileGone { return error.description }
    var text =
      "\(error.description); \(error.path) keeps the \(recordedSamples ?? 0) samples recorded "
      + "before it: a whole recording, only shorter, that plumb export, plumb-cal and plumb run "
      + "--replay read"
    switch error.errno?.rawValue {
    case ENOSPC: text += "; free space on that device, or record to another one"
    case EFBIG: text += "; raise the limit (ulimit -f), or record to another file system"
    case EIO: text += "; the device failed (see dmesg): record to another one"
    default: break
    }
    return text
  }

  /// The quiet dwells the rest detector refused as slow turns, when there were any: a board
  /// that sat still and shows these has a bias far from what it was told — by its calibration
  /// file, or by a first rest taken while it turned steadily about the vertical, which nothing
  /// can tell from bias (Sources/AttitudeEstimation/README.md, "A steady turn at power-on").
  var refusedRests: String {
    guard rests.refusedAsTurning > 0 else { return "" }
    let rate = rests.lastRefusedRateRadiansPerSecond * 180 / .pi
    return " (\(rests.refusedAsTurning) quiet dwells refused as a slow turn, the last at "
      + "\(format3(rate)) °/s from the bias: if the board was still, its bias is that far off: "
      + "its calibration's (measure it again, plumb record on the bench then plumb-cal gyro), "
      + "or one its first rest took while it turned steadily about the vertical (keep it still "
      + "when it starts))"
  }
}

func format3(_ value: Double) -> String {
  let scaled = (value * 1000).rounded()
  let whole = Int(scaled / 1000)
  let fraction = Int(abs(scaled).truncatingRemainder(dividingBy: 1000))
  let digits = String(fraction)
  return "\(whole).\(String(repeating: "0", count: 3 - digits.count))\(digits)"
}
