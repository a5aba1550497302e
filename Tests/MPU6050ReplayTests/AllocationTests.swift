import HardwareAbstraction
import MPU6050
import MPU6050Replay
import Recording
import RecordingTestSupport
import SimulatedHardware
import TestSupport
import Testing

/// The replay chip answers the driver on the hot path: it must not allocate.
@Suite("Allocation-free replay", .countsAllocations)
struct ReplayAllocationTests {
  @Test("replaying a transcript allocates nothing per sample")
  func replayAllocatesNothing() throws {
    let run = try RecordedRun.record(plan: "none", seconds: 23, selfTest: false)
    let reader = try PlumbRawReader(contentsOf: run.path)
    let board = ReplayedMPU6050Board(recording: reader)
    var driver = try MPU6050Driver(
      bus: board.bus, address: board.address, configuration: reader.header.configuration,
      policy: reader.header.policy)
    var clock = board.clock
    _ = try driver.start(clock: &clock, selfTest: false)
    _ = try flushEdges(board.line)
    var delivered = 0
    func step() {
      let deadline = board.clock.now() + .milliseconds(30)
      guard case .edge(let time)? = try? board.line.waitForEdge(until: deadline),
        case .sample = driver.readSample(at: time)
      else { return }
      delivered += 1
    }
    for _ in 0..<150 { step() }
    let allocations = AllocationCounter.count { for _ in 0..<2_000 { step() } }
    #expect(allocations == 0)
    #expect(delivered == 2_150)
    #expect(board.chip.statistics.divergences == 0)
  }
}
