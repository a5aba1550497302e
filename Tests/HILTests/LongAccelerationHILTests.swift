import Firmware
import Geometry
import HIL
import MPU6050Simulation
import MotionScenarios
import PlumbRuntime
import Telemetry
import Testing

/// Issue 23, item 3, on the simulated board: `long-push` and `long-corner` hold 3 m/s² for
/// 30 s after a 10 s rest (ramps of 2 s in and out). The rejection lasts as long as the bias
/// the rest measured lets the gyro carry the attitude (about a minute), so the estimate keeps
/// the tilt through the whole push, flagged rejected, and never recovers; before, it gave up
/// after 10 s and converged to the apparent vertical, 16–18° off.
///
/// The typical unit is run with its own calibration file (`CalibratedHILTests`), as deployed:
/// uncalibrated, its accelerometer's offsets alone tilt every estimate by 1.5–2.5° (seeds 1–5,
/// at rest), which no rejection can help. What the calibration file does not hold — the gyro's
/// scale and cross-axis errors (±3 %, ±2 %; issue 24) — is what the corner adds.
@Suite struct LongAccelerationHILTests {
  enum Unit: String, CaseIterable, Sendable { case noisy, calibratedTypical }

  struct Run {
    var motion: SustainedAcceleration
    var frames: [HILFrame]
    /// Motion seconds of a frame (the board's clock starts at 1 s of motion time).
    func seconds(_ frame: HILFrame) -> Double { Double(frame.sampleTimeNanoseconds) * 1e-9 - 1 }
    /// Angle between the estimated and the true gravity direction, degrees.
    func inclinationError(_ frame: HILFrame) -> Double {
      let truth = motion.truth(atSeconds: seconds(frame)).attitude
      return frame.attitude.gravityInBody.angle(to: truth.gravityInBody) * 180 / .pi
    }
    /// The frames from the rejection's detection to the end of the ramp down, and the worst
    /// inclination error over them and over the whole push.
    var push: (detected: Double, held: Double, worst: Double, frames: [HILFrame]) {
      let start = motion.restSeconds
      let end = start + motion.holdSeconds + 4
      let during = frames.filter { seconds($0) >= start && seconds($0) < end }
      let first =
        during.firstIndex { $0.flags?.contains(.accelerationRejected) == true } ?? during.count
      let held = during[first...].map(inclinationError).max() ?? .infinity
      let detected = first < during.count ? seconds(during[first]) : .infinity
      return (detected, held, during.map(inclinationError).max() ?? .infinity, during)
    }
  }

  func play(_ scenario: String, unit: Unit, seed: UInt64) throws -> Run {
    let entry = try #require(ScenarioCatalog.entry(named: scenario))
    let seconds = try #require(entry.naturalSeconds)
    let motion = try #require(entry.make(1, seconds) as? SustainedAcceleration)
    let result = try hil(scenario, seconds: seconds, seed: seed) {
      $0.keepFrames = true
      switch unit {
      case .noisy: $0.unit = .noisy(seed: seed)
      case .calibratedTypical:
        $0.unit = .typical(seed: seed)
        $0.calibration = try? FirmwareCalibration(
          CalibratedHILTests.exactCalibration(seed: seed))
      }
    }
    return Run(motion: motion, frames: result.frames)
  }

  /// What both scenarios must show: the rejection detected before the ramp is 0.5 s past its
  /// end, the inclination error within 2° from there to the end of the push, and no recovery.
  func expectTheTiltHeld(_ run: Run, _ label: String) {
    let push = run.push
    #expect(
      push.detected < run.motion.restSeconds + 2.5, "\(label): detected at \(push.detected) s")
    #expect(push.held < 2, "\(label): \(push.held)° from the detection on")
    #expect(!run.frames.contains { $0.flags?.contains(.recovering) == true }, "\(label)")
  }

  /// The push: from the detection to the end of the ramp down the inclination error stays
  /// within 2° (0.70–0.75° measured, seeds 1–3, both units, with 0.2 s blocks and the
  /// detection block's corrections undone; 0.84–0.87° at 0.1 s blocks), the hold is flagged
  /// rejected throughout, nothing recovers, and the rest after it
  /// finds the tilt where it was. The detector's one-second filter sees the 2 s ramp only once
  /// it has ended (2.2–2.3 s after it began): until then the accelerometer pulls the estimate
  /// by up to 2.4° (2.33–2.49° measured), which the onset's undo turns back.
  @Test(arguments: Unit.allCases, [1, 2, 3] as [UInt64])
  func aLongPushKeepsTheTiltWithinTwoDegrees(unit: Unit, seed: UInt64) throws {
    let run = try play("long-push", unit: unit, seed: seed)
    expectTheTiltHeld(run, "\(unit) seed \(seed)")
    let push = run.push
    #expect(push.worst < 2.6, "\(unit): \(push.worst)° over the push")
    let hold = push.frames.filter {
      run.seconds($0) > run.motion.restSeconds + 3
        && run.seconds($0) < run.motion.restSeconds + run.motion.holdSeconds + 2
    }
    #expect(hold.count > 2500)
    #expect(hold.allSatisfy { $0.flags?.contains(.accelerationRejected) == true }, "\(unit)")
    // And the rest after the push finds the tilt where it was.
    let after = run.frames.filter { run.seconds($0) > run.motion.durationSeconds! - 4 }
    #expect(after.allSatisfy { $0.flags?.contains(.rest) == true })
    #expect(after.map(run.inclinationError).max()! < 1, "\(unit) after the push")
  }

  /// The corner: the car turns 367° while 3 m/s² acts across it, and the gyro alone carries the
  /// attitude through the turn. With the noisy unit (exact gyro scale) the push's figures hold
  /// (0.65–0.66° from the detection on, seeds 1–3). The calibrated typical unit's gyro scale
  /// and cross-axis errors, which its calibration file does not hold, add a tilt error that
  /// grows and shrinks with the turn: 1.09–1.28° (seeds 1–3), still within 2°. Uncalibrated,
  /// the typical units reach 2.3–3.4° (their accelerometer's errors on top; README's table),
  /// which is why the calibrated unit is the one held to 2° here.
  @Test(arguments: Unit.allCases, [1, 2, 3] as [UInt64])
  func aLongCornerKeepsTheTiltAsFarAsTheGyroScaleAllows(unit: Unit, seed: UInt64) throws {
    expectTheTiltHeld(try play("long-corner", unit: unit, seed: seed), "\(unit) seed \(seed)")
  }

  /// Before the first rest: `power-on-push` starts pushing 1.5 s into the scenario, 0.7 s after
  /// the estimator's first sample and before a rest could be taken (1.5 s of quiet), and holds
  /// 3 m/s² for 30 s. With its calibration file (the bias known to 1e-4 rad/s, the
  /// accelerometer's errors removed) the typical unit holds the tilt as after a rest (seeds
  /// 1–3: detected 0.2 s after the ramp's end, 0.62–0.65° from there on, 2.55–2.64° over the
  /// onset), with no rest before the push's end. An uncalibrated unit cannot (its bias would
  /// be allowed 0.4 s of rejection): the push is, to it, a 17° tilt, which the rest it then
  /// takes confirms (estimator README, Limits).
  @Test(arguments: [1, 2, 3] as [UInt64])
  func aCalibratedUnitHoldsTheTiltThroughAPushFromPowerOn(seed: UInt64) throws {
    let run = try play("power-on-push", unit: .calibratedTypical, seed: seed)
    expectTheTiltHeld(run, "seed \(seed)")
    let end = run.motion.restSeconds + run.motion.holdSeconds + 4
    #expect(!run.frames.contains { run.seconds($0) < end && $0.flags?.contains(.rest) == true })
    let hold = run.push.frames.filter {
      run.seconds($0) > run.motion.restSeconds + 3 && run.seconds($0) < end - 2
    }
    #expect(hold.count > 2500)
    #expect(hold.allSatisfy { $0.flags?.contains(.accelerationRejected) == true })
  }
}
