/// A byte stream to the host: a UART, a USB serial adapter, a pseudo-terminal, or memory.
///
/// **Contract for the loop.** Both directions are non-blocking. `write` accepts what fits in the
/// output buffer now and returns how many bytes that was (possibly 0); the loop decides whether
/// to drop or keep the rest, and never waits for the line. `read` returns what has arrived
/// (possibly 0 bytes). A thrown `SerialError` with `isDisconnect` means the device went away
/// (a USB adapter unplugged: `EIO`/`ENXIO`); `close()` then `reopen()` later, when it is back.
///
/// **Contract for implementers.** Never block, never allocate per call, count every short or
/// refused write in `statistics` (`EAGAIN` is a count, not an error), retry `EINTR`, and leave
/// the byte values alone (raw mode: no CR/LF translation, no flow-control characters, no echo).
public protocol SerialPort {
  /// Writes as much of `bytes` as the device accepts without blocking; returns the count.
  mutating func write(_ bytes: UnsafeRawBufferPointer) throws(SerialError) -> Int

  /// Reads what has arrived, up to `buffer.count` bytes, without blocking; returns the count.
  mutating func read(into buffer: UnsafeMutableRawBufferPointer) throws(SerialError) -> Int

  /// Closes the device. Idempotent.
  mutating func close()

  /// Opens the device again with the same settings (after `close()` or a disconnect).
  mutating func reopen() throws(SerialError)

  /// Whether the device is open.
  var isOpen: Bool { get }

  /// Counters since the port was created (they survive `reopen()`).
  var statistics: SerialStatistics { get }
}

extension SerialPort {
  /// Writes an array's bytes; allocation-free, for tests and tools.
  public mutating func write(_ bytes: [UInt8]) throws(SerialError) -> Int {
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
}

/// What a serial port has done, for health telemetry. Nothing is lost silently: every byte
/// the caller offered is either in `bytesWritten` or in `bytesRefused`.
public struct SerialStatistics: Hashable, Sendable {
  /// Bytes the device accepted.
  public var bytesWritten: UInt64 = 0
  /// Bytes offered to `write` that the device did not accept (buffer full).
  public var bytesRefused: UInt64 = 0
  /// Calls to `write` that accepted fewer bytes than offered (including none).
  public var shortWrites: UInt64 = 0
  /// Bytes delivered by `read`.
  public var bytesRead: UInt64 = 0
  /// Disconnects seen (`EIO`, `ENXIO`, hang-up).
  public var disconnects: UInt64 = 0
  /// Successful `reopen()` calls.
  public var reopens: UInt64 = 0

  public init() {}
}

/// What went wrong with a serial port.
public struct SerialError: Error, Hashable, Sendable, CustomStringConvertible {
  public enum Kind: String, Hashable, Sendable {
    /// The device node does not exist (`ENOENT`, `ENODEV`).
    case deviceMissing
    /// The process may not open it (`EACCES`, `EPERM`): not in the `dialout` group.
    case permissionDenied
    /// Another process holds it exclusively (`EBUSY`).
    case busy
    /// The path is not a terminal (`ENOTTY`): termios settings cannot apply.
    case notATerminal
    /// A named pipe (FIFO) that no process has open for reading (`ENXIO`).
    case noReader
    /// The requested baud rate is not one the port supports.
    case unsupportedBaudRate
    /// The device went away (`EIO`, `ENXIO`, hang-up): close and reopen when it is back.
    case disconnected
    /// The port is closed.
    case notOpen
    /// A file (not a device, not a pipe) that cannot take more: its disk is full (`ENOSPC`), a
    /// quota (`EDQUOT`) or a size limit (`EFBIG`) is reached, or its device failed (`EIO`). It
    /// does not come back by itself: the port stays closed and `reopen()` fails the same way.
    case outputFailed
    /// Any other I/O failure.
    case ioError
  }

  public var kind: Kind
  public var errno: Errno?
  /// The device path, when known.
  public var device: String?

  public init(_ kind: Kind, errno: Errno? = nil, device: String? = nil) {
    self.kind = kind
    self.errno = errno
    self.device = device
  }

  /// Whether the device is gone and the caller should close, then reopen later.
  public var isDisconnect: Bool { kind == .disconnected }

  /// What to do about it, for a person.
  public var remedy: String {
    switch kind {
    case .deviceMissing:
      "no such serial device: check the path (`ls /dev/ttyS* /dev/ttyAMA* /dev/ttyUSB* /dev/serial/by-id/`); on a Raspberry Pi enable the UART with `sudo raspi-config` → Interface Options → Serial Port"
    case .permissionDenied:
      "permission denied: add the user to the dialout group (`sudo usermod -aG dialout $USER`, then log in again)"
    case .busy: "another program has the device open (a login getty or a terminal program?)"
    case .notATerminal: "the path is not a terminal device; give a tty, a pty, or write to a file"
    case .noReader:
      "nothing is reading this named pipe: start its reader first (e.g. `plumb-monitor PATH`), then plumb"
    case .unsupportedBaudRate:
      "choose one of 9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600"
    case .disconnected:
      "the device went away (USB adapter unplugged?); it is reopened when it returns"
    case .notOpen: "the port is closed"
    case .outputFailed:
      "the file cannot take more frames: free space on its device (or raise the limit, "
        + "ulimit -f), or write the frames elsewhere"
    case .ioError: "an I/O error on the serial device"
    }
  }

  public var description: String {
    var text = "serial port: \(kind.rawValue)"
    if let device { text += " (\(device))" }
    if let errno { text += " [\(errno)]" }
    return text + " — " + remedy
  }
}
