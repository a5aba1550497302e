import HardwareAbstraction

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
  /// The burst's magnitudes jumped as a full-scale change makes them, and the configuration
  /// read-back this set off found a control register changed and rewrote it: the burst was
  /// measured at the wrong range, so it is withheld. A dropped sample, not an error; the
  /// driver is running again and the next sample is good (`counters.configurationMismatches`
  /// tells the loop).
  case configurationRestored
  /// PWR_MGMT_1 showed the chip asleep or reset: re-initialising.
  case chipReset
  /// Polling: the chip has no new sample yet (DATA_RDY_INT clear).
  case noNewSample
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

/// The sample path: one 14-byte burst per data-ready edge (or per poll of DATA_RDY_INT),
/// retried within the tick, checked for repeated and stuck data, converted to SI units and
/// counted; and the diagnosis when edges stop coming.
///
/// Owns `repeats` (`BurstRepeats`), `scaleChanges` (`ScaleChangeCheck`) and `lastSampleTime`.
extension MPU6050Driver {
  /// Reads one sample: the 14-byte burst from ACCEL_XOUT_H, retried within the tick on
  /// transient errors, checked for stuck data, converted to SI units. Call it at each
  /// data-ready edge with the edge's timestamp (or the current time when polling).
  ///
  /// While re-initialising it steps the recovery state machine instead (a few register
  /// transfers at most) and returns `.unavailable(.recovering)`. Once a second
  /// (`policy.configurationCheckIntervalNanoseconds`) it also reads every control register
  /// back and compares it with `controlRegisters`.
  ///
  /// It runs that read-back early, at once, when the burst's raw counts look like a full-scale
  /// change: the accelerometer's or the gyro's magnitude changed from the previous burst's by
  /// a factor near 2, 4 or 8 either way (`ScaleChangeCheck`; at most one early read-back per
  /// `policy.earlyConfigurationCheckMinimumIntervalNanoseconds`, a jump sooner deferring one
  /// to then; counted in `counters.earlyConfigurationChecks`). When a read-back made with such a burst in hand
  /// finds a register changed, the burst was measured at the wrong range: it is not converted
  /// with the driver's scale but withheld, `.unavailable(.configurationRestored)`. An
  /// accelerometer range change is caught at the first sample after it (gravity alone is above
  /// the trigger's floor); a gyro range change only when the body turns at 30 °/s or more
  /// then. Anything else (a gyro range change while still, another register) waits for the
  /// once-a-second read-back, and the samples delivered meanwhile were misread
  /// (`misreadNanosecondsBeforeLastMismatch`). The FIFO fallback (`drainFIFO`) has the
  /// once-a-second read-back only. Allocation-free; never throws or traps.
  public mutating func readSample(at now: Timestamp) -> MPU6050Reading {
    if let unavailable = stepIfNotRunning(at: now) { return .unavailable(unavailable) }
    var block = Block()
    if let error = readBlock(
      MeasurementRegisters.accelXHigh, count: MeasurementRegisters.burstLength, into: &block)
    {
      return .unavailable(failedRead(error, at: now))
    }
    consecutiveFailedReads = 0
    let isRepeat = repeats.record(block)
    if isRepeat {
      counters.repeatedSamples += 1
      // Two identical bursts: cheap to ask whether the chip is still awake.
      if !repeats.checkedPower {
        repeats.checkedPower = true
        if let unavailable = checkPowerManagement(at: now) { return .unavailable(unavailable) }
      }
      if let limit = policy.stuckSampleCount, repeats.inARow + 1 >= limit {
        counters.stuckDataEvents += 1
        beginReinitialization(.stuckData, at: now)
        return .unavailable(.stuckData)
      }
    }
    let raw = block.withBytes { MPU6050RawSample(validated: $0) }
    let jump = scaleChanges.record(raw)
    if now >= nextConfigurationCheck || jump.isSuspicious || earlyConfigurationCheckDeferred {
      if let unavailable = checkConfiguration(at: now, explaining: jump) {
        return .unavailable(unavailable)
      }
    }
    let sample = MPU6050Conversion.convert(raw, scale: scale)
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
        misreadNanosecondsBeforeLastMismatch = misreadNanoseconds(at: now)
        reconfigure(at: now)
      }
    }
    return counters.configurationMismatches > mismatchesBefore ? .reconfigured : .chipRunning
  }

  @inline(__always)  // four counters, after every sample read: not worth a call
  mutating func deliver(_ sample: MPU6050Sample, at now: Timestamp) {
    counters.samplesDelivered += 1
    if sample.clipping.contains(.accelerometer) { counters.accelerometerClippedSamples += 1 }
    if sample.clipping.contains(.gyro) { counters.gyroClippedSamples += 1 }
    lastSampleTime = now
  }

  /// After three periods without a sample while polling: is the chip still awake?
  mutating func checkIfSilent(at now: Timestamp) -> MPU6050Unavailable? {
    let last = lastSampleTime ?? now
    guard now.nanoseconds(since: last) > 3 * samplePeriodNanoseconds else { return nil }
    lastSampleTime = now
    return checkPowerManagement(at: now)
  }
}

/// Repeated bursts: a burst equal to the one before it was read before the chip produced a
/// new sample (a duplicated edge), or is the start of stuck data. Owns the previous burst, how
/// many bursts in a row repeated it, and whether PWR_MGMT_1 was checked during this run.
struct BurstRepeats {
  private var previous = Block()
  private var hasPrevious = false
  /// Bursts in a row equal to the one before them.
  private(set) var inARow = 0
  /// Whether PWR_MGMT_1 was read during this run of repeats (once a run is enough).
  var checkedPower = false

  /// Records `burst`: `true` when it repeats the previous one. A new burst ends the run.
  @inline(__always)
  mutating func record(_ burst: Block) -> Bool {
    let isRepeat = hasPrevious && burst == previous
    previous = burst
    hasPrevious = true
    if !isRepeat {
      inARow = 0
      checkedPower = false
    } else {
      inARow += 1
    }
    return isRepeat
  }

  /// Forgets the previous burst, so the next one is not taken for a repeat.
  mutating func forgetPrevious() { hasPrevious = false }

  /// Starts afresh: no previous burst, no run.
  mutating func reset() {
    hasPrevious = false
    inARow = 0
    checkedPower = false
  }
}
