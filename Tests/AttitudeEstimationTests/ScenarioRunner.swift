import AttitudeEstimation
import Geometry
import MotionScenarios

/// Degrees → radians (restated, not imported).
func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }
func degrees(_ radians: Double) -> Double { radians * 180 / .pi }

/// One sample of a run: the truth, what the sensor said, what the estimator said.
struct RunSample {
  var truth: MotionTruth
  var reading: InertialReading
  var estimate: AttitudeEstimate
  /// The estimator's rest decisions so far.
  var restStatistics: RestStatistics

  /// Angle between the estimated and the true gravity direction, degrees.
  var gravityErrorDegrees: Double {
    degrees(estimate.gravityInBody.angle(to: truth.attitude.gravityInBody))
  }
}

/// Samples `source` at `rateHertz` (or at `timestamps`), passes the truth through the sensor
/// model and the readings through an estimator.
func run(
  _ source: some MotionSource, sensor: InertialSensorModel.Settings = .perfect, seed: UInt64 = 1,
  settings: AttitudeEstimator.Settings = .default, rateHertz: Double = 100,
  timestamps: [Int64]? = nil
) -> [RunSample] {
  let period = 1 / rateHertz
  let times =
    timestamps
    ?? (0..<Int(((source.durationSeconds ?? 10) * rateHertz).rounded())).map {
      Int64((Double($0) * period * 1e9).rounded())
    }
  var model = InertialSensorModel(settings: sensor, seed: seed)
  var estimator = AttitudeEstimator(settings: settings)
  var result: [RunSample] = []
  result.reserveCapacity(times.count)
  var previous: Int64? = nil
  for t in times {
    let seconds = Double(t) * 1e-9
    let truth = source.truth(atSeconds: seconds)
    let interval = previous.map { Double(t - $0) * 1e-9 } ?? period
    previous = t
    let reading = model.measure(truth, intervalSeconds: interval)
    let estimate = estimator.update(
      InertialSample(
        timestampNanoseconds: t, angularRateRadiansPerSecond: reading.angularRateRadiansPerSecond,
        specificForceMetersPerSecondSquared: reading.specificForceMetersPerSecondSquared,
        temperatureCelsius: reading.temperatureCelsius))
    result.append(
      RunSample(
        truth: truth, reading: reading, estimate: estimate,
        restStatistics: estimator.restStatistics))
  }
  return result
}
