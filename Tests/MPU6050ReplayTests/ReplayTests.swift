import HardwareAbstraction
import MPU6050
import MPU6050Replay
import MPU6050Simulation
import Recording
import RecordingTestSupport
import SimulatedHardware
import Testing

/// A live run of the real driver on the simulated chip, recorded with the recorder and a bus tap,
/// then replayed through the replay chip and the same driver and loop: every tick must see the
/// same thing at the same time, and the driver must end with the same counters.
@Suite("Replay through the real driver")
struct ReplayTests {
  func expectIdentical(_ run: RecordedRun, _ replay: RecordedRun.Replay) {
    #expect(replay.chip.divergences == 0, "\(replay.chip.firstDivergence ?? "")")
    #expect(replay.report == run.liveReport)
    #expect(replay.flushed == run.liveFlushed)
    #expect(replay.ticks.count == run.liveTicks.count)
    if let index = zip(replay.ticks, run.liveTicks).enumerated().first(where: { $0.1.0 != $0.1.1 })?
      .offset
    {
      Issue.record(
        "tick \(index) differs: live \(run.liveTicks[index]), replay \(replay.ticks[index])")
    }
    #expect(replay.counters == run.liveCounters)
  }

  func samples(_ ticks: [Tick]) -> [(Timestamp, Timestamp)] {
    ticks.compactMap {
      if case .sample(let time, _, false, let after) = $0 { return (time, after) }
      return nil
    }
  }

  @Test("a fault-free run replays exactly, self-test included")
  func faultFree() throws {
    let run = try RecordedRun.record(plan: "none")
    #expect(samples(run.liveTicks).count > 390)
    #expect(run.liveReport.selfTest.results.count == 6)
    let replay = try run.replay()
    expectIdentical(run, replay)
    // The self-test's 40 bursts and the samples all came from the file.
    #expect(replay.chip.burstsReplayed == UInt64(samples(run.liveTicks).count + 40))
  }

  /// What each plan must visibly do in the recorded window, so a replay of it proves something.
  static let effects: [String: @Sendable (RecordedRun, RecordedRun.Replay) -> Bool] = [
    "nack-burst": { run, replay in
      run.liveCounters.busErrors.notAcknowledged == 5 && replay.chip.failuresReplayed == 5
    },
    "eio-burst": { run, _ in
      run.liveCounters.busErrors.ioError == 20
        && run.liveCounters.reinitializationsStarted.busErrors >= 1
    },
    "bus-lockup": { run, _ in
      run.liveCounters.reinitializationAttemptsFailed >= 1
        && run.liveCounters.reinitializationsCompleted >= 1
    },
    "brownout": { run, _ in run.liveCounters.reinitializationsStarted.chipReset >= 1 },
    "frozen-registers": { run, _ in run.liveCounters.stuckDataEvents >= 1 },
    "register-corruption": { run, _ in run.liveCounters.configurationMismatches >= 1 },
    "missing-edges": { run, _ in
      let times = run.liveTicks.compactMap { tick -> Timestamp? in
        if case .sample(let t, _, _, _) = tick { return t }
        return nil
      }
      return zip(times.dropFirst(), times).filter { $0.nanoseconds(since: $1) > 15_000_000 }
        .count == 2
    },
    "late-edges": { run, _ in
      run.liveTicks.contains {
        if case .sample(let t, _, _, let after) = $0 {
          return after.nanoseconds(since: t) >= 3_000_000
        }
        return false
      }
    },
    "duplicated-edges": { run, replay in
      run.liveCounters.repeatedSamples == 3 && replay.counters.repeatedSamples == 3
    },
    "edge-jitter": { run, _ in
      let times = run.liveTicks.compactMap { tick -> Int64? in
        if case .sample(let t, _, _, _) = tick { return t.nanoseconds }
        return nil
      }
      return Set(zip(times.dropFirst(), times).map { $0 - $1 }).count > 100
    },
    "broken-wire": { run, _ in
      run.liveTicks.filter { if case .timeout = $0 { true } else { false } }.count > 50
    },
    "clone-whoami": { run, _ in run.liveReport.identity.whoAmI == 0x72 },
    "icm20689": { run, _ in run.liveReport.identity.whoAmI == 0x98 },
    "self-test-failure": { run, _ in
      // The wobbling board disturbs the gyro's self-test too; the plan's damage is Y's.
      !run.liveReport.selfTest.passed
        && run.liveReport.selfTest.failures.contains { $0.sensor == .gyro && $0.axis == .y }
    },
    "not-wired": { run, _ in
      run.liveTicks.filter { if case .fifoSample = $0 { true } else { false } }.count > 250
    },
    "fifo-overflow": { run, _ in run.liveCounters.fifoOverflows >= 1 },
  ]

  @Test(
    "runs with the driver's named fault plans replay exactly",
    arguments: [
      "nack-burst", "eio-burst", "bus-lockup", "brownout", "frozen-registers",
      "register-corruption", "missing-edges", "late-edges", "duplicated-edges", "edge-jitter",
      "broken-wire", "clone-whoami", "icm20689", "self-test-failure",
    ])
  func namedFaultPlans(plan: String) throws {
    let run = try RecordedRun.record(plan: plan)
    let replay = try run.replay()
    let visible = Self.effects[plan]!(run, replay)
    #expect(visible, "the plan left no trace in the recording")
    expectIdentical(run, replay)
  }

  @Test(
    "FIFO fallback runs replay exactly, a stalled host included",
    arguments: ["not-wired", "fifo-overflow"])
  func fifoPlans(plan: String) throws {
    let run = try RecordedRun.record(plan: plan, seconds: 3)
    let replay = try run.replay(fifo: true)
    let visible = Self.effects[plan]!(run, replay)
    #expect(visible, "the plan left no trace in the recording")
    expectIdentical(run, replay)
  }

  @Test("the replay reads the file: one altered sample changes exactly that tick")
  func replayReadsTheFile() throws {
    let run = try RecordedRun.record(plan: "none", seconds: 1)
    let reader = try PlumbRawReader(contentsOf: run.path)
    var altered = reader.header
    altered.hasBusTranscript = true
    let path = temporaryPath("altered.plumbraw")
    let writer = try PlumbRawWriter(creating: path, header: altered)
    var changed: Timestamp?
    for record in reader.records() {
      if case .sample(var sample) = record, changed == nil,
        sample.timestamp > reader.header.runningSince
      {
        var bytes = sample.bytes.array
        bytes[9] ^= 0x01  // gyro X, low byte
        sample.bytes = PlumbRawBurstBytes(bytes)
        changed = sample.timestamp
        try writer.append(.sample(sample))
      } else {
        try writer.append(record)
      }
    }
    try writer.close()
    var copy = run
    copy.path = path
    let replay = try copy.replay()
    let differing = zip(replay.ticks, run.liveTicks).filter { $0 != $1 }
    #expect(differing.count == 1)
    if case .sample(let time, _, _, _)? = differing.first?.0 { #expect(time == changed) }
  }

  @Test("when the replay's transfers stop lining up, the samples still come in order")
  func misalignedTranscriptKeepsTheSamples() throws {
    // Recorded with the driver's read-back once a second; replayed with it every 0.7 s, so the
    // replay's housekeeping reads fall on other edges than the recording's.
    let run = try RecordedRun.record(plan: "none", seconds: 3, selfTest: false)
    let reader = try PlumbRawReader(contentsOf: run.path)
    let board = ReplayedMPU6050Board(recording: reader)
    var policy = reader.header.policy
    policy.configurationCheckIntervalNanoseconds = 700_000_000
    var driver = try MPU6050Driver(
      bus: board.bus, address: board.address, configuration: reader.header.configuration,
      policy: policy)
    var clock = board.clock
    _ = try driver.start(clock: &clock, selfTest: false)
    _ = try flushEdges(board.line)
    let ticks = try runInterruptLoop(
      driver: &driver, line: board.line, clock: board.clock, until: run.end)
    #expect(board.chip.statistics.divergences > 0)
    #expect(samples(ticks).count == samples(run.liveTicks).count)
    let bytes = { (ticks: [Tick]) in
      ticks.compactMap { tick -> PlumbRawBurstBytes? in
        if case .sample(_, let bytes, _, _) = tick { return bytes }
        return nil
      }
    }
    #expect(bytes(ticks) == bytes(run.liveTicks))
    #expect(samples(ticks).map(\.0) == samples(run.liveTicks).map(\.0))
  }

  @Test("a recording cut short replays what it holds, then runs out without a crash")
  func truncatedRecordingReplaysItsPrefix() throws {
    let run = try RecordedRun.record(plan: "none", seconds: 2, selfTest: false)
    let full = readBytes(run.path)
    let liveSamples = samples(run.liveTicks)
    // Cut inside a record (7 bytes past a whole one is never a boundary: records are ≥ 14
    // bytes), at 40 % and 75 % of the file.
    for fraction in [0.4, 0.75] {
      var copy = run
      copy.path = temporaryPath("cut.plumbraw")
      let cut = Int(Double(full.count) * fraction)
      writeBytes(Array(full[0..<cut]), to: copy.path)
      let reader = try PlumbRawReader(contentsOf: copy.path)
      #expect(reader.tornBytes > 0 || reader.validEnd == cut)
      let replay = try copy.replay()
      let replayed = samples(replay.ticks)
      // Every sample the file still holds comes back, at its time, in order; past the cut the
      // chip has nothing to answer with and says so (a divergence), rather than inventing data.
      #expect(replayed.count >= reader.sampleCount - 1)
      #expect(replayed.count <= liveSamples.count)
      let held = min(replayed.count, reader.sampleCount - 1)
      #expect(replayed.prefix(held).map(\.0) == liveSamples.prefix(held).map(\.0))
      #expect(replay.chip.divergences > 0, "the replay ran past the cut without noticing")
    }
  }
}
