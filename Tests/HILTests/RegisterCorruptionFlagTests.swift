import HIL
import Telemetry
import Testing

/// A control register that changes by itself (the `register-corruption` plan: GYRO_CONFIG
/// turns to ±2000 °/s at 5 s, so the gyro reads 4× small at the default ±500 °/s).
///
/// When the body turns at 30 °/s or more at that moment, the gyro's magnitude drops by a
/// factor near 4 from one sample to the next: the driver reads its configuration back at once
/// (an early read-back), finds GYRO_CONFIG changed, rewrites it and withholds the sample read
/// at the wrong range. No frame with a wrongly scaled sample goes out: the sample is missed,
/// and the next frame says `gap` and `i2cRecovery`. The seed-1 `handheld` run turns fast
/// enough at 5 s, so this is what it shows, exactly.
///
/// When the body is (nearly) still at that moment, nothing in the counts shows the change:
/// the once-a-second read-back is the backstop, and the frames of the samples read meanwhile
/// were sent before anyone knew; the frame after the read-back says so (`i2cRecovery`:
/// FORMATS.md, the second before it suspect), and the estimator, told those samples may have
/// been misread, flags the heading they carried (`headingUncertain`) until the next rest. The
/// seed-1 `tilt` run, whose tip begins at 5 s from rest, shows that. Normal frames carry
/// neither flag.
@Suite struct RegisterCorruptionFlagTests {
  static let seconds = 12.0

  /// The frames as the host decoded them, with their sample times in seconds of motion time.
  func frames(_ scenario: String, _ faults: String) throws -> (
    HILResult, [(t: Double, flags: TelemetryFlags)]
  ) {
    let result = try hil(scenario, faults: faults, seconds: Self.seconds) {
      $0.keepFrames = true
    }
    let start = result.motionStart.nanoseconds
    let frames = result.frames.map {
      (t: Double($0.sampleTimeNanoseconds - start) * 1e-9, flags: $0.flags ?? [])
    }
    return (result, frames)
  }

  @Test func turningTheCorruptedSampleIsWithheldAndTheNextFrameFlagged() throws {
    let (result, frames) = try frames("handheld", "register-corruption")
    let corruption = result.faultStartSeconds
    // Found by one early read-back (no other: the run has no false trigger), one mismatch,
    // rewritten at once.
    #expect(result.injected.chip.registerCorruptions == 1)
    #expect(result.driver.earlyConfigurationChecks == 1)
    #expect(result.driver.configurationMismatches == 1)
    #expect(result.driver.reinitializationsStarted.total == 0)
    // The chip was never seen misconfigured between two loop steps: restored in the step of
    // the first sample after the corruption.
    #expect(result.chipStretchCount == 0)
    // That sample was withheld: one sample missed, one unavailable read.
    #expect(result.status.unavailableReads == 1)
    #expect(result.status.missedSamples == 1)
    // Before the corruption: no recovery, and (after the first rest) a known heading.
    let firstRest = try #require(frames.firstIndex { $0.flags.contains(.rest) })
    let before = frames[firstRest...].filter { $0.t < corruption }
    #expect(before.count > 100)
    #expect(before.allSatisfy { $0.flags.isDisjoint(with: [.i2cRecovery, .headingUncertain]) })
    // The first frame after the corruption is the i2c_recovery frame, and the only one: it
    // comes two sample periods after the last frame before, the missed sample between (gap).
    let after = try #require(frames.firstIndex { $0.t > corruption })
    #expect(frames[after].flags.contains(.i2cRecovery))
    #expect(frames[after].flags.contains(.gap))
    #expect(frames.filter { $0.flags.contains(.i2cRecovery) }.count == 1)
    #expect(abs(frames[after].t - frames[after - 1].t - 0.0201) < 0.001)
    // Nothing delivered was misread, so nothing is distrusted: the heading stays known.
    #expect(frames[after...].allSatisfy { !$0.flags.contains(.headingUncertain) })
  }

  @Test func stillTheOnceASecondReadBackIsTheBackstop() throws {
    let (result, frames) = try frames("tilt", "register-corruption")
    let stretch = try #require(result.chipStretches.first)
    let restored = try #require(stretch.untilSeconds)
    // The tip begins from rest as GYRO_CONFIG changes: no sample shows the change, no early
    // read-back; the periodic one finds it 0.74 s later.
    #expect(result.driver.earlyConfigurationChecks == 0)
    #expect(result.driver.configurationMismatches == 1)
    #expect(abs(stretch.fromSeconds - result.faultStartSeconds) < 0.011)
    #expect(restored - stretch.fromSeconds <= 1.0 + 0.011)
    // Before the corruption: no recovery, and (after the first rest) a known heading.
    let firstRest = try #require(frames.firstIndex { $0.flags.contains(.rest) })
    let before = frames[firstRest...].filter { $0.t < stretch.fromSeconds }
    #expect(before.count > 100)
    #expect(before.allSatisfy { $0.flags.isDisjoint(with: [.i2cRecovery, .headingUncertain]) })
    // The read-back: the frame of the sample read just before it (the same loop step restored
    // the register) says i2c_recovery, and it alone; its heading is flagged.
    let after = try #require(frames.firstIndex { $0.flags.contains(.i2cRecovery) })
    #expect(abs(frames[after].t - restored) < 0.011, "\(frames[after].t) s, restored \(restored) s")
    #expect(frames[after].flags.contains(.headingUncertain))
    #expect(frames.filter { $0.flags.contains(.i2cRecovery) }.count == 1)
    // The frames between the corruption and the read-back went out unflagged: nothing knew.
    // (FORMATS.md tells a reader to take the second before an i2c_recovery frame as suspect.)
    let between = frames.filter { $0.t > stretch.fromSeconds && $0.t < frames[after].t }
    #expect(between.count > 50)
    #expect(between.allSatisfy { !$0.flags.contains(.i2cRecovery) })
    // The heading stays flagged until a rest begins.
    let rest = frames[after...].firstIndex { $0.flags.contains(.rest) } ?? frames.endIndex
    #expect(rest > after + 100, "a rest \((rest - after)) frames after the read-back")
    #expect(frames[after..<rest].allSatisfy { $0.flags.contains(.headingUncertain) })
    if rest < frames.endIndex { #expect(!frames[rest].flags.contains(.headingUncertain)) }
  }

  @Test(arguments: ["handheld", "tilt"])
  func withoutTheFaultNoFrameIsFlagged(_ scenario: String) throws {
    let (result, frames) = try frames(scenario, "none")
    #expect(result.driver.configurationMismatches == 0)
    #expect(result.driver.earlyConfigurationChecks == 0)
    let firstRest = try #require(frames.firstIndex { $0.flags.contains(.rest) })
    #expect(frames.allSatisfy { !$0.flags.contains(.i2cRecovery) })
    #expect(frames[firstRest...].allSatisfy { !$0.flags.contains(.headingUncertain) })
  }
}
