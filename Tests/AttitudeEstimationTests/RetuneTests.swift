import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

/// Standard gravity, m/s² (restated).
private let g = 9.80665

/// Runs `source` through `sensor` at 100 Hz into an estimator, calling `action` with the
/// estimator before the sample of each index in `actions` (between two samples, as the
/// firmware applies a host command). Returns every estimate and the estimator at the end.
func runWithCommands(
  _ source: some MotionSource, sensor: InertialSensorModel.Settings = .perfect,
  settings: AttitudeEstimator.Settings = .default, seed: UInt64 = 1,
  commands actions: [Int: (inout AttitudeEstimator) -> Void] = [:]
) -> (estimates: [AttitudeEstimate], estimator: AttitudeEstimator) {
  var model = InertialSensorModel(settings: sensor, seed: seed)
  var estimator = AttitudeEstimator(settings: settings)
  let count = Int(((source.durationSeconds ?? 10) * 100).rounded())
  var estimates: [AttitudeEstimate] = []
  estimates.reserveCapacity(count)
  for i in 0..<count {
    if let action = actions[i] { action(&estimator) }
    let t = Double(i) * 0.01
    let reading = model.measure(source.truth(atSeconds: t), intervalSeconds: 0.01)
    estimates.append(
      estimator.update(
        InertialSample(
          timestampNanoseconds: Int64(i) * 10_000_000,
          angularRateRadiansPerSecond: reading.angularRateRadiansPerSecond,
          specificForceMetersPerSecondSquared: reading.specificForceMetersPerSecondSquared,
          temperatureCelsius: reading.temperatureCelsius)))
  }
  return (estimates, estimator)
}

/// A still body whose accelerometer reading turns by `stepDegrees` about x at `stepSeconds`
/// while the gyro sees nothing: only the accelerometer says where up is, and the estimate
/// converges to it at the inclination filter's pace.
struct AccelerometerStep: MotionSource {
  var stepDegrees = 10.0
  var stepSeconds = 10.0
  var durationSeconds: Double? = 30

  func truth(atSeconds t: Double) -> MotionTruth {
    let turn = Quaternion(axis: .unitX, angle: t >= stepSeconds ? radians(stepDegrees) : 0)
    return MotionTruth(
      timeSeconds: t, attitude: turn, angularRateRadiansPerSecond: .zero,
      specificForceMetersPerSecondSquared: turn.inverseRotate(Vector3(0, 0, g)),
      temperatureCelsius: 25)
  }
}

/// The tunables with `change` applied.
func tunables(
  _ base: AttitudeEstimator.Tunables = .default,
  _ change: (inout AttitudeEstimator.Tunables) -> Void
) -> AttitudeEstimator.Tunables {
  var t = base
  change(&t)
  return t
}

/// Retunes, expecting success.
func retuned(
  _ change: @escaping (inout AttitudeEstimator.Tunables) -> Void
) -> (inout AttitudeEstimator) -> Void {
  { estimator in
    let result = estimator.retune(tunables(estimator.tunables, change))
    #expect(throws: Never.self) { try result.get() }
  }
}

@Suite struct RetuneTests {
  /// Rest detection off, so that no rest re-anchors the tilt to the reading at once, and the
  /// motion-bias measurement off, so that no bias is learnt from the step: the estimate
  /// converges by the inclination filter alone.
  static let filterOnly = AttitudeEstimator.Settings(
    rest: RestDetector.Settings(isEnabled: false),
    bias: GyroBiasEstimator.Settings(motionEstimationEnabled: false))

  /// Seconds after the accelerometer's step until the tilt error falls to half the step.
  static func halfConvergenceSeconds(_ estimates: [AttitudeEstimate], step: AccelerometerStep)
    -> Double?
  {
    let expected = Quaternion(axis: .unitX, angle: radians(step.stepDegrees)).gravityInBody
    let start = Int(step.stepSeconds * 100)
    for i in start..<estimates.count
    where degrees(estimates[i].gravityInBody.angle(to: expected)) <= step.stepDegrees / 2 {
      return Double(i - start) * 0.01
    }
    return nil
  }

  @Test func aLongerTimeConstantConvergesMoreSlowlyAfterTheAccelerometerTurns() throws {
    let step = AccelerometerStep()
    var seconds: [Double: Double] = [:]
    for tau in [1.5, 3, 6] {
      // Retuned at 5 s, well before the step at 10 s (3 s is the default: no call).
      let commands: [Int: (inout AttitudeEstimator) -> Void] =
        tau == 3 ? [:] : [500: retuned { $0.timeConstantSeconds = tau }]
      let (estimates, estimator) = runWithCommands(
        step, settings: Self.filterOnly, commands: commands)
      #expect(estimator.settings.inclination.timeConstantSeconds == tau)
      #expect(estimator.tunables.timeConstantSeconds == tau)
      let half = try #require(Self.halfConvergenceSeconds(estimates, step: step))
      seconds[tau] = half
    }
    print(
      "half-way after a 10° accelerometer step: τ 1.5 s \(seconds[1.5]!) s, 3 s \(seconds[3]!) s, 6 s \(seconds[6]!) s"
    )
    // A second-order filter's step response scales with τ: twice τ, about twice the time.
    #expect(seconds[1.5]! < seconds[3]! && seconds[3]! < seconds[6]!)
    #expect(seconds[6]! > 1.6 * seconds[3]! && seconds[3]! > 1.6 * seconds[1.5]!)
  }

  @Test func aTimeConstantRetunedMidConvergenceTakesEffectWithoutAJump() throws {
    let step = AccelerometerStep()
    // Slowed from 3 s to 10 s one second into the convergence.
    let (estimates, _) = runWithCommands(
      step, settings: Self.filterOnly, commands: [1100: retuned { $0.timeConstantSeconds = 10 }])
    let (reference, _) = runWithCommands(step, settings: Self.filterOnly)
    // Identical up to the retune; no step in the estimate at it (the filter memory is kept):
    // it moves by less per sample after it than in the second before it.
    #expect(Array(estimates[..<1100]) == Array(reference[..<1100]))
    func largestStep(_ range: Range<Int>) -> Double {
      range.map { estimates[$0].gravityInBody.angle(to: estimates[$0 - 1].gravityInBody) }.max()!
    }
    #expect(largestStep(1100..<1200) <= largestStep(1001..<1100))
    let slow = try #require(Self.halfConvergenceSeconds(estimates, step: step))
    let fast = try #require(Self.halfConvergenceSeconds(reference, step: step))
    #expect(slow > fast)
  }

  /// Seed 001's 0.3 g push, after a rest that makes the bias known enough to reject it.
  static let push = PushScenario(startSeconds: 5, endSeconds: 15, totalSeconds: 20)
  static let sensor = InertialSensorModel.Settings(
    gyroNoiseRadiansPerSecond: 0.002, accelerometerNoiseMetersPerSecondSquared: 0.03)

  static func tiltErrorDegrees(_ e: AttitudeEstimate) -> Double {
    degrees(e.gravityInBody.angle(to: Vector3(0, 0, -1)))
  }

  @Test func accelerationsAreNotRejectedOnceRejectionIsSwitchedOff() {
    let (rejecting, _) = runWithCommands(Self.push, sensor: Self.sensor)
    let (off, estimator) = runWithCommands(
      Self.push, sensor: Self.sensor, commands: [300: retuned { $0.rejectsAccelerations = false }])
    #expect(estimator.settings.accelerationRejection.isEnabled == false)
    let pushing = 600..<1500
    #expect(pushing.contains { rejecting[$0].flags.contains(.accelerationRejected) })
    #expect(!off.contains { $0.flags.contains(.accelerationRejected) })
    let heldError = pushing.map { Self.tiltErrorDegrees(rejecting[$0]) }.max()!
    let followedError = Self.tiltErrorDegrees(off[1499])
    print(
      "0.3 g push for 10 s: rejecting, worst tilt \(heldError)°; switched off, \(followedError)° at its end"
    )
    #expect(heldError < 4)
    #expect(followedError > 12)  // atan(0.3) = 16.7°, followed with τ = 3 s
  }

  @Test func switchingRejectionOffDuringARejectionEndsItAtTheNextSample() {
    let (off, _) = runWithCommands(
      Self.push, sensor: Self.sensor, commands: [900: retuned { $0.rejectsAccelerations = false }])
    #expect(off[899].flags.contains(.accelerationRejected))
    #expect(!off[900...].contains { $0.flags.contains(.accelerationRejected) })
    // Switched on again: it rejects the next push as if new (the detector started afresh).
    let (again, _) = runWithCommands(
      PushScenario(startSeconds: 5, endSeconds: 15, totalSeconds: 20), sensor: Self.sensor,
      commands: [
        200: retuned { $0.rejectsAccelerations = false },
        400: retuned { $0.rejectsAccelerations = true },
      ])
    #expect(again[600..<1500].contains { $0.flags.contains(.accelerationRejected) })
  }

  @Test func retuningToTheCurrentValuesChangesNothing() {
    let sensor = mpuLike(offset: Vector3(0.01, -0.02, 0.005))
    let (reference, before) = runWithCommands(Self.push, sensor: sensor)
    var commands: [Int: (inout AttitudeEstimator) -> Void] = [:]
    // Before the first sample, initialising, at rest, in motion, rejecting, after.
    for i in [0, 50, 300, 450, 700, 900, 1200, 1600] {
      commands[i] = { estimator in
        #expect(throws: Never.self) { try estimator.retune(estimator.tunables).get() }
      }
    }
    let (again, after) = runWithCommands(Self.push, sensor: sensor, commands: commands)
    #expect(again == reference)
    #expect(after.settings == before.settings)
  }

  @Test func invalidValuesAreRefusedWithTheSettingTheValueAndTheRangeAndChangeNothing() throws {
    var refusals: [String] = []
    let attempts:
      [(AttitudeEstimator.Tunables.Setting, (inout AttitudeEstimator.Tunables) -> Void)] = [
        (.timeConstant, { $0.timeConstantSeconds = 0.2 }),
        (.timeConstant, { $0.timeConstantSeconds = .nan }),
        (.timeConstant, { $0.timeConstantSeconds = 60 }),
        (.rejectionLowerThreshold, { $0.rejectionLowerThresholdMetersPerSecondSquared = -1 }),
        (.rejectionUpperThreshold, { $0.rejectionUpperThresholdMetersPerSecondSquared = 20 }),
        (.rejectionUpperThreshold, { $0.rejectionUpperThresholdMetersPerSecondSquared = 1 }),
        (
          .rejectionLowerThreshold,
          {
            $0.rejectionLowerThresholdMetersPerSecondSquared = 3
            $0.timeConstantSeconds = 5
          }
        ),
      ]
    var commands: [Int: (inout AttitudeEstimator) -> Void] = [:]
    for (k, attempt) in attempts.enumerated() {
      commands[100 + 150 * k] = { estimator in
        let before = estimator.settings
        let result = estimator.retune(tunables(estimator.tunables, attempt.1))
        guard case .failure(let refusal) = result else {
          Issue.record("accepted: \(estimator.tunables)")
          return
        }
        #expect(refusal.setting == attempt.0)
        refusals.append(refusal.description)
        #expect(estimator.settings == before)
      }
    }
    let (reference, _) = runWithCommands(Self.push, sensor: Self.sensor)
    let (refused, _) = runWithCommands(Self.push, sensor: Self.sensor, commands: commands)
    #expect(refused == reference)
    for message in refusals { print(message) }
    try #require(refusals.count == attempts.count)
    #expect(
      refusals[0]
        == "inclination time constant: 0.2 s is outside the allowed range 0.5–10 s; nothing was changed"
    )
    #expect(refusals[1].hasPrefix("inclination time constant: NaN s is outside"))
    #expect(refusals[2].contains("60 s"))
    #expect(
      refusals[3]
        == "acceleration rejection lower threshold: -1 m/s² is outside the allowed range 0.25–5 m/s²; nothing was changed"
    )
    #expect(refusals[4].contains("20 m/s²") && refusals[4].contains("0.5–10 m/s²"))
    #expect(refusals[5].contains("1.5 m/s²") && refusals[5].contains("below the upper"))
    #expect(refusals[6].hasPrefix("acceleration rejection lower threshold: 3 m/s²"))
  }

  @Test func aValueLeftAsItIsPassesEvenOutsideItsRange() {
    // The plain filter with τ = 20 s (seed 001's table): its other settings can change.
    var estimator = AttitudeEstimator(settings: .plain(timeConstantSeconds: 20))
    #expect(
      throws: Never.self,
      performing: {
        try estimator.retune(tunables(estimator.tunables) { $0.holdsAttitudeAtRest = true }).get()
      })
    #expect(estimator.settings.holdsAttitudeAtRest)
    #expect(estimator.settings.inclination.timeConstantSeconds == 20)
    // Switching rejection on checks the thresholds against each other.
    var settings = AttitudeEstimator.Settings.default
    settings.accelerationRejection = .init(
      isEnabled: false, lowerThresholdMetersPerSecondSquared: 3,
      upperThresholdMetersPerSecondSquared: 2)
    var other = AttitudeEstimator(settings: settings)
    let result = other.retune(tunables(other.tunables) { $0.rejectsAccelerations = true })
    guard case .failure(let refusal) = result else {
      Issue.record("accepted")
      return
    }
    #expect(refusal.setting == .rejectionUpperThreshold)
    #expect(other.settings.accelerationRejection.isEnabled == false)
  }

  @Test func theSameRetuneAtTheSameSampleGivesTheSameEstimates() {
    let sensor = mpuLike(offset: Vector3(0.01, -0.02, 0.005))
    let change = retuned {
      $0.timeConstantSeconds = 6
      $0.rejectionLowerThresholdMetersPerSecondSquared = 1
      $0.rejectionUpperThresholdMetersPerSecondSquared = 2
      $0.holdsAttitudeAtRest = false
    }
    let (a, _) = runWithCommands(Self.push, sensor: sensor, commands: [700: change])
    let (b, _) = runWithCommands(Self.push, sensor: sensor, commands: [700: change])
    let (none, _) = runWithCommands(Self.push, sensor: sensor)
    #expect(a == b)
    #expect(Array(a[..<700]) == Array(none[..<700]))
    #expect(a[700...] != none[700...])
  }

  @Test func theHoldAtRestFollowsItsSwitchFromTheNextSample() {
    let sensor = mpuLike(offset: Vector3(0.01, -0.02, 0.005))
    // A still board, at rest from about 1.5 s: held (the attitude does not move), then not.
    let still = PushScenario(startSeconds: 100, endSeconds: 100, totalSeconds: 8)
    let (estimates, _) = runWithCommands(
      still, sensor: sensor, commands: [500: retuned { $0.holdsAttitudeAtRest = false }])
    #expect(estimates[300..<800].allSatisfy { $0.flags.contains(.atRest) })
    // Held, the attitude moves only at the blocks' ends (the inclination correction); not
    // held, the gyro's noise turns it every sample.
    func unmoved(_ range: Range<Int>) -> Int {
      range.filter { estimates[$0].attitude == estimates[$0 - 1].attitude }.count
    }
    #expect(unmoved(301..<500) > 150)
    #expect(unmoved(501..<800) == 0)
    // Held, every sample measures the bias; not held, only the rest's window did, and the
    // blocks predict its random walk.
    #expect(estimates[499].gyroBiasVariance.x < estimates[301].gyroBiasVariance.x)
    #expect(estimates[799].gyroBiasVariance.x > estimates[520].gyroBiasVariance.x)
  }

  @Test func theRangesAreThereForAParameterTable() {
    typealias T = AttitudeEstimator.Tunables
    #expect(T.timeConstantRange == 0.5...10)
    #expect(T.lowerThresholdRange.contains(1.5) && T.upperThresholdRange.contains(2.5))
    #expect(T.Setting.timeConstant.range == T.timeConstantRange)
    #expect(T.Setting.timeConstant.unit == "s")
    #expect(T.Setting.rejectsAccelerations.range == nil)
    // The defaults lie in their ranges.
    #expect(T.timeConstantRange.contains(T.default.timeConstantSeconds))
    #expect(T.default == AttitudeEstimator().tunables)
  }
}
