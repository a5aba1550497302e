import ByteFormats
import HardwareAbstraction
import Recording
import SimulatedHardware

/// An MPU-6050 that plays back a `.plumbraw` recording: it raises data-ready edges at the
/// recorded edge times and answers the driver's transfers the way the recorded chip did, so the
/// real driver (and the loop around it) reads back exactly the recorded bytes at exactly the
/// recorded times — the determinism contract of DESIGN.md, at full speed on a `ManualClock`.
///
/// **Two ways to answer.**
///
/// - *Transcript* (`header.hasBusTranscript`, what `PlumbRawRecorder` with a `PlumbRawBusTap`
///   writes): transfer *n* of the replay gets the outcome of transfer *n* of the recording — a
///   read's bytes, a write's acknowledgement, or the failure with its errno — and the chip moves
///   the clock to when that transfer completed. Data bursts (14 bytes from ACCEL_XOUT_H) get the
///   recorded bursts in order: sample records and the burst records of start-up and failed
///   ticks. Start-up, the self-test, retries, re-initialisations, polling and FIFO drains all
///   replay exactly, because the driver sees what it saw.
/// - *Samples only* (a file written with `PlumbRawWriter` alone): the chip emulates a healthy
///   part — WHO_AM_I from the header, registers that read back what was written, a reset that
///   completes at once, the self-test answered from the header's recorded responses, INT_STATUS
///   showing data ready when the next recorded sample was polled — and answers data bursts after
///   `runningSince` with the recorded samples in order, moving the clock to each burst's
///   recorded completion. Ticks recorded as bus errors fail the policy's attempts again.
///   Recovery timelines and FIFO drains are not reproduced without a transcript.
///
/// **Edges.** One per distinct recorded edge time (sample and unavailable records taken at an
/// edge, discarded edges included). An edge the loop got twice (a duplicated edge: two records
/// with the same time) is raised once and doubled by `edgeFaultPlan`, which the line must use
/// (`ReplayedMPU6050Board` wires it). Edges the live loop never got (lost, overflowed) are not
/// in the recording and are not raised. An edge time earlier than the one before cannot be
/// raised (`EdgeSource` answers strictly later instants) and is counted in
/// `unreproducibleEdges`.
///
/// **Divergence.** When the driver asks something the recording cannot answer — a transfer the
/// live driver did not make at that point, a burst after the recorded ones, a configuration
/// write that differs from the recorded one — the chip answers as a healthy part would and
/// counts it in `statistics.divergences` (the first one described in
/// `statistics.firstDivergence`). Data bursts always get the recorded bursts in order, so even a
/// replay whose housekeeping transfers stopped lining up with the recording's (a board whose
/// start-up ended a few microseconds later than the replay's can move the first read-back to
/// the next edge) delivers the recorded samples at the recorded times; recorded failures that
/// no longer line up are not reproduced. A replay with zero divergences gave the driver exactly
/// what the live run gave it.
///
/// A class, like the simulated chip: the bus, the line and the test share it. Not `Sendable`.
/// Steady-state transfers and edge queries allocate nothing.
public final class ReplayedMPU6050: SimulatedI2CDevice, EdgeSource {
  /// Register addresses, restated from RM-MPU-6000A rev 4.2 §3.
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
    static let interruptStatus: UInt8 = 0x3A
    static let accelXHigh: UInt8 = 0x3B
    static let powerManagement1: UInt8 = 0x6B
    static let fifoCountHigh: UInt8 = 0x72
    static let fifoCountLow: UInt8 = 0x73
    static let whoAmI: UInt8 = 0x75
  }

  /// What the replay has done.
  public struct Statistics: Hashable, Sendable {
    /// Edges the line took (distinct times; counted when the line asks for the next one).
    public var edgesRaised: UInt64 = 0
    /// Data bursts answered with recorded bytes.
    public var burstsReplayed: UInt64 = 0
    /// Transfers answered from the transcript (successes).
    public var transfersReplayed: UInt64 = 0
    /// Transfers failed because the recording says they failed.
    public var failuresReplayed: UInt64 = 0
    /// Data bursts answered with a synthetic self-test response (samples-only recordings).
    public var synthesizedBursts: UInt64 = 0
    /// Times the driver asked something the recording could not answer.
    public var divergences: UInt64 = 0
    /// The first divergence, for a person.
    public var firstDivergence: String?

    public init() {}
  }

  /// The clock the chip moves to each transfer's recorded completion.
  public let clock: ManualClock
  /// The recording.
  public let recording: PlumbRawReader
  /// Its header.
  public var header: PlumbRawHeader { recording.header }
  /// Whether transfers are answered from the bus transcript.
  public let replaysTranscript: Bool
  /// The line faults that reproduce the recording's duplicated edges.
  public let edgeFaultPlan: EdgeFaultPlan
  /// Recorded edges that cannot be raised: earlier than the edge before them, or a third copy.
  public let unreproducibleEdges: Int
  /// The distinct edge times in the recording.
  public let recordedEdgeCount: Int
  /// Everything the replay has taken from the recording so far, as one number that grows with
  /// each edge raised, burst, transfer or failure answered from it: a loop whose replay stops
  /// growing it has run past what the recording holds.
  public var progress: UInt64 {
    statistics.edgesRaised &+ statistics.burstsReplayed &+ statistics.transfersReplayed
      &+ statistics.failuresReplayed &+ statistics.synthesizedBursts
  }
  /// The latest time of a sample or unavailable record (`nil` when there is none).
  public let lastSampleRecordTime: Timestamp?
  // The mutable state below is `@exclusivity(unchecked)` (the runtime's dynamic exclusivity
  // checks were a dozen per sample of a replay). Why no two accesses to it can overlap:
  // - One thread at a time: the chip is not `Sendable`, so Swift 6's strict concurrency never
  //   lets two threads reach it at once (a value can change hands only whole).
  // - No re-entrance: the storage is private (`statistics` and `transfersSeen` are read-only
  //   outside), and every access to it inside this class is a plain load or store, or an
  //   in-place mutation whose only call out is into value-type code that cannot reach this
  //   chip (`PlumbRawRecordCursor.advance`, `PlumbRawRecordIterator.next`, which read the
  //   recording's immutable bytes; `Array`'s subscript; the counters' `+=`). The clock is
  //   called between accesses, never during one. The only closures the chip calls are
  //   `diverge`'s message builders (which read immutable state), called between accesses too.

  /// What the replay has done.
  @exclusivity(unchecked) public private(set) var statistics = Statistics()
  /// Transfers the driver has made (the next transfer's index).
  @exclusivity(unchecked) public private(set) var transfersSeen: UInt64 = 0

  // Edges and bursts: prepared by one pass over the recording at load (`prepare`), so that
  // raising an edge and answering a data burst are array steps rather than walks of the
  // records. Memory: 8 bytes per distinct edge and 32 per recorded burst (a 10-minute
  // recording at 100 Hz: some 2.4 MB), where walking the records on the hot path would cost a
  // second pass of them besides the edges' one (tools/plumb-bench/NOTES.md has the figures).
  private let edgeTimes: [Timestamp]
  /// The index in `edgeTimes` of the next edge to raise.
  @exclusivity(unchecked) private var nextEdgeIndex = 0
  @exclusivity(unchecked) private var passedThrough = Timestamp(nanoseconds: .min)
  /// The recorded data bursts in order: sample records (interrupt, poll) and burst records.
  private let bursts: [PreparedBurst]
  /// Ticks recorded as bus errors (samples-only recordings): each fails the burst reads made
  /// after `bursts[before - 1]` and before `bursts[before]`, in order.
  private let burstFailures: [(before: Int, error: I2CError)]
  /// The index in `bursts` of the next burst to answer.
  @exclusivity(unchecked) private var nextBurst = 0
  /// The index in `burstFailures` of the next failure to arm.
  @exclusivity(unchecked) private var nextBurstFailure = 0
  @exclusivity(unchecked) private var failingAttemptsLeft = 0
  @exclusivity(unchecked) private var failingError: I2CError?
  @exclusivity(unchecked) private var lastBurst = PlumbRawBurstBytes()
  // The transcript: transfers and failures by index.
  @exclusivity(unchecked) private var transcriptRecords: PlumbRawRecordIterator
  @exclusivity(unchecked) private var upcomingTranscript: PlumbRawRecord?
  /// `upcomingTranscript`'s transfer index (`UInt64.max` when none), so the transfers the
  /// transcript does not cover (data bursts) are told apart without copying the record.
  @exclusivity(unchecked) private var upcomingTranscriptIndex = UInt64.max
  // The fallback timer's recorded wake-ups.
  @exclusivity(unchecked) private var wakeRecords: PlumbRawRecordIterator
  // The emulated register file.
  @exclusivity(unchecked) private var registers = [UInt8](repeating: 0, count: 128)
  @exclusivity(unchecked) private var selfTestBurstIndex = (gyro: 0, accelerometer: 0)

  /// A chip playing `recording` on `clock`. The clock should read `recordingBeganAt` (or
  /// anything before the first recorded transfer) when the driver starts.
  public init(recording: PlumbRawReader, clock: ManualClock) {
    self.clock = clock
    self.recording = recording
    replaysTranscript = recording.header.hasBusTranscript
    transcriptRecords = recording.records([.transfer, .transferFailure]).makeIterator()
    wakeRecords = recording.records(.timerWake).makeIterator()
    let prepared = Self.prepare(recording)
    edgeTimes = prepared.distinct
    bursts = prepared.bursts
    burstFailures = prepared.failures
    (edgeFaultPlan, unreproducibleEdges, lastSampleRecordTime) =
      (prepared.duplicated, prepared.unreproducible, prepared.latest)
    recordedEdgeCount = edgeTimes.count
    resetRegisters()
    armBurstFailure()
    if replaysTranscript { consumeTranscript() }
  }

  // MARK: - EdgeSource

  public func nextRisingEdge(after instant: Timestamp) -> Timestamp? {
    if instant < passedThrough {
      // Asked about the past (a new line): start over.
      nextEdgeIndex = 0
      passedThrough = Timestamp(nanoseconds: .min)
    }
    let count = edgeTimes.count
    while nextEdgeIndex < count, edgeTimes[nextEdgeIndex] <= instant {
      // The line asks for the edge after the last one it took: this one was taken.
      statistics.edgesRaised += 1
      nextEdgeIndex += 1
    }
    passedThrough = max(passedThrough, instant)
    return nextEdgeIndex < count ? edgeTimes[nextEdgeIndex] : nil
  }

  /// A recorded data burst, ready to answer: its bytes and when the read completed, and for a
  /// sample record when it was taken and whether by polling (a samples-only replay's
  /// INT_STATUS). 32 bytes.
  private struct PreparedBurst {
    var completedAt: Timestamp
    /// The sample record's time (`completedAt` for a burst record).
    var sampleTime: Timestamp
    var bytes: PlumbRawBurstBytes
    var isPolledSample: Bool
  }

  /// What `prepare` finds in the recording.
  private struct Prepared {
    var distinct: [Timestamp] = []
    var duplicated = EdgeFaultPlan.none
    var unreproducible = 0
    var latest: Timestamp?
    var bursts: [PreparedBurst] = []
    var failures: [(before: Int, error: I2CError)] = []
  }

  /// One pass over the recording's sample, unavailable and burst records.
  ///
  /// Edges: the distinct edge times in order (the time of a sample or unavailable record taken
  /// at an edge; an edge time not after the distinct one before it is not raised again), the
  /// distinct edges that were delivered twice, as line faults, the edges that cannot be raised,
  /// and the latest sample or unavailable record's time.
  ///
  /// Bursts: what the data bursts get, in order. With a transcript, the sample records (FIFO
  /// ones excepted) and the burst records of start-up and failed ticks; samples-only, the
  /// sample records (FIFO ones excepted), and the ticks recorded as bus errors as failures of
  /// the policy's attempts.
  private static func prepare(_ recording: PlumbRawReader) -> Prepared {
    let transcript = recording.header.hasBusTranscript
    var result = Prepared()
    // Room for every record: the burst and unavailable records come on top of the samples, and
    // an array that outgrows its reservation copies itself whole.
    result.distinct.reserveCapacity(recording.recordCount)
    result.bursts.reserveCapacity(recording.recordCount)
    var rules: [EdgeFault] = []
    var distinct = 0
    var last: Timestamp?
    var copies = 0
    var run: Range<UInt64>?
    func close() {
      if let range = run { rules.append(.duplicated(.events(range))) }
      run = nil
    }
    var cursor = PlumbRawRecordCursor(recording, kinds: [.sample, .unavailable, .burst])
    while let kind = cursor.advance() {
      // The edge time of a sample or unavailable record: its time when it was taken at an edge.
      let time: Timestamp
      switch kind {
      case .sample:
        guard let sample = cursor.sample else { continue }
        if sample.source != .fifo {
          result.bursts.append(
            PreparedBurst(
              completedAt: sample.timestamp.advanced(
                byNanoseconds: max(0, sample.completionDelayNanoseconds)),
              sampleTime: sample.timestamp, bytes: sample.bytes,
              isPolledSample: sample.source == .poll))
        }
        result.latest = max(result.latest ?? sample.timestamp, sample.timestamp)
        guard sample.source == .interrupt else { continue }
        time = sample.timestamp
      case .burst:
        guard transcript, let burst = cursor.burst else { continue }
        result.bursts.append(
          PreparedBurst(
            completedAt: burst.completedAt, sampleTime: burst.completedAt, bytes: burst.bytes,
            isPolledSample: false))
        continue
      default:
        guard case .unavailable(let tick)? = cursor.record else { continue }
        if !transcript, case .busError(let error) = tick.reason, tick.source != .fifo {
          let failure = I2CError(
            error.kind, operation: .readRegisters, errno: error.errno, register: error.register)
          result.failures.append((before: result.bursts.count, error: failure))
        }
        result.latest = max(result.latest ?? tick.timestamp, tick.timestamp)
        guard tick.source == .interrupt else { continue }
        time = tick.timestamp
      }
      if let previous = last, time == previous {
        copies += 1
        if copies == 2 {
          let index = UInt64(distinct - 1)
          if let range = run, range.upperBound == index {
            run = range.lowerBound..<(index + 1)
          } else {
            close()
            run = index..<(index + 1)
          }
        } else {
          result.unreproducible += 1
        }
        continue
      }
      if let previous = last, time < previous {
        result.unreproducible += 1
        continue
      }
      last = time
      copies = 1
      distinct += 1
      result.distinct.append(time)
    }
    close()
    result.duplicated = EdgeFaultPlan(faults: rules)
    return result
  }

  // MARK: - The fallback timer

  /// When the replayed loop should wake from a fallback-timer sleep it wants to end at
  /// `deadline`: the next recorded wake-up (the live loop's, later than its deadline when it was
  /// stalled), or `deadline` when the recording has none left. Call it once per timer sleep, in
  /// the order the live loop slept (`PlumbRawRecorder.recordTimerWake`).
  public func wakeTime(forDeadline deadline: Timestamp) -> Timestamp {
    guard case .timerWake(let wake)? = wakeRecords.next() else { return deadline }
    if wake.timestamp < deadline {
      diverge("the loop slept until \(deadline); the live loop woke at \(wake.timestamp)")
      return deadline
    }
    return wake.timestamp
  }

  // MARK: - SimulatedI2CDevice

  public func writeRegister(_ register: UInt8, value: UInt8) throws(I2CError) {
    let index = transfersSeen
    transfersSeen += 1
    if replaysTranscript {
      switch transcriptEntry(at: index) {
      case .transferFailure(let failure)?
      where failure.direction == .write && failure.register == register:
        consumeTranscript()
        try replayFailure(failure, operation: .writeRegister)
      case .transfer(let transfer)?
      where transfer.direction == .write && transfer.register == register:
        consumeTranscript()
        if transfer.data[0] != value {
          diverge(
            "transfer \(index): the driver wrote \(hexByte(value)) to \(hexByte(register)); the recording wrote \(hexByte(transfer.data[0]))"
          )
        }
        statistics.transfersReplayed += 1
        clock.advance(to: transfer.completedAt)
      case let entry?:
        diverge(
          "transfer \(index): the driver wrote \(hexByte(value)) to \(hexByte(register)); the recording has \(describe(entry)) there"
        )
      case nil:
        diverge(
          "transfer \(index): the driver wrote \(hexByte(value)) to \(hexByte(register)), a transfer the recording does not have"
        )
      }
    } else if clock.now() >= header.runningSince, let expected = expectedAfterStartup(register),
      expected != value
    {
      diverge(
        "the driver wrote \(hexByte(value)) to \(hexByte(register)) but the recording was made with \(hexByte(expected)): give the replay driver the header's configuration"
      )
    }
    write(register, value)
  }

  public func readRegisters(startingAt register: UInt8, into buffer: UnsafeMutableRawBufferPointer)
    throws(I2CError)
  {
    let index = transfersSeen
    transfersSeen += 1
    let isBurst = register == Register.accelXHigh && buffer.count == 14
    if replaysTranscript, isBurst, upcomingTranscriptIndex > index {
      // A data burst with no transcript entry (the transcript covers every other transfer):
      // the usual transfer of a replay, answered without building an optional record.
      try replayBurst(into: buffer)
      return
    }
    if replaysTranscript {
      switch transcriptEntry(at: index) {
      case .transferFailure(let failure)?
      where failure.direction == .read && failure.register == register
        && Int(failure.length) == buffer.count:
        consumeTranscript()
        try replayFailure(failure, operation: .readRegisters)
      case .transfer(let transfer)?
      where transfer.direction == .read && transfer.register == register
        && transfer.data.count == buffer.count:
        consumeTranscript()
        transfer.data.withUnsafeBytes { source in
          for offset in 0..<buffer.count { buffer[offset] = source[offset] }
        }
        statistics.transfersReplayed += 1
        clock.advance(to: transfer.completedAt)
        return
      case let entry?:
        // The replay's transfers no longer line up with the recording's (a read-back one edge
        // earlier, say): the entry stays for its own transfer or is dropped as stale, and a
        // data burst still gets the next recorded burst, so the samples stay right.
        diverge(
          "transfer \(index): the driver read \(buffer.count) bytes from \(hexByte(register)); the recording has \(describe(entry)) there"
        )
      case nil:
        if !isBurst {
          diverge(
            "transfer \(index): the driver read \(buffer.count) bytes from \(hexByte(register)), a transfer the recording does not have"
          )
        }
      }
      if isBurst {
        try replayBurst(into: buffer)
      } else {
        emulateRead(register, into: buffer)
      }
      return
    }
    if isBurst {
      if clock.now() < header.runningSince {
        synthesizeSelfTestBurst(into: buffer)
      } else {
        try replayBurst(into: buffer)
      }
      return
    }
    emulateRead(register, into: buffer)
  }

  // MARK: - Replaying

  /// The transcript entry for transfer `index`, if the recording has one (not consumed: call
  /// `consumeTranscript` when it answers the transfer); stale entries, which no transfer of the
  /// replay claimed, are dropped as a divergence.
  private func transcriptEntry(at index: UInt64) -> PlumbRawRecord? {
    // Most transfers (the data bursts) have no entry: answer those from the index alone.
    if upcomingTranscriptIndex > index { return nil }
    while let entry = upcomingTranscript {
      let entryIndex = upcomingTranscriptIndex
      if entryIndex < index {
        diverge("the recording's transfer \(entryIndex) (\(describe(entry))) was never asked for")
        consumeTranscript()
        continue
      }
      return entryIndex == index ? entry : nil
    }
    return nil
  }

  private func consumeTranscript() {
    upcomingTranscript = transcriptRecords.next()
    upcomingTranscriptIndex = upcomingTranscript.map(Self.index(of:)) ?? .max
  }

  private static func index(of entry: PlumbRawRecord) -> UInt64 {
    switch entry {
    case .transfer(let transfer): transfer.index
    case .transferFailure(let failure): failure.index
    default: .max
    }
  }

  /// `a read of 4 bytes from 0x19`, `a failed write to 0x6B`, for divergence messages.
  private func describe(_ entry: PlumbRawRecord) -> String {
    switch entry {
    case .transfer(let t) where t.direction == .read:
      "a read of \(t.data.count) bytes from \(hexByte(t.register))"
    case .transfer(let t): "a write to \(hexByte(t.register))"
    case .transferFailure(let f): "a failed \(f.direction) of \(hexByte(f.register))"
    default: "another record"
    }
  }

  private func replayFailure(_ failure: PlumbRawTransferFailure, operation: I2CError.Operation)
    throws(I2CError)
  {
    statistics.failuresReplayed += 1
    clock.advance(to: failure.completedAt)
    throw I2CError(
      failure.error.kind, operation: operation, errno: failure.error.errno,
      register: failure.register)
  }

  /// Answers a data burst with the next recorded one.
  private func replayBurst(into buffer: UnsafeMutableRawBufferPointer) throws(I2CError) {
    if failingAttemptsLeft > 0, let error = failingError {
      failingAttemptsLeft -= 1
      if failingAttemptsLeft == 0 { armBurstFailure() }
      statistics.failuresReplayed += 1
      throw error
    }
    let bytes: PlumbRawBurstBytes
    if nextBurst < bursts.count {
      let burst = bursts[nextBurst]
      clock.advance(to: burst.completedAt)
      bytes = burst.bytes
      nextBurst += 1
      statistics.burstsReplayed += 1
      armBurstFailure()
    } else {
      diverge("the driver read a data burst after the last recorded one")
      bytes = lastBurst
    }
    lastBurst = bytes
    bytes.copy(into: buffer)  // a data burst's buffer is 14 bytes (`readRegisters`)
  }

  /// Arms the next recorded bus-error tick when its place has come (the bursts before it have
  /// been answered): the next burst reads fail the policy's attempts.
  private func armBurstFailure() {
    guard nextBurstFailure < burstFailures.count,
      burstFailures[nextBurstFailure].before == nextBurst
    else { return }
    failingAttemptsLeft = max(1, header.policy.attemptsPerTransfer)
    failingError = burstFailures[nextBurstFailure].error
    nextBurstFailure += 1
  }

  /// The burst the chip would answer next, as a samples-only replay's INT_STATUS sees it: while
  /// a recorded bus error is being replayed, still the one answered before it.
  private var upcomingBurst: PreparedBurst? {
    let index = failingAttemptsLeft > 0 ? nextBurst - 1 : nextBurst
    return bursts.indices.contains(index) ? bursts[index] : nil
  }

  // MARK: - The emulated part

  private func resetRegisters() {
    for index in registers.indices { registers[index] = 0 }
    registers[Int(Register.powerManagement1)] = 0x40
    // Self-test trim (RM §4.1): XG/YG/ZG_TEST in bits 4:0 of 0x0D–0x0F, XA/YA/ZA_TEST bits 4:2
    // in bits 7:5 of the same, bits 1:0 in SELF_TEST_A (0x10).
    var gyro: [UInt8] = [0, 0, 0]
    var accel: [UInt8] = [0, 0, 0]
    if case .measured(let results) = header.selfTest.outcome {
      for result in results {
        let axis = result.axis == .x ? 0 : result.axis == .y ? 1 : 2
        if result.sensor == .gyro {
          gyro[axis] = result.trimCode & 0x1F
        } else {
          accel[axis] = result.trimCode & 0x1F
        }
      }
    }
    for axis in 0..<3 {
      registers[Int(Register.selfTestX) + axis] = (accel[axis] >> 2) << 5 | gyro[axis]
    }
    registers[Int(Register.selfTestA)] =
      (accel[0] & 0x03) << 4 | (accel[1] & 0x03) << 2 | accel[2] & 0x03
  }

  private func write(_ register: UInt8, _ value: UInt8) {
    switch register {
    case Register.powerManagement1 where value & 0x80 != 0:
      resetRegisters()  // DEVICE_RESET completes at once
    case Register.accelConfig2 where header.chip.family == .mpu6050:
      return  // not a register of the MPU-6050
    case Register.gyroConfig:
      if value & 0xE0 != 0, registers[Int(register)] & 0xE0 == 0 { selfTestBurstIndex.gyro = 0 }
      registers[Int(register)] = value
    case Register.accelConfig:
      if value & 0xE0 != 0, registers[Int(register)] & 0xE0 == 0 {
        selfTestBurstIndex.accelerometer = 0
      }
      registers[Int(register)] = value
    case 0...0x7F:
      registers[Int(register)] = value
    default:
      return
    }
  }

  private func emulateRead(_ register: UInt8, into buffer: UnsafeMutableRawBufferPointer) {
    var address = register
    for offset in 0..<buffer.count {
      buffer[offset] =
        switch address {
        case Register.whoAmI: header.chip.whoAmI
        case Register.interruptStatus: dataReadyStatus()
        case Register.fifoCountHigh, Register.fifoCountLow: 0
        case Register.accelXHigh...0x48: lastBurst.withUnsafeBytes { $0[Int(address - 0x3B)] }
        case 0x76...0xFF: 0
        default: registers[Int(address)]
        }
      address &+= 1
    }
  }

  /// INT_STATUS for a samples-only replay: DATA_RDY_INT (bit 0) when the next recorded sample
  /// was polled and its time has come.
  private func dataReadyStatus() -> UInt8 {
    guard let burst = upcomingBurst, burst.isPolledSample, burst.sampleTime <= clock.now()
    else { return 0 }
    return 0x01
  }

  /// The register value the recorded configuration has, for the registers a replay driver must
  /// not write differently.
  private func expectedAfterStartup(_ register: UInt8) -> UInt8? {
    guard let registers = header.registers else { return nil }
    switch register {
    case Register.sampleRateDivider: return registers.sampleRateDivider
    case Register.config: return registers.config
    case Register.gyroConfig: return registers.gyroConfig
    case Register.accelConfig: return registers.accelConfig
    default: return nil
    }
  }

  /// A self-test burst for a samples-only replay: zero counts with the actuators off; with them
  /// on, counts whose mean over the policy's `selfTestSamples` reads is the recorded response
  /// (to the nearest 1/n count), so the driver reaches the recorded verdict.
  private func synthesizeSelfTestBurst(into buffer: UnsafeMutableRawBufferPointer) {
    statistics.synthesizedBursts += 1
    var words: [Int16] = Array(repeating: 0, count: 7)
    let n = max(1, header.policy.selfTestSamples)
    let gyroOn = registers[Int(Register.gyroConfig)] & 0xE0 != 0
    let accelOn = registers[Int(Register.accelConfig)] & 0xE0 != 0
    for result in header.selfTest.results {
      let on = result.sensor == .gyro ? gyroOn : accelOn
      guard on else { continue }
      let burst =
        result.sensor == .gyro ? selfTestBurstIndex.gyro : selfTestBurstIndex.accelerometer
      let total = Int((result.responseCounts * Double(n)).rounded())
      let (quotient, remainder) = total.quotientAndRemainder(dividingBy: n)
      var value = quotient
      if burst % n < abs(remainder) { value += remainder < 0 ? -1 : 1 }
      let axis = result.axis == .x ? 0 : result.axis == .y ? 1 : 2
      let word = result.sensor == .gyro ? 4 + axis : axis
      words[word] = Int16(clamping: value)
    }
    if gyroOn { selfTestBurstIndex.gyro += 1 }
    if accelOn { selfTestBurstIndex.accelerometer += 1 }
    for (index, word) in words.enumerated() {
      let bits = UInt16(bitPattern: word)
      buffer[2 * index] = UInt8(bits >> 8)
      buffer[2 * index + 1] = UInt8(bits & 0xFF)
    }
  }

  private func diverge(_ message: @autoclosure () -> String) {
    statistics.divergences += 1
    guard statistics.firstDivergence == nil else { return }
    let text = message()  // built before the store, outside any access to `statistics`
    statistics.firstDivergence = text
  }
}

/// A replay board: a `ManualClock` starting where the recording began, the replay chip on a
/// simulated bus at the recorded address, and its edges on a simulated data-ready line with the
/// faults that reproduce duplicated edges. Run the real driver on `bus` and `line` with the
/// recorded configuration and policy:
///
///     let board = ReplayedMPU6050Board(recording: try PlumbRawReader(contentsOf: path))
///     var driver = try MPU6050Driver(bus: board.bus, address: board.address,
///       configuration: board.header.configuration, policy: board.header.policy)
///     var clock = board.clock
///     _ = try driver.start(clock: &clock, selfTest: board.header.selfTestWasRequested)
///     … the loop, on board.line and board.clock, until board.isFinished …
public final class ReplayedMPU6050Board {
  public let clock: ManualClock
  public let chip: ReplayedMPU6050
  public let bus: SimulatedI2CBus
  public let line: SimulatedDataReadyLine
  public let address: I2CAddress
  public var header: PlumbRawHeader { chip.header }

  /// The board for `recording`, its clock starting at `clockStart` (by default the recording's
  /// `recordingBeganAt`, or 5 s before its first record when that is not set).
  public init(recording: PlumbRawReader, clockStart: Timestamp? = nil) {
    let header = recording.header
    var start = clockStart ?? header.recordingBeganAt
    var records = recording.records().makeIterator()
    if clockStart == nil, header.recordingBeganAt == .zero, let first = records.next() {
      start = first.timestamp.advanced(byNanoseconds: -5_000_000_000)
    }
    clock = ManualClock(start: start)
    chip = ReplayedMPU6050(recording: recording, clock: clock)
    address = header.address
    bus = SimulatedI2CBus(clock: clock, name: "replay")
    bus.attach(chip, at: address)
    line = SimulatedDataReadyLine(clock: clock, source: chip, faultPlan: chip.edgeFaultPlan)
  }

  /// The time of the last recorded record: a loop replaying the recording can stop after it.
  public var lastRecordedTime: Timestamp {
    max(header.runningSince, chip.lastSampleRecordTime ?? header.runningSince)
  }
}
