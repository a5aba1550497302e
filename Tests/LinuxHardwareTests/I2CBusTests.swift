import Glibc
import HardwareAbstraction
import LinuxHardware
import POSIXSupport
import TestSupport
import Testing

/// Linux `Documentation/i2c/fault-codes.rst`, row by row, plus the two codes Plumb adds
/// (`EREMOTEIO`, which `i2c-bcm2835` and others return for a NACK; `EACCES`/`EPERM` at open).
@Suite struct I2CFaultCodeTests {
  typealias Row = (errno: CInt, operation: I2CError.Operation, kind: I2CError.Kind)

  static let rows: [Row] = [
    // ENXIO: "the address phase of a transfer didn't get an ACK".
    (ENXIO, .readRegisters, .notAcknowledged),
    (ENXIO, .writeRegister, .notAcknowledged),
    // EREMOTEIO: how many adapters (the Raspberry Pi's among them) report a NACK.
    (EREMOTEIO, .readRegisters, .notAcknowledged),
    (EREMOTEIO, .writeRegister, .notAcknowledged),
    // EAGAIN: "lose arbitration in master transmit mode".
    (EAGAIN, .readRegisters, .arbitrationLost),
    (EAGAIN, .writeRegister, .arbitrationLost),
    // EBUSY: "the bus was busy for longer than allowed"; from I2C_SLAVE: a driver owns it.
    (EBUSY, .readRegisters, .busBusy),
    (EBUSY, .writeRegister, .busBusy),
    (EBUSY, .selectAddress, .addressInUse),
    // ETIMEDOUT: "an operation took too much time".
    (ETIMEDOUT, .readRegisters, .timedOut),
    // EIO: "something went wrong when performing an I/O operation".
    (EIO, .readRegisters, .ioError),
    (EIO, .writeRegister, .ioError),
    // EPROTO: the slave does not conform to the protocol; EBADMSG: invalid PEC.
    (EPROTO, .readRegisters, .protocolViolation),
    (EBADMSG, .readRegisters, .protocolViolation),
    // EOPNOTSUPP: the adapter cannot do this transfer.
    (EOPNOTSUPP, .readRegisters, .notSupported),
    // ESHUTDOWN: the adapter is suspended. ENODEV at open: no adapter; in a transfer: nothing
    // at the address (the kernel's i2c-stub answers an empty address so — seen in the
    // kernel-level test — where most adapters NACK with ENXIO or EREMOTEIO).
    (ESHUTDOWN, .readRegisters, .adapterUnavailable),
    (ENODEV, .writeRegister, .notAcknowledged),
    (ENODEV, .readRegisters, .notAcknowledged),
    (ENODEV, .open, .adapterUnavailable),
    // EINVAL: "an invalid parameter has been detected before any I/O operation was started".
    (EINVAL, .readRegisters, .invalidArgument),
    (EINVAL, .selectAddress, .invalidArgument),
    // Opening: no node (I2C not enabled), or a node with no i2c-dev driver behind it.
    (ENOENT, .open, .busMissing),
    (ENXIO, .open, .busMissing),
    // Permissions: not in the i2c group.
    (EACCES, .open, .permissionDenied),
    (EPERM, .open, .permissionDenied),
    // Anything else keeps its errno under .other.
    (ENOMEM, .readRegisters, .other),
    (ENOTTY, .open, .other),
  ]

  @Test(arguments: 0..<rows.count)
  func errnoMapsToTheDocumentedFault(row index: Int) {
    let row = Self.rows[index]
    #expect(
      LinuxI2CBus.faultKind(for: Errno(rawValue: row.errno), during: row.operation) == row.kind,
      "\(Errno(rawValue: row.errno)) during \(row.operation)")
  }
}

@Suite struct LinuxI2CBusOpeningTests {
  @Test func aMissingBusNamesThePathAndSaysHowToEnableI2C() {
    #expect {
      try LinuxI2CBus(busNumber: 99)
    } throws: { error in
      guard let error = error as? I2CError else { return false }
      return error.kind == .busMissing && error.operation == .open
        && error.errno == .noSuchFileOrDirectory && error.bus == "/dev/i2c-99"
        && error.description.contains("/dev/i2c-99") && error.description.contains("raspi-config")
    }
  }

  @Test func aNegativeBusNumberIsRefused() {
    #expect(throws: I2CError(.invalidArgument, operation: .open, bus: "i2c--1")) {
      try LinuxI2CBus(busNumber: -1)
    }
  }

  @Test func aDeviceThatIsNotAnI2CBusIsRefusedAtOpen() {
    #expect {
      try LinuxI2CBus(path: "/dev/null")
    } throws: { error in
      guard let error = error as? I2CError else { return false }
      return error.operation == .open && error.errno == .notATerminal && error.bus == "/dev/null"
        // What to do: the board file's i2c.bus must name an adapter's node (it said "an
        // unexpected error from the I2C adapter").
        && error.description.contains("not an I2C adapter")
        && error.description.contains("ls /dev/i2c-*")
    }
    #expect {
      try LinuxI2CBus(path: "/tmp")
    } throws: { error in
      guard let error = error as? I2CError else { return false }
      return error.operation == .open && error.description.contains("not an I2C adapter")
    }
  }

  @Test func permissionDeniedSaysToJoinTheI2CGroup() {
    let error = I2CError(
      LinuxI2CBus.faultKind(for: .permissionDenied, during: .open), operation: .open,
      errno: .permissionDenied, bus: "/dev/i2c-1")
    #expect(error.kind == .permissionDenied)
    #expect(error.description.contains("/dev/i2c-1"))
    #expect(error.description.contains("usermod -aG i2c"))
  }

  /// Runs without the file-access override capabilities, so it tests the real EACCES path even
  /// as root.
  @Test
  func anUnreadableNodeIsPermissionDenied() throws {
    let directory = try TemporaryDirectory.make()
    let path = directory.path + "/i2c-locked"
    let made = Glibc.open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0o000)
    #expect(made >= 0)
    _ = Glibc.close(made)
    let outcome: Result<LinuxI2CBus, I2CError> = withoutFileAccessOverride {
      Result { () throws(I2CError) in try LinuxI2CBus(path: path) }
    }
    #expect(throws: I2CError.self) { try outcome.get() }
    if case .failure(let error) = outcome {
      #expect(error.kind == .permissionDenied && error.bus == path)
      #expect(error.description.contains("usermod -aG i2c"))
    }
    withExtendedLifetime(directory) {}
  }
}

@Suite struct I2CAdapterListTests {
  /// A sysfs-like tree: `root/i2c-N/name` for each adapter, plus noise.
  func fakeSysfs(_ adapters: [(String, String)]) throws -> TemporaryDirectory {
    let root = try TemporaryDirectory.make()
    for (node, name) in adapters {
      #expect(mkdir(root.path + "/" + node, 0o755) == 0)
      let file = Glibc.open(root.path + "/" + node + "/name", O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
      let line = Array((name + "\n").utf8)
      #expect(line.withUnsafeBytes { Glibc.write(file, $0.baseAddress, $0.count) } == line.count)
      _ = Glibc.close(file)
    }
    return root
  }

  @Test func adaptersAreListedByBusNumberWithTheirNames() throws {
    let root = try fakeSysfs([
      ("i2c-20", "fef04500.i2c"), ("i2c-1", "bcm2835 (i2c@7e804000)"),
      ("i2c-0", "SMBus stub driver"), ("subsystem", "not an adapter"),
    ])
    let adapters = LinuxI2CBus.adapters(sysfsRoot: root.path)
    #expect(
      adapters == [
        I2CAdapter(busNumber: 0, name: "SMBus stub driver"),
        I2CAdapter(busNumber: 1, name: "bcm2835 (i2c@7e804000)"),
        I2CAdapter(busNumber: 20, name: "fef04500.i2c"),
      ])
    #expect(adapters[1].devicePath == "/dev/i2c-1")
    #expect(LinuxI2CBus.busNumber(ofAdapterNamed: "SMBus stub driver", sysfsRoot: root.path) == 0)
    #expect(LinuxI2CBus.busNumber(ofAdapterNamed: "i2c-tiny-usb", sysfsRoot: root.path) == nil)
    #expect(LinuxI2CBus.adapters(sysfsRoot: root.path + "/missing").isEmpty)
  }
}

/// The bus over a fake adapter: the SMBus seam below `LinuxI2CBus`.
@Suite struct LinuxI2CBusTransferTests {
  // I2C_FUNC_* bits, restated from include/uapi/linux/i2c.h.
  static let smbusReadByteData: UInt = 0x0008_0000
  static let smbusWriteByteData: UInt = 0x0010_0000
  static let smbusReadI2CBlock: UInt = 0x0400_0000
  /// What `i2c-stub` reports (`i2cdetect -F`, notes/kernel-level-tests.md).
  static let i2cStubFunctionality: UInt = 0x0c7f_0000

  final class FakeAdapter {
    var functionality: UInt = LinuxI2CBusTransferTests.i2cStubFunctionality
    var registers = [UInt8](repeating: 0, count: 256)
    var selections: [UInt8] = []
    var log: [String] = []
    /// errno values the next calls fail with, in order (consumed one per call).
    var failures: [CInt] = []
    /// How many bytes a block read delivers less than asked.
    var shortBy = 0

    func fail() -> CInt? {
      guard !failures.isEmpty else { return nil }
      let code = failures.removeFirst()
      Glibc.errno = code
      return -code
    }

    var calls: SMBusCalls {
      SMBusCalls(
        functionality: { _, mask in
          mask = self.functionality
          return 0
        },
        selectAddress: { _, address in
          self.log.append("select \(address)")
          if let failure = self.fail() { return failure }
          self.selections.append(address)
          return 0
        },
        writeByteData: { _, register, value in
          self.log.append("write \(register)")
          if let failure = self.fail() { return failure }
          self.registers[Int(register)] = value
          return 0
        },
        readByteData: { _, register in
          self.log.append("readByte \(register)")
          if let failure = self.fail() { return failure }
          return CInt(self.registers[Int(register)])
        },
        readI2CBlockData: { _, register, length, values in
          self.log.append("readBlock \(register) \(length)")
          if let failure = self.fail() { return failure }
          let count = Int(length) - self.shortBy
          for index in 0..<count { values[index] = self.registers[Int(register) + index] }
          return CInt(count)
        })
    }
  }

  func bus(_ adapter: FakeAdapter, path: String = "/dev/i2c-1") throws -> LinuxI2CBus {
    try LinuxI2CBus(path: path, descriptor: .closed, calls: adapter.calls)
  }

  @Test func requiredFunctionalityIsI2CBlockReadAndByteWrite() {
    #expect(
      LinuxI2CBus.requiredFunctionality == Self.smbusReadI2CBlock | Self.smbusWriteByteData)
  }

  @Test func theI2CStubsFunctionalityIsEnough() throws {
    let bus = try bus(FakeAdapter())
    #expect(bus.functionality == Self.i2cStubFunctionality)
  }

  @Test func anAdapterWithoutI2CBlockReadsIsRefusedByName() {
    let adapter = FakeAdapter()
    adapter.functionality = Self.smbusReadByteData | Self.smbusWriteByteData
    #expect {
      try bus(adapter, path: "/dev/i2c-7")
    } throws: { error in
      guard let error = error as? I2CError else { return false }
      return error.kind == .notSupported && error.operation == .open
        && (error.bus ?? "").hasPrefix("/dev/i2c-7") && (error.bus ?? "").contains("0x180000")
        && error.description.contains("I2C_FUNC_SMBUS_READ_I2C_BLOCK")
    }
  }

  @Test func theAddressIsSelectedOnceAndAgainOnlyWhenItChanges() throws {
    let adapter = FakeAdapter()
    var bus = try bus(adapter)
    var sample = [UInt8](repeating: 0, count: 14)
    try bus.writeRegister(0x6B, value: 0x01, at: .mpu6050)
    _ = try bus.readRegister(0x75, at: .mpu6050)
    for _ in 0..<10 {
      try sample.withUnsafeMutableBytes {
        try bus.readRegisters(startingAt: 0x3B, into: $0, at: .mpu6050)
      }
    }
    #expect(adapter.selections == [0x68])
    _ = try bus.readRegister(0x75, at: .mpu6050Alternate)
    _ = try bus.readRegister(0x75, at: .mpu6050Alternate)
    try bus.writeRegister(0x6B, value: 0x00, at: .mpu6050)
    #expect(adapter.selections == [0x68, 0x69, 0x68])
  }

  @Test func aBurstIsOneI2CBlockReadThatFillsTheBuffer() throws {
    let adapter = FakeAdapter()
    for index in 0..<14 { adapter.registers[0x3B + index] = UInt8(0xA0 + index) }
    let bus = try bus(adapter)
    var sample = [UInt8](repeating: 0, count: 14)
    try sample.withUnsafeMutableBytes {
      try bus.readRegisters(startingAt: 0x3B, into: $0, at: .mpu6050)
    }
    #expect(sample == (0..<14).map { UInt8(0xA0 + $0) })
    #expect(adapter.log == ["select 104", "readBlock 59 14"])
  }

  @Test func aSingleByteUsesReadByteDataWhenTheAdapterHasIt() throws {
    let adapter = FakeAdapter()
    adapter.registers[0x75] = 0x68
    var bus = try bus(adapter)
    #expect(try bus.readRegister(0x75, at: .mpu6050) == 0x68)
    #expect(adapter.log.last == "readByte 117")

    let blockOnly = FakeAdapter()
    blockOnly.functionality = Self.smbusReadI2CBlock | Self.smbusWriteByteData
    blockOnly.registers[0x75] = 0x98
    var other = try self.bus(blockOnly)
    #expect(try other.readRegister(0x75, at: .mpu6050) == 0x98)
    #expect(blockOnly.log.last == "readBlock 117 1")
  }

  @Test func writesReachTheRegister() throws {
    let adapter = FakeAdapter()
    let bus = try bus(adapter)
    try bus.writeRegister(0x19, value: 9, at: .mpu6050)
    #expect(adapter.registers[0x19] == 9)
  }

  @Test func aShortBlockReadIsAnError() throws {
    let adapter = FakeAdapter()
    adapter.shortBy = 4
    let bus = try bus(adapter)
    var sample = [UInt8](repeating: 0, count: 14)
    #expect(
      throws: I2CError(
        .shortTransfer, operation: .readRegisters, address: .mpu6050, register: 0x3B,
        bus: "/dev/i2c-1")
    ) {
      try sample.withUnsafeMutableBytes {
        try bus.readRegisters(startingAt: 0x3B, into: $0, at: .mpu6050)
      }
    }
  }

  @Test func aNackCarriesTheErrnoAddressRegisterAndBus() throws {
    let adapter = FakeAdapter()
    var bus = try bus(adapter)
    _ = try bus.readRegister(0x75, at: .mpu6050)
    adapter.failures = [EREMOTEIO]
    var sample = [UInt8](repeating: 0, count: 14)
    #expect(
      throws: I2CError(
        .notAcknowledged, operation: .readRegisters, errno: .remoteIO, address: .mpu6050,
        register: 0x3B, bus: "/dev/i2c-1")
    ) {
      try sample.withUnsafeMutableBytes {
        try bus.readRegisters(startingAt: 0x3B, into: $0, at: .mpu6050)
      }
    }
    // A NACK is transient: the next transfer goes through on the cached address.
    try sample.withUnsafeMutableBytes {
      try bus.readRegisters(startingAt: 0x3B, into: $0, at: .mpu6050)
    }
    #expect(adapter.selections == [0x68])
  }

  @Test func busyDuringATransferIsABusyBus() throws {
    let adapter = FakeAdapter()
    var bus = try bus(adapter)
    _ = try bus.readRegister(0x75, at: .mpu6050)
    adapter.failures = [EBUSY]
    #expect(
      throws: I2CError(
        .busBusy, operation: .writeRegister, errno: .busy, address: .mpu6050, register: 0x6B,
        bus: "/dev/i2c-1")
    ) { try bus.writeRegister(0x6B, value: 0, at: .mpu6050) }
  }

  @Test func busyFromI2CSlaveIsAnAddressInUseAndIsRetriedNextTime() throws {
    let adapter = FakeAdapter()
    var bus = try bus(adapter)
    adapter.failures = [EBUSY]
    #expect(
      throws: I2CError(
        .addressInUse, operation: .selectAddress, errno: .busy, address: .mpu6050,
        register: 0x75, bus: "/dev/i2c-1")
    ) { _ = try bus.readRegister(0x75, at: .mpu6050) }
    _ = try bus.readRegister(0x75, at: .mpu6050)
    #expect(adapter.log.filter { $0.hasPrefix("select") }.count == 2)
    #expect(adapter.selections == [0x68])
  }

  @Test func interruptedTransfersAreRetried() throws {
    let adapter = FakeAdapter()
    adapter.registers[0x75] = 0x68
    var bus = try bus(adapter)
    adapter.failures = [EINTR, EINTR, EINTR]
    #expect(try bus.readRegister(0x75, at: .mpu6050) == 0x68)
    #expect(
      adapter.log == ["select 104", "select 104", "select 104", "select 104", "readByte 117"])
  }

  @Test(arguments: [0, 33, 64])
  func blockLengthsOutsideOneToThirtyTwoAreRefusedWithoutATransfer(length: Int) throws {
    let adapter = FakeAdapter()
    let bus = try bus(adapter)
    var buffer = [UInt8](repeating: 0, count: length)
    #expect(
      throws: I2CError(
        .invalidArgument, operation: .readRegisters, address: .mpu6050, register: 0x3B,
        bus: "/dev/i2c-1")
    ) {
      try buffer.withUnsafeMutableBytes {
        try bus.readRegisters(startingAt: 0x3B, into: $0, at: .mpu6050)
      }
    }
    #expect(adapter.log.isEmpty)
  }

  @Test func thirtyTwoBytesIsTheLongestBlock() throws {
    let adapter = FakeAdapter()
    let bus = try bus(adapter)
    var buffer = [UInt8](repeating: 0, count: 32)
    try buffer.withUnsafeMutableBytes {
      try bus.readRegisters(startingAt: 0x00, into: $0, at: .mpu6050)
    }
    #expect(adapter.log.last == "readBlock 0 32")
  }
}
