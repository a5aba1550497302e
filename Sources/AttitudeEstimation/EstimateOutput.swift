import Geometry

/// Outputs: owns the flags that report the estimator's state (not the sample's), and builds
/// each sample's `AttitudeEstimate` — gravity in body axes, linear acceleration, the
/// bias-corrected rate, the bias and its variance, the flags.
///
/// The state flags change only at block ends and events (rejection, recovery, start-up, rest,
/// bias limited, heading uncertain), so they are computed there (`refreshStateFlags`) and the
/// per-sample path only reads them.
struct EstimateOutput: Sendable {
  /// The state flags, as raw bits.
  private(set) var stateFlags: UInt16 = EstimateFlags.initialising.rawValue
  /// `.headingUncertain`'s bit while a gap's heading is flagged (`GapReacquisition`), else 0:
  /// set and cleared at those events, so that a block end only ors it in.
  private var gapHeadingFlag: UInt16 = 0
  /// Gravity's magnitude, m/s² (for the linear acceleration).
  private let gravity: Double

  init(gravity: Double) { self.gravity = gravity }

  /// Recomputes the state flags.
  @inline(__always)
  mutating func refreshStateFlags(
    isRejecting: Bool, isRecovering: Bool, isInitialising: Bool, isAtRest: Bool,
    isBiasLimited: Bool, verticalBiasVariance vertical: Double
  ) {
    var raw: UInt16 = 0
    if isRejecting { raw |= EstimateFlags.accelerationRejected.rawValue }
    if isRecovering { raw |= EstimateFlags.recovering.rawValue }
    if isInitialising { raw |= EstimateFlags.initialising.rawValue }
    if isAtRest { raw |= EstimateFlags.atRest.rawValue }
    if isBiasLimited { raw |= EstimateFlags.biasLimited.rawValue }
    // `vertical`: the bias's variance about the vertical (the heading's drift rate).
    let limit = AttitudeEstimator.headingUncertainBiasRadiansPerSecond
    if vertical > limit * limit { raw |= EstimateFlags.headingUncertain.rawValue }
    stateFlags = raw | gapHeadingFlag
  }

  /// A gap's heading flag begins (`true`) or ends; the state flags follow at their next
  /// refresh (at once when it begins).
  mutating func setHeadingGuessed(_ isGuessed: Bool) {
    gapHeadingFlag = isGuessed ? EstimateFlags.headingUncertain.rawValue : 0
    stateFlags |= gapHeadingFlag
  }

  /// The estimate after a propagated sample: `attitude` (which carries the correction accrued
  /// in the block), the bias-corrected rate `omega`, the `bias` and its variance, the sample's
  /// own flags, the interval integrated and the missed samples before it.
  @inline(__always)
  func estimate(
    _ sample: InertialSample, attitude o: Quaternion, omega: Vector3, bias: Vector3,
    biasVariance: Vector3, flags: UInt16, interval: Double, missedSamples: Int, period: Double
  ) -> AttitudeEstimate {
    let g = Vector3(
      2 * (o.w * o.y - o.x * o.z), -2 * (o.y * o.z + o.w * o.x),
      -1 + 2 * (o.x * o.x + o.y * o.y))
    var raw = flags | stateFlags
    if sample.isClipped { raw |= EstimateFlags.clippedInput.rawValue }
    let f = sample.specificForceMetersPerSecondSquared
    return AttitudeEstimate(
      timestampNanoseconds: sample.timestampNanoseconds, attitude: o, gravityInBody: g,
      linearAccelerationMetersPerSecondSquared: Vector3(
        f.x + g.x * gravity, f.y + g.y * gravity, f.z + g.z * gravity),
      angularRateRadiansPerSecond: omega, gyroBiasRadiansPerSecond: bias,
      gyroBiasVariance: biasVariance, flags: EstimateFlags(rawValue: raw),
      missedSamples: missedSamples, integrationIntervalSeconds: interval,
      samplePeriodSeconds: period)
  }

  /// The estimate after a sample the tilt (re)started from — the first, or one after a gap —
  /// which integrated nothing.
  func restartEstimate(
    _ sample: InertialSample, attitude q: Quaternion, bias: Vector3, biasVariance: Vector3,
    flags: EstimateFlags, missedSamples: Int, period: Double
  ) -> AttitudeEstimate {
    var flags = EstimateFlags(rawValue: flags.rawValue | stateFlags)
    if sample.isClipped { flags.insert(.clippedInput) }
    let g = q.gravityInBody
    return AttitudeEstimate(
      timestampNanoseconds: sample.timestampNanoseconds, attitude: q, gravityInBody: g,
      linearAccelerationMetersPerSecondSquared: sample.specificForceMetersPerSecondSquared
        + g * gravity,
      angularRateRadiansPerSecond: sample.angularRateRadiansPerSecond - bias,
      gyroBiasRadiansPerSecond: bias, gyroBiasVariance: biasVariance, flags: flags,
      missedSamples: missedSamples, integrationIntervalSeconds: 0, samplePeriodSeconds: period)
  }

  /// The estimate for a sample that cannot be used: the current state, flagged `flag`; its
  /// rate and linear acceleration where the sample's are plausible, zero otherwise.
  func rejectedEstimate(
    _ sample: InertialSample, attitude: Quaternion, bias: Vector3, biasVariance: Vector3,
    flag: EstimateFlags, period: Double
  ) -> AttitudeEstimate {
    let g = attitude.gravityInBody
    let accel = sample.specificForceMetersPerSecondSquared
    let gyro = sample.angularRateRadiansPerSecond
    return AttitudeEstimate(
      timestampNanoseconds: sample.timestampNanoseconds, attitude: attitude, gravityInBody: g,
      linearAccelerationMetersPerSecondSquared: AttitudeEstimator.isPlausible(
        gyro: .zero, accel: accel)
        ? accel + g * gravity : Vector3(0, 0, 0),
      angularRateRadiansPerSecond: AttitudeEstimator.isPlausible(gyro: gyro, accel: .zero)
        ? gyro - bias : Vector3(0, 0, 0),
      gyroBiasRadiansPerSecond: bias, gyroBiasVariance: biasVariance,
      flags: EstimateFlags(rawValue: flag.rawValue | stateFlags), missedSamples: 0,
      integrationIntervalSeconds: 0, samplePeriodSeconds: period)
  }
}
