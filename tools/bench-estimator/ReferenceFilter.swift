/// The yardstick: a minimal plain complementary filter, written as leanly as the C reference
/// in notes/performance-anchors.md (29.5 ns there; the same in Swift value types 30.4 ns).
///
/// That reference computes in `Float`, as x-io Fusion does, and so does the official figure
/// (`Scalar == Float`, which reproduces the anchor's 30–31 ns here). The estimator computes in
/// `Double`; the same filter in `Double` is timed too (about 39 ns here: double-precision square
/// root and division are slower, and they sit on this filter's critical path).
///
/// Gyro propagation plus a fixed-gain tilt correction, nothing else: the measured up direction
/// (the normalised accelerometer) is compared with the estimated one (the third row of the
/// attitude's rotation matrix), their cross product is fed back into the rate with gain `k`
/// (a first-order pull toward the accelerometer with time constant 1/k), the quaternion is
/// advanced by one Euler step of `q̇ = ½ q ⊗ ω` and renormalised. Fixed period, no bias, no rest,
/// no rejection, no outputs beyond the quaternion. Plain stored `Double`s in a struct: no heap,
/// no exclusivity checks.
struct ReferenceComplementaryFilter<Scalar: BinaryFloatingPoint> {
  var w: Scalar = 1
  var x: Scalar = 0
  var y: Scalar = 0
  var z: Scalar = 0
  let halfPeriod: Scalar
  let gain: Scalar

  /// - Parameters:
  ///   - periodSeconds: the fixed sample period.
  ///   - timeConstantSeconds: the tilt correction's time constant (gain 1/τ).
  init(periodSeconds: Double, timeConstantSeconds: Double) {
    halfPeriod = Scalar(0.5 * periodSeconds)
    gain = Scalar(1 / timeConstantSeconds)
  }

  /// One sample: rates in rad/s, specific force in m/s² (any scale: it is normalised).
  @inline(__always)
  mutating func update(
    gx: Scalar, gy: Scalar, gz: Scalar, ax: Scalar, ay: Scalar, az: Scalar
  ) {
    // Measured up, unit length.
    let r = 1 / (ax * ax + ay * ay + az * az).squareRoot()
    let mx = ax * r
    let my = ay * r
    let mz = az * r
    // Estimated up in body axes: the reference z axis seen from the body.
    let vx = 2 * (x * z - w * y)
    let vy = 2 * (w * x + y * z)
    let vz = w * w - x * x - y * y + z * z
    // Tilt error (measured × estimated) fed back into the rate.
    let ox = gx + gain * (my * vz - mz * vy)
    let oy = gy + gain * (mz * vx - mx * vz)
    let oz = gz + gain * (mx * vy - my * vx)
    // q ← q + ½ q ⊗ (0, ω) dt, then renormalise.
    let hx = ox * halfPeriod
    let hy = oy * halfPeriod
    let hz = oz * halfPeriod
    let nw = w - x * hx - y * hy - z * hz
    let nx = x + w * hx + y * hz - z * hy
    let ny = y + w * hy - x * hz + z * hx
    let nz = z + w * hz + x * hy - y * hx
    let squaredNorm: Scalar = nw * nw + nx * nx + ny * ny + nz * nz
    let n = 1 / squaredNorm.squareRoot()
    w = nw * n
    x = nx * n
    y = ny * n
    z = nz * n
  }
}
