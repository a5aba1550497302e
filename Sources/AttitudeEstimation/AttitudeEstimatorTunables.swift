extension AttitudeEstimator {
  /// The settings a user tunes in the field, which `AttitudeEstimator.retune(_:)` changes while
  /// the estimator runs (a ground station's PARAM_SET, a host's `set NAME VALUE`), between two
  /// samples, from the next sample on.
  ///
  /// Only settings whose change the estimator can apply correctly mid-run are here:
  /// - **τ** (`timeConstantSeconds`): the inclination filter's memory is the filtered specific
  ///   force and its rate of change, quantities of the signal, so the filter goes on from where
  ///   it stands with new coefficients. What depends on τ follows it: the motion-bias
  ///   measurement's row filters, which model the inclination filter (restarted from the next
  ///   block's rows, as after a rest), and the tilt error a rest may show (3σ·τ).
  /// - **Acceleration rejection** (`rejectsAccelerations`, the two thresholds): decided once
  ///   per block from the detector's output, so new thresholds apply from the next block's
  ///   weight; switched off, a rejection under way ends at once and the accelerometer is
  ///   trusted (the detector starts afresh when switched on again). The lower threshold also
  ///   sets the angle after which a gap may have tilted the body (step 9).
  /// - **Holding the attitude at rest** (`holdsAttitudeAtRest`): read every sample. Switched
  ///   on during a rest, the attitude is held from the next sample (the rest's re-anchoring,
  ///   done when it began, is not made up); switched off, it is integrated again.
  ///
  /// Not here, and why: the filter's `order` (the first- and second-order filters' memories
  /// mean different things; it selects seed 001's plain filter for comparison);
  /// `initialisationSeconds` and `reacquisitionGapSeconds` (start-up and fault handling, not
  /// field tuning); the rejection's recovery time, ratio and detector time constants (the
  /// detector's low-pass states belong to its coefficients: a change replays a transient, and
  /// they are not what a user tunes); the rest thresholds, the bias and noise settings (a
  /// calibration's, from the unit's Allan analysis: changed mid-run they would change the
  /// meaning of the bias's covariance and of a rest under way); the sample clock (the chip's
  /// configuration: a new estimator); gravity (a site constant).
  public struct Tunables: Hashable, Sendable {
    /// τ, seconds: the inclination filter's time constant (`InclinationSettings`). A longer τ
    /// averages accelerations out longer and converges more slowly after a tilt; a gyro bias
    /// b⊥ leaves a tilt error b⊥·τ. Range `timeConstantRange`.
    public var timeConstantSeconds: Double
    /// Whether sustained accelerations are rejected (`AccelerationRejectionSettings.isEnabled`).
    public var rejectsAccelerations: Bool
    /// Below this sustained horizontal acceleration, m/s², the accelerometer is fully trusted.
    /// Range `lowerThresholdRange`, below the upper threshold.
    public var rejectionLowerThresholdMetersPerSecondSquared: Double
    /// Above this, m/s², the inclination filter stops. Range `upperThresholdRange`, above the
    /// lower threshold.
    public var rejectionUpperThresholdMetersPerSecondSquared: Double
    /// Whether the attitude is held at rest (`Settings.holdsAttitudeAtRest`).
    public var holdsAttitudeAtRest: Bool

    /// τ's allowed range, seconds. Below 0.5 s the filter no longer averages a hand's
    /// accelerations out, and its 0.2 s blocks (on which the motion-bias row filters run,
    /// cutoff √2/(2πτ) against the blocks' 2.5 Hz Nyquist frequency) become coarse for it; above
    /// 10 s the motion-bias loop, never faster than 10 s
    /// (`GyroBiasEstimator.Settings.motionMinimumTimeConstantSeconds`), would be faster than the
    /// filter it listens to.
    public static let timeConstantRange: ClosedRange<Double> = 0.5...10
    /// The lower rejection threshold's allowed range, m/s². Below 0.25 m/s² a hand's motion is
    /// rejected and the rejection can barely start (it lasts while the gyro drifts by less
    /// than atan(a_low/g), 1.5° at 0.25 m/s²); above 5 m/s² (0.5 g) almost nothing is.
    public static let lowerThresholdRange: ClosedRange<Double> = 0.25...5
    /// The upper rejection threshold's allowed range, m/s²; it must also exceed the lower one.
    /// 10 m/s² is about 1 g, beyond any sustained horizontal acceleration a vehicle gives.
    public static let upperThresholdRange: ClosedRange<Double> = 0.5...10

    public init(
      timeConstantSeconds: Double, rejectsAccelerations: Bool,
      rejectionLowerThresholdMetersPerSecondSquared: Double,
      rejectionUpperThresholdMetersPerSecondSquared: Double, holdsAttitudeAtRest: Bool
    ) {
      self.timeConstantSeconds = timeConstantSeconds
      self.rejectsAccelerations = rejectsAccelerations
      self.rejectionLowerThresholdMetersPerSecondSquared =
        rejectionLowerThresholdMetersPerSecondSquared
      self.rejectionUpperThresholdMetersPerSecondSquared =
        rejectionUpperThresholdMetersPerSecondSquared
      self.holdsAttitudeAtRest = holdsAttitudeAtRest
    }

    /// The tunable part of `settings`.
    public init(settings: Settings) {
      let r = settings.accelerationRejection
      self.init(
        timeConstantSeconds: settings.inclination.timeConstantSeconds,
        rejectsAccelerations: r.isEnabled,
        rejectionLowerThresholdMetersPerSecondSquared: r.lowerThresholdMetersPerSecondSquared,
        rejectionUpperThresholdMetersPerSecondSquared: r.upperThresholdMetersPerSecondSquared,
        holdsAttitudeAtRest: settings.holdsAttitudeAtRest)
    }

    /// The defaults (`Settings.default`'s).
    public static let `default` = Tunables(settings: .default)

    /// One tunable setting: its name as a person reads it, its unit and its range.
    public enum Setting: Hashable, Sendable, CaseIterable {
      case timeConstant
      case rejectsAccelerations
      case rejectionLowerThreshold
      case rejectionUpperThreshold
      case holdsAttitudeAtRest

      /// The setting's name, for messages.
      public var name: String {
        switch self {
        case .timeConstant: "inclination time constant"
        case .rejectsAccelerations: "acceleration rejection"
        case .rejectionLowerThreshold: "acceleration rejection lower threshold"
        case .rejectionUpperThreshold: "acceleration rejection upper threshold"
        case .holdsAttitudeAtRest: "attitude hold at rest"
        }
      }

      /// The unit of its value (`nil` for a switch).
      public var unit: String? {
        switch self {
        case .timeConstant: "s"
        case .rejectionLowerThreshold, .rejectionUpperThreshold: "m/s²"
        case .rejectsAccelerations, .holdsAttitudeAtRest: nil
        }
      }

      /// Its allowed range (`nil` for a switch).
      public var range: ClosedRange<Double>? {
        switch self {
        case .timeConstant: Tunables.timeConstantRange
        case .rejectionLowerThreshold: Tunables.lowerThresholdRange
        case .rejectionUpperThreshold: Tunables.upperThresholdRange
        case .rejectsAccelerations, .holdsAttitudeAtRest: nil
        }
      }
    }

    /// Why these values cannot replace `current`, or `nil` when they can. A value that
    /// changes must lie in its range; when either threshold changes, or rejection is switched
    /// on, the lower threshold must be below the upper. A value left as it is passes whatever
    /// it is: an estimator built with settings outside these ranges (`Settings.plain` with
    /// τ = 20 s) can still have its other settings changed.
    public func refusal(from current: Tunables) -> TunableRefusal? {
      if timeConstantSeconds != current.timeConstantSeconds,
        !Self.timeConstantRange.contains(timeConstantSeconds)
      {
        return TunableRefusal(setting: .timeConstant, value: timeConstantSeconds)
      }
      let low = rejectionLowerThresholdMetersPerSecondSquared
      let high = rejectionUpperThresholdMetersPerSecondSquared
      let lowChanged = low != current.rejectionLowerThresholdMetersPerSecondSquared
      let highChanged = high != current.rejectionUpperThresholdMetersPerSecondSquared
      if lowChanged && !Self.lowerThresholdRange.contains(low) {
        return TunableRefusal(setting: .rejectionLowerThreshold, value: low)
      }
      if highChanged && !Self.upperThresholdRange.contains(high) {
        return TunableRefusal(setting: .rejectionUpperThreshold, value: high)
      }
      let switchedOn = rejectsAccelerations && !current.rejectsAccelerations
      if (lowChanged || highChanged || switchedOn) && !(low < high) {
        return TunableRefusal(
          setting: highChanged || !lowChanged ? .rejectionUpperThreshold : .rejectionLowerThreshold,
          value: highChanged || !lowChanged ? high : low, lower: low, upper: high)
      }
      return nil
    }
  }

  /// A retune refused: which setting, the value given, and what it must be. Nothing was
  /// changed. `description` says it for a person, e.g. "inclination time constant: 0.2 s is
  /// outside the allowed range 0.5–10 s; nothing was changed".
  public struct TunableRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong with the value.
    public enum Problem: Hashable, Sendable {
      /// Outside the setting's allowed range.
      case outOfRange(ClosedRange<Double>)
      /// The lower rejection threshold is not below the upper one (both m/s²).
      case thresholdsOutOfOrder(
        lowerMetersPerSecondSquared: Double, upperMetersPerSecondSquared: Double)
    }

    /// The setting refused.
    public var setting: Tunables.Setting
    /// The value given for it, in its unit.
    public var value: Double
    public var problem: Problem

    init(setting: Tunables.Setting, value: Double) {
      self.setting = setting
      self.value = value
      problem = .outOfRange(setting.range ?? -Double.infinity...Double.infinity)
    }

    init(setting: Tunables.Setting, value: Double, lower: Double, upper: Double) {
      self.setting = setting
      self.value = value
      problem = .thresholdsOutOfOrder(
        lowerMetersPerSecondSquared: lower, upperMetersPerSecondSquared: upper)
    }

    public var description: String {
      let unit = setting.unit.map { " " + $0 } ?? ""
      switch problem {
      case .outOfRange(let range):
        return "\(setting.name): \(decimalText(value))\(unit) is outside the allowed range "
          + "\(decimalText(range.lowerBound))–\(decimalText(range.upperBound))\(unit); "
          + "nothing was changed"
      case .thresholdsOutOfOrder(let lower, let upper):
        return "\(setting.name): \(decimalText(value))\(unit) leaves the lower threshold "
          + "(\(decimalText(lower)) m/s²) not below the upper (\(decimalText(upper)) m/s²); "
          + "the lower must be below the upper; nothing was changed"
      }
    }
  }
}

/// `x` for a person: at most `digits` decimals, no trailing ".0" ("0.4", "10", "1.5").
func decimalText(_ x: Double, digits: Int = 3) -> String {
  guard x.isFinite else { return x.isNaN ? "NaN" : (x > 0 ? "∞" : "−∞") }
  var scale = 1.0
  for _ in 0..<max(0, digits) { scale *= 10 }
  let rounded = (x * scale).rounded() / scale
  if abs(rounded) < 1e15 && rounded == rounded.rounded() {
    return String(Int64(rounded))
  }
  return String(rounded)
}
