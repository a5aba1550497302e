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

/// Recovery: noticing that the chip lost its configuration (the power-management and
/// configuration read-backs, failed reads) and bringing it back, either by rewriting the
/// configuration or by a full re-initialisation stepped once per tick with back-off.
///
/// Owns `state` (with its `MPU6050RecoveryStep`), `lastReinitializationReason`,
/// `backoff`, `resetPolls`, `consecutiveFailedReads`, `nextConfigurationCheck`,
/// `nextEarlyConfigurationCheck`, `earlyConfigurationCheckDeferred` and
/// `misreadNanosecondsBeforeLastMismatch`.
extension MPU6050Driver {
  /// Begins a full re-initialisation (identify, reset, configure, settle) now, for `reason`.
  /// The loop's calls to `readSample`/`drainFIFO` step it.
  public mutating func beginReinitialization(
    _ reason: MPU6050ReinitializationReason, at now: Timestamp
  ) {
    counters.reinitializationsStarted.record(reason)
    lastReinitializationReason = reason
    state = .recovering(.waitingToRetry(until: now))
    repeats.reset()
    scaleChanges.forgetPrevious()
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
      backoff.reset()
      becomeRunning(at: now)
    }
  }

  private mutating func failAttempt(_ error: MPU6050Error, at now: Timestamp) {
    lastError = error
    counters.reinitializationAttemptsFailed += 1
    let delay = backoff.nextDelay(policy: policy)
    state = .recovering(.waitingToRetry(until: now.advanced(byNanoseconds: delay)))
  }

  mutating func becomeRunning(at now: Timestamp) {
    state = .running
    // The chip's sample clock restarts: losses not dated yet cannot be anymore.
    counters.samplesLost += UInt64(fifoAccounting.resolve(at: now, all: true))
    fifoAccounting.clock.restartClock(at: now)
    repeats.reset()
    scaleChanges.forgetPrevious()
    earlyConfigurationCheckDeferred = false  // the configuration was just written and verified
    consecutiveFailedReads = 0
    lastSampleTime = now
    fifoAccounting.lastDrain = now
    nextConfigurationCheck = now.advanced(
      byNanoseconds: policy.configurationCheckIntervalNanoseconds)
  }

  /// Steps recovery (or begins it when never started); `nil` when running.
  mutating func stepIfNotRunning(at now: Timestamp) -> MPU6050Unavailable? {
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

  mutating func failedRead(_ error: I2CError, at now: Timestamp) -> MPU6050Unavailable {
    lastError = .bus(error)
    counters.failedReads += 1
    consecutiveFailedReads += 1
    if consecutiveFailedReads >= policy.failedReadsBeforeReinitialization || !error.isTransient {
      beginReinitialization(.busErrors, at: now)
    }
    return .busError(error)
  }

  // MARK: - Health checks

  /// Reads PWR_MGMT_1: asleep, resetting or at its reset value means the chip lost its
  /// configuration (a brown-out): re-initialise.
  mutating func checkPowerManagement(at now: Timestamp) -> MPU6050Unavailable? {
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
        misreadNanosecondsBeforeLastMismatch = misreadNanoseconds(at: now)
        reconfigure(at: now)
      }
      return nil
    }
  }

  /// The periodic read-back: every register the driver wrote, in the same four block reads
  /// as after configuring (0x19–0x1C, 0x23, 0x37–0x38, 0x6A–0x6B: about 0.3 ms a second at
  /// 400 kHz). PWR_MGMT_1 showing sleep or reset means a brown-out: re-initialise. Any other
  /// difference is counted per register and the configuration rewritten.
  ///
  /// Called before `nextConfigurationCheck` it is an early read-back, for a burst whose
  /// magnitudes jumped by `jump` (`readSample`): run only when
  /// `policy.earlyConfigurationCheckMinimumIntervalNanoseconds` allows, counted in
  /// `counters.earlyConfigurationChecks`, and it reschedules the periodic one; a jump seen
  /// too soon after the last early read-back defers one to the first burst the interval
  /// allows (`earlyConfigurationCheckDeferred`; with no jump in hand then, so nothing is
  /// withheld and the samples since the last read-back are the suspect ones). When a
  /// read-back made with a jump in hand finds a register changed, the burst in hand was read
  /// at the wrong range: `.configurationRestored`, so it is withheld. And when every register
  /// found changed is a full-scale register whose change is the jump its sensor showed
  /// (GYRO_CONFIG from ±500 to ±2000 °/s and the gyro's magnitude ÷ 4), the change happened
  /// between the previous burst and this one: the burst in hand, withheld, is the only one
  /// misread (`misreadNanosecondsBeforeLastMismatch` 0). Otherwise the change happened some
  /// time since the previous full read-back, and every sample since may have been misread.
  mutating func checkConfiguration(at now: Timestamp, explaining jump: ScaleJump = ScaleJump())
    -> MPU6050Unavailable?
  {
    if now < nextConfigurationCheck {
      guard let minimum = policy.earlyConfigurationCheckMinimumIntervalNanoseconds else {
        return nil
      }
      guard now >= nextEarlyConfigurationCheck else {
        // Too soon after the last: deferred, not dropped (a real change right after motion
        // that mimicked one is then found within the interval, not a second later).
        if jump.isSuspicious { earlyConfigurationCheckDeferred = true }
        return nil
      }
      nextEarlyConfigurationCheck = now.advanced(byNanoseconds: minimum)
      counters.earlyConfigurationChecks += 1
    }
    earlyConfigurationCheckDeferred = false
    let misread = misreadNanoseconds(at: now)
    nextConfigurationCheck = now.advanced(
      byNanoseconds: policy.configurationCheckIntervalNanoseconds)
    var mismatches: UInt64 = 0
    var power: UInt8 = 0
    // Whether every register found changed is a range register whose change `jump` shows.
    var explained = true
    if let error = readBackConfiguration({ register, expected, read in
      if register == PowerManagement1Register.address { power = read }
      guard read != expected else { return }
      mismatches += 1
      let otherBits = (read ^ expected) & ~0x18 != 0  // anything but FS_SEL/AFS_SEL, bits 4:3
      let k = ScaleChangeCheck.powerOfTwo(
        expectedRange: (expected >> 3) & 3, foundRange: (read >> 3) & 3)
      switch register {
      case GyroConfigRegister.address: explained = explained && !otherBits && k == jump.gyro
      case AccelConfigRegister.address:
        explained = explained && !otherBits && k == jump.accelerometer
      default: explained = false
      }
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
      misreadNanosecondsBeforeLastMismatch = explained ? 0 : misread
      reconfigure(at: now)
      if case .recovering(let step) = state { return .recovering(step) }
      if jump.isSuspicious { return .configurationRestored }
    }
    return nil
  }

  /// How long, ns, samples may have been misread when a read-back at `now` finds a register
  /// changed by itself: since the previous full read-back (`nextConfigurationCheck` less the
  /// interval, until this one reschedules it), at most the interval.
  func misreadNanoseconds(at now: Timestamp) -> Int64 {
    let interval = policy.configurationCheckIntervalNanoseconds
    let previous = nextConfigurationCheck.advanced(byNanoseconds: -interval)
    return max(0, min(interval, now.nanoseconds(since: previous)))
  }

  /// Rewrites and verifies the configuration; a second mismatch re-initialises.
  mutating func reconfigure(at now: Timestamp) {
    // The next burst is not compared with one read before the rewrite, perhaps at another range.
    scaleChanges.forgetPrevious()
    do {
      try writeConfiguration()
      try verifyConfiguration()
    } catch {
      lastError = error
      beginReinitialization(.configurationMismatch, at: now)
    }
  }
}

/// The wait before the next re-initialisation attempt after a failed one: from
/// `policy.backoffInitialNanoseconds`, doubling with each failure in a row, at most
/// `policy.backoffMaximumNanoseconds`. Owns the count of failures since the last success.
struct ReinitializationBackoff {
  private var failures = 0

  /// The wait after one more failure, ns.
  mutating func nextDelay(policy: MPU6050RecoveryPolicy) -> Int64 {
    var delay = max(1, policy.backoffInitialNanoseconds)
    for _ in 0..<min(failures, 62) where delay < policy.backoffMaximumNanoseconds {
      let (doubled, overflow) = delay.multipliedReportingOverflow(by: 2)
      delay = overflow ? .max : doubled
    }
    failures += 1
    return min(delay, policy.backoffMaximumNanoseconds)
  }

  /// A re-initialisation completed: the next failure waits the initial delay again.
  mutating func reset() { failures = 0 }
}
