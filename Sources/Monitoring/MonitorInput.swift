import Glibc
import HardwareAbstraction
import POSIXSupport

/// Where a monitor reads the stream from: a serial device (a tty or pty, through any
/// `SerialPort`), a regular file (a recording), a pipe, or standard input.
///
/// Reads never block for long: a serial port is non-blocking by contract, a pipe is polled
/// first, and a regular file returns what it has until its end. Live inputs (serial devices,
/// pipes) say "nothing yet" and the session pauses; files and closed pipes say "end of input".
///
/// A class because it owns a device or a descriptor; it belongs to one thread (not `Sendable`).
public final class MonitorInput {
  public enum Kind: String, Hashable, Sendable {
    /// A tty or pty behind a `SerialPort`: commands can be sent, disconnects happen.
    case serialDevice
    /// A regular file: read to its end.
    case regularFile
    /// A pipe or FIFO (including standard input from a pipe): read until the writer closes it.
    case pipe
  }

  /// The input as a person named it: the path, or `standard input`.
  public let name: String
  public let kind: Kind
  /// The speed of a serial device, baud, for messages (`nil` when not known or not serial).
  public let baudRate: Int?

  private var port: (any SerialPort)?
  private var descriptor: FileDescriptor

  /// An input reading `port` (already open), e.g. a `TermiosSerialPort`, or in tests a
  /// `MemorySerialPort` or the host end of a `PseudoTerminalSerialPort`.
  public init(serialPort: any SerialPort, name: String, baudRate: Int? = nil) {
    self.name = name
    self.kind = .serialDevice
    self.baudRate = baudRate
    port = serialPort
    descriptor = .closed
  }

  /// An input reading an open file descriptor (a regular file or a pipe), which it then owns.
  public init(descriptor: consuming FileDescriptor, name: String, kind: Kind) {
    self.name = name
    self.kind = kind
    self.baudRate = nil
    port = nil
    self.descriptor = descriptor
  }

  /// Opens `path` by what it is: `-` is standard input; a character device is a serial device,
  /// opened with `openSerial(path, baudRate ?? 115200)` (the executable passes
  /// `TermiosSerialPort`; this library does not see the Linux HAL); a regular file or a FIFO is
  /// read as a stream. Every failure is a `MonitorError` naming the path and the remedy.
  public static func open(
    path: String, baudRate: Int? = nil,
    openSerial: (String, Int) throws(SerialError) -> any SerialPort
  ) throws(MonitorError) -> MonitorInput {
    if path == "-" { return try standardInput() }
    var information = stat()
    guard stat(path, &information) == 0 else {
      let code = Errno.current
      switch code {
      case .noSuchFileOrDirectory, Errno(rawValue: ENOTDIR):
        throw .inputMissing(path: path)
      case .permissionDenied, .operationNotPermitted:
        throw .permissionDenied(path: path, serialDevice: path.hasPrefix("/dev/"))
      default:
        throw .readFailed(input: path, errno: code)
      }
    }
    switch information.st_mode & mode_t(S_IFMT) {
    case mode_t(S_IFCHR):
      let speed = baudRate ?? 115_200
      do throws(SerialError) {
        return MonitorInput(
          serialPort: try openSerial(path, speed), name: path, baudRate: speed)
      } catch {
        switch error.kind {
        case .deviceMissing: throw .inputMissing(path: path)
        case .permissionDenied: throw .permissionDenied(path: path, serialDevice: true)
        case .notATerminal: throw .notATerminal(path: path)
        default: throw .serial(error)
        }
      }
    case mode_t(S_IFREG), mode_t(S_IFIFO):
      let kind: Kind =
        information.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG) ? .regularFile : .pipe
      // A FIFO opens without waiting for its writer (`mkfifo f; plumb-monitor f &` comes
      // first): a blocking open(2) would wait where SIGINT and SIGTERM cannot end the run. The
      // session waits instead: poll reports nothing until a writer has come and gone.
      let flags = kind == .pipe ? O_RDONLY | O_CLOEXEC | O_NONBLOCK : O_RDONLY | O_CLOEXEC
      do throws(SystemCallError) {
        let file = try FileDescriptor.open(path, flags: flags)
        return MonitorInput(descriptor: file, name: path, kind: kind)
      } catch {
        switch error.errno {
        case .permissionDenied, .operationNotPermitted:
          throw .permissionDenied(path: path, serialDevice: false)
        case .noSuchFileOrDirectory: throw .inputMissing(path: path)
        default: throw .readFailed(input: path, errno: error.errno)
        }
      }
    case mode_t(S_IFDIR):
      throw .isADirectory(path: path)
    case mode_t(S_IFBLK):
      throw .unsupportedInput(path: path, kind: "block device")
    default:
      throw .unsupportedInput(path: path, kind: "socket or other special file")
    }
  }

  /// Standard input, on its own descriptor (`fcntl(F_DUPFD_CLOEXEC)`, so closing it leaves
  /// the process's fd 0 alone and its flags are not changed).
  public static func standardInput() throws(MonitorError) -> MonitorInput {
    let name = "standard input"
    let number = fcntl(0, F_DUPFD_CLOEXEC, 0)
    guard number >= 0 else { throw .readFailed(input: name, errno: .current) }
    var information = stat()
    let isFile =
      fstat(number, &information) == 0
      && information.st_mode & mode_t(S_IFMT) == mode_t(S_IFREG)
    return MonitorInput(
      descriptor: FileDescriptor(taking: number), name: name, kind: isFile ? .regularFile : .pipe)
  }

  /// Whether the input is live (a device or a pipe whose writer is still there), so that
  /// "nothing yet" means wait rather than "done".
  public var isLive: Bool { kind != .regularFile }

  /// What one read found.
  public enum ReadResult: Hashable, Sendable {
    /// This many bytes are in the buffer.
    case bytes(Int)
    /// Nothing now; a live input may have more later.
    case nothingYet
    /// The input has ended (a file's end, a pipe whose writer closed).
    case endOfInput
  }

  /// Reads what is there now into `buffer`, without blocking. A serial device that went away
  /// throws `.disconnected`.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(MonitorError) -> ReadResult {
    if port != nil {
      let count: Int
      do throws(SerialError) {
        count = try port!.read(into: buffer)
      } catch {
        throw error.isDisconnect ? .disconnected(error) : .serial(error)
      }
      return count > 0 ? .bytes(count) : .nothingYet
    }
    do throws(SystemCallError) {
      if kind == .pipe {
        let events = try descriptor.poll(for: .input)
        if events.isEmpty { return .nothingYet }
      }
      guard let count = try descriptor.read(into: buffer) else { return .nothingYet }
      return count > 0 ? .bytes(count) : .endOfInput
    } catch {
      throw .readFailed(input: name, errno: error.errno)
    }
  }

  /// Writes as much of `bytes` as the device takes now (serial devices only).
  public func write(_ bytes: UnsafeRawBufferPointer) throws(MonitorError) -> Int {
    guard port != nil else { throw .cannotSend(input: name) }
    do throws(SerialError) {
      return try port!.write(bytes)
    } catch {
      throw error.isDisconnect ? .disconnected(error) : .serial(error)
    }
  }

  /// Opens a serial device again after a disconnect (same path and settings).
  public func reopen() throws(SerialError) {
    guard port != nil else { throw SerialError(.notOpen, device: name) }
    try port!.reopen()
  }

  /// Closes the device or file. Idempotent.
  public func close() {
    port?.close()
    descriptor.close()
  }

  /// The serial port's counters (zero for files).
  public var serialStatistics: SerialStatistics { port?.statistics ?? SerialStatistics() }
}
