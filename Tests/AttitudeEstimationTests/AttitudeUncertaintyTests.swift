import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Heading of `estimate` relative to `truth`, radians: the twist about the vertical of
/// estimate ⊗ truth⁻¹ (both body → reference).
func headingDifference(_ estimate: Quaternion, _ truth: Quaternion) -> Double {
  let d = estimate * truth.conjugate
  return 2 * atan2(d.z, d.w)
}

func wrapped(_ angle: Double) -> Double {
  var a = angle.truncatingRemainder(dividingBy: 2 * .pi)
  if a > .pi { a -= 2 * .pi }
  if a < -.pi { a += 2 * .pi }
  return a
}

/// Per sample of a run: the errors against the truth and the σ the estimator gave.
struct UncertaintySample {
  var seconds: Double
  var tiltError: Double
  var tiltSigma: Double
  var headingError: Double
  var headingSigma: Double
  var flags: EstimateFlags
}

func uncertaintyRun(
  _ source: some MotionSource, sensor: InertialSensorModel.Settings, seed: UInt64 = 1,
  settings: AttitudeEstimator.Settings = .default, seconds: Double
) -> [UncertaintySample] {
  var model = InertialSensorModel(settings: sensor, seed: seed)
  var estimator = AttitudeEstimator(settings: settings)
  var result: [UncertaintySample] = []
  var offset: Double?
  for i in 0..<Int(seconds * 100) {
    let t = Int64(i) * 10_000_000
    let truth = source.truth(atSeconds: Double(t) * 1e-9)
    let reading = model.measure(truth, intervalSeconds: 0.01)
    let estimate = estimator.update(
      InertialSample(
        timestampNanoseconds: t, angularRateRadiansPerSecond: reading.angularRateRadiansPerSecond,
        specificForceMetersPerSecondSquared: reading.specificForceMetersPerSecondSquared,
        temperatureCelsius: reading.temperatureCelsius))
    guard !estimate.flags.contains(.initialising) else { continue }
    let difference = headingDifference(estimate.attitude, truth.attitude)
    if offset == nil { offset = difference }
    let u = estimator.uncertainty
    result.append(
      UncertaintySample(
        seconds: Double(t) * 1e-9,
        tiltError: estimate.gravityInBody.angle(to: truth.attitude.gravityInBody),
        tiltSigma: u.tiltRadians, headingError: wrapped(difference - offset!),
        headingSigma: u.headingRadians, flags: estimate.flags))
  }
  return result
}

/// An uncalibrated gyro the estimator's default noise model describes: a bias of 3°/s,
/// wandering slowly, MPU-6050 noise.
let describedSensor = InertialSensorModel.Settings(
  gyroBiasRadiansPerSecond: Vector3(0.05, -0.03, 0.04), gyroBiasRandomWalk: 1e-5,
  gyroNoiseRadiansPerSecond: 0.0017, accelerometerNoiseMetersPerSecondSquared: 0.039)

/// `AttitudeEstimator.uncertainty` against the truth of simulated runs: what a consumer of
/// the covariances (ROS's robot_localization) relies on is that the errors stay inside them.
@Suite struct AttitudeUncertaintyTests {
  @Test(arguments: ["handheld", "long-push", "walk", "rest-turn", "tilt", "push", "long-corner"])
  func errorsStayWithinThreeSigma(scenario name: String) throws {
    let entry = try #require(ScenarioCatalog.entry(named: name))
    let seconds = min(entry.naturalSeconds ?? 120, 300)
    let run = uncertaintyRun(entry.make(1, seconds), sensor: describedSensor, seconds: seconds)
    let n = Double(run.count)
    let tilt = Double(run.filter { $0.tiltError <= 3 * $0.tiltSigma }.count) / n
    let heading = Double(run.filter { abs($0.headingError) <= 3 * $0.headingSigma }.count) / n
    #expect(tilt >= 0.95, "\(name): \(tilt) of the tilt errors within 3σ")
    #expect(heading >= 0.99, "\(name): \(heading) of the heading errors within 3σ")
    // Not vacuous: the σ stays within a few times the error (2° of tilt at most).
    let tiltSigmaRMS = (run.map { $0.tiltSigma * $0.tiltSigma }.reduce(0, +) / n).squareRoot()
    #expect(degrees(tiltSigmaRMS) < 2.5, "\(name): tilt σ \(degrees(tiltSigmaRMS))° RMS")
  }

  /// The heading is held at rest: its uncertainty does not grow there; it grows in motion, and
  /// a tare (the heading redefined) starts it again at zero.
  @Test func headingUncertaintyGrowsInMotionOnlyAndATareResetsIt() throws {
    let entry = try #require(ScenarioCatalog.entry(named: "rest-turn"))
    let source = entry.make(1, 120)
    var model = InertialSensorModel(settings: describedSensor, seed: 1)
    var estimator = AttitudeEstimator()
    var atRest: [Double] = []
    var moving: [Double] = []
    for i in 0..<12_000 {
      let t = Int64(i) * 10_000_000
      let truth = source.truth(atSeconds: Double(t) * 1e-9)
      let reading = model.measure(truth, intervalSeconds: 0.01)
      let estimate = estimator.update(
        InertialSample(
          timestampNanoseconds: t,
          angularRateRadiansPerSecond: reading.angularRateRadiansPerSecond,
          specificForceMetersPerSecondSquared: reading.specificForceMetersPerSecondSquared,
          temperatureCelsius: reading.temperatureCelsius))
      if i == 6_150 {
        // In the second minute's rest (60–65 s).
        #expect(estimate.isAtRest)
        estimator.resetHeadingUncertainty()
        #expect(estimator.uncertainty.headingRadians == 0)
      }
      if i > 6_150 && i < 6_400 { atRest.append(estimator.uncertainty.headingRadians) }
      if i > 6_600 { moving.append(estimator.uncertainty.headingRadians) }
    }
    #expect(atRest.allSatisfy { $0 == 0 }, "held at rest: \(atRest.max() ?? -1)")
    #expect(moving.first! > 0 && moving.last! > moving.first!, "grows in motion")
    #expect(zip(moving, moving.dropFirst()).allSatisfy { $0 <= $1 }, "never shrinks")
    // 50 s of turning on a bias known to a few hundredths of a degree per second: a few degrees.
    #expect(degrees(moving.last!) < 5, "\(degrees(moving.last!))°")
  }

  /// A sustained push is rejected (the gyro carries the tilt): the tilt's uncertainty grows
  /// meanwhile, and shrinks again once the accelerometer is trusted.
  @Test func aRejectedAccelerationWidensTheTiltUncertainty() throws {
    let entry = try #require(ScenarioCatalog.entry(named: "long-push"))
    let run = uncertaintyRun(entry.make(1, 50), sensor: describedSensor, seconds: 50)
    let rejected = run.filter { $0.flags.contains(.accelerationRejected) }
    let before = try #require(run.last { $0.seconds < 9 })
    #expect(rejected.count > 1000)
    #expect(rejected.last!.tiltSigma > 2 * before.tiltSigma)
    #expect(run.last!.tiltSigma < rejected.last!.tiltSigma)
  }
}
