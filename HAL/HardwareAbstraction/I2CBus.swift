import ByteFormats

/// A 7-bit I2C target ("slave") address.
///
/// The MPU-6050 answers at `0x68` (AD0 low) or `0x69` (AD0 high), PS-MPU-6000A §6.4.
/// The address says *where* a device is; it says nothing about *what* it is (that is the
/// WHO_AM_I register's job, and the two must never be compared).
public struct I2CAddress: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible
{
  public let rawValue: UInt8

  /// A 7-bit address, `0x00…0x7F`; `nil` for anything wider.
  @inlinable
  public init?(rawValue: UInt8) {
    guard rawValue <= 0x7F else { return nil }
    self.rawValue = rawValue
  }

  /// `0x68`, the MPU-6050 with AD0 tied low.
  public static let mpu6050 = I2CAddress(rawValue: 0x68)!
  /// `0x69`, the MPU-6050 with AD0 tied high.
  public static let mpu6050Alternate = I2CAddress(rawValue: 0x69)!

  @inlinable
  public static func < (lhs: I2CAddress, rhs: I2CAddress) -> Bool { lhs.rawValue < rhs.rawValue }

  /// `0x68`.
  public var description: String { hexByte(rawValue) }
}

/// An I2C bus master, seen from a register-oriented device driver.
///
/// **Contract for driver authors.** The bus moves bytes to and from *registers* of the device at
/// an address. Every operation is one complete transaction on the wire (START … STOP), so a
/// block read returns bytes from a single instant of a device that latches its output registers
/// while the interface is busy (the MPU-6050 does, RM-MPU-6000A §4.17). A failed operation
/// throws `I2CError`; retrying, counting and re-initialising are the driver's decisions, never
/// the bus's. The bus keeps no per-device state a driver could depend on.
///
/// **Contract for implementers.** The two operations are exactly the SMBus "write byte data"
/// and "I2C block read" transfers (Linux `Documentation/i2c/smbus-protocol.rst`), because the
/// kernel's `i2c-stub`, used to test against a real kernel, implements only SMBus calls:
///
///     writeRegister:   S Addr Wr [A] Comm [A] Data [A] P
///     readRegisters:   S Addr Wr [A] Comm [A] Sr Addr Rd [A] [Data] A … [Data] NA P
///
/// A block read covers `1 … maximumBlockLength` bytes. Errors are mapped to `I2CError.Kind`
/// following Linux's `Documentation/i2c/fault-codes.rst`. Implementations must not allocate
/// in either operation: the driver calls them on the 100 Hz hot path.
public protocol I2CBus {
  /// Writes `value` to the 8-bit `register` of the device at `address` (SMBus write byte data).
  mutating func writeRegister(_ register: UInt8, value: UInt8, at address: I2CAddress)
    throws(I2CError)

  /// Reads `buffer.count` consecutive registers, starting at `register`, from the device at
  /// `address`, in one transaction (SMBus I2C block read). `buffer.count` is `1 … 32`.
  ///
  /// On success every byte of `buffer` has been written. On failure the contents of
  /// `buffer` are unspecified.
  mutating func readRegisters(
    startingAt register: UInt8, into buffer: UnsafeMutableRawBufferPointer, at address: I2CAddress
  ) throws(I2CError)
}

extension I2CBus {
  /// The most bytes one SMBus I2C block transfer carries (`I2C_SMBUS_BLOCK_MAX`).
  public static var maximumBlockLength: Int { 32 }

  /// Reads one register. Does not allocate.
  @inlinable
  public mutating func readRegister(_ register: UInt8, at address: I2CAddress) throws(I2CError)
    -> UInt8
  {
    var byte: UInt8 = 0
    var failure: I2CError?
    withUnsafeMutableBytes(of: &byte) { buffer in
      do throws(I2CError) {
        try readRegisters(startingAt: register, into: buffer, at: address)
      } catch {
        failure = error
      }
    }
    if let failure { throw failure }
    return byte
  }

  /// Reads `count` consecutive registers into a new array. Allocates: for set-up and tools,
  /// not for the sample path.
  public mutating func readRegisters(startingAt register: UInt8, count: Int, at address: I2CAddress)
    throws(I2CError) -> [UInt8]
  {
    var bytes = [UInt8](repeating: 0, count: count)
    var failure: I2CError?
    bytes.withUnsafeMutableBytes { buffer in
      do throws(I2CError) {
        try readRegisters(startingAt: register, into: buffer, at: address)
      } catch {
        failure = error
      }
    }
    if let failure { throw failure }
    return bytes
  }
}

/// What went wrong on an I2C bus: the kind (from Linux's I2C fault-codes document), the errno
/// when the kernel gave one, and where it happened.
public struct I2CError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The fault, in the vocabulary of Linux `Documentation/i2c/fault-codes.rst`.
  public enum Kind: String, Hashable, Sendable {
    /// The address phase was not acknowledged (`ENXIO`; many adapters, among them the Raspberry
    /// Pi's `i2c-bcm2835`, report any NACK as `EREMOTEIO`, errno 121): nothing answers at the
    /// address, the wiring is loose, or the chip is held in reset.
    case notAcknowledged
    /// Another master won arbitration (`EAGAIN`). Transient: retry.
    case arbitrationLost
    /// The bus stayed busy longer than expected (`EBUSY` during a transfer). Often a target
    /// holding SDA low after an interrupted transfer.
    case busBusy
    /// The transfer timed out (`ETIMEDOUT`), e.g. a target stretching SCL forever.
    case timedOut
    /// The vague `EIO`: something failed during the transfer.
    case ioError
    /// The target did not follow the protocol (`EPROTO`, `EBADMSG` for a bad PEC).
    case protocolViolation
    /// The adapter cannot do this transfer (`EOPNOTSUPP`), e.g. a bus without I2C block reads.
    case notSupported
    /// The adapter is suspended or gone (`ESHUTDOWN`, `ENODEV`).
    case adapterUnavailable
    /// The bus device node does not exist (`ENOENT` on open): I2C not enabled, or wrong bus number.
    case busMissing
    /// The process may not open the bus (`EACCES`, `EPERM`): not in the `i2c` group.
    case permissionDenied
    /// A kernel driver has claimed the address (`EBUSY` from `I2C_SLAVE`).
    case addressInUse
    /// A parameter was out of range (`EINVAL`), e.g. a block longer than 32 bytes.
    case invalidArgument
    /// The transfer moved fewer bytes than asked for.
    case shortTransfer
    /// Anything else; the errno says what.
    case other
  }

  /// The operation during which the fault happened.
  public enum Operation: String, Hashable, Sendable {
    case open, selectAddress, writeRegister, readRegisters
  }

  public var kind: Kind
  public var operation: Operation
  /// The errno the kernel returned, when there was one.
  public var errno: Errno?
  /// The target address, when the fault concerns one.
  public var address: I2CAddress?
  /// The first register of the transfer, when the fault concerns one.
  public var register: UInt8?
  /// The bus, e.g. `/dev/i2c-1` or `simulated`, when known.
  public var bus: String?

  public init(
    _ kind: Kind, operation: Operation, errno: Errno? = nil, address: I2CAddress? = nil,
    register: UInt8? = nil, bus: String? = nil
  ) {
    self.kind = kind
    self.operation = operation
    self.errno = errno
    self.address = address
    self.register = register
    self.bus = bus
  }

  /// Whether retrying the same transfer soon can succeed: lost arbitration, a busy or stuck
  /// bus, a timeout, a NACK or a generic I/O error can clear; a missing bus, a permission or an
  /// unsupported transfer cannot.
  public var isTransient: Bool {
    switch kind {
    case .notAcknowledged, .arbitrationLost, .busBusy, .timedOut, .ioError, .protocolViolation,
      .shortTransfer:
      true
    case .notSupported, .adapterUnavailable, .busMissing, .permissionDenied, .addressInUse,
      .invalidArgument, .other:
      false
    }
  }

  /// What to do about it, for a person.
  public var remedy: String {
    switch kind {
    case .notAcknowledged:
      "nothing acknowledged the address: check the wiring (SDA, SCL, VCC, GND), the address (0x68 with AD0 low, 0x69 high; `i2cdetect -y BUS` lists what answers) and the bus number"
    case .arbitrationLost: "another master is on the bus; the transfer can be retried"
    case .busBusy:
      "the bus stayed busy: a device may be holding SDA low; power-cycle the sensor if it persists"
    case .timedOut: "the transfer timed out: check the wiring and pull-ups, or lower the bus speed"
    case .ioError: "an I/O error on the bus: check the wiring and pull-ups"
    case .protocolViolation: "the device did not follow the SMBus protocol"
    case .notSupported:
      "this I2C adapter cannot do SMBus I2C-block transfers; use a bus whose adapter supports I2C_FUNC_SMBUS_READ_I2C_BLOCK"
    case .adapterUnavailable: "the I2C adapter is suspended or was removed"
    case .busMissing:
      "the I2C bus device does not exist: enable I2C (on a Raspberry Pi: `sudo raspi-config` → Interface Options → I2C, or `dtparam=i2c_arm=on` in config.txt, then reboot; `sudo modprobe i2c-dev` elsewhere) and check the bus number with `ls /dev/i2c-*`"
    case .permissionDenied:
      "permission denied: add the user to the i2c group (`sudo usermod -aG i2c $USER`, then log in again)"
    case .addressInUse:
      "a kernel driver has claimed this address (for an MPU-6050 usually `inv-mpu6050`): unbind it or remove its device-tree overlay"
    case .invalidArgument: "a transfer parameter was out of range (this is a bug in the caller)"
    case .shortTransfer: "the adapter moved fewer bytes than requested"
    case .other:
      // ENOTTY: the node refused i2c-dev's ioctls; EISDIR (21): a folder.
      operation == .open && (errno == .notATerminal || errno?.rawValue == 21)
        ? "this is not an I2C adapter's device node (the kernel refused what i2c-dev does): "
          + "name one in the board file's i2c.bus, /dev/i2c-N (`ls /dev/i2c-*` lists them)"
        : "an unexpected error from the I2C adapter"
    }
  }

  public var description: String {
    var text = "I2C \(operation.rawValue) failed: \(kind.rawValue)"
    var place: [String] = []
    if let bus { place.append("bus \(bus)") }
    if let address { place.append("address \(address)") }
    if let register { place.append("register \(hexByte(register))") }
    if !place.isEmpty { text += " (" + place.joined(separator: ", ") + ")" }
    if let errno { text += " [\(errno)]" }
    return text + " — " + remedy
  }
}
