import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

@Test(arguments: [5e-5, 1e-4, 2e-4]) func devSessionStats(k: Double) {
  let session = RestTurnSession()
  var restCounts: [Int: Int] = [:]
  var biasErr2 = 0.0
  var nb = 0
  var falseRest = 0
  var heading2 = 0.0
  var oracle2 = 0.0
  for seed in 0..<200 {
    var model = InertialSensorModel(settings: .seed000, seed: UInt64(100 + seed))
    var st = AttitudeEstimator.Settings.default
    st.noise.gyroBiasRandomWalk = k
    var estimator = AttitudeEstimator(settings: st)
    var starts = 0
    var wasRest = false
    var oracle = 0.0
    var oracleBias = 0.0
    var restSum = 0.0
    var restCount = 0
    var truthHeading = 0.0
    var last: AttitudeEstimate? = nil
    var lastTruth: MotionTruth? = nil
    for i in 0..<60_000 {
      let t = Double(i) * 0.01
      let truth = session.truth(atSeconds: t)
      let r = model.measure(truth, intervalSeconds: 0.01)
      let resting = session.isResting(atSeconds: t)
      if resting {
        restSum += r.angularRateRadiansPerSecond.z
        restCount += 1
        oracleBias = restSum / Double(restCount)
      } else {
        restSum = 0
        restCount = 0
        oracle += (r.angularRateRadiansPerSecond.z - oracleBias) * 0.01
      }
      truthHeading += truth.angularRateRadiansPerSecond.z * 0.01
      let e = estimator.update(
        InertialSample(
          timestampNanoseconds: Int64(i) * 10_000_000,
          angularRateRadiansPerSecond: r.angularRateRadiansPerSecond,
          specificForceMetersPerSecondSquared: r.specificForceMetersPerSecondSquared))
      if e.isAtRest && !wasRest {
        starts += 1
        if !session.isResting(atSeconds: t) { falseRest += 1;  }
      }
      if !e.isAtRest && wasRest {
        let d = e.gyroBiasRadiansPerSecond.z - r.gyroBiasRadiansPerSecond.z
        biasErr2 += d * d
        nb += 1
      }
      wasRest = e.isAtRest
      last = e
      lastTruth = truth
    }
    restCounts[starts, default: 0] += 1
    let h = degrees(last!.attitude.relative(to: lastTruth!.attitude).heading)
    heading2 += h * h
    let o = degrees(oracle - truthHeading)
    oracle2 += o * o
  }
  print("K", k, "rest starts per run histogram", restCounts.sorted { $0.key < $1.key }, "false", falseRest, "bias err rms at rest end", (biasErr2 / Double(nb)).squareRoot(), "heading rms", (heading2 / 200).squareRoot(), "seed oracle rms", (oracle2 / 200).squareRoot())
}
