import HardwareAbstraction

/// Where a sample comes from.
public enum MPU6050SampleSource: Hashable, Sendable {
  /// The 14-byte register burst at each data-ready edge (or poll).
  case dataRegisters
  /// The FIFO (polling fallback when the INT pin is not wired).
  case fifo
}

/// The MPU-6050 driver: identify, reset, configure, self-test, then one coherent 14-byte burst
/// per sample, with retries, re-initialisation and health counters.
///
/// This file holds the driver's configuration and state; its work is in one file per concern,
/// each saying which of the state below it owns:
/// - `StartUp.swift`: identification, reset, configuration, self-test;
/// - `SamplePath.swift`: the burst per edge or poll, repeated and stuck data, missing edges;
/// - `FIFO.swift` and `FIFOLossAccounting.swift`: the FIFO fallback and the samples it loses;
/// - `Recovery.swift`: health checks, reconfiguration and re-initialisation;
/// - `ControlRegisters.swift`: the control registers as the driver means the chip to hold them;
/// - `RegisterIO.swift`: every transfer, typed by register, with retries.
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
  public internal(set) var identity: MPU6050Identity?
  /// Health counters.
  public internal(set) var counters = MPU6050Counters()
  /// Where the driver is.
  public internal(set) var state: MPU6050DriverState = .stopped
  /// The path samples come from.
  public internal(set) var source: MPU6050SampleSource = .dataRegisters
  /// The control registers as the driver means the chip to hold them: what it writes when it
  /// configures the chip, and what the read-backs compare the chip with.
  public internal(set) var controlRegisters: MPU6050ControlRegisters
  /// The last error seen (for a status display); cleared by nothing.
  public internal(set) var lastError: MPU6050Error?
  /// The reason of the re-initialisation in progress or last begun.
  public internal(set) var lastReinitializationReason: MPU6050ReinitializationReason?
  /// For the last read-back that found a control register changed
  /// (`counters.configurationMismatches`): how far back before it, ns, the samples delivered
  /// may have been misread. 0 when an early read-back caught a full-scale change at the first
  /// sample it affected (that sample was withheld, `.configurationRestored`: no sample
  /// delivered was misread); otherwise the time since the previous full read-back, at most
  /// `policy.configurationCheckIntervalNanoseconds` (the change happened some time in it). 0
  /// before any mismatch.
  public internal(set) var misreadNanosecondsBeforeLastMismatch: Int64 = 0
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
    measuredSamplePeriodNanoseconds ?? Int64(fifoAccounting.clock.period.rounded())
  }

  /// The conversion factors for the configuration and the part (StartUp.swift).
  var scale: MPU6050Scale
  /// Repeated and stuck bursts (SamplePath.swift).
  var repeats = BurstRepeats()
  /// When the last sample came (SamplePath.swift).
  var lastSampleTime: Timestamp?
  // Recovery's (Recovery.swift): failed reads in a row, the next periodic read-back, the
  // back-off between failed re-initialisations and the polls of DEVICE_RESET of the one in
  // progress.
  var consecutiveFailedReads = 0
  var nextConfigurationCheck = Timestamp.zero
  /// The earliest time of the next early read-back, and whether a burst asked for one that
  /// had to wait for it (Recovery.swift).
  var nextEarlyConfigurationCheck = Timestamp.zero
  var earlyConfigurationCheckDeferred = false
  /// The early read-back's trigger: magnitudes that jump by a power of two (SamplePath.swift).
  var scaleChanges: ScaleChangeCheck
  var backoff = ReinitializationBackoff()
  var resetPolls = 0
  /// The FIFO's sample clock and the losses not counted yet (FIFO.swift).
  var fifoAccounting: FIFOLossAccounting
  /// The bus, owned by the driver (stored last: see above).
  public internal(set) var bus: Bus

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
    self.scaleChanges = ScaleChangeCheck(
      accelerometer: configuration.accelerometerFullScale, gyro: configuration.gyroFullScale)
    self.controlRegisters = MPU6050ControlRegisters(configuration: validated)
    self.fifoAccounting = FIFOLossAccounting(nominalPeriod: validated.samplePeriodNanoseconds)
  }

  /// The conversion factors in use (ranges and the part's temperature constants).
  public var currentScale: MPU6050Scale { scale }

  /// How long after configuring the first sample is trusted, ns: the gyroscope start-up time
  /// or five filter delays, whichever is longer.
  public var settleNanoseconds: Int64 {
    let filter = Int64((configuration.configuration.lowPassFilter.delaySeconds * 5e9).rounded())
    return max(policy.settleMinimumNanoseconds, filter)
  }
}
