import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 23, item 3: long accelerations. A rejection lasts as long as the gyro bias's
/// uncertainty lets the gyro carry the attitude (3σ_h · t ≤ atan(a_low/g) = 8.7°, at least the
/// recovery time), flagged `.accelerationRejected` while it lasts and `.recovering` when it
/// gives up; and it needs no rest first, only a bias known well enough (a calibration file).
@Suite struct LongAccelerationTests {
  /// A unit with seed 001's gyro bias, the datasheet's noise and a calibration file that knows
  /// the bias to `sigmaDegreesPerSecond` (1σ per axis), started level with the push ramping up
  /// as the start-up second ends: 3 m/s² along x (`.straight`) or across a car turning in a
  /// loop (`.corner`), held for `holdSeconds`.
  func calibratedStart(
    _ kind: SustainedAcceleration.Kind, sigmaDegreesPerSecond: Double, holdSeconds: Double = 30
  ) -> (SustainedAcceleration, [RunSample]) {
    let bias = InertialSensorModel.Settings.seed001.gyroBiasRadiansPerSecond
    var sensor = InertialSensorModel.Settings.seed001
    sensor.gyroBiasRandomWalk = 1e-5
    var settings = AttitudeEstimator.Settings.default
    settings.bias = .calibrated(
      biasRadiansPerSecond: bias, uncertaintyRadiansPerSecond: radians(sigmaDegreesPerSecond))
    let motion = SustainedAcceleration(kind: kind, holdSeconds: holdSeconds, restSeconds: 1)
    return (motion, run(motion, sensor: sensor, seed: 3, settings: settings))
  }

  /// Before its first rest, a calibrated unit (bias known to 0.05 °/s) holds the tilt through
  /// 30 s of 3 m/s² — straight or cornering — within 2° from the detection on, flagged
  /// rejected throughout the hold and never recovering. (Before issue 23's item 3 the
  /// rejection gave up after 10 s and the estimate converged to the apparent vertical, 17°
  /// off.) The detector's one-second filter sees the 2 s ramp only as it ends: until then the
  /// accelerometer pulls the estimate by up to 2.3°, which the onset's undos turn back to
  /// well under 1°.
  @Test(arguments: [SustainedAcceleration.Kind.straight, .corner])
  func aCalibratedUnitHoldsTheTiltThroughAPushBeforeItsFirstRest(
    kind: SustainedAcceleration.Kind
  ) {
    let (motion, samples) = calibratedStart(kind, sigmaDegreesPerSecond: 0.05)
    let pushEnd = motion.restSeconds + motion.holdSeconds + 4
    let push = samples.filter { $0.truth.timeSeconds < pushEnd }
    // No rest before or during the push: this is all before the first rest.
    #expect(!push.contains { $0.estimate.flags.contains(.atRest) })
    let worst = push.map(\.gravityErrorDegrees).max()!
    #expect(worst < 2.5, "\(kind): worst inclination error \(worst)° before the first rest")
    let detected = push.firstIndex { $0.estimate.flags.contains(.accelerationRejected) } ?? 0
    let detectedSeconds = push[detected].truth.timeSeconds
    #expect(detectedSeconds < motion.restSeconds + 2.5, "\(kind): detected at \(detectedSeconds) s")
    let held = push[detected...].map(\.gravityErrorDegrees).max()!
    #expect(held < 2, "\(kind): worst inclination error \(held)° from the detection on")
    let hold = push.filter {
      $0.truth.timeSeconds > motion.restSeconds + 3 && $0.truth.timeSeconds < pushEnd - 2
    }
    #expect(hold.allSatisfy { $0.estimate.flags.contains(.accelerationRejected) }, "\(kind)")
    #expect(!samples.contains { $0.estimate.flags.contains(.recovering) }, "\(kind)")
  }

  /// The onset's undo turns back every correction the acceleration caused before it was seen,
  /// the block it was detected in too: that block pulls the most, since the pull of a ramping
  /// acceleration grows until the detector sees it. Left standing (the block's corrections were
  /// counted as recent only after the detector's decision), the second after the undo reached
  /// 1.20° straight and 1.37° cornering; with it turned back, 0.69° and 0.85°.
  @Test(arguments: [SustainedAcceleration.Kind.straight, .corner])
  func theOnsetsUndoTurnsBackTheDetectionBlockToo(kind: SustainedAcceleration.Kind) {
    let (_, samples) = calibratedStart(kind, sigmaDegreesPerSecond: 0.05)
    let detected = samples.firstIndex { $0.estimate.flags.contains(.accelerationRejected) } ?? 0
    let before = samples[detected - 1].gravityErrorDegrees
    let after = samples[detected...].prefix(100).map(\.gravityErrorDegrees).max()!
    #expect(before > 1.5, "\(kind): \(before)° pulled before the detection")
    #expect(after < 1, "\(kind): \(after)° in the second after the undo")
  }

  /// The rejection lasts as long as the uncertainty allows, and says so: rejected until
  /// 3σ_h · t reaches atan(1.5/g) = 8.7° (σ_h the reported uncertainty of the bias's
  /// horizontal part, t from the detection), then recovering; never both flags at once. A bias
  /// known to 0.3 °/s (σ_h = 0.42 °/s) cannot carry the shortest rejection, 10 s: it is never
  /// rejected before its first rest, and never flagged.
  @Test(arguments: [0.03, 0.08, 0.3])
  func theRejectionLastsAsLongAsTheBiasUncertaintyAllows(sigma: Double) {
    let (_, samples) = calibratedStart(.straight, sigmaDegreesPerSecond: sigma, holdSeconds: 150)
    #expect(
      !samples.contains {
        $0.estimate.flags.isSuperset(of: [.accelerationRejected, .recovering])
      })
    let detected = samples.firstIndex { $0.estimate.flags.contains(.accelerationRejected) }
    let recovery = samples.firstIndex { $0.estimate.flags.contains(.recovering) }
    if sigma > 0.29 / 2.squareRoot() {
      // The steady push is then a tilt, and the rest it takes re-anchors there (as
      // `anUncalibratedUnitBeforeItsFirstRestDoesNotReject`); what follows is another story.
      let firstRest = samples.firstIndex { $0.estimate.flags.contains(.atRest) }!
      #expect((detected ?? firstRest) >= firstRest && (recovery ?? firstRest) >= firstRest)
      return
    }
    guard let start = detected, let end = recovery else {
      Issue.record(
        "σ \(sigma) °/s: rejection \(String(describing: detected)), recovery \(String(describing: recovery))"
      )
      return
    }
    let seconds = samples[end].truth.timeSeconds - samples[start].truth.timeSeconds
    let u = samples[end].estimate.gyroBiasUncertaintyRadiansPerSecond
    let carried = degrees(3 * (u.x * u.x + u.y * u.y).squareRoot() * seconds)
    let budget = degrees(atan(1.5 / 9.80665))
    #expect(seconds > 10, "σ \(sigma) °/s: recovery after \(seconds) s")
    #expect(abs(carried - budget) < 0.05 * budget, "σ \(sigma): 3σ·t \(carried)° at recovery")
    // Rejected without a break from detection to recovery, and the gyro held the tilt.
    #expect(
      samples[start..<end].allSatisfy { $0.estimate.flags.contains(.accelerationRejected) })
    let held = samples[start..<end].map(\.gravityErrorDegrees).max()!
    #expect(held < 2, "σ \(sigma) °/s: worst error while rejecting \(held)°")
  }

  /// An uncalibrated unit before its first rest (σ = 6.7 °/s per axis: 0.4 s of rejection
  /// allowed, less than the 10 s the shortest rejection needs) trusts the accelerometer and
  /// flags nothing: its bias would tilt the estimate by more than the detector's threshold. A
  /// steady push with no rotation is then, to it, a tilt (17° here); the rest it then takes
  /// (quiet and stationary, and within 5° plus 3σ·τ of the estimate) re-anchors it there.
  @Test func anUncalibratedUnitBeforeItsFirstRestDoesNotReject() {
    let motion = SustainedAcceleration(kind: .straight, restSeconds: 1)
    let samples = run(motion, sensor: .seed001, seed: 3)
    let firstRest = samples.firstIndex { $0.estimate.flags.contains(.atRest) } ?? samples.count
    #expect(firstRest > 300)
    #expect(
      !samples[..<firstRest].contains {
        !$0.estimate.flags.isDisjoint(with: [.accelerationRejected, .recovering])
      })
  }

  /// An acceleration the estimate took for gravity — held past what the gyro could carry
  /// (seed 001's push for 100 s: recovery after about 50 s), or one an uncalibrated unit
  /// started in — ends, and the reading turns back to gravity: to the detector that is as
  /// sudden as an onset, but the reading grew shorter, not longer, so it is not rejected
  /// (which would hold the estimate at the apparent vertical for another minute); it is
  /// trusted and flagged `.recovering`, and the estimate is back within 2° in 10 s.
  @Test(arguments: [true, false])
  func theEndOfAnAccelerationTakenForGravityIsTrusted(calibrated: Bool) {
    var settings = AttitudeEstimator.Settings.default
    if !calibrated {
      settings.bias = .calibrated(
        biasRadiansPerSecond: .zero, uncertaintyRadiansPerSecond: radians(20.0 / 3))
    }
    let push = PushScenario(
      accelerationMetersPerSecondSquared: Vector3(3, 0, 0), startSeconds: calibrated ? 2 : 1.2,
      endSeconds: 100, totalSeconds: 130)
    let samples = run(push, sensor: .seed001, seed: 4, settings: settings)
    // Taken for gravity by the end (recovered, or never rejected uncalibrated).
    let before = samples.last { $0.truth.timeSeconds < 100 }!
    #expect(before.gravityErrorDegrees > 15, "\(before.gravityErrorDegrees)°")
    let after = samples.filter { $0.truth.timeSeconds >= 100 && $0.truth.timeSeconds < 110 }
    #expect(!after.contains { $0.estimate.flags.contains(.accelerationRejected) })
    #expect(after.prefix(300).contains { $0.estimate.flags.contains(.recovering) })
    let settled = samples.filter { $0.truth.timeSeconds >= 110 }
    #expect(settled.map(\.gravityErrorDegrees).max()! < 2)
  }
}
