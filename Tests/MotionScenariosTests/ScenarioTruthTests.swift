import Geometry
import MotionScenarios
import Testing

/// The angular rate a source reports must be the derivative of its attitude (body axes):
/// q(t + h) ≈ q(t) ⊗ exp(ω h).
private func rateMatchesAttitude(_ source: some MotionSource, at t: Double) -> Double {
  let h = 1e-5
  let a = source.truth(atSeconds: t)
  let b = source.truth(atSeconds: t + h)
  let predicted = a.attitude * Quaternion(rotationVector: a.angularRateRadiansPerSecond * h)
  return predicted.angle(to: b.attitude) / h  // rad/s of disagreement
}

@Suite struct ScenarioTruthTests {
  @Test func ratesAreTheAttitudesDerivative() {
    let sources: [any MotionSource] = [
      TiltScenario(), ConstantTurnScenario(), RestTurnSession(), PushScenario(), WalkScenario(),
    ]
    for source in sources {
      for t in stride(from: 0.05, to: (source.durationSeconds ?? 10), by: 0.37) {
        #expect(rateMatchesAttitude(source, at: t) < 1e-4, "\(type(of: source)) at \(t) s")
      }
    }
  }

  @Test func specificForceIsGravityReactionPlusAcceleration() {
    for t in [0.0, 2.5, 2.9, 5.0] {
      let truth = TiltScenario().truth(atSeconds: t)
      let up = truth.attitude.inverseRotate(Vector3(0, 0, 9.80665))
      #expect((truth.specificForceMetersPerSecondSquared - up).length < 1e-12)
    }
    // The push: 0.3 g along reference y, a 16.7° apparent tilt.
    let pushed = PushScenario().truth(atSeconds: 4).specificForceMetersPerSecondSquared
    #expect(abs(pushed.angle(to: .unitZ) * 180 / .pi - 16.699) < 0.001)
    #expect(
      PushScenario().truth(atSeconds: 8).specificForceMetersPerSecondSquared
        == Vector3(0, 0, 9.80665))
  }

  @Test func tiltReachesSixtyDegreesInOneSecond() {
    let s = TiltScenario()
    #expect(s.truth(atSeconds: 1.99).attitude.angle < 1e-12)
    #expect(abs(s.truth(atSeconds: 3).attitude.angle * 180 / .pi - 60) < 1e-9)
  }

  @Test func restTurnSessionRestsAtTheStartOfEveryMinute() {
    let s = RestTurnSession()
    for minute in 0..<10 {
      let t0 = Double(minute) * 60
      #expect(s.isResting(atSeconds: t0 + 1) && !s.isResting(atSeconds: t0 + 6))
      #expect(s.truth(atSeconds: t0 + 2).angularRateRadiansPerSecond == .zero)
      // The heading does not move during a rest.
      #expect(abs(s.heading(atSeconds: t0 + 4.9) - s.heading(atSeconds: t0 + 0.1)) < 1e-12)
    }
    // Between rests it is the integral of the turn rate (checked numerically).
    var integral = s.heading(atSeconds: 65)
    for k in 0..<55_000 {
      integral += RestTurnSession.turnRate(atSeconds: 65 + (Double(k) + 0.5) * 0.001) * 0.001
    }
    #expect(abs(integral - s.heading(atSeconds: 120)) < 1e-6)
  }
}

@Suite struct SensorModelTests {
  @Test func noiseAndWanderHaveTheConfiguredSize() {
    let settings = InertialSensorModel.Settings(
      gyroBiasRadiansPerSecond: Vector3(0.01, 0, 0), gyroBiasRandomWalk: 2e-4,
      gyroNoiseRadiansPerSecond: 0.002, accelerometerNoiseMetersPerSecondSquared: 0.03)
    let still = MotionTruth(
      timeSeconds: 0, attitude: .identity, angularRateRadiansPerSecond: .zero,
      specificForceMetersPerSecondSquared: Vector3(0, 0, 9.80665), temperatureCelsius: 25)
    var squares = 0.0
    var accelSquares = 0.0
    var walks = 0.0
    let runs = 200
    for seed in 0..<runs {
      var model = InertialSensorModel(settings: settings, seed: UInt64(seed))
      for _ in 0..<100 {
        let r = model.measure(still, intervalSeconds: 0.01)
        let n = r.angularRateRadiansPerSecond.y - r.gyroBiasRadiansPerSecond.y
        squares += n * n
        let a = r.specificForceMetersPerSecondSquared.x
        accelSquares += a * a
      }
      let w = model.gyroBiasRadiansPerSecond.z  // started at 0, 1 s of wander
      walks += w * w
    }
    let samples = Double(runs * 100)
    #expect(abs((squares / samples).squareRoot() - 0.002) < 0.0001)
    #expect(abs((accelSquares / samples).squareRoot() - 0.03) < 0.0015)
    // K √t after one second: 2e-4.
    #expect(abs((walks / Double(runs)).squareRoot() - 2e-4) < 0.3e-4)
  }

  @Test func sameSeedSameReadings() {
    var a = InertialSensorModel(settings: .seed000, seed: 42)
    var b = InertialSensorModel(settings: .seed000, seed: 42)
    let truth = TiltScenario().truth(atSeconds: 2.5)
    for _ in 0..<10 {
      #expect(a.measure(truth, intervalSeconds: 0.01) == b.measure(truth, intervalSeconds: 0.01))
    }
  }

  @Test func scheduleDropsAndJitters() {
    let s = SampleSchedule(
      nominalPeriodSeconds: 0.01, count: 200, jitterSeconds: 0.001, dropped: [37, 38, 121], seed: 11
    )
    #expect(s.timestampsNanoseconds.count == 197)
    #expect(
      zip(s.timestampsNanoseconds, s.timestampsNanoseconds.dropFirst()).allSatisfy { $0 < $1 })
    let plain = SampleSchedule(nominalPeriodSeconds: 0.01, count: 5)
    #expect(plain.timestampsNanoseconds == [0, 10_000_000, 20_000_000, 30_000_000, 40_000_000])
  }
}
