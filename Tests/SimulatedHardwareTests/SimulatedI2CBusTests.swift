import HardwareAbstraction
import SimulatedHardware
import Testing

/// Errno values restated from Linux's include/uapi/asm-generic/errno-base.h and errno.h.
enum LinuxErrno {
  static let eio: Int32 = 5
  static let enxio: Int32 = 6
  static let eagain: Int32 = 11
  static let ebusy: Int32 = 16
  static let einval: Int32 = 22
  static let eproto: Int32 = 71
  static let etimedout: Int32 = 110
  static let eremoteio: Int32 = 121
}

let primary = I2CAddress(rawValue: 0x68)!
let secondary = I2CAddress(rawValue: 0x69)!
let empty = I2CAddress(rawValue: 0x50)!

@Suite struct SimulatedI2CBusTests {
  @Test func routesTransfersByAddress() throws {
    let bus = SimulatedI2CBus(clock: ManualClock())
    let first = SimulatedRegisterFile([0x75: 0x68])
    let second = SimulatedRegisterFile([0x75: 0x98])
    bus.attach(first, at: primary)
    bus.attach(second, at: secondary)
    #expect(bus.occupiedAddresses == [primary, secondary])

    try bus.writeRegister(0x6B, value: 0x01, at: primary)
    try bus.writeRegister(0x6B, value: 0x80, at: secondary)
    #expect(first[0x6B] == 0x01)
    #expect(second[0x6B] == 0x80)
    #expect(try bus.readRegister(0x75, at: primary) == 0x68)
    #expect(try bus.readRegister(0x75, at: secondary) == 0x98)
    #expect(first.writeCount == 1 && first.readCount == 1)
    #expect(second.writeCount == 1 && second.readCount == 1)
  }

  @Test func blockReadsIncrementTheRegisterPointer() throws {
    let bus = SimulatedI2CBus(clock: ManualClock())
    bus.attach(SimulatedRegisterFile([0x3B: 1, 0x3C: 2, 0x3D: 3, 0xFF: 9, 0x00: 10]), at: primary)
    #expect(try bus.readRegisters(startingAt: 0x3B, count: 3, at: primary) == [1, 2, 3])
    #expect(try bus.readRegisters(startingAt: 0xFF, count: 2, at: primary) == [9, 10])
  }

  @Test func emptyAddressIsNotAcknowledgedWithENXIO() {
    let bus = SimulatedI2CBus(clock: ManualClock(), name: "sim-bus")
    bus.attach(SimulatedRegisterFile(), at: primary)
    let readError = thrownError { () throws(I2CError) in
      _ = try bus.readRegister(0x75, at: empty)
    }
    #expect(readError?.kind == .notAcknowledged)
    #expect(readError?.errno?.rawValue == LinuxErrno.enxio)
    #expect(readError?.address == empty)
    #expect(readError?.register == 0x75)
    #expect(readError?.operation == .readRegisters)
    #expect(readError?.bus == "sim-bus")
    let writeError = thrownError { () throws(I2CError) in
      try bus.writeRegister(0x6B, value: 0, at: empty)
    }
    #expect(writeError?.kind == .notAcknowledged)
    #expect(writeError?.operation == .writeRegister)
    #expect(bus.statistics.notAcknowledgedAddresses == 2)
    #expect(bus.statistics.transactions == 2)
    #expect(bus.statistics.failed == 2)
  }

  @Test func detachedDevicesStopAnsweringAndAttachReplaces() throws {
    let bus = SimulatedI2CBus(clock: ManualClock())
    let original = SimulatedRegisterFile([0x75: 0x68])
    let clone = SimulatedRegisterFile([0x75: 0x72])
    #expect(bus.attach(original, at: primary) == nil)
    #expect(bus.attach(clone, at: primary) === original)
    #expect(try bus.readRegister(0x75, at: primary) == 0x72)
    #expect(bus.detach(at: primary) === clone)
    #expect(bus.device(at: primary) == nil)
    let error = thrownError { () throws(I2CError) in _ = try bus.readRegister(0x75, at: primary) }
    #expect(error?.kind == .notAcknowledged)
  }

  @Test func blockLengthsOutsideOneToThirtyTwoAreRefused() throws {
    let bus = SimulatedI2CBus(clock: ManualClock())
    bus.attach(SimulatedRegisterFile(), at: primary)
    for count in [0, 33, 64] {
      let error = thrownError { () throws(I2CError) in
        _ = try bus.readRegisters(startingAt: 0x3B, count: count, at: primary)
      }
      #expect(error?.kind == .invalidArgument)
      #expect(error?.errno?.rawValue == LinuxErrno.einval)
    }
    #expect(bus.statistics.rejectedRequests == 3)
    #expect(bus.statistics.transactions == 0)
    #expect(try bus.readRegisters(startingAt: 0x00, count: 32, at: primary).count == 32)
    #expect(try bus.readRegisters(startingAt: 0x00, count: 1, at: primary).count == 1)
    #expect(bus.statistics.transactions == 2)
  }

  @Test func deviceErrorsPassThroughWithTheirPlace() {
    final class ResettingChip: SimulatedI2CDevice {
      func writeRegister(_ register: UInt8, value: UInt8) throws(I2CError) {
        throw I2CError(.notAcknowledged, operation: .writeRegister, errno: .remoteIO)
      }
      func readRegisters(startingAt register: UInt8, into buffer: UnsafeMutableRawBufferPointer)
        throws(I2CError)
      {
        throw I2CError(.notAcknowledged, operation: .readRegisters, errno: .remoteIO)
      }
    }
    let bus = SimulatedI2CBus(clock: ManualClock())
    bus.attach(ResettingChip(), at: primary)
    let error = thrownError { () throws(I2CError) in
      try bus.writeRegister(0x6B, value: 0x80, at: primary)
    }
    #expect(error?.kind == .notAcknowledged)
    #expect(error?.errno?.rawValue == LinuxErrno.eremoteio)
    #expect(error?.address == primary)
    #expect(error?.register == 0x6B)
    #expect(error?.bus == "simulated")
    #expect(bus.statistics.deviceErrors == 1)
  }

  @Test func countersAccountForEveryTransaction() throws {
    let bus = SimulatedI2CBus(
      clock: ManualClock(),
      faultPlan: I2CFaultPlan([.burst(.ioError, count: 2, fromTransaction: 3)]))
    bus.attach(SimulatedRegisterFile(), at: primary)
    var failures = 0
    for index in 0..<10 {
      let address = index == 7 ? empty : primary
      do throws(I2CError) {
        if index.isMultiple(of: 2) {
          try bus.writeRegister(0x10, value: UInt8(index), at: address)
        } else {
          _ = try bus.readRegister(0x10, at: address)
        }
      } catch {
        failures += 1
      }
    }
    let statistics = bus.statistics
    #expect(statistics.transactions == 10)
    #expect(statistics.writes == 5 && statistics.reads == 5)
    #expect(statistics.injectedFaults.ioError == 2)
    #expect(statistics.notAcknowledgedAddresses == 1)
    #expect(statistics.completed == 7)
    #expect(statistics.failed == UInt64(failures))
    #expect(statistics.completed + statistics.failed == statistics.transactions)
  }

  /// SMBus frames: a write byte data is 29 bit times, an I2C block read of n bytes 30 + 9n.
  @Test func wireTimingMovesTheClockByTheFrameLength() throws {
    let clock = ManualClock(start: ms(1000))
    let bus = SimulatedI2CBus(clock: clock, wireTiming: .clockRate(hertz: 400_000))
    bus.attach(SimulatedRegisterFile(), at: primary)
    _ = try bus.readRegisters(startingAt: 0x3B, count: 14, at: primary)
    #expect(clock.now() == ms(1000).advanced(byNanoseconds: 390_000))  // 156 bits at 400 kHz
    bus.wireTiming = .clockRate(hertz: 100_000)
    try bus.writeRegister(0x6B, value: 0, at: primary)
    #expect(clock.now() == ms(1000).advanced(byNanoseconds: 390_000 + 290_000))
    bus.wireTiming = .instantaneous
    try bus.writeRegister(0x6B, value: 0, at: primary)
    #expect(clock.now() == ms(1000).advanced(byNanoseconds: 680_000))
  }
}
