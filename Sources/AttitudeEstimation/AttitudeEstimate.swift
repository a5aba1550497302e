import Geometry

/// Health and state flags of one estimate, ready to travel in a telemetry frame.
public struct EstimateFlags: OptionSet, Hashable, Sendable {
  public let rawValue: UInt16
  public init(rawValue: UInt16) { self.rawValue = rawValue }

  /// The start-up window: the tilt is the running mean of the accelerometer so far.
  public static let initialising = EstimateFlags(rawValue: 1 << 0)
  /// The rest detector holds: attitude and heading are held, the gyro bias is re-estimated.
  public static let atRest = EstimateFlags(rawValue: 1 << 1)
  /// The accelerometer disagreed with the estimate by more than the rejection threshold and
  /// was trusted less (or not at all) for this sample.
  public static let accelerationRejected = EstimateFlags(rawValue: 1 << 2)
  /// Rejection lasted longer than the gyro bias's uncertainty lets the gyro carry the attitude
  /// (3σ of its horizontal part × the time rejected reached atan(a_low/g)): the accelerometer
  /// is trusted again, though it still disagrees, until it agrees. Never with
  /// `accelerationRejected`.
  public static let recovering = EstimateFlags(rawValue: 1 << 3)
  /// At least one sample is missing before this one (interval > 1.5 × the sample period),
  /// however long: a gap longer than `SampleClock.Settings.maximumIntegrationIntervalSeconds`
  /// is integrated over that much only (`integrationIntervalSeconds`), its missed samples
  /// counted over all of it.
  public static let gap = EstimateFlags(rawValue: 1 << 4)
  /// The input sample was marked clipped (a reading at ≥ 98 % of full scale).
  public static let clippedInput = EstimateFlags(rawValue: 1 << 5)
  /// The timestamp did not increase: the sample was rejected and not integrated.
  public static let timestampRejected = EstimateFlags(rawValue: 1 << 6)
  /// The sample held a NaN or an infinity, or a rate and force no sensor gives
  /// (`AttitudeEstimator.maximumInput`): it was rejected and not integrated.
  public static let invalidInput = EstimateFlags(rawValue: 1 << 7)
  /// Just this sample: a rest began and the attitude was re-anchored (tilt from the rest's mean
  /// acceleration, heading restored to where the rest began, bias from the rest's mean rate).
  public static let restStarted = EstimateFlags(rawValue: 1 << 8)
  /// The gyro-bias estimate hit `GyroBiasSettings.maximumBiasRadiansPerSecond`.
  public static let biasLimited = EstimateFlags(rawValue: 1 << 9)
  /// The heading is not known as well as the gyro would know it. Either the gyro bias about
  /// the vertical is not known to `headingUncertainBiasRadiansPerSecond` (0.1 °/s, 1σ): the
  /// heading may drift by more than 6° a minute while the body moves — an uncalibrated gyro
  /// before its first rest (up to ±20 °/s), or minutes of motion without a rest since. Or a gap
  /// in the samples (or samples found suspect after the fact) may have moved it by 1° or more
  /// unseen (`AttitudeEstimator.GapSettings`): flagged from the sample after it until a rest
  /// begins, or for 10 s per degree the gap may have left (30 minutes at most). The tilt is
  /// unaffected (the accelerometer holds it).
  public static let headingUncertain = EstimateFlags(rawValue: 1 << 10)
}

/// What the estimator says after one sample.
///
/// Frames: `attitude` maps body-frame vectors into the reference frame (right-handed, z up,
/// x = the heading at start). Everything else is in the body frame. Without a magnetometer the
/// heading (rotation about z) is relative to the start and drifts slowly — by the residual
/// vertical gyro bias times the time spent moving; it does not drift while at rest.
public struct AttitudeEstimate: Hashable, Sendable {
  /// The sample's timestamp, nanoseconds.
  public var timestampNanoseconds: Int64
  /// Body → reference attitude, unit length, `w ≥ 0` not guaranteed (q and −q are one attitude;
  /// consecutive outputs stay on one hemisphere).
  public var attitude: Quaternion
  /// Gravity's direction in the body frame, unit length: the reference `(0, 0, −1)` seen from
  /// the body. Multiply by the local g for m/s².
  public var gravityInBody: Vector3
  /// The body's own acceleration, body frame, m/s²: specific force + g · `gravityInBody`
  /// (zero at rest, whatever the tilt).
  public var linearAccelerationMetersPerSecondSquared: Vector3
  /// Angular rate with the estimated bias removed, body frame, rad/s.
  public var angularRateRadiansPerSecond: Vector3
  /// The gyro-bias estimate subtracted from the raw rate, body frame, rad/s.
  public var gyroBiasRadiansPerSecond: Vector3
  /// The variance of the bias estimate per body axis, (rad/s)².
  public var gyroBiasVariance: Vector3
  /// One standard deviation of the bias estimate per body axis, rad/s. Grows between rests like
  /// a random walk; shrinks during rests (and slowly, for the horizontal axes, during motion).
  public var gyroBiasUncertaintyRadiansPerSecond: Vector3 {
    Vector3(
      gyroBiasVariance.x.squareRoot(), gyroBiasVariance.y.squareRoot(),
      gyroBiasVariance.z.squareRoot())
  }
  /// The rest detector's verdict for this sample.
  public var isAtRest: Bool { flags.contains(.atRest) }
  /// Samples missing immediately before this one (0 unless `flags` has `.gap`).
  public var missedSamples: Int
  /// The interval this sample was integrated over, seconds (0 for the first sample and for
  /// rejected ones).
  public var integrationIntervalSeconds: Double
  /// The current estimate of the true sample period, seconds.
  public var samplePeriodSeconds: Double
  /// See `EstimateFlags`. (Last, so that its padding is the struct's tail, not copied with
  /// every estimate.)
  public var flags: EstimateFlags

  public init(
    timestampNanoseconds: Int64, attitude: Quaternion, gravityInBody: Vector3,
    linearAccelerationMetersPerSecondSquared: Vector3, angularRateRadiansPerSecond: Vector3,
    gyroBiasRadiansPerSecond: Vector3, gyroBiasVariance: Vector3,
    flags: EstimateFlags, missedSamples: Int, integrationIntervalSeconds: Double,
    samplePeriodSeconds: Double
  ) {
    self.timestampNanoseconds = timestampNanoseconds
    self.attitude = attitude
    self.gravityInBody = gravityInBody
    self.linearAccelerationMetersPerSecondSquared = linearAccelerationMetersPerSecondSquared
    self.angularRateRadiansPerSecond = angularRateRadiansPerSecond
    self.gyroBiasRadiansPerSecond = gyroBiasRadiansPerSecond
    self.gyroBiasVariance = gyroBiasVariance
    self.flags = flags
    self.missedSamples = missedSamples
    self.integrationIntervalSeconds = integrationIntervalSeconds
    self.samplePeriodSeconds = samplePeriodSeconds
  }
}
