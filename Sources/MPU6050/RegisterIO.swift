import HardwareAbstraction

/// Register I/O: every transfer the driver makes goes through here. A single register is
/// read or written by its type (`read(PowerManagement1Register.self)`,
/// `write(PowerManagement1Register.deviceReset)`), which knows its address; bursts (the
/// measurements, FIFO_COUNT, FIFO_R_W, the self-test trim codes) read a block from an address
/// of the register map. Transient bus errors are retried up to
/// `policy.attemptsPerTransfer` times and counted in `counters.busErrors` and
/// `counters.retries`.
extension MPU6050Driver {
  /// Reads `count` (≤ 32) registers from `register` into `block`, retrying transient errors;
  /// returns the last error when every attempt failed.
  mutating func readBlock(_ register: UInt8, count: Int, into block: inout Block) -> I2CError? {
    var attempt = 0
    while true {
      attempt += 1
      var local = Block()
      let failure = Self.read(register, count: count, into: &local, on: &bus, at: address)
      guard let error = failure else {
        block = local
        return nil
      }
      counters.busErrors.record(error)
      if !error.isTransient || attempt >= policy.attemptsPerTransfer { return error }
      counters.retries += 1
    }
  }

  /// One block read, without retries. Static, with the bus and address as parameters, so the
  /// closure that lends the block's bytes captures only those, not the driver (capturing the
  /// driver would make unspecialised code look up `MPU6050Driver<Bus>`'s metadata per read).
  private static func read(
    _ register: UInt8, count: Int, into block: inout Block, on bus: inout Bus,
    at address: I2CAddress
  ) -> I2CError? {
    var failure: I2CError?
    block.withMutableBytes(count: count) { buffer in
      do throws(I2CError) {
        try bus.readRegisters(startingAt: register, into: buffer, at: address)
      } catch {
        failure = error
      }
    }
    return failure
  }

  /// Reads register `R`, retrying transient errors.
  mutating func read<R: MPU6050Register>(_: R.Type) -> Result<R, I2CError> {
    var block = Block()
    if let error = readBlock(R.address, count: 1, into: &block) { return .failure(error) }
    return .success(R(bits: block.withBytes { $0[0] }))
  }

  /// Writes `value` to its register, retrying transient errors; returns the last error when
  /// every attempt failed.
  mutating func write<R: MPU6050Register>(_ value: R) -> I2CError? {
    var attempt = 0
    while true {
      attempt += 1
      do throws(I2CError) {
        try bus.writeRegister(R.address, value: value.bits, at: address)
        return nil
      } catch {
        counters.busErrors.record(error)
        if !error.isTransient || attempt >= policy.attemptsPerTransfer { return error }
        counters.retries += 1
      }
    }
  }

  /// `read`, throwing the bus error: for start-up and configuration, which stop at the first.
  mutating func requireRead<R: MPU6050Register>(_ type: R.Type) throws(MPU6050Error) -> R {
    switch read(type) {
    case .success(let value): return value
    case .failure(let error): throw .bus(error)
    }
  }

  /// `write`, throwing the bus error.
  mutating func requireWrite<R: MPU6050Register>(_ value: R) throws(MPU6050Error) {
    if let error = write(value) { throw .bus(error) }
  }

  /// `readBlock`, throwing the bus error.
  mutating func requireBlock(_ register: UInt8, count: Int, into block: inout Block)
    throws(MPU6050Error)
  {
    if let error = readBlock(register, count: count, into: &block) { throw .bus(error) }
  }
}

/// 32 bytes of inline storage (the SMBus block limit): a burst or two FIFO records, without a
/// heap allocation. Unused bytes stay zero, so two blocks compare by their used bytes.
struct Block: Equatable {
  var storage: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

  static func == (a: Block, b: Block) -> Bool { a.storage == b.storage }

  func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
    withUnsafeBytes(of: storage) { body($0) }
  }

  mutating func withMutableBytes(count: Int, _ body: (UnsafeMutableRawBufferPointer) -> Void) {
    withUnsafeMutableBytes(of: &storage) { raw in
      body(UnsafeMutableRawBufferPointer(rebasing: raw[0..<count]))
    }
  }
}
