import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Seed 001's scenarios and its τ trade-off table.
@Suite struct ComplementaryFilterTests {
  /// Seed 001: a 60° tilt in one second. The gyro carries the estimate through it; the plain
  /// low-pass of the accelerometer lagged 28.7°. Bound: 1°.
  @Test(arguments: [InertialSensorModel.Settings.perfect, .seed001])
  func tiltIsTrackedWithinOneDegree(sensor: InertialSensorModel.Settings) {
    let samples = run(TiltScenario(), sensor: sensor, seed: 3)
    let worst = samples.map(\.gravityErrorDegrees).max()!
    #expect(worst <= 1.0, "max gravity-direction error \(worst)°")
    // The tilt really happened (the estimate is not just level).
    let end = samples.last!.estimate.gravityInBody
    #expect(abs(degrees(end.angle(to: Vector3(0, 0, -1))) - 60) < 1)
  }

  /// Seed 001: a level body pushed at 0.3 g for 5 s looks exactly like a 16.7° tilt to the
  /// accelerometer. The plain filter (τ = 0.5 s) follows it all the way; the estimator's
  /// sustained-acceleration rejection keeps the error within 3°.
  @Test(arguments: [InertialSensorModel.Settings.perfect, .seed001])
  func sustainedPushIsRejected(sensor: InertialSensorModel.Settings) {
    let samples = run(PushScenario(), sensor: sensor, seed: 4)
    let worst = samples.map(\.gravityErrorDegrees).max()!
    #expect(worst <= 3.0, "max gravity-direction error \(worst)°")
    #expect(samples.contains { $0.estimate.flags.contains(.accelerationRejected) })
    let plain = run(
      PushScenario(), sensor: sensor, seed: 4, settings: .plain(timeConstantSeconds: 0.5))
    #expect(abs(plain.map(\.gravityErrorDegrees).max()! - 16.7) < 0.2)
  }

  /// Rejection lasts as long as the gyro can carry the attitude, then gives way: recovery
  /// (`.recovering`, the accelerometer trusted again) comes when 3σ of the horizontal bias times
  /// the time rejected reaches the tilt of the smallest rejected acceleration
  /// (atan(1.5 / g) = 8.7°), never before the recovery time (10 s); and a push that never ends
  /// is, in the end, taken for gravity (seed 001's fundamental limit) — instead of the estimate
  /// trusting a drifting gyro forever.
  @Test func prolongedRejectionRecoversWhenTheGyroCanNoLongerCarryIt() {
    let long = PushScenario(startSeconds: 2, endSeconds: 90, totalSeconds: 90)
    let samples = run(long, sensor: .seed001, seed: 6)
    let firstRecovery = samples.firstIndex { $0.estimate.flags.contains(.recovering) }
    #expect(firstRecovery != nil)
    if let i = firstRecovery {
      let seconds = samples[i].truth.timeSeconds - 2
      let u = samples[i].estimate.gyroBiasUncertaintyRadiansPerSecond
      let carried = degrees(3 * (u.x * u.x + u.y * u.y).squareRoot() * seconds)
      let budget = degrees(atan(1.5 / 9.80665))
      #expect(seconds > 10, "recovery after \(seconds) s of push")
      // Measured from the push's start, a second before the detector's rejection starts.
      #expect(carried >= budget && carried < 1.1 * budget, "3σ·t \(carried)° at recovery")
      // Until then the gyro held the attitude.
      let held = samples[..<i].map(\.gravityErrorDegrees).max()!
      #expect(held < 3, "worst error while rejecting \(held)°")
    }
    // The estimate ends up following the push (16.7° from the true vertical).
    #expect(abs(samples.last!.gravityErrorDegrees - 16.7) < 1.5)
  }

  /// Seed 001: a vertical 2 Hz bounce changes the reading's size, not its direction.
  @Test func verticalBounceDoesNotTilt() {
    let samples = run(WalkScenario(), sensor: .seed001, seed: 5)
    #expect(samples.map(\.gravityErrorDegrees).max()! < 1.0)
    // The bounce is recovered as linear acceleration along the vertical (0.3 g amplitude).
    let vertical = samples.suffix(400).map {
      -$0.estimate.linearAccelerationMetersPerSecondSquared.dot($0.estimate.gravityInBody)
    }
    let amplitude = vertical.map(abs).max()!
    #expect(abs(amplitude - 0.3 * 9.80665) < 0.3)
  }

  /// Seed 001's table for the plain filter (first order, no rejection, no bias estimation):
  /// the push error after 5 s, and the steady error a gyro bias b⊥ = 0.002236 rad/s leaves
  /// on a still body, for τ = 0.5, 2, 5 and 20 s. Reproduced within 0.25°.
  @Test(arguments: [
    (0.5, 16.70, 0.063), (2.0, 15.47, 0.255), (5.0, 10.79, 0.639), (20.0, 3.80, 2.551),
  ])
  func plainFilterReproducesTheTimeConstantTable(tau: Double, push: Double, bias: Double) {
    let settings = AttitudeEstimator.Settings.plain(timeConstantSeconds: tau)
    let pushed = run(PushScenario(), settings: settings)
    let pushError = pushed.map(\.gravityErrorDegrees).max()!
    #expect(abs(pushError - push) <= 0.25, "τ \(tau): push error \(pushError)°, seed \(push)°")

    let biased = InertialSensorModel.Settings(
      gyroBiasRadiansPerSecond: Vector3(0.002, 0.001, 0.003))
    let still = run(
      PushScenario(startSeconds: 1000, endSeconds: 1000, totalSeconds: 120), sensor: biased,
      settings: settings)
    let biasError = still.suffix(1000).map(\.gravityErrorDegrees).max()!
    #expect(abs(biasError - bias) <= 0.25, "τ \(tau): bias error \(biasError)°, seed \(bias)°")
    // And the formula behind it: θ ≈ b⊥ τ.
    #expect(abs(biasError - degrees(0.002236 * tau)) <= 0.25)
  }
}

/// The inclination filter runs once per 0.2 s block; its correction must still reach the
/// attitude sample by sample, or the outputs would saw-tooth at 5 Hz.
@Suite struct CorrectionContinuityTests {
  /// A still, level board whose x gyro reads 1 °/s that nothing estimates (bias estimation and
  /// rest detection off): the gyro tilts the attitude by 0.01° a sample and the correction pulls
  /// it back. In steady state the tilt settles at b·τ = 3° (seed 001) and moves by much less
  /// than one sample's drift from one sample to the next — also across block ends — where a
  /// correction applied only at block ends would drift 0.1° and jump back every block.
  @Test func theCorrectionReachesTheAttitudeEverySample() {
    var settings = AttitudeEstimator.Settings.default
    settings.rest.isEnabled = false
    settings.bias.restEstimationEnabled = false
    settings.bias.motionEstimationEnabled = false
    settings.accelerationRejection.isEnabled = false
    var estimator = AttitudeEstimator(settings: settings)
    let bias = 1 * Double.pi / 180
    var tilts: [Double] = []
    for i in 0..<6000 {
      let estimate = estimator.update(
        InertialSample(
          timestampNanoseconds: Int64(i) * 10_000_000,
          angularRateRadiansPerSecond: Vector3(bias, 0, 0),
          specificForceMetersPerSecondSquared: Vector3(0, 0, 9.80665)))
      tilts.append(degrees(estimate.gravityInBody.angle(to: Vector3(0, 0, -1))))
    }
    let steady = tilts.suffix(2000)
    #expect(abs(steady.last! - 3) < 0.15, "steady tilt \(steady.last!)° (b·τ = 3°)")
    let steps = zip(steady.dropFirst(), steady).map { abs($0 - $1) }
    #expect(steps.max()! < 0.002, "largest step between samples \(steps.max()!)°")
  }
}
