import Geometry
import HIL
import MotionScenarios
import Testing

/// Issue 23, item 1, on the simulated board: `power-on-turning` switches the board on while it
/// turns at 2 °/s about an axis 60° from the vertical, its die warming, for a minute; then it
/// stops, rests 20 s, turns 90° about the vertical and rests. The steady turn is quiet and
/// stationary, so it used to be taken for a rest that wrote the rotation into the bias with a
/// tight uncertainty: then every true rest was refused as a slow turn and the heading ran away.
@Suite struct PowerOnTurningHILTests {
  @Test(arguments: ["typical", "noisy"])
  func theFirstRestComesAfterTheStopAndMeasuresTheBias(unit: String) throws {
    let entry = try #require(ScenarioCatalog.entry(named: "power-on-turning"))
    let seconds = try #require(entry.naturalSeconds)
    let motion = try #require(entry.make(1, seconds) as? PowerOnInSlowRotation)
    let result = try hil("power-on-turning", seconds: seconds) {
      $0.keepFrames = true
      $0.unit = unit == "typical" ? .typical(seed: 1) : .noisy(seed: 1)
    }
    // The self-test passes while turning slowly (its difference of two readings cancels a
    // steady rate).
    #expect(result.startup?.selfTest.passed == true)
    // The frames' sample times are the board's clock, which starts at 1 s of motion time.
    func motionSeconds(_ frame: HILFrame) -> Double {
      Double(frame.sampleTimeNanoseconds) * 1e-9 - 1
    }
    let stop = motion.turnSeconds + motion.stopSeconds
    let turning = result.frames.filter { motionSeconds($0) < stop }
    let resting = result.frames.filter {
      motionSeconds($0) >= stop && motionSeconds($0) < stop + motion.restSeconds
    }
    #expect(turning.count > 5000 && resting.count > 1500)
    // No rest while it turns, and the heading is flagged uncertain all the while: nothing
    // measured the bias about the vertical.
    #expect(!turning.contains { $0.flags?.contains(.rest) == true })
    #expect(turning.allSatisfy { $0.flags?.contains(.headingUncertain) == true })
    // The rest after the stop is found within 3 s (1.5 s of quiet samples, plus the window's
    // restart after the slowing), and then the heading is trusted.
    let firstRest = try #require(resting.firstIndex { $0.flags?.contains(.rest) == true })
    #expect(motionSeconds(resting[firstRest]) < stop + 3)
    #expect(resting.last?.flags?.contains(.headingUncertain) == false)
    // The bias it measured holds: the 90° turn after it keeps its heading, and the limits a
    // CI job would set hold.
    // The heading error (estimate against truth, about the reference vertical) changes by
    // less than a degree from the end of that rest to the end of the run.
    func headingError(_ frame: HILFrame) -> Double {
      let truth = motion.truth(atSeconds: motionSeconds(frame)).attitude
      return (frame.attitude * truth.conjugate).heading * 180 / .pi
    }
    // (The typical unit's gyro scale errors, up to ±3 % (PS §6.1), alone are 2.7° of 90°.)
    let drift = headingError(result.frames.last!) - headingError(resting.last!)
    #expect(
      abs(drift) < (unit == "typical" ? 3.5 : 0.5), "heading drift over the 90° turn \(drift)°")
    // Frames flagged at rest while moving: only the first moments of the 90° turn, whose
    // smoothstep starts from a standstill (a rest ends when the motion exceeds the noise).
    for limit in ["false_rest_frames=30", "bias_final_dps=0.1"] {
      let verdict = try HILLimit(parsing: limit).verdict(on: result)
      #expect(verdict.passed, "\(verdict.line)")
    }
  }
}
