import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

private func degrees(_ radians: Double) -> Double { radians * 180 / .pi }

/// Seed 000's ten-minute session as a full 3-axis scenario: a level body rests 5 s at the
/// start of every minute and otherwise turns about the vertical at 0.3 sin(t/7) + 0.2 sin(t/3.1)
/// rad/s; the gyro's bias starts at 0.003 rad/s on every axis and wanders with K = 2e-4
/// rad/s/√s, white noise 0.002 rad/s per sample at 100 Hz; the accelerometer has noise. The
/// estimator finds the rests itself (the schedule is only used for the comparison below).
@Suite struct RestTurnSessionTests {
  struct Outcome {
    var estimator: Double
    var perfectSchedule: Double
    var restStarts: Int
    var falseRests: Int
  }

  /// One seed: the final heading error of the estimator, and of seed 000's own "re-estimated at
  /// rests" strategy with the perfect schedule on the same readings, degrees.
  func session(seed: UInt64, settings: AttitudeEstimator.Settings) -> Outcome {
    let session = RestTurnSession()
    var model = InertialSensorModel(settings: .seed000, seed: seed)
    var estimator = AttitudeEstimator(settings: settings)
    var last: AttitudeEstimate? = nil
    var truth = session.truth(atSeconds: 0)
    var schedule = (heading: 0.0, bias: 0.0, sum: 0.0, count: 0)
    var restStarts = 0
    var falseRests = 0
    var wasResting = false
    for i in 0..<60_000 {
      let t = Double(i) * 0.01
      truth = session.truth(atSeconds: t)
      let r = model.measure(truth, intervalSeconds: 0.01)
      let e = estimator.update(
        InertialSample(
          timestampNanoseconds: Int64(i) * 10_000_000,
          angularRateRadiansPerSecond: r.angularRateRadiansPerSecond,
          specificForceMetersPerSecondSquared: r.specificForceMetersPerSecondSquared))
      if e.isAtRest && !wasResting {
        restStarts += 1
        if !session.isResting(atSeconds: t) { falseRests += 1 }
      }
      wasResting = e.isAtRest
      last = e
      // Seed 000's strategy 3: mean of the rest so far, heading held at rest.
      if session.isResting(atSeconds: t) {
        schedule.sum += r.angularRateRadiansPerSecond.z
        schedule.count += 1
        schedule.bias = schedule.sum / Double(schedule.count)
      } else {
        schedule.sum = 0
        schedule.count = 0
        schedule.heading += (r.angularRateRadiansPerSecond.z - schedule.bias) * 0.01
      }
    }
    let estimated = degrees(last!.attitude.relative(to: truth.attitude).heading)
    var scheduleError = schedule.heading - session.heading(atSeconds: 599.99)
    scheduleError = atan2(sin(scheduleError), cos(scheduleError))
    return Outcome(
      estimator: estimated, perfectSchedule: degrees(scheduleError), restStarts: restStarts,
      falseRests: falseRests)
  }

  /// Seed 000: re-estimating the bias at every rest (and holding the heading there) gave 9.0°
  /// RMS over 200 runs with a perfect schedule. Plumb, finding the rests itself, must do at
  /// least as well; it does better because its Kalman estimate weights the end of each rest
  /// and because each rest also corrects the heading drift of the motion before it.
  @Test func rmsHeadingErrorOverTwoHundredSeedsIsAtMostNineDegrees() {
    var settings = AttitudeEstimator.Settings.default
    // The unit's Allan figures, as a calibration file would give them (seed 000's sensor).
    settings.noise.gyroNoiseDensity = 0.002 * 0.01.squareRoot()
    settings.noise.gyroBiasRandomWalk = 2e-4
    var squares = 0.0
    var scheduleSquares = 0.0
    var missed = 0
    var falseRests = 0
    for seed in 0..<200 {
      let o = session(seed: UInt64(100 + seed), settings: settings)
      squares += o.estimator * o.estimator
      scheduleSquares += o.perfectSchedule * o.perfectSchedule
      missed += max(0, 10 - o.restStarts)
      falseRests += o.falseRests
    }
    let rms = (squares / 200).squareRoot()
    let scheduleRMS = (scheduleSquares / 200).squareRoot()
    print(
      "seed 000 session, 200 seeds: Plumb \(rms)° RMS; perfect-schedule strategy \(scheduleRMS)° RMS; missed rests \(missed), false rests \(falseRests)"
    )
    #expect(rms <= 9.0)
    #expect(rms < scheduleRMS)
    #expect(falseRests == 0)
    #expect(missed <= 5)
  }

  /// With the defaults (no calibration: the random walk assumed is half the true one) the
  /// result is still well inside the bound.
  @Test func defaultsAlsoHold() {
    var squares = 0.0
    for seed in 0..<40 {
      let o = session(seed: UInt64(500 + seed), settings: .default)
      squares += o.estimator * o.estimator
    }
    let rms = (squares / 40).squareRoot()
    print("seed 000 session with default settings, 40 seeds: \(rms)° RMS")
    #expect(rms <= 9.0)
  }
}
