import HardwareAbstraction

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

/// The FIFO fallback, for a board whose INT pin is not wired: the FIFO switched on and off,
/// drained on a timer (records two at a time, each converted like a burst), and reset after an
/// overflow or a failed read, its losses left to `FIFOLossAccounting` (`fifoAccounting`).
///
/// Owns `source` (with the registers that follow it in `controlRegisters`) and
/// `fifoAccounting`.
extension MPU6050Driver {
  /// Switches to the FIFO: records of accelerometer, temperature and gyroscope (14 bytes, the
  /// burst's layout), empties it, and enables the overflow interrupt. Returns `false` (and
  /// counts) when the bus failed; the next drain retries through recovery.
  @discardableResult
  public mutating func enableFIFO(at now: Timestamp) -> Bool {
    select(.fifo)
    fifoAccounting.lastDrain = now
    fifoAccounting.clock.restartCount(at: now)
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
    if let measured = measuredSamplePeriodNanoseconds {
      fifoAccounting.clock.suggestPeriod(measured)
    }
    if status.fifoOverflow || count >= capacity {
      counters.fifoOverflows += 1
      result.overflowed = true
      result.samplesLost = resetFIFO(at: clock.now(), newestReadBack: 0)
      return result
    }
    let records = count / recordLength
    fifoAccounting.clock.observe(records: records, between: beforeCount, and: afterCount)
    if records == 0 {
      fifoAccounting.lastDrain = now
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
    result.samplesLost = fifoAccounting.resolve(at: now, all: false)
    counters.samplesLost += UInt64(result.samplesLost)
    fifoAccounting.lastDrain = now
    if now >= nextConfigurationCheck {
      if let unavailable = checkConfiguration(at: now) { result.unavailable = unavailable }
    }
    return result
  }

  /// Whether some FIFO reset's losses are still to be counted.
  public var fifoLossPending: Bool { fifoAccounting.lossPending }

  /// When the chip produced the newest record read from the FIFO, as far as the drains tell
  /// (their bounds' midpoint), or `nil` before the first record: the loop can date record i
  /// of a drain as this minus its `newerSamples` periods.
  public var fifoNewestSampleTimeEstimate: Timestamp? {
    fifoAccounting.clock.newestEstimate.map { Timestamp(nanoseconds: Int64($0.rounded())) }
  }

  /// Resets the FIFO (after an overflow or a failed read) and leaves its losses pending until
  /// they can be dated (`FIFOLossAccounting.recordReset`); `newestReadBack` is how many records
  /// before the newest counted the newest one read is. Returns the losses counted now.
  /// FIFO_RESET takes effect only while FIFO_EN is 0 (RM §4.27).
  private mutating func resetFIFO(at now: Timestamp, newestReadBack: Int) -> Int {
    counters.fifoResets += 1
    let counted = fifoAccounting.recordReset(
      at: now, newestReadBack: newestReadBack,
      measuredPeriodNanoseconds: measuredSamplePeriodNanoseconds)
    counters.samplesLost += UInt64(counted)
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

  /// Writes the FIFO's registers from `controlRegisters`: its outputs, then USER_CTRL to empty
  /// it and to enable it, then the overflow interrupt. `false` (counted) when the bus failed.
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
}
