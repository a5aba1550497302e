import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

@Test func devSessionMissed() {
  let session = RestTurnSession()
  for seed in 0..<200 {
    var model = InertialSensorModel(settings: .seed000, seed: UInt64(100 + seed))
    var estimator = AttitudeEstimator(settings: .default)
    var restMinutes = Set<Int>()
    var log: [String] = []
    for i in 0..<60_000 {
      let t = Double(i) * 0.01
      let truth = session.truth(atSeconds: t)
      let r = model.measure(truth, intervalSeconds: 0.01)
      let before = estimator.biasEstimator
      let det = estimator.restDetector
      let e = estimator.update(
        InertialSample(
          timestampNanoseconds: Int64(i) * 10_000_000,
          angularRateRadiansPerSecond: r.angularRateRadiansPerSecond,
          specificForceMetersPerSecondSquared: r.specificForceMetersPerSecondSquared))
      if e.isAtRest { restMinutes.insert(Int(t / 60)) }
      if session.isResting(atSeconds: t) && t.truncatingRemainder(dividingBy: 60) > 4.9 && t.truncatingRemainder(dividingBy: 60) < 4.92 && !e.isAtRest {
        let d = det.gyroMean - before.bias
        log.append("t \(t) mean-bias \(d) sigma \(before.uncertainty) true bias \(r.gyroBiasRadiansPerSecond) est \(before.bias) q \(estimator.restDetector.quietSamples)")
      }
    }
    if restMinutes.count < 10 { print("seed", seed, log) }
  }
}
