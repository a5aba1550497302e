import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

@Test func devSessionTrace() {
  let session = RestTurnSession()
  var model = InertialSensorModel(settings: .seed000, seed: 202)
  var st = AttitudeEstimator.Settings.default
    var estimator = AttitudeEstimator(settings: st)
  var wasRest = false
  for i in 0..<60_000 {
    let t = Double(i) * 0.01
    let truth = session.truth(atSeconds: t)
    let r = model.measure(truth, intervalSeconds: 0.01)
    let e = estimator.update(
      InertialSample(
        timestampNanoseconds: Int64(i) * 10_000_000,
        angularRateRadiansPerSecond: r.angularRateRadiansPerSecond,
        specificForceMetersPerSecondSquared: r.specificForceMetersPerSecondSquared))
    if t > 55 && t < 126 && (e.isAtRest != wasRest || e.flags.rawValue & 0x100 != 0 || i % 500 == 0) {
      print(t, "rest", e.isAtRest, "mean", estimator.restDetector.gyroMean.z, "ws", estimator.restDetector.windowSamples, "bias", e.gyroBiasRadiansPerSecond.z, "true", r.gyroBiasRadiansPerSecond.z, "herr", degrees(e.attitude.relative(to: truth.attitude).heading), "flags", e.flags.rawValue, "q", estimator.restDetector.quietSamples)
      wasRest = e.isAtRest
    }
  }
}
