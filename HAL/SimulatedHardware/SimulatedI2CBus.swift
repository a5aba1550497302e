import HardwareAbstraction

/// How long a transfer occupies the simulated bus.
public enum I2CWireTiming: Hashable, Sendable {
  /// Transfers take no simulated time (the default: time moves only when the code waits).
  case instantaneous
  /// Transfers take their bit count at this SCL rate (100 000 or 400 000 Hz): the bus moves the
  /// shared clock forward by that much after each completed transfer, so latency budgets can
  /// be checked on the manual clock. A rate of 0 or less counts as instantaneous.
  case clockRate(hertz: Int)

  /// The bus time of `transfer`. Bit counts follow the SMBus frames, 9 clocks per byte (8 data
  /// bits and the acknowledge bit) plus one for each START, repeated START and STOP:
  /// write byte data `S Addr Comm Data P` = 29 bits; I2C block read of n bytes
  /// `S Addr Comm Sr Addr Data×n P` = 30 + 9n bits. A 14-byte burst is 156 bits, 0.39 ms at
  /// 400 kHz and 1.56 ms at 100 kHz (DESIGN.md: "about 0.4 ms", "1.6 ms").
  public func duration(of transfer: I2CTransfer) -> Duration {
    guard case .clockRate(let hertz) = self, hertz > 0 else { return .zero }
    let bits = transfer.direction == .write ? 29 : 30 + 9 * Int64(max(0, transfer.length))
    return .nanoseconds(bits * 1_000_000_000 / Int64(hertz))
  }
}

/// What a simulated bus has done. Every transaction ends in exactly one of `completed`,
/// `injectedFaults.total`, `notAcknowledgedAddresses` or `deviceErrors`.
public struct I2CBusStatistics: Hashable, Sendable {
  /// Transactions started (writes plus reads; requests rejected before the wire are not
  /// transactions). The next transaction's index is this value.
  public var transactions: UInt64 = 0
  /// Write transactions started.
  public var writes: UInt64 = 0
  /// Read transactions started.
  public var reads: UInt64 = 0
  /// Transactions that succeeded.
  public var completed: UInt64 = 0
  /// Transactions the fault plan failed, per kind.
  public var injectedFaults = I2CFaultCounts()
  /// Transactions to an address where no device is attached (`ENXIO`).
  public var notAcknowledgedAddresses: UInt64 = 0
  /// Transactions a device failed itself (e.g. a chip in reset that NACKs).
  public var deviceErrors: UInt64 = 0
  /// Requests refused before the wire (`EINVAL`: a block length outside `1 … 32`).
  public var rejectedRequests: UInt64 = 0

  public init() {}

  /// Transactions that failed, for any reason.
  public var failed: UInt64 { injectedFaults.total + notAcknowledgedAddresses + deviceErrors }
}

/// An I2C bus that hosts simulated devices by address, consults an `I2CFaultPlan` before every
/// transaction, and counts everything it did.
///
/// It behaves like a Linux i2c-dev adapter as seen through `I2CBus`: a transfer to an address
/// where nothing is attached fails with `.notAcknowledged` and `ENXIO`; a block longer than
/// 32 bytes (or empty) is refused with `.invalidArgument` and `EINVAL` before any transaction.
/// The fault plan is consulted first, for every transaction (an empty address included), and
/// devices see only the transfers it let through.
///
/// A class because the loop and the test share it: the driver owns it as its bus while the test
/// attaches devices, changes the fault plan and reads the counters. Not `Sendable`: a simulated
/// world (clock, bus, line, chip) belongs to one thread, like the loop it stands in for.
///
/// Neither operation allocates: devices sit in a fixed table of 128 addresses, the plan's
/// counters live in place, and errors are typed.
public final class SimulatedI2CBus: I2CBus {
  /// The clock the fault plan's time windows read (and wire timing moves).
  public let clock: ManualClock
  /// The name carried by thrown errors (`I2CError.bus`).
  public let name: String
  // The stored state below is `@exclusivity(unchecked)` (the runtime's dynamic exclusivity
  // checks cost several calls on every transfer of a replay). Why no two accesses to it can
  // overlap:
  // - One thread at a time: the bus is not `Sendable`, so Swift 6's strict concurrency never
  //   lets two threads reach it at once (a value can change hands only whole).
  // - No re-entrance: the storage is private, and every access to it inside this class is a
  //   plain load or store, or an in-place mutation whose only call out is into value-type code
  //   that cannot reach this bus (`I2CFaultPlan.fault`, `I2CFaultCounts`' subscript, `Array`'s
  //   subscript). Devices and the clock are called between accesses, never during one, so a
  //   device that calls back into the bus starts a fresh access.
  // - Outside code reaches the plan and the timing only through `faultPlan` and `wireTiming`,
  //   which are computed (a get, then a set): an outside `inout` access holds a copy, never
  //   this storage.

  /// The faults to inject. Replace it at any time; the bus's own counters keep running.
  public var faultPlan: I2CFaultPlan {
    get { storedFaultPlan }
    set { storedFaultPlan = newValue }
  }
  /// How long transfers take on the clock.
  public var wireTiming: I2CWireTiming {
    get { storedWireTiming }
    set { storedWireTiming = newValue }
  }
  /// What the bus has done since it was made.
  @exclusivity(unchecked) public private(set) var statistics = I2CBusStatistics()

  @exclusivity(unchecked) private var storedFaultPlan: I2CFaultPlan
  @exclusivity(unchecked) private var storedWireTiming: I2CWireTiming
  @exclusivity(unchecked) private var devices: [(any SimulatedI2CDevice)?] = Array(
    repeating: nil, count: 128)

  public init(
    clock: ManualClock, faultPlan: I2CFaultPlan = .none,
    wireTiming: I2CWireTiming = .instantaneous, name: String = "simulated"
  ) {
    self.clock = clock
    storedFaultPlan = faultPlan
    storedWireTiming = wireTiming
    self.name = name
  }

  /// Attaches `device` at `address`, replacing (and returning) whatever was there: swapping the
  /// chip under a running driver is a legitimate scenario (a clone part, a hot swap).
  @discardableResult
  public func attach(_ device: any SimulatedI2CDevice, at address: I2CAddress)
    -> (any SimulatedI2CDevice)?
  {
    let previous = devices[Int(address.rawValue)]
    devices[Int(address.rawValue)] = device
    return previous
  }

  /// Removes and returns the device at `address`; from then on transfers to it are NACKed,
  /// like a chip whose wires came loose.
  @discardableResult
  public func detach(at address: I2CAddress) -> (any SimulatedI2CDevice)? {
    let previous = devices[Int(address.rawValue)]
    devices[Int(address.rawValue)] = nil
    return previous
  }

  /// The device at `address`, if any.
  public func device(at address: I2CAddress) -> (any SimulatedI2CDevice)? {
    devices[Int(address.rawValue)]
  }

  /// The addresses where a device answers, ascending (what `i2cdetect` would list).
  public var occupiedAddresses: [I2CAddress] {
    devices.indices.compactMap { index in
      devices[index] == nil ? nil : I2CAddress(rawValue: UInt8(index))
    }
  }

  public func writeRegister(_ register: UInt8, value: UInt8, at address: I2CAddress)
    throws(I2CError)
  {
    let transfer = I2CTransfer.write(register, value: value, at: address)
    statistics.writes += 1
    let device = try begin(transfer)
    do {
      try device.writeRegister(register, value: value)
    } catch {
      statistics.deviceErrors += 1
      throw located(error, transfer)
    }
    complete(transfer)
  }

  public func readRegisters(
    startingAt register: UInt8, into buffer: UnsafeMutableRawBufferPointer, at address: I2CAddress
  ) throws(I2CError) {
    guard (1...Self.maximumBlockLength).contains(buffer.count) else {
      statistics.rejectedRequests += 1
      throw I2CError(
        .invalidArgument, operation: .readRegisters, errno: .invalidArgument, address: address,
        register: register, bus: name)
    }
    let transfer = I2CTransfer.read(register, count: buffer.count, at: address)
    statistics.reads += 1
    let device = try begin(transfer)
    do {
      try device.readRegisters(startingAt: register, into: buffer)
    } catch {
      statistics.deviceErrors += 1
      throw located(error, transfer)
    }
    complete(transfer)
  }

  // The `I2CBus` conveniences are `mutating`, which a class held in a `let` cannot call;
  // these forward to them, so `let bus = …; try bus.readRegister(…)` works.

  /// Reads one register (see `I2CBus.readRegister(_:at:)`). Does not allocate.
  public func readRegister(_ register: UInt8, at address: I2CAddress) throws(I2CError) -> UInt8 {
    try readOneRegister(on: self, register, at: address)
  }

  /// Reads `count` consecutive registers into a new array (see `I2CBus`). Allocates.
  public func readRegisters(startingAt register: UInt8, count: Int, at address: I2CAddress)
    throws(I2CError) -> [UInt8]
  {
    try readRegisterArray(on: self, startingAt: register, count: count, at: address)
  }

  /// Numbers the transaction, consults the plan, and finds the device; throws the injected
  /// fault or the NACK of an empty address.
  private func begin(_ transfer: I2CTransfer) throws(I2CError) -> any SimulatedI2CDevice {
    let index = statistics.transactions
    statistics.transactions += 1
    if let injection = storedFaultPlan.fault(for: transfer, index: index, at: clock.now()) {
      statistics.injectedFaults[injection.kind] += 1
      if injection.duration > .zero { clock.advance(by: injection.duration) }
      throw I2CError(
        injection.kind.errorKind, operation: transfer.operation, errno: injection.errno,
        address: transfer.address, register: transfer.register, bus: name)
    }
    guard let device = devices[Int(transfer.address.rawValue)] else {
      statistics.notAcknowledgedAddresses += 1
      throw I2CError(
        .notAcknowledged, operation: transfer.operation, errno: .noSuchDeviceOrAddress,
        address: transfer.address, register: transfer.register, bus: name)
    }
    return device
  }

  private func complete(_ transfer: I2CTransfer) {
    statistics.completed += 1
    // Instantaneous transfers (the default, and every replay) take no time: no `Duration`
    // arithmetic (calls into the standard library's 128-bit code) on every transfer.
    if case .instantaneous = storedWireTiming { return }
    let busTime = storedWireTiming.duration(of: transfer)
    if busTime > .zero { clock.advance(by: busTime) }
  }

  /// A device's error with the bus's knowledge filled in where the device left it out.
  private func located(_ error: I2CError, _ transfer: I2CTransfer) -> I2CError {
    var error = error
    if error.address == nil { error.address = transfer.address }
    if error.register == nil { error.register = transfer.register }
    if error.bus == nil { error.bus = name }
    error.operation = transfer.operation
    return error
  }
}
