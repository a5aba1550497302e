import Geometry

/// Propagation: owns the attitude (body → reference) and the inclination correction's rate in
/// body axes, and turns the attitude by the bias-corrected rate sample by sample.
///
/// `q ← q ⊗ exp((ω + k) dt)`, the exponential by its third-order series (relative angle error
/// below θ⁴/1920, 4 × 10⁻⁹ at 1000 °/s and 100 Hz; the norm stays 1 to O(θ⁶)), no
/// trigonometry. k is the rate at which the inclination filter's correction accrues
/// (`setCorrectionRate`), so the correction is turned into the attitude through the
/// propagation. The attitude is renormalised whenever a block's correction is applied
/// (`turn(_:_:)`).
struct AttitudePropagation: Sendable {
  /// Body → reference.
  private(set) var attitude = Quaternion(w: 1, x: 0, y: 0, z: 0)
  /// The correction's rate in body axes, rad/s: Rᵀ(cx, cy, 0) with the attitude at the block's
  /// start, turned against the body's rotation sample by sample (its axis is fixed in the
  /// reference frame).
  private var bodyCorrectionRate = Vector3(0, 0, 0)

  /// The largest rotation a step integrates with the third-order series, radians squared:
  /// 0.5 rad (2000 °/s at 70 Hz), where its relative angle error is 3 × 10⁻⁵. A longer step
  /// (a gap while turning) is integrated exactly (`largeStep`).
  static let seriesStepLimitSquared = 0.25

  /// The estimated up direction in body axes (the third row of the attitude's rotation
  /// matrix).
  var up: Vector3 {
    let q = attitude
    return Vector3(
      2 * (q.x * q.z - q.w * q.y), 2 * (q.y * q.z + q.w * q.x), 1 - 2 * (q.x * q.x + q.y * q.y))
  }

  /// The rows of the attitude's rotation matrix R (body → reference).
  @inline(__always)
  var rows: (Vector3, Vector3, Vector3) {
    let (qw, qx, qy, qz) = (attitude.w, attitude.x, attitude.y, attitude.z)
    return (
      Vector3(1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qw * qz), 2 * (qx * qz + qw * qy)),
      Vector3(2 * (qx * qy + qw * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qw * qx)),
      Vector3(2 * (qx * qz - qw * qy), 2 * (qy * qz + qw * qx), 1 - 2 * (qx * qx + qy * qy))
    )
  }

  /// Turns the attitude by the bias-corrected rate `omega` (rad/s, body axes) plus the
  /// correction's rate over `dt` seconds.
  @inline(__always)
  mutating func step(omega: Vector3, interval dt: Double) {
    let k = bodyCorrectionRate
    let r = Vector3((omega.x + k.x) * dt, (omega.y + k.y) * dt, (omega.z + k.z) * dt)
    // The correction's axis is fixed in the reference frame: in body axes it turns against
    // the body's rotation, k ← k + k × r (dk/dt = −ω × k).
    bodyCorrectionRate = Vector3(
      k.x + (k.y * r.z - k.z * r.y), k.y + (k.z * r.x - k.x * r.z),
      k.z + (k.x * r.y - k.y * r.x))
    let t2 = r.x * r.x + r.y * r.y + r.z * r.z
    if t2 > Self.seriesStepLimitSquared {
      Self.largeStep(&attitude, &bodyCorrectionRate, r, squaredAngle: t2, correctionRate: k)
    } else {
      let step = Quaternion(smallRotationVector: r, squaredAngle: t2)
      attitude = multiply(attitude, step.w, step.x, step.y, step.z)
    }
  }

  /// Turns the attitude by the rotation vector `r` (body axes) exactly: a gap carried with the
  /// rate after it.
  mutating func carry(_ r: Vector3) {
    Self.largeStep(
      &attitude, &bodyCorrectionRate, r, squaredAngle: r.x * r.x + r.y * r.y + r.z * r.z,
      correctionRate: bodyCorrectionRate)
  }

  /// A step too long for the series (`seriesStepLimitSquared`): a gap while turning, a slow
  /// sample clock with a fast rotation. `q ← q ⊗ exp(r)` exactly, without trigonometry: the
  /// series for r/2ⁿ (below 0.05 rad, relative error 3 × 10⁻⁹), normalised, squared n times,
  /// normalised. The correction's rate turns against the step exactly too (the per-sample
  /// `k + k × r` holds only for a small r). Static, on the two fields it changes, so that the
  /// per-sample path calling it keeps the estimator's own `self`.
  @inline(never)
  private static func largeStep(
    _ attitude: inout Quaternion, _ bodyCorrectionRate: inout Vector3, _ r: Vector3,
    squaredAngle t2: Double, correctionRate k: Vector3
  ) {
    var n = 0
    var scale = 1.0
    while t2 * scale * scale > 0.0025 && n < 1100 {
      scale *= 0.5
      n += 1
    }
    let s = Vector3(r.x * scale, r.y * scale, r.z * scale)
    var step = Quaternion(smallRotationVector: s, squaredAngle: t2 * scale * scale).normalized
    for _ in 0..<n { step = (step * step).normalized }
    attitude = (attitude * step).normalized
    // dk/dt = −ω × k: k turns by −r, i.e. k ← step⁻¹ · k (the inverse rotation).
    bodyCorrectionRate = step.inverseRotate(k)
  }

  /// Turns the attitude by the small angle δ = (dx, dy, 0) about a horizontal axis of the
  /// reference frame (an inclination correction), then renormalises it.
  @inline(__always)
  mutating func turn(_ dx: Double, _ dy: Double) {
    attitude = corrected(attitude, dx, dy)
    // Normalise: one Newton step is exact to rounding for the tiny norm error of one block.
    let q = attitude
    let n2 = q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z
    if abs(n2 - 1) < 1e-6 {
      let f = 1.5 - 0.5 * n2
      attitude = Quaternion(w: q.w * f, x: q.x * f, y: q.y * f, z: q.z * f)
    } else {
      attitude = q.normalized
    }
  }

  /// Turns the attitude by `d` in the reference frame: `q ← d ⊗ q`, normalised.
  mutating func turn(by d: Quaternion) { attitude = (d * attitude).normalized }

  /// Turns the attitude by the small rotation vector `r` in body axes (second-order series),
  /// normalised.
  mutating func turnBody(by r: Vector3) {
    let t2 = r.squaredLength
    attitude = multiply(attitude, 1 - t2 / 8, r.x * 0.5, r.y * 0.5, r.z * 0.5).normalized
  }

  /// Sets the attitude (start-up, reacquisition, re-anchoring at rest).
  mutating func restart(at q: Quaternion) { attitude = q }

  /// Sets the correction's rate from its reference-frame components (cx, cy, 0), rad/s:
  /// Rᵀ(cx, cy, 0), R's first two rows' transposes, with the attitude as it is now.
  @inline(__always)
  mutating func setCorrectionRate(_ cx: Double, _ cy: Double) {
    let (qw, qx, qy, qz) = (attitude.w, attitude.x, attitude.y, attitude.z)
    bodyCorrectionRate = Vector3(
      (1 - 2 * (qy * qy + qz * qz)) * cx + 2 * (qx * qy + qw * qz) * cy,
      2 * (qx * qy - qw * qz) * cx + (1 - 2 * (qx * qx + qz * qz)) * cy,
      2 * (qx * qz + qw * qy) * cx + 2 * (qy * qz - qw * qx) * cy)
  }

  /// `a ⊗ (w, x, y, z)`.
  @inline(__always)
  private func multiply(_ a: Quaternion, _ w: Double, _ x: Double, _ y: Double, _ z: Double)
    -> Quaternion
  {
    Quaternion(
      w: a.w * w - a.x * x - a.y * y - a.z * z, x: a.w * x + a.x * w + a.y * z - a.z * y,
      y: a.w * y - a.x * z + a.y * w + a.z * x, z: a.w * z + a.x * y - a.y * x + a.z * w)
  }

  /// `(c, δ/2) ⊗ a` with `δ = (dx, dy, 0)` and `c = 1 − |δ|²/8`: a turns by the small angle δ
  /// about a horizontal axis of the reference frame; the result keeps a's norm to O(|δ|⁴).
  @inline(__always)
  private func corrected(_ a: Quaternion, _ dx: Double, _ dy: Double) -> Quaternion {
    let hx = 0.5 * dx
    let hy = 0.5 * dy
    let c = 1 - 0.5 * (hx * hx + hy * hy)
    return Quaternion(
      w: c * a.w - hx * a.x - hy * a.y, x: c * a.x + hx * a.w + hy * a.z,
      y: c * a.y - hx * a.z + hy * a.w, z: c * a.z + hx * a.y - hy * a.x)
  }
}

/// `q ⊗ v ⊗ q*`: body → reference.
@inline(__always)
func rotateToReference(_ v: Vector3, by q: Quaternion) -> Vector3 {
  // v + 2w (u × v) + 2 u × (u × v) with u the vector part.
  let tx = 2 * (q.y * v.z - q.z * v.y)
  let ty = 2 * (q.z * v.x - q.x * v.z)
  let tz = 2 * (q.x * v.y - q.y * v.x)
  return Vector3(
    v.x + q.w * tx + (q.y * tz - q.z * ty), v.y + q.w * ty + (q.z * tx - q.x * tz),
    v.z + q.w * tz + (q.x * ty - q.y * tx))
}

/// `v` turned by the small angle δ = (dx, dy, 0) about reference axes (first order).
@inline(__always)
func rotateSmall(_ v: Vector3, _ dx: Double, _ dy: Double) -> Vector3 {
  Vector3(v.x + dy * v.z, v.y - dx * v.z, v.z + dx * v.y - dy * v.x)
}
