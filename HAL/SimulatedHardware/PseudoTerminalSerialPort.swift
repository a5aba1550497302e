import Glibc
import HardwareAbstraction
import POSIXSupport

/// The host end of a simulated serial cable: a `SerialPort` on the controller ("master") side of
/// a pseudo-terminal pair, whose terminal side (`terminalPath`, a real tty) is the board's end.
///
/// The code under test opens `terminalPath` as it would a UART (with `TermiosSerialPort`, or
/// plainly) and writes frames; the test or tool reads them here, and writes host commands back.
/// Because the terminal side is a real tty, termios settings, non-blocking writes into a full
/// buffer, and hang-ups behave as on a board.
///
/// The port keeps its own descriptor on the terminal side open, like a cable that stays plugged
/// in whoever has the device open: bytes written here wait in the terminal's input queue until
/// the code under test reads them, and the code under test may close and reopen the path.
/// `hangUp()` (or `close()`) pulls the cable: the terminal side is hung up (its readers see end
/// of file and `POLLHUP`, its writers `EIO`) and its path disappears. `reopen()` plugs a new
/// cable in: a new pair, whose `terminalPath` differs. With `linkPath`, the port keeps a
/// symbolic link there pointing at the current terminal, removed on hang-up and re-pointed on
/// reopen, the way udev maintains `/dev/serial/by-id/…` for a USB adapter that comes and goes;
/// code under test that opens the link can reopen the same path after a reconnect.
///
/// A class because it owns descriptors; deliberately not `Sendable` (one thread, like the loop).
public final class PseudoTerminalSerialPort: SerialPort {
  /// The terminal ("slave") side's device path, e.g. `/dev/pts/4`, for the code under test.
  /// Changes on `reopen()`.
  public private(set) var terminalPath: String
  /// The stable symbolic link to the terminal side, if one was asked for.
  public let linkPath: String?
  public private(set) var statistics = SerialStatistics()

  private var controller: FileDescriptor
  private var heldTerminal: FileDescriptor

  /// Creates a pseudo-terminal pair (raw mode, so bytes pass verbatim), and the link at
  /// `linkPath` when given (its directory must exist; an existing link there is replaced).
  public init(linkPath: String? = nil) throws(SerialError) {
    self.linkPath = linkPath
    var pair = try Self.openPair(linkPath: linkPath)
    self.terminalPath = pair.terminalPath
    self.controller = pair.controller.take()
    self.heldTerminal = pair.terminal.take()
  }

  deinit {
    removeLink()
  }

  /// The path the code under test should open: `linkPath` when there is one, else
  /// `terminalPath`.
  public var devicePath: String { linkPath ?? terminalPath }

  public var isOpen: Bool { controller.isOpen }

  public func write(_ bytes: UnsafeRawBufferPointer) throws(SerialError) -> Int {
    guard controller.isOpen else { throw SerialError(.notOpen, device: terminalPath) }
    if bytes.isEmpty { return 0 }
    let accepted: Int
    do throws(SystemCallError) {
      accepted = try controller.write(bytes) ?? 0
    } catch {
      throw failure(error.errno)
    }
    statistics.bytesWritten += UInt64(accepted)
    if accepted < bytes.count {
      statistics.bytesRefused += UInt64(bytes.count - accepted)
      statistics.shortWrites += 1
    }
    return accepted
  }

  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SerialError) -> Int {
    guard controller.isOpen else { throw SerialError(.notOpen, device: terminalPath) }
    if buffer.isEmpty { return 0 }
    let received: Int
    do throws(SystemCallError) {
      received = try controller.read(into: buffer) ?? 0
    } catch {
      throw failure(error.errno)
    }
    statistics.bytesRead += UInt64(received)
    return received
  }

  /// Pulls the cable: closes both ends held here and removes the link, so the code under test
  /// sees its terminal hung up. Idempotent.
  public func hangUp() {
    removeLink()
    heldTerminal.close()
    controller.close()
  }

  /// Same as `hangUp()`: closing the host end of a pseudo-terminal hangs up the other end.
  public func close() {
    hangUp()
  }

  /// Plugs a new cable in: a new pair (a new `terminalPath`), and the link re-pointed at it.
  public func reopen() throws(SerialError) {
    hangUp()
    var pair = try Self.openPair(linkPath: linkPath)
    terminalPath = pair.terminalPath
    controller = pair.controller.take()
    heldTerminal = pair.terminal.take()
    statistics.reopens += 1
  }

  private func failure(_ errno: Errno) -> SerialError {
    // EIO on the controller: no terminal side is open any more.
    if errno == .ioError {
      statistics.disconnects += 1
      return SerialError(.disconnected, errno: errno, device: terminalPath)
    }
    return SerialError(.ioError, errno: errno, device: terminalPath)
  }

  private func removeLink() {
    if let linkPath { _ = unlink(linkPath) }
  }

  private static func openPair(linkPath: String?) throws(SerialError) -> PseudoTerminal {
    let pair: PseudoTerminal
    do throws(SystemCallError) {
      pair = try PseudoTerminal.open()
    } catch {
      throw SerialError(.ioError, errno: error.errno, device: "pseudo-terminal")
    }
    if let linkPath {
      _ = unlink(linkPath)
      if symlink(pair.terminalPath, linkPath) != 0 {
        let code = Errno.current
        let kind: SerialError.Kind =
          switch code {
          case .noSuchFileOrDirectory: .deviceMissing
          case .permissionDenied, .operationNotPermitted: .permissionDenied
          default: .ioError
          }
        throw SerialError(kind, errno: code, device: linkPath)
      }
    }
    return pair
  }
}
