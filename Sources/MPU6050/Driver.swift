import ByteFormats
import HardwareAbstraction

/// Where the driver is.
public enum MPU6050DriverState: Hashable, Sendable {
  /// Not started, or start-up failed: the first `readSample` begins a background start-up.
  case stopped
  /// Configured and delivering samples.
  case running
  /// Re-initialising; no samples until it completes.
  case recovering(MPU6050RecoveryStep)
}

/// A step of the re-initialisation state machine. Each waits for a deadline on the caller's
/// clock; the loop steps it once per tick, so it never blocks for more than a few register
/// transfers.
public enum MPU6050RecoveryStep: Hashable, Sendable {
  /// Waiting to try (back-off after a failure, or `now` for the first attempt).
  case waitingToRetry(until: Timestamp)
  /// DEVICE_RESET written; the chip is not addressed until the deadline.
  case resetting(until: Timestamp)
  /// Woken and configured; the filters settle until the deadline.
  case settling(until: Timestamp)
}

/// Where a sample comes from.
public enum MPU6050SampleSource: Hashable, Sendable {
  /// The 14-byte register burst at each data-ready edge (or poll).
  case dataRegisters
  /// The FIFO (polling fallback when the INT pin is not wired).
  case fifo
}

/// The outcome of one read.
public enum MPU6050Reading: Hashable, Sendable {
  /// A sample. `isRepeat` is `true` when its 14 bytes equal the previous sample's: a read
  /// before the chip produced a new one (a duplicated edge), or the start of stuck data.
  case sample(MPU6050Sample, isRepeat: Bool)
  /// No sample this tick, and why.
  case unavailable(MPU6050Unavailable)
}

/// Why a tick produced no sample.
public enum MPU6050Unavailable: Hashable, Sendable {
  /// The burst failed on the bus after every retry (counted in `failedReads`).
  case busError(I2CError)
  /// Re-initialising.
  case recovering(MPU6050RecoveryStep)
  /// `stuckSampleCount` identical bursts: flagged and re-initialising.
  case stuckData
  /// PWR_MGMT_1 showed the chip asleep or reset: re-initialising.
  case chipReset
  /// Polling: the chip has no new sample yet (DATA_RDY_INT clear).
  case noNewSample
}

/// What start-up found and did.
public struct MPU6050StartupReport: Hashable, Sendable, CustomStringConvertible {
  /// The part, by WHO_AM_I.
  public var identity: MPU6050Identity
  /// The self-test result (or why it did not run).
  public var selfTest: MPU6050SelfTestReport
  /// Things a person should know: a non-genuine part, configuration notes.
  public var warnings: [String]

  public var description: String {
    ([identity.description, selfTest.description] + warnings.map { "warning: " + $0 })
      .joined(separator: "\n")
  }
}

/// What `diagnoseMissingEdges` found when no data-ready edge came.
public enum MPU6050EdgeDiagnosis: Hashable, Sendable {
  /// The chip is awake and its data-ready interrupt is enabled: the wire or the GPIO is at fault.
  case chipRunning
  /// The chip was asleep or reset: re-initialisation has begun.
  case chipReset
  /// DATA_RDY_EN (or another register) had lost its value: the configuration was rewritten.
  case reconfigured
  /// The chip did not answer.
  case busError(I2CError)
  /// The driver is already re-initialising.
  case recovering
}

/// The result of draining the FIFO.
public struct MPU6050FIFODrain: Hashable, Sendable {
  /// Samples delivered to the callback.
  public var samples: Int = 0
  /// Whether an overflow was found (the FIFO was then reset).
  public var overflowed = false
  /// Samples whose loss this drain counted. An overflow's losses are counted once the records
  /// after the reset date the gap exactly (usually within a few drains; an estimate after
  /// 30 s); `MPU6050Driver.fifoLossPending` says when a count is still to come.
  public var samplesLost: Int = 0
  /// Set when the drain could not run: a bus error or recovery.
  public var unavailable: MPU6050Unavailable?

  public init() {}
}

/// The MPU-6050 driver: identify, reset, configure, self-test, then one coherent 14-byte burst
/// per sample, with retries, re-initialisation and health counters.
///
/// It owns the bus it is given (no global state) and needs no clock except in `start`, which
/// waits out the reset on the clock it is handed: the per-sample calls take the current time as
/// a parameter, so every deadline is deterministic. Nothing on the sample path allocates,
/// throws, or traps; failures become `MPU6050Reading.unavailable` plus counters.
///
/// Typical use by the loop:
///
///     var driver = try MPU6050Driver(bus: bus, configuration: .default)
///     let report = try driver.start(clock: &clock)         // identify, reset, configure, self-test
///     while running {
///       let edge = try line.waitForEdge(until: deadline)  // the sample time
///       switch driver.readSample(at: edgeTime) { … }       // burst, retries, recovery stepping
///     }
public struct MPU6050Driver<Bus: I2CBus> {
  // Every stored property whose size does not depend on `Bus` comes before `bus` (the last
  // one): their offsets are then constants, so generic code outside this type (the loop
  // reading `state`) does not have to look up `MPU6050Driver<Bus>`'s metadata, a runtime hash
  // lookup of hundreds of instructions, to find them.

  /// The chip's address (`0x68` or `0x69`): where it is, not what it is.
  public let address: I2CAddress
  /// The checked configuration.
  public let configuration: ValidatedMPU6050Configuration
  /// Retry and recovery settings.
  public var policy: MPU6050RecoveryPolicy
  /// The part found by `identify`, once known.
  public private(set) var identity: MPU6050Identity?
  /// Health counters.
  public private(set) var counters = MPU6050Counters()
  /// Where the driver is.
  public private(set) var state: MPU6050DriverState = .stopped
  /// The path samples come from.
  public private(set) var source: MPU6050SampleSource = .dataRegisters
  /// The control registers as the driver means the chip to hold them: what it writes when it
  /// configures the chip, and what the read-backs compare the chip with.
  public private(set) var controlRegisters: MPU6050ControlRegisters
  /// The last error seen (for a status display); cleared by nothing.
  public private(set) var lastError: MPU6050Error?
  /// The reason of the re-initialisation in progress or last begun.
  public private(set) var lastReinitializationReason: MPU6050ReinitializationReason?
  /// The chip's sample period as the loop measured it from edge timestamps, ns, when it has
  /// one. The chip's oscillator is off by up to a few percent (PS §7.15), so the nominal
  /// period miscounts long gaps; see `samplePeriodNanoseconds`.
  public var measuredSamplePeriodNanoseconds: Int64?

  /// The sample period the driver counts FIFO losses and silences with, ns: the loop's
  /// measurement when given, else the driver's own from the FIFO drains (the nominal period
  /// until drains have narrowed it).
  public var samplePeriodNanoseconds: Int64 {
    // The FIFO clock's bounds start at nominal ± 5 % and only narrow around the truth, so
    // their middle is never a worse guess than the nominal period.
    measuredSamplePeriodNanoseconds ?? Int64(fifoClock.period.rounded())
  }

  private var scale: MPU6050Scale
  private var previousBurst = Block()
  private var hasPreviousBurst = false
  private var identicalBursts = 0
  private var checkedPowerThisRun = false
  private var consecutiveFailedReads = 0
  private var nextConfigurationCheck = Timestamp.zero
  private var backoffExponent = 0
  private var resetPolls = 0
  private var lastSampleTime: Timestamp?
  private var lastFIFODrain = Timestamp.zero
  /// The chip's sample clock as the FIFO drains reveal it.
  private var fifoClock: FIFOClock
  /// FIFO resets whose losses are not counted yet (at most `pendingFIFOLossCapacity`).
  private var pendingFIFOLosses: [PendingFIFOLoss] = []
  private static var pendingFIFOLossCapacity: Int { 8 }
  /// The bus, owned by the driver (stored last: see above).
  public private(set) var bus: Bus

  /// A driver for the chip at `address` on `bus`. Validates the configuration first; touches
  /// nothing on the bus.
  public init(
    bus: Bus, address: I2CAddress = .mpu6050, configuration: MPU6050Configuration = .default,
    policy: MPU6050RecoveryPolicy = .default
  ) throws(MPU6050Error) {
    let validated: ValidatedMPU6050Configuration
    do {
      validated = try configuration.validated()
    } catch {
      throw .invalidConfiguration(error)
    }
    self.bus = bus
    self.address = address
    self.configuration = validated
    self.policy = policy
    self.scale = validated.scale()
    self.controlRegisters = MPU6050ControlRegisters(configuration: validated)
    self.fifoClock = FIFOClock(nominalPeriod: validated.samplePeriodNanoseconds)
    pendingFIFOLosses.reserveCapacity(Self.pendingFIFOLossCapacity)
  }

  /// The conversion factors in use (ranges and the part's temperature constants).
  public var currentScale: MPU6050Scale { scale }

  /// How long after configuring the first sample is trusted, ns: the gyroscope start-up time
  /// or five filter delays, whichever is longer.
  public var settleNanoseconds: Int64 {
    let filter = Int64((configuration.configuration.lowPassFilter.delaySeconds * 5e9).rounded())
    return max(policy.settleMinimumNanoseconds, filter)
  }

  // MARK: - Start-up

  /// Identifies, resets, wakes, configures and (optionally) self-tests the chip, waiting on
  /// `clock` where the chip needs time (≥ 100 ms after reset, the settling time, the self-test
  /// samples). Takes about 0.3 s, plus about 0.6 s for the self-test.
  ///
  /// Throws when the chip is missing, unknown, incompatible, or will not take its
  /// configuration; the driver then stays `.stopped`, and `readSample` keeps retrying in the
  /// background with back-off. A failed self-test does not throw: it is in the report, for
  /// the caller to decide.
  public mutating func start<Clock: MonotonicClock>(clock: inout Clock, selfTest: Bool = true)
    throws(MPU6050Error) -> MPU6050StartupReport
  {
    state = .stopped
    do throws(MPU6050Error) {
      let identity = try identify()
      try requireWrite(PowerManagement1Register.deviceReset)
      clock.sleep(until: clock.now().advanced(byNanoseconds: policy.resetWaitNanoseconds))
      var power = try requireRead(PowerManagement1Register.self)
      var polls = 0
      while power.deviceReset {
        polls += 1
        guard polls <= 10 else {
          throw MPU6050Error.resetDidNotComplete(powerManagement1: power.bits)
        }
        clock.sleep(until: clock.now().advanced(byNanoseconds: 10_000_000))
        power = try requireRead(PowerManagement1Register.self)
      }
      try writeConfiguration()
      try verifyConfiguration()
      clock.sleep(until: clock.now().advanced(byNanoseconds: settleNanoseconds))
      let report: MPU6050SelfTestReport
      if !selfTest {
        report = MPU6050SelfTestReport(outcome: .notAvailable(reason: "skipped by request"))
      } else if identity.family != .mpu6050 {
        report = MPU6050SelfTestReport(
          outcome: .notAvailable(
            reason:
              "\(identity.model.name) is an MPU-6500-generation part; its self-test uses "
              + "different registers and formulas than the MPU-6050's"))
      } else {
        report = try runSelfTest(clock: &clock)
      }
      becomeRunning(at: clock.now())
      var warnings: [String] = []
      if let warning = identity.warning { warnings.append(warning) }
      warnings += configuration.warnings
      if !report.passed, case .measured = report.outcome {
        warnings.append(
          "self-test failed on "
            + report.failures.map { "\($0.sensor.rawValue) \($0.axis.rawValue)" }.joined(
              separator: ", ")
            + ": the sensor may be damaged; its readings on those axes are suspect")
      }
      return MPU6050StartupReport(identity: identity, selfTest: report, warnings: warnings)
    } catch {
      lastError = error
      state = .stopped
      throw error
    }
  }

  /// Reads WHO_AM_I and names the part. Throws for an unknown or incompatible part, with the
  /// value read.
  public mutating func identify() throws(MPU6050Error) -> MPU6050Identity {
    let whoAmI = try requireRead(WhoAmIRegister.self).bits
    let identity = try MPU6050Identity.classify(whoAmI: whoAmI)
    adopt(identity)
    return identity
  }

  private mutating func adopt(_ identity: MPU6050Identity) {
    self.identity = identity
    scale = configuration.scale(for: identity.family)
    scale.temperature = identity.temperature
    controlRegisters.accelConfig2 = identity.family == .mpu6500 ? configuration.accelConfig2 : nil
  }

  // MARK: - Self-test

  /// Runs the self-test (RM §4.1, PS §6.1/6.2): averages samples with self-test off and on at
  /// ±250 °/s and ±8 g, compares the difference with the factory trim, then restores the
  /// configuration. The chip must be configured and still. Waits on `clock`.
  public mutating func runSelfTest<Clock: MonotonicClock>(clock: inout Clock) throws(MPU6050Error)
    -> MPU6050SelfTestReport
  {
    let settle = max(settleNanoseconds, 50_000_000)
    var gyro = GyroConfigRegister(fullScale: MPU6050SelfTest.gyroFullScale)
    var accelerometer = AccelConfigRegister(fullScale: MPU6050SelfTest.accelerometerFullScale)
    try requireWrite(gyro)
    try requireWrite(accelerometer)
    clock.sleep(until: clock.now().advanced(byNanoseconds: settle))
    let off = try averageCounts(clock: &clock)
    gyro.selfTest = .all
    accelerometer.selfTest = .all
    try requireWrite(gyro)
    try requireWrite(accelerometer)
    clock.sleep(until: clock.now().advanced(byNanoseconds: settle))
    let on = try averageCounts(clock: &clock)
    var trim = Block()
    try requireBlock(SelfTestRegisters.x, count: 4, into: &trim)
    let codes = trim.withBytes { bytes in
      MPU6050SelfTest.TrimCodes(registers: bytes[0], bytes[1], bytes[2], bytes[3])
    }
    try requireWrite(controlRegisters.gyroConfig)
    try requireWrite(controlRegisters.accelConfig)
    clock.sleep(until: clock.now().advanced(byNanoseconds: settle))
    hasPreviousBurst = false
    return MPU6050SelfTest.evaluate(
      codes: codes, gyroResponseCounts: on.gyro - off.gyro,
      accelerometerResponseCounts: on.accelerometer - off.accelerometer)
  }

  private mutating func averageCounts<Clock: MonotonicClock>(clock: inout Clock)
    throws(MPU6050Error) -> (accelerometer: SIMD3<Double>, gyro: SIMD3<Double>)
  {
    var accelerometer = SIMD3<Double>.zero
    var gyro = SIMD3<Double>.zero
    let period = configuration.samplePeriodNanoseconds
    for _ in 0..<policy.selfTestSamples {
      clock.sleep(until: clock.now().advanced(byNanoseconds: period))
      var block = Block()
      try requireBlock(MeasurementRegisters.accelXHigh, count: 14, into: &block)
      let raw = block.withBytes { MPU6050RawSample(validated: $0) }
      accelerometer += SIMD3<Double>(raw.accelerometer)
      gyro += SIMD3<Double>(raw.gyro)
    }
    let n = Double(policy.selfTestSamples)
    return (accelerometer / n, gyro / n)
  }

  // MARK: - The sample path

  /// Reads one sample: the 14-byte burst from ACCEL_XOUT_H, retried within the tick on
  /// transient errors, checked for stuck data, converted to SI units. Call it at each
  /// data-ready edge with the edge's timestamp (or the current time when polling).
  ///
  /// While re-initialising it steps the recovery state machine instead (a few register
  /// transfers at most) and returns `.unavailable(.recovering)`. Once a second it also reads
  /// back PWR_MGMT_1 and one configuration register. Allocation-free; never throws or traps.
  public mutating func readSample(at now: Timestamp) -> MPU6050Reading {
    if let unavailable = stepIfNotRunning(at: now) { return .unavailable(unavailable) }
    var block = Block()
    if let error = readBlock(MeasurementRegisters.accelXHigh, count: 14, into: &block) {
      return .unavailable(failedRead(error, at: now))
    }
    consecutiveFailedReads = 0
    let isRepeat = hasPreviousBurst && block == previousBurst
    previousBurst = block
    hasPreviousBurst = true
    if isRepeat {
      identicalBursts += 1
      counters.repeatedSamples += 1
      // Two identical bursts: cheap to ask whether the chip is still awake.
      if !checkedPowerThisRun {
        checkedPowerThisRun = true
        if let unavailable = checkPowerManagement(at: now) { return .unavailable(unavailable) }
      }
      if let limit = policy.stuckSampleCount, identicalBursts + 1 >= limit {
        counters.stuckDataEvents += 1
        beginReinitialization(.stuckData, at: now)
        return .unavailable(.stuckData)
      }
    } else {
      identicalBursts = 0
      checkedPowerThisRun = false
    }
    if now >= nextConfigurationCheck {
      if let unavailable = checkConfiguration(at: now) { return .unavailable(unavailable) }
    }
    let scale = self.scale  // a copy, so the closure does not capture the generic driver
    let sample = block.withBytes {
      MPU6050Conversion.convert(MPU6050RawSample(validated: $0), scale: scale)
    }
    deliver(sample, at: now)
    return .sample(sample, isRepeat: isRepeat)
  }

  /// Polling fallback without the FIFO: reads INT_STATUS and, when DATA_RDY_INT is set, the
  /// sample. INT_STATUS clears when read (INT_RD_CLEAR = 0), so each sample is seen once when
  /// polled faster than the sample rate. After three periods without data it checks that the
  /// chip is awake.
  public mutating func pollDataReady(at now: Timestamp) -> MPU6050Reading {
    if let unavailable = stepIfNotRunning(at: now) { return .unavailable(unavailable) }
    let status: InterruptStatusRegister
    switch read(InterruptStatusRegister.self) {
    case .success(let value): status = value
    case .failure(let error): return .unavailable(failedRead(error, at: now))
    }
    guard status.dataReady else {
      if let unavailable = checkIfSilent(at: now) { return .unavailable(unavailable) }
      return .unavailable(.noNewSample)
    }
    return readSample(at: now)
  }

  /// When the loop's wait for an edge timed out: checks whether the chip is awake with its
  /// data-ready interrupt enabled, re-initialises or reconfigures when not, and says which.
  public mutating func diagnoseMissingEdges(at now: Timestamp) -> MPU6050EdgeDiagnosis {
    if case .recovering = state {
      stepRecovery(at: now)
      return .recovering
    }
    if state == .stopped {
      _ = stepIfNotRunning(at: now)
      return .recovering
    }
    let mismatchesBefore = counters.configurationMismatches
    if let unavailable = checkPowerManagement(at: now) {
      if case .busError(let error) = unavailable { return .busError(error) }
      return .chipReset
    }
    switch read(InterruptEnableRegister.self) {
    case .failure(let error): return .busError(error)
    case .success(let value):
      counters.configurationChecks += 1
      if value != controlRegisters.interruptEnable {
        counters.configurationMismatches += 1
        reconfigure(at: now)
      }
    }
    return counters.configurationMismatches > mismatchesBefore ? .reconfigured : .chipRunning
  }

  // MARK: - FIFO (polling fallback)

  /// Switches to the FIFO: records of accelerometer, temperature and gyroscope (14 bytes, the
  /// burst's layout), empties it, and enables the overflow interrupt. Returns `false` (and
  /// counts) when the bus failed; the next drain retries through recovery.
  @discardableResult
  public mutating func enableFIFO(at now: Timestamp) -> Bool {
    select(.fifo)
    lastFIFODrain = now
    fifoClock.restartCount(at: now)
    guard state == .running else { return false }
    return writeFIFORegisters(at: now)
  }

  /// Back to register bursts: the FIFO off and empty.
  @discardableResult
  public mutating func disableFIFO(at now: Timestamp) -> Bool {
    select(.dataRegisters)
    guard state == .running else { return false }
    let registers = controlRegisters
    if let error = write(registers.userControlEmptyingFIFO) ?? write(registers.userControl)
      ?? write(registers.fifoEnable) ?? write(registers.interruptEnable)
    {
      _ = failedRead(error, at: now)
      return false
    }
    return true
  }

  /// Switches the sample source and the control registers that follow it.
  private mutating func select(_ newSource: MPU6050SampleSource) {
    source = newSource
    controlRegisters.select(newSource, fifoEnable: configuration.fifoEnable)
  }

  /// Reads every whole record in the FIFO and hands each to `body`, oldest first, with the
  /// number of records newer than it (0 for the newest, which the chip produced within the last
  /// sample period; `fifoNewestSampleTimeEstimate` dates it). `clock` is read around the
  /// FIFO_COUNT transfer (the loop's `CLOCK_MONOTONIC`; a `ManualClock` in simulation), so the
  /// records are dated however long the bus takes.
  ///
  /// Reads INT_STATUS (FIFO_OFLOW_INT) and FIFO_COUNT first, then the records two at a time
  /// (28 bytes, within the 32-byte SMBus block limit), so every block starts on a record and
  /// whole samples stay aligned.
  ///
  /// **Overflow.** When the FIFO overflowed, the chip has dropped its oldest bytes and the
  /// records are no longer aligned: the FIFO is reset. The samples lost are those produced
  /// between the newest record read before and the first record after; the drains date both
  /// (`FIFOClock`: bounds on the chip's period and phase from drain times and record counts),
  /// and the loss is counted — in `samplesLost` of the drain that settles it and in
  /// `counters.samplesLost` — once only one whole number of periods fits the gap. That takes a
  /// few drains when the poll interval differs from the chip's period by a few percent; poll
  /// at an interval that is *not* the nominal period (9.5 ms for 100 Hz, say): a timer in
  /// lock-step with the chip cannot learn its phase, and its losses are estimated (±1) after
  /// 30 s. `fifoLossPending` says when a count is still to come.
  public mutating func drainFIFO<Clock: MonotonicClock>(
    clock: Clock, _ body: (_ sample: MPU6050Sample, _ newerSamples: Int) -> Void
  ) -> MPU6050FIFODrain {
    let now = clock.now()
    var result = MPU6050FIFODrain()
    if let unavailable = stepIfNotRunning(at: now) {
      result.unavailable = unavailable
      return result
    }
    if source != .fifo {
      enableFIFO(at: now)
    }
    let status: InterruptStatusRegister
    switch read(InterruptStatusRegister.self) {
    case .success(let value): status = value
    case .failure(let error):
      result.unavailable = failedRead(error, at: now)
      return result
    }
    var countBlock = Block()
    let beforeCount = clock.now()
    if let error = readBlock(FIFORegisters.countHigh, count: 2, into: &countBlock) {
      result.unavailable = failedRead(error, at: now)
      return result
    }
    let afterCount = clock.now()
    consecutiveFailedReads = 0
    let count = countBlock.withBytes { Int($0[0]) << 8 | Int($0[1]) }
    let capacity = identity?.model.fifoCapacityBytes ?? FIFORegisters.capacityBytes
    let recordLength = MeasurementRegisters.burstLength
    if let measured = measuredSamplePeriodNanoseconds { fifoClock.suggestPeriod(measured) }
    if status.fifoOverflow || count >= capacity {
      counters.fifoOverflows += 1
      result.overflowed = true
      result.samplesLost = resetFIFO(at: clock.now(), newestReadBack: 0)
      return result
    }
    let records = count / recordLength
    fifoClock.observe(records: records, between: beforeCount, and: afterCount)
    if records == 0 {
      lastFIFODrain = now
      if let unavailable = checkIfSilent(at: now) { result.unavailable = unavailable }
      return result
    }
    var remaining = records
    while remaining > 0 {
      let take = min(remaining, 2)
      var block = Block()
      if let error = readBlock(FIFORegisters.readWrite, count: take * recordLength, into: &block) {
        // Part of the FIFO may have been popped: alignment is unknown. Start clean; the
        // records counted but not delivered are lost with the rest.
        counters.failedReads += 1
        lastError = .bus(error)
        result.samplesLost = resetFIFO(at: clock.now(), newestReadBack: remaining)
        return result
      }
      for index in 0..<take {
        let sample = block.withBytes { bytes in
          MPU6050Conversion.convert(
            MPU6050RawSample(
              validated: UnsafeRawBufferPointer(
                rebasing: bytes[(index * recordLength)..<((index + 1) * recordLength)])),
            scale: scale)
        }
        remaining -= 1
        result.samples += 1
        deliver(sample, at: now)
        body(sample, remaining)
      }
    }
    result.samplesLost = resolvePendingFIFOLosses(at: now, all: false)
    lastFIFODrain = now
    if now >= nextConfigurationCheck {
      if let unavailable = checkConfiguration(at: now) { result.unavailable = unavailable }
    }
    return result
  }

  // MARK: - Recovery

  /// Begins a full re-initialisation (identify, reset, configure, settle) now, for `reason`.
  /// The loop's calls to `readSample`/`drainFIFO` step it.
  public mutating func beginReinitialization(
    _ reason: MPU6050ReinitializationReason, at now: Timestamp
  ) {
    counters.reinitializationsStarted.record(reason)
    lastReinitializationReason = reason
    state = .recovering(.waitingToRetry(until: now))
    hasPreviousBurst = false
    identicalBursts = 0
    checkedPowerThisRun = false
    consecutiveFailedReads = 0
    resetPolls = 0
  }

  /// Advances the re-initialisation by at most one step if its deadline has passed. Called by
  /// the read functions; public for a loop that wants to step it without reading.
  public mutating func stepRecovery(at now: Timestamp) {
    guard case .recovering(let step) = state else { return }
    switch step {
    case .waitingToRetry(let until):
      guard now >= until else { return }
      let whoAmI: UInt8
      switch read(WhoAmIRegister.self) {
      case .success(let value): whoAmI = value.bits
      case .failure(let error): return failAttempt(.bus(error), at: now)
      }
      if let identity {
        guard whoAmI == identity.whoAmI else {
          return failAttempt(.identityChanged(expected: identity.whoAmI, found: whoAmI), at: now)
        }
      } else {
        do {
          adopt(try MPU6050Identity.classify(whoAmI: whoAmI))
        } catch {
          return failAttempt(error, at: now)
        }
      }
      if let error = write(PowerManagement1Register.deviceReset) {
        return failAttempt(.bus(error), at: now)
      }
      resetPolls = 0
      state = .recovering(
        .resetting(until: now.advanced(byNanoseconds: policy.resetWaitNanoseconds)))
    case .resetting(let until):
      guard now >= until else { return }
      let power: PowerManagement1Register
      switch read(PowerManagement1Register.self) {
      case .success(let value): power = value
      case .failure(let error): return failAttempt(.bus(error), at: now)
      }
      if power.deviceReset {
        resetPolls += 1
        guard resetPolls <= 10 else {
          return failAttempt(.resetDidNotComplete(powerManagement1: power.bits), at: now)
        }
        state = .recovering(.resetting(until: now.advanced(byNanoseconds: 10_000_000)))
        return
      }
      do {
        try writeConfiguration()
        try verifyConfiguration()
      } catch {
        return failAttempt(error, at: now)
      }
      state = .recovering(.settling(until: now.advanced(byNanoseconds: settleNanoseconds)))
    case .settling(let until):
      guard now >= until else { return }
      counters.reinitializationsCompleted += 1
      backoffExponent = 0
      becomeRunning(at: now)
    }
  }

  private mutating func failAttempt(_ error: MPU6050Error, at now: Timestamp) {
    lastError = error
    counters.reinitializationAttemptsFailed += 1
    var delay = max(1, policy.backoffInitialNanoseconds)
    for _ in 0..<min(backoffExponent, 62) where delay < policy.backoffMaximumNanoseconds {
      let (doubled, overflow) = delay.multipliedReportingOverflow(by: 2)
      delay = overflow ? .max : doubled
    }
    delay = min(delay, policy.backoffMaximumNanoseconds)
    backoffExponent += 1
    state = .recovering(.waitingToRetry(until: now.advanced(byNanoseconds: delay)))
  }

  private mutating func becomeRunning(at now: Timestamp) {
    state = .running
    // The chip's sample clock restarts: losses not dated yet cannot be anymore.
    _ = resolvePendingFIFOLosses(at: now, all: true)
    fifoClock.restartClock(at: now)
    hasPreviousBurst = false
    identicalBursts = 0
    checkedPowerThisRun = false
    consecutiveFailedReads = 0
    lastSampleTime = now
    lastFIFODrain = now
    nextConfigurationCheck = now.advanced(
      byNanoseconds: policy.configurationCheckIntervalNanoseconds)
  }

  /// Steps recovery (or begins it when never started); `nil` when running.
  private mutating func stepIfNotRunning(at now: Timestamp) -> MPU6050Unavailable? {
    switch state {
    case .running: return nil
    case .stopped:
      beginReinitialization(.startUp, at: now)
      stepRecovery(at: now)
    case .recovering:
      stepRecovery(at: now)
    }
    if case .recovering(let step) = state { return .recovering(step) }
    return nil
  }

  private mutating func failedRead(_ error: I2CError, at now: Timestamp) -> MPU6050Unavailable {
    lastError = .bus(error)
    counters.failedReads += 1
    consecutiveFailedReads += 1
    if consecutiveFailedReads >= policy.failedReadsBeforeReinitialization || !error.isTransient {
      beginReinitialization(.busErrors, at: now)
    }
    return .busError(error)
  }

  @inline(__always)  // four counters, after every sample read: not worth a call
  private mutating func deliver(_ sample: MPU6050Sample, at now: Timestamp) {
    counters.samplesDelivered += 1
    if sample.clipping.contains(.accelerometer) { counters.accelerometerClippedSamples += 1 }
    if sample.clipping.contains(.gyro) { counters.gyroClippedSamples += 1 }
    lastSampleTime = now
  }

  /// After three periods without a sample while polling: is the chip still awake?
  private mutating func checkIfSilent(at now: Timestamp) -> MPU6050Unavailable? {
    let last = lastSampleTime ?? now
    guard now.nanoseconds(since: last) > 3 * samplePeriodNanoseconds else { return nil }
    lastSampleTime = now
    return checkPowerManagement(at: now)
  }

  /// Whether some FIFO reset's losses are still to be counted.
  public var fifoLossPending: Bool { !pendingFIFOLosses.isEmpty }

  /// When the chip produced the newest record read from the FIFO, as far as the drains tell
  /// (their bounds' midpoint), or `nil` before the first record: the loop can date record i
  /// of a drain as this minus its `newerSamples` periods.
  public var fifoNewestSampleTimeEstimate: Timestamp? {
    fifoClock.newestEstimate.map { Timestamp(nanoseconds: Int64($0.rounded())) }
  }

  /// Resets the FIFO (after an overflow or a failed read) and leaves its losses pending until
  /// they can be dated: the samples lost are those between the newest record read before
  /// (`newestReadBack` records before the newest counted) and the first record after. Returns
  /// the losses counted now (an old pending loss pushed out, or an estimate when nothing dates
  /// the gap). FIFO_RESET takes effect only while FIFO_EN is 0 (RM §4.27).
  private mutating func resetFIFO(at now: Timestamp, newestReadBack: Int) -> Int {
    var counted = 0
    counters.fifoResets += 1
    for index in pendingFIFOLosses.indices { pendingFIFOLosses[index].isOpen = false }
    if let newest = fifoClock.newest {
      if pendingFIFOLosses.count >= Self.pendingFIFOLossCapacity {
        counted += countEstimated(pendingFIFOLosses.removeFirst(), at: now)
      }
      pendingFIFOLosses.append(
        PendingFIFOLoss(
          before: .init(newest: newest, back: newestReadBack), after: nil, resetAt: now,
          isOpen: true))
    } else {
      // Nothing read since counting restarted: the time since then, in periods.
      let elapsed = Double(now.nanoseconds(since: lastFIFODrain))
      let lost = Int((elapsed / Double(max(1, samplePeriodNanoseconds))).rounded()) + newestReadBack
      counters.samplesLost += UInt64(max(0, lost))
      counted += max(0, lost)
    }
    fifoClock.restartCount(at: now)
    lastFIFODrain = now
    if let error = write(controlRegisters.userControlEmptyingFIFO)
      ?? write(controlRegisters.userControl)
    {
      _ = failedRead(error, at: now)
    } else if case .failure(let error) = read(InterruptStatusRegister.self) {
      // A sample that arrived between reading INT_STATUS and the reset may have raised
      // FIFO_OFLOW_INT again; reading INT_STATUS now clears it, so the next drain does not
      // take the same overflow for a new one. (The FIFO is empty now: it cannot overflow anew.)
      _ = failedRead(error, at: now)
    }
    return counted
  }

  /// Tries to date every pending FIFO loss: the first record after its reset is taken from the
  /// drains since (while they last), both ends are recomputed with the period as now known and
  /// aligned with the chip's phase, and the gap is counted when only one whole number of
  /// periods fits. Losses older than 30 s, or all of them when `all`, are counted with the
  /// best estimate. Returns the samples counted.
  private mutating func resolvePendingFIFOLosses(at now: Timestamp, all: Bool) -> Int {
    var counted = 0
    var index = 0
    while index < pendingFIFOLosses.count {
      if pendingFIFOLosses[index].isOpen, let newest = fifoClock.newest, fifoClock.index > 0 {
        // Keep whichever dating of the first record after the reset is sharpest.
        let candidate = PendingFIFOLoss.Reference(newest: newest, back: fifoClock.index - 1)
        if let kept = pendingFIFOLosses[index].after {
          let keptBounds = fifoClock.bounds(kept.back, recordsBefore: kept.newest)
          let newBounds = fifoClock.bounds(candidate.back, recordsBefore: candidate.newest)
          if newBounds.high - newBounds.low < keptBounds.high - keptBounds.low {
            pendingFIFOLosses[index].after = candidate
          }
        } else {
          pendingFIFOLosses[index].after = candidate
        }
      }
      let pending = pendingFIFOLosses[index]
      let expired = all || now.nanoseconds(since: pending.resetAt) > 30_000_000_000
      guard let (periods, exact) = gap(of: pending) else {
        if expired {
          pendingFIFOLosses.remove(at: index)
          counted += countEstimated(pending, at: now)
        } else {
          index += 1
        }
        continue
      }
      if exact || expired {
        pendingFIFOLosses.remove(at: index)
        let lost = max(0, periods - 1)
        counters.samplesLost += UInt64(lost)
        counted += lost
      } else {
        index += 1
      }
    }
    return counted
  }

  /// The periods between the newest record before a reset and the first after it, and whether
  /// that number is certain; `nil` before a record came after the reset.
  private mutating func gap(of pending: PendingFIFOLoss) -> (periods: Int, exact: Bool)? {
    guard let after = pending.after else { return nil }
    let rawBefore = fifoClock.bounds(pending.before.back, recordsBefore: pending.before.newest)
    let rawAfter = fifoClock.bounds(after.back, recordsBefore: after.newest)
    let before = fifoClock.alignedWithPhase(rawBefore) ?? rawBefore
    let first = fifoClock.alignedWithPhase(rawAfter) ?? rawAfter
    let result = fifoClock.periods(from: before, to: first)
    if result.isExact {
      fifoClock.constrainPeriod(from: before, to: first, periods: result.count)
    }
    return (result.count, result.isExact)
  }

  /// Counts a pending loss with the best estimate available now.
  private mutating func countEstimated(_ pending: PendingFIFOLoss, at now: Timestamp) -> Int {
    let lost: Int
    if let (periods, _) = gap(of: pending) {
      lost = max(0, periods - 1)
    } else {
      let before = fifoClock.bounds(pending.before.back, recordsBefore: pending.before.newest)
      let elapsed = Double(now.nanoseconds) - (before.low + before.high) / 2
      lost = max(0, Int(elapsed / fifoClock.period))
    }
    counters.samplesLost += UInt64(lost)
    return lost
  }

  // MARK: - Health checks

  /// Reads PWR_MGMT_1: asleep, resetting or at its reset value means the chip lost its
  /// configuration (a brown-out): re-initialise.
  private mutating func checkPowerManagement(at now: Timestamp) -> MPU6050Unavailable? {
    switch read(PowerManagement1Register.self) {
    case .failure(let error):
      return failedRead(error, at: now)
    case .success(let power):
      counters.configurationChecks += 1
      if power.sleep || power.deviceReset
        || power.clockSource != controlRegisters.powerManagement1.clockSource
      {
        counters.chipResetsDetected += 1
        beginReinitialization(.chipReset, at: now)
        return .chipReset
      }
      if power != controlRegisters.powerManagement1 {
        counters.configurationMismatches += 1
        reconfigure(at: now)
      }
      return nil
    }
  }

  /// The periodic read-back: every register the driver wrote, in the same four block reads
  /// as after configuring (0x19–0x1C, 0x23, 0x37–0x38, 0x6A–0x6B: about 0.3 ms a second at
  /// 400 kHz). PWR_MGMT_1 showing sleep or reset means a brown-out: re-initialise. Any other
  /// difference is counted per register and the configuration rewritten.
  private mutating func checkConfiguration(at now: Timestamp) -> MPU6050Unavailable? {
    nextConfigurationCheck = now.advanced(
      byNanoseconds: policy.configurationCheckIntervalNanoseconds)
    var mismatches: UInt64 = 0
    var power: UInt8 = 0
    if let error = readBackConfiguration({ register, expected, read in
      if register == PowerManagement1Register.address { power = read }
      if read != expected { mismatches += 1 }
    }) {
      return failedRead(error, at: now)
    }
    counters.configurationChecks += 1
    let register = PowerManagement1Register(bits: power)
    if register.sleep || register.deviceReset
      || register.clockSource != controlRegisters.powerManagement1.clockSource
    {
      counters.chipResetsDetected += 1
      beginReinitialization(.chipReset, at: now)
      return .chipReset
    }
    if mismatches > 0 {
      counters.configurationMismatches += mismatches
      reconfigure(at: now)
      if case .recovering(let step) = state { return .recovering(step) }
    }
    return nil
  }

  /// Rewrites and verifies the configuration; a second mismatch re-initialises.
  private mutating func reconfigure(at now: Timestamp) {
    do {
      try writeConfiguration()
      try verifyConfiguration()
    } catch {
      lastError = error
      beginReinitialization(.configurationMismatch, at: now)
    }
  }

  // MARK: - Registers

  /// Wakes the chip on the gyroscope PLL, then writes the configuration in register order.
  private mutating func writeConfiguration() throws(MPU6050Error) {
    let registers = controlRegisters
    try requireWrite(registers.powerManagement1)
    try requireWrite(registers.sampleRateDivider)
    try requireWrite(registers.config)
    try requireWrite(registers.gyroConfig)
    try requireWrite(registers.accelConfig)
    if let accelConfig2 = registers.accelConfig2 {
      try requireWrite(accelConfig2)
    }
    try requireWrite(registers.interruptPinConfig)
    try requireWrite(registers.interruptEnable)
    try requireWrite(registers.fifoEnable)
    if source == .fifo {
      // Empty the FIFO, then enable it.
      try requireWrite(registers.userControlEmptyingFIFO)
    }
    try requireWrite(registers.userControl)
  }

  /// Reads the configuration back in four block reads (0x19–0x1C or 0x1D, 0x23, 0x37–0x38,
  /// 0x6A–0x6B) and throws at the first byte that differs from what was written.
  private mutating func verifyConfiguration() throws(MPU6050Error) {
    var mismatch: MPU6050Error?
    if let error = readBackConfiguration({ register, expected, read in
      if read != expected, mismatch == nil {
        mismatch = .registerMismatch(
          register: register, name: Self.registerName(register), wrote: expected, read: read)
      }
    }) {
      throw .bus(error)
    }
    if let mismatch { throw mismatch }
  }

  /// Reads back every configured register and hands each (address, expected, read) to `visit`;
  /// returns the bus error if a read failed. Allocation-free.
  private mutating func readBackConfiguration(_ visit: (UInt8, UInt8, UInt8) -> Void) -> I2CError? {
    let expected = controlRegisters
    var block = Block()
    let configCount = expected.accelConfig2 == nil ? 4 : 5
    if let error = readBlock(SampleRateDividerRegister.address, count: configCount, into: &block) {
      return error
    }
    block.withBytes { bytes in
      visit(SampleRateDividerRegister.address, expected.sampleRateDivider.bits, bytes[0])
      visit(ConfigRegister.address, expected.config.bits, bytes[1])
      visit(GyroConfigRegister.address, expected.gyroConfig.bits, bytes[2])
      visit(AccelConfigRegister.address, expected.accelConfig.bits, bytes[3])
      if let accelConfig2 = expected.accelConfig2 {
        visit(AccelConfig2Register.address, accelConfig2.bits, bytes[4])
      }
    }
    if let error = readBlock(FIFOEnableRegister.address, count: 1, into: &block) { return error }
    block.withBytes { visit(FIFOEnableRegister.address, expected.fifoEnable.bits, $0[0]) }
    if let error = readBlock(InterruptPinConfigRegister.address, count: 2, into: &block) {
      return error
    }
    block.withBytes { bytes in
      visit(InterruptPinConfigRegister.address, expected.interruptPinConfig.bits, bytes[0])
      visit(InterruptEnableRegister.address, expected.interruptEnable.bits, bytes[1])
    }
    if let error = readBlock(UserControlRegister.address, count: 2, into: &block) { return error }
    block.withBytes { bytes in
      visit(UserControlRegister.address, expected.userControl.bits, bytes[0])
      visit(PowerManagement1Register.address, expected.powerManagement1.bits, bytes[1])
    }
    return nil
  }

  static func registerName(_ register: UInt8) -> String {
    switch register {
    case SampleRateDividerRegister.address: SampleRateDividerRegister.name
    case ConfigRegister.address: ConfigRegister.name
    case GyroConfigRegister.address: GyroConfigRegister.name
    case AccelConfigRegister.address: AccelConfigRegister.name
    case AccelConfig2Register.address: AccelConfig2Register.name
    case FIFOEnableRegister.address: FIFOEnableRegister.name
    case InterruptPinConfigRegister.address: InterruptPinConfigRegister.name
    case InterruptEnableRegister.address: InterruptEnableRegister.name
    case UserControlRegister.address: UserControlRegister.name
    case PowerManagement1Register.address: PowerManagement1Register.name
    default: hexByte(register)
    }
  }

  private mutating func writeFIFORegisters(at now: Timestamp) -> Bool {
    let registers = controlRegisters
    if let error = write(registers.fifoEnable) ?? write(registers.userControlEmptyingFIFO)
      ?? write(registers.userControl) ?? write(registers.interruptEnable)
    {
      _ = failedRead(error, at: now)
      return false
    }
    return true
  }

  // MARK: - Transfers with retries

  /// Reads `count` (≤ 32) registers from `register` into `block`, retrying transient errors;
  /// returns the last error when every attempt failed.
  mutating func readBlock(_ register: UInt8, count: Int, into block: inout Block) -> I2CError? {
    var attempt = 0
    while true {
      attempt += 1
      var local = Block()
      let failure = Self.read(register, count: count, into: &local, on: &bus, at: address)
      guard let error = failure else {
        block = local
        return nil
      }
      counters.busErrors.record(error)
      if !error.isTransient || attempt >= policy.attemptsPerTransfer { return error }
      counters.retries += 1
    }
  }

  /// One block read, without retries. Static, with the bus and address as parameters, so the
  /// closure that lends the block's bytes captures only those, not the driver (capturing the
  /// driver would make unspecialised code look up `MPU6050Driver<Bus>`'s metadata per read).
  private static func read(
    _ register: UInt8, count: Int, into block: inout Block, on bus: inout Bus,
    at address: I2CAddress
  ) -> I2CError? {
    var failure: I2CError?
    block.withMutableBytes(count: count) { buffer in
      do throws(I2CError) {
        try bus.readRegisters(startingAt: register, into: buffer, at: address)
      } catch {
        failure = error
      }
    }
    return failure
  }

  /// Reads register `R`, retrying transient errors.
  mutating func read<R: MPU6050Register>(_: R.Type) -> Result<R, I2CError> {
    var block = Block()
    if let error = readBlock(R.address, count: 1, into: &block) { return .failure(error) }
    return .success(R(bits: block.withBytes { $0[0] }))
  }

  /// Writes `value` to its register, retrying transient errors; returns the last error when
  /// every attempt failed.
  mutating func write<R: MPU6050Register>(_ value: R) -> I2CError? {
    var attempt = 0
    while true {
      attempt += 1
      do throws(I2CError) {
        try bus.writeRegister(R.address, value: value.bits, at: address)
        return nil
      } catch {
        counters.busErrors.record(error)
        if !error.isTransient || attempt >= policy.attemptsPerTransfer { return error }
        counters.retries += 1
      }
    }
  }

  private mutating func requireRead<R: MPU6050Register>(_ type: R.Type) throws(MPU6050Error) -> R {
    switch read(type) {
    case .success(let value): return value
    case .failure(let error): throw .bus(error)
    }
  }

  private mutating func requireWrite<R: MPU6050Register>(_ value: R) throws(MPU6050Error) {
    if let error = write(value) { throw .bus(error) }
  }

  private mutating func requireBlock(_ register: UInt8, count: Int, into block: inout Block)
    throws(MPU6050Error)
  {
    if let error = readBlock(register, count: count, into: &block) { throw .bus(error) }
  }
}

/// 32 bytes of inline storage (the SMBus block limit): a burst or two FIFO records, without a
/// heap allocation. Unused bytes stay zero, so two blocks compare by their used bytes.
struct Block: Equatable {
  var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

  static func == (a: Block, b: Block) -> Bool { a.storage == b.storage }

  func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
    withUnsafeBytes(of: storage) { body($0) }
  }

  mutating func withMutableBytes(count: Int, _ body: (UnsafeMutableRawBufferPointer) -> Void) {
    withUnsafeMutableBytes(of: &storage) { raw in
      body(UnsafeMutableRawBufferPointer(rebasing: raw[0..<count]))
    }
  }
}

/// A FIFO reset whose lost samples are not counted yet: when the newest record read before it
/// and the first record after it were produced.
struct PendingFIFOLoss {
  /// A record instant kept as the bounds of a newest record then and how many records before
  /// it, so that it sharpens as the period becomes better known.
  struct Reference {
    var newest: (low: Double, high: Double)
    var back: Int
  }
  var before: Reference
  var after: Reference?
  var resetAt: Timestamp
  /// Whether the records since its reset are still being counted (no reset since).
  var isOpen: Bool
}
