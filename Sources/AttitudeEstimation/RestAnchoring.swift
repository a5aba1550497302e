import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Rest anchoring (heading hold): owns the heading drift model of the motion since the last
/// rest, and decides what a rest does to the attitude when it starts and ends.
///
/// At rest the attitude does not turn: the heading is held (seed 000's zero-velocity update).
/// When a rest is declared, the heading drift integrated during its quiet window is undone, the
/// drift implied by the bias change since the last rest is taken back, and the tilt is taken
/// from the window's mean acceleration (`anchoredAttitude`). When it ends, the last moments'
/// rotation, held back while the heading was held, is given back (`releasedRotation`).
struct RestAnchoring: Sendable {
  /// The heading drift model of the motion since the last rest: Σ up·t·Δt (body axes, s²),
  /// the motion's duration (s), and whether a rest has measured the bias before it.
  private var driftWeights = Vector3(0, 0, 0)
  private var segmentSeconds: Double = 0
  private var hasMeasuredRest = false
  /// Whether the attitude is held at rest (`AttitudeEstimator.Settings.holdsAttitudeAtRest`;
  /// a retune may change it between two samples).
  var holdsAtRest: Bool
  private let restEstimationEnabled: Bool
  private let meanTimeConstantSeconds: Double
  private let maximumTiltDisagreementRadians: Double
  /// τ, seconds: the tilt error a bias leaves is 3σ·τ (`tiltAgrees`); a retune may change it.
  var inclinationTimeConstantSeconds: Double

  init(settings: AttitudeEstimator.Settings) {
    holdsAtRest = settings.holdsAttitudeAtRest
    restEstimationEnabled = settings.bias.restEstimationEnabled
    meanTimeConstantSeconds = settings.rest.meanTimeConstantSeconds
    maximumTiltDisagreementRadians = settings.rest.maximumTiltDisagreementRadians
    inclinationTimeConstantSeconds = settings.inclination.timeConstantSeconds
  }

  /// One block of `seconds` in motion with the up direction `up` (body axes) at its end.
  mutating func accumulateDrift(up: Vector3, seconds: Double) {
    segmentSeconds += seconds
    driftWeights += up * ((segmentSeconds - 0.5 * seconds) * seconds)
  }

  /// A rest ended: the motion since the last rest starts here.
  mutating func motionStarted() {
    driftWeights = Vector3(0, 0, 0)
    segmentSeconds = 0
  }

  /// The rotation of a rest's last moments, rad (body axes): the window mean of the rate at
  /// the end of the rest (an exponential window of time constant τ_w) less the bias, over
  /// τ_w — the same weights as a leaky integral of the rate with that time constant.
  func releasedRotation(gyroMeanAtEnd: Vector3, bias: Vector3) -> Vector3 {
    (gyroMeanAtEnd - bias) * meanTimeConstantSeconds
  }

  /// Whether a rest window's mean specific force `a` points where the estimate (up direction
  /// `up`, body axes) expects gravity's reaction, within the settings' angle plus the tilt
  /// error the bias uncertainty allows (3σ·τ): a sustained push or a steadily accelerating
  /// vehicle is quiet too, but not rest.
  func tiltAgrees(meanAcceleration a: Vector3, up: Vector3, biasVariance v: Vector3) -> Bool {
    let n = a.length
    guard n > 0 else { return false }
    let sine = a.cross(up).length / n
    let sigma = max(v.x, v.y, v.z).squareRoot()
    let allowed = maximumTiltDisagreementRadians + 3 * sigma * inclinationTimeConstantSeconds
    return allowed >= .pi / 2 || (sine <= sin(allowed) && a.dot(up) > 0)
  }

  /// The attitude a rest re-anchors to, from the attitude `q` at its declaration: its quiet
  /// window of `samples` samples of `periodSeconds` had the gyro sum `gyroSum` and the
  /// accelerometer sum `accelerationSum`; the motion before it was integrated with
  /// `biasBefore`, and the rest measured `biasAfter`.
  ///
  /// The window was still: the rotation integrated over it was bias, so it is undone; the
  /// heading that leaves is kept, and the tilt is taken from the window's mean acceleration.
  mutating func anchoredAttitude(
    _ q: Quaternion, samples: Int, periodSeconds: Double, gyroSum: Vector3,
    accelerationSum: Vector3, biasBefore: Vector3, biasAfter: Vector3
  ) -> Quaternion {
    let n = Double(samples)
    // The rotation integrated over the quiet stretch: its mean rate less the bias it was
    // integrated with, over its duration.
    let windowRotation = (gyroSum * (1 / n) - biasBefore) * (n * periodSeconds)
    let undone = q * Quaternion(rotationVector: -windowRotation)
    let twistNorm = (undone.w * undone.w + undone.z * undone.z).squareRoot()
    var twist =
      twistNorm > 1e-9
      ? Quaternion(w: undone.w / twistNorm, x: 0, y: 0, z: undone.z / twistNorm) : .identity
    // The bias this rest measured differs from the one the motion was integrated with. Had
    // it moved there steadily (the expected path of a random walk between two known
    // points), the heading gained Δb · Σ up·t·Δt / T; take that back.
    if hasMeasuredRest && segmentSeconds > 0 && restEstimationEnabled {
      let change = biasAfter - biasBefore
      let heading = -change.dot(driftWeights) / segmentSeconds
      twist = Quaternion(axis: .unitZ, angle: heading) * twist
    }
    hasMeasuredRest = restEstimationEnabled
    let meanAcceleration = accelerationSum / n
    return (twist * Quaternion(from: meanAcceleration, to: .unitZ)).normalized
  }
}
