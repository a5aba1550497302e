import HIL
import Telemetry
import Testing

/// A control register that changes by itself (the `register-corruption` plan: GYRO_CONFIG
/// turns to ±2000 °/s at 5 s, so the gyro reads 8× small) is found by the driver's
/// once-a-second read-back. The frames of the samples read meanwhile were sent before anyone
/// knew; the frame after the read-back says so (`i2cRecovery`: FORMATS.md, the second before
/// it suspect), and the estimator, told those samples may have been misread, flags the
/// heading they carried (`headingUncertain`) until the next rest. Normal frames carry neither.
@Suite struct RegisterCorruptionFlagTests {
  static let seconds = 12.0

  /// The frames as the host decoded them, with their sample times in seconds of motion time.
  func frames(_ faults: String) throws -> (HILResult, [(t: Double, flags: TelemetryFlags)]) {
    let result = try hil("handheld", faults: faults, seconds: Self.seconds) {
      $0.keepFrames = true
    }
    let start = result.motionStart.nanoseconds
    let frames = result.frames.map {
      (t: Double($0.sampleTimeNanoseconds - start) * 1e-9, flags: $0.flags ?? [])
    }
    return (result, frames)
  }

  @Test func theFrameAfterTheReadBackIsFlaggedAndTheHeadingUntilARest() throws {
    let (result, frames) = try frames("register-corruption")
    let stretch = try #require(result.chipStretches.first)
    let restored = try #require(stretch.untilSeconds)
    #expect(result.driver.configurationMismatches >= 1)
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
    #expect(frames[after].t - stretch.fromSeconds <= 1.0 + 0.011)
    // The heading stays flagged until a rest begins.
    let rest = frames[after...].firstIndex { $0.flags.contains(.rest) } ?? frames.endIndex
    #expect(rest > after + 100, "a rest \((rest - after)) frames after the read-back")
    #expect(frames[after..<rest].allSatisfy { $0.flags.contains(.headingUncertain) })
    if rest < frames.endIndex { #expect(!frames[rest].flags.contains(.headingUncertain)) }
  }

  @Test func withoutTheFaultNoFrameIsFlagged() throws {
    let (result, frames) = try frames("none")
    #expect(result.driver.configurationMismatches == 0)
    let firstRest = try #require(frames.firstIndex { $0.flags.contains(.rest) })
    #expect(frames.allSatisfy { !$0.flags.contains(.i2cRecovery) })
    #expect(frames[firstRest...].allSatisfy { !$0.flags.contains(.headingUncertain) })
  }
}
