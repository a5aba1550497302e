import Geometry
import HardwareAbstraction
import MotionScenarios
import SimulatedHardware

/// A register-level MPU-6050 on a simulated I2C bus, driven by physical truth.
///
/// **What it answers.** Every register a driver uses, as RM-MPU-6000A rev 4.2 describes it:
/// WHO_AM_I; PWR_MGMT_1 (DEVICE_RESET returns every register to its reset value and leaves the
/// chip asleep; SLEEP stops sampling; CLKSEL 7 stops the clock); SMPLRT_DIV, CONFIG,
/// GYRO_CONFIG, ACCEL_CONFIG (rate, filter, ranges, self-test actuators); INT_PIN_CFG,
/// INT_ENABLE, INT_STATUS (cleared by reading it, or by any read with INT_RD_CLEAR);
/// FIFO_EN, USER_CTRL (FIFO_EN, FIFO_RESET only while FIFO_EN is 0, SIG_COND_RESET),
/// FIFO_COUNT and FIFO_R_W over a FIFO that drops its oldest bytes when full; the self-test trim
/// registers 0x0D–0x10; SIGNAL_PATH_RESET; and the 14 measurement registers, refreshed together
/// so a burst always reads one sampling instant (RM §4.17). Other registers read back what was
/// written; undocumented ones read 0.
///
/// **How it samples.** The chip runs on its own oscillator (nominal × (1 + `oscillatorError`)):
/// internal steps at 1 kHz (8 kHz for the gyroscope with the filter off), every one taking the
/// truth from the `MotionSource` at that instant, applying the unit's errors (scale,
/// cross-axis, offsets and their temperature dependence, the self-test response when enabled)
/// and the low-pass filter. Every (1 + SMPLRT_DIV)-th step is a sample: white noise at the
/// datasheet density over the filter's bandwidth is added, the values are converted with the
/// ranges currently configured, rounded, saturated to int16, written to the data registers and
/// the FIFO, and data-ready is raised (`nextRisingEdge(after:)`).
///
/// **The filter model.** Two cascaded first-order sections per axis at the internal rate,
/// each y += α(x − y) with α = 2 / (D·f + 2), so that the pair's low-frequency group delay,
/// 2(1 − α)/α samples, equals the delay D of RM §4.3's table for the configured DLPF_CFG
/// (4.8 ms for the gyroscope at DLPF_CFG 3). The −3 dB bandwidth comes out close to the table's
/// for DLPF_CFG 3 (43 vs 42 Hz) and narrower for the wider settings; the noise is scaled with
/// the table's bandwidth (σ = density × √bandwidth, which reproduces PS §6.1's 0.05 °/s-rms at
/// DLPF_CFG 2). A vibration above half the sample rate aliases exactly as on the chip.
///
/// **Time.** The chip's internal time advances lazily to the shared clock's reading at every
/// register access and edge query, processing each internal step in order (so the filter state
/// is always right). Nothing happens between accesses; a minute of simulated time costs 60 000
/// truth evaluations.
///
/// **Faults.** `faults` schedules brown-outs, frozen output and register corruption; a
/// `unit` with a self-test ratio outside 0.86…1.14 fails its self-test on that axis; a
/// `variant` other than `.mpu6050` answers another WHO_AM_I. While resetting (after
/// DEVICE_RESET, for `resetBusyDuration`) and during a brown-out's outage the chip NACKs every
/// transfer.
///
/// A class: the bus, the line and the test share one chip. Not `Sendable` (one simulated world,
/// one thread). The per-sample path allocates nothing.
public final class SimulatedMPU6050: SimulatedI2CDevice, EdgeSource {
  /// Register addresses, restated from RM-MPU-6000A rev 4.2 §3 independently of the driver.
  enum Register {
    static let selfTestX: UInt8 = 0x0D
    static let selfTestY: UInt8 = 0x0E
    static let selfTestZ: UInt8 = 0x0F
    static let selfTestA: UInt8 = 0x10
    static let sampleRateDivider: UInt8 = 0x19
    static let config: UInt8 = 0x1A
    static let gyroConfig: UInt8 = 0x1B
    static let accelConfig: UInt8 = 0x1C
    static let accelConfig2: UInt8 = 0x1D
    static let fifoEnable: UInt8 = 0x23
    static let interruptPinConfig: UInt8 = 0x37
    static let interruptEnable: UInt8 = 0x38
    static let interruptStatus: UInt8 = 0x3A
    static let accelXHigh: UInt8 = 0x3B
    static let gyroZLow: UInt8 = 0x48
    static let signalPathReset: UInt8 = 0x68
    static let userControl: UInt8 = 0x6A
    static let powerManagement1: UInt8 = 0x6B
    static let powerManagement2: UInt8 = 0x6C
    static let fifoCountHigh: UInt8 = 0x72
    static let fifoCountLow: UInt8 = 0x73
    static let fifoReadWrite: UInt8 = 0x74
    static let whoAmI: UInt8 = 0x75
  }

  /// What the chip has done: the truth a test reconciles the driver's counters with.
  public struct Statistics: Hashable, Sendable {
    /// Samples produced (while awake and clocked).
    public var samplesProduced: UInt64 = 0
    /// Samples produced while DATA_RDY_EN was set: the data-ready pulses the INT pin gave.
    public var dataReadyPulses: UInt64 = 0
    /// Samples that left the data registers unchanged because of a freeze.
    public var frozenSamples: UInt64 = 0
    /// DEVICE_RESET writes obeyed.
    public var deviceResets: UInt64 = 0
    /// Brown-outs that happened.
    public var brownOuts: UInt64 = 0
    /// Register corruptions that happened.
    public var registerCorruptions: UInt64 = 0
    /// Transfers NACKed because the chip was resetting or unpowered.
    public var notAcknowledged: UInt64 = 0
    /// Records written to the FIFO.
    public var fifoRecordsWritten: UInt64 = 0
    /// FIFO records read whole by the host.
    public var fifoRecordsRead: UInt64 = 0
    /// FIFO records lost: partly or wholly dropped by an overflow, or discarded by a reset.
    /// (Samples produced while the host had the FIFO switched off — for a moment during every
    /// FIFO_RESET, which works only while FIFO_EN is 0 — never became records: reconcile a
    /// host's losses with `samplesProduced`, not with this.)
    public var fifoRecordsLost: UInt64 = 0
    /// Bytes dropped because the FIFO was full.
    public var fifoBytesDropped: UInt64 = 0
    /// Bytes discarded by FIFO_RESET or a device reset.
    public var fifoBytesDiscarded: UInt64 = 0
    /// Times FIFO_OFLOW_INT was raised.
    public var fifoOverflows: UInt64 = 0
    /// 14-byte (or longer) reads starting at ACCEL_XOUT_H.
    public var burstReads: UInt64 = 0

    public init() {}
  }

  /// The clock every access advances the chip to.
  public let clock: ManualClock
  /// The physical truth the chip measures.
  public let motion: any MotionSource
  /// The instant that is `0 s` of the motion.
  public let motionStart: Timestamp
  /// Which part it answers as.
  public let variant: SimulatedMPU6050Variant
  /// Its factory errors and trim.
  public let unit: SimulatedMPU6050Unit
  /// How long the chip NACKs after DEVICE_RESET (PS §6.3 gives 20–100 ms start-up time).
  public var resetBusyDuration: Duration
  /// What it has done, up to the clock's reading now.
  public var statistics: Statistics {
    advance(to: clock.now())
    return counts
  }

  /// Called with the time of every sample the chip produces (the instant its data registers
  /// change and data-ready rises), in order, as the chip catches up with the clock: a
  /// hardware-in-the-loop run reconciles the frames a host receives with these, sample for
  /// sample. Called while the chip is being accessed: it must not touch the chip, bus or line.
  /// Set once; calling it does not allocate.
  public var onSampleProduced: ((Timestamp) -> Void)?

  private var counts = Statistics()
  private var registers = [UInt8](repeating: 0, count: 128)
  private var random: SeededGenerator
  private var events: [ScheduledChipEvent]
  private var nextEvent = 0
  private var busyUntil: Timestamp?
  private var frozenRemaining = 0
  private var interruptStatus: UInt8 = 0
  // Sample clock: internal step k happens at anchor + round(k × stepNanoseconds).
  private var anchor: Timestamp
  private var stepNanoseconds: Double = 1e6
  private var internalRateIs8kHz = false
  private var nextStep: Int64 = 1
  private var nextOutputStep: Int64 = 1
  private var outputStride: Int64 = 1
  private var lastOutputStep: Int64 = 0
  // Filter state: two first-order sections per sensor.
  private var gyroStage1 = Vector3.zero
  private var gyroStage2 = Vector3.zero
  private var accelStage1 = Vector3.zero
  private var accelStage2 = Vector3.zero
  private var dieTemperature = 25.0
  // FIFO: a ring of bytes and, for each byte, whether it starts a record.
  private var fifo: [UInt8]
  private var fifoStartsRecord: [Bool]
  private var fifoHead = 0
  private var fifoCount = 0
  private var lastFIFOByte: UInt8 = 0
  private var removingRecordWhole = true
  private var removingRecord = false
  private var overflowing = false
  // Data-ready history, for edge queries about the past.
  private var edgeSegments: [EdgeSegment] = []
  // The unit's bias wander: the knot whose value (and the next one's) is cached.
  private var wanderKnot: Int64 = -1
  private var wanderLow = Vector3.zero
  private var wanderHigh = Vector3.zero

  /// A chip measuring `motion` (time 0 at `motionStart`, by default the clock's reading now), at
  /// power-on: asleep, every register at its reset value.
  public init(
    clock: ManualClock, motion: any MotionSource, unit: SimulatedMPU6050Unit = .ideal,
    variant: SimulatedMPU6050Variant = .mpu6050, faults: SimulatedMPU6050Faults = .none,
    motionStart: Timestamp? = nil, resetBusyDuration: Duration = .milliseconds(30)
  ) {
    self.clock = clock
    self.motion = motion
    self.motionStart = motionStart ?? clock.now()
    self.variant = variant
    self.unit = unit
    self.resetBusyDuration = resetBusyDuration
    random = SeededGenerator(seed: unit.noiseSeed, stream: 1)
    events = faults.schedule
    anchor = clock.now()
    fifo = [UInt8](repeating: 0, count: variant.fifoCapacityBytes)
    fifoStartsRecord = [Bool](repeating: false, count: variant.fifoCapacityBytes)
    edgeSegments.reserveCapacity(Self.edgeHistory + 1)
    resetRegisters()
  }

  // MARK: - Inspection (for tests and tools)

  /// The raw register value as the chip holds it now (no read side effects).
  public func peek(_ register: UInt8) -> UInt8 {
    advance(to: clock.now())
    switch register {
    case Register.interruptStatus: return interruptStatus
    case Register.fifoCountHigh: return UInt8(fifoCount >> 8)
    case Register.fifoCountLow: return UInt8(fifoCount & 0xFF)
    default: return registers[Int(register & 0x7F)]
    }
  }

  /// Bytes in the FIFO now.
  public var fifoByteCount: Int {
    advance(to: clock.now())
    return fifoCount
  }

  /// Whether the chip is asleep (or its clock stopped), so it samples nothing.
  public var isAsleep: Bool {
    advance(to: clock.now())
    return !isSampling
  }

  /// The time of the chip's next sample after the clock's reading (whether or not the INT pin
  /// pulses), or `nil` while it does not sample.
  public var nextSampleTime: Timestamp? {
    advance(to: clock.now())
    guard isSampling else { return nil }
    return time(ofStep: nextOutputStep)
  }

  /// The chip's true sample period now, nanoseconds (its oscillator's, not the nominal one).
  public var samplePeriodNanoseconds: Double { stepNanoseconds * Double(outputStride) }

  // MARK: - SimulatedI2CDevice

  public func writeRegister(_ register: UInt8, value: UInt8) throws(I2CError) {
    let now = clock.now()
    advance(to: now)
    try checkAwake(register: register, operation: .writeRegister, at: now)
    clearStatusIfAnyRead(isRead: false)
    write(register, value, at: now)
  }

  public func readRegisters(startingAt register: UInt8, into buffer: UnsafeMutableRawBufferPointer)
    throws(I2CError)
  {
    let now = clock.now()
    advance(to: now)
    try checkAwake(register: register, operation: .readRegisters, at: now)
    if register == Register.accelXHigh, buffer.count >= 14 { counts.burstReads += 1 }
    // FIFO_COUNT is latched for the whole transfer.
    let count = fifoCount
    var address = register
    for index in 0..<buffer.count {
      buffer[index] = read(address, latchedCount: count)
      // The pointer stays on FIFO_R_W so a block read drains the FIFO (RM §4.31).
      if address != Register.fifoReadWrite { address = address &+ 1 }
    }
    clearStatusIfAnyRead(isRead: true)
  }

  private func checkAwake(register: UInt8, operation: I2CError.Operation, at now: Timestamp)
    throws(I2CError)
  {
    guard let busyUntil, now < busyUntil else {
      self.busyUntil = nil
      return
    }
    counts.notAcknowledged += 1
    throw I2CError(.notAcknowledged, operation: operation, errno: .remoteIO, register: register)
  }

  private func read(_ register: UInt8, latchedCount: Int) -> UInt8 {
    switch register {
    case Register.interruptStatus:
      let value = interruptStatus
      // INT_RD_CLEAR = 0: status clears when INT_STATUS is read (RM §4.14, §4.16).
      interruptStatus = 0
      return value
    case Register.fifoCountHigh: return UInt8((latchedCount >> 8) & 0xFF)
    case Register.fifoCountLow: return UInt8(latchedCount & 0xFF)
    case Register.fifoReadWrite: return popFIFO()
    case Register.whoAmI: return variant.whoAmI
    case Register.accelConfig2 where variant.generation == .mpu6050: return 0
    case 0x76...0x7F: return 0
    default: return registers[Int(register)]
    }
  }

  private func clearStatusIfAnyRead(isRead: Bool) {
    // INT_RD_CLEAR (INT_PIN_CFG bit 4): any read clears the status bits.
    if isRead, registers[Int(Register.interruptPinConfig)] & 0x10 != 0 { interruptStatus = 0 }
  }

  private func write(_ register: UInt8, _ value: UInt8, at now: Timestamp) {
    switch register {
    case Register.selfTestX...Register.selfTestA, Register.interruptStatus,
      Register.accelXHigh...Register.gyroZLow, Register.fifoCountHigh, Register.fifoCountLow,
      Register.whoAmI:
      return  // read-only (factory trim, status, measurements, counts, identity)
    case Register.fifoReadWrite:
      return  // host writes to the FIFO are not modelled
    case Register.accelConfig2 where variant.generation == .mpu6050:
      return  // not a register of the MPU-6050
    case Register.powerManagement1:
      if value & 0x80 != 0 {
        deviceReset(at: now, busyFor: resetBusyDuration)
        counts.deviceResets += 1
        return
      }
      let wasSampling = isSampling
      registers[Int(register)] = value
      if !wasSampling && isSampling { wake(at: now) }
      rearmEdges(at: now)
    case Register.sampleRateDivider:
      registers[Int(register)] = value
      retime(at: now)
    case Register.config:
      let wasFast = filterOff
      registers[Int(register)] = value
      if filterOff != wasFast { retime(at: now) }
    case Register.interruptEnable:
      registers[Int(register)] = value
      rearmEdges(at: now)
    case Register.signalPathReset:
      // GYRO_RESET, ACCEL_RESET: the signal paths start over (the bits clear themselves).
      if value & 0x04 != 0 {
        gyroStage1 = .zero
        gyroStage2 = .zero
      }
      if value & 0x02 != 0 {
        accelStage1 = .zero
        accelStage2 = .zero
      }
    case Register.userControl:
      // FIFO_RESET works "while FIFO_EN equals 0" (RM §4.27); it and SIG_COND_RESET clear
      // themselves.
      if value & 0x04 != 0, value & 0x40 == 0 { clearFIFO() }
      if value & 0x01 != 0 {
        gyroStage1 = .zero
        gyroStage2 = .zero
        accelStage1 = .zero
        accelStage2 = .zero
        for address in Register.accelXHigh...Register.gyroZLow { registers[Int(address)] = 0 }
      }
      registers[Int(register)] = value & ~0x07
    case 0x76...0x7F:
      return
    default:
      registers[Int(register)] = value
    }
  }

  // MARK: - EdgeSource

  public func nextRisingEdge(after instant: Timestamp) -> Timestamp? {
    advance(to: clock.now())
    let pendingChange = nextEdgeAffectingEventTime
    // Indexing, not `for … in`: the iterator allocates in unoptimised builds.
    var index = 0
    while index < edgeSegments.count {
      let segment = edgeSegments[index]
      index += 1
      let end = segment.end ?? pendingChange
      if let end, end <= instant { continue }
      let from = max(instant, segment.start.advanced(byNanoseconds: -1))
      guard let edge = firstOutput(in: segment, after: from) else { continue }
      if let end, edge >= end { continue }
      return edge
    }
    return nil
  }

  /// A stretch of time during which the INT pin pulsed at every sample of one sample clock.
  struct EdgeSegment {
    var start: Timestamp
    var end: Timestamp?
    var anchor: Timestamp
    var stepNanoseconds: Double
    var firstOutputStep: Int64
    var stride: Int64
  }

  private static let edgeHistory = 8

  private func firstOutput(in segment: EdgeSegment, after instant: Timestamp) -> Timestamp? {
    func time(_ step: Int64) -> Timestamp {
      segment.anchor.advanced(
        byNanoseconds: Int64((Double(step) * segment.stepNanoseconds).rounded()))
    }
    let elapsed = Double(instant.nanoseconds(since: segment.anchor)) / segment.stepNanoseconds
    var m = max(
      0,
      Int64(((elapsed - Double(segment.firstOutputStep)) / Double(segment.stride)).rounded(.down)))
    while m > 0, time(segment.firstOutputStep + (m - 1) * segment.stride) > instant { m -= 1 }
    while time(segment.firstOutputStep + m * segment.stride) <= instant { m += 1 }
    return time(segment.firstOutputStep + m * segment.stride)
  }

  /// The time of the next scheduled fault that changes the INT pin's pulses: a brown-out, or a
  /// corruption of SMPLRT_DIV, CONFIG, INT_ENABLE or PWR_MGMT_1. Edge predictions stop there;
  /// edges after it are reported once the clock has passed it (as history, so none is lost).
  private var nextEdgeAffectingEventTime: Timestamp? {
    var index = nextEvent
    while index < events.count {
      switch events[index].kind {
      case .brownOut: return events[index].time
      case .corruption(let corruption)
      where corruption.register == Register.sampleRateDivider
        || corruption.register == Register.config
        || corruption.register == Register.interruptEnable
        || corruption.register == Register.powerManagement1:
        return events[index].time
      default: index += 1
      }
    }
    return nil
  }

  /// Closes the current data-ready segment at `now` and opens a new one if the pin pulses.
  private func rearmEdges(at now: Timestamp) {
    if let last = edgeSegments.indices.last, edgeSegments[last].end == nil {
      edgeSegments[last].end = now
    }
    guard isSampling, registers[Int(Register.interruptEnable)] & 0x01 != 0 else { return }
    if edgeSegments.count >= Self.edgeHistory { edgeSegments.removeFirst() }
    edgeSegments.append(
      EdgeSegment(
        start: now, end: nil, anchor: anchor, stepNanoseconds: stepNanoseconds,
        firstOutputStep: nextOutputStep, stride: outputStride))
  }

  // MARK: - Time

  private var isSampling: Bool {
    let power = registers[Int(Register.powerManagement1)]
    return power & 0x40 == 0 && power & 0x07 != 0x07
  }

  private var filterOff: Bool {
    let code = registers[Int(Register.config)] & 0x07
    return code == 0 || code == 7
  }

  private func time(ofStep step: Int64) -> Timestamp {
    anchor.advanced(byNanoseconds: Int64((Double(step) * stepNanoseconds).rounded()))
  }

  /// Processes every internal step and scheduled fault up to `now`, in time order.
  private func advance(to now: Timestamp) {
    while true {
      let eventTime = nextEvent < events.count ? events[nextEvent].time : nil
      if isSampling {
        let stepTime = time(ofStep: nextStep)
        if stepTime <= now, eventTime.map({ stepTime < $0 }) ?? true {
          process(step: nextStep, at: stepTime)
          nextStep += 1
          continue
        }
      }
      guard let eventTime, eventTime <= now else { return }
      let event = events[nextEvent]
      nextEvent += 1
      apply(event, at: eventTime)
    }
  }

  private func apply(_ event: ScheduledChipEvent, at time: Timestamp) {
    switch event.kind {
    case .brownOut(let brownOut):
      counts.brownOuts += 1
      deviceReset(at: time, busyFor: brownOut.outage)
    case .freeze(let freeze):
      frozenRemaining = max(frozenRemaining, freeze.samples)
    case .corruption(let corruption):
      counts.registerCorruptions += 1
      write(corruption.register, corruption.value, at: time)
    }
  }

  /// Restarts the sample clock at `now` (after waking, or when the internal rate changes).
  private func wake(at now: Timestamp) {
    anchor = now
    internalRateIs8kHz = filterOff
    let nominal = internalRateIs8kHz ? 125_000.0 : 1_000_000.0
    stepNanoseconds = nominal / (1 + unit.oscillatorError)
    nextStep = 1
    outputStride = Int64(registers[Int(Register.sampleRateDivider)]) + 1
    nextOutputStep = outputStride
    lastOutputStep = 0
  }

  /// Applies a new divider or internal rate at `now`.
  private func retime(at now: Timestamp) {
    guard isSampling else { return }
    if filterOff != internalRateIs8kHz {
      wake(at: now)
    } else {
      outputStride = Int64(registers[Int(Register.sampleRateDivider)]) + 1
      nextOutputStep = max(nextStep, lastOutputStep + outputStride)
    }
    rearmEdges(at: now)
  }

  private func deviceReset(at time: Timestamp, busyFor duration: Duration) {
    resetRegisters()
    interruptStatus = 0
    frozenRemaining = 0
    clearFIFO()
    gyroStage1 = .zero
    gyroStage2 = .zero
    accelStage1 = .zero
    accelStage2 = .zero
    busyUntil = time + duration
    rearmEdges(at: time)
  }

  private func resetRegisters() {
    for index in registers.indices { registers[index] = 0 }
    registers[Int(Register.powerManagement1)] = 0x40
    let gyro = unit.gyroTrimCodes
    let accel = unit.accelerometerTrimCodes
    registers[Int(Register.selfTestX)] = (accel.x >> 2) << 5 | gyro.x & 0x1F
    registers[Int(Register.selfTestY)] = (accel.y >> 2) << 5 | gyro.y & 0x1F
    registers[Int(Register.selfTestZ)] = (accel.z >> 2) << 5 | gyro.z & 0x1F
    registers[Int(Register.selfTestA)] =
      (accel.x & 0x03) << 4 | (accel.y & 0x03) << 2 | accel.z & 0x03
  }

  // MARK: - The sample path

  /// Counts per °/s for FS_SEL 0…3 (PS §6.1).
  private static let gyroCountsPerDegreePerSecond: [Double] = [131, 65.5, 32.8, 16.4]
  /// Counts per g for AFS_SEL 0…3 (PS §6.2).
  private static let accelCountsPerG: [Double] = [16384, 8192, 4096, 2048]
  /// RM §4.3: accelerometer bandwidth (Hz) and delay (s) for DLPF_CFG 0…7 (7 as 0).
  private static let accelBandwidth: [Double] = [260, 184, 94, 44, 21, 10, 5, 260]
  private static let accelDelay: [Double] = [0, 0.0020, 0.0030, 0.0049, 0.0085, 0.0138, 0.0190, 0]
  /// RM §4.3: gyroscope bandwidth (Hz) and delay (s) for DLPF_CFG 0…7 (7 as 0).
  private static let gyroBandwidth: [Double] = [256, 188, 98, 42, 20, 10, 5, 256]
  private static let gyroDelay: [Double] = [
    0.00098, 0.0019, 0.0028, 0.0048, 0.0083, 0.0134, 0.0186, 0.00098,
  ]
  private static let standardGravity = 9.806_65
  private static let degree = Double.pi / 180

  /// The accelerometer's filter code: CONFIG's DLPF_CFG on an MPU-6050, ACCEL_CONFIG2's
  /// A_DLPF_CFG on the MPU-6500 generation (bypassed when ACCEL_FCHOICE_B is set); the same
  /// table models both.
  private var accelFilterCode: Int {
    if variant.generation == .mpu6500 {
      let value = registers[Int(Register.accelConfig2)]
      return value & 0x08 != 0 ? 0 : Int(value & 0x07)
    }
    return Int(registers[Int(Register.config)] & 0x07)
  }

  private func process(step: Int64, at time: Timestamp) {
    let motionSeconds = Double(time.nanoseconds(since: motionStart)) * 1e-9
    let truth = motion.truth(atSeconds: motionSeconds)
    let temperature = truth.temperatureCelsius + unit.temperatureOffsetCelsius
    dieTemperature = temperature
    let dT = temperature - 25
    let gyroConfig = registers[Int(Register.gyroConfig)]
    let accelConfig = registers[Int(Register.accelConfig)]

    // The gyroscope, every internal step.
    let omega = truth.angularRateRadiansPerSecond
    var gyro = omega + unit.gyroCrossAxis * omega
    gyro =
      gyro.scaled(by: Vector3(1, 1, 1) + unit.gyroScaleError)
      * (1 + unit.gyroScaleTemperatureCoefficient * dT)
    gyro += unit.gyroOffsetRadiansPerSecond + unit.gyroOffsetTemperatureCoefficient * dT
    if let walk = unit.gyroOffsetRandomWalk { gyro += wander(walk, atSeconds: motionSeconds) }
    gyro += gyroSelfTest(gyroConfig)
    let gyroCode = Int(registers[Int(Register.config)] & 0x07)
    let gyroAlpha = alpha(delay: Self.gyroDelay[gyroCode], rate: internalRateIs8kHz ? 8000 : 1000)
    gyroStage1 += (gyro - gyroStage1) * gyroAlpha
    gyroStage2 += (gyroStage1 - gyroStage2) * gyroAlpha

    // The accelerometer runs at 1 kHz: every eighth step when the gyroscope runs at 8 kHz.
    if !internalRateIs8kHz || step % 8 == 0 {
      let force = truth.specificForceMetersPerSecondSquared
      var accel = force + unit.accelerometerCrossAxis * force
      accel =
        accel.scaled(by: Vector3(1, 1, 1) + unit.accelerometerScaleError)
        * (1 + unit.accelerometerScaleTemperatureCoefficient * dT)
      accel +=
        unit.accelerometerOffsetMetersPerSecondSquared
        + unit.accelerometerOffsetTemperatureCoefficient * dT
      accel += accelSelfTest(accelConfig)
      let accelAlpha = alpha(delay: Self.accelDelay[accelFilterCode], rate: 1000)
      accelStage1 += (accel - accelStage1) * accelAlpha
      accelStage2 += (accelStage1 - accelStage2) * accelAlpha
    }

    guard step >= nextOutputStep else { return }
    lastOutputStep = step
    nextOutputStep = step + outputStride
    output(gyroConfig: gyroConfig, accelConfig: accelConfig, gyroCode: gyroCode)
    onSampleProduced?(time)
  }

  /// The bias wander at `seconds`, exactly `walk.value(atSeconds:)`, recomputing the two knots
  /// around it only when a knot is passed (once a second, not once a step).
  private func wander(_ walk: BiasRandomWalk, atSeconds seconds: Double) -> Vector3 {
    guard let (knot, fraction) = walk.knotPosition(atSeconds: seconds) else { return .zero }
    if knot != wanderKnot {
      wanderLow = knot == wanderKnot + 1 ? wanderHigh : walk.value(atKnot: knot)
      wanderHigh = walk.value(atKnot: knot + 1)
      wanderKnot = knot
    }
    return BiasRandomWalk.interpolate(wanderLow, wanderHigh, fraction)
  }

  /// One sample: noise, conversion, quantisation, registers, FIFO, data-ready.
  private func output(gyroConfig: UInt8, accelConfig: UInt8, gyroCode: Int) {
    counts.samplesProduced += 1
    let enabled = registers[Int(Register.interruptEnable)]
    if enabled & 0x01 != 0 {
      counts.dataReadyPulses += 1
      interruptStatus |= 0x01
    }
    let gyroSigma = unit.gyroNoiseDensity * Self.gyroBandwidth[gyroCode].squareRoot()
    let accelSigma =
      unit.accelerometerNoiseDensity * Self.accelBandwidth[accelFilterCode].squareRoot()
    let gyro = gyroStage2 + noise(gyroSigma)
    let accel = accelStage2 + noise(accelSigma)
    var temperatureNoise = 0.0
    if unit.temperatureNoiseCelsius > 0 {
      temperatureNoise = unit.temperatureNoiseCelsius * random.gaussian()
    }

    if frozenRemaining > 0 {
      frozenRemaining -= 1
      counts.frozenSamples += 1
    } else {
      let gyroScale = Self.gyroCountsPerDegreePerSecond[Int(gyroConfig >> 3 & 0x03)] / Self.degree
      let accelScale = Self.accelCountsPerG[Int(accelConfig >> 3 & 0x03)] / Self.standardGravity
      put(accel.x * accelScale, at: 0x3B)
      put(accel.y * accelScale, at: 0x3D)
      put(accel.z * accelScale, at: 0x3F)
      if registers[Int(Register.powerManagement1)] & 0x08 == 0 {
        let celsius = dieTemperature + temperatureNoise - variant.temperatureOffsetCelsius
        put(celsius * variant.temperatureCountsPerDegreeCelsius, at: 0x41)
      }
      put(gyro.x * gyroScale, at: 0x43)
      put(gyro.y * gyroScale, at: 0x45)
      put(gyro.z * gyroScale, at: 0x47)
    }
    writeFIFORecord()
  }

  private func noise(_ sigma: Double) -> Vector3 {
    guard sigma > 0 else { return .zero }
    return Vector3(random.gaussian(), random.gaussian(), random.gaussian()) * sigma
  }

  /// Rounds to the nearest count and saturates to int16, big-endian into two registers.
  private func put(_ counts: Double, at register: Int) {
    let clamped = max(-32768, min(32767, counts.rounded()))
    let bits = UInt16(bitPattern: clamped.isFinite ? Int16(clamped) : 0)
    registers[register] = UInt8(bits >> 8)
    registers[register + 1] = UInt8(bits & 0xFF)
  }

  private func alpha(delay: Double, rate: Double) -> Double {
    2 / (delay * rate + 2)
  }

  /// The self-test response of the gyroscope axes whose XG_ST/YG_ST/ZG_ST bits are set, rad/s:
  /// the factory trim (RM §4.1: 25 × 131 × 1.046^(code − 1) counts at ±250 °/s, negative for
  /// Y) times the unit's response ratio.
  private func gyroSelfTest(_ config: UInt8) -> Vector3 {
    guard config & 0xE0 != 0 else { return .zero }
    func response(_ bit: UInt8, _ code: UInt8, _ ratio: Double, sign: Double) -> Double {
      guard config & bit != 0, code != 0 else { return 0 }
      var counts = 25.0 * 131.0
      for _ in 1..<Int(code) { counts *= 1.046 }
      return sign * counts / 131 * Self.degree * ratio
    }
    let codes = unit.gyroTrimCodes
    let ratio = unit.gyroSelfTestResponseRatio
    return Vector3(
      response(0x80, codes.x, ratio.x, sign: 1), response(0x40, codes.y, ratio.y, sign: -1),
      response(0x20, codes.z, ratio.z, sign: 1))
  }

  /// The self-test response of the accelerometer axes whose XA_ST/YA_ST/ZA_ST bits are set,
  /// m/s²: RM §4.1's 4096 × 0.34 × (0.92/0.34)^((code − 1)/30) counts at ±8 g, times the ratio.
  private func accelSelfTest(_ config: UInt8) -> Vector3 {
    guard config & 0xE0 != 0 else { return .zero }
    func response(_ bit: UInt8, _ code: UInt8, _ ratio: Double) -> Double {
      guard config & bit != 0, code != 0 else { return 0 }
      let counts = 4096 * 0.34 * Self.power(0.92 / 0.34, (Double(code) - 1) / 30)
      return counts / 4096 * Self.standardGravity * ratio
    }
    let codes = unit.accelerometerTrimCodes
    let ratio = unit.accelerometerSelfTestResponseRatio
    return Vector3(
      response(0x80, codes.x, ratio.x), response(0x40, codes.y, ratio.y),
      response(0x20, codes.z, ratio.z))
  }

  /// x^y for x > 0 by bisection on whole powers and a square-root ladder: only IEEE-exact
  /// operations, so every platform gets the same bits.
  static func power(_ x: Double, _ y: Double) -> Double {
    var result = 1.0
    var base = x
    var exponent = y
    if exponent < 0 {
      base = 1 / base
      exponent = -exponent
    }
    let whole = Int(exponent)
    for _ in 0..<whole { result *= base }
    var fraction = exponent - Double(whole)
    var root = base
    for _ in 0..<52 {
      root = root.squareRoot()
      fraction *= 2
      if fraction >= 1 {
        result *= root
        fraction -= 1
      }
      if fraction == 0 { break }
    }
    return result
  }

  // MARK: - FIFO

  private func writeFIFORecord() {
    let userControl = registers[Int(Register.userControl)]
    let enable = registers[Int(Register.fifoEnable)]
    guard userControl & 0x40 != 0, enable & 0xF8 != 0 else { return }
    counts.fifoRecordsWritten += 1
    var first = true
    // In register order (RM §4.6): accelerometer (6 bytes), temperature, gyroscope X, Y, Z.
    // Indexing, not `for … in` over the table: the iterator allocates in unoptimised builds.
    var item = 0
    while item < Self.fifoLayout.count {
      let (bit, start, length) = Self.fifoLayout[item]
      item += 1
      guard enable & bit != 0 else { continue }
      for offset in 0..<length {
        pushFIFO(registers[start + offset], startsRecord: first)
        first = false
      }
    }
  }

  /// FIFO_EN bit, first register, byte count — in the order the FIFO receives them.
  private static let fifoLayout: [(UInt8, Int, Int)] = [
    (0x08, 0x3B, 6), (0x80, 0x41, 2), (0x40, 0x43, 2), (0x20, 0x45, 2), (0x10, 0x47, 2),
  ]

  private func pushFIFO(_ byte: UInt8, startsRecord: Bool) {
    let capacity = fifo.count
    if fifoCount == capacity {
      // Full: the oldest byte is lost (RM §4.31).
      removeFIFOByte(popped: false)
      counts.fifoBytesDropped += 1
      if !overflowing {
        overflowing = true
        counts.fifoOverflows += 1
      }
      // FIFO_OFLOW_INT is raised when its interrupt is enabled (RM §4.15, §4.16).
      if registers[Int(Register.interruptEnable)] & 0x10 != 0 { interruptStatus |= 0x10 }
    }
    let tail = (fifoHead + fifoCount) % capacity
    fifo[tail] = byte
    fifoStartsRecord[tail] = startsRecord
    fifoCount += 1
  }

  private func popFIFO() -> UInt8 {
    guard fifoCount > 0 else { return lastFIFOByte }
    overflowing = false
    let byte = fifo[fifoHead]
    removeFIFOByte(popped: true)
    lastFIFOByte = byte
    return byte
  }

  /// Removes the head byte, keeping the record accounting: a record counts as read only if
  /// every one of its bytes was popped by the host.
  private func removeFIFOByte(popped: Bool) {
    if fifoStartsRecord[fifoHead] {
      finishRemovedRecord()
      removingRecord = true
      removingRecordWhole = true
    }
    if !popped { removingRecordWhole = false }
    fifoHead = (fifoHead + 1) % fifo.count
    fifoCount -= 1
    if fifoCount == 0 || fifoStartsRecord[fifoHead] { finishRemovedRecord() }
  }

  private func finishRemovedRecord() {
    guard removingRecord else { return }
    removingRecord = false
    if removingRecordWhole {
      counts.fifoRecordsRead += 1
    } else {
      counts.fifoRecordsLost += 1
    }
  }

  private func clearFIFO() {
    overflowing = false
    while fifoCount > 0 {
      removeFIFOByte(popped: false)
      counts.fifoBytesDiscarded += 1
    }
    finishRemovedRecord()
    fifoHead = 0
  }
}
