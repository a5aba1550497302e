import HardwareAbstraction

/// How much output a `MemorySerialPort` accepts.
public enum SerialOutputCapacity: Hashable, Sendable {
  /// Every byte is accepted and reaches the host at once.
  case unlimited
  /// The device buffers up to this many bytes, which reach the host only when the test calls
  /// `takeWritten()`: a test fills it to exercise short writes, then drains it.
  case buffer(bytes: Int)
  /// The device buffers up to `bufferBytes` and sends `bytesPerSecond` to the host, on the
  /// manual clock: a UART that the loop can outrun.
  case line(bytesPerSecond: Int, bufferBytes: Int)

  /// A UART at `baud` with 8N1 framing (10 bit times per byte: start, 8 data, stop) behind a
  /// `bufferBytes` output buffer (4096 by default: one page, the Linux serial core's transmit
  /// buffer). 115200 baud sends 11 520 bytes per second, 115 bytes per 100 Hz frame period.
  public static func uart(baud: Int, bufferBytes: Int = 4096) -> SerialOutputCapacity {
    .line(bytesPerSecond: baud / 10, bufferBytes: bufferBytes)
  }
}

/// An in-memory serial port: the code under test writes frames and reads host commands through
/// `SerialPort`; the test takes what was written (`takeWritten()`), injects what the host sends
/// (`inject(_:)`), limits the output (`SerialOutputCapacity`) and unplugs the device
/// (`SerialFaultPlan`, `unplug()`, `plugBack()`).
///
/// It behaves like a termios port on a USB adapter: writes never block and return how much was
/// accepted (short writes are counted in `statistics`, never thrown); when the device
/// disappears, reads and writes on the open port throw `.disconnected` (`EIO`) — every call,
/// until the port is closed and reopened — and the bytes still in the device buffer are lost
/// (`discardedBytes`); `reopen()` throws `.deviceMissing` (`ENOENT`) until the device is back.
///
/// A class because the loop and the test share it. Not `Sendable`: a simulated world belongs to
/// one thread. `write` and `read` allocate nothing as long as the test drains the output with
/// `takeWritten(into:)` (or `takeWritten()`) often enough that the buffer's storage stops
/// growing.
public final class MemorySerialPort: SerialPort {
  /// The clock that line rates and time triggers read.
  public let clock: ManualClock
  /// The device name carried by thrown errors.
  public let name: String
  /// How much output is accepted.
  public let capacity: SerialOutputCapacity
  /// The disconnections still to come are the ones after `firedDisconnections`.
  public let faultPlan: SerialFaultPlan
  /// How many of the plan's disconnections have fired.
  public private(set) var firedDisconnections = 0

  public private(set) var statistics = SerialStatistics()
  public private(set) var isOpen = true
  /// Whether the device exists (false between an unplug and its return).
  public private(set) var isPluggedIn = true
  /// Bytes the port had accepted that were still in the device buffer when it was unplugged.
  public private(set) var discardedBytes: UInt64 = 0
  /// `reopen()` calls that failed because the device was missing.
  public private(set) var failedReopens: UInt64 = 0
  /// Host bytes `inject` discarded because the device was unplugged.
  public private(set) var discardedInjectedBytes: UInt64 = 0

  /// Bytes accepted: `output[..<transmitted]` has reached the host, the rest is buffered.
  private var output: [UInt8] = []
  private var transmitted = 0
  /// Host-to-device bytes not yet read: `input[inputStart...]`.
  private var input: [UInt8] = []
  private var inputStart = 0
  /// The handle the caller holds died with an unplug and has not been reopened.
  private var handleIsStale = false
  private var staleHandleReported = false
  private var returnTime: Timestamp?
  private var lastTransmission: Timestamp
  /// Fractional bytes (in units of 10⁻⁹ byte) carried between line-rate updates.
  private var transmissionRemainder: UInt64 = 0

  /// A port named `name` on `clock`, open and plugged in.
  public init(
    clock: ManualClock, capacity: SerialOutputCapacity = .unlimited,
    faultPlan: SerialFaultPlan = .none, name: String = "memory"
  ) {
    self.clock = clock
    self.capacity = capacity
    self.faultPlan = faultPlan
    self.name = name
    lastTransmission = clock.now()
    output.reserveCapacity(4096)
    input.reserveCapacity(256)
  }

  // MARK: SerialPort

  public func write(_ bytes: UnsafeRawBufferPointer) throws(SerialError) -> Int {
    try checkUsable()
    transmit()
    var accepted = min(bytes.count, freeSpace)
    var reachesTrigger = false
    if let limit = bytesUntilByteTrigger(), UInt64(accepted) >= limit {
      accepted = Int(limit)
      reachesTrigger = true
    }
    output.append(contentsOf: bytes[0..<accepted])
    if case .unlimited = capacity { transmitted = output.count }
    statistics.bytesWritten += UInt64(accepted)
    if accepted < bytes.count {
      statistics.shortWrites += 1
      statistics.bytesRefused += UInt64(bytes.count - accepted)
    }
    if reachesTrigger { fireNextDisconnection(at: clock.now()) }
    return accepted
  }

  /// Writes an array's bytes (the `SerialPort` convenience is `mutating`, which a class held
  /// in a `let` cannot call). Allocation-free.
  public func write(_ bytes: [UInt8]) throws(SerialError) -> Int {
    var result: Result<Int, SerialError> = .success(0)
    bytes.withUnsafeBytes { buffer in
      do throws(SerialError) {
        result = .success(try write(buffer))
      } catch {
        result = .failure(error)
      }
    }
    return try result.get()
  }

  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SerialError) -> Int {
    try checkUsable()
    let count = min(buffer.count, input.count - inputStart)
    for index in 0..<count {
      buffer[index] = input[inputStart + index]
    }
    inputStart += count
    if inputStart == input.count {
      input.removeAll(keepingCapacity: true)
      inputStart = 0
    }
    statistics.bytesRead += UInt64(count)
    return count
  }

  public func close() {
    isOpen = false
  }

  public func reopen() throws(SerialError) {
    applyPlan()
    guard isPluggedIn else {
      failedReopens += 1
      throw SerialError(.deviceMissing, errno: .noSuchFileOrDirectory, device: name)
    }
    transmit()
    isOpen = true
    handleIsStale = false
    staleHandleReported = false
    statistics.reopens += 1
  }

  // MARK: The host's side

  /// Takes the bytes that have reached the host, in order. With `.buffer` capacity, the host
  /// drains the whole buffer (freeing it for more writes). Allocates the returned array.
  public func takeWritten() -> [UInt8] {
    var bytes: [UInt8] = []
    takeWritten(into: &bytes)
    return bytes
  }

  /// Appends the bytes that have reached the host to `bytes` (no allocation when `bytes` has
  /// room): for long runs.
  public func takeWritten(into bytes: inout [UInt8]) {
    transmit()
    if case .buffer = capacity { transmitted = output.count }
    bytes.append(contentsOf: output[0..<transmitted])
    output.removeFirst(transmitted)
    transmitted = 0
  }

  /// Bytes accepted but not yet at the host (in the device's output buffer).
  public var bufferedOutputCount: Int {
    transmit()
    return output.count - transmitted
  }

  /// Sends `bytes` from the host to the device, for the code under test to `read`. Returns
  /// `false` and discards them when the device is unplugged.
  @discardableResult
  public func inject(_ bytes: [UInt8]) -> Bool {
    applyPlan()
    guard isPluggedIn else {
      discardedInjectedBytes += UInt64(bytes.count)
      return false
    }
    input.append(contentsOf: bytes)
    return true
  }

  /// Unplugs the device now (as a fault plan would), whatever the plan says; it stays away
  /// until `plugBack()`.
  public func unplug() {
    applyPlan()
    if isPluggedIn { disconnect(returning: nil) }
  }

  /// Plugs the device back now; the caller's handle stays dead until it reopens the port.
  public func plugBack() {
    applyPlan()
    isPluggedIn = true
    returnTime = nil
  }

  // MARK: Internals

  private var freeSpace: Int {
    switch capacity {
    case .unlimited: Int.max
    case .buffer(let bytes), .line(_, let bytes): max(0, bytes - (output.count - transmitted))
    }
  }

  /// Throws when the caller cannot use the port now.
  private func checkUsable() throws(SerialError) {
    applyPlan()
    guard isOpen else {
      throw SerialError(.notOpen, errno: .badFileDescriptor, device: name)
    }
    guard !handleIsStale else {
      if !staleHandleReported {
        staleHandleReported = true
        statistics.disconnects += 1
      }
      throw SerialError(.disconnected, errno: .ioError, device: name)
    }
  }

  /// Fires the time-triggered disconnections and returns that are due, in order.
  private func applyPlan() {
    let now = clock.now()
    while true {
      if !isPluggedIn {
        guard let returnTime, returnTime <= now else { return }
        transmit(until: returnTime)
        isPluggedIn = true
        self.returnTime = nil
        continue
      }
      guard firedDisconnections < faultPlan.disconnections.count,
        case .at(let instant) = faultPlan.disconnections[firedDisconnections].trigger,
        instant <= now
      else { return }
      fireNextDisconnection(at: instant)
    }
  }

  /// Bytes still allowed before the next disconnection's byte trigger, if it has one.
  private func bytesUntilByteTrigger() -> UInt64? {
    guard firedDisconnections < faultPlan.disconnections.count,
      case .afterBytesWritten(let count) = faultPlan.disconnections[firedDisconnections].trigger
    else { return nil }
    return count > statistics.bytesWritten ? count - statistics.bytesWritten : 0
  }

  private func fireNextDisconnection(at instant: Timestamp) {
    let plan = faultPlan.disconnections[firedDisconnections]
    firedDisconnections += 1
    let back: Timestamp? =
      switch plan.pluggedBack {
      case .at(let time): time
      case .after(let downtime): instant.saturatingAdvanced(by: downtime)
      case .manually: nil
      }
    transmit(until: instant)
    disconnect(returning: back)
  }

  private func disconnect(returning back: Timestamp?) {
    isPluggedIn = false
    returnTime = back
    if isOpen { handleIsStale = true }
    staleHandleReported = false
    discardedBytes += UInt64(output.count - transmitted)
    output.removeLast(output.count - transmitted)
    input.removeAll(keepingCapacity: true)
    inputStart = 0
    transmissionRemainder = 0
  }

  private func transmit() {
    transmit(until: clock.now())
  }

  /// Moves buffered bytes to the host at the line rate, up to `instant`.
  private func transmit(until instant: Timestamp) {
    guard case .line(let bytesPerSecond, _) = capacity else {
      lastTransmission = max(lastTransmission, instant)
      return
    }
    let elapsed = instant.nanoseconds(since: lastTransmission)
    guard elapsed > 0 else { return }
    lastTransmission = instant
    let buffered = output.count - transmitted
    guard buffered > 0, isPluggedIn, bytesPerSecond > 0 else {
      transmissionRemainder = 0
      return
    }
    // bytes = (elapsed ns × rate + carried remainder) / 10⁹, in 128-bit arithmetic.
    let product = UInt64(elapsed).multipliedFullWidth(by: UInt64(bytesPerSecond))
    let (low, carry) = product.low.addingReportingOverflow(transmissionRemainder)
    let high = product.high + (carry ? 1 : 0)
    let nanosecondsPerSecond: UInt64 = 1_000_000_000
    guard high < nanosecondsPerSecond else {
      transmitted = output.count
      transmissionRemainder = 0
      return
    }
    let (sent, remainder) = nanosecondsPerSecond.dividingFullWidth((high, low))
    if sent >= UInt64(buffered) {
      transmitted = output.count
      transmissionRemainder = 0
    } else {
      transmitted += Int(sent)
      transmissionRemainder = remainder
    }
  }
}
