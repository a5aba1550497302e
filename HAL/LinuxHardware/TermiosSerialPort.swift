import Glibc
import HardwareAbstraction
import POSIXSupport

/// A serial port on Linux: a tty device (`/dev/ttyAMA0`, `/dev/ttyUSB0`, `/dev/serial/by-id/…`,
/// or a pseudo-terminal) driven through termios.
///
/// Opened `O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC` (never becomes the process's controlling
/// terminal, never blocks) and set to raw 8N1: `cfmakeraw` (no echo, no CR/LF translation, no
/// XON/XOFF, so 0x0A, 0x0D, 0x11 and 0x13 pass untouched), `CLOCAL | CREAD`, no `CRTSCTS`
/// hardware flow control, `VMIN = VTIME = 0`. The speed is one of `supportedBaudRates`, checked
/// before opening and read back after setting (a driver that cannot do it is refused with
/// `.unsupportedBaudRate`). `exclusive` takes the `TIOCEXCL` lock so a second program cannot open
/// the port (root still can).
///
/// `write` accepts what fits in the output buffer now; a full buffer (`EAGAIN`) is counted in
/// `statistics`, not thrown. A device that goes away (a USB adapter unplugged: `EIO`, `ENXIO`,
/// or a hang-up — `read` returning 0 with `POLLHUP`) throws `.disconnected` once, counts it, and
/// closes the descriptor, which a hung-up tty never recovers; `reopen()` opens the same path
/// with the same settings when the device is back (a `/dev/serial/by-id/` path follows the
/// adapter to its new `ttyUSBn`). `read` and `write` do not allocate.
///
/// A class because it owns the descriptor; it belongs to the loop's thread, so it is
/// deliberately not `Sendable`.
public final class TermiosSerialPort: SerialPort {
  /// The speeds Plumb supports, in baud (bits per second on the wire).
  public static let supportedBaudRates = [
    9600, 19_200, 38_400, 57_600, 115_200, 230_400, 460_800, 921_600,
  ]

  /// The device path as given.
  public let path: String
  /// The configured speed, in baud.
  public let baudRate: Int
  /// Whether the port takes the `TIOCEXCL` lock.
  public let exclusive: Bool
  public private(set) var statistics = SerialStatistics()

  private var descriptor: FileDescriptor

  /// Opens `path` at `baudRate` (one of `supportedBaudRates`) in raw 8N1.
  public init(path: String, baudRate: Int = 115_200, exclusive: Bool = false)
    throws(SerialError)
  {
    self.path = path
    self.baudRate = baudRate
    self.exclusive = exclusive
    self.descriptor = try Self.openConfigured(path: path, baudRate: baudRate, exclusive: exclusive)
  }

  public var isOpen: Bool { descriptor.isOpen }

  public func write(_ bytes: UnsafeRawBufferPointer) throws(SerialError) -> Int {
    guard descriptor.isOpen else { throw SerialError(.notOpen, device: path) }
    if bytes.isEmpty { return 0 }
    let accepted: Int
    do throws(SystemCallError) {
      accepted = try descriptor.write(bytes) ?? 0
    } catch {
      throw transferFailure(error.errno)
    }
    statistics.bytesWritten += UInt64(accepted)
    if accepted < bytes.count {
      statistics.bytesRefused += UInt64(bytes.count - accepted)
      statistics.shortWrites += 1
    }
    return accepted
  }

  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SerialError) -> Int {
    guard descriptor.isOpen else { throw SerialError(.notOpen, device: path) }
    if buffer.isEmpty { return 0 }
    let received: Int
    var hungUp = false
    do throws(SystemCallError) {
      received = try descriptor.read(into: buffer) ?? 0
      if received == 0 {
        // With VMIN = VTIME = 0 a read of nothing returns 0 rather than EAGAIN, and so does a
        // hung-up terminal: poll tells them apart.
        let events = try descriptor.poll(for: .input)
        hungUp = events.contains(.hangUp) || events.contains(.error)
      }
    } catch {
      throw transferFailure(error.errno)
    }
    if hungUp {
      statistics.disconnects += 1
      descriptor.close()
      throw SerialError(.disconnected, device: path)
    }
    statistics.bytesRead += UInt64(received)
    return received
  }

  /// Closes the device. Idempotent.
  public func close() {
    descriptor.close()
  }

  /// Opens the same path again with the same settings (after `close()` or a disconnect).
  /// On failure the port stays closed.
  public func reopen() throws(SerialError) {
    descriptor.close()
    descriptor = try Self.openConfigured(path: path, baudRate: baudRate, exclusive: exclusive)
    statistics.reopens += 1
  }

  /// The speed the device reports now (`tcgetattr`, `cfgetospeed`), in baud; `nil` when it is
  /// not one Plumb knows.
  public func currentBaudRate() throws(SerialError) -> Int? {
    guard descriptor.isOpen else { throw SerialError(.notOpen, device: path) }
    var settings = termios()
    let number = descriptor.rawValue
    do throws(SystemCallError) {
      _ = try retryingOnInterrupt { tcgetattr(number, &settings) }
    } catch {
      throw SerialError(
        Self.faultKind(for: error.errno, during: .configure), errno: error.errno, device: path)
    }
    return Self.baudRate(forSpeed: cfgetospeed(&settings))
  }

  /// A transfer failed: map it, and on a disconnect count it and close the dead descriptor.
  private func transferFailure(_ errno: Errno) -> SerialError {
    let kind = Self.faultKind(for: errno, during: .transfer)
    if kind == .disconnected {
      statistics.disconnects += 1
      descriptor.close()
    }
    return SerialError(kind, errno: errno, device: path)
  }

  /// The steps of using a port, for error mapping.
  public enum Stage: Hashable, Sendable {
    case open, configure, transfer
  }

  /// The fault an errno stands for at each step.
  ///
  /// Opening: `ENOENT`, `ENODEV` and `ENXIO` (a node with no device behind it, e.g. a
  /// `/dev/ttyS3` without a UART) mean the device is missing; `EIO` is a device going away
  /// while it is opened; `EBUSY` another program's exclusive lock. Configuring: `ENOTTY` is a
  /// path that is not a terminal, `EINVAL` a speed the driver refuses. Transfers: `EIO`,
  /// `ENXIO` and `ENODEV` are an unplugged device.
  public static func faultKind(for errno: Errno, during stage: Stage) -> SerialError.Kind {
    switch (stage, errno) {
    case (_, .permissionDenied), (_, .operationNotPermitted): return .permissionDenied
    case (.open, .noSuchFileOrDirectory), (.open, .noSuchDevice), (.open, .noSuchDeviceOrAddress):
      return .deviceMissing
    case (_, .ioError), (_, .noSuchDevice), (_, .noSuchDeviceOrAddress): return .disconnected
    case (.open, .busy), (.configure, .busy): return .busy
    case (.open, .notATerminal), (.configure, .notATerminal): return .notATerminal
    case (.configure, .invalidArgument): return .unsupportedBaudRate
    case (.transfer, .badFileDescriptor): return .notOpen
    default: return .ioError
    }
  }

  /// The termios speed constant for `baudRate`, or `nil` when Plumb does not support it.
  public static func speed(forBaudRate baudRate: Int) -> speed_t? {
    switch baudRate {
    case 9600: speed_t(B9600)
    case 19_200: speed_t(B19200)
    case 38_400: speed_t(B38400)
    case 57_600: speed_t(B57600)
    case 115_200: speed_t(B115200)
    case 230_400: speed_t(B230400)
    case 460_800: speed_t(B460800)
    case 921_600: speed_t(B921600)
    default: nil
    }
  }

  /// The speed in baud for a termios speed constant, or `nil` for one Plumb does not support.
  public static func baudRate(forSpeed speed: speed_t) -> Int? {
    supportedBaudRates.first { Self.speed(forBaudRate: $0) == speed }
  }

  /// Opens and configures the device; every failure names the path.
  private static func openConfigured(path: String, baudRate: Int, exclusive: Bool)
    throws(SerialError) -> FileDescriptor
  {
    guard let speed = speed(forBaudRate: baudRate) else {
      throw SerialError(.unsupportedBaudRate, device: path)
    }
    let descriptor: FileDescriptor
    do throws(SystemCallError) {
      descriptor = try FileDescriptor.open(
        path, flags: O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
    } catch {
      throw SerialError(
        faultKind(for: error.errno, during: .open), errno: error.errno, device: path)
    }
    let number = descriptor.rawValue
    var applied = termios()
    do throws(SystemCallError) {
      if exclusive {
        _ = try retryingOnInterrupt { ioctl(number, UInt(TIOCEXCL), 0) }
      }
      var settings = termios()
      _ = try retryingOnInterrupt { tcgetattr(number, &settings) }
      cfmakeraw(&settings)
      settings.c_cflag &= ~(tcflag_t(CSIZE | PARENB | CSTOPB) | tcflag_t(CRTSCTS))
      settings.c_cflag |= tcflag_t(CS8 | CLOCAL | CREAD)
      withUnsafeMutableBytes(of: &settings.c_cc) { characters in
        characters[Int(VMIN)] = 0
        characters[Int(VTIME)] = 0
      }
      _ = try retryingOnInterrupt { cfsetspeed(&settings, speed) }
      _ = try retryingOnInterrupt { tcsetattr(number, TCSANOW, &settings) }

      // tcsetattr succeeds when any of the changes took: read back what the driver kept.
      _ = try retryingOnInterrupt { tcgetattr(number, &applied) }
    } catch {
      throw SerialError(
        faultKind(for: error.errno, during: .configure), errno: error.errno, device: path)
    }
    guard cfgetospeed(&applied) == speed, cfgetispeed(&applied) == speed else {
      throw SerialError(.unsupportedBaudRate, device: path)
    }
    return descriptor
  }
}
