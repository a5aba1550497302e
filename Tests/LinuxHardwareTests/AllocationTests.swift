import Glibc
import HardwareAbstraction
import LinuxHardware
import POSIXSupport
import SimulatedHardware
import Testing

// The hot paths of the Linux HAL must not allocate (DESIGN.md: nothing in the loop allocates
// per sample). These tests count malloc calls on their own thread through a tiny interposer,
// and are skipped unless it is preloaded. To run them:
//
//   cat > /tmp/count.c <<'C'
//   #include <stddef.h>
//   static __thread unsigned long count; static __thread int on;
//   void plumb_alloc_counting(int enable) { on = enable; }
//   unsigned long plumb_alloc_count(void) { return count; }
//   extern void *__libc_malloc(size_t), *__libc_calloc(size_t, size_t),
//     *__libc_realloc(void *, size_t), *__libc_memalign(size_t, size_t);
//   void *malloc(size_t n) { if (on) count++; return __libc_malloc(n); }
//   void *calloc(size_t a, size_t b) { if (on) count++; return __libc_calloc(a, b); }
//   void *realloc(void *p, size_t n) { if (on) count++; return __libc_realloc(p, n); }
//   void *aligned_alloc(size_t a, size_t n) { if (on) count++; return __libc_memalign(a, n); }
//   int posix_memalign(void **p, size_t a, size_t n) {
//     if (on) count++; *p = __libc_memalign(a, n); return *p ? 0 : 12; }
//   C
//   gcc -shared -fPIC -O2 /tmp/count.c -o /tmp/libcount.so
//   LD_PRELOAD=/tmp/libcount.so swift test --filter AllocationTests
//
// Only success and "nothing now" paths are measured: Swift Testing records a backtrace for every
// thrown error, which allocates inside the test process (typed throws themselves do not).

enum AllocationCounter {
  typealias Switch = @convention(c) (CInt) -> Void
  typealias Count = @convention(c) () -> UInt

  static let symbols: (Switch, Count)? = {
    guard let toggle = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "plumb_alloc_counting"),
      let count = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "plumb_alloc_count")
    else { return nil }
    return (unsafeBitCast(toggle, to: Switch.self), unsafeBitCast(count, to: Count.self))
  }()

  static var available: Bool { symbols != nil }

  /// The number of allocations `body` made on this thread.
  static func count(_ body: () throws -> Void) rethrows -> UInt {
    guard let (toggle, count) = symbols else { return 0 }
    let before = count()
    toggle(1)
    defer { toggle(0) }
    try body()
    return count() - before
  }
}

@Suite(
  .enabled(
    if: AllocationCounter.available,
    "preload the counting malloc interposer (see the file's header)"))
struct AllocationTests {
  @Test func serialWritesAndReadsDoNotAllocate() throws {
    let host = try PseudoTerminalSerialPort()
    let board = try TermiosSerialPort(path: host.terminalPath)
    let frame = [UInt8](repeating: 0x7E, count: 64)
    let command: [UInt8] = [0x01, 0x02, 0x03, 0x04]
    var inbox = [UInt8](repeating: 0, count: 256)
    var allocations: UInt = 0
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
    var allocations: UInt = 0
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
    var allocations: UInt = 0
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
