import Glibc
import HardwareAbstraction
import LinuxHardware
import SimulatedHardware
import TestSupport
import Testing

@Suite struct SerialFaultCodeTests {
  typealias Stage = TermiosSerialPort.Stage
  static let rows: [(CInt, Stage, SerialError.Kind)] = [
    (ENOENT, .open, .deviceMissing),
    (ENODEV, .open, .deviceMissing),
    (ENXIO, .open, .deviceMissing),
    (EACCES, .open, .permissionDenied),
    (EPERM, .open, .permissionDenied),
    (EBUSY, .open, .busy),
    (EBUSY, .configure, .busy),
    (ENOTTY, .open, .notATerminal),
    (ENOTTY, .configure, .notATerminal),
    (EINVAL, .configure, .unsupportedBaudRate),
    (EIO, .open, .disconnected),
    (EIO, .transfer, .disconnected),
    (ENXIO, .transfer, .disconnected),
    (ENODEV, .transfer, .disconnected),
    (EBADF, .transfer, .notOpen),
    (ENOMEM, .transfer, .ioError),
    (EINVAL, .transfer, .ioError),
  ]

  @Test(arguments: 0..<rows.count)
  func errnoMapsToTheFault(row index: Int) {
    let (code, stage, kind) = Self.rows[index]
    #expect(
      TermiosSerialPort.faultKind(for: Errno(rawValue: code), during: stage) == kind,
      "\(Errno(rawValue: code)) during \(stage)")
  }

  @Test func permissionDeniedSaysToJoinTheDialoutGroup() {
    let error = SerialError(
      TermiosSerialPort.faultKind(for: .permissionDenied, during: .open),
      errno: .permissionDenied, device: "/dev/ttyUSB0")
    #expect(error.description.contains("/dev/ttyUSB0"))
    #expect(error.description.contains("dialout"))
  }
}

@Suite struct TermiosSerialPortOpeningTests {
  @Test func aMissingDeviceIsNamed() {
    #expect {
      try TermiosSerialPort(path: "/dev/ttyPLUMB-missing")
    } throws: { error in
      guard let error = error as? SerialError else { return false }
      return error.kind == .deviceMissing && error.device == "/dev/ttyPLUMB-missing"
        && error.errno == .noSuchFileOrDirectory
        && error.description.contains("/dev/ttyPLUMB-missing")
    }
  }

  @Test func aDeviceThatIsNotATerminalIsRefused() {
    #expect(
      throws: SerialError(.notATerminal, errno: .notATerminal, device: "/dev/null")
    ) { try TermiosSerialPort(path: "/dev/null") }
  }

  @Test func aRegularFileIsNotATerminal() throws {
    let directory = try TemporaryDirectory.make()
    let path = directory.path + "/frames.bin"
    let made = Glibc.open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
    #expect(made >= 0)
    _ = Glibc.close(made)
    #expect(throws: SerialError(.notATerminal, errno: .notATerminal, device: path)) {
      try TermiosSerialPort(path: path)
    }
  }

  /// Runs without the file-access override capabilities, so it tests the real EACCES path even
  /// as root.
  @Test
  func anUnreadableDeviceIsPermissionDenied() throws {
    let directory = try TemporaryDirectory.make()
    let path = directory.path + "/ttyLocked"
    let made = Glibc.open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o000)
    #expect(made >= 0)
    _ = Glibc.close(made)
    let outcome: Result<TermiosSerialPort, SerialError> = withoutFileAccessOverride {
      Result { () throws(SerialError) in try TermiosSerialPort(path: path) }
    }
    #expect(throws: SerialError(.permissionDenied, errno: .permissionDenied, device: path)) {
      try outcome.get()
    }
  }

  @Test(arguments: [0, 300, 12_345, 128_000, 1_000_000, 4_000_000, -115_200])
  func unsupportedBaudRatesAreRefusedBeforeOpening(rate: Int) {
    // The path does not exist: the rate is checked first.
    #expect(throws: SerialError(.unsupportedBaudRate, device: "/dev/ttyPLUMB-missing")) {
      try TermiosSerialPort(path: "/dev/ttyPLUMB-missing", baudRate: rate)
    }
  }

  /// Restated from Linux include/uapi/asm-generic/termbits.h (octal).
  @Test func baudRatesMapToTheTermiosConstants() {
    let table: [(Int, speed_t)] = [
      (9600, 0o000015), (19_200, 0o000016), (38_400, 0o000017), (57_600, 0o010001),
      (115_200, 0o010002), (230_400, 0o010003), (460_800, 0o010004), (921_600, 0o010007),
    ]
    #expect(TermiosSerialPort.supportedBaudRates == table.map(\.0))
    for (rate, constant) in table {
      #expect(TermiosSerialPort.speed(forBaudRate: rate) == constant, "\(rate)")
      #expect(TermiosSerialPort.baudRate(forSpeed: constant) == rate)
    }
    #expect(TermiosSerialPort.speed(forBaudRate: 1_000_000) == nil)
  }
}

/// The termios port on the terminal side of a real pseudo-terminal, with the simulated host on
/// the other side.
@Suite struct TermiosSerialPortOverPseudoTerminalTests {
  static let everyByteValue = (0...255).map { UInt8($0) }
  /// The bytes a cooked terminal would alter: NUL, LF, CR, XON, XOFF, DEL, 0xFF, Ctrl-C/D/Z.
  static let awkwardBytes: [UInt8] = [0x00, 0x0A, 0x0D, 0x11, 0x13, 0x7F, 0xFF, 0x03, 0x04, 0x1A]

  @Test func everyByteArrivesIntactAt115200() throws {
    var host = try PseudoTerminalSerialPort()
    makeCooked(host.terminalPath)
    var board = try TermiosSerialPort(path: host.terminalPath, baudRate: 115_200)
    let message = Self.awkwardBytes + Self.everyByteValue + Self.everyByteValue.reversed()

    try send(message, to: &board)
    #expect(try receive(message.count, from: &host) == message)

    try send(message, to: &host)
    #expect(try receive(message.count, from: &board) == message)

    #expect(board.statistics.bytesWritten == UInt64(message.count))
    #expect(board.statistics.bytesRead == UInt64(message.count))
    #expect(board.statistics.bytesRefused == 0)
  }

  @Test(arguments: [9600, 57_600, 115_200, 230_400, 921_600])
  func theConfiguredRateIsReadBack(rate: Int) throws {
    let host = try PseudoTerminalSerialPort()
    makeCooked(host.terminalPath)
    let board = try TermiosSerialPort(path: host.terminalPath, baudRate: rate)
    #expect(try board.currentBaudRate() == rate)
    // And the terminal itself says so to anyone who asks.
    let other = Glibc.open(host.terminalPath, O_RDWR | O_NOCTTY | O_CLOEXEC)
    defer { _ = Glibc.close(other) }
    var settings = termios()
    #expect(tcgetattr(other, &settings) == 0)
    #expect(cfgetospeed(&settings) == TermiosSerialPort.speed(forBaudRate: rate))
    // Raw 8N1, no flow control, no output processing, no echo, VMIN = VTIME = 0.
    #expect(settings.c_cflag & tcflag_t(CSIZE) == tcflag_t(CS8))
    #expect(settings.c_cflag & tcflag_t(PARENB | CSTOPB) == 0)
    #expect(settings.c_cflag & tcflag_t(CRTSCTS) == 0)
    #expect(settings.c_cflag & tcflag_t(CLOCAL | CREAD) == tcflag_t(CLOCAL | CREAD))
    #expect(settings.c_oflag & tcflag_t(OPOST) == 0)
    #expect(settings.c_lflag & tcflag_t(ICANON | ECHO | ISIG) == 0)
    #expect(settings.c_iflag & tcflag_t(IXON | ICRNL | ISTRIP) == 0)
    withUnsafeBytes(of: settings.c_cc) { characters in
      #expect(characters[Int(VMIN)] == 0)
      #expect(characters[Int(VTIME)] == 0)
    }
  }

  /// The host stops reading: writes fill the buffer, then return short and 0, and never block;
  /// every offered byte is either written or counted as refused.
  @Test func aStalledReaderNeverBlocksAndRefusalsAreCountedExactly() throws {
    var host = try PseudoTerminalSerialPort()
    let board = try TermiosSerialPort(path: host.terminalPath)
    let pattern = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
    var offered = 0
    var accepted = 0
    var shortWrites = 0
    var zeroWrites = 0
    var position = 0
    while zeroWrites < 20 && position + 1000 <= pattern.count {
      let chunk = pattern[position..<(position + 1000)]
      let count = try chunk.withUnsafeBytes { try board.write($0) }
      #expect(count >= 0 && count <= 1000)
      offered += 1000
      accepted += count
      position += count
      if count < 1000 { shortWrites += 1 }
      if count == 0 { zeroWrites += 1 }
    }
    #expect(zeroWrites == 20, "the pseudo-terminal's buffer never filled up")
    #expect(board.statistics.bytesWritten == UInt64(accepted))
    #expect(board.statistics.bytesRefused == UInt64(offered - accepted))
    #expect(board.statistics.shortWrites == UInt64(shortWrites))
    #expect(accepted > 0)

    // What was accepted arrives, in order, and nothing else.
    #expect(try receive(accepted, from: &host) == Array(pattern.prefix(accepted)))
    var extra = [UInt8](repeating: 0, count: 16)
    #expect(try extra.withUnsafeMutableBytes { try host.read(into: $0) } == 0)
  }

  @Test func theOtherSideHangingUpIsADisconnect() throws {
    let host = try PseudoTerminalSerialPort()
    let board = try TermiosSerialPort(path: host.terminalPath)
    var buffer = [UInt8](repeating: 0, count: 16)
    #expect(try buffer.withUnsafeMutableBytes { try board.read(into: $0) } == 0)
    host.hangUp()
    #expect {
      try buffer.withUnsafeMutableBytes { try board.read(into: $0) }
    } throws: { error in
      guard let error = error as? SerialError else { return false }
      return error.kind == .disconnected && error.isDisconnect && error.device == host.terminalPath
    }
    #expect(board.statistics.disconnects == 1)
    #expect(!board.isOpen)
    // Afterwards the port is closed, not disconnected again (the count stays one).
    #expect(throws: SerialError(.notOpen, device: host.terminalPath)) {
      try buffer.withUnsafeMutableBytes { try board.read(into: $0) }
    }
    #expect(board.statistics.disconnects == 1)
  }

  @Test func writingAfterTheOtherSideHungUpIsADisconnect() throws {
    let host = try PseudoTerminalSerialPort()
    var board = try TermiosSerialPort(path: host.terminalPath)
    #expect(try board.write([0x01, 0x02]) == 2)
    host.hangUp()
    #expect(throws: SerialError(.disconnected, errno: .ioError, device: host.terminalPath)) {
      try board.write([0x03])
    }
    #expect(board.statistics.disconnects == 1)
    #expect(board.statistics.bytesWritten == 2)
  }

  /// A USB adapter unplugged and plugged back: the stable path (like /dev/serial/by-id/…)
  /// disappears, then points at a new tty; `reopen()` follows it with the same settings.
  @Test func reopenAfterTheDeviceComesBack() throws {
    let directory = try TemporaryDirectory.make()
    let link = directory.path + "/usb-plumb-if00"
    var host = try PseudoTerminalSerialPort(linkPath: link)
    var board = try TermiosSerialPort(path: link, baudRate: 230_400)
    try send([0x42], to: &board)
    #expect(try receive(1, from: &host) == [0x42])

    host.hangUp()
    #expect(throws: SerialError(.disconnected, errno: .ioError, device: link)) {
      try board.write([0x43])
    }
    board.close()
    board.close()  // idempotent
    #expect(throws: SerialError(.deviceMissing, errno: .noSuchFileOrDirectory, device: link)) {
      try board.reopen()
    }
    #expect(!board.isOpen)

    try host.reopen()
    try board.reopen()
    #expect(board.isOpen)
    #expect(try board.currentBaudRate() == 230_400)
    try send(Self.awkwardBytes, to: &board)
    #expect(try receive(Self.awkwardBytes.count, from: &host) == Self.awkwardBytes)
    #expect(board.statistics.reopens == 1)
    #expect(board.statistics.disconnects == 1)
    #expect(board.statistics.bytesWritten == UInt64(1 + Self.awkwardBytes.count))
  }

  @Test func aClosedPortSaysSo() throws {
    let host = try PseudoTerminalSerialPort()
    var board = try TermiosSerialPort(path: host.terminalPath)
    board.close()
    #expect(!board.isOpen)
    #expect(throws: SerialError(.notOpen, device: host.terminalPath)) { try board.write([1]) }
    #expect(throws: SerialError(.notOpen, device: host.terminalPath)) {
      try board.currentBaudRate()
    }
  }

  @Test func anExclusivePortLocksTheTerminal() throws {
    let host = try PseudoTerminalSerialPort()
    let board = try TermiosSerialPort(path: host.terminalPath, exclusive: true)
    #expect(board.exclusive)
    // TIOCGEXCL, restated from include/uapi/asm-generic/ioctls.h: _IOR('T', 0x40, int).
    let getExclusive: UInt = 0x8004_5440
    let other = Glibc.open(host.terminalPath, O_RDWR | O_NOCTTY | O_CLOEXEC)
    if getuid() == 0 {
      // Root may open a locked terminal; ask it whether the lock is set.
      defer { _ = Glibc.close(other) }
      var locked: CInt = 0
      #expect(ioctl(other, getExclusive, &locked) == 0)
      #expect(locked == 1)
    } else {
      #expect(other == -1 && Errno.current == .busy)
      #expect(throws: SerialError(.busy, errno: .busy, device: host.terminalPath)) {
        try TermiosSerialPort(path: host.terminalPath)
      }
    }
  }
}
