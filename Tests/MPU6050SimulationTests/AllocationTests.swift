import HardwareAbstraction
import MPU6050
import MPU6050Simulation
import SimulatedHardware
import TestSupport
import Testing

/// The per-sample path allocates nothing: the driver's burst read and conversion, the chip's
/// internal steps, the bus and the line. Counted per thread by the interposer in
/// Tests/TestSupportC, after a warm-up (the runtime instantiates generic metadata lazily, once).
@Suite("Allocation-free sample path", .countsAllocations)
struct AllocationTests {
  @Test("edge → burst → sample: zero allocations over 2 000 samples")
  func interruptPath() throws {
    #expect(AllocationCounter.isActive)
    let board = SimulatedMPU6050Board(motion: RestingMotion(), unit: .typical(seed: 2))
    var driver = try MPU6050Driver(bus: board.bus, address: board.address)
    var clock = board.clock
    _ = try driver.start(clock: &clock, selfTest: false)
    var delivered = 0
    func step() {
      let deadline = board.clock.now() + .milliseconds(30)
      if case .edge(let time)? = try? board.line.waitForEdge(until: deadline),
        case .sample = driver.readSample(at: time)
      {
        delivered += 1
      }
    }
    // Warm up past the first configuration read-back too (once a second).
    for _ in 0..<150 { step() }
    let allocations = AllocationCounter.count { for _ in 0..<2_000 { step() } }
    #expect(allocations == 0)
    #expect(delivered == 2_150)
  }

  @Test("FIFO drain: zero allocations over 300 drains")
  func fifoPath() throws {
    let board = SimulatedMPU6050Board(motion: RestingMotion(), unit: .typical(seed: 4))
    var driver = try MPU6050Driver(bus: board.bus, address: board.address)
    var clock = board.clock
    _ = try driver.start(clock: &clock, selfTest: false)
    driver.enableFIFO(at: board.clock.now())
    var delivered = 0
    func drain() {
      board.clock.advance(by: .microseconds(9_500))
      _ = driver.drainFIFO(clock: board.clock) { _, _ in delivered += 1 }
    }
    for _ in 0..<150 { drain() }
    let allocations = AllocationCounter.count { for _ in 0..<300 { drain() } }
    #expect(allocations == 0)
    #expect(delivered > 400)
  }
}
