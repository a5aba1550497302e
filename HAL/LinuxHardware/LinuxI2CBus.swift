import CLibI2C
import Glibc
import HardwareAbstraction
import POSIXSupport

/// An I2C bus master on Linux: an i2c-dev node (`/dev/i2c-N`) driven through libi2c's SMBus
/// helpers.
///
/// The two transfers are exactly the SMBus calls the `I2CBus` contract names, so the same code
/// runs against a Raspberry Pi's `i2c-bcm2835` and the kernel's `i2c-stub` (which supports only
/// SMBus calls: plain `read`/`write` and `I2C_RDWR` fail there with `EOPNOTSUPP`):
///
/// - `writeRegister`: `i2c_smbus_write_byte_data`;
/// - `readRegisters` of one byte: `i2c_smbus_read_byte_data` (when the adapter has it);
/// - `readRegisters` of 2…32 bytes: `i2c_smbus_read_i2c_block_data`, one transaction.
///
/// At open the adapter's functionality (`I2C_FUNCS`) must include
/// `I2C_FUNC_SMBUS_READ_I2C_BLOCK` and `I2C_FUNC_SMBUS_WRITE_BYTE_DATA`, otherwise the bus
/// refuses with `.notSupported` naming the adapter, instead of failing on the first sample.
/// The target address is selected with `I2C_SLAVE` before the first transfer and cached; it is
/// selected again only when a transfer names another address.
///
/// Errors are mapped with `faultKind(for:during:)` (Linux `Documentation/i2c/fault-codes.rst`)
/// and carry the errno, the bus path, the address and the register. Transfers do not allocate.
///
/// A class because it owns the open descriptor (closed in `deinit`): copies of a struct would
/// share one descriptor. Like every device handle it belongs to one thread (the loop's), so it is
/// deliberately not `Sendable`.
public final class LinuxI2CBus: I2CBus {
  /// The device node, e.g. `/dev/i2c-1`.
  public let path: String
  /// The adapter's `I2C_FUNC_*` mask, as `I2C_FUNCS` reported it at open.
  public let functionality: UInt

  private var descriptor: FileDescriptor
  private var selectedAddress: I2CAddress?
  private let calls: SMBusCalls
  private let readsSingleBytesWithByteData: Bool

  /// The functions Plumb needs from an adapter: SMBus "I2C block read" (the 14-byte burst) and
  /// "write byte data" (configuration registers).
  public static let requiredFunctionality =
    UInt(I2C_FUNC_SMBUS_READ_I2C_BLOCK) | UInt(I2C_FUNC_SMBUS_WRITE_BYTE_DATA)

  /// `/dev/i2c-N`.
  public static func devicePath(busNumber: Int) -> String { "/dev/i2c-\(busNumber)" }

  /// Opens `/dev/i2c-busNumber` (on a Raspberry Pi the header pins are bus 1).
  public convenience init(busNumber: Int) throws(I2CError) {
    guard busNumber >= 0 else {
      throw I2CError(.invalidArgument, operation: .open, bus: "i2c-\(busNumber)")
    }
    try self.init(path: Self.devicePath(busNumber: busNumber))
  }

  /// Opens the i2c-dev node at `path` and checks the adapter's functionality.
  public convenience init(path: String) throws(I2CError) {
    let opened: FileDescriptor
    do throws(SystemCallError) {
      opened = try FileDescriptor.open(path, flags: O_RDWR | O_CLOEXEC)
    } catch {
      throw I2CError(
        Self.faultKind(for: error.errno, during: .open), operation: .open, errno: error.errno,
        bus: path)
    }
    try self.init(path: path, descriptor: opened, calls: .kernel)
  }

  /// Wraps an open descriptor with the given SMBus calls: the seam below which tests fake the
  /// kernel.
  package init(path: String, descriptor: consuming FileDescriptor, calls: SMBusCalls)
    throws(I2CError)
  {
    var mask: UInt = 0
    let number = descriptor.rawValue
    do throws(SystemCallError) {
      _ = try retryingOnInterrupt { calls.functionality(number, &mask) }
    } catch {
      throw I2CError(
        Self.faultKind(for: error.errno, during: .open), operation: .open, errno: error.errno,
        bus: path)
    }
    guard mask & Self.requiredFunctionality == Self.requiredFunctionality else {
      throw I2CError(
        .notSupported, operation: .open,
        bus: Self.describeAdapter(path: path, functionality: mask))
    }
    self.path = path
    self.functionality = mask
    self.descriptor = descriptor
    self.calls = calls
    self.readsSingleBytesWithByteData = mask & UInt(I2C_FUNC_SMBUS_READ_BYTE_DATA) != 0
  }

  public func writeRegister(_ register: UInt8, value: UInt8, at address: I2CAddress)
    throws(I2CError)
  {
    try select(address, register: register)
    let number = descriptor.rawValue
    do throws(SystemCallError) {
      _ = try retryingOnInterrupt { calls.writeByteData(number, register, value) }
    } catch {
      throw transferError(error.errno, .writeRegister, address: address, register: register)
    }
  }

  public func readRegisters(
    startingAt register: UInt8, into buffer: UnsafeMutableRawBufferPointer, at address: I2CAddress
  ) throws(I2CError) {
    let count = buffer.count
    guard count >= 1, count <= Self.maximumBlockLength, let start = buffer.baseAddress else {
      throw I2CError(
        .invalidArgument, operation: .readRegisters, address: address, register: register,
        bus: path)
    }
    try select(address, register: register)
    let number = descriptor.rawValue
    let received: CInt
    do throws(SystemCallError) {
      if count == 1 && readsSingleBytesWithByteData {
        let value = try retryingOnInterrupt { calls.readByteData(number, register) }
        start.storeBytes(of: UInt8(truncatingIfNeeded: value), as: UInt8.self)
        received = 1
      } else {
        received = try retryingOnInterrupt {
          start.withMemoryRebound(to: UInt8.self, capacity: count) { bytes in
            calls.readI2CBlockData(number, register, UInt8(count), bytes)
          }
        }
      }
    } catch {
      throw transferError(error.errno, .readRegisters, address: address, register: register)
    }
    guard received == count else {
      throw I2CError(
        .shortTransfer, operation: .readRegisters, address: address, register: register, bus: path)
    }
  }

  /// Selects `address` with `I2C_SLAVE` unless it is already selected.
  @inline(__always)
  private func select(_ address: I2CAddress, register: UInt8) throws(I2CError) {
    if selectedAddress == address { return }
    selectedAddress = nil
    let number = descriptor.rawValue
    do throws(SystemCallError) {
      _ = try retryingOnInterrupt { calls.selectAddress(number, address.rawValue) }
    } catch {
      throw I2CError(
        Self.faultKind(for: error.errno, during: .selectAddress), operation: .selectAddress,
        errno: error.errno, address: address, register: register, bus: path)
    }
    selectedAddress = address
  }

  private func transferError(
    _ errno: Errno, _ operation: I2CError.Operation, address: I2CAddress, register: UInt8
  ) -> I2CError {
    I2CError(
      Self.faultKind(for: errno, during: operation), operation: operation, errno: errno,
      address: address, register: register, bus: path)
  }

  /// The fault an errno stands for, following Linux `Documentation/i2c/fault-codes.rst`.
  ///
  /// A pure function of the code and the operation, because the same code means different
  /// things at different moments: `EBUSY` from `I2C_SLAVE` is a kernel driver owning the
  /// address, during a transfer a bus held busy; `ENOENT` or `ENXIO` from `open` is a missing
  /// bus (no node, or a node with no i2c-dev driver behind it), `ENXIO` in a transfer is a NACK
  /// of the address. Adapters that report every NACK as `EREMOTEIO` (the Raspberry Pi's
  /// `i2c-bcm2835`) map to `.notAcknowledged` too, as does `ENODEV` in a transfer (i2c-stub's
  /// answer for an empty address).
  public static func faultKind(for errno: Errno, during operation: I2CError.Operation)
    -> I2CError.Kind
  {
    switch errno {
    case .permissionDenied, .operationNotPermitted: return .permissionDenied
    case .noSuchFileOrDirectory: return operation == .open ? .busMissing : .other
    case .noSuchDeviceOrAddress: return operation == .open ? .busMissing : .notAcknowledged
    case .remoteIO: return .notAcknowledged
    case .tryAgain: return .arbitrationLost
    case .busy: return operation == .selectAddress ? .addressInUse : .busBusy
    case .timedOut: return .timedOut
    case .ioError: return .ioError
    case .protocolError, .badMessage: return .protocolViolation
    case .notSupported: return .notSupported
    case .shutdown: return .adapterUnavailable
    // At open there is no adapter; in a transfer nothing answered at the address (the
    // kernel's i2c-stub reports an empty address this way, where most adapters NACK).
    case .noSuchDevice: return operation == .open ? .adapterUnavailable : .notAcknowledged
    case .invalidArgument: return .invalidArgument
    default: return .other
    }
  }

  /// `/dev/i2c-3 (adapter "i2c-tiny-usb at bus 001 device 004", I2C_FUNCS 0x…)` for an error
  /// that must name the adapter; the name comes from sysfs when there is one.
  static func describeAdapter(path: String, functionality: UInt) -> String {
    var text = path
    var details: [String] = []
    if let name = adapterName(devicePath: path) { details.append("adapter \"\(name)\"") }
    details.append("I2C_FUNCS 0x" + String(functionality, radix: 16, uppercase: true))
    text += " (" + details.joined(separator: ", ") + ")"
    return text
  }

  /// The adapter's name from `/sys/class/i2c-dev/i2c-N/name`, or `nil`.
  static func adapterName(devicePath: String, sysfsRoot: String = adaptersDirectory) -> String? {
    guard let node = devicePath.split(separator: "/").last else { return nil }
    return readFirstLine("\(sysfsRoot)/\(node)/name")
  }

  /// Where the kernel lists i2c-dev nodes and their adapters.
  public static let adaptersDirectory = "/sys/class/i2c-dev"

  /// The I2C adapters that have an i2c-dev node, by bus number, from sysfs
  /// (`/sys/class/i2c-dev/i2c-N/name`, what `i2cdetect -l` shows). Empty when I2C or i2c-dev
  /// is not enabled.
  public static func adapters(sysfsRoot: String = adaptersDirectory) -> [I2CAdapter] {
    guard let directory = opendir(sysfsRoot) else { return [] }
    defer { closedir(directory) }
    var found: [I2CAdapter] = []
    while let entry = readdir(directory) {
      let node = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
        String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
      }
      guard node.hasPrefix("i2c-"), let number = Int(node.dropFirst(4)) else { continue }
      let name = readFirstLine("\(sysfsRoot)/\(node)/name") ?? ""
      found.append(I2CAdapter(busNumber: number, name: name))
    }
    return found.sorted { $0.busNumber < $1.busNumber }
  }

  /// The bus number of the first adapter called `name`, e.g. `"SMBus stub driver"` for the
  /// kernel's i2c-stub, whose number depends on what else is loaded; `nil` when none is.
  public static func busNumber(ofAdapterNamed name: String, sysfsRoot: String = adaptersDirectory)
    -> Int?
  {
    adapters(sysfsRoot: sysfsRoot).first { $0.name == name }?.busNumber
  }

  /// The first line of a small text file (a sysfs attribute), or `nil`.
  private static func readFirstLine(_ path: String) -> String? {
    guard let file = try? FileDescriptor.open(path, flags: O_RDONLY | O_CLOEXEC) else {
      return nil
    }
    var bytes = [UInt8](repeating: 0, count: 128)
    let count = bytes.withUnsafeMutableBytes { buffer in (try? file.read(into: buffer)) ?? 0 }
    let line = bytes.prefix(count).prefix { $0 != 0x0A && $0 != 0x0D }
    return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
  }
}

/// An I2C adapter the kernel exposes through i2c-dev.
public struct I2CAdapter: Hashable, Sendable, CustomStringConvertible {
  /// N in `/dev/i2c-N`.
  public var busNumber: Int
  /// The adapter's name, e.g. `bcm2835 (i2c@7e804000)` or `SMBus stub driver`.
  public var name: String

  public init(busNumber: Int, name: String) {
    self.busNumber = busNumber
    self.name = name
  }

  /// `/dev/i2c-N`.
  public var devicePath: String { LinuxI2CBus.devicePath(busNumber: busNumber) }

  /// `i2c-1 bcm2835 (i2c@7e804000)`.
  public var description: String { "i2c-\(busNumber) \(name)" }
}

/// The kernel calls `LinuxI2CBus` makes, as replaceable closures: the seam below which tests fake
/// an adapter. Every closure follows libi2c's convention: a result ≥ 0, or a negative value with
/// `errno` set.
package struct SMBusCalls {
  /// `ioctl(I2C_FUNCS)`: stores the adapter's functionality mask.
  package var functionality: (_ descriptor: CInt, _ mask: inout UInt) -> CInt
  /// `ioctl(I2C_SLAVE)`.
  package var selectAddress: (_ descriptor: CInt, _ address: UInt8) -> CInt
  /// `i2c_smbus_write_byte_data`.
  package var writeByteData: (_ descriptor: CInt, _ register: UInt8, _ value: UInt8) -> CInt
  /// `i2c_smbus_read_byte_data`: the byte, or a negative error.
  package var readByteData: (_ descriptor: CInt, _ register: UInt8) -> CInt
  /// `i2c_smbus_read_i2c_block_data`: the number of bytes stored, or a negative error.
  package var readI2CBlockData:
    (
      _ descriptor: CInt, _ register: UInt8, _ length: UInt8,
      _ values: UnsafeMutablePointer<UInt8>
    ) -> CInt

  package init(
    functionality: @escaping (_ descriptor: CInt, _ mask: inout UInt) -> CInt,
    selectAddress: @escaping (_ descriptor: CInt, _ address: UInt8) -> CInt,
    writeByteData: @escaping (_ descriptor: CInt, _ register: UInt8, _ value: UInt8) -> CInt,
    readByteData: @escaping (_ descriptor: CInt, _ register: UInt8) -> CInt,
    readI2CBlockData:
      @escaping (
        _ descriptor: CInt, _ register: UInt8, _ length: UInt8,
        _ values: UnsafeMutablePointer<UInt8>
      ) -> CInt
  ) {
    self.functionality = functionality
    self.selectAddress = selectAddress
    self.writeByteData = writeByteData
    self.readByteData = readByteData
    self.readI2CBlockData = readI2CBlockData
  }

  /// The real thing: i2c-dev ioctls and libi2c.
  package static var kernel: SMBusCalls {
    SMBusCalls(
      functionality: { descriptor, mask in plumb_i2c_functionality(descriptor, &mask) },
      selectAddress: { descriptor, address in plumb_i2c_select_address(descriptor, address) },
      writeByteData: { descriptor, register, value in
        i2c_smbus_write_byte_data(descriptor, register, value)
      },
      readByteData: { descriptor, register in i2c_smbus_read_byte_data(descriptor, register) },
      readI2CBlockData: { descriptor, register, length, values in
        i2c_smbus_read_i2c_block_data(descriptor, register, length, values)
      })
  }
}
