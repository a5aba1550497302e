import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// 100 Hz timestamps over `seconds`, without those in `gap` (the samples a stalled bus, a
/// re-initialised chip or a suspended host never delivered).
private func timestamps(seconds: Double, gap: ClosedRange<Double>) -> [Int64] {
  (0..<Int(seconds * 100)).compactMap { k in
    let t = Double(k) * 0.01
    return gap.contains(t) ? nil : Int64(k) * 10_000_000
  }
}

/// After a long gap in the samples the gyro has not seen what the body did. A board that tilts
/// while no sample comes, and is still when they come back, used to keep its old attitude: the
/// accelerometer's disagreement looked like a sustained acceleration, was rejected for the 10 s
/// of recovery, then converged with τ (`plumb-hil run tilt --faults bus-lockup --unit noisy`:
/// 25° RMS over a minute). The tilt now restarts from the accelerometer when the gap may have
/// tilted the body — but not when the reading after it carries an acceleration, which would
/// restart it wrong.
@Suite struct GapReacquisitionTests {
  /// The whole 60° tilt happens inside a 1.7 s gap; the board is still on both sides of it.
  @Test func aTiltMadeWhollyInsideAGapIsReacquired() {
    let tilt = TiltScenario(startSeconds: 5, totalSeconds: 20)
    let samples = run(tilt, timestamps: timestamps(seconds: 20, gap: 4.95...6.65))
    let first = samples.firstIndex { $0.truth.timeSeconds > 6.6 }!
    #expect(samples[first].estimate.flags.isSuperset(of: [.gap, .initialising]))
    #expect(samples[first].estimate.missedSamples == 171)
    let after = samples.filter { $0.truth.timeSeconds >= 7.8 }
    let worst = after.map(\.gravityErrorDegrees).max()!
    #expect(worst < 1, "worst inclination error from 1.2 s after the gap: \(worst)°")
    // The heading is kept: the tilt is about x, so the restart adds no twist about z.
    let q = samples.last!.estimate.attitude
    let yaw = 2 * atan2(q.z, q.w)
    #expect(abs(degrees(yaw)) < 0.5, "yaw \(degrees(yaw))°")
  }

  /// A gap in the middle of the tilt: the rate after it (57.6 °/s) carried over the 0.5 s gap
  /// gives 28.8° of the 40.8° turned. The rate says the body was turning: reacquired.
  @Test func aGapInTheMiddleOfARotationIsReacquired() {
    let tilt = TiltScenario(startSeconds: 5, totalSeconds: 20)
    let samples = run(
      tilt, sensor: .seed001, seed: 7, timestamps: timestamps(seconds: 20, gap: 5.305...5.795))
    let first = samples.firstIndex { $0.truth.timeSeconds > 5.79 }!
    #expect(samples[first].estimate.flags.contains(.initialising))
    let worst = samples.filter { $0.truth.timeSeconds >= 7.5 }.map(\.gravityErrorDegrees).max()!
    #expect(worst < 1, "worst inclination error from 1.7 s after the gap: \(worst)°")
  }

  /// A push that begins while no sample comes: after the gap the reading points 16.7° away
  /// from gravity, but it is 4.4 % longer than gravity — an acceleration, not a tilt. The
  /// carried attitude is kept and the rejection holds it through the push, as without the gap
  /// (2.1°). (The inclination filter used to run over the gap as if the reading after it had
  /// held all along, one step of the gap's length toward the push: 5.5°.)
  @Test func aPushThatBeginsInsideAGapIsNotTakenForATilt() {
    let push = PushScenario(startSeconds: 5, endSeconds: 10, totalSeconds: 15)
    let samples = run(
      push, sensor: .seed001, seed: 4, timestamps: timestamps(seconds: 15, gap: 4.95...6.65))
    let after = samples.filter { $0.truth.timeSeconds > 6.6 }
    #expect(!after.contains { $0.estimate.flags.contains(.initialising) })
    let worst = samples.map(\.gravityErrorDegrees).max()!
    #expect(worst < 3, "worst inclination error \(worst)°")
  }

  /// Gaps shorter than `reacquisitionGapSeconds` (0.2 s) are carried by the gyro, and a
  /// setting of ∞ never restarts.
  @Test func shortGapsAndInfinityDoNotRestart() {
    let tilt = TiltScenario(startSeconds: 5, totalSeconds: 12)
    let short = run(tilt, timestamps: timestamps(seconds: 12, gap: 5.305...5.455))
    #expect(
      !short.contains { $0.truth.timeSeconds > 2 && $0.estimate.flags.contains(.initialising) })
    var never = AttitudeEstimator.Settings.default
    never.inclination.reacquisitionGapSeconds = .infinity
    #expect(never.problem == nil)
    let long = run(
      tilt, settings: never, timestamps: timestamps(seconds: 12, gap: 4.95...6.65))
    #expect(
      !long.contains { $0.truth.timeSeconds > 2 && $0.estimate.flags.contains(.initialising) })
  }

  @Test(arguments: [0.0, -1, .nan])
  func aGapThatIsNotPositiveIsRefused(seconds: Double) {
    var settings = AttitudeEstimator.Settings.default
    settings.inclination.reacquisitionGapSeconds = seconds
    #expect(settings.problem?.contains("gap") == true)
  }

  /// Samples the driver later finds were converted with a wrong scale (a corrupted full-scale
  /// register: the gyro read 8× small while the board tipped 60°): told so, the estimator judges
  /// the next sample as after a gap of that length and restarts the tilt; not told, it stays
  /// 50° off.
  @Test func distrustedSamplesRestartTheTilt() {
    func run(distrust: Bool) -> Double {
      var estimator = AttitudeEstimator()
      let tilt = TiltScenario(startSeconds: 5, totalSeconds: 12)
      var last: AttitudeEstimate?
      for k in 0..<1200 {
        let t = Double(k) * 0.01
        let truth = tilt.truth(atSeconds: t)
        // From 5 s to 5.7 s the rates arrive 8× small.
        let scale = t >= 5 && t < 5.7 ? 0.125 : 1
        if distrust && k == 570 { estimator.distrustRecentSamples(seconds: 1) }
        last = estimator.update(
          InertialSample(
            timestampNanoseconds: Int64(k) * 10_000_000,
            angularRateRadiansPerSecond: truth.angularRateRadiansPerSecond * scale,
            specificForceMetersPerSecondSquared: truth.specificForceMetersPerSecondSquared,
            temperatureCelsius: 25))
        if k == 700 { break }
      }
      let truth = tilt.truth(atSeconds: 7)
      return degrees(last!.gravityInBody.angle(to: truth.attitude.gravityInBody))
    }
    #expect(run(distrust: false) > 20)
    let told = run(distrust: true)
    #expect(told < 1, "\(told)° 1.3 s after the restart")
  }

  /// The count is kept, for a status report.
  @Test func reacquisitionsAreCounted() {
    var estimator = AttitudeEstimator()
    var t: Int64 = 0
    func feed(_ n: Int, force: Vector3) {
      for _ in 0..<n {
        _ = estimator.update(
          InertialSample(
            timestampNanoseconds: t, angularRateRadiansPerSecond: .zero,
            specificForceMetersPerSecondSquared: force))
        t += 10_000_000
      }
    }
    feed(300, force: Vector3(0, 0, 9.80665))
    t += 1_000_000_000
    // On its side after the gap: 90° from the gravity the filter expects, and 1 g long.
    feed(100, force: Vector3(0, 9.80665, 0))
    #expect(estimator.gapReacquisitions == 1)
  }
}

/// `.headingUncertain`: the heading may drift by more than 6° a minute, because the gyro bias
/// about the vertical is not known to 0.1 °/s — so that a user does not trust a yaw that an
/// uncalibrated gyro (up to ±20 °/s) turns until its first rest.
@Suite struct HeadingUncertainFlagTests {
  func flags(settings: AttitudeEstimator.Settings, seconds: Double) -> [EstimateFlags] {
    var estimator = AttitudeEstimator(settings: settings)
    return (0..<Int(seconds * 100)).map { k in
      estimator.update(
        InertialSample(
          timestampNanoseconds: Int64(k) * 10_000_000,
          angularRateRadiansPerSecond: Vector3(0.001, -0.002, 0.05) + Vector3(1, -1, 1)
            * (0.0005 * sin(Double(k) * 1.3)),
          specificForceMetersPerSecondSquared: Vector3(0, 0, 9.80665))
      ).flags
    }
  }

  @Test func anUncalibratedGyroIsUncertainUntilItsFirstRest() throws {
    let f = flags(settings: .default, seconds: 5)
    #expect(f[50].contains(.headingUncertain))
    let rest = try #require(f.firstIndex { $0.contains(.atRest) })
    #expect(f[..<rest].allSatisfy { $0.contains(.headingUncertain) })
    #expect(f[(rest + 20)...].allSatisfy { !$0.contains(.headingUncertain) })
  }

  @Test func aCalibratedGyroIsNot() {
    var settings = AttitudeEstimator.Settings.default
    settings.bias = .calibrated(
      biasRadiansPerSecond: Vector3(0.001, -0.002, 0.05), uncertaintyRadiansPerSecond: 0.0005)
    #expect(flags(settings: settings, seconds: 3).allSatisfy { !$0.contains(.headingUncertain) })
  }
}
