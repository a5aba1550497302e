import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

/// Seed 000's session, one seed: final heading error, degrees.
func sessionHeadingError(seed: UInt64, settings: AttitudeEstimator.Settings) -> Double {
  let session = RestTurnSession()
  var model = InertialSensorModel(settings: .seed000, seed: seed)
  var estimator = AttitudeEstimator(settings: settings)
  var last: AttitudeEstimate? = nil
  var lastTruth: MotionTruth? = nil
  for i in 0..<60_000 {
    let t = Double(i) * 0.01
    let truth = session.truth(atSeconds: t)
    let r = model.measure(truth, intervalSeconds: 0.01)
    last = estimator.update(
      InertialSample(
        timestampNanoseconds: Int64(i) * 10_000_000,
        angularRateRadiansPerSecond: r.angularRateRadiansPerSecond,
        specificForceMetersPerSecondSquared: r.specificForceMetersPerSecondSquared))
    lastTruth = truth
  }
  let e = last!.attitude.relative(to: lastTruth!.attitude)
  return degrees(e.heading)
}

@Test func devSession() {
  for (name, k) in [("K2e-4", 2e-4), ("K1e-4", 1e-4), ("K4e-4", 4e-4), ("K1e-3", 1e-3)] {
    var s = AttitudeEstimator.Settings.default
    s.noise.gyroBiasRandomWalk = k
    var sq = 0.0
    let n = 200
    for seed in 0..<n {
      let e = sessionHeadingError(seed: UInt64(100 + seed), settings: s)
      sq += e * e
    }
    print(name, "RMS", (sq / Double(n)).squareRoot())
  }
}
