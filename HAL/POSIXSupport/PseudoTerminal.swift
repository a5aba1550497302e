import Glibc
import HardwareAbstraction

/// A pseudo-terminal pair from `openpty(3)`: two ends of a virtual serial cable.
///
/// The *terminal* side (pty(7) calls it the slave) is a real tty device at `terminalPath`
/// (`/dev/pts/N`): code that drives a serial port opens it and applies termios settings exactly
/// as on a UART. The *controller* side (pty(7): the master) is what a terminal emulator or, here,
/// the simulated host end of the cable holds: bytes written to one side are read on the other.
///
/// The pair is created ready to carry bytes verbatim: the terminal side is put in raw mode
/// (`cfmakeraw`: no echo, no CR/LF translation, no XON/XOFF), because a fresh pty echoes and
/// translates like an interactive terminal. The controller side is non-blocking. Both ends are
/// close-on-exec. When the controller closes, the terminal side is hung up: its readers get end
/// of file and `POLLHUP`, its writers `EIO`, and `terminalPath` disappears.
public struct PseudoTerminal: ~Copyable {
  /// The controller ("master") end, non-blocking.
  public var controller: FileDescriptor
  /// The terminal ("slave") end, open and blocking, in raw mode.
  public var terminal: FileDescriptor
  /// The terminal end's device path, e.g. `/dev/pts/3`.
  public let terminalPath: String

  /// Creates a pair (`openpty`, `ttyname_r`, `cfmakeraw`, `tcsetattr`).
  public static func open() throws(SystemCallError) -> PseudoTerminal {
    var controllerNumber: CInt = -1
    var terminalNumber: CInt = -1
    _ = try retryingOnInterrupt { openpty(&controllerNumber, &terminalNumber, nil, nil, nil) }
    let controller = FileDescriptor(taking: controllerNumber)
    let terminal = FileDescriptor(taking: terminalNumber)

    var name = [CChar](repeating: 0, count: 128)
    let nameResult = ttyname_r(terminal.rawValue, &name, name.count)
    if nameResult != 0 { throw SystemCallError(Errno(rawValue: nameResult)) }
    let path = String(
      decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)

    var settings = termios()
    _ = try retryingOnInterrupt { tcgetattr(terminal.rawValue, &settings) }
    cfmakeraw(&settings)
    _ = try retryingOnInterrupt { tcsetattr(terminal.rawValue, TCSANOW, &settings) }

    try controller.setNonBlocking(true)
    try controller.setCloseOnExec()
    try terminal.setCloseOnExec()
    return PseudoTerminal(controller: controller, terminal: terminal, terminalPath: path)
  }
}
