import AttitudeEstimation
import Geometry
import HardwareAbstraction
import MPU6050
import Telemetry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where a sample came from, for recordings and health flags.
public enum SampleOrigin: UInt8, Hashable, Sendable {
  /// Read at a data-ready edge; the time is the kernel's edge timestamp.
  case edge = 0
  /// Read by polling INT_STATUS; the time is the poll's (an estimate, within a quarter period).
  case polled = 1
  /// Read from the FIFO; the time is reconstructed from the chip's period.
  case fifo = 2
}

/// One sample as the loop consumed it: the raw register bytes and the time it was given. The
/// determinism contract (DESIGN.md) is stated over exactly this sequence: the same samples in
/// the same order give byte-identical frames.
public struct ConsumedSample: Hashable, Sendable {
  public var time: Timestamp
  public var raw: MPU6050RawSample
  public var origin: SampleOrigin
  /// The loop's sample counter (1 for the first sample after warm-up; warm-up samples are 0).
  public var index: UInt64
}

/// Why the loop could not start.
public enum FirmwareStartError: Error, CustomStringConvertible, Sendable {
  /// The settings are inconsistent (the message says what and how to fix it).
  case invalidSettings(String)
  /// The driver could not bring the chip up.
  case sensor(MPU6050Error)
  /// The data-ready line failed while start-up drained it.
  case dataReady(DataReadyError)

  public var description: String {
    switch self {
    case .invalidSettings(let message): message
    case .sensor(let error): error.description
    case .dataReady(let error): error.description
    }
  }
}

/// The 100 Hz firmware loop (DESIGN.md, "The sample path"): edge → burst read → calibration and
/// mounting → sample clock → estimation → frame → non-blocking write → command poll.
///
/// Single-threaded and synchronous. It owns its hardware (handed in; no globals). Nothing on the
/// sample path allocates, locks, or reads a wall clock: time comes from the data-ready edges
/// and from `Clock` (CLOCK_MONOTONIC on a board, a `ManualClock` in simulation), so the same
/// (edge time, register bytes) sequence gives byte-identical frames.
///
/// The chip is the metronome: the loop waits on the data-ready line, never on a timer, while
/// edges arrive. When no edge comes within three periods it diagnoses the chip, polls
/// INT_STATUS on an absolute-deadline timer (frames flagged `degradedTiming`), and returns to
/// interrupt mode at the next edge. A board whose INT pin is not wired drains the FIFO on a timer
/// from the start.
public struct FirmwareLoop<
  Bus: I2CBus, Line: DataReadyLine, Port: SerialPort, Clock: MonotonicClock
> {
  public private(set) var driver: MPU6050Driver<Bus>
  public private(set) var line: Line
  public private(set) var port: Port
  public private(set) var clock: Clock
  public let settings: FirmwareSettings
  public private(set) var estimator: AttitudeEstimator
  public private(set) var status = FirmwareStatus()
  /// The last frame queued (what a host would see next).
  public private(set) var lastFrame = TelemetryFrame()
  /// The last estimate.
  public var lastEstimate: AttitudeEstimate? { hasEstimate ? estimate : nil }
  /// The last estimate once `hasEstimate`, kept unwrapped and stored in place: stored into an
  /// optional, the estimator's result would be copied twice (192 bytes) per sample.
  /// `emitFrame` reads it from here rather than taking it as an argument (a copy too).
  private var estimate: AttitudeEstimate
  private var hasEstimate = false
  /// What start-up reported.
  public private(set) var startupReport: MPU6050StartupReport?
  /// The current output format and rate (commands may change them).
  public private(set) var format: TelemetryFormat
  public private(set) var outputRateHz: Int
  /// MAVLink's stream rates now, as asked (parameters and SET_MESSAGE_INTERVAL change them).
  public private(set) var mavlinkRates: MAVLinkStreamRates
  /// Counts the parameter changes obeyed (including `rate` commands): a runtime that keeps
  /// parameters saves them when this moves (`parameterValue(_:)` has the values).
  public private(set) var parameterChanges: UInt64 = 0
  /// Called for every sample the loop consumes (after warm-up), in order: recordings and
  /// hardware-in-the-loop checks hang here. Set once; calling it does not allocate.
  public var onSample: ((ConsumedSample) -> Void)?
  /// When set, told every reading, fallback-timer wake-up, discarded edge, missed-sample count
  /// and obeyed host command, in order (`FirmwareLoopObserver`): a recording hangs here, and
  /// with the driver's bus tapped too, a replay through the same loop gives the same frames.
  public var observer: (any FirmwareLoopObserver)?
  /// When set, the MAVLink stream goes to this link as well (a datagram per frame, and one per
  /// answer), and packets arriving on it are answered like the serial line's
  /// (`--mavlink-udp`). A send that fails is counted by the link; it never stalls the loop.
  public var datagramLink: (any DatagramLink)? {
    didSet { hasDatagramLink = datagramLink != nil }
  }
  /// Whether `datagramLink` is set, kept so the loop need not open the existential to ask
  /// (some 40 instructions a sample).
  private(set) var hasDatagramLink = false

  // Internal, not private: the MAVLink component (FirmwareLoop+MAVLink.swift) uses them.
  var encoder: TelemetryEncoder
  var mavlinkState: MAVLinkComponentState
  private var parser: HostCommandParser
  let queue: TransmitQueue
  let scratch: ScratchBuffers
  private var fifoSamples: [MPU6050Sample]
  private let periodNanoseconds: Int64
  private let sampleRateHz: Int
  private var outputDivider: UInt64
  private var mode: TimingMode
  private var modeSince: Timestamp = .zero
  private var lastEdgeTime: Timestamp?
  private var nextTimer: Timestamp = .zero
  private var samplesSinceStart: UInt64 = 0
  private var frameSequence: UInt32 = 0
  private var headingTare = Quaternion.identity
  /// The variance of the tilt error an accelerometer offset makes, rad², which the estimator
  /// cannot see (it takes the corrected reading for gravity's direction), added to its tilt
  /// uncertainty in the frames: the MPU-6050's zero-g tolerance without a calibration (PS
  /// §6.2: ±50 mg on x and y, taken as 2σ: 25 mg, 1.4°), a 2 mg residual with one (0.11°).
  private let accelerometerTiltVariance: Double
  private var pendingFlags: TelemetryFlags = []
  /// Whether an estimate has left the estimator's start-up window: after that, an estimator
  /// that averages the accelerometer again (its tilt restarted after a gap) is `recovering`,
  /// not `initialising`, on the wire (a ground station shows BOOT for `initialising`).
  private var hasConverged = false
  /// The driver's configuration mismatches when the last sample was estimated: a new one means
  /// the samples the driver says (`misreadNanosecondsBeforeLastMismatch`) may have been
  /// converted with a wrong scale.
  private var configurationMismatchesSeen: UInt64 = 0
  private var nextReopen: Timestamp?
  /// Bytes (in units of 10⁻⁹ byte) replies may still use: they earn the link's capacity left
  /// over by the frames (at least the 15 % `LinkBudget` keeps free) and a command is parsed only
  /// when a whole reply is covered, so a flood of commands is answered at the pace the line
  /// carries and never delays or drops a frame. At most `replyBurstBytes` are saved up.
  private var replyCredit: Int64 = FirmwareLoop.replyBurstBytes * 1_000_000_000
  private var replyCreditTime: Timestamp?
  /// Frame latencies summed since SYS_STATUS's figures were last brought up to date, µs, the
  /// frames they are of, and the drop count then (`refreshHealth`).
  private var latencySumMicroseconds: UInt64 = 0
  /// Samples until `refreshHealth` (a countdown: a 64-bit `%` a sample costs more).
  private var samplesUntilHealth = 0
  private var latencyFrames: UInt64 = 0
  private var healthFramesQueued: UInt64 = 0
  private var healthFramesDropped: UInt64 = 0
  /// `gimbalLockSineThreshold`, read once (see `isNearGimbalLock`).
  private let gimbalLockSine = gimbalLockSineThreshold
  private var started = false
  /// How far the estimate's attitude lags its sample's time, seconds (negative: leads): the
  /// gyro low-pass filter's delay (RM §4.3: the sample describes the motion that long before its
  /// data-ready edge) less half a period (each rate is integrated over the interval before its
  /// sample, as if it were that interval's mean). A frame's attitude is carried forward by it,
  /// so that it holds at the frame's time: −0.2 ms at 100 Hz with the 44 Hz filter, 4.3 ms at
  /// 1 kHz, −6.6 ms at 25 Hz with the 10 Hz filter (`FilterDelayTests`).
  private let attitudeLagSeconds: Double

  /// A loop over the given hardware. Validates the settings; touches no hardware.
  public init(
    bus: Bus, line: Line, port: Port, clock: Clock, settings: FirmwareSettings
  ) throws(FirmwareStartError) {
    if let problem = settings.problem { throw .invalidSettings(problem) }
    do {
      driver = try MPU6050Driver(
        bus: bus, address: settings.address, configuration: settings.sensor,
        policy: settings.recoveryPolicy)
    } catch {
      throw .sensor(error)
    }
    self.line = line
    self.port = port
    self.clock = clock
    self.settings = settings
    // The estimator's clock starts from the rate the chip is configured for, whatever the
    // estimator settings say (their default is 100 Hz). Started at 100 Hz on a 25 Hz chip it
    // would take every 40 ms interval for a gap of three missed samples until it re-acquired
    // the period, and count them as missed in the status, the frames and a recording.
    var estimatorSettings = settings.estimator
    let calibrated =
      settings.correction.accelerometerOffset != .zero
      || settings.correction.accelerometerMatrix != .identity
    accelerometerTiltVariance = calibrated ? 0.002 * 0.002 : 0.025 * 0.025
    estimatorSettings.sampleClock.nominalPeriodSeconds = 1 / driver.configuration.sampleRateHertz
    estimator = AttitudeEstimator(settings: estimatorSettings)
    estimate = AttitudeEstimate(
      timestampNanoseconds: 0, attitude: .identity, gravityInBody: Vector3(0, 0, -1),
      linearAccelerationMetersPerSecondSquared: .zero, angularRateRadiansPerSecond: .zero,
      gyroBiasRadiansPerSecond: .zero, gyroBiasVariance: .zero, flags: [], missedSamples: 0,
      integrationIntervalSeconds: 0, samplePeriodSeconds: 0)
    format = settings.format
    outputRateHz = settings.outputRateHz
    mavlinkRates = settings.mavlinkRates
    encoder = TelemetryEncoder(
      format: settings.format, outputRateHz: settings.outputRateHz, mavlink: settings.mavlink,
      mavlinkRates: settings.mavlinkRates)
    mavlinkState = MAVLinkComponentState(
      identity: settings.mavlink, firmwareVersion: settings.firmwareVersion)
    parser = HostCommandParser()
    queue = TransmitQueue(capacity: settings.transmitQueueBytes)
    // Host input is read as fast as the parser looks at it (128 bytes a sample: 12 800 B/s at
    // 100 Hz, more than 115200 baud brings), so noise at the full line rate never backs up
    // ahead of a command.
    scratch = ScratchBuffers(
      frameBytes: max(
        TelemetryEncoder.maximumFrameBytes, TelemetryEncoder.maximumReplyBytes,
        MAVLink.maximumSentPacketCount),
      inputBytes: HostCommandParser.Configuration().bytesPerPoll,
      datagramBytes: ScratchBuffers.datagramBytes)
    fifoSamples = []
    fifoSamples.reserveCapacity(128)
    periodNanoseconds = driver.configuration.samplePeriodNanoseconds
    attitudeLagSeconds =
      driver.configuration.configuration.lowPassFilter.gyroDelaySeconds - 0.5
      / driver.configuration.sampleRateHertz
    sampleRateHz = Int(driver.configuration.sampleRateHertz.rounded())
    outputDivider = UInt64(max(1, sampleRateHz / max(1, settings.outputRateHz)))
    mode = settings.interruptWired ? .interrupt : .fifo
    samplesUntilHealth = max(1, sampleRateHz)
  }

  // MARK: - Start-up

  /// Identifies, resets, configures and (optionally) self-tests the chip, drops the edges that
  /// queued meanwhile, and arms the timing mode. The warm-up samples are discarded by `step()`.
  @discardableResult
  public mutating func start() throws(FirmwareStartError) -> MPU6050StartupReport {
    let report: MPU6050StartupReport
    do {
      report = try driver.start(clock: &clock, selfTest: settings.selfTest)
    } catch {
      throw .sensor(error)
    }
    startupReport = report
    // Edges raised while the chip settled belong to samples nobody will read.
    do {
      while case .edge = try line.waitForEdge(until: .zero) {}
    } catch {
      throw .dataReady(error)
    }
    let now = clock.now()
    modeSince = now
    nextTimer = now
    status.mode = mode
    if mode == .fifo {
      _ = driver.enableFIFO(at: now)
      nextTimer = now.advanced(byNanoseconds: fifoDrainInterval)
    }
    started = true
    return report
  }

  // MARK: - The loop

  /// One iteration: wait for the next sample (edge, poll or FIFO drain), process it, write,
  /// and poll host commands. Returns after at most three sample periods.
  public mutating func step() {
    status.ticks += 1
    switch mode {
    case .interrupt: stepInterrupt()
    case .polling: stepPolling()
    case .fifo: stepFIFO()
    }
    pollCommands()
    flush()
  }

  /// Runs `step()` until `shouldStop` says so (checked before every iteration).
  public mutating func run(until shouldStop: () -> Bool) {
    while !shouldStop() { step() }
  }

  /// Clean shutdown: writes what is queued (trying for up to `flushTimeout` on the loop's clock)
  /// and closes the port.
  public mutating func finish(flushTimeout: Duration = .milliseconds(200)) {
    let deadline = clock.now() + flushTimeout
    while !queue.isEmpty && port.isOpen {
      flush()
      if queue.isEmpty || clock.now() >= deadline { break }
      clock.sleep(until: min(deadline, clock.now() + .milliseconds(2)))
    }
    status.bytesNeverSent += UInt64(queue.removeAll())
    port.close()
  }

  private var fifoDrainInterval: Int64 { periodNanoseconds * 95 / 100 }
  private var pollInterval: Int64 { max(periodNanoseconds / 4, 250_000) }

  private mutating func stepInterrupt() {
    let anchor = max(lastEdgeTime ?? modeSince, modeSince)
    let deadline = anchor.advanced(byNanoseconds: 3 * periodNanoseconds)
    let wait: EdgeWait
    do {
      wait = try line.waitForEdge(until: deadline)
    } catch {
      // The line itself failed (EIO on the chip device): treat as no edges.
      wait = .timedOut
    }
    switch wait {
    case .edge(let time):
      handleEdge(at: time)
    case .timedOut:
      status.edgeTimeouts += 1
      let now = timerWoke(deadline: deadline)
      _ = driver.diagnoseMissingEdges(at: now)
      mode = .polling
      status.mode = .polling
      status.fallbackEntries += 1
      modeSince = now
      nextTimer = now.advanced(byNanoseconds: pollInterval)
      pendingFlags.insert(.degradedTiming)
    }
  }

  private mutating func stepPolling() {
    let wait: EdgeWait
    do {
      wait = try line.waitForEdge(until: nextTimer)
    } catch {
      wait = .timedOut
    }
    switch wait {
    case .edge(let time):
      // Edges are back: interrupt mode again, starting with this one.
      mode = .interrupt
      status.mode = .interrupt
      status.fallbackExits += 1
      modeSince = time
      handleEdge(at: time)
    case .timedOut:
      let now = timerWoke(deadline: nextTimer)
      nextTimer = nextTimer.advanced(byNanoseconds: pollInterval)
      if nextTimer <= now { nextTimer = now.advanced(byNanoseconds: pollInterval) }
      let reading = driver.pollDataReady(at: now)
      observer?.loopRead(reading, at: now, origin: .polled)
      consume(reading, at: now, origin: .polled)
    }
  }

  private mutating func stepFIFO() {
    let now = timerWoke(deadline: nextTimer)
    nextTimer = nextTimer.advanced(byNanoseconds: fifoDrainInterval)
    if nextTimer <= now { nextTimer = now.advanced(byNanoseconds: fifoDrainInterval) }
    var collected = fifoSamples
    fifoSamples = []
    collected.removeAll(keepingCapacity: true)
    let drain = driver.drainFIFO(clock: clock) { sample, _ in
      if collected.count < collected.capacity { collected.append(sample) }
    }
    fifoSamples = collected
    if drain.unavailable != nil {
      status.unavailableReads += 1
      pendingFlags.insert(.i2cRecovery)
    }
    if drain.samplesLost > 0 {
      status.fifoSamplesLost += UInt64(drain.samplesLost)
      status.missedSamples += UInt64(drain.samplesLost)
    }
    guard !fifoSamples.isEmpty else { return }
    let newest = driver.fifoNewestSampleTimeEstimate ?? now
    let count = fifoSamples.count
    for index in 0..<count {
      let time = newest.advanced(byNanoseconds: -Int64(count - 1 - index) * periodNanoseconds)
      observer?.loopDrainedFIFOSample(fifoSamples[index], at: time)
      process(fifoSamples[index], at: time, origin: .fifo)
    }
  }

  /// After the fallback timer's deadline: sleeps until it (a no-op after a line wait that timed
  /// out there; a replay's clock moves to the recorded wake-up instead, which reproduces a loop
  /// that woke late), notes the wake-up in the recording, and returns the time.
  private mutating func timerWoke(deadline: Timestamp) -> Timestamp {
    clock.sleep(until: deadline)
    let now = clock.now()
    observer?.loopWokeFromTimer(at: now)
    return now
  }

  private mutating func handleEdge(at time: Timestamp) {
    status.edges += 1
    if let last = lastEdgeTime, time == last {
      status.duplicateEdges += 1
      observer?.loopDiscardedEdge(at: time)
      return
    }
    lastEdgeTime = time
    if clock.now().nanoseconds(since: time) > periodNanoseconds { status.overruns += 1 }
    let reading = driver.readSample(at: time)
    observer?.loopRead(reading, at: time, origin: .edge)
    consume(reading, at: time, origin: .edge)
  }

  private mutating func consume(_ reading: MPU6050Reading, at time: Timestamp, origin: SampleOrigin)
  {
    switch reading {
    case .sample(let sample, let isRepeat):
      if isRepeat {
        status.repeatedSamples += 1
        return
      }
      process(sample, at: time, origin: origin)
    case .unavailable(let reason):
      if case .noNewSample = reason { return }
      status.unavailableReads += 1
      pendingFlags.insert(.i2cRecovery)
    }
  }

  private mutating func process(_ sample: MPU6050Sample, at time: Timestamp, origin: SampleOrigin) {
    if samplesSinceStart < UInt64(settings.warmUpSamples) {
      samplesSinceStart += 1
      status.warmUpSamplesDiscarded += 1
      return
    }
    samplesSinceStart += 1
    status.samples += 1
    if origin != .edge { status.degradedSamples += 1 }
    samplesUntilHealth -= 1
    if samplesUntilHealth <= 0 {
      samplesUntilHealth = max(1, sampleRateHz)
      refreshHealth()
    }
    onSample?(ConsumedSample(time: time, raw: sample.raw, origin: origin, index: status.samples))

    // The correction is used in place, not copied out: it is some 60 words (matrices and the
    // bias model), and a copy of it was 15 instructions a sample.
    let gyro = sample.angularRateRadiansPerSecond
    let accel = sample.specificForceMetersPerSecondSquared
    let rate = settings.correction.angularRate(
      sensor: Vector3(gyro.x, gyro.y, gyro.z), temperatureCelsius: sample.temperatureCelsius)
    let force = settings.correction.specificForce(sensor: Vector3(accel.x, accel.y, accel.z))
    let input = InertialSample(
      timestampNanoseconds: time.nanoseconds, angularRateRadiansPerSecond: rate,
      specificForceMetersPerSecondSquared: force, temperatureCelsius: sample.temperatureCelsius,
      isClipped: !sample.clipping.isEmpty)
    let mismatches = driver.counters.configurationMismatches
    if mismatches != configurationMismatchesSeen {
      // The driver found a control register changed and rewrote it: a recovery of the chip,
      // flagged `i2cRecovery` on this frame. The samples it says may have been misread
      // (`misreadNanosecondsBeforeLastMismatch`: since its previous read-back, a second at
      // most, when the once-a-second read-back found the change) had their frames sent
      // already: the estimator judges them as a gap — the tilt restarted when it may have
      // changed, the heading flagged `headingUncertain` (`AttitudeEstimator.GapSettings`).
      // When an early read-back caught a full-scale change at the first sample it affected,
      // that sample was withheld (`.configurationRestored`, a dropped sample) and nothing
      // delivered was misread: nothing more to distrust (0 s).
      configurationMismatchesSeen = mismatches
      pendingFlags.insert(.i2cRecovery)
      estimator.distrustRecentSamples(
        seconds: Double(driver.misreadNanosecondsBeforeLastMismatch) * 1e-9)
    }
    estimate = estimator.update(input)
    hasEstimate = true
    if origin != .fifo, estimate.missedSamples > 0 {
      status.missedSamples += UInt64(estimate.missedSamples)
      observer?.loopMissedSamples(UInt32(clamping: estimate.missedSamples), at: time)
    }

    var flags = pendingFlags
    if origin != .edge { flags.insert(.degradedTiming) }
    // A frame for every sample (the divider is 1 when the output rate is the sample rate, the
    // usual case) needs no division: a 64-bit `%` is some twenty-five cycles per sample.
    guard outputDivider == 1 || (status.samples - 1) % outputDivider == 0 else {
      pendingFlags = flags
      return
    }
    pendingFlags = []
    emitFrame(sample: sample, flags: flags)
  }

  /// The estimate's attitude carried forward over `attitudeLagSeconds` at its bias-corrected
  /// rate: the attitude at the sample's time. Not at rest, where the attitude is held, nor for
  /// a sample that was not integrated. `q ⊗ exp(ω·lag)` by the third-order series (the angle is
  /// below 0.25 rad at 2000 °/s): no trigonometry, the same bits on every machine.
  /// (Static, on what it needs: as a method of the loop it makes the compiler copy the whole
  /// loop for every frame.)
  @inline(__always)
  private static func attitude(of estimate: AttitudeEstimate, carriedOver lag: Double)
    -> Quaternion
  {
    let q = estimate.attitude
    guard lag != 0, !estimate.flags.contains(.atRest), estimate.integrationIntervalSeconds > 0
    else { return q }
    let r = estimate.angularRateRadiansPerSecond * lag
    return q * Quaternion(smallRotationVector: r, squaredAngle: r.dot(r))
  }

  /// The frame for `estimate` (the one just made from `sample`).
  private mutating func emitFrame(sample: MPU6050Sample, flags extra: TelemetryFlags) {
    var flags = extra
    let e = estimate.flags
    if e.contains(.atRest) { flags.insert(.rest) }
    if e.contains(.gap) { flags.insert(.gap) }
    if e.contains(.clippedInput) { flags.insert(.clipping) }
    if e.contains(.accelerationRejected) { flags.insert(.accelerationRejected) }
    if e.contains(.headingUncertain) { flags.insert(.headingUncertain) }
    if e.contains(.recovering) { flags.insert(.recovering) }
    if e.contains(.initialising) {
      flags.insert(hasConverged ? .recovering : .initialising)
    } else {
      hasConverged = true
    }
    if settings.calibrationID != 0 { flags.insert(.calibrationLoaded) }
    if case .recovering = driver.state { flags.insert(.i2cRecovery) }

    let attitude =
      (headingTare * Self.attitude(of: estimate, carriedOver: attitudeLagSeconds)).normalized
    if Self.isNearGimbalLock(attitude, threshold: gimbalLockSine) {
      flags.insert(.gimbalLockNear)
    }
    let now = clock.now()
    let latency = max(
      0, now.nanoseconds(since: Timestamp(nanoseconds: estimate.timestampNanoseconds)))
    let latencyMicroseconds = UInt32(clamping: latency / 1000)
    status.lastLatencyMicroseconds = latencyMicroseconds
    status.maximumLatencyMicroseconds = max(status.maximumLatencyMicroseconds, latencyMicroseconds)
    latencySumMicroseconds &+= UInt64(latencyMicroseconds)
    latencyFrames &+= 1

    let g = settings.estimator.gravityMetersPerSecondSquared
    // The flag asked here, before the inlined method: there the compiler copied the gyro model
    // out of the settings before its own test of the flag.
    let staticBias =
      settings.correction.hasGyroscope
      ? settings.correction.staticGyroBiasInBody(atTemperature: sample.temperatureCelsius) : .zero
    // The uncertainties: the estimator's attitude σ (with the accelerometer offset's tilt) and
    // bias σ, and one sample's noise of each sensor at the current period. Computed here, into
    // locals, rather than in a method of `self` called inside the assignment below, where it
    // made the compiler copy the whole loop per frame (callgrind: 2 900 instructions a sample).
    let attitudeUncertainty = estimator.uncertainty
    let tiltSquared = attitudeUncertainty.tiltRadians * attitudeUncertainty.tiltRadians
    let gyroNoiseDensity = settings.estimator.noise.gyroNoiseDensity
    let accelerometerNoiseDensity = settings.estimator.noise.accelerometerNoiseDensity
    let period = estimate.samplePeriodSeconds
    let perSample = period > 0 ? 1 / period.squareRoot() : 0
    let uncertainty = EstimateUncertainty(
      tiltRadians: (tiltSquared + accelerometerTiltVariance).squareRoot(),
      headingRadians: attitudeUncertainty.headingRadians,
      gyroBiasRadiansPerSecond: estimate.gyroBiasUncertaintyRadiansPerSecond,
      gyroNoiseRadiansPerSecond: gyroNoiseDensity * perSample,
      accelerometerNoiseMetersPerSecondSquared: accelerometerNoiseDensity * perSample)
    frameSequence &+= 1
    // Built where it is kept and encoded from there: a frame is some 170 bytes, and a local
    // copy of it would cost two calls to memcpy per sample.
    lastFrame = TelemetryFrame(
      sequence: frameSequence, sampleTimeNanoseconds: estimate.timestampNanoseconds,
      attitude: attitude,
      gyroBiasRadiansPerSecond: staticBias + estimate.gyroBiasRadiansPerSecond,
      rateRadiansPerSecond: estimate.angularRateRadiansPerSecond,
      linearAccelerationMetersPerSecondSquared: attitude.rotate(
        estimate.linearAccelerationMetersPerSecondSquared),
      gravityBodyMetersPerSecondSquared: estimate.gravityInBody * g,
      temperatureCelsius: sample.temperatureCelsius, flags: flags,
      missedSamples: UInt32(clamping: status.missedSamples),
      latencyMicroseconds: latencyMicroseconds, calibrationID: settings.calibrationID,
      uncertainty: uncertainty)
    guard port.isOpen else {
      status.framesDroppedDisconnected += 1
      return
    }
    // Straight into the transmit queue when it has room for the longest frame in one piece
    // (almost always: it is drained after every frame); through the scratch buffer otherwise,
    // which queues the frame whole if it fits at all.
    if let room = queue.contiguousFreeSpace(atLeast: TelemetryEncoder.maximumFrameBytes) {
      let length = encoder.encode(lastFrame, into: room)
      if hasDatagramLink {
        _ = datagramLink!.send(UnsafeRawBufferPointer(rebasing: room[0..<length]))
      }
      queue.commit(length)
      status.framesQueued += 1
      return
    }
    let length = encoder.encode(lastFrame, into: scratch.frame)
    let bytes = UnsafeRawBufferPointer(rebasing: scratch.frame[0..<length])
    if hasDatagramLink { _ = datagramLink!.send(bytes) }
    if queue.enqueue(bytes) {
      status.framesQueued += 1
    } else {
      status.framesDroppedQueueFull += 1
    }
  }

  /// Brings SYS_STATUS's figures up to date (once a second of samples): the load is the mean
  /// frame latency over the sample period, the drop rate the frames dropped since the last
  /// time over those made.
  private mutating func refreshHealth() {
    var health = MAVLinkHealth()
    if latencyFrames > 0 {
      let periodMicroseconds = UInt64(max(1, periodNanoseconds / 1000))
      health.loadPermille = UInt16(
        clamping: latencySumMicroseconds * 1000 / (latencyFrames * periodMicroseconds))
    }
    let dropped = status.framesDroppedQueueFull + status.framesDroppedDisconnected
    let newDrops = dropped - healthFramesDropped
    let made = status.framesQueued - healthFramesQueued + newDrops
    if made > 0 { health.dropRateCentipercent = UInt16(clamping: newDrops * 10_000 / made) }
    let serial = mavlinkState.serialReceiver.statistics
    let datagram = mavlinkState.datagramReceiver.statistics
    health.communicationErrors = UInt16(
      clamping: serial.rejectedPackets + datagram.rejectedPackets + status.commandErrors)
    health.missedSamples = UInt16(clamping: status.missedSamples)
    health.failedReads = UInt16(clamping: driver.counters.failedReads)
    health.framesDropped = UInt16(clamping: dropped)
    health.repliesDropped = UInt16(clamping: status.repliesDropped)
    encoder.health = health
    latencySumMicroseconds = 0
    latencyFrames = 0
    healthFramesQueued = status.framesQueued
    healthFramesDropped = dropped
  }

  /// `attitude.eulerAngles().isNearGimbalLock`, the same test on the same numbers (the pitch
  /// from the normalised rotation matrix, against `EulerAngles.defaultGimbalLockMargin`)
  /// without the two `atan2` for yaw and roll the frame does not carry, and without the `asin`
  /// unless the answer hangs on it: asin is increasing, so |pitch| ≥ π/2 − margin exactly when
  /// |sin pitch| ≥ cos(margin); only within 1e-9 of that threshold (where the roundings of the
  /// two forms could disagree, some 1e-15 wide) is the pitch itself computed and compared.
  /// Of the matrix only `row2.x` is needed: it is computed here by `Matrix3(_:)`'s own
  /// expression, `2 * (x * z - w * y)`, so it has the same bits (Swift does not contract or
  /// reorder floating-point operations).
  ///
  /// `threshold` is `gimbalLockSineThreshold`; the loop passes its own copy of it, since reading
  /// the lazily initialised global costs a call to `swift_once` on every frame.
  static func isNearGimbalLock(
    _ attitude: Quaternion, threshold: Double = gimbalLockSineThreshold
  ) -> Bool {
    let q = attitude.normalized
    let row2x = 2 * (q.x * q.z - q.w * q.y)  // Matrix3(q).row2.x
    let sine = max(-1, min(1, -row2x))
    let magnitude = abs(sine)
    if magnitude < threshold - 1e-9 { return false }
    if magnitude > threshold + 1e-9 { return true }
    return abs(asin(sine)) >= .pi / 2 - EulerAngles.defaultGimbalLockMargin
  }

  // MARK: - Serial

  private mutating func flush() {
    guard port.isOpen else {
      reopenIfDue()
      return
    }
    do {
      try Self.drain(queue, into: &port)
    } catch {
      portFailed(error)
    }
  }

  /// Static, so the closure captures the port alone, not the generic loop (unspecialised code
  /// would look up `FirmwareLoop`'s metadata on every frame to reach `port` through it).
  private static func drain(_ queue: TransmitQueue, into port: inout Port) throws(SerialError) {
    try queue.drain { (bytes) throws(SerialError) -> Int in try port.write(bytes) }
  }

  private mutating func portFailed(_ error: SerialError) {
    guard
      error.isDisconnect || error.kind == .notOpen || error.kind == .ioError
        || error.kind == .outputFailed
    else { return }
    status.serialDisconnects += 1
    status.bytesNeverSent += UInt64(queue.removeAll())
    mavlinkState.serialReceiver.reset()
    port.close()
    nextReopen = clock.now() + settings.reopenInterval
  }

  private mutating func reopenIfDue() {
    let now = clock.now()
    guard let due = nextReopen, now >= due else {
      if nextReopen == nil { nextReopen = now + settings.reopenInterval }
      return
    }
    do {
      try port.reopen()
      status.serialReopens += 1
      nextReopen = nil
    } catch {
      nextReopen = now + settings.reopenInterval
    }
  }

  // MARK: - Host commands

  private mutating func pollCommands() {
    guard port.isOpen else { return }
    var room = min(scratch.input.count, parser.freeCapacity)
    if format == .mavlink { room = min(room, mavlinkInputRoom) }
    if room > 0 {
      let received: Int
      do {
        received = try port.read(
          into: UnsafeMutableRawBufferPointer(rebasing: scratch.input[0..<room]))
      } catch {
        portFailed(error)
        return
      }
      if received > 0 {
        let bytes = UnsafeRawBufferPointer(rebasing: scratch.input[0..<received])
        if format == .mavlink { receiveMAVLink(bytes, fromDatagram: false) }
        parser.receive(bytes)
      }
    }
    if hasDatagramLink { pollDatagrams() }
    if !mavlinkState.isIdle { sendMAVLinkAnswers() }
    // Without the credit for a reply the waiting bytes wait (the parser holds 256; the rest
    // stays in the kernel's buffer, and the host's writes block or are flow-controlled).
    let hasInput = parser.pendingBytes > 0
    if hasInput, !hasReplyCredit() { return }
    // The context (some 20 words) is made only when there is something to check against it.
    guard hasInput else {
      parser.pollWithNothingWaiting()
      return
    }
    let result = parser.poll(context: commandContext)
    if hasInput {
      let parsed = parser.statistics
      status.commandErrors = parsed.errorsReturned + parsed.errorsSuppressed
      status.commandErrorsUnanswered = parsed.errorsSuppressed
    }
    guard let result else { return }
    let reply: HostReply
    switch result {
    case .success(let command):
      reply = obey(command)
    case .failure(let error):
      reply = error.reply
    }
    queueReply(reply)
  }

  /// Executes a host command as if it had arrived on the serial line now (its reply is queued
  /// like any other): what a replay calls where the recording says a host command was obeyed.
  @discardableResult
  public mutating func obey(_ command: HostCommand) -> HostReply {
    status.commands += 1
    // Dated by the last sample processed, not the clock: a replay obeys the command right after
    // processing the same sample, so the frames after it are the same.
    observer?.loopObeyed(command, at: lastSampleTime)
    return execute(command)
  }

  /// What a command is checked against now (a replay parses recorded commands against it).
  public var commandContext: HostCommandContext {
    HostCommandContext(
      sampleRateHz: sampleRateHz, baudRate: settings.baudRate, format: format,
      outputRateHz: outputRateHz, mavlinkRates: mavlinkRates)
  }

  /// A parameter's value now: MAVLink's PARAM_VALUE and the state folder show it. Stream rates
  /// are the actual ones (the asked rate rounded to a whole number of frames), `ATT_TARE` 0.
  public func parameterValue(_ parameter: PlumbParameter) -> Float {
    switch parameter {
    case .outputRate: Float(outputRateHz)
    case .attitudeQuaternionRate, .attitudeRate, .imuRate, .systemStatusRate:
      Float(mavlinkRates.actualHz(parameter.stream!, outputRateHz: outputRateHz))
    case .inclinationTimeConstant: Float(estimator.tunables.timeConstantSeconds)
    case .rejectsAccelerations: estimator.tunables.rejectsAccelerations ? 1 : 0
    case .rejectionLowerThreshold:
      Float(estimator.tunables.rejectionLowerThresholdMetersPerSecondSquared)
    case .rejectionUpperThreshold:
      Float(estimator.tunables.rejectionUpperThresholdMetersPerSecondSquared)
    case .holdsAttitudeAtRest: estimator.tunables.holdsAttitudeAtRest ? 1 : 0
    case .tare: 0
    }
  }

  /// A parameter's value as it would be kept: stream rates as asked (so a rate follows the
  /// output rate back up), the others as `parameterValue(_:)`.
  public func parameterSetting(_ parameter: PlumbParameter) -> Float {
    if let stream = parameter.stream { return mavlinkRates[stream] }
    return parameterValue(parameter)
  }

  /// The time of the last sample processed (the clock's time before the first).
  public var lastSampleTime: Timestamp {
    lastEstimate.map { Timestamp(nanoseconds: $0.timestampNanoseconds) } ?? clock.now()
  }

  /// The most reply bytes saved up for a burst (four of the longest replies).
  static var replyBurstBytes: Int64 { Int64(4 * TelemetryEncoder.maximumReplyBytes) }

  /// Adds the reply credit earned since it was last brought up to date; whether it covers
  /// `bytes` (the longest reply by default).
  mutating func hasReplyCredit(bytes: Int = TelemetryEncoder.maximumReplyBytes) -> Bool {
    let now = clock.now()
    let limit = Self.replyBurstBytes * 1_000_000_000
    if let last = replyCreditTime {
      let capacity = Int64(settings.baudRate / LinkBudget.bitsPerByte)
      let frames = Int64(
        LinkBudget.bytesPerSecond(
          format: format, outputRateHz: outputRateHz, mavlinkRates: mavlinkRates))
      let spare = max(capacity - frames, capacity * 15 / 100)
      // At most a second counts: the credit is full long before, and the product stays small.
      let elapsed = min(max(0, now.nanoseconds(since: last)), 1_000_000_000)
      replyCredit = min(limit, replyCredit + elapsed * spare)
    }
    replyCreditTime = now
    return replyCredit >= Int64(bytes) * 1_000_000_000
  }

  /// Queues a reply (for `obey` called from outside the command poll).
  public mutating func queueReply(_ reply: HostReply) {
    queueEncoded(encoder.encode(reply, into: scratch.frame))
  }

  /// Queues the first `length` bytes of the scratch frame as a reply (and sends them on the
  /// datagram link, if any), charging the reply credit.
  mutating func queueEncoded(_ length: Int) {
    replyCredit = max(0, replyCredit - Int64(length) * 1_000_000_000)
    let bytes = UnsafeRawBufferPointer(rebasing: scratch.frame[0..<length])
    if format == .mavlink, hasDatagramLink { _ = datagramLink!.send(bytes) }
    if !queue.enqueue(bytes) {
      status.repliesDropped += 1
    }
  }

  private mutating func execute(_ command: HostCommand) -> HostReply {
    switch command {
    case .tare:
      // Zero the heading: from now on yaw is measured from the current heading. Tilt stays
      // absolute (gravity still points down in the reference frame).
      let heading = estimator.attitude.heading
      headingTare = Quaternion(axis: .unitZ, angle: -heading)
      estimator.resetHeadingUncertainty()
      var text = FixedText("tare heading ")
      text.append(decimal: Int((heading * degreesPerRadian).rounded()))
      text.append(" deg")
      return .ok(text)
    case .format(let newFormat):
      format = newFormat
      encoder = encoder.inFormat(newFormat)
      var text = FixedText("format ")
      text.append(newFormat.rawValue)
      return .ok(text)
    case .rate(let hertz):
      outputRateHz = hertz
      outputDivider = UInt64(max(1, sampleRateHz / hertz))
      encoder = encoder.atOutputRate(hertz)
      parameterChanges &+= 1
      var text = FixedText("rate ")
      text.append(decimal: hertz)
      text.append(" Hz")
      return .ok(text)
    case .status:
      var text = FixedText("n=")
      text.append(decimal: status.samples)
      text.append(" miss=")
      text.append(decimal: status.missedSamples)
      text.append(" drop=")
      text.append(decimal: status.framesDroppedQueueFull + status.framesDroppedDisconnected)
      text.append(" i2c=")
      text.append(decimal: driver.counters.failedReads)
      text.append(" ")
      text.append(status.mode.rawValue)
      return .ok(text)
    case .version:
      var text = FixedText("plumb ")
      text.append(settings.firmwareVersion)
      text.append(" binary v1 mavlink2")
      return .ok(text)
    case .set(let parameter, let value):
      return set(parameter, to: value)
    case .calibrateGyro:
      return captureGyroBias()
    }
  }

  /// Changes a parameter `PlumbParameter.change(to:context:)` checked; the reply says the value
  /// now in effect (a stream's actual rate).
  private mutating func set(_ parameter: PlumbParameter, to value: Float) -> HostReply {
    switch parameter {
    case .attitudeQuaternionRate, .attitudeRate, .imuRate, .systemStatusRate:
      mavlinkRates[parameter.stream!] = value
      encoder = encoder.withStreamRates(mavlinkRates)
    case .inclinationTimeConstant, .rejectsAccelerations, .rejectionLowerThreshold,
      .rejectionUpperThreshold, .holdsAttitudeAtRest:
      var tunables = estimator.tunables
      switch parameter {
      case .inclinationTimeConstant: tunables.timeConstantSeconds = Double(value)
      case .rejectsAccelerations: tunables.rejectsAccelerations = value == 1
      case .rejectionLowerThreshold:
        tunables.rejectionLowerThresholdMetersPerSecondSquared = Double(value)
      case .rejectionUpperThreshold:
        tunables.rejectionUpperThresholdMetersPerSecondSquared = Double(value)
      default: tunables.holdsAttitudeAtRest = value == 1
      }
      if case .failure = estimator.retune(tunables) {
        // The ranges were checked with the command; what is left is the thresholds' order.
        var reason = FixedText("must stay below ATT_REJ_HI ")
        if parameter == .rejectionUpperThreshold {
          reason = FixedText("must stay above ATT_REJ_LO ")
          HostCommandError.append(parameterValue(.rejectionLowerThreshold), to: &reason)
        } else {
          HostCommandError.append(parameterValue(.rejectionUpperThreshold), to: &reason)
        }
        return HostCommandError.parameterRefused(parameter, reason).reply
      }
    case .outputRate:
      // `change(to:)` makes `rate`; a recording could still hold the `set` form.
      return execute(.rate(hertz: Int(value)))
    case .tare:
      if value == 1 { return execute(.tare) }
    }
    parameterChanges &+= 1
    var text = FixedText()
    text.append(parameter.name)
    text.append(" ")
    HostCommandError.append(parameterValue(parameter), to: &text)
    if !parameter.units.isEmpty {
      text.append(" ")
      text.append(parameter.units)
    }
    return .ok(text)
  }

  /// `calibrate gyro`: the bias from the rest the board is in now.
  private mutating func captureGyroBias() -> HostReply {
    switch estimator.captureGyroBias() {
    case .success(let capture):
      var text = FixedText("gyro bias ")
      let b = capture.biasRadiansPerSecond * degreesPerRadian
      text.append(fixed: b.x, decimals: 3)
      text.append(",")
      text.append(fixed: b.y, decimals: 3)
      text.append(",")
      text.append(fixed: b.z, decimals: 3)
      text.append(" dps")
      return .ok(text)
    case .failure(let refusal):
      return HostCommandError.notAtRest(Self.shortReason(refusal)).reply
    }
  }

  /// A capture's refusal in a reply's 46 characters (the estimator's `description` says it at
  /// length): why, and how long to hold the board still before asking again.
  public static func shortReason(_ refusal: GyroBiasCaptureRefusal) -> FixedText {
    var text = FixedText()
    var hold = true
    switch refusal.reason {
    case .restDetectionOff:
      text.append("rest detection is off: no capture")
      hold = false
    case .initialising: text.append("initialising: hold still ")
    case .moving: text.append("not at rest: hold still ")
    case .movedRecently: text.append("not at rest: moved; hold still ")
    case .dwellRefused(.notSteady): text.append("not at rest (drifting): hold ")
    case .dwellRefused(.biasJump): text.append("not at rest (bias jump?): hold ")
    case .dwellRefused(.accelerating): text.append("not at rest (accelerating): hold ")
    case .dwellRefused(.slowTurn):
      text.append("slow turn: set it down, ask again in ")
    }
    if hold {
      text.append(fixed: refusal.holdSeconds, decimals: 1)
      text.append(" s")
    }
    return text
  }
}

/// sin(π/2 − `EulerAngles.defaultGimbalLockMargin`): |sin pitch| at the gimbal-lock margin.
private let gimbalLockSineThreshold = sin(.pi / 2 - EulerAngles.defaultGimbalLockMargin)
