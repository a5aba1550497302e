import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

/// The sample period estimate may change while a quiet stretch is under way: an estimator told
/// 100 Hz (the default) that is fed 25 Hz learns the period after 16 samples, and a chip's
/// oscillator a few percent off nominal moves it across the coefficients' 0.5 % band while the
/// clock settles. The rest detector's dwell and the thirds of it that its stationarity test
/// compares are counted in samples, so they move with it.
@Suite struct PeriodChangeTests {
  /// A still board at 25 Hz given to an estimator expecting 100 Hz, with an uncalibrated gyro:
  /// the first rest comes one dwell (1.5 s) after the stretch began, and undoes the heading the
  /// offset turned meanwhile. The stretch's first-third snapshot fell due at 12 samples, before
  /// the period was learnt at the 15th (it was due at 50 until then), so it was never taken:
  /// the thirds test refused the first dwell silently, the rest came 1.5 s late, and the
  /// heading the offset turned in the first dwell (7°) stayed.
  @Test func aPeriodLearntMidStretchStillGivesTheFirstRestOnTime() {
    let motion = YawSegments(segments: [(5, 0)])
    let samples = run(
      motion, sensor: mpuLike(offset: Vector3(0.05, -0.03, 0.08)), seed: 5, rateHertz: 25)
    let firstRest = samples.first { $0.estimate.isAtRest }
    #expect(firstRest != nil)
    #expect(
      (firstRest?.truth.timeSeconds ?? 99) <= 1.7,
      "first rest at \(firstRest?.truth.timeSeconds ?? -1) s")
    #expect(abs(headingError(samples.last!)) < 0.5, "heading \(headingError(samples.last!))°")
  }

  /// A detector whose period grows fourfold after 100 quiet samples (dwell 150 → 38): the dwell
  /// is complete, but the stretch cannot be split into thirds of two samples or more (the
  /// two-thirds point passed without its snapshot, which is taken at the change; the last third
  /// would hold one sample). A slow turn whose rate drifts through the bias — quiet, and
  /// consistent with a bias this uncertain — must not be taken for a rest: the thirds test is
  /// not skipped for a dwell of six samples or more; the stretch restarts, and the next dwell's
  /// thirds refuse the turn.
  @Test func aDwellShortenedPastItsThirdsIsNotARestWithoutTheThirdsTest() {
    var detector = RestDetector(samplePeriodSeconds: 0.01)
    let variance = Vector3(1e-4, 1e-4, 1e-4)
    func rate(_ i: Int) -> Vector3 { Vector3(0, 0, 0.0004 * Double(i - 76)) }
    var transitions: [RestDetector.Transition] = []
    func feed(_ range: Range<Int>) {
      for i in range {
        transitions.append(
          detector.update(
            gyro: rate(i), acceleration: Vector3(0, 0, 9.81), bias: .zero,
            biasVariance: variance, gyroSampleVariance: 1e-6, up: .unitZ))
      }
    }
    feed(0..<100)
    #expect(detector.quietSamples == 99 && transitions.allSatisfy { $0 == .none })
    detector.setSamplePeriod(0.04)
    feed(100..<140)
    #expect(!transitions.contains(.started), "\(transitions.filter { $0 != .none })")
    #expect(!detector.isAtRest)
  }

  /// A still gyro with an offset, and a period that grows by a third after 40 samples (dwell
  /// 150 → 112, first third 50 → 37: passed without its snapshot). The snapshot is taken late,
  /// at the change, and the dwell is a rest at the new count. The snapshot used to be left
  /// stale (zero), the thirds disagreed by the whole offset, and the dwell was refused
  /// silently: the rest came a whole dwell late.
  @Test func aFirstThirdPassedByAPeriodChangeIsTakenLate() {
    var detector = RestDetector(samplePeriodSeconds: 0.01)
    var generator = Noise(seed: 9)
    let offset = Vector3(0.02, -0.01, 0.03)
    var startedAt: Int? = nil
    for i in 0..<300 {
      if i == 40 { detector.setSamplePeriod(0.04 / 3) }
      let g = Vector3(
        offset.x + generator.next() * 1e-3, offset.y + generator.next() * 1e-3,
        offset.z + generator.next() * 1e-3)
      let transition = detector.update(
        gyro: g, acceleration: Vector3(0, 0, 9.81), bias: offset,
        biasVariance: Vector3(1e-6, 1e-6, 1e-6), gyroSampleVariance: 1e-6, up: .unitZ)
      if transition == .started && startedAt == nil { startedAt = i }
    }
    // The first sample starts the window; the stretch's quiet samples count from the second.
    #expect(detector.dwellSamples == 112)
    #expect(startedAt == 112, "rest at sample \(startedAt ?? -1)")
  }
}

/// Uniform noise in [−√3, √3) (unit variance), seeded.
private struct Noise {
  var state: UInt64
  init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
  mutating func next() -> Double {
    state ^= state << 13
    state ^= state >> 7
    state ^= state << 17
    return (Double(state >> 11) / Double(1 << 53) * 2 - 1) * 3.0.squareRoot()
  }
}
