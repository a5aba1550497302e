import Geometry

extension AttitudeEstimator {
  /// How the inclination (tilt) correction behaves.
  public struct InclinationSettings: Hashable, Sendable {
    /// The filter that turns accelerometer readings into a tilt correction.
    public enum Order: Hashable, Sendable {
      /// First-order smoothing: the plain complementary filter of seed 001. Its error under a
      /// sustained horizontal acceleration a⊥ after t seconds is `atan(a⊥/g)(1 − e^(−t/τ))`.
      case first
      /// Second-order Butterworth applied in the almost-inertial frame (VQF's idea): the same
      /// bias error b⊥·τ, but accelerations that come and go (a hand moving, a vehicle
      /// vibrating) are attenuated 40 dB per decade instead of 20.
      case second
    }

    /// τ, seconds: a gyro bias b⊥ about a horizontal axis leaves a steady tilt error of b⊥·τ,
    /// and a sustained horizontal acceleration takes about τ to tilt the estimate (seed 001's
    /// one knob). Default 3 s (VQF's default, which scores best on the BROAD recordings): with
    /// a bias re-estimated to about 0.01 °/s the bias error is 0.03°, and a hand's accelerations
    /// of a second or two are averaged out.
    public var timeConstantSeconds: Double
    /// Default `.second`.
    public var order: Order
    /// The start-up window, seconds: the tilt is the running mean of the accelerometer (carried
    /// along by the gyro) until then, so the first estimate is the first reading and it only
    /// gets better. Default 1 s. Flagged `.initialising`.
    public var initialisationSeconds: Double
    /// A gap in the samples at least this long, seconds, restarts the tilt as at start-up:
    /// from the first reading after it, then the running mean of the accelerometer for
    /// `initialisationSeconds` (flagged `.initialising`); the heading and the gyro bias are
    /// kept, the acceleration rejection starts afresh. Whatever the body did while no sample
    /// came (a stalled bus, a re-initialised chip, a suspended host) the gyro did not see, and
    /// an attitude that is off by it looks to the rejection like a sustained acceleration: it
    /// was held off for the 10 s of recovery and then took τ to converge. Default 0.2 s (20
    /// samples at 100 Hz; `.infinity`: never). Shorter gaps are integrated over their real
    /// length with the rate of the sample after them.
    public var reacquisitionGapSeconds: Double

    public init(
      timeConstantSeconds: Double = 3, order: Order = .second, initialisationSeconds: Double = 1,
      reacquisitionGapSeconds: Double = 0.2
    ) {
      self.timeConstantSeconds = timeConstantSeconds
      self.order = order
      self.initialisationSeconds = initialisationSeconds
      self.reacquisitionGapSeconds = reacquisitionGapSeconds
    }

    public static let `default` = InclinationSettings()
  }

  /// When the accelerometer is trusted less: its reading, mapped into the reference frame,
  /// minus the gravity the estimate expects, is the linear acceleration the estimate implies.
  /// A large one means the body is accelerating (or the estimate is wrong); either way that
  /// sample says little about the tilt.
  public struct AccelerationRejectionSettings: Hashable, Sendable {
    /// Default on.
    public var isEnabled: Bool
    /// Below this linear acceleration, m/s², the accelerometer is fully trusted.
    public var lowerThresholdMetersPerSecondSquared: Double
    /// Above this, m/s², it is ignored; in between its weight falls linearly with the square.
    public var upperThresholdMetersPerSecondSquared: Double
    /// The shortest rejection, seconds. A rejection lasts as long as the gyro can carry the
    /// attitude alone — while 3σ of the gyro bias's horizontal part times the time rejected
    /// (counting rejected blocks up and trusted ones down `recoveryRatio` times faster) stays
    /// within the tilt the lower threshold's acceleration would cause, atan(a_low/g) — and at
    /// least this long; it starts only while the bias is known well enough to carry this long
    /// (σ_h < 0.29 °/s with the defaults: a rest, a calibration file or the motion-bias
    /// measurement; shorter rejections for a less known bias measured worse than none). Then
    /// it switches to **recovery**: the accelerometer is trusted again until the two agree. A
    /// sustained push is then indistinguishable from a tilt, and the estimate follows it
    /// (seed 001: any acceleration that lasts longer than the gyro can carry the attitude
    /// looks like gravity). Default 10 s; after a rest a rejection lasts about a minute.
    public var recoverySeconds: Double
    /// How much faster trusted samples count down than rejected ones count up. Default 9
    /// (x-io Fusion's rule: prolonged means rejected more than 90 % of the time).
    public var recoveryRatio: Int
    /// Time constant of the sustained-acceleration detector's low-pass filter, seconds.
    public var detectorTimeConstantSeconds: Double
    /// Time constant of the slow mean the velocity is measured against, seconds.
    public var referenceTimeConstantSeconds: Double

    public init(
      isEnabled: Bool = true, lowerThresholdMetersPerSecondSquared: Double = 1.5,
      upperThresholdMetersPerSecondSquared: Double = 2.5, recoverySeconds: Double = 10,
      recoveryRatio: Int = 9, detectorTimeConstantSeconds: Double = 1,
      referenceTimeConstantSeconds: Double = 10
    ) {
      self.referenceTimeConstantSeconds = referenceTimeConstantSeconds
      self.detectorTimeConstantSeconds = detectorTimeConstantSeconds
      self.isEnabled = isEnabled
      self.lowerThresholdMetersPerSecondSquared = lowerThresholdMetersPerSecondSquared
      self.upperThresholdMetersPerSecondSquared = upperThresholdMetersPerSecondSquared
      self.recoverySeconds = recoverySeconds
      self.recoveryRatio = recoveryRatio
    }

    public static let `default` = AccelerationRejectionSettings()
    public static let off = AccelerationRejectionSettings(isEnabled: false)
  }

  /// What a gap in the samples (or a stretch of suspect ones) may have done to the heading.
  ///
  /// Nothing but the gyro measures the heading, and nothing measured it while no sample came:
  /// the gap is integrated with the rate after it, a guess. The body's rate about the vertical
  /// may have left that rate unseen: at an angular acceleration of α, by α·t at t seconds
  /// before the gap's end, so that over `T` unobserved seconds (the gap less the one period
  /// the sample after it stands for) the heading integrated may be off by ½·α·T². Time beyond
  /// `SampleClock.Settings.maximumIntegrationIntervalSeconds` is not integrated at all: there
  /// the heading may be off by the rate after the gap times that time as well. A gap whose
  /// bound reaches `headingStepRadians` is flagged `.headingUncertain` (with `.gap`) until a
  /// rest begins (its start re-anchors the heading: held still, the bias measured afresh), or
  /// until the time since the gap is long enough that the step, spread over it, is no more
  /// than the heading drift the flag otherwise tolerates
  /// (`AttitudeEstimator.headingUncertainBiasRadiansPerSecond`, 0.1 °/s): 10 s per degree,
  /// 30 minutes at most (a heading known to no better than ±180°). Samples the driver reports
  /// as possibly misread (`AttitudeEstimator.distrustRecentSamples`) count as unobserved,
  /// their rates no guide.
  public struct GapSettings: Hashable, Sendable {
    /// α, rad/s²: the angular acceleration about the vertical the body may have had while no
    /// sample came. Default 250 °/s² (a brisk turn by hand: from still to 90 °/s in 0.36 s):
    /// a missed sample or two (10–20 ms unobserved) may leave 0.05° at most, 0.2 s (the tilt's
    /// reacquisition gap) 5°.
    public var unseenAngularAccelerationRadiansPerSecondSquared: Double
    /// The heading error bound from which a gap is flagged `.headingUncertain`, radians.
    /// Default 1°, the heading drift of a well-estimated bias (0.01 °/s) over two minutes of
    /// motion: smaller steps are within the heading's ordinary error. With the default α, a
    /// gap of 0.1 s (9 samples missed at 100 Hz) or more.
    public var headingStepRadians: Double

    public init(
      unseenAngularAccelerationRadiansPerSecondSquared: Double = 250 * .pi / 180,
      headingStepRadians: Double = 1 * .pi / 180
    ) {
      self.unseenAngularAccelerationRadiansPerSecondSquared =
        unseenAngularAccelerationRadiansPerSecondSquared
      self.headingStepRadians = headingStepRadians
    }

    public static let `default` = GapSettings()

    /// The heading error a gap of `seconds` unobserved may have left, radians, of which
    /// `notIntegratedSeconds` were not integrated at all while the body turned at
    /// `verticalRate` (rad/s) after it; at most π (a heading not known at all).
    func headingErrorBound(
      unobservedSeconds t: Double, notIntegratedSeconds: Double, verticalRate: Double
    ) -> Double {
      let bound =
        0.5 * unseenAngularAccelerationRadiansPerSecondSquared * t * t
        + max(notIntegratedSeconds, 0) * abs(verticalRate)
      return bound.isNaN ? .pi : min(bound, .pi)
    }
  }

  /// Everything the estimator can be told. Every field has a default with its reason; a
  /// calibration file overrides `noise` (from its Allan analysis), `bias` (its measured bias
  /// and uncertainty) and, through `RestDetector.Settings(noise:samplePeriodSeconds:)`, the rest
  /// thresholds.
  public struct Settings: Hashable, Sendable {
    public var sampleClock: SampleClock.Settings
    public var inclination: InclinationSettings
    public var accelerationRejection: AccelerationRejectionSettings
    public var rest: RestDetector.Settings
    public var bias: GyroBiasEstimator.Settings
    public var noise: SensorNoise
    /// What a gap may have done to the heading, and how long it is flagged.
    public var gaps: GapSettings
    /// Hold the attitude while at rest (no gyro integration: the zero-velocity update of seed
    /// 000) and re-anchor it when a rest begins (tilt from the rest's mean acceleration,
    /// heading put back to where the rest began). Default on.
    public var holdsAttitudeAtRest: Bool
    /// The magnitude of gravity, m/s². Default standard gravity (9.80665 m/s²).
    public var gravityMetersPerSecondSquared: Double

    public init(
      sampleClock: SampleClock.Settings = .default, inclination: InclinationSettings = .default,
      accelerationRejection: AccelerationRejectionSettings = .default,
      rest: RestDetector.Settings = .default, bias: GyroBiasEstimator.Settings = .default,
      noise: SensorNoise = .mpu6050, gaps: GapSettings = .default,
      holdsAttitudeAtRest: Bool = true,
      gravityMetersPerSecondSquared: Double = standardGravity
    ) {
      self.sampleClock = sampleClock
      self.inclination = inclination
      self.accelerationRejection = accelerationRejection
      self.rest = rest
      self.bias = bias
      self.noise = noise
      self.gaps = gaps
      self.holdsAttitudeAtRest = holdsAttitudeAtRest
      self.gravityMetersPerSecondSquared = gravityMetersPerSecondSquared
    }

    /// The full estimator with every default: 100 Hz nominal.
    public static let `default` = Settings()

    /// The plain complementary filter of seed 001, for comparison: first order with time
    /// constant `timeConstantSeconds`, no acceleration rejection, no rest detection, no bias
    /// estimation (the gyro is used as it comes, minus `bias`), no start-up averaging.
    public static func plain(
      timeConstantSeconds: Double, sampleClock: SampleClock.Settings = .default
    ) -> Settings {
      Settings(
        sampleClock: sampleClock,
        inclination: InclinationSettings(
          timeConstantSeconds: timeConstantSeconds, order: .first, initialisationSeconds: 0,
          reacquisitionGapSeconds: .infinity),
        accelerationRejection: .off,
        rest: RestDetector.Settings(isEnabled: false),
        bias: GyroBiasEstimator.Settings(
          restEstimationEnabled: false, motionEstimationEnabled: false),
        holdsAttitudeAtRest: false)
    }

    /// What is wrong with these settings, or `nil` when they are usable. The message names the
    /// setting and what it must be.
    public var problem: String? {
      if let p = sampleClock.problem { return "sample clock: \(p)" }
      if !(inclination.timeConstantSeconds > 0) {
        return "inclination time constant must be a positive number of seconds"
      }
      if !(inclination.initialisationSeconds >= 0) {
        return "initialisation window must not be negative"
      }
      if !(inclination.reacquisitionGapSeconds > 0) {
        return "the gap that restarts the tilt must be a positive number of seconds (∞: never)"
      }
      let r = accelerationRejection
      if r.isEnabled {
        if !(r.lowerThresholdMetersPerSecondSquared >= 0
          && r.upperThresholdMetersPerSecondSquared > r.lowerThresholdMetersPerSecondSquared)
        {
          return "acceleration rejection needs 0 ≤ lower threshold < upper threshold (m/s²)"
        }
        if !(r.recoverySeconds > 0) || r.recoveryRatio < 1 {
          return "acceleration recovery needs a positive time and a ratio of at least 1"
        }
      }
      if let p = rest.problem { return p }
      if let p = bias.problem { return p }
      if !(noise.gyroNoiseDensity > 0 && noise.gyroBiasRandomWalk >= 0
        && noise.accelerometerNoiseDensity > 0)
      {
        return "sensor noise figures must be positive"
      }
      if !(gaps.unseenAngularAccelerationRadiansPerSecondSquared >= 0
        && gaps.unseenAngularAccelerationRadiansPerSecondSquared.isFinite)
      {
        return "the unseen angular acceleration of a gap must be a finite number ≥ 0 (rad/s²)"
      }
      if !(gaps.headingStepRadians > 0) {
        return "the heading step that flags a gap must be a positive angle (radians; ∞: never)"
      }
      if !(gravityMetersPerSecondSquared > 0) { return "gravity must be positive (m/s²)" }
      return nil
    }
  }
}
