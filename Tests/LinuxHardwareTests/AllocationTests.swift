import Glibc
import HardwareAbstraction
import LinuxHardware
import POSIXSupport
import SimulatedHardware
import TestSupport
import Testing

// The hot paths of the Linux HAL must not allocate (DESIGN.md: nothing in the loop allocates
// per sample). These tests count malloc-family calls on their own thread through the interposer
// in Tests/TestSupportC, which is linked into the test executable.
//
// Only success and "nothing now" paths are measured: Swift Testing records a backtrace for every
// thrown error, which allocates inside the test process (typed throws themselves do not).

/// Who owns malloc decides which tests run: the counting interposer in every ordinary build (or
/// the allocation tests would be skipped unseen), a sanitizer's runtime in the builds
/// `make test-asan` and `make test-tsan` mark PLUMB_SANITIZED (or those would check nothing).
@Suite struct MallocOwnerTests {
  @Test func theInterposerOrTheSanitizerIsMalloc() {
    #if PLUMB_SANITIZED
      #expect(!AllocationCounter.isAvailable, "PLUMB_SANITIZED, but no sanitizer owns malloc")
    #else
      #expect(AllocationCounter.isAvailable, "a sanitizer owns malloc in an ordinary build")
      #expect(AllocationCounter.isActive)
    #endif
  }
}

@Suite(.countsAllocations) struct AllocationTests {
  /// The counter itself works: without it every test below would pass vacuously.
  @Test func theCounterSeesAnAllocation() {
    #expect(AllocationCounter.isActive)
    let allocations = AllocationCounter.count {
      let array = [Int](repeating: 7, count: 100)
      #expect(array.count == 100)
    }
    #expect(allocations >= 1)
  }

  @Test func serialWritesAndReadsDoNotAllocate() throws {
    let host = try PseudoTerminalSerialPort()
    let board = try TermiosSerialPort(path: host.terminalPath)
    let frame = [UInt8](repeating: 0x7E, count: 64)
    let command: [UInt8] = [0x01, 0x02, 0x03, 0x04]
    var inbox = [UInt8](repeating: 0, count: 256)
    var allocations: UInt64 = 0
    try frame.withUnsafeBytes { frame in
      try command.withUnsafeBytes { command in
        try inbox.withUnsafeMutableBytes { inbox in
          func exchange() throws {
            _ = try board.write(frame)  // accepted
            _ = try board.read(into: inbox)  // nothing: read 0, then poll
            _ = try host.read(into: inbox)  // the frame
            _ = try host.read(into: inbox)  // nothing: EAGAIN
            _ = try host.write(command)
            _ = try board.read(into: inbox)
          }
          // Every path once first: the runtime instantiates some metadata lazily, once per
          // process (e.g. PollEvents' witness tables), which is not a per-call cost.
          for _ in 0..<10 { try exchange() }
          allocations = try AllocationCounter.count {
            for _ in 0..<1000 { try exchange() }
          }
        }
      }
    }
    #expect(allocations == 0)
  }

  @Test func aStalledSerialWriteDoesNotAllocate() throws {
    let host = try PseudoTerminalSerialPort()
    let board = try TermiosSerialPort(path: host.terminalPath)
    let frame = [UInt8](repeating: 0x7E, count: 1000)
    var allocations: UInt64 = 0
    try frame.withUnsafeBytes { frame in
      while try board.write(frame) > 0 {}
      _ = try board.write(frame)
      allocations = try AllocationCounter.count {
        for _ in 0..<1000 { _ = try board.write(frame) }
      }
    }
    #expect(allocations == 0)
    #expect(board.statistics.bytesRefused > 0)
  }

  @Test func i2cTransfersDoNotAllocate() throws {
    let calls = SMBusCalls(
      functionality: { _, mask in
        mask = 0x0c7f_0000
        return 0
      },
      selectAddress: { _, _ in 0 },
      writeByteData: { _, _, _ in 0 },
      readByteData: { _, register in CInt(register) },
      readI2CBlockData: { _, register, length, values in
        for index in 0..<Int(length) { values[index] = register &+ UInt8(index) }
        return CInt(length)
      })
    var bus = try LinuxI2CBus(path: "/dev/i2c-1", descriptor: .closed, calls: calls)
    var sample = [UInt8](repeating: 0, count: 14)
    var allocations: UInt64 = 0
    try sample.withUnsafeMutableBytes { sample in
      try bus.readRegisters(startingAt: 0x3B, into: sample, at: .mpu6050)
      allocations = try AllocationCounter.count {
        for _ in 0..<1000 {
          try bus.readRegisters(startingAt: 0x3B, into: sample, at: .mpu6050)
          try bus.writeRegister(0x6B, value: 0x01, at: .mpu6050)
          _ = try bus.readRegister(0x75, at: .mpu6050)
          _ = try bus.readRegister(0x75, at: .mpu6050Alternate)
        }
      }
    }
    #expect(allocations == 0)
  }

  @Test(arguments: [Int64(0), 1_700_000_000_000_000_000])
  func waitingForEdgesDoesNotAllocate(realtimeOffset: Int64) throws {
    final class Kernel {
      var now: Int64 = 5_000_000_000
      var pending = false
    }
    let kernel = Kernel()
    let calls = EdgeEventCalls(
      wait: { timeout in
        if kernel.pending { return 1 }
        kernel.now += timeout
        kernel.pending = true
        return 0
      },
      read: { stamp in
        kernel.pending = false
        stamp = Timestamp(nanoseconds: kernel.now - 1000 + realtimeOffset)
        return 0
      },
      monotonicNow: { Timestamp(nanoseconds: kernel.now) },
      realtimeNow: { Timestamp(nanoseconds: kernel.now + 1_700_000_000_000_000_000) })
    let line = LinuxDataReadyLine(chip: .label("hil-imu"), line: .offset(0), calls: calls)
    _ = try line.waitForEdge(until: Timestamp(nanoseconds: kernel.now + 10_000_000))
    _ = try line.waitForEdge(until: Timestamp(nanoseconds: kernel.now + 10_000_000))
    let allocations = try AllocationCounter.count {
      for _ in 0..<1000 {
        _ = try line.waitForEdge(until: Timestamp(nanoseconds: kernel.now + 10_000_000))
        _ = try line.waitForEdge(until: Timestamp(nanoseconds: kernel.now + 10_000_000))
      }
    }
    #expect(allocations == 0)
    #expect(line.clockDomain == (realtimeOffset == 0 ? .monotonic : .realtime))
  }

  @Test func readingTheClockDoesNotAllocate() {
    let clock = LinuxMonotonicClock()
    var latest = Timestamp.zero
    let allocations = AllocationCounter.count {
      for _ in 0..<1000 { latest = clock.now() }
    }
    #expect(allocations == 0)
    #expect(latest > .zero)
  }
}
