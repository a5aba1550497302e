import HardwareAbstraction
import MPU6050
import MPU6050Replay
import MPU6050Simulation
import Recording
import RecordingTestSupport
import SimulatedHardware
import TestSupport
import Testing

/// The loop may hand records to the writer on the hot path: appending must not allocate.
/// Counted per thread by the malloc interposer in Tests/TestSupportC, after a warm-up (the
/// runtime instantiates metadata and the CRC table once).
@Suite("Allocation-free recording", .countsAllocations)
struct RecordingAllocationTests {
  @Test("appending samples allocates nothing, write-back starts included")
  func appendAllocatesNothing() throws {
    #expect(AllocationCounter.isActive)
    let writer = try PlumbRawWriter(
      creating: temporaryPath("hot.plumbraw"), header: plainHeader(),
      sync: .startWriteback(every: .records(500)))
    var sample = PlumbRawSample(
      timestamp: Timestamp(nanoseconds: 1_000_000_000),
      bytes: PlumbRawBurstBytes((0..<14).map { UInt8($0) }), completionDelayNanoseconds: 1_000)
    var failure: PlumbRawError?
    func append(_ count: Int) {
      for _ in 0..<count {
        sample.timestamp = sample.timestamp.advanced(byNanoseconds: 10_000_000)
        do throws(PlumbRawError) {
          try writer.append(.sample(sample))
          try writer.append(
            .unavailable(PlumbRawUnavailable(timestamp: sample.timestamp, reason: .noNewSample)))
        } catch {
          failure = error
        }
      }
    }
    append(100)
    let allocations = AllocationCounter.count { append(2_000) }
    #expect(failure == nil)
    #expect(allocations == 0)
    #expect(writer.recordsWritten == 4_200)
    #expect(writer.syncs == 8)
  }

  @Test("the live loop with a bus tap and a recorder allocates nothing per sample")
  func recorderAllocatesNothing() throws {
    let clock = ManualClock()
    let board = SimulatedMPU6050Board(motion: Wobble(), unit: .typical(seed: 2), clock: clock)
    let recorder = PlumbRawRecorder(recordingBeganAt: clock.now())
    var driver = try MPU6050Driver(
      bus: PlumbRawBusTap(board.bus, clock: clock, recorder: recorder), address: board.address)
    var startClock = clock
    let report = try driver.start(clock: &startClock, selfTest: false)
    try recorder.start(
      writingTo: temporaryPath("loop.plumbraw"),
      header: PlumbRawHeader(
        driver: driver, startup: report, startedAtUTC: "2025-03-14T09:26:53Z",
        firmwareVersion: "test", boardName: "simulated",
        recordingBeganAt: recorder.recordingBeganAt, runningSince: clock.now()))
    var delivered = 0
    func step() {
      let deadline = clock.now() + .milliseconds(30)
      guard case .edge(let time)? = try? board.line.waitForEdge(until: deadline) else { return }
      let reading = driver.readSample(at: time)
      recorder.recordReading(reading, at: time, source: .interrupt)
      if case .sample = reading { delivered += 1 }
    }
    // Warm up past the first once-a-second configuration read-back (tapped transfers).
    for _ in 0..<150 { step() }
    let allocations = AllocationCounter.count { for _ in 0..<2_000 { step() } }
    #expect(allocations == 0)
    #expect(delivered == 2_150)
    #expect(recorder.failure == nil)
    try recorder.close()
    let reader = try PlumbRawReader(contentsOf: recorder.writer!.path)
    #expect(reader.sampleCount == 2_150)
    // The 20 read-backs in those 21.5 s (four block reads each) are in the transcript.
    #expect(Array(reader.records(.transfer)).count >= 80)
  }
}
