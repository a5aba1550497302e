import ByteFormats
import HardwareAbstraction
import MPU6050

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Records what the loop consumed — and, through a `PlumbRawBusTap`, every register transfer
/// the driver made — into a `.plumbraw` file, so that a replay can give the driver exactly the
/// same answers, faults and timing included.
///
/// **Why a transcript.** The loop's frames follow from the samples and their edge times, but
/// also from the driver's own decisions: a retry, a re-initialisation that backs off because a
/// WHO_AM_I read failed, a configuration read-back that found a corrupted register. Those depend
/// on the outcome of every transfer, not only of the data bursts. The tap records each transfer's
/// outcome (a read's bytes, a write, a failure with its errno) and the clock when it completed;
/// data bursts are kept once, in the sample records. A replay chip answers transfer *n* the way
/// transfer *n* was answered, so the same driver makes the same decisions at the same times.
/// Steady state costs one 33-byte record per sample plus about 80 bytes a second for the
/// driver's once-a-second configuration read-back.
///
/// **Use (the loop's hooks).**
///
///     let recorder = PlumbRawRecorder(recordingBeganAt: clock.now())
///     let tap = PlumbRawBusTap(bus, clock: clock, recorder: recorder)
///     var driver = try MPU6050Driver(bus: tap, address: address, configuration: configuration)
///     let report = try driver.start(clock: &clock)          // transcript buffered in memory
///     try recorder.start(writingTo: path, header: PlumbRawHeader(driver: driver,
///       startup: report, startedAtUTC: utc, firmwareVersion: v, boardName: b,
///       recordingBeganAt: recorder.recordingBeganAt, runningSince: clock.now()))
///     loop:
///       edge:    recorder.recordReading(driver.readSample(at: t), at: t, source: .interrupt)
///       timeout: driver.diagnoseMissingEdges(at: now)    // its transfers are tapped
///                recorder.recordReading(driver.pollDataReady(at: now), at: now, source: .poll)
///       FIFO:    clock.sleep(until: deadline); recorder.recordTimerWake(at: clock.now())
///                driver.drainFIFO(clock: clock) { s, newer in
///                  recorder.recordFIFOSample(s, at: estimatedTime) }
///                if let u = drain.unavailable { recorder.recordReading(.unavailable(u), …, .fifo) }
///       an edge taken and not read: recorder.recordDiscardedEdge(at: t)
///       events:  recordMissedSamples, recordReinitialization, recordNote(category: .hostCommand)
///     if let failure = recorder.failure { … stop recording, tell the user … }
///     try recorder.close()
///
/// Every hook is allocation-free once recording has started (before `start`, records are kept
/// in an array, which grows if start-up needs more than `startupCapacity`). The hooks never
/// throw: a write failure is kept in `failure`, and from then on records are counted in
/// `recordsDropped` instead of written — a recording with a hole would replay wrongly, so the
/// file stays whole up to the failure.
///
/// A class shared by the tap (inside the driver) and the loop; one thread, like the loop.
public final class PlumbRawRecorder {
  /// `CLOCK_MONOTONIC` when recording began (before the driver's start-up).
  public let recordingBeganAt: Timestamp
  /// The writer, once `start` has created the file.
  public private(set) var writer: PlumbRawWriter?
  /// The failure that stopped recording, if one did.
  public private(set) var failure: PlumbRawError?
  /// Records not written because recording had stopped.
  public private(set) var recordsDropped: UInt64 = 0
  /// Transfers the tap has seen (the next transfer's index).
  public private(set) var transfersSeen: UInt64 = 0
  /// Sample records written, repeated reads apart: the rows `plumb export` gives and the
  /// samples a replay delivers (the loop's warm-up discards among them).
  public private(set) var samplesRecorded: UInt64 = 0

  private var pending: [PlumbRawRecord] = []
  private var heldBurst: PlumbRawBurst?
  private var burstFailuresSinceReading = 0
  private var closed = false

  /// A recorder whose transcript starts now, at `recordingBeganAt`.
  public init(recordingBeganAt: Timestamp, startupCapacity: Int = 1024) {
    self.recordingBeganAt = recordingBeganAt
    pending.reserveCapacity(max(16, startupCapacity))
  }

  /// Creates the file with `header` and writes what start-up recorded (when that cannot be
  /// written, the file is removed, or left empty when it was replaced, and the error says so). The header's `recordingBeganAt` and
  /// `hasBusTranscript` are set from the recorder.
  public func start(
    writingTo path: String, header: PlumbRawHeader, sync: PlumbRawSyncPolicy = .never,
    overwrite: Bool = false
  ) throws(PlumbRawError) {
    guard writer == nil else {
      throw PlumbRawError(.writerClosed, path: path, "the recorder has already started")
    }
    var header = header
    header.recordingBeganAt = recordingBeganAt
    header.hasBusTranscript = transfersSeen > 0
    let writer = try PlumbRawWriter(
      creating: path, header: header, sync: sync, overwrite: overwrite)
    // A burst read during start-up (the self-test's) is never a sample.
    if let burst = heldBurst {
      pending.append(.burst(burst))
      heldBurst = nil
    }
    for record in pending {
      do {
        try writer.append(record)
      } catch {
        // A file without the driver's start-up does not replay and holds no sample: removed,
        // like one whose header could not be written, so that nothing is left to mistake for a
        // recording (or to be refused as one when recording again).
        // A file replaced is left empty instead (removing it by name would remove a symbolic
        // link instead of the file it leads to).
        try? writer.close()
        _ = overwrite ? truncate(path, 0) : unlink(path)
        let why = error.errno.map { POSIXFile.message($0) } ?? error.message
        let stopped = PlumbRawError(
          .writeFailed, path: path, recordIndex: error.recordIndex, errno: error.errno,
          "cannot write the driver's start-up after the header: \(why); the file was "
            + (overwrite ? "left empty" : "removed"))
        failure = stopped
        throw stopped
      }
    }
    pending.removeAll()
    self.writer = writer
  }

  /// Closes the file (a final `fdatasync`). A burst held for a reading that never came is
  /// written first.
  public func close() throws(PlumbRawError) {
    guard !closed else { return }
    if let burst = heldBurst {
      heldBurst = nil
      emit(.burst(burst))
    }
    closed = true
    try writer?.close()
    if let failure { throw failure }
  }

  // MARK: - The loop's hooks

  /// What `readSample` / `pollDataReady` returned for the tick at `timestamp` (the edge time,
  /// or the poll time).
  public func recordReading(
    _ reading: MPU6050Reading, at timestamp: Timestamp, source: PlumbRawSampleSource
  ) {
    switch reading {
    case .sample(let sample, let isRepeat):
      var flags: PlumbRawSampleFlags = isRepeat ? [.repeatedRead] : []
      if burstFailuresSinceReading > 0 { flags.insert(.retried) }
      let bytes: PlumbRawBurstBytes
      var delay: Int64 = 0
      if let burst = heldBurst {
        bytes = burst.bytes
        delay = burst.completedAt.nanoseconds(since: timestamp)
        heldBurst = nil
      } else {
        bytes = PlumbRawBurstBytes(sample.raw)
      }
      emit(
        .sample(
          PlumbRawSample(
            timestamp: timestamp, bytes: bytes, source: source, flags: flags,
            completionDelayNanoseconds: delay)))
    case .unavailable(let reason):
      if let burst = heldBurst {
        heldBurst = nil
        emit(.burst(burst))
      }
      emit(
        .unavailable(
          PlumbRawUnavailable(
            timestamp: timestamp, source: source, reason: PlumbRawUnavailableReason(reason))))
    }
    burstFailuresSinceReading = 0
  }

  /// A sample from a FIFO drain, dated `timestamp` by the loop.
  public func recordFIFOSample(
    _ sample: MPU6050Sample, at timestamp: Timestamp, timestampEstimated: Bool = true
  ) {
    emit(
      .sample(
        PlumbRawSample(
          timestamp: timestamp, bytes: PlumbRawBurstBytes(sample.raw), source: .fifo,
          flags: timestampEstimated ? [.timestampEstimated] : [])))
  }

  /// An edge the loop took without reading (warm-up discards): a replay raises it too.
  public func recordDiscardedEdge(at timestamp: Timestamp) {
    emit(.unavailable(PlumbRawUnavailable(timestamp: timestamp, reason: .notRead)))
  }

  /// The loop woke from its fallback timer (polling or draining the FIFO without edges): call it
  /// after every such sleep with the clock's reading. A replay wakes at the same instants
  /// (`ReplayedMPU6050.wakeTime(forDeadline:)`), which is what reproduces a loop that was late.
  public func recordTimerWake(at timestamp: Timestamp) {
    emit(.timerWake(PlumbRawTimerWake(timestamp: timestamp)))
  }

  /// Samples the loop counted as missed.
  public func recordMissedSamples(
    _ count: UInt32, at timestamp: Timestamp, cause: PlumbRawMissedSamples.Cause = .sampleClockGap
  ) {
    emit(.missedSamples(PlumbRawMissedSamples(timestamp: timestamp, count: count, cause: cause)))
  }

  /// A re-initialisation began, completed or failed an attempt.
  public func recordReinitialization(
    _ event: PlumbRawReinitialization.Event, at timestamp: Timestamp
  ) {
    emit(.reinitialization(PlumbRawReinitialization(timestamp: timestamp, event: event)))
  }

  /// The configuration changed (a new driver with other ranges or rate).
  public func recordConfigurationChange(
    _ configuration: MPU6050Configuration, scale: MPU6050Scale, at timestamp: Timestamp
  ) {
    emit(
      .configurationChange(
        PlumbRawConfigurationChange(
          timestamp: timestamp, configuration: configuration, scale: PlumbRawScale(scale))))
  }

  /// Text for people, or a host command the loop obeyed (at most 246 UTF-8 bytes: longer text
  /// is cut at a character boundary).
  public func recordNote(
    _ text: String, category: PlumbRawNote.Category = .text, at timestamp: Timestamp
  ) {
    var cut = text
    while cut.utf8.count > PlumbRawNote.maximumTextBytes { cut.removeLast() }
    emit(.note(PlumbRawNote(timestamp: timestamp, category: category, text: cut)))
  }

  /// Any record, as is.
  public func record(_ record: PlumbRawRecord) {
    emit(record)
  }

  // MARK: - The tap's entry points

  func tapRead(register: UInt8, bytes: UnsafeRawBufferPointer, completedAt: Timestamp) {
    let index = transfersSeen
    transfersSeen += 1
    if register == 0x3B && bytes.count == 14 {
      // A data burst (ACCEL_XOUT_H, 14 bytes): kept for the sample record that will claim it.
      if let previous = heldBurst { emit(.burst(previous)) }
      heldBurst = PlumbRawBurst(completedAt: completedAt, bytes: PlumbRawBurstBytes(bytes))
      return
    }
    emit(
      .transfer(
        PlumbRawTransfer(
          index: index, completedAt: completedAt, direction: .read, register: register,
          data: PlumbRawRegisterBytes(bytes))))
  }

  func tapWrite(register: UInt8, value: UInt8, completedAt: Timestamp) {
    let index = transfersSeen
    transfersSeen += 1
    emit(
      .transfer(
        PlumbRawTransfer(
          index: index, completedAt: completedAt, direction: .write, register: register,
          data: PlumbRawRegisterBytes(byte: value))))
  }

  func tapFailure(
    direction: PlumbRawTransferDirection, register: UInt8, length: Int, error: I2CError,
    completedAt: Timestamp
  ) {
    let index = transfersSeen
    transfersSeen += 1
    if direction == .read && register == 0x3B && length == 14 { burstFailuresSinceReading += 1 }
    emit(
      .transferFailure(
        PlumbRawTransferFailure(
          index: index, completedAt: completedAt, direction: direction, register: register,
          length: UInt8(clamping: length), error: error)))
  }

  private func emit(_ record: PlumbRawRecord) {
    if failure != nil || closed {
      recordsDropped += 1
      return
    }
    guard let writer else {
      pending.append(record)
      return
    }
    do {
      try writer.append(record)
      if case .sample(let sample) = record, !sample.flags.contains(.repeatedRead) {
        samplesRecorded += 1
      }
    } catch {
      failure = error
      recordsDropped += 1
    }
  }
}

/// An `I2CBus` that passes every transfer to `base` and tells a `PlumbRawRecorder` how it went,
/// with the clock's reading when it completed: the bus transcript of a recording.
///
/// Give it to the driver in place of the bus. It adds one clock read and one record per
/// non-burst transfer (data bursts are held for the sample record); allocation-free once the
/// recorder has started.
public struct PlumbRawBusTap<Base: I2CBus, Clock: MonotonicClock>: I2CBus {
  /// The bus underneath.
  public private(set) var base: Base
  /// The loop's clock (`CLOCK_MONOTONIC`; a `ManualClock` in simulation).
  public let clock: Clock
  /// Where the transcript goes.
  public let recorder: PlumbRawRecorder

  public init(_ base: Base, clock: Clock, recorder: PlumbRawRecorder) {
    self.base = base
    self.clock = clock
    self.recorder = recorder
  }

  public mutating func writeRegister(_ register: UInt8, value: UInt8, at address: I2CAddress)
    throws(I2CError)
  {
    do throws(I2CError) {
      try base.writeRegister(register, value: value, at: address)
    } catch {
      recorder.tapFailure(
        direction: .write, register: register, length: 1, error: error, completedAt: clock.now())
      throw error
    }
    recorder.tapWrite(register: register, value: value, completedAt: clock.now())
  }

  public mutating func readRegisters(
    startingAt register: UInt8, into buffer: UnsafeMutableRawBufferPointer, at address: I2CAddress
  ) throws(I2CError) {
    do throws(I2CError) {
      try base.readRegisters(startingAt: register, into: buffer, at: address)
    } catch {
      recorder.tapFailure(
        direction: .read, register: register, length: buffer.count, error: error,
        completedAt: clock.now())
      throw error
    }
    recorder.tapRead(
      register: register, bytes: UnsafeRawBufferPointer(buffer), completedAt: clock.now())
  }
}
