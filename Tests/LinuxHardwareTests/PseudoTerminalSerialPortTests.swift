import Glibc
import HardwareAbstraction
import SimulatedHardware
import Testing

/// The simulated host end of a serial cable (SimulatedHardware), against plain descriptors on
/// the board's end: no termios layer in between.
@Suite struct PseudoTerminalSerialPortTests {
  /// The target of the symbolic link at `path`, or `nil`.
  func linkTarget(_ path: String) -> String? {
    var buffer = [CChar](repeating: 0, count: 256)
    let count = readlink(path, &buffer, buffer.count)
    guard count > 0 else { return nil }
    return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  @Test func theBoardsEndIsARawTerminal() throws {
    var host = try PseudoTerminalSerialPort()
    #expect(host.devicePath == host.terminalPath)
    let board = Glibc.open(host.terminalPath, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
    #expect(board >= 0)
    defer { _ = Glibc.close(board) }
    #expect(isatty(board) == 1)

    // Written plainly on the board's end, with no termios set up by the writer: no CR/LF
    // translation on the way.
    let line: [UInt8] = [0x24, 0x49, 0x4D, 0x55, 0x0D, 0x0A, 0x00, 0xFF]
    #expect(line.withUnsafeBytes { Glibc.write(board, $0.baseAddress, $0.count) } == line.count)
    #expect(try receive(line.count, from: &host) == line)
    #expect(host.statistics.bytesRead == UInt64(line.count))
  }

  @Test func hangingUpRemovesTheDeviceAndReopeningPlugsInANewOne() throws {
    let directory = try TemporaryDirectory.make()
    let link = directory.path + "/ttyPLUMB"
    var host = try PseudoTerminalSerialPort(linkPath: link)
    let first = host.terminalPath
    #expect(host.devicePath == link)
    #expect(linkTarget(link) == first)

    let board = Glibc.open(link, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
    #expect(board >= 0)
    defer { _ = Glibc.close(board) }
    host.hangUp()
    #expect(!host.isOpen)
    #expect(linkTarget(link) == nil)
    var pending = pollfd(fd: board, events: Int16(POLLIN), revents: 0)
    #expect(poll(&pending, 1, 0) == 1)
    #expect(pending.revents & Int16(POLLHUP) != 0)
    #expect(throws: SerialError(.notOpen, device: first)) { try host.write([0x01]) }

    try host.reopen()
    #expect(host.isOpen)
    #expect(linkTarget(link) == host.terminalPath)
    #expect(access(host.terminalPath, F_OK) == 0)
    #expect(host.statistics.reopens == 1)
    host.close()
    host.close()
  }

  /// The board stops reading: the host's writes are refused without blocking, and counted.
  @Test func aStalledBoardNeverBlocksTheHost() throws {
    var host = try PseudoTerminalSerialPort()
    let chunk = [UInt8](repeating: 0x5A, count: 1000)
    var accepted = 0
    var zeroWrites = 0
    var calls = 0
    while zeroWrites < 5 && calls < 10_000 {
      let count = try host.write(chunk)
      accepted += count
      calls += 1
      if count == 0 { zeroWrites += 1 }
    }
    #expect(zeroWrites == 5)
    #expect(host.statistics.bytesWritten == UInt64(accepted))
    #expect(host.statistics.bytesWritten + host.statistics.bytesRefused == UInt64(calls * 1000))
  }
}
