import HardwareAbstraction
import MPU6050
import MPU6050Replay
import MPU6050Simulation
import Recording
import RecordingTestSupport
import SimulatedHardware
import Testing

/// Recordings written with `PlumbRawWriter` alone — each reading's edge timestamp and 14 bytes,
/// no bus transcript — replayed through the replay chip's emulated part and the real driver:
/// the driver must deliver the recorded bytes at the recorded times, in order, with no extra or
/// missing sample.
@Suite("Replay of a samples-only recording")
struct SamplesOnlyReplayTests {
  struct Capture {
    var path: String
    var report: MPU6050StartupReport
    var ticks: [Tick]
    var end: Timestamp
  }

  /// A live run whose readings are captured with the writer alone.
  func capture(plan name: String, selfTest: Bool) throws -> Capture {
    let clock = ManualClock()
    let plan = SimulatedMPU6050FaultPlan.named(
      name, start: clock.now().advanced(byNanoseconds: 2_000_000_000), seed: 3)!
    let board = SimulatedMPU6050Board(
      motion: Wobble(), unit: .typical(seed: 4), faultPlan: plan, clock: clock)
    var driver = try MPU6050Driver(bus: board.bus, address: board.address)
    let began = clock.now()
    var startClock = clock
    let report = try driver.start(clock: &startClock, selfTest: selfTest)
    _ = try flushEdges(board.line)
    let path = temporaryPath("samples.plumbraw")
    let writer = try PlumbRawWriter(
      creating: path,
      header: PlumbRawHeader(
        driver: driver, startup: report, startedAtUTC: "2025-03-14T09:26:53.25Z",
        firmwareVersion: "plumb test", boardName: "simulated", recordingBeganAt: began,
        runningSince: clock.now()))
    let end = clock.now().advanced(byNanoseconds: 3_000_000_000)
    var failure: PlumbRawError?
    let ticks = try runInterruptLoop(driver: &driver, line: board.line, clock: clock, until: end) {
      reading, time, source in
      do throws(PlumbRawError) {
        switch reading {
        case .sample(let sample, let isRepeat):
          try writer.append(
            .sample(
              PlumbRawSample(
                timestamp: time, bytes: PlumbRawBurstBytes(sample.raw), source: source,
                flags: isRepeat ? [.repeatedRead] : [])))
        case .unavailable(let reason):
          try writer.append(
            .unavailable(
              PlumbRawUnavailable(
                timestamp: time, source: source, reason: PlumbRawUnavailableReason(reason))))
        }
      } catch {
        failure = error
      }
    }
    if let failure { throw failure }
    try writer.close()
    return Capture(path: path, report: report, ticks: ticks, end: end)
  }

  func replay(_ capture: Capture) throws -> (
    report: MPU6050StartupReport, ticks: [Tick], chip: ReplayedMPU6050.Statistics
  ) {
    let reader = try PlumbRawReader(contentsOf: capture.path)
    #expect(!reader.header.hasBusTranscript)
    let board = ReplayedMPU6050Board(recording: reader)
    var driver = try MPU6050Driver(
      bus: board.bus, address: board.address, configuration: reader.header.configuration,
      policy: reader.header.policy)
    var clock = board.clock
    let report = try driver.start(clock: &clock, selfTest: reader.header.selfTestWasRequested)
    _ = try flushEdges(board.line)
    let ticks = try runInterruptLoop(
      driver: &driver, line: board.line, clock: board.clock, until: capture.end)
    return (report, ticks, board.chip.statistics)
  }

  /// The (timestamp, bytes) of every sample delivered, repeats included.
  func delivered(_ ticks: [Tick]) -> [(Timestamp, PlumbRawBurstBytes, Bool)] {
    ticks.compactMap {
      if case .sample(let time, let bytes, let isRepeat, _) = $0 { return (time, bytes, isRepeat) }
      return nil
    }
  }

  @Test(
    "the driver reads back the recorded bytes at the recorded times",
    arguments: ["none", "nack-burst", "missing-edges", "duplicated-edges"])
  func samplesReplay(plan: String) throws {
    let capture = try capture(plan: plan, selfTest: false)
    let replayed = try replay(capture)
    let live = delivered(capture.ticks)
    let again = delivered(replayed.ticks)
    #expect(live.count > 250)
    #expect(again.count == live.count)
    #expect(zip(live, again).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 && $0.2 == $1.2 })
    #expect(replayed.chip.divergences == 0, "\(replayed.chip.firstDivergence ?? "")")
    // The ticks without a sample (the NACK burst's failed read) come back at the same times.
    let liveGaps = capture.ticks.compactMap { tick -> Timestamp? in
      if case .unavailable(let time, _, _) = tick { return time }
      return nil
    }
    let replayGaps = replayed.ticks.compactMap { tick -> Timestamp? in
      if case .unavailable(let time, _, _) = tick { return time }
      return nil
    }
    #expect(replayGaps == liveGaps)
    if plan == "nack-burst" { #expect(liveGaps.count == 1) }
    if plan == "none" { #expect(replayed.ticks == capture.ticks) }
  }

  @Test("the self-test is answered from the header's recorded responses")
  func selfTestFromHeader() throws {
    let capture = try capture(plan: "none", selfTest: true)
    let replayed = try replay(capture)
    #expect(replayed.chip.synthesizedBursts == 40)
    #expect(replayed.report.identity == capture.report.identity)
    let live = capture.report.selfTest.results
    let again = replayed.report.selfTest.results
    #expect(live.count == 6 && again.count == 6)
    for (a, b) in zip(live, again) {
      #expect(a.sensor == b.sensor && a.axis == b.axis && a.trimCode == b.trimCode)
      #expect(a.factoryTrimCounts == b.factoryTrimCounts)
      // Answered to the nearest 1/20 count (20 samples per phase).
      #expect(abs(a.responseCounts - b.responseCounts) <= 0.025 + 1e-9)
      #expect(a.passed == b.passed)
    }
    #expect(delivered(replayed.ticks).map(\.1) == delivered(capture.ticks).map(\.1))
  }
}
