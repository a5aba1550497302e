import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct EstimatorContractTests {
  func sample(
    _ t: Int64, gyro: Vector3 = .zero, accel: Vector3 = Vector3(0, 0, 9.80665),
    clipped: Bool = false
  )
    -> InertialSample
  {
    InertialSample(
      timestampNanoseconds: t, angularRateRadiansPerSecond: gyro,
      specificForceMetersPerSecondSquared: accel, isClipped: clipped)
  }

  /// The start frame as the READMEs state it: x is where the smallest rotation that levels the
  /// first reading takes the body's x axis (no turn about the vertical). Tilted about one body
  /// axis that is the body's x projected on the horizontal; tilted 30° in roll and 30° in pitch,
  /// the projection is 8.2° from the reference x.
  @Test func theStartFrameIsTheLevellingRotationsNotTheProjectedXAxis() {
    func start(rollDegrees: Double, pitchDegrees: Double) -> Quaternion {
      var estimator = AttitudeEstimator()
      let tilted =
        Quaternion(axis: .unitY, angle: radians(pitchDegrees))
        * Quaternion(axis: .unitX, angle: radians(rollDegrees))
      let reading = tilted.inverseRotate(Vector3(0, 0, 9.80665))
      return estimator.update(sample(0, accel: reading)).attitude
    }
    func projectedHeadingDegrees(_ q: Quaternion) -> Double {
      let x = q.rotate(.unitX)
      return degrees(atan2(x.y, x.x))
    }
    for (roll, pitch) in [(30.0, 0.0), (0.0, 30.0), (0.0, 0.0)] {
      #expect(abs(projectedHeadingDegrees(start(rollDegrees: roll, pitchDegrees: pitch))) < 1e-9)
    }
    let both = start(rollDegrees: 30, pitchDegrees: 30)
    #expect(abs(both.z) < 1e-12, "the levelling rotation's axis is horizontal: \(both)")
    #expect(abs(projectedHeadingDegrees(both) - 8.21) < 0.005, "\(projectedHeadingDegrees(both))")
  }

  /// The first sample gives the tilt at once; the heading starts at zero (x = heading at start).
  @Test func startsFromTheFirstAccelerometerReading() {
    var estimator = AttitudeEstimator()
    let tilted = Quaternion(axis: Vector3(1, -0.5, 0), angle: radians(25))
    let reading = tilted.inverseRotate(Vector3(0, 0, 9.80665))
    let e = estimator.update(sample(0, accel: reading))
    #expect(e.flags.contains(.initialising))
    #expect(degrees(e.gravityInBody.angle(to: tilted.gravityInBody)) < 1e-9)
    #expect(abs(e.attitude.heading) < 1e-12)
    // Seed 003's gravity test on the output: gravity mapped with the attitude points down.
    #expect((e.attitude.rotate(e.gravityInBody) - Vector3(0, 0, -1)).length < 1e-12)
  }

  /// Exactly one estimate per sample; unusable samples change nothing and say why.
  @Test func unusableSamplesAreFlaggedAndNotIntegrated() {
    var estimator = AttitudeEstimator()
    _ = estimator.update(sample(0))
    _ = estimator.update(sample(10_000_000, gyro: Vector3(0, 0, 1)))
    let before = estimator.attitude
    let repeated = estimator.update(sample(10_000_000, gyro: Vector3(0, 0, 5)))
    #expect(repeated.flags.contains(.timestampRejected))
    #expect(repeated.attitude == before)
    let backwards = estimator.update(sample(5_000_000, gyro: Vector3(0, 0, 5)))
    #expect(backwards.flags.contains(.timestampRejected))
    let nan = estimator.update(sample(20_000_000, gyro: Vector3(.nan, 0, 0)))
    #expect(nan.flags.contains(.invalidInput))
    #expect(estimator.attitude == before)
    // The next good sample integrates from the last accepted one (20 ms: 10 ms + the NaN's 10).
    let next = estimator.update(sample(30_000_000, gyro: Vector3(0, 0, 1)))
    #expect(abs(next.integrationIntervalSeconds - 0.02) < 1e-12)
    #expect(abs(degrees(next.attitude.relative(to: before).heading) - degrees(0.02)) < 1e-3)
  }

  @Test func clippedSamplesAreFlaggedAndTheirAccelerometerIgnored() {
    var estimator = AttitudeEstimator()
    _ = estimator.update(sample(0))
    var last: AttitudeEstimate? = nil
    for i in 1..<200 {
      last = estimator.update(
        sample(Int64(i) * 10_000_000, accel: Vector3(20, 0, 9.8), clipped: true))
    }
    #expect(last!.flags.contains(.clippedInput))
    #expect(!last!.isAtRest)
    #expect(degrees(last!.gravityInBody.angle(to: Vector3(0, 0, -1))) < 0.01)
  }

  @Test func outputsAreConsistent() {
    let samples = run(TiltScenario(), sensor: .seed001, seed: 7)
    for s in samples.suffix(300) {
      let e = s.estimate
      #expect(abs(e.attitude.norm - 1) < 1e-12)
      #expect((e.attitude.gravityInBody - e.gravityInBody).length < 1e-12)
      // At rest after the tilt the linear acceleration is only noise.
      #expect(e.linearAccelerationMetersPerSecondSquared.length < 0.3)
      // The rate is the raw rate minus the bias.
      #expect(
        (e.angularRateRadiansPerSecond + e.gyroBiasRadiansPerSecond
          - s.reading.angularRateRadiansPerSecond).length < 1e-12)
    }
  }

  /// Same samples, same bytes: the estimator has no clock and no randomness of its own.
  @Test func isDeterministic() {
    let a = run(RestTurnSession(totalSeconds: 70), sensor: .seed000, seed: 9)
    let b = run(RestTurnSession(totalSeconds: 70), sensor: .seed000, seed: 9)
    #expect(a.map(\.estimate) == b.map(\.estimate))
  }

  @Test func settingsAreValidatedWithAReason() {
    #expect(AttitudeEstimator.Settings.default.problem == nil)
    #expect(AttitudeEstimator.Settings.plain(timeConstantSeconds: 1).problem == nil)
    var s = AttitudeEstimator.Settings.default
    s.inclination.timeConstantSeconds = 0
    #expect(s.problem?.contains("time constant") == true)
    s = .default
    s.accelerationRejection.upperThresholdMetersPerSecondSquared = 0.5
    #expect(s.problem?.contains("rejection") == true)
    s = .default
    s.bias.initialUncertaintyRadiansPerSecond = -1
    #expect(s.problem != nil)
  }
}
