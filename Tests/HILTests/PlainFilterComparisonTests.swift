import HIL
import Testing

/// `plumb-hil run … --plain-filter TAU` plays the scenario with seed 001's plain complementary
/// filter in place of Plumb's estimator, so a user sees on their scenario what the estimator
/// buys (the estimator README's table of scenarios is made with it).
@Suite struct PlainFilterComparisonTests {
  /// A 30 s push of 3 m/s²: the plain filter (τ = 1 s) follows the apparent vertical, 17° off
  /// (12.96° RMS over the run, measured); Plumb rejects it (0.36°).
  @Test func thePlainFilterFollowsALongPushThatPlumbRejects() throws {
    let plain = try hil("long-push", seconds: 54, seed: 1) {
      $0.unit = .noisy(seed: 1)
      $0.plainFilterSeconds = 1
    }
    let plumb = try hil("long-push", seconds: 54, seed: 1) { $0.unit = .noisy(seed: 1) }
    #expect(plain.plainFilterSeconds == 1 && plumb.plainFilterSeconds == nil)
    #expect(plain.accuracy.inclinationRMSDegrees > 10, "plain \(plain.accuracy)")
    #expect(plumb.accuracy.inclinationRMSDegrees < 1, "Plumb \(plumb.accuracy)")
  }
}
