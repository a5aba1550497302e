import Geometry
import HardwareAbstraction
import MPU6050
import MPU6050Simulation
import SimulatedHardware
import Testing

/// The early configuration read-back: a full-scale register that changes by itself is caught
/// at the first sample that shows it (the magnitude of the sensor's vector jumps by a power of
/// two), that sample is withheld, and the configuration rewritten; a change no sample shows
/// waits for the once-a-second read-back; motion that keeps mimicking such jumps sets off at
/// most one early read-back per 100 ms. The real driver on the simulated board.
@Suite("Early configuration read-back")
struct EarlyReadBackTests {
  static let g = 9.80665
  static let degree = Double.pi / 180

  /// A rig whose chip has `corruptions` (times in seconds after the clock's start), started
  /// and run for 4 s.
  func run(
    motion: FixedTruth, corruptions: [(seconds: Double, register: UInt8, value: UInt8)],
    policy: MPU6050RecoveryPolicy = .default
  ) throws -> Rig {
    let clock = ManualClock()
    let start = clock.now()
    let chip = SimulatedMPU6050Faults(
      registerCorruptions: corruptions.map {
        .init(
          at: start.advanced(byNanoseconds: seconds($0.seconds)), register: $0.register,
          value: $0.value)
      })
    let plan = SimulatedMPU6050FaultPlan(name: "test", summary: "", chip: chip)
    let rig = try Rig(motion: motion, plan: plan, policy: policy, clock: clock)
    try rig.start()
    try rig.run(until: start.advanced(byNanoseconds: seconds(4)))
    return rig
  }

  static let resting = FixedTruth(
    rate: Vector3(0, 0, 0), force: Vector3(0, 0, g), temperature: 25)
  static let turning = FixedTruth(
    rate: Vector3(0, 0, 60 * degree), force: Vector3(0, 0, g), temperature: 25)

  /// The time from the last sample delivered before `seconds` to the first after it, ns.
  func gap(_ rig: Rig, around seconds: Double) -> Int64 {
    // The rigs' clocks all start where a new `ManualClock` does.
    let at = ManualClock().now().advanced(byNanoseconds: EarlyReadBackTests.nanoseconds(seconds))
    let before = rig.samples.last { $0.time < at }!.time
    let after = rig.samples.first { $0.time > at }!.time
    return after.nanoseconds(since: before)
  }

  static func nanoseconds(_ value: Double) -> Int64 { Int64(value * 1e9) }

  /// A run in which `register` turns to `value` at 2.0015 s, checked to be caught by one early
  /// read-back: one mismatch, rewritten, no re-initialisation, one sample withheld, nothing
  /// delivered misread.
  func caughtEarly(
    motion: FixedTruth, register: UInt8, value: UInt8,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> Rig {
    let rig = try run(
      motion: motion, corruptions: [(seconds: 2.0015, register: register, value: value)])
    let counters = rig.driver.counters
    #expect(counters.earlyConfigurationChecks == 1, sourceLocation: sourceLocation)
    #expect(counters.configurationMismatches == 1, sourceLocation: sourceLocation)
    #expect(counters.reinitializationsStarted.total == 0, sourceLocation: sourceLocation)
    #expect(rig.unavailable == [.configurationRestored], sourceLocation: sourceLocation)
    #expect(
      rig.driver.misreadNanosecondsBeforeLastMismatch == 0, sourceLocation: sourceLocation)
    #expect(rig.board.chip.peek(register) == 0x08, sourceLocation: sourceLocation)
    return rig
  }

  @Test(
    "ACCEL_CONFIG changes at rest: caught at the first sample after, which is withheld",
    arguments: [UInt8(0x18), 0x10, 0x00])  // ±16 g (counts ÷ 4), ±8 g (÷ 2), ±2 g (× 2)
  func accelerometerRangeAtRest(value: UInt8) throws {
    let rig = try caughtEarly(motion: Self.resting, register: 0x1C, value: value)
    // Every sample delivered was read at ±4 g: |a| within 2 % of g.
    for (time, sample) in rig.samples {
      let a = sample.specificForceMetersPerSecondSquared
      let magnitude = (a * a).sum().squareRoot()
      #expect(abs(magnitude / Self.g - 1) < 0.02, "\(time): \(magnitude) m/s²")
    }
    // One sample missing, the one after the change: two periods between its neighbours.
    let period = rig.driver.configuration.samplePeriodNanoseconds
    let gap = gap(rig, around: 2.0015)
    #expect(gap > period * 3 / 2 && gap < period * 5 / 2, "\(gap) ns")
  }

  @Test(
    "GYRO_CONFIG changes while turning at 60 °/s: caught at the first sample after",
    arguments: [UInt8(0x18), 0x10, 0x00])  // ±2000 °/s (÷ 4), ±1000 (÷ 2), ±250 (× 2)
  func gyroRangeWhileTurning(value: UInt8) throws {
    let rig = try caughtEarly(motion: Self.turning, register: 0x1B, value: value)
    // Every sample delivered was read at ±500 °/s: |ω| within 3 % of 60 °/s.
    for (time, sample) in rig.samples {
      let w = sample.angularRateRadiansPerSecond
      let rate = (w * w).sum().squareRoot() / Self.degree
      #expect(abs(rate / 60 - 1) < 0.03, "\(time): \(rate) °/s")
    }
  }

  @Test("GYRO_CONFIG changes while still: no sample shows it; the periodic read-back finds it")
  func gyroRangeWhileStill() throws {
    let rig = try run(
      motion: Self.resting, corruptions: [(seconds: 2.0015, register: 0x1B, value: 0x18)])
    let counters = rig.driver.counters
    #expect(counters.earlyConfigurationChecks == 0)
    #expect(counters.configurationMismatches == 1)
    #expect(rig.unavailable.isEmpty)
    #expect(rig.board.chip.peek(0x1B) == 0x08)
    // The samples since the previous read-back may have been misread: a whole interval.
    #expect(
      rig.driver.misreadNanosecondsBeforeLastMismatch
        == rig.driver.policy.configurationCheckIntervalNanoseconds)
  }

  @Test("an early read-back that finds more than the jump it saw: the whole interval suspect")
  func moreThanTheJump() throws {
    // GYRO_CONFIG changes while still (no sample shows it), then ACCEL_CONFIG 0.3 s later: the
    // accelerometer's jump sets off an early read-back, which finds both. The gyro's samples
    // since the previous read-back were misread, not only the one in hand. (Periodic
    // read-backs every 10 s, so that none comes between: the previous is the start-up's.)
    var policy = MPU6050RecoveryPolicy.default
    policy.configurationCheckIntervalNanoseconds = seconds(10)
    let rig = try run(
      motion: Self.resting,
      corruptions: [
        (seconds: 2.0015, register: 0x1B, value: 0x18),
        (seconds: 2.3015, register: 0x1C, value: 0x18),
      ], policy: policy)
    let counters = rig.driver.counters
    #expect(counters.earlyConfigurationChecks == 1)
    #expect(counters.configurationChecks == 1)
    #expect(counters.configurationMismatches == 2)
    #expect(rig.unavailable == [.configurationRestored])
    // Since the driver began running (start-up ends well after the clock's start, before 2 s).
    let misread = rig.driver.misreadNanosecondsBeforeLastMismatch
    #expect(misread >= seconds(0.3) && misread <= seconds(2.31), "\(misread) ns")
    #expect(rig.board.chip.peek(0x1B) == 0x08 && rig.board.chip.peek(0x1C) == 0x08)
  }

  @Test("a jump too soon after an early read-back defers the next one, not drops it")
  func deferred() throws {
    // While turning at 60 °/s: ACCEL_CONFIG at 2.0015 s is caught at once; GYRO_CONFIG 50 ms
    // later shows a jump the 100 ms interval does not allow yet: the read-back waits for the
    // first burst the interval allows, and finds it then. The samples between were misread:
    // the window is the time since the first read-back, about 100 ms, not a second.
    let rig = try run(
      motion: Self.turning,
      corruptions: [
        (seconds: 2.0015, register: 0x1C, value: 0x18),
        (seconds: 2.0515, register: 0x1B, value: 0x18),
      ])
    let counters = rig.driver.counters
    #expect(counters.earlyConfigurationChecks == 2)
    #expect(counters.configurationMismatches == 2)
    // The first withheld its sample; the deferred one had no jump in hand and withheld none.
    #expect(rig.unavailable == [.configurationRestored])
    let misread = rig.driver.misreadNanosecondsBeforeLastMismatch
    #expect(misread >= seconds(0.1) && misread <= seconds(0.111), "\(misread) ns")
    #expect(rig.board.chip.peek(0x1B) == 0x08 && rig.board.chip.peek(0x1C) == 0x08)
  }

  /// GYRO_CONFIG flips between ±2000 and ±500 °/s every 10 ms for a second while the board
  /// turns: nearly every sample's gyro magnitude jumps 4× one way or the other.
  static let flood: [(seconds: Double, register: UInt8, value: UInt8)] = (0..<100).map {
    (index: Int) -> (seconds: Double, register: UInt8, value: UInt8) in
    let value: UInt8 = index % 2 == 0 ? 0x18 : 0x08
    return (seconds: 2.0015 + Double(index) * 0.01, register: 0x1B, value: value)
  }

  @Test("a flood of suspicious samples: at most one early read-back per 100 ms")
  func rateLimit() throws {
    let rig = try run(motion: Self.turning, corruptions: Self.flood)
    let early = rig.driver.counters.earlyConfigurationChecks
    // One second of flood: one at its first sample, then one per 100 ms at most.
    #expect(early >= 9 && early <= 11, "\(early) early read-backs")
    #expect(rig.driver.state == MPU6050DriverState.running)
    #expect(rig.board.chip.peek(0x1B) == 0x08)

    var off = MPU6050RecoveryPolicy.default
    off.earlyConfigurationCheckMinimumIntervalNanoseconds = nil
    let quiet = try run(motion: Self.turning, corruptions: Self.flood, policy: off)
    #expect(quiet.driver.counters.earlyConfigurationChecks == 0)
    #expect(!quiet.unavailable.contains(MPU6050Unavailable.configurationRestored))
  }
}
