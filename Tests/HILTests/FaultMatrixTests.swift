import HIL
import MPU6050
import MPU6050Simulation
import Telemetry
import Testing

/// What a fault plan must look like from the host: the flags of its fault episodes, how many
/// episodes, and how long the longest may last (with the reason for the bound).
struct PlanExpectation: Sendable, CustomTestStringConvertible {
  var plan: String
  /// Exactly the health flags the abnormal frames carry (union over the episodes).
  var flags: TelemetryFlags
  var episodes: Int
  /// The longest episode (last normal frame before to first normal frame after), seconds.
  var recoveryBoundSeconds: Double
  var why: String

  var testDescription: String { plan }
}

/// The sample period at 100 Hz, and a frame's, seconds (restated: RM §4.2, 1 kHz / (1 + 9)).
let period = 0.01

/// Every driver fault plan: the expected flags, episodes and recovery bound. Faults begin at
/// 5 s of a 10 s handheld run (after start-up, warm-up and the estimator's first second).
let planExpectations: [PlanExpectation] = [
  PlanExpectation(
    plan: "none", flags: [], episodes: 0, recoveryBoundSeconds: 0, why: "nothing happens"),
  PlanExpectation(
    plan: "nack-burst", flags: [.gap, .i2cRecovery], episodes: 1, recoveryBoundSeconds: 0.05,
    why:
      "5 NACKs: one tick's 3 attempts fail (its sample is missed), the next tick's retry "
      + "succeeds; the next frame carries gap + i2c_recovery: 3 frame periods at most"),
  PlanExpectation(
    plan: "eio-burst", flags: [.gap, .degradedTiming, .i2cRecovery, .recovering], episodes: 1,
    recoveryBoundSeconds: 0.5,
    why:
      "20 EIOs: 5 failed ticks trigger a re-initialisation (≈50 ms), the reset wait (100 ms, "
      + "PS §6.3) and settling (≥30 ms): ≈0.3 s; no edge for 3 periods meanwhile → polling; "
      + "the hand turned meanwhile, so the tilt restarts (recovering)"),
  PlanExpectation(
    plan: "bus-lockup", flags: [.gap, .degradedTiming, .i2cRecovery, .recovering], episodes: 1,
    recoveryBoundSeconds: 2.2,
    why:
      "the bus is busy for 1.5 s; re-initialisation attempts back off from 100 ms doubling, "
      + "so the first after the lock-up can come up to ≈0.4 s late, then reset and settle; "
      + "the tilt restarts after the gap (recovering)"),
  PlanExpectation(
    plan: "brownout", flags: [.gap, .degradedTiming, .i2cRecovery], episodes: 1,
    recoveryBoundSeconds: 0.4,
    why: "20 ms unpowered, then asleep: detected at once, reset wait 100 ms, settle ≥30 ms"),
  PlanExpectation(
    plan: "frozen-registers", flags: [.gap, .degradedTiming, .i2cRecovery, .recovering],
    episodes: 1, recoveryBoundSeconds: 0.4,
    why:
      "10 identical bursts (0.1 s) mean stuck data, then the re-initialisation (≈0.15 s); "
      + "the tilt restarts after the gap (recovering)"),
  PlanExpectation(
    plan: "register-corruption", flags: [.gap, .i2cRecovery], episodes: 1,
    recoveryBoundSeconds: 3 * period + 0.001,
    why:
      "GYRO_CONFIG changes while the hand turns: the gyro's magnitude drops 4× from one sample "
      + "to the next, so the driver reads the configuration back at once, rewrites GYRO_CONFIG "
      + "and withholds that sample (read at the wrong range); the next frame says gap + "
      + "i2c_recovery. Still, it would wait for the once-a-second read-back "
      + "(RegisterCorruptionFlagTests)"),
  PlanExpectation(
    plan: "clone-whoami", flags: [], episodes: 0, recoveryBoundSeconds: 0,
    why: "a compatible clone: a start-up warning, then a normal stream"),
  PlanExpectation(
    plan: "icm20689", flags: [], episodes: 0, recoveryBoundSeconds: 0,
    why: "a compatible part: a start-up warning, no self-test, then a normal stream"),
  PlanExpectation(
    plan: "self-test-failure", flags: [], episodes: 0, recoveryBoundSeconds: 0,
    why: "reported at start-up, not fatal"),
  PlanExpectation(
    plan: "missing-edges", flags: [.gap], episodes: 2, recoveryBoundSeconds: 0.05,
    why: "each lost edge costs its sample: the next frame says gap, one sample missed"),
  PlanExpectation(
    plan: "late-edges", flags: [], episodes: 0, recoveryBoundSeconds: 0,
    why: "3 ms late is within the period: timestamps are the edges' own, nothing is lost"),
  PlanExpectation(
    plan: "duplicated-edges", flags: [], episodes: 0, recoveryBoundSeconds: 0,
    why: "a repeated timestamp is ignored (counted), nothing is lost"),
  PlanExpectation(
    plan: "edge-jitter", flags: [], episodes: 0, recoveryBoundSeconds: 0,
    why: "50 µs of jitter is far inside the sample clock's ±25 % window"),
  PlanExpectation(
    plan: "broken-wire", flags: [.gap, .degradedTiming], episodes: 1,
    recoveryBoundSeconds: 2.1,
    why: "2 s without edges: polling after 3 periods (30 ms), interrupts again at the next edge"),
  PlanExpectation(
    plan: "not-wired", flags: [.gap, .degradedTiming], episodes: 1, recoveryBoundSeconds: 0.05,
    why:
      "FIFO fallback from the start (every frame degraded_timing, by design); the first "
      + "drain's reconstructed times leave one gap flag at start-up, no sample missed"),
  PlanExpectation(
    plan: "fifo-overflow", flags: [.gap, .degradedTiming, .recovering], episodes: 2,
    recoveryBoundSeconds: 1.1,
    why:
      "the host stalls 1 s: the FIFO (1024 B, 73 records) overflows; the next drain resets it "
      + "and the losses are dated and counted within a few drains; the tilt restarts after "
      + "the lost stretch (recovering)"),
]

@Suite struct FaultMatrixTests {
  static let seconds = 10.0

  @Test(arguments: planExpectations)
  func everyFaultPlanIsSurvivedFlaggedBoundedAndReconciled(_ expected: PlanExpectation) throws {
    let result = try hil("handheld", faults: expected.plan, seconds: Self.seconds)
    let a = result.accounting
    let s = result.status
    let i = result.injected

    // The loop survives: frames arrive to the end.
    #expect((result.lastFrameSeconds ?? 0) > Self.seconds - 0.05, "\(expected.plan)")
    #expect(result.telemetryFrames > 700)
    // Every sample the chip produced is accounted for, and none silently.
    #expect(a.silentLosses == 0, "\(expected.plan): \(a)")
    #expect(a.isBalanced, "\(expected.plan): \(a)")
    #expect(a.produced == i.chip.samplesProduced)
    #expect(a.countedMissed == s.missedSamples)
    #expect(a.delivered == result.telemetryFrames)
    #expect(a.lostInLink == 0 && result.link.framesLost == 0 && result.link.crcErrors == 0)
    #expect(a.inFlightAtEnd <= 2)
    #expect(i.edges.isReconciled)
    // The flags, the episodes and the recovery bound.
    #expect(
      result.episodeFlags == expected.flags,
      "\(expected.plan): flags \(flagNames(result.episodeFlags)) (\(expected.why))")
    #expect(result.episodeCount == expected.episodes, "\(expected.plan): \(result.episodes)")
    #expect(
      result.longestEpisodeSeconds <= expected.recoveryBoundSeconds,
      "\(expected.plan): \(result.longestEpisodeSeconds) s (\(expected.why))")
    for episode in result.episodes {
      #expect(episode.firstNormalSeconds != nil, "\(expected.plan): not recovered")
      #expect(episode.samplesMissed + episode.framesLost <= 200)
    }
    checkInjection(expected.plan, result)
  }

  /// What each plan injected, reconciled with the driver's and the loop's own counters.
  func checkInjection(_ plan: String, _ result: HILResult) {
    let a = result.accounting
    let s = result.status
    let d = result.driver
    let i = result.injected
    let chipSlots = result.chipStretches.compactMap(\.durationSeconds).reduce(0, +) / period
    switch plan {
    case "none", "clone-whoami", "icm20689", "self-test-failure", "late-edges", "edge-jitter",
      "duplicated-edges":
      #expect(a.countedMissed == 0 && a.countedButNotProduced == 0, "\(plan)")
      #expect(d.busErrors.total == 0 && d.reinitializationsStarted.total == 0, "\(plan)")
      #expect(result.chipStretchCount == 0, "\(plan)")
    case "nack-burst":
      #expect(i.busFaults.notAcknowledged == 5 && d.busErrors.notAcknowledged == 5)
      #expect(d.failedReads == 1 && a.countedMissed == 1 && a.countedButNotProduced == 0)
    case "eio-burst":
      #expect(i.busFaults.ioError == 20 && d.busErrors.ioError == 20)
      #expect(d.reinitializationsCompleted == 1)
    case "bus-lockup":
      #expect(i.busFaults.busBusy > 0 && d.busErrors.busBusy == i.busFaults.busBusy)
      #expect(d.reinitializationsCompleted == 1)
    case "brownout":
      #expect(i.chip.brownOuts == 1 && d.chipResetsDetected == 1)
      #expect(d.reinitializationsCompleted == 1)
    case "frozen-registers":
      #expect(i.chip.frozenSamples > 0 && d.stuckDataEvents == 1)
      #expect(d.reinitializationsCompleted == 1)
    case "register-corruption":
      // Chip side: GYRO_CONFIG wrong from the corruption until the early read-back the next
      // sample set off, in the same loop step (the watch, which looks between steps, never
      // sees it); that one sample withheld, counted missed.
      #expect(i.chip.registerCorruptions == 1 && d.configurationMismatches == 1)
      #expect(d.earlyConfigurationChecks == 1)
      #expect(result.chipStretchCount == 0)
      #expect(a.countedMissed == 1 && s.unavailableReads == 1)
    case "missing-edges":
      #expect(i.edgeFaults.missing == 2 && a.countedMissed == 2)
    case "broken-wire":
      #expect(i.edgeFaults.stuck > 150 && s.fallbackEntries == 1 && s.fallbackExits == 1)
      #expect(s.mode == .interrupt && a.countedMissed <= 3)
    case "not-wired":
      #expect(s.mode == .fifo && a.countedMissed == 0)
    case "fifo-overflow":
      #expect(i.chip.fifoOverflows >= 1 && d.fifoOverflows == 1)
      #expect(s.fifoSamplesLost == a.countedMissed && a.countedMissed > 0)
    default:
      Issue.record("no expectation for \(plan)")
    }
    switch plan {
    case "eio-burst", "bus-lockup", "brownout", "frozen-registers":
      // The re-initialisation reset the chip: the loop counted its silent time as missed
      // slots. No more than the time the chip was asleep, plus the slot it woke in.
      #expect(result.chipStretchCount == 1, "\(plan)")
      #expect(a.countedButNotProduced > 0, "\(plan)")
      #expect(Double(a.countedButNotProduced) <= chipSlots + 3, "\(plan): \(a)")
    default:
      #expect(a.countedButNotProduced == 0, "\(plan)")
    }
    // Start-up findings.
    let startup = result.startup
    switch plan {
    case "clone-whoami":
      #expect(startup?.identity.whoAmI == 0x72)
      #expect(startup?.warnings.contains { $0.contains("0x72") } == true)
    case "icm20689":
      #expect(startup?.identity.whoAmI == 0x98)
      #expect(startup?.selfTest.results.isEmpty == true)
    case "self-test-failure":
      #expect(startup?.selfTest.passed == false)
      #expect(startup?.selfTest.failures.map { "\($0.sensor) \($0.axis)" } == ["gyro y"])
    default:
      #expect(startup?.selfTest.passed == true, "\(plan)")
    }
  }

  @Test func everyNamedPlanIsInTheMatrix() {
    let matrix = Set(planExpectations.map(\.plan))
    // The soak plan is the soak's (SoakTests).
    #expect(matrix == Set(SimulatedMPU6050FaultPlan.names).subtracting(["soak"]))
  }

  @Test func aSerialUnplugIsCountedAsLostFramesAndTheLoopReopens() throws {
    let result = try hil("handheld", seconds: Self.seconds) {
      $0.serialUnplugs = [SerialUnplug(atSeconds: 5, forSeconds: 2)]
    }
    let a = result.accounting
    let s = result.status
    #expect(s.serialDisconnects == 1 && s.serialReopens == 1)
    #expect(a.silentLosses == 0 && a.isBalanced)
    // The host sees the unplug as one gap in the frame sequence; the loop counted the frames it
    // made while the port was closed, and the rest were in the queue or the device's buffer
    // when the cable went (a frame or two at this load).
    #expect(result.link.framesLost == a.lostInLink)
    #expect(a.lostInLink >= s.framesDroppedDisconnected)
    #expect(a.lostInLink - s.framesDroppedDisconnected <= 3, "\(a), \(s)")
    #expect(a.countedMissed == 0)
    // One episode: frames missing, no flag (the frames themselves are normal).
    #expect(result.episodeCount == 1 && result.episodeFlags.isEmpty)
    // Back within the unplug (2 s) plus the loop's reopen interval (1 s) plus a frame.
    let episode = try #require(result.episodes.first)
    #expect(episode.durationSeconds >= 2 && episode.durationSeconds <= 3 + 2 * period)
    #expect(episode.framesLost == a.lostInLink)
    #expect((result.lastFrameSeconds ?? 0) > Self.seconds - 0.05)
  }

  @Test func garbageOnTheCommandInputNeverDisturbsTheStream() throws {
    let result = try hil("handheld", seconds: Self.seconds) {
      $0.commandGarbage = [GarbageBurst(atSeconds: 4, forSeconds: 5, bytesPerSecond: 2000)]
      // A host ends the garbage's unfinished line first, as after any noise on the line.
      $0.hostCommands = [
        ScheduledCommand(atSeconds: 9.4, line: ""),
        ScheduledCommand(atSeconds: 9.5, line: "version"),
      ]
    }
    let a = result.accounting
    #expect(result.garbageBytesSent == 10_000)
    #expect(a.silentLosses == 0 && a.isBalanced && a.countedMissed == 0 && a.lostInLink == 0)
    #expect(result.episodeCount == 0)
    #expect(result.link.crcErrors == 0 && result.link.framesLost == 0)
    // Garbage lines get error replies (rate-limited by the parser); a real command after it
    // still works.
    #expect(result.repliesError > 0 && result.status.commandErrors >= result.repliesError)
    #expect(result.repliesOK >= 1)
    #expect(result.status.repliesDropped == 0)
  }
}

/// A board that moves while no sample comes: the firmware's attitude must come back when the
/// samples do, not after the rejection's 10 s of recovery. The tilt scenario's 60° turn (5 s to
/// 6 s) falls wholly inside the bus lock-up (5 s to 6.7 s); handheld motion goes on through an
/// EIO burst. Before the estimator restarted its tilt after such gaps: 25° and 9.3° RMS (now
/// 0.015° and 0.38°).
@Suite struct MotionDuringAGapTests {
  @Test func theTiltComesBackWhenTheSamplesDo() throws {
    let result = try hil("tilt", faults: "bus-lockup", seconds: 30) {
      $0.unit = .noisy(seed: 1)
      $0.keepFrames = true
    }
    #expect(result.status.missedSamples > 150)
    #expect(
      result.accuracy.inclinationRMSDegrees < 0.5,
      "RMS inclination error \(result.accuracy.inclinationRMSDegrees)°")
    // The restart is on the wire as `recovering` (converging again), and only the start-up is
    // `initialising` (a ground station shows MAV_STATE_BOOT for it): the frames of the restart
    // are scored like any other.
    let gap = try #require(result.frames.firstIndex { $0.flags?.contains(.gap) == true })
    let restart = result.frames[gap...].prefix(50)
    #expect(restart.contains { $0.flags?.contains(.recovering) == true })
    #expect(!result.frames[gap...].contains { $0.flags?.contains(.initialising) == true })
  }

  /// The same on the typical, uncalibrated unit: its accelerometer's scale errors make the
  /// reading after the turn a few percent longer than before, which must not be taken for an
  /// acceleration (it was: 27° RMS). What is left is the unit's accelerometer offsets.
  @Test func theTiltComesBackOnAnUncalibratedUnit() throws {
    let result = try hil("tilt", faults: "bus-lockup", seconds: 30)
    #expect(
      result.accuracy.inclinationRMSDegrees < 3,
      "RMS inclination error \(result.accuracy.inclinationRMSDegrees)°")
  }

  /// GYRO_CONFIG changes by itself to ±2000 °/s as the 60° tilt begins: for the 0.7 s until the
  /// driver's once-a-second read-back restores it, the gyro reads 8× small, and the attitude
  /// is left 50° off with no gap to restart it (16° RMS over a minute). The loop now tells the
  /// estimator that the samples since the last good read-back are suspect, and it restarts the
  /// tilt by the gap rule.
  @Test func aCorruptedScaleFoundByTheReadBackRestartsTheTilt() throws {
    let result = try noisyRun("tilt", faults: "register-corruption", seconds: 30, below: 3)
    #expect(result.driver.configurationMismatches > 0)
  }

  @Test func handheldMotionThroughAnEIOBurst() throws {
    let result = try noisyRun("handheld", faults: "eio-burst", seconds: 60, below: 1)
    #expect(result.status.missedSamples > 20)
  }

  /// A run of the noisy unit whose RMS inclination error must stay below `bound` degrees.
  func noisyRun(_ scenario: String, faults: String, seconds: Double, below bound: Double)
    throws -> HILResult
  {
    let result = try hil(scenario, faults: faults, seconds: seconds) { $0.unit = .noisy(seed: 1) }
    let rms = result.accuracy.inclinationRMSDegrees
    #expect(rms < bound, "\(scenario), \(faults): RMS inclination error \(rms)°")
    return result
  }
}
