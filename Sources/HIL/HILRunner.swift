import AttitudeEstimation
import ByteFormats
import Firmware
import Geometry
import HardwareAbstraction
import MPU6050
import MPU6050Simulation
import Monitoring
import MotionScenarios
import Randomness
import SimulatedHardware
import Telemetry

#if canImport(Glibc)
  import Glibc
#endif

#if canImport(Glibc)
  import Glibc
#endif

/// Everything one HIL run found: what the host received and how it compares with the truth,
/// the reconciliation, the fault episodes, and the loop's, driver's and simulator's own counts.
public struct HILResult: Sendable {
  public var scenario: String
  public var faults: String
  public var seed: UInt64
  public var format: TelemetryFormat
  public var realtime: Bool
  /// Simulated seconds run (motion time at the end).
  public var seconds: Double
  /// When the fault plan's faults began, seconds of motion time.
  public var faultStartSeconds: Double
  /// The board's clock reading at the motion's time 0.
  public var motionStart: Timestamp
  /// The output divider: samples per frame.
  public var divider: Int
  /// The chip's true sample period at the end of the run, ns (its oscillator's, a few percent
  /// off the nominal 10 ms).
  public var chipSamplePeriodNanoseconds: Double
  public var frameRateHz: Double
  public var startup: MPU6050StartupReport?
  public var accounting: SampleAccounting
  public var accuracy: AccuracyFigures
  /// The first `RecoveryTracker.maximumEpisodes` fault episodes, and how many there were.
  public var episodes: [FaultEpisode]
  public var episodeCount: Int
  public var status: FirmwareStatus
  public var driver: MPU6050Counters
  public var injected: SimulatedMPU6050Injection
  public var serial: SerialStatistics
  /// Bytes the serial device lost when unplugged (in its buffer at that moment).
  public var serialBytesDiscarded: UInt64
  public var link: LinkStatistics
  public var telemetryFrames: UInt64
  /// The sample time of the last frame the host received, seconds of motion time.
  public var lastFrameSeconds: Double?
  public var repliesOK: UInt64
  public var repliesError: UInt64
  /// Garbage bytes sent to the command input.
  public var garbageBytesSent: UInt64
  /// MAVLink frames the loop's record did not identify (not reconciled).
  public var unidentifiedFrames: UInt64
  /// The frames' own edge-to-write latency, µs.
  public var frameLatency: LatencyHistogram
  /// Real-time runs: sample time to arrival at the host, and between arrivals, µs.
  public var hostLatency: LatencyHistogram
  public var interArrival: LatencyHistogram
  /// Real-time runs with a monitor link: bytes passed to it, and bytes it could not take (its
  /// reader was not keeping up, or not there yet: the tap never holds the run back).
  public var monitorBytesPassed: UInt64
  public var monitorBytesDropped: UInt64
  /// The same three, binned for plots.
  public var frameLatencyBins: BinnedHistogram
  public var hostLatencyBins: BinnedHistogram
  public var interArrivalBins: BinnedHistogram
  /// Real-time runs: the rate of arrivals at the host, frames per wall-clock second.
  public var arrivalRateHz: Double?
  public var series: RunSeries
  /// With `keepFrames` / `keepBytes`.
  public var frames: [HILFrame]
  public var bytes: [UInt8]
  /// With `HILOptions.keepTruth`: every frame compared with the truth, in order.
  public var truthRows: [TruthRow] = []

  /// The one line a run ends with.
  public var summaryLine: String {
    "hil: scenario=\(scenario) faults=\(faults) frames=\(telemetryFrames) "
      + "missed=\(accounting.countedMissed) silent_losses=\(accounting.silentLosses) "
      + "incl_rms_deg=\(NumberText.fixed(accuracy.inclinationRMSDegrees, 3)) "
      + "heading_rms_deg=\(NumberText.fixed(accuracy.headingRMSDegrees, 3))"
      + (interrupted ? " interrupted" : "")
  }

  /// Stretches in which the chip's configuration registers (SMPLRT_DIV, CONFIG, GYRO_CONFIG,
  /// ACCEL_CONFIG, PWR_MGMT_1) differed from what the driver set at start-up — a brown-out's
  /// reset, a corrupted register — until the driver restored them: the simulator's view of a
  /// recovery the frames may not show. The first 1000, and how many.
  public var chipStretches: [ChipStretch]
  public var chipStretchCount: Int
  /// Whether `HILOptions.shouldStop` ended the run before its length.
  public var interrupted = false
  /// The calibration file's id (`0x…`) when the firmware ran with one (`HILOptions.calibration`).
  public var calibrationID: String? = nil
  /// The plain filter's time constant when the run compared one (`HILOptions`), seconds.
  public var plainFilterSeconds: Double? = nil
  /// The board file the settings came from (`HILOptions.boardPath`).
  public var boardPath: String? = nil
  /// The chip's configured sample rate, Hz.
  public var sampleRateHz: Double = 100

  /// The longest fault episode, seconds (0 without one): the recovery time.
  public var longestEpisodeSeconds: Double {
    episodes.map(\.durationSeconds).max() ?? 0
  }

  /// Every flag seen in fault episodes.
  public var episodeFlags: TelemetryFlags {
    episodes.reduce(into: TelemetryFlags()) { $0.formUnion($1.flags) }
  }
}

/// Runs one hardware-in-the-loop session: the real driver and the real loop on a simulated
/// MPU-6050 that moves through a scenario with ground truth, with the named fault plan applied
/// to the chip, the bus and the data-ready line, frames on a serial link that a host decodes.
///
/// On the manual clock by default (as fast as the machine goes; same options, same bytes). With
/// `realTime`, the simulated world is held to the host's monotonic clock (the chip samples at
/// its own rate in real time), the loop writes through the host's serial port (termios on
/// Linux) to the terminal side of a real pseudo-terminal, and the host reads the controller
/// side as it arrives.
///
/// `progress` is called about once per simulated minute with the motion time (the soak reads
/// memory there).
public func runHIL(_ options: HILOptions, progress: ((Double) -> Void)? = nil) throws(HILError)
  -> HILResult
{
  guard let entry = ScenarioCatalog.entry(named: options.scenario) else {
    throw .unknownScenario(options.scenario)
  }
  guard SimulatedMPU6050FaultPlan.names.contains(options.faults) else {
    throw .unknownFaultPlan(options.faults)
  }
  let seconds = options.seconds ?? entry.naturalSeconds ?? 60
  guard seconds > 0, seconds.isFinite else {
    throw .invalid("--seconds must be a positive number of seconds, not \(seconds)")
  }
  if let link = options.monitorLinkPath {
    guard options.realtime else {
      throw .invalid("a monitor link needs --realtime (it is a pseudo-terminal read in real time)")
    }
    let directory = link.contains("/") ? String(link[..<link.lastIndex(of: "/")!]) : "."
    var information = stat()
    guard stat(directory.isEmpty ? "/" : directory, &information) == 0,
      information.st_mode & S_IFMT == S_IFDIR
    else {
      throw .invalid(
        "monitor link \(link): the folder \(directory) does not exist; create it or choose a "
          + "path in an existing folder")
    }
  }
  if options.realtime && !options.serialUnplugs.isEmpty {
    throw .invalid("serial unplugs are simulated on the memory port only: not with --realtime")
  }
  let clock = ManualClock()
  let motionStart = clock.now()
  let plan = SimulatedMPU6050FaultPlan.named(
    options.faults, start: motionStart + .nanoseconds(Int64(options.faultStartSeconds * 1e9)),
    seed: options.seed)!
  var unit = options.unit ?? .typical(seed: options.seed)
  if entry.sensor.gyroBiasRandomWalk > 0 {
    unit.gyroOffsetRandomWalk = BiasRandomWalk(
      randomWalk: entry.sensor.gyroBiasRandomWalk, seed: options.seed)
  }
  // The body's motion (the truth the frames are judged against); the chip on it moves as its
  // mounting makes it.
  let motion = entry.make(options.seed, seconds)
  let chipMotion = MountedMotion.mount(motion, sensorToBody: options.mounting)
  let board = SimulatedMPU6050Board(
    motion: chipMotion, unit: unit, faultPlan: plan, clock: clock,
    wireTiming: .clockRate(hertz: 400_000))

  var settings = FirmwareSettings(selfTest: options.selfTest, format: options.format)
  if let sensor = options.sensor {
    settings.sensor = sensor
    settings.estimator.sampleClock.nominalPeriodSeconds = 1 / sensor.sampleRateHertz
  }
  settings.outputRateHz = options.outputRateHz ?? Int(settings.sensor.sampleRateHertz.rounded())
  if let baudRate = options.baudRate { settings.baudRate = baudRate }
  settings.correction = SampleCorrection(mounting: options.mounting)
  if let calibration = options.calibration {
    settings.apply(calibration, mounting: options.mounting)
  }
  if let seconds = options.plainFilterSeconds {
    var plain = AttitudeEstimator.Settings.plain(
      timeConstantSeconds: seconds, sampleClock: settings.estimator.sampleClock)
    let bias = settings.estimator.bias
    plain.bias.initialBiasRadiansPerSecond = bias.initialBiasRadiansPerSecond
    plain.bias.temperatureCoefficientRadiansPerSecondPerCelsius =
      bias.temperatureCoefficientRadiansPerSecondPerCelsius
    plain.bias.temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius = 0
    plain.bias.referenceTemperatureCelsius = bias.referenceTemperatureCelsius
    plain.gravityMetersPerSecondSquared = settings.estimator.gravityMetersPerSecondSquared
    settings.estimator = plain
  }
  settings.interruptWired = plan.interruptWired
  if let problem = settings.problem { throw .invalid(problem) }
  let validated: ValidatedMPU6050Configuration
  do {
    validated = try settings.sensor.validated()
  } catch {
    throw .invalid(error.description)
  }
  let period = validated.samplePeriodNanoseconds
  let divider = max(1, Int((validated.sampleRateHertz / Double(settings.outputRateHz)).rounded()))

  let ledger = SampleLedger(
    samplePeriodNanoseconds: period, divider: divider, warmUpSamples: settings.warmUpSamples)
  board.chip.onSampleProduced = { ledger.produced(at: $0) }
  let analyser = HostAnalyser(
    motion: motion, motionStart: motionStart, unit: board.chip.unit,
    sensorToBody: options.mounting, format: options.format,
    ledger: ledger, framePeriodNanoseconds: period * Int64(divider), seconds: seconds,
    plotPoints: options.plotPoints, keepFrames: options.keepFrames,
    interruptWired: settings.interruptWired)
  analyser.keepTruth = options.keepTruth
  var session = Session(
    options: options, board: board, analyser: analyser, ledger: ledger, motionStart: motionStart,
    end: motionStart + .nanoseconds(Int64(seconds * 1e9)), progress: progress)

  var outcome: Session.Outcome
  if let host = options.realTime {
    outcome = try session.runRealTime(settings: settings, host: host)
  } else {
    let serialPlan = SerialFaultPlan(
      options.serialUnplugs.map {
        .unplugged(
          from: motionStart + .nanoseconds(Int64($0.atSeconds * 1e9)),
          until: motionStart + .nanoseconds(Int64(($0.atSeconds + $0.forSeconds) * 1e9)))
      })
    let port = MemorySerialPort(
      clock: clock, capacity: .uart(baud: settings.baudRate), faultPlan: serialPlan)
    outcome = try session.runOnManualClock(settings: settings, port: port)
  }
  analyser.finish()
  let accounting = ledger.finish(
    loopLastFrame: outcome.lastFrame, loopSamples: outcome.status.samples,
    loopWarmUp: outcome.status.warmUpSamplesDiscarded)
  var arrivalRate: Double?
  if let first = analyser.firstArrival, let last = analyser.lastArrival, last > first,
    analyser.telemetryFrames > 1
  {
    arrivalRate = Double(analyser.telemetryFrames - 1) * 1e9 / Double(last - first)
  }
  var result = HILResult(
    scenario: options.scenario, faults: options.faults, seed: options.seed,
    format: options.format, realtime: options.realtime,
    seconds: Double(outcome.endTime.nanoseconds(since: motionStart)) * 1e-9,
    faultStartSeconds: options.faultStartSeconds, motionStart: motionStart, divider: divider,
    chipSamplePeriodNanoseconds: board.chip.samplePeriodNanoseconds,
    frameRateHz: validated.sampleRateHertz / Double(divider), startup: outcome.startup,
    accounting: accounting, accuracy: analyser.accuracy, episodes: analyser.recovery.episodes,
    episodeCount: analyser.recovery.episodeCount, status: outcome.status,
    driver: outcome.driver, injected: outcome.injected, serial: outcome.serial,
    serialBytesDiscarded: outcome.serialBytesDiscarded, link: analyser.decoder.statistics,
    telemetryFrames: analyser.telemetryFrames,
    lastFrameSeconds: analyser.lastFrameTime.map {
      Double($0.nanoseconds(since: motionStart)) * 1e-9
    }, repliesOK: analyser.repliesOK,
    repliesError: analyser.repliesError, garbageBytesSent: outcome.garbageBytes,
    unidentifiedFrames: analyser.unidentifiedFrames, frameLatency: analyser.frameLatency,
    hostLatency: analyser.hostLatency, interArrival: analyser.interArrival,
    monitorBytesPassed: outcome.monitorBytesPassed,
    monitorBytesDropped: outcome.monitorBytesDropped, frameLatencyBins: analyser.frameLatencyBins,
    hostLatencyBins: analyser.hostLatencyBins,
    interArrivalBins: analyser.interArrivalBins,
    arrivalRateHz: arrivalRate, series: analyser.series,
    frames: analyser.frames, bytes: outcome.bytes,
    chipStretches: outcome.chipWatch.finished(at: outcome.endTime, motionStart: motionStart),
    chipStretchCount: outcome.chipWatch.count + (outcome.chipWatch.unfinished == nil ? 0 : 1))
  result.interrupted = outcome.interrupted
  result.truthRows = analyser.truthRows
  result.calibrationID = options.calibration.map { hexWord($0.id) }
  result.plainFilterSeconds = options.plainFilterSeconds
  result.boardPath = options.boardPath
  result.sampleRateHz = validated.sampleRateHertz
  return result
}

/// The state of one run while it goes.
private struct Session {
  struct Outcome {
    var status: FirmwareStatus
    var driver: MPU6050Counters
    var injected: SimulatedMPU6050Injection
    var lastFrame: FrameRecord?
    var startup: MPU6050StartupReport?
    var serial: SerialStatistics
    var serialBytesDiscarded: UInt64
    var garbageBytes: UInt64
    var endTime: Timestamp
    var bytes: [UInt8]
    var chipWatch: ChipWatch
    var monitorBytesPassed: UInt64 = 0
    var monitorBytesDropped: UInt64 = 0
    var interrupted = false
  }

  let options: HILOptions
  let board: SimulatedMPU6050Board
  let analyser: HostAnalyser
  let ledger: SampleLedger
  let motionStart: Timestamp
  let end: Timestamp
  let progress: ((Double) -> Void)?
  var garbage: GarbageSource
  var commands: [ScheduledCommand]
  var kept: [UInt8] = []
  var lastLoopSequence: UInt32 = 0
  var nextProgress: Timestamp
  var chipWatch = ChipWatch()

  init(
    options: HILOptions, board: SimulatedMPU6050Board, analyser: HostAnalyser,
    ledger: SampleLedger, motionStart: Timestamp, end: Timestamp,
    progress: ((Double) -> Void)?
  ) {
    self.options = options
    self.board = board
    self.analyser = analyser
    self.ledger = ledger
    self.motionStart = motionStart
    self.end = end
    self.progress = progress
    garbage = GarbageSource(bursts: options.commandGarbage, seed: options.seed, start: motionStart)
    commands = options.hostCommands.sorted { $0.atSeconds < $1.atSeconds }
    nextProgress = motionStart + .seconds(60)
  }

  var clock: ManualClock { board.clock }

  /// Host-side input due now: garbage and command lines.
  mutating func hostInput() -> [UInt8] {
    var bytes = garbage.bytes(until: clock.now())
    let now = Double(clock.now().nanoseconds(since: motionStart)) * 1e-9
    while let first = commands.first, first.atSeconds <= now {
      bytes += Array(first.line.utf8) + [0x0A]
      commands.removeFirst()
    }
    return bytes
  }

  mutating func afterStep<Port: SerialPort>(
    _ loop: FirmwareLoop<SimulatedI2CBus, SimulatedDataReadyLine, Port, ManualClock>
  ) {
    let frame = loop.lastFrame
    if frame.sequence != lastLoopSequence {
      lastLoopSequence = frame.sequence
      if options.format == .mavlink {
        analyser.noteLoopFrame(
          FrameRecord(
            sequence: frame.sequence,
            sampleTime: Timestamp(nanoseconds: frame.sampleTimeNanoseconds),
            missedSamples: frame.missedSamples), flags: frame.flags)
      }
    }
    chipWatch.check(board.chip, at: clock.now(), motionStart: motionStart)
    if let progress, clock.now() >= nextProgress {
      nextProgress = nextProgress + .seconds(60)
      progress(Double(clock.now().nanoseconds(since: motionStart)) * 1e-9)
    }
  }

  static func record(of frame: TelemetryFrame) -> FrameRecord? {
    guard frame.sequence > 0 else { return nil }
    return FrameRecord(
      sequence: frame.sequence, sampleTime: Timestamp(nanoseconds: frame.sampleTimeNanoseconds),
      missedSamples: frame.missedSamples)
  }

  // MARK: - On the manual clock

  mutating func runOnManualClock(settings: FirmwareSettings, port: MemorySerialPort)
    throws(HILError) -> Outcome
  {
    var loop: FirmwareLoop<SimulatedI2CBus, SimulatedDataReadyLine, MemorySerialPort, ManualClock>
    let startup: MPU6050StartupReport
    do {
      loop = try FirmwareLoop(
        bus: board.bus, line: board.line, port: port, clock: clock, settings: settings)
      startup = try loop.start()
    } catch {
      throw .startFailed(error.description)
    }
    ledger.startStreaming(at: clock.now())
    chipWatch.arm(board.chip)
    var buffer: [UInt8] = []
    buffer.reserveCapacity(1 << 16)
    var stalls = board.faultPlan.hostStalls[...]
    var interrupted = false
    while clock.now() < end {
      if let stop = options.shouldStop, stop() {
        interrupted = true
        break
      }
      if let stall = stalls.first, stall.at <= clock.now() {
        clock.advance(by: stall.duration)
        stalls = stalls.dropFirst()
      }
      let input = hostInput()
      if !input.isEmpty { port.inject(input) }
      loop.step()
      afterStep(loop)
      port.takeWritten(into: &buffer)
      consume(&buffer)
    }
    let endTime = clock.now()
    // The chip's production up to the end of the run (it advances lazily), then no more.
    _ = board.chip.statistics
    ledger.close(at: endTime)
    let status = loop.status
    let lastFrame = Self.record(of: loop.lastFrame)
    let injected = board.injected
    loop.finish()
    // Let the UART send what it holds (nothing new is made).
    var waits = 0
    while port.bufferedOutputCount > 0 && waits < 200 {
      clock.advance(by: .milliseconds(10))
      waits += 1
    }
    port.takeWritten(into: &buffer)
    consume(&buffer)
    return Outcome(
      status: status, driver: loop.driver.counters, injected: injected, lastFrame: lastFrame,
      startup: startup, serial: port.statistics, serialBytesDiscarded: port.discardedBytes,
      garbageBytes: garbage.sent, endTime: endTime, bytes: kept, chipWatch: chipWatch,
      interrupted: interrupted)
  }

  mutating func consume(_ buffer: inout [UInt8]) {
    guard !buffer.isEmpty else { return }
    analyser.consume(buffer)
    if options.keepBytes { kept += buffer }
    buffer.removeAll(keepingCapacity: true)
  }

  // MARK: - In real time, over a pseudo-terminal

  mutating func runRealTime<Platform: HILRealTimeHost>(
    settings: FirmwareSettings, host platform: Platform
  ) throws(HILError) -> Outcome {
    let host: PseudoTerminalSerialPort
    let port: Platform.Port
    var tap: PseudoTerminalSerialPort? = nil
    do {
      host = try PseudoTerminalSerialPort()
      port = try platform.openSerialPort(path: host.terminalPath, baudRate: settings.baudRate)
      if let link = options.monitorLinkPath { tap = try PseudoTerminalSerialPort(linkPath: link) }
    } catch {
      throw .pseudoTerminal(error.description)
    }
    defer { tap?.close() }
    var loop: FirmwareLoop<SimulatedI2CBus, SimulatedDataReadyLine, Platform.Port, ManualClock>
    let startup: MPU6050StartupReport
    do {
      loop = try FirmwareLoop(
        bus: board.bus, line: board.line, port: port, clock: clock, settings: settings)
      startup = try loop.start()
    } catch {
      throw .startFailed(error.description)
    }
    ledger.startStreaming(at: clock.now())
    chipWatch.arm(board.chip)
    let wall = platform.wallClock()
    let simulatedStart = clock.now()
    let realStart = wall.now()
    let offset = realStart.nanoseconds - simulatedStart.nanoseconds
    analyser.realTimeOffsetNanoseconds = offset
    var reader = HostReader(host: host, tap: tap, wall: wall)
    var stalls = board.faultPlan.hostStalls[...]
    var interrupted = false
    while clock.now() < end {
      if let stop = options.shouldStop, stop() {
        interrupted = true
        break
      }
      // Hold the simulated world to the wall: wait (reading the host side) until the chip's
      // next sample is due, then let the loop take it.
      if let next = board.chip.nextSampleTime {
        reader.read(until: Timestamp(nanoseconds: next.nanoseconds + offset), into: analyser)
      }
      if let stall = stalls.first, stall.at <= clock.now() {
        clock.advance(by: stall.duration)
        stalls = stalls.dropFirst()
      }
      let input = hostInput()
      if !input.isEmpty {
        input.withUnsafeBytes { bytes in _ = try? host.write(bytes) }
      }
      loop.step()
      afterStep(loop)
      reader.read(until: Timestamp(nanoseconds: clock.now().nanoseconds + offset), into: analyser)
    }
    let endTime = clock.now()
    _ = board.chip.statistics
    ledger.close(at: endTime)
    let status = loop.status
    let lastFrame = Self.record(of: loop.lastFrame)
    let injected = board.injected
    loop.finish()
    // The last frames cross the pseudo-terminal: read for 100 ms more.
    reader.read(until: wall.now().advanced(byNanoseconds: 100_000_000), into: analyser)
    if options.keepBytes { kept = reader.kept }
    host.close()
    return Outcome(
      status: status, driver: loop.driver.counters, injected: injected, lastFrame: lastFrame,
      startup: startup, serial: port.statistics, serialBytesDiscarded: 0,
      garbageBytes: garbage.sent, endTime: endTime, bytes: kept, chipWatch: chipWatch,
      monitorBytesPassed: reader.tapPassed, monitorBytesDropped: reader.tapDropped,
      interrupted: interrupted)
  }
}

/// A stretch of motion time in which the chip's configuration was not what the driver set.
public struct ChipStretch: Hashable, Sendable {
  public var fromSeconds: Double
  /// `nil`: still wrong when the run ended.
  public var untilSeconds: Double?
  public var durationSeconds: Double? { untilSeconds.map { $0 - fromSeconds } }
}

/// Watches the simulated chip's configuration registers after every loop step (a simulator
/// probe: `SimulatedMPU6050.peek`, no bus traffic).
struct ChipWatch {
  /// SMPLRT_DIV, CONFIG, GYRO_CONFIG, ACCEL_CONFIG, PWR_MGMT_1 (RM §3).
  static let registers: [UInt8] = [0x19, 0x1A, 0x1B, 0x1C, 0x6B]
  private var expected: [UInt8] = []
  private var open: Double?
  private(set) var stretches: [ChipStretch] = []
  private(set) var count = 0

  mutating func arm(_ chip: SimulatedMPU6050) {
    expected = Self.registers.map { chip.peek($0) }
  }

  mutating func check(_ chip: SimulatedMPU6050, at time: Timestamp, motionStart: Timestamp) {
    guard !expected.isEmpty else { return }
    var same = true
    var index = 0
    while index < expected.count {
      if chip.peek(Self.registers[index]) != expected[index] {
        same = false
        break
      }
      index += 1
    }
    let seconds = Double(time.nanoseconds(since: motionStart)) * 1e-9
    if !same, open == nil {
      open = seconds
    } else if same, let from = open {
      open = nil
      count += 1
      if stretches.count < 1000 {
        stretches.append(ChipStretch(fromSeconds: from, untilSeconds: seconds))
      }
    }
  }

  /// The stretch still open at the end, if any.
  var unfinished: Double? { open }

  /// The stretches, with the one still open at `end` (its end unknown).
  func finished(at end: Timestamp, motionStart: Timestamp) -> [ChipStretch] {
    guard let open else { return stretches }
    return stretches + [ChipStretch(fromSeconds: open, untilSeconds: nil)]
  }
}

/// Reads the host end of the pseudo-terminal while waiting for a deadline on the wall clock,
/// stamping each read with its arrival time (to 0.25 ms: the pause between reads).
/// With a `tap`, every chunk read is also written to it, without waiting: what it cannot take
/// is counted, never retried (a monitor that is slow or absent must not change the run).
private struct HostReader<Wall: MonotonicClock> {
  let host: PseudoTerminalSerialPort
  let tap: PseudoTerminalSerialPort?
  var wall: Wall
  var buffer = [UInt8](repeating: 0, count: 4096)
  var kept: [UInt8] = []
  var tapPassed: UInt64 = 0
  var tapDropped: UInt64 = 0

  init(host: PseudoTerminalSerialPort, tap: PseudoTerminalSerialPort?, wall: Wall) {
    self.host = host
    self.tap = tap
    self.wall = wall
  }

  mutating func read(until deadline: Timestamp, into analyser: HostAnalyser) {
    while true {
      drain(into: analyser)
      let now = wall.now()
      if now >= deadline { return }
      wall.sleep(until: min(deadline, now.advanced(byNanoseconds: 250_000)))
    }
  }

  private mutating func drain(into analyser: HostAnalyser) {
    while true {
      var count = 0
      let host = self.host
      buffer.withUnsafeMutableBytes { bytes in
        count = (try? host.read(into: bytes)) ?? 0
      }
      guard count > 0 else { return }
      let arrival = wall.now().nanoseconds
      var written = 0
      let tap = self.tap
      buffer.withUnsafeBytes { bytes in
        let chunk = UnsafeRawBufferPointer(rebasing: bytes[0..<count])
        analyser.consume(chunk, arrival: arrival)
        if let tap { written = (try? tap.write(chunk)) ?? 0 }
      }
      if tap != nil {
        tapPassed += UInt64(written)
        tapDropped += UInt64(count - written)
      }
      kept += buffer[0..<count]
    }
  }
}

/// Random bytes for the command input, at the rates the bursts ask for, from a seeded stream.
struct GarbageSource {
  let bursts: [GarbageBurst]
  let start: Timestamp
  var random: SeededGenerator
  var last: Timestamp
  var carried = 0.0
  private(set) var sent: UInt64 = 0

  init(bursts: [GarbageBurst], seed: UInt64, start: Timestamp) {
    self.bursts = bursts.sorted { $0.atSeconds < $1.atSeconds }
    self.start = start
    random = SeededGenerator(seed: seed, stream: 77)
    last = start
  }

  /// The bytes due between the last call and `now`.
  mutating func bytes(until now: Timestamp) -> [UInt8] {
    guard !bursts.isEmpty, now > last else { return [] }
    let from = Double(last.nanoseconds(since: start)) * 1e-9
    let to = Double(now.nanoseconds(since: start)) * 1e-9
    last = now
    var due = carried
    for burst in bursts {
      let overlap =
        min(to, burst.atSeconds + burst.forSeconds) - max(from, burst.atSeconds)
      if overlap > 0 { due += overlap * Double(burst.bytesPerSecond) }
    }
    let count = Int(due.rounded(.down))
    carried = due - Double(count)
    guard count > 0 else { return [] }
    sent += UInt64(count)
    var bytes = [UInt8](repeating: 0, count: count)
    for index in 0..<count { bytes[index] = UInt8(truncatingIfNeeded: random.next() >> 56) }
    return bytes
  }
}
