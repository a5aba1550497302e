import HardwareAbstraction

/// How the driver retries, gives up on a tick, and re-initialises. Every timeout is a sample
/// count or nanoseconds measured from timestamps the caller passes in: nothing here reads a
/// clock or sleeps except the blocking `start`.
public struct MPU6050RecoveryPolicy: Hashable, Sendable {
  /// Attempts per transfer within one tick (1 = no retry). A retried transfer at 400 kHz costs
  /// about 0.4 ms for a burst, so 3 attempts stay well inside a 10 ms period.
  public var attemptsPerTransfer: Int
  /// Consecutive ticks whose read failed (after retries) before a full re-initialisation.
  public var failedReadsBeforeReinitialization: Int
  /// Identical 14-byte bursts in a row that mean the data registers are stuck; `nil` turns the
  /// check off (for noise-free simulations). Real gyroscope noise makes even two identical
  /// bursts rare at the default ranges (σ ≈ 2 counts per axis at ±500 °/s and 42 Hz, PS §6.1);
  /// ten in a row does not happen on a working chip.
  public var stuckSampleCount: Int?
  /// How often every configured register, PWR_MGMT_1 included, is read back, ns (four block
  /// reads, about 0.3 ms at 400 kHz).
  public var configurationCheckIntervalNanoseconds: Int64
  /// The wait after DEVICE_RESET before the chip is addressed again, ns. 100 ms is the longest
  /// "start-up time for register read/write" of PS §6.3; waiting less risks NACKs.
  public var resetWaitNanoseconds: Int64
  /// The least time from configuring to the first sample used, ns: the gyroscope's start-up
  /// time (ZRO settling, 30 ms, PS §6.1). The driver waits at least five filter delays too.
  public var settleMinimumNanoseconds: Int64
  /// The least time between two early read-backs, ns; `nil` turns them off. An early
  /// read-back is the periodic one (every configured register), run at once when a sample's
  /// accelerometer or gyro magnitude changed from the previous sample's by a factor near a
  /// power of two, as a full-scale register that changed by itself makes it
  /// (`ScaleChangeCheck`). 100 ms bounds the cost of motion that mimics such a jump to ten
  /// read-backs a second (about 3 ms of bus time), while a real change is still caught at the
  /// first sample that shows it.
  public var earlyConfigurationCheckMinimumIntervalNanoseconds: Int64?
  /// The first back-off after a failed re-initialisation attempt, ns; it doubles per failure.
  public var backoffInitialNanoseconds: Int64
  /// The longest back-off, ns: how long a persistently absent chip waits between attempts.
  public var backoffMaximumNanoseconds: Int64
  /// Samples averaged per self-test phase (self-test off, then on).
  public var selfTestSamples: Int

  public init(
    attemptsPerTransfer: Int = 3, failedReadsBeforeReinitialization: Int = 5,
    stuckSampleCount: Int? = 10, configurationCheckIntervalNanoseconds: Int64 = 1_000_000_000,
    earlyConfigurationCheckMinimumIntervalNanoseconds: Int64? = 100_000_000,
    resetWaitNanoseconds: Int64 = 100_000_000, settleMinimumNanoseconds: Int64 = 30_000_000,
    backoffInitialNanoseconds: Int64 = 100_000_000,
    backoffMaximumNanoseconds: Int64 = 5_000_000_000, selfTestSamples: Int = 20
  ) {
    self.attemptsPerTransfer = max(1, attemptsPerTransfer)
    self.failedReadsBeforeReinitialization = max(1, failedReadsBeforeReinitialization)
    self.stuckSampleCount = stuckSampleCount.map { max(2, $0) }
    self.configurationCheckIntervalNanoseconds = configurationCheckIntervalNanoseconds
    self.earlyConfigurationCheckMinimumIntervalNanoseconds =
      earlyConfigurationCheckMinimumIntervalNanoseconds
    self.resetWaitNanoseconds = resetWaitNanoseconds
    self.settleMinimumNanoseconds = settleMinimumNanoseconds
    self.backoffInitialNanoseconds = backoffInitialNanoseconds
    self.backoffMaximumNanoseconds = backoffMaximumNanoseconds
    self.selfTestSamples = max(1, selfTestSamples)
  }

  public static let `default` = MPU6050RecoveryPolicy()
}

/// Failed bus transfers, by kind (Linux fault-codes vocabulary, `I2CError.Kind`). Every failed
/// attempt counts once, retried or not.
public struct MPU6050BusErrorCounts: Hashable, Sendable {
  public var notAcknowledged: UInt64 = 0
  public var arbitrationLost: UInt64 = 0
  public var busBusy: UInt64 = 0
  public var timedOut: UInt64 = 0
  public var ioError: UInt64 = 0
  public var protocolViolation: UInt64 = 0
  public var shortTransfer: UInt64 = 0
  /// Errors that are not transient (a missing bus, a permission, an unsupported transfer).
  public var permanent: UInt64 = 0

  public init() {}

  /// Transient errors of every kind.
  public var transient: UInt64 {
    notAcknowledged + arbitrationLost + busBusy + timedOut + ioError + protocolViolation
      + shortTransfer
  }

  /// All failed attempts.
  public var total: UInt64 { transient + permanent }

  /// The count for one kind.
  public subscript(kind: I2CError.Kind) -> UInt64 {
    switch kind {
    case .notAcknowledged: notAcknowledged
    case .arbitrationLost: arbitrationLost
    case .busBusy: busBusy
    case .timedOut: timedOut
    case .ioError: ioError
    case .protocolViolation: protocolViolation
    case .shortTransfer: shortTransfer
    default: 0
    }
  }

  mutating func record(_ error: I2CError) {
    switch error.kind {
    case .notAcknowledged: notAcknowledged += 1
    case .arbitrationLost: arbitrationLost += 1
    case .busBusy: busBusy += 1
    case .timedOut: timedOut += 1
    case .ioError: ioError += 1
    case .protocolViolation: protocolViolation += 1
    case .shortTransfer: shortTransfer += 1
    default: permanent += 1
    }
  }
}

/// Why the driver re-initialised the chip.
public enum MPU6050ReinitializationReason: String, CaseIterable, Hashable, Sendable {
  /// `failedReadsBeforeReinitialization` ticks in a row failed on the bus.
  case busErrors
  /// PWR_MGMT_1 showed the chip asleep or freshly reset (a brown-out, or someone reset it).
  case chipReset
  /// The data registers stopped changing (`stuckSampleCount` identical bursts).
  case stuckData
  /// A configuration register would not keep its value after a rewrite.
  case configurationMismatch
  /// The driver was never started successfully; it keeps trying in the background.
  case startUp
}

/// Re-initialisations begun, by reason.
public struct MPU6050ReinitializationCounts: Hashable, Sendable {
  public var busErrors: UInt64 = 0
  public var chipReset: UInt64 = 0
  public var stuckData: UInt64 = 0
  public var configurationMismatch: UInt64 = 0
  public var startUp: UInt64 = 0

  public init() {}

  public var total: UInt64 { busErrors + chipReset + stuckData + configurationMismatch + startUp }

  public subscript(reason: MPU6050ReinitializationReason) -> UInt64 {
    switch reason {
    case .busErrors: busErrors
    case .chipReset: chipReset
    case .stuckData: stuckData
    case .configurationMismatch: configurationMismatch
    case .startUp: startUp
    }
  }

  mutating func record(_ reason: MPU6050ReinitializationReason) {
    switch reason {
    case .busErrors: busErrors += 1
    case .chipReset: chipReset += 1
    case .stuckData: stuckData += 1
    case .configurationMismatch: configurationMismatch += 1
    case .startUp: startUp += 1
    }
  }
}

/// Everything the driver has done and survived, for health telemetry. Counts only grow.
public struct MPU6050Counters: Hashable, Sendable {
  /// Samples handed to the caller (register bursts and FIFO records).
  public var samplesDelivered: UInt64 = 0
  /// Samples whose 14 bytes equalled the previous sample's (a duplicated edge, or the start of
  /// stuck data).
  public var repeatedSamples: UInt64 = 0
  /// Samples with the accelerometer at ≥ 98 % of its range.
  public var accelerometerClippedSamples: UInt64 = 0
  /// Samples with the gyroscope at ≥ 98 % of its range.
  public var gyroClippedSamples: UInt64 = 0
  /// Failed transfer attempts, by kind.
  public var busErrors = MPU6050BusErrorCounts()
  /// Transfers repeated within a tick after a transient error.
  public var retries: UInt64 = 0
  /// Ticks that produced no sample because the bus failed after all retries.
  public var failedReads: UInt64 = 0
  /// Runs of `stuckSampleCount` identical bursts (each starts a re-initialisation).
  public var stuckDataEvents: UInt64 = 0
  /// Times PWR_MGMT_1 showed the chip asleep or reset.
  public var chipResetsDetected: UInt64 = 0
  /// Configuration read-backs (the periodic check of every register, and single PWR_MGMT_1 or
  /// INT_ENABLE checks when data repeats or edges stop).
  public var configurationChecks: UInt64 = 0
  /// Early read-backs: the periodic check of every register, run before its time because a
  /// sample's accelerometer or gyro magnitude jumped by a factor near a power of two, as a
  /// full-scale register that changed by itself makes it (`ScaleChangeCheck`; at most one per
  /// `policy.earlyConfigurationCheckMinimumIntervalNanoseconds`). Also counted in
  /// `configurationChecks`. A jump sooner than that after the last early read-back defers one
  /// to when the interval allows. Motion alone seldom makes such a jump: about one per ten minutes
  /// of the simulated `handheld` scenario (a rotation that stops), none in `car` or `walk`;
  /// many more mean the trigger is mistuned for the use.
  public var earlyConfigurationChecks: UInt64 = 0
  /// Registers read back different from what the driver wrote (each finding rewrites the
  /// configuration; a rewrite that does not take re-initialises).
  public var configurationMismatches: UInt64 = 0
  /// Re-initialisations begun, by reason.
  public var reinitializationsStarted = MPU6050ReinitializationCounts()
  /// Re-initialisations that reached running again.
  public var reinitializationsCompleted: UInt64 = 0
  /// Re-initialisation attempts that failed and backed off.
  public var reinitializationAttemptsFailed: UInt64 = 0
  /// FIFO overflows detected (FIFO_OFLOW_INT, or a full FIFO).
  public var fifoOverflows: UInt64 = 0
  /// FIFO resets the driver made (after an overflow, a misalignment, or a failed read).
  public var fifoResets: UInt64 = 0
  /// Samples the chip produced that were lost to FIFO overflows and resets, dated exactly from
  /// the drains around the gap (see `MPU6050Driver.drainFIFO`).
  public var samplesLost: UInt64 = 0

  public init() {}
}
