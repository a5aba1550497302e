import Geometry

/// Gap reacquisition: owns what decides whether the tilt restarts after a gap or a stretch of
/// suspect samples, and counts the restarts.
///
/// A gap is integrated with the rate after it; after one of `reacquisitionGapSeconds` or more
/// in which the body may have tilted (`mayHaveTilted`), the tilt restarts as at start-up from
/// the accelerometer, keeping the heading and the bias (`AttitudeEstimator.reacquire`). Samples
/// the driver reports as possibly misread (`distrustRecentSamples`) are judged as a gap of
/// their length.
///
/// It also owns what a gap may have done to the heading (`AttitudeEstimator.GapSettings`): the
/// seconds for which the estimates after it are still flagged `.headingUncertain`.
struct GapReacquisition: Sendable {
  /// Gaps and stretches of suspect samples after which the tilt was restarted.
  private(set) var count = 0
  /// Seconds of samples before the next one that may have been misread; 0 when none.
  private(set) var suspectSeconds: Double = 0
  /// `InclinationSettings.reacquisitionGapSeconds`.
  let gapSeconds: Double
  /// `Settings.gaps`.
  let gaps: AttitudeEstimator.GapSettings
  /// Seconds of estimates still to be flagged `.headingUncertain` after a gap that may have
  /// moved the heading by `gaps.headingStepRadians` or more; 0 when none.
  private(set) var headingGuessSeconds: Double = 0
  /// The cosine of the angle between the reading and the expected gravity from which the tilt
  /// may have changed in a gap (atan(a_low/g), the angle a horizontal acceleration at the
  /// rejection's lower threshold gives: 8.7° by default).
  private var tiltCosine: Double = 1

  init(settings: AttitudeEstimator.Settings) {
    gapSeconds = settings.inclination.reacquisitionGapSeconds
    gaps = settings.gaps
    setTiltAngle(settings)
  }

  /// Takes the tilt angle from `settings` (at start, or after a retune of the rejection's lower
  /// threshold).
  mutating func setTiltAngle(_ settings: AttitudeEstimator.Settings) {
    let low = max(settings.accelerationRejection.lowerThresholdMetersPerSecondSquared, 1e-3)
    let g = settings.gravityMetersPerSecondSquared
    tiltCosine = g / (g * g + low * low).squareRoot()
  }

  /// The samples of the last `seconds` may have been misread.
  mutating func distrust(seconds: Double) { suspectSeconds = max(suspectSeconds, seconds) }

  /// The suspect stretch's length, seconds, now judged (0 when none).
  mutating func takeSuspectSeconds() -> Double {
    let seconds = suspectSeconds
    suspectSeconds = 0
    return seconds
  }

  /// Whether the estimates are flagged `.headingUncertain` for a gap now.
  var isHeadingGuessed: Bool { headingGuessSeconds > 0 }

  /// A gap (or suspect stretch) of `unobservedSeconds`, `notIntegratedSeconds` of them not
  /// integrated at all, with `verticalRate` (rad/s, bias-corrected) after it: whether it may
  /// have moved the heading by `gaps.headingStepRadians` or more, in which case the estimates
  /// are flagged for as long as the bound, spread over the time since, exceeds the drift the
  /// flag otherwise tolerates.
  mutating func headingMayHaveStepped(
    unobservedSeconds: Double, notIntegratedSeconds: Double, verticalRate: Double
  ) -> Bool {
    let bound = gaps.headingErrorBound(
      unobservedSeconds: unobservedSeconds, notIntegratedSeconds: notIntegratedSeconds,
      verticalRate: verticalRate)
    guard bound >= gaps.headingStepRadians else { return false }
    headingGuessSeconds = max(
      headingGuessSeconds, bound / AttitudeEstimator.headingUncertainBiasRadiansPerSecond)
    return true
  }

  /// `seconds` of estimates went by (a block's). Whether a gap's heading flag just ran out.
  mutating func elapse(seconds: Double) -> Bool {
    guard headingGuessSeconds > 0 else { return false }
    headingGuessSeconds = max(0, headingGuessSeconds - seconds)
    return headingGuessSeconds == 0
  }

  /// A rest began and re-anchored the heading: a gap's flag ends.
  mutating func headingReanchored() { headingGuessSeconds = 0 }

  /// Counts a restart of the tilt.
  mutating func countReacquisition() { count &+= 1 }

  /// Whether the body may have tilted during a gap of `gapSeconds` by more than the gyro,
  /// carried over it, would give. Either it was turning about a horizontal axis before or
  /// after the gap (the rotation it may have missed, rate × gap, is 2° or more: the rates
  /// `rateBefore` and `rateAfter` less `bias`, about axes normal to `up`, body axes), or the
  /// reading after it (`reading`, reference frame) points further from the gravity the
  /// filter expects (`expected`) than the rejection's lower threshold would tilt it
  /// (`tiltCosine`), and its length says tilt rather than acceleration: a horizontal
  /// acceleration that turned the reading by θ would lengthen it by g(1/cos θ − 1), a tilt not
  /// at all, and the reading is taken for a tilt when its length is nearer to gravity's than
  /// to `lengthShare` of that (a push of 0.3 g: 16.7° and 0.44 m/s² longer, taken for an
  /// acceleration; a 60° tilt on an uncalibrated accelerometer whose scale errors make it 4 %
  /// longer, 0.4 m/s² of the 4.9 allowed, taken for a tilt). A reading that carries an
  /// acceleration would restart the tilt wrong, by atan(a/g): a vehicle that drives off during
  /// a gap keeps its carried attitude. Without `rates` (suspect samples: no rate can be
  /// trusted) only the reading decides.
  func mayHaveTilted(
    gapSeconds: Double, rates: (before: Vector3, after: Vector3)?, bias: Vector3, up u: Vector3,
    expected: Vector3, reading: Vector3, lengthShare: Double
  ) -> Bool {
    func horizontalRate(_ w: Vector3) -> Double {
      let r = w - bias
      let v = r.dot(u)
      return max(r.squaredLength - v * v, 0).squareRoot()
    }
    if let rates {
      let before = horizontalRate(rates.before)
      let after = horizontalRate(rates.after)
      if max(before, after) * gapSeconds >= 2 * .pi / 180 { return true }
    }
    let n = expected.length * reading.length
    guard n > 0 else { return false }
    let cosine = expected.dot(reading) / n
    guard cosine <= tiltCosine else { return false }
    guard cosine > 0 else { return true }
    let lengthening = expected.length * (1 / cosine - 1)
    return abs(reading.length - expected.length) < lengthShare * lengthening
  }
}
