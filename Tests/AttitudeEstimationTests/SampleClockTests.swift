import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

@Suite struct SampleClockTests {
  /// Feeds `times` (ns) and returns the steps.
  func steps(_ times: [Int64], settings: SampleClock.Settings = .default) -> (
    SampleClock, [SampleClock.Step]
  ) {
    var clock = SampleClock(settings: settings)
    let result = times.map { clock.advance(toNanoseconds: $0) }
    return (clock, result)
  }

  @Test func estimatesTheTruePeriodThroughJitter() {
    // The chip's oscillator runs 3 % slow (10.3 ms) and every edge carries 1 ms of jitter.
    let schedule = SampleSchedule(
      nominalPeriodSeconds: 0.0103, count: 2000, jitterSeconds: 0.001, seed: 5)
    let (clock, result) = steps(schedule.timestampsNanoseconds)
    #expect(abs(clock.periodSeconds - 0.0103) < 0.0103 * 0.003)
    #expect(result.first?.isFirst == true)
    #expect(result.dropFirst().allSatisfy { !$0.isGap && $0.missedSamples == 0 })
    #expect(clock.totalMissedSamples == 0)
  }

  @Test func intervalsAreTheRealOnes() {
    let times: [Int64] = [1_000_000_000, 1_010_000_000, 1_021_000_000, 1_029_500_000]
    let (_, result) = steps(times)
    for (got, expected) in zip(result.map(\.intervalSeconds), [0, 0.010, 0.011, 0.0085]) {
      #expect(abs(got - expected) < 1e-15)
    }
  }

  @Test func findsGapsAndCountsMissedSamples() {
    // 100 Hz with samples 37, 38 and 121 lost (seed 000).
    let schedule = SampleSchedule(nominalPeriodSeconds: 0.01, count: 200, dropped: [37, 38, 121])
    let (clock, result) = steps(schedule.timestampsNanoseconds)
    let gaps = result.enumerated().filter { $0.element.isGap }
    #expect(gaps.map(\.offset) == [37, 119])
    #expect(gaps.map(\.element.missedSamples) == [2, 1])
    #expect(clock.totalMissedSamples == 3)
    #expect(clock.gapCount == 2)
    // The gap is integrated over its real length.
    #expect(abs(gaps[0].element.intervalSeconds - 0.03) < 1e-12)
    // And the period estimate was not dragged by the gaps.
    #expect(abs(clock.periodSeconds - 0.01) < 1e-9)
  }

  @Test func rejectsTimestampsThatDoNotIncrease() {
    let (clock, result) = steps([0, 10_000_000, 10_000_000, 5_000_000, 20_000_000])
    #expect(result.map(\.isRejected) == [false, false, true, true, false])
    #expect(result[2].intervalSeconds == 0 && result[3].intervalSeconds == 0)
    // The next good sample is measured from the last accepted one.
    #expect(abs(result[4].intervalSeconds - 0.01) < 1e-12)
    #expect(clock.rejectedCount == 2)
  }

  @Test func learnsAnUnknownRateAndReacquiresAChangedOne() {
    var settings = SampleClock.Settings.default
    settings.nominalPeriodSeconds = nil
    let fast = (0..<300).map { Int64($0) * 3_500_000 }
    let (learned, _) = steps(fast, settings: settings)
    #expect(abs(learned.periodSeconds - 0.0035) < 1e-9)
    // The firmware expects 100 Hz but the chip was configured for 200 Hz: re-acquired.
    let (reacquired, result) = steps((0..<300).map { Int64($0) * 5_000_000 })
    #expect(abs(reacquired.periodSeconds - 0.005) < 1e-9)
    #expect(reacquired.reacquisitionCount == 1)
    #expect(result.suffix(200).allSatisfy { !$0.isGap })
  }

  @Test func isolatedGapsNeverReacquireTheirLength() {
    // A busy host misses one edge in fifty, for far longer than the re-acquisition streak: each
    // gap is isolated (normal intervals between them), so none may count toward re-learning
    // the period as 20 ms, and every lost sample is counted.
    let dropped = Set(stride(from: 25, to: 2_500, by: 50))
    let schedule = SampleSchedule(
      nominalPeriodSeconds: 0.01, count: 2_500, dropped: dropped)
    let (clock, result) = steps(schedule.timestampsNanoseconds)
    #expect(clock.reacquisitionCount == 0)
    #expect(abs(clock.periodSeconds - 0.01) < 1e-9)
    #expect(clock.gapCount == dropped.count)
    #expect(clock.totalMissedSamples == dropped.count)
    #expect(result.filter(\.isGap).allSatisfy { $0.missedSamples == 1 })
  }

  @Test func settingsAreValidated() {
    #expect(SampleClock.Settings.default.problem == nil)
    #expect(SampleClock.Settings(nominalPeriodSeconds: -1).problem != nil)
    #expect(SampleClock.Settings(jitterTolerance: 0.7).problem != nil)
    #expect(SampleClock.Settings(gapFactor: 1.1).problem != nil)
  }
}

/// Seed 000's timestamp example through the whole estimator: a level body turning at 90 °/s
/// for 2 s, sampled at 100 Hz with 1 ms of jitter and samples 37, 38 and 121 lost.
@Suite struct TimestampScenarioTests {
  @Test func realIntervalsLoseLessThanFiveHundredthsOfADegree() {
    let schedule = SampleSchedule(
      nominalPeriodSeconds: 0.01, count: 200, jitterSeconds: 0.001, dropped: [37, 38, 121], seed: 11
    )
    let turn = ConstantTurnScenario()
    let samples = run(turn, timestamps: schedule.timestampsNanoseconds)
    let first = samples.first!
    let last = samples.last!
    // The heading change between the first and the last sample, against the truth's.
    let estimated = last.estimate.attitude.relative(to: first.estimate.attitude).heading
    let truth = last.truth.attitude.relative(to: first.truth.attitude).heading
    let error = degrees(abs(estimated - truth))
    #expect(error < 0.05, "lost \(error)°")

    // A fixed 10 ms per sample misses the dropped samples' turn: seed 000's 2.7°.
    let fixed = 90.0 * 0.01 * Double(samples.count - 1)
    let lostByFixed = degrees(truth) - fixed
    #expect(lostByFixed > 2.5)

    // Gaps are flagged on the samples after them and the missed samples counted.
    let gaps = samples.filter { $0.estimate.flags.contains(.gap) }
    #expect(gaps.count == 2)
    #expect(samples.map(\.estimate.missedSamples).reduce(0, +) == 3)
    // A constant 90 °/s turn is quiet but far from any plausible bias: never taken for rest.
    #expect(!samples.contains { $0.estimate.isAtRest })
  }
}
