import AttitudeEstimation
import Geometry
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Restated defaults (`AttitudeEstimator.GapSettings`, `headingUncertainBiasRadiansPerSecond`,
/// `noise.gyroBiasRandomWalk`): 250 °/s² unseen, a 1° step, 0.1 °/s tolerated drift,
/// K = 1e-4 rad/s/√s.
private let unseenAcceleration = radians(250)
private let headingStep = radians(1)
private let toleratedDrift = radians(0.1)
private let randomWalk = 1e-4

/// A board flat on a turntable: still until `stillUntil` seconds, then turning about the
/// vertical at 30 °/s × sin(π t) (never steady, so never taken for a rest), still again from
/// `stillFrom`. `dropped` are the sample times (seconds) that never arrive.
private struct Turntable {
  var stillUntil = 3.0
  var stillFrom = Double.infinity
  var seconds = 20.0
  var dropped: [ClosedRange<Double>] = []

  func rate(at t: Double) -> Double {
    t < stillUntil || t >= stillFrom ? 0 : radians(30) * sin(.pi * (t - stillUntil))
  }

  /// Every estimate, with its time in seconds.
  func run(settings: AttitudeEstimator.Settings = .default) -> [(t: Double, e: AttitudeEstimate)] {
    var estimator = AttitudeEstimator(settings: settings)
    var result: [(t: Double, e: AttitudeEstimate)] = []
    for k in 0..<Int(seconds * 100) {
      let t = Double(k) * 0.01
      if dropped.contains(where: { $0.contains(t) }) { continue }
      let estimate = estimator.update(
        InertialSample(
          timestampNanoseconds: Int64(k) * 10_000_000,
          angularRateRadiansPerSecond: Vector3(0, 0, rate(at: t)),
          specificForceMetersPerSecondSquared: Vector3(0, 0, 9.80665), temperatureCelsius: 25))
      result.append((t, estimate))
    }
    return result
  }
}

/// A gap is integrated with the rate after it: the heading it gives is a guess, flagged
/// `.headingUncertain` when the guess may be off by a degree or more, until a rest re-anchors
/// it or the step, spread over the time since, is within the drift the flag tolerates.
@Suite struct GapHeadingTests {
  /// One or two missed samples — at rest, turning, or as the turn starts — leave at most
  /// ½ · 250 °/s² · (20 ms)² = 0.05°: no flag once the first rest has measured the bias.
  @Test func oneOrTwoMissedSamplesRaiseNoFlag() {
    let table = Turntable(
      dropped: [2.5...2.5, 2.8...2.815, 3.0...3.015, 4.2...4.2, 7.45...7.465, 11.3...11.315])
    let estimates = table.run()
    #expect(estimates.filter { $0.e.flags.contains(.gap) }.count == 6)
    let flagged = estimates.filter { $0.t > 2 && $0.e.flags.contains(.headingUncertain) }
    #expect(flagged.isEmpty, "flagged from \(flagged.first?.t ?? 0) s")
    // Before the first rest the bias is not known: flagged for that reason alone.
    #expect(estimates.first!.e.flags.contains(.headingUncertain))
  }

  /// A 0.3 s gap while turning: up to ½ · 250 °/s² · (0.29 s)² = 10.5° unseen. Flagged from
  /// the sample after it until the rest that begins once the turntable stops.
  @Test func aLongerGapIsFlaggedUntilARestBegins() {
    let table = Turntable(stillFrom: 8, seconds: 14, dropped: [5.0...5.29])
    let estimates = table.run()
    let first = estimates.firstIndex { $0.t > 5.29 }!
    #expect(estimates[first].e.flags.isSuperset(of: [.gap, .headingUncertain]))
    #expect(!estimates[first - 1].e.flags.contains(.headingUncertain))
    let rest = estimates.firstIndex { $0.t > 8 && $0.e.flags.contains(.restStarted) }
    #expect(rest != nil)
    guard let rest, rest > first else { return }
    #expect(estimates[first..<rest].allSatisfy { $0.e.flags.contains(.headingUncertain) })
    #expect(estimates[rest...].allSatisfy { !$0.e.flags.contains(.headingUncertain) })
  }

  /// Without a rest the flag lasts while the step, spread over the time since the gap, is
  /// more than 0.1 °/s: a gap of 0.12 s (0.11 s unobserved: 1.51°) is flagged for 15 s.
  @Test func withoutARestTheFlagRunsOutAfterTheStepIsSpreadThin() {
    let table = Turntable(seconds: 40, dropped: [10.0...10.105])
    let estimates = table.run()
    let unobserved = 0.11
    let bound = 0.5 * unseenAcceleration * unobserved * unobserved
    #expect(bound > headingStep)
    let hold = bound / toleratedDrift
    let flagged = estimates.filter { $0.t > 5 && $0.e.flags.contains(.headingUncertain) }
    let from = flagged.first?.t ?? 0
    let to = flagged.last?.t ?? 0
    #expect(abs(from - 10.11) < 0.005)
    // Counted in whole blocks (0.2 s) from the block that held the gap.
    #expect(abs(to - (10.0 + hold)) < 0.25, "flagged \(from)…\(to) s, hold \(hold) s")
    #expect(flagged.count >= Int((hold - 0.3) * 100))
  }

  /// A gap a little shorter than the step needs (0.08 s unobserved: 0.8°) is not flagged.
  @Test func aGapBelowTheStepIsNotFlagged() {
    let estimates = Turntable(seconds: 12, dropped: [6.0...6.075]).run()
    #expect(estimates.contains { $0.e.flags.contains(.gap) && $0.e.missedSamples == 8 })
    #expect(!estimates.contains { $0.t > 2 && $0.e.flags.contains(.headingUncertain) })
  }

  /// A gap longer than the 3 s integration cap counts in full: all its samples missed, the
  /// bias's random walk over all of it, the heading flagged; only 3 s are integrated, and the
  /// estimate says so.
  @Test func aGapLongerThanTheIntegrationCapCountsInFull() {
    func across(gap: Double) -> (AttitudeEstimate, before: Double, after: Double) {
      let table = Turntable(seconds: 30, dropped: [10.0...(10.0 + gap - 0.005)])
      let estimates = table.run()
      let first = estimates.firstIndex { $0.t >= 10 }!
      // The vertical bias variance just before the gap, and after the first block after it
      // (its prediction includes the gap's integrated part).
      let before = estimates[first - 1].e.gyroBiasVariance.z
      let after = estimates.first { $0.t > 10 + gap + 0.15 }!.e.gyroBiasVariance.z
      return (estimates[first].e, before, after)
    }
    let long = across(gap: 10)
    #expect(long.0.flags.isSuperset(of: [.gap, .headingUncertain]))
    // 10.01 s since the sample before: 1000 missed.
    #expect(long.0.missedSamples == 1000)
    #expect(abs(long.0.integrationIntervalSeconds - 3) < 1e-9)
    let short = across(gap: 2.5)
    #expect(short.0.missedSamples == 250)
    #expect(abs(short.0.integrationIntervalSeconds - 2.51) < 1e-9)
    // The random walk over the extra 7.5 s of gap (10.01 s against 2.51), K² · 7.5 s.
    let extra = (long.after - long.before) - (short.after - short.before)
    let expected = randomWalk * randomWalk * 7.5
    #expect(
      abs(extra - expected) < 0.05 * expected, "extra variance \(extra), K²·7.5 s \(expected)")
  }

  /// The flag a gap raises is not forever: a 60 s gap (a suspended host) may have turned the
  /// board any way, flagged until the next rest.
  @Test func aSuspendedHostIsFlaggedUntilTheNextRest() {
    let table = Turntable(stillFrom: 72, seconds: 80, dropped: [10.0...69.995])
    let estimates = table.run()
    let first = estimates.firstIndex { $0.t >= 70 }!
    #expect(estimates[first].e.flags.isSuperset(of: [.gap, .headingUncertain]))
    let rest = estimates.firstIndex { $0.e.flags.contains(.restStarted) && $0.t > 70 }
    #expect(rest != nil)
    guard let rest, rest > first else { return }
    #expect(estimates[first..<rest].allSatisfy { $0.e.flags.contains(.headingUncertain) })
    #expect(!estimates[rest].e.flags.contains(.headingUncertain))
  }

  @Test func settingsAreChecked() {
    var settings = AttitudeEstimator.Settings.default
    #expect(settings.problem == nil)
    settings.gaps.headingStepRadians = 0
    #expect(settings.problem != nil)
    settings.gaps = .default
    settings.gaps.unseenAngularAccelerationRadiansPerSecondSquared = .nan
    #expect(settings.problem != nil)
    settings.gaps.unseenAngularAccelerationRadiansPerSecondSquared = 0
    settings.gaps.headingStepRadians = .infinity
    #expect(settings.problem == nil)
  }
}
