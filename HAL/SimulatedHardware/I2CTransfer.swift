import ByteFormats
import HardwareAbstraction

/// One transfer a driver asked an I2C bus for: what the fault plans match against and what the
/// scripted bus compares with its script.
public struct I2CTransfer: Hashable, Sendable, CustomStringConvertible {
  /// Which of the two `I2CBus` operations.
  public enum Direction: String, Hashable, Sendable {
    /// SMBus write byte data: one register, one value.
    case write
    /// SMBus I2C block read: `length` consecutive registers.
    case read
  }

  public var direction: Direction
  /// The device's 7-bit address.
  public var address: I2CAddress
  /// The register written, or the first register read.
  public var register: UInt8
  /// The number of data bytes: 1 for a write, the block length for a read.
  public var length: Int
  /// The byte written; `nil` for a read.
  public var value: UInt8?

  /// A write of `value` to `register` at `address`.
  public static func write(_ register: UInt8, value: UInt8, at address: I2CAddress) -> I2CTransfer {
    I2CTransfer(direction: .write, address: address, register: register, length: 1, value: value)
  }

  /// A read of `count` bytes starting at `register` at `address`.
  public static func read(_ register: UInt8, count: Int, at address: I2CAddress) -> I2CTransfer {
    I2CTransfer(direction: .read, address: address, register: register, length: count, value: nil)
  }

  /// The operation, in `I2CError`'s vocabulary.
  public var operation: I2CError.Operation {
    direction == .write ? .writeRegister : .readRegisters
  }

  /// Whether the transfer touches `register`: a write to it, or a block read whose range
  /// `register … register + length − 1` includes it.
  public func covers(_ register: UInt8) -> Bool {
    let offset = Int(register) - Int(self.register)
    return offset >= 0 && offset < max(1, length)
  }

  /// `write 0x80 to 0x6B at 0x68`, `read 14 bytes from 0x3B at 0x68`.
  public var description: String {
    switch direction {
    case .write:
      "write \(hexByte(value ?? 0)) to \(hexByte(register)) at \(address)"
    case .read:
      "read \(length) byte\(length == 1 ? "" : "s") from \(hexByte(register)) at \(address)"
    }
  }
}

/// Which transfers a fault applies to. Every condition that is set must hold.
public struct I2CTransferFilter: Hashable, Sendable {
  /// Only transfers to this address; `nil` means any address.
  public var address: I2CAddress?
  /// Only reads or only writes; `nil` means both.
  public var direction: I2CTransfer.Direction?
  /// Only transfers that touch this register (see `I2CTransfer.covers`); `nil` means any.
  public var register: UInt8?

  public init(
    address: I2CAddress? = nil, direction: I2CTransfer.Direction? = nil, register: UInt8? = nil
  ) {
    self.address = address
    self.direction = direction
    self.register = register
  }

  /// Every transfer.
  public static var any: I2CTransferFilter { I2CTransferFilter() }

  /// Only reads (optionally at one address).
  public static func reads(at address: I2CAddress? = nil) -> I2CTransferFilter {
    I2CTransferFilter(address: address, direction: .read)
  }

  /// Only writes (optionally at one address).
  public static func writes(at address: I2CAddress? = nil) -> I2CTransferFilter {
    I2CTransferFilter(address: address, direction: .write)
  }

  /// Whether `transfer` passes every condition.
  public func matches(_ transfer: I2CTransfer) -> Bool {
    if let address, transfer.address != address { return false }
    if let direction, transfer.direction != direction { return false }
    if let register, !transfer.covers(register) { return false }
    return true
  }
}

/// The `I2CBus` extension's `readRegister`, reached through a generic so that a class's own
/// non-mutating overload can forward to it.
func readOneRegister<Bus: I2CBus>(on bus: Bus, _ register: UInt8, at address: I2CAddress)
  throws(I2CError) -> UInt8
{
  var bus = bus
  return try bus.readRegister(register, at: address)
}

/// The `I2CBus` extension's allocating `readRegisters(startingAt:count:at:)`, likewise.
func readRegisterArray<Bus: I2CBus>(
  on bus: Bus, startingAt register: UInt8, count: Int, at address: I2CAddress
) throws(I2CError) -> [UInt8] {
  var bus = bus
  return try bus.readRegisters(startingAt: register, count: count, at: address)
}

extension I2CError.Kind {
  /// The errno a Linux adapter typically returns for this kind (fault-codes.rst); `nil` when
  /// there is no single one. NACKs are reported as `EREMOTEIO`, as the Raspberry Pi's
  /// `i2c-bcm2835` does for a NACK in the middle of a transfer.
  var typicalErrno: Errno? {
    switch self {
    case .notAcknowledged: .remoteIO
    case .arbitrationLost: .tryAgain
    case .busBusy: .busy
    case .timedOut: .timedOut
    case .ioError: .ioError
    case .protocolViolation: .protocolError
    case .notSupported: .notSupported
    case .adapterUnavailable: .shutdown
    case .busMissing: .noSuchFileOrDirectory
    case .permissionDenied: .permissionDenied
    case .addressInUse: .busy
    case .invalidArgument: .invalidArgument
    case .shortTransfer, .other: nil
    }
  }
}
