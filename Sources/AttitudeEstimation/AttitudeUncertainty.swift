import Geometry

/// One standard deviation of the attitude estimate's error, from the estimator's own state:
/// what a consumer puts in a covariance (ROS's `sensor_msgs/Imu.orientation_covariance`).
public struct AttitudeUncertainty: Hashable, Sendable {
  /// Roll and pitch: rotation about each horizontal axis of the reference frame, rad.
  public var tiltRadians: Double
  /// Heading: rotation about the vertical, relative to the heading at start (or where
  /// `resetHeadingUncertainty()` was called: a tare), rad.
  public var headingRadians: Double

  public init(tiltRadians: Double, headingRadians: Double) {
    self.tiltRadians = tiltRadians
    self.headingRadians = headingRadians
  }
}

/// Propagates the attitude's uncertainty once per block (0.2 s), beside the filter it
/// describes. A model, stated here so that a consumer can judge it:
///
/// **Tilt.** Two parts, per horizontal axis.
/// - A white part, variance `P`. Each block the inclination filter moves the estimate a share
///   `k = w·T/τ` of the way toward what the block's accelerometer mean says (T the block's
///   length, τ the filter's time constant, w the acceleration rejection's weight: 0 while a
///   sustained acceleration is rejected, 1 when trusted): `P ← (1 − k)²·P + k²·R`. R is what
///   the block's mean may be off by: its noise, Nₐ²/(T·g²), plus the square of the angle by
///   which the mean disagreed with the estimate (horizontal force over g: an acceleration the
///   filter cannot tell from a tilt, counted as noise; at rest it is the noise alone). While
///   the body moves, the gyro's white noise adds N²·T (N its noise density).
/// - A correlated part, σ_b: the gyro bias's residual about the horizontal axes (the
///   estimator's own bias variance) turns the estimate at a steady rate, which the filter
///   pulls back by the same share: `σ_b ← (1 − k)·σ_b + σ_bh·T` in motion. Its steady state is
///   σ_bh·τ/w; during a rejection (w = 0) it grows linearly, σ_bh per second.
/// - While the filter initialises (at start, and when the tilt restarts after a gap) the
///   estimate is the accelerometer's running mean: P = R of the block, σ_b = 0.
///
/// Tilt σ = √(P + σ_b²).
///
/// **Heading.** Nothing measures it (no magnetometer); it only grows, and only while the body
/// moves: at rest the attitude is held. The gyro's white noise adds N²·T to its variance, and
/// the vertical bias's residual σ_bz adds σ_bz·T to a linear part (a bias error is constant
/// over minutes, so the heading error it makes grows with time, not with its square root). A
/// gap adds the bias's share over the time nobody saw, and the turn the estimator guessed over
/// time it did not integrate (the rate after the gap times that time, as a standard
/// deviation). Heading σ = √(variance + linear²), from the start or the last tare.
///
/// The figures are 1σ of a Gaussian model and make no claim beyond it: motion that keeps
/// accelerating one way for longer than a block looks like noise to it, and an unflagged gap
/// cannot be seen. `AttitudeUncertaintyTests` checks them against the truth of simulated runs.
struct AttitudeUncertaintyTracker: Sendable {
  /// The tilt's white part, rad² (starts at (5°)²: before the first block nothing is known).
  private var tiltVariance = (5.0 * .pi / 180) * (5.0 * .pi / 180)
  /// The tilt's bias-driven part, rad.
  private var tiltBiasSigma = 0.0
  /// The heading's white part, rad².
  private var headingVariance = 0.0
  /// The heading's bias-driven part, rad.
  private var headingBiasSigma = 0.0

  var current: AttitudeUncertainty {
    AttitudeUncertainty(
      tiltRadians: (tiltVariance + tiltBiasSigma * tiltBiasSigma).squareRoot(),
      headingRadians: (headingVariance + headingBiasSigma * headingBiasSigma).squareRoot())
  }

  /// One block of `seconds`: `meanForce` is the block's mean specific force in the reference
  /// frame (m/s²; zero samples: `hasForce` false), `weight` the acceleration rejection's.
  mutating func block(
    seconds: Double, meanForce f: Vector3, hasForce: Bool, weight: Double,
    timeConstantSeconds tau: Double, initialising: Bool, atRest: Bool, noise: SensorNoise,
    gravity g: Double, horizontalBiasVariance: Double, verticalBiasVariance: Double
  ) {
    guard seconds > 0 else { return }
    let accelerometerNoise = noise.accelerometerNoiseDensity
    let noiseAngleVariance = accelerometerNoise * accelerometerNoise / (seconds * g * g)
    let disagreement = hasForce ? (f.x * f.x + f.y * f.y) / (g * g) : 0
    let r = noiseAngleVariance + disagreement
    if !atRest {
      let n2 = noise.gyroNoiseDensity * noise.gyroNoiseDensity
      headingVariance += n2 * seconds
      headingBiasSigma += max(0, verticalBiasVariance).squareRoot() * seconds
      tiltVariance += n2 * seconds
      tiltBiasSigma += (max(0, horizontalBiasVariance) / 2).squareRoot() * seconds
    }
    if initialising {
      if hasForce {
        tiltVariance = r
        tiltBiasSigma = 0
      }
      return
    }
    guard hasForce, tau > 0 else { return }
    let k = min(1, max(0, weight) * seconds / tau)
    tiltVariance = (1 - k) * (1 - k) * tiltVariance + k * k * r
    tiltBiasSigma *= 1 - k
  }

  /// A gap: nothing was seen for `unobservedSeconds`, of which `notIntegratedSeconds` were
  /// carried with a guessed rate (`verticalRate`, rad/s, about the vertical).
  mutating func gap(
    unobservedSeconds: Double, notIntegratedSeconds: Double, verticalRate: Double,
    noise: SensorNoise, horizontalBiasVariance: Double, verticalBiasVariance: Double
  ) {
    guard unobservedSeconds > 0 || notIntegratedSeconds > 0 else { return }
    let n2 = noise.gyroNoiseDensity * noise.gyroNoiseDensity
    headingVariance += n2 * unobservedSeconds
    let guessed = verticalRate.isFinite ? verticalRate * notIntegratedSeconds : 0
    headingVariance += guessed * guessed
    headingBiasSigma += max(0, verticalBiasVariance).squareRoot() * unobservedSeconds
    tiltVariance += n2 * unobservedSeconds
    tiltBiasSigma += (max(0, horizontalBiasVariance) / 2).squareRoot() * unobservedSeconds
  }

  /// The heading was redefined (a tare): it is exact by definition.
  mutating func resetHeading() {
    headingVariance = 0
    headingBiasSigma = 0
  }
}
