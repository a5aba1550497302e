/// What the rest detector decided, counted since the estimator started: a user whose board
/// sits still yet never rests finds out why here (`plumb run` prints it at the end).
public struct RestStatistics: Hashable, Sendable {
  /// Rests declared.
  public var rests: Int = 0
  /// Quiet, stationary dwells whose mean rate disagreed with the bias by a plausible jump (or,
  /// about horizontal axes, by what the accelerometer showed to be bias): the bias uncertainty
  /// was widened, so the next such dwell is a rest.
  public var biasJumps: Int = 0
  /// Quiet, stationary dwells refused as a slow steady turn: the mean rate disagreed with the
  /// bias by more than a bias could explain (about the vertical, beyond
  /// `RestDetector.Settings.maximumBiasJumpRadiansPerSecond`; about horizontal axes, the
  /// accelerometer saw the rotation). A board that is really still and counts these has a bias
  /// far from what it was told (a calibration file from another unit or another temperature).
  public var refusedAsTurning: Int = 0
  /// The disagreement of the last such dwell, rad/s.
  public var lastRefusedRateRadiansPerSecond: Double = 0
  /// Quiet dwells refused because their mean acceleration disagreed with the expected gravity
  /// (a steady push, a vehicle accelerating).
  public var refusedAsAccelerating: Int = 0
  /// Times the bias was re-opened (its uncertainty widened on every axis) because dwells of two
  /// quiet stretches, with motion between them, were refused with the same difference from the
  /// bias: a wrong bias, not a turn. The next dwell is a rest that measures it.
  public var biasReopenedAfterRefusals: Int = 0
  /// Times the bias was re-opened because the motion-bias innovations contradicted it for tens
  /// of seconds beyond its uncertainty (`GyroBiasEstimator.Settings.motionEvidenceSigmas`).
  public var biasReopenedInMotion: Int = 0

  public init() {}
}
