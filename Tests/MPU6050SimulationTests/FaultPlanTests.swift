import Geometry
import HardwareAbstraction
import MPU6050
import MPU6050Simulation
import SimulatedHardware
import Testing

/// Every named fault plan, run through the real driver on a simulated board: the driver ends
/// running, and its counters reconcile exactly with what the board injected.
@Suite("Fault plans end in recovery, with counters that reconcile")
struct FaultPlanTests {
  /// Builds a rig whose plan's faults begin 2 s after the clock's start, starts the driver,
  /// and runs to 6 s after the faults began (FIFO polling when the INT pin is not wired).
  func run(_ name: String, seed: UInt64 = 3, selfTest: Bool = false) throws -> (
    Rig, MPU6050StartupReport
  ) {
    let clock = ManualClock()
    let start = clock.now().advanced(byNanoseconds: seconds(2))
    let plan = try #require(SimulatedMPU6050FaultPlan.named(name, start: start, seed: seed))
    let rig = try Rig(unit: .typical(seed: seed), plan: plan, clock: clock)
    let report = try rig.start(selfTest: selfTest)
    let end = start.advanced(byNanoseconds: seconds(6))
    if plan.interruptWired {
      try rig.run(until: end)
    } else {
      rig.enableFIFO()
      rig.runFIFO(until: end)
    }
    return (rig, report)
  }

  /// The checks every plan must pass.
  func expectRecovered(_ rig: Rig, _ name: String) {
    let counters = rig.driver.counters
    let injected = rig.board.injected
    #expect(rig.driver.state == .running, "\(name): \(rig.driver.state)")
    // Still delivering at the end: at least 90 of the last second's ~100 samples.
    let lastSecond = rig.now.advanced(byNanoseconds: -seconds(1))
    let recent = rig.samples.filter { $0.time >= lastSecond }.count
    #expect(recent >= 90, "\(name): \(recent) samples in the last second")
    // Every failed transfer the bus or the chip caused is counted, by kind, exactly once.
    let bus = injected.busFaults
    #expect(
      counters.busErrors.notAcknowledged == bus.notAcknowledged + injected.chipNotAcknowledged,
      "\(name)")
    #expect(counters.busErrors.ioError == bus.ioError, "\(name)")
    #expect(counters.busErrors.busBusy == bus.busBusy, "\(name)")
    #expect(counters.busErrors.timedOut == bus.timedOut, "\(name)")
    #expect(counters.busErrors.arbitrationLost == bus.arbitrationLost, "\(name)")
    #expect(counters.busErrors.protocolViolation == bus.protocolViolation, "\(name)")
    #expect(counters.busErrors.permanent == 0, "\(name)")
    // Every re-initialisation begun has finished.
    #expect(
      counters.reinitializationsStarted.total == counters.reinitializationsCompleted, "\(name)")
    // The chip's resets are the driver's doings: one per completed re-initialisation.
    #expect(injected.chip.deviceResets == 1 + counters.reinitializationsCompleted, "\(name)")
  }

  @Test("none: nothing to count")
  func none() throws {
    let (rig, _) = try run("none")
    expectRecovered(rig, "none")
    let counters = rig.driver.counters
    #expect(counters.busErrors.total == 0)
    #expect(counters.reinitializationsStarted.total == 0)
    #expect(counters.repeatedSamples == 0)
    #expect(counters.configurationMismatches == 0)
    #expect(counters.configurationChecks >= 7)
    // Every edge produced a sample.
    #expect(UInt64(rig.samples.count + rig.flushedEdges) == rig.board.injected.edges.delivered)
  }

  @Test("nack-burst: 5 NACKs, retried within ticks, one tick lost, no re-initialisation")
  func nackBurst() throws {
    let (rig, _) = try run("nack-burst")
    expectRecovered(rig, "nack-burst")
    let counters = rig.driver.counters
    #expect(rig.board.injected.busFaults.notAcknowledged == 5)
    #expect(counters.retries == 4)
    #expect(counters.failedReads == 1)
    #expect(counters.reinitializationsStarted.total == 0)
  }

  @Test("eio-burst: 20 EIO, five failed ticks, one re-initialisation for bus errors")
  func eioBurst() throws {
    let (rig, _) = try run("eio-burst")
    expectRecovered(rig, "eio-burst")
    let counters = rig.driver.counters
    #expect(rig.board.injected.busFaults.ioError == 20)
    #expect(counters.failedReads == 5)
    #expect(counters.reinitializationsStarted.busErrors == 1)
    #expect(counters.reinitializationsStarted.total == 1)
  }

  @Test("bus-lockup: 1.5 s busy, re-initialisation with back-off")
  func busLockup() throws {
    let (rig, _) = try run("bus-lockup")
    expectRecovered(rig, "bus-lockup")
    let counters = rig.driver.counters
    #expect(rig.board.injected.busFaults.busBusy > 0)
    #expect(counters.reinitializationsStarted.busErrors == 1)
    #expect(counters.reinitializationsStarted.total == 1)
    // Back-off 0.1, 0.2, 0.4, 0.8 s: four failed attempts before the bus frees at 1.5 s.
    #expect(counters.reinitializationAttemptsFailed == 4)
  }

  @Test("brownout: found asleep, re-initialised once")
  func brownout() throws {
    let (rig, _) = try run("brownout")
    expectRecovered(rig, "brownout")
    let counters = rig.driver.counters
    #expect(rig.board.injected.chip.brownOuts == 1)
    #expect(counters.chipResetsDetected == 1)
    #expect(counters.reinitializationsStarted.chipReset == 1)
    #expect(counters.reinitializationsStarted.total == 1)
  }

  @Test("frozen-registers: flagged as stuck data once, re-initialised")
  func frozen() throws {
    let (rig, _) = try run("frozen-registers")
    expectRecovered(rig, "frozen-registers")
    let counters = rig.driver.counters
    #expect(counters.stuckDataEvents == 1)
    #expect(counters.reinitializationsStarted.stuckData == 1)
    #expect(counters.reinitializationsStarted.total == 1)
    // Ten identical bursts: nine repeats of the first; the reset ended the freeze.
    #expect(counters.repeatedSamples == 9)
    #expect(rig.board.injected.chip.frozenSamples < 200)
  }

  @Test("register-corruption: one mismatch found within a second, rewritten, no re-initialisation")
  func corruption() throws {
    let (rig, _) = try run("register-corruption")
    expectRecovered(rig, "register-corruption")
    let counters = rig.driver.counters
    #expect(rig.board.injected.chip.registerCorruptions == 1)
    #expect(counters.configurationMismatches == 1)
    #expect(counters.reinitializationsStarted.total == 0)
    #expect(rig.board.chip.peek(0x1B) == 0x08)
  }

  @Test("clone-whoami: an MPU-6050 clone (0x72) is accepted, with a warning")
  func clone() throws {
    let (rig, report) = try run("clone-whoami", selfTest: true)
    expectRecovered(rig, "clone-whoami")
    #expect(report.identity.whoAmI == 0x72)
    #expect(report.warnings.contains { $0.contains("0x72") })
    #expect(report.selfTest.passed)
  }

  @Test("icm20689: a relabelled ICM-20689 (0x98) is driven through its register map")
  func icm20689() throws {
    let (rig, report) = try run("icm20689")
    expectRecovered(rig, "icm20689")
    #expect(report.identity.model.name == "ICM-20689")
    let last = try #require(rig.samples.last?.sample)
    #expect(abs(last.temperatureCelsius - 25) < 2)
  }

  @Test("missing-edges: every sample not lost with its edge reaches the host")
  func missingEdges() throws {
    let (rig, _) = try run("missing-edges")
    expectRecovered(rig, "missing-edges")
    let injected = rig.board.injected
    #expect(injected.edgeFaults.missing == 2)
    #expect(UInt64(rig.samples.count + rig.flushedEdges) == injected.edges.delivered)
    #expect(
      injected.edges.produced == injected.edges.delivered + injected.edges.dropped
        + injected.edges.pending)
  }

  @Test("duplicated-edges: each duplicate is a repeat, not a new sample")
  func duplicatedEdges() throws {
    let (rig, _) = try run("duplicated-edges")
    expectRecovered(rig, "duplicated-edges")
    let injected = rig.board.injected
    #expect(injected.edgeFaults.duplicated == 3)
    #expect(UInt64(rig.repeats) == injected.edgeFaults.duplicated)
    #expect(rig.driver.counters.repeatedSamples == 3)
    #expect(rig.driver.counters.stuckDataEvents == 0)
  }

  @Test("late-edges, edge-jitter: the driver reads every sample")
  func lateAndJitter() throws {
    for name in ["late-edges", "edge-jitter"] {
      let (rig, _) = try run(name)
      expectRecovered(rig, name)
      let injected = rig.board.injected
      #expect(UInt64(rig.samples.count + rig.flushedEdges) == injected.edges.delivered, "\(name)")
      #expect(rig.driver.counters.reinitializationsStarted.total == 0, "\(name)")
    }
  }

  @Test("broken-wire: edges stop for 2 s; the chip is found running; edges come back")
  func brokenWire() throws {
    let (rig, _) = try run("broken-wire")
    expectRecovered(rig, "broken-wire")
    #expect(rig.timeouts > 10)
    #expect(rig.driver.counters.reinitializationsStarted.total == 0)
  }

  @Test("not-wired: the FIFO fallback delivers every record")
  func notWired() throws {
    let (rig, _) = try run("not-wired")
    expectRecovered(rig, "not-wired")
    let chip = rig.board.injected.chip
    #expect(rig.driver.counters.samplesDelivered == chip.fifoRecordsRead)
    #expect(chip.fifoRecordsLost == 0)
    let accounting = rig.fifoAccounting()
    #expect(accounting.produced == accounting.delivered + accounting.inFIFO)
  }

  @Test("fifo-overflow: the host stalls 1 s, the overflow is counted and its losses exactly")
  func fifoOverflow() throws {
    let (rig, _) = try run("fifo-overflow")
    expectRecovered(rig, "fifo-overflow")
    let chip = rig.board.injected.chip
    #expect(rig.driver.counters.fifoOverflows == 1)
    let accounting = rig.fifoAccounting()
    #expect(accounting.produced == accounting.delivered + accounting.lost + accounting.inFIFO)
    #expect(rig.driver.counters.samplesLost >= chip.fifoRecordsLost)
    #expect(rig.driver.counters.samplesLost > 90)
  }

  @Test("soak, one simulated minute: random faults, still running, counters reconcile")
  func soak() throws {
    let clock = ManualClock()
    let start = clock.now().advanced(byNanoseconds: seconds(1))
    var plan = try #require(SimulatedMPU6050FaultPlan.named("soak", start: start, seed: 21))
    // Make it eventful within a minute: a brown-out at 20 s and 45 s.
    plan.chip = SimulatedMPU6050Faults(brownOuts: [
      .init(at: start.advanced(byNanoseconds: seconds(20))),
      .init(at: start.advanced(byNanoseconds: seconds(45))),
    ])
    let rig = try Rig(unit: .typical(seed: 21), plan: plan, clock: clock)
    try rig.start()
    try rig.run(until: start.advanced(byNanoseconds: seconds(60)))
    expectRecovered(rig, "soak")
    #expect(rig.driver.counters.reinitializationsStarted.chipReset == 2)
    #expect(rig.board.injected.busFaults.total > 0)
  }

  @Test("every catalogue name builds a plan; unknown names do not")
  func catalogue() {
    for name in SimulatedMPU6050FaultPlan.names {
      #expect(SimulatedMPU6050FaultPlan.named(name, start: .zero)?.name == name)
    }
    #expect(SimulatedMPU6050FaultPlan.named("gremlins", start: .zero) == nil)
  }
}
