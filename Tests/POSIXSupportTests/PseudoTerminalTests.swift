import Glibc
import HardwareAbstraction
import POSIXSupport
import Testing

@Suite struct PseudoTerminalTests {
  /// Reads from a non-blocking descriptor until `count` bytes arrived, for a bounded number of
  /// 1 ms polls (a pseudo-terminal delivers through a kernel work queue, not instantly).
  func receive(_ count: Int, from descriptor: borrowing FileDescriptor) throws -> [UInt8] {
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 512)
    for _ in 0..<500 where received.count < count {
      let got = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) } ?? 0
      if got > 0 {
        received += chunk.prefix(got)
      } else {
        _ = try descriptor.poll(for: .input, timeoutMilliseconds: 1)
      }
    }
    return received
  }

  @Test func theTerminalSideIsARealTtyAtItsPath() throws {
    let pair = try PseudoTerminal.open()
    let path = pair.terminalPath
    let controller = pair.controller.rawValue
    let terminal = pair.terminal.rawValue
    #expect(path.hasPrefix("/dev/pts/"))
    #expect(isatty(terminal) == 1)
    #expect(access(path, F_OK) == 0)
    #expect(fcntl(controller, F_GETFL) & O_NONBLOCK != 0)
    #expect(fcntl(controller, F_GETFD) & FD_CLOEXEC != 0)
    #expect(fcntl(terminal, F_GETFD) & FD_CLOEXEC != 0)
  }

  /// A fresh pseudo-terminal echoes, maps CR to LF on input and LF to CR LF on output, and
  /// treats 0x11/0x13 as XON/XOFF; the pair must come in raw mode so bytes pass verbatim.
  @Test func bytesPassVerbatimInBothDirections() throws {
    let pair = try PseudoTerminal.open()
    try pair.terminal.setNonBlocking(true)
    let bytes: [UInt8] = [0x0D, 0x0A, 0x11, 0x13, 0x03, 0x04, 0x7F, 0x00, 0xFF]

    let toTerminal = try bytes.withUnsafeBytes { try pair.controller.write($0) }
    let atTerminal = try receive(bytes.count, from: pair.terminal)
    var byte: UInt8 = 0
    let echoed = try withUnsafeMutableBytes(of: &byte) { try pair.controller.read(into: $0) }
    #expect(toTerminal == bytes.count)
    #expect(atTerminal == bytes)
    #expect(echoed == nil, "nothing may be echoed back to the controller")

    let toController = try bytes.withUnsafeBytes { try pair.terminal.write($0) }
    let atController = try receive(bytes.count, from: pair.controller)
    #expect(toController == bytes.count)
    #expect(atController == bytes)
  }

  // (That the path disappears too is not checked: a parallel test may get the same
  // /dev/pts number at once.)
  @Test func closingTheControllerHangsUpTheTerminal() throws {
    var pair = try PseudoTerminal.open()
    pair.controller.close()
    let events = try pair.terminal.poll(for: .input)
    #expect(events.contains(.hangUp))
    var byte: UInt8 = 0x42
    #expect(throws: SystemCallError(.ioError)) {
      _ = try withUnsafeBytes(of: &byte) { try pair.terminal.write($0) }
    }
  }
}
