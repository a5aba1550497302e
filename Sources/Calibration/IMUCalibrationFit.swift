import AttitudeEstimation
import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// One still pose of an IMU calibration session, from the chip's raw SI readings (sensor axes,
/// before any calibration): the means over the pose's trimmed interior.
public struct IMUStillPose: Sendable, Hashable {
  /// Mean specific force, m/s².
  public var accelerometerMean: Vector3
  /// Mean angular rate, rad/s: the gyro's bias while the pose lasted.
  public var gyroscopeMean: Vector3
  /// Mean die temperature, °C (NaN when the chip gave none).
  public var temperatureCelsius: Double
  /// The samples averaged: indices into the session's sample arrays.
  public var samples: Range<Int>

  public init(
    accelerometerMean: Vector3, gyroscopeMean: Vector3, temperatureCelsius: Double,
    samples: Range<Int>
  ) {
    self.accelerometerMean = accelerometerMean
    self.gyroscopeMean = gyroscopeMean
    self.temperatureCelsius = temperatureCelsius
    self.samples = samples
  }
}

/// A turn between two consecutive accepted poses: the raw gyro increments (reading − the bias
/// interpolated between the two poses) × the sample interval, radians, sensor axes.
public struct IMUTurn: Sendable, Hashable {
  /// Index of the pose the turn starts from (it ends on the next).
  public var fromPose: Int
  /// (ω_raw − b)·Δt per sample, from the first pose's last averaged sample to the next pose's
  /// first.
  public var increments: [Vector3]

  public init(fromPose: Int, increments: [Vector3]) {
    self.fromPose = fromPose
    self.increments = increments
  }

  /// The rotation the raw increments integrate to, body at the start → body at the end
  /// (q_end = q_start ⊗ this), with the gyro matrix `g` applied.
  public func rotation(gyroMatrix g: Matrix3 = .identity) -> Quaternion {
    var q = Quaternion.identity
    for increment in increments { q = q * Quaternion(rotationVector: g * increment) }
    return q.normalized
  }
}

/// What an IMU calibration session found (Tedaldi, Pretto & Menegatti, ICRA 2014, "A robust
/// and easy to implement method for IMU calibration without external equipments"):
///
/// 1. **Accelerometer**, from the still poses alone: offset o and a symmetric matrix A with
///    ‖A·(a_k − o)‖ = g for every pose k (nine unknowns, least squares over the poses). The
///    magnitude cannot tell a rotation of the axes, so one is chosen: A symmetric, which keeps
///    the calibrated axes as close as any can be to the chip's own (the polar decomposition's
///    rotation-free factor). The paper fixes the same freedom with a triangular matrix instead.
/// 2. **Gyroscope bias**, from the still poses: each pose's mean rate; a turn uses the mean of
///    the bias at its two ends, so a bias that drifts through the session is followed.
/// 3. **Gyroscope matrix** G (nine unknowns: scale and misalignment, in the accelerometer's
///    calibrated axes): between consecutive poses k and k+1, the rotation R integrated from
///    G·(ω − b) must carry the gravity direction measured at k+1 onto the one at k
///    (R·u_{k+1} = u_k), least squares over all turns. A turn about the vertical moves no
///    gravity and says nothing; turns about each axis with that axis level pin each column.
///
/// Both fits are Levenberg–Marquardt from the identity, with standard errors from the
/// residuals' scatter and the Jacobian at the solution.
public struct IMUCalibrationSolution: Sendable {
  /// The accelerometer correction (offset and symmetric matrix).
  public var accelerometer: AccelerometerCorrection
  /// G, in the accelerometer's calibrated axes.
  public var gyroMatrix: Matrix3
  /// The gyro bias over the session: the poses' mean rate, sample-weighted, rad/s.
  public var gyroBias: Vector3
  /// Its standard error: the poses' scatter about it over √poses, rad/s (this includes any
  /// drift through the session, unlike σ/√n of the samples).
  public var gyroBiasUncertainty: Vector3
  /// The mean die temperature over the poses, °C (NaN without one).
  public var temperatureCelsius: Double
  /// ‖corrected‖ − g per pose, m/s².
  public var accelerometerResiduals: [Double]
  /// Per turn, the angle between the gravity direction the turn predicts at its end and the
  /// one measured there, radians.
  public var turnResiduals: [Double]
  /// Per turn, the pose it starts from (it ends on the next).
  public var turnFromPose: [Int]
  /// Per turn, its angle (with G), radians.
  public var turnAngles: [Double]
  /// Per turn, its axis in calibrated axes (unit vector).
  public var turnAxes: [Vector3]
  /// Standard errors of the accelerometer's nine parameters: A₁₁, A₂₂, A₃₃, A₁₂, A₁₃, A₂₃
  /// (dimensionless), o_x, o_y, o_z (m/s²).
  public var accelerometerStandardErrors: [Double]
  /// Standard errors of G's entries, row by row.
  public var gyroMatrixStandardErrors: Matrix3
  /// The gravity the accelerometer was fitted to, m/s².
  public var gravity: Double

  /// The largest standard error of a G entry: how well the matrix is known (1e-3 is 0.1 %).
  public var gyroMatrixUncertainty: Double {
    let e = gyroMatrixStandardErrors
    return max(
      max(e.row0.x, e.row0.y, e.row0.z), max(e.row1.x, e.row1.y, e.row1.z),
      max(e.row2.x, e.row2.y, e.row2.z))
  }

  /// RMS of the accelerometer residuals, m/s².
  public var accelerometerResidualRMS: Double { rms(accelerometerResiduals) }
  /// RMS of the turn residuals, radians.
  public var turnResidualRMS: Double { rms(turnResiduals) }
}

func rms(_ values: [Double]) -> Double {
  guard !values.isEmpty else { return 0 }
  return (values.reduce(0) { $0 + $1 * $1 } / Double(values.count)).squareRoot()
}

/// Why an IMU calibration could not be solved.
public enum IMUCalibrationError: Error, Hashable, Sendable, CustomStringConvertible {
  /// Fewer still poses than the accelerometer's nine unknowns need.
  case tooFewPoses(have: Int, need: Int)
  /// Fewer usable turns than the gyro matrix needs, or none about an axis.
  case tooFewTurns(have: Int, need: Int)
  /// The poses' gravity directions are too alike to separate the nine accelerometer unknowns.
  case posesTooAlike(String)
  /// The turns do not pin G (all about one axis, or about the vertical).
  case turnsDegenerate(String)
  /// A pose reads a magnitude far from g.
  case implausibleMagnitude(pose: Int, magnitude: Double)
  /// The solution falls outside what the calibration file accepts.
  case implausible(String)

  public var description: String {
    switch self {
    case .tooFewPoses(let have, let need):
      "only \(have) still poses; the accelerometer's offset, scale and misalignment need at least \(need): run the session again and hold the board still after every turn"
    case .tooFewTurns(let have, let need):
      "only \(have) usable turns between still poses; the gyro's scale and misalignment need at least \(need), a few about each axis"
    case .posesTooAlike(let detail):
      "the still poses are too alike to solve the accelerometer (\(detail)): turn the board to more different orientations — each face up, and some corners up"
    case .turnsDegenerate(let detail):
      "the turns cannot solve the gyro matrix (\(detail)): turn about each of x, y and z, with that axis level (not pointing up)"
    case .implausibleMagnitude(let pose, let magnitude):
      "pose \(pose) reads |a| = \(rounded(magnitude, 3)) m/s², not about g: check the accelerometer's full scale and wiring"
    case .implausible(let detail):
      "the solution is not plausible for an MPU-6050 (\(detail)): check the board file's full scales and run the session again"
    }
  }
}

public enum IMUCalibrationFit {
  /// Solves accelerometer and gyroscope from a session's poses and the turns between them.
  /// `gravity` is the local g (standard gravity by default: the accelerometer's scale carries
  /// a g that is off by its ratio, up to 0.3 % between the equator and the poles; the gyro's
  /// matrix does not, it uses directions only).
  public static func solve(
    poses: [IMUStillPose], turns: [IMUTurn], gravity: Double = standardGravity
  ) throws(IMUCalibrationError) -> IMUCalibrationSolution {
    guard poses.count >= 9 else { throw .tooFewPoses(have: poses.count, need: 9) }
    for (index, pose) in poses.enumerated() {
      let magnitude = pose.accelerometerMean.length
      guard magnitude > 0.5 * gravity, magnitude < 1.5 * gravity else {
        throw .implausibleMagnitude(pose: index + 1, magnitude: magnitude)
      }
    }
    guard turns.count >= 6 else { throw .tooFewTurns(have: turns.count, need: 6) }

    // 1. Accelerometer: p = [A11, A22, A33, A12, A13, A23, ox, oy, oz].
    func accelMatrix(_ p: [Double]) -> Matrix3 {
      Matrix3(
        rows: Vector3(p[0], p[3], p[4]), Vector3(p[3], p[1], p[5]), Vector3(p[4], p[5], p[2]))
    }
    let readings = poses.map(\.accelerometerMean)
    let accel = levenbergMarquardt(start: [1, 1, 1, 0, 0, 0, 0, 0, 0]) { p in
      let a = accelMatrix(p)
      let o = Vector3(p[6], p[7], p[8])
      return readings.map { (a * ($0 - o)).length - gravity }
    }
    guard let accelErrors = accel.standardErrors, accelErrors.allSatisfy(\.isFinite) else {
      throw .posesTooAlike("the least-squares system is singular")
    }
    // A scale or misalignment known no better than 1 % is poses that were all alike.
    if let worst = accelErrors[0..<6].max(), worst > 0.01 {
      throw .posesTooAlike(
        "the matrix is known only to ±\(rounded(worst * 100, 1)) % from \(poses.count) poses")
    }
    let a = accelMatrix(accel.parameters)
    let o = Vector3(accel.parameters[6], accel.parameters[7], accel.parameters[8])
    let directions = readings.map { (a * ($0 - o)).normalized }

    // 2. The turns: each from pose k to k + 1.
    let pairs = turns.filter { $0.fromPose + 1 < poses.count }
    guard pairs.count >= 6 else { throw .tooFewTurns(have: pairs.count, need: 6) }
    func gyroMatrix(_ p: [Double]) -> Matrix3 {
      Matrix3(rows: Vector3(p[0], p[1], p[2]), Vector3(p[3], p[4], p[5]), Vector3(p[6], p[7], p[8]))
    }
    func turnResiduals(_ g: Matrix3) -> [Vector3] {
      pairs.map { turn in
        turn.rotation(gyroMatrix: g).rotate(directions[turn.fromPose + 1])
          - directions[turn.fromPose]
      }
    }
    let gyro = levenbergMarquardt(start: [1, 0, 0, 0, 1, 0, 0, 0, 1]) { p in
      turnResiduals(gyroMatrix(p)).flatMap { [$0.x, $0.y, $0.z] }
    }
    guard let gyroErrors = gyro.standardErrors, gyroErrors.allSatisfy(\.isFinite) else {
      throw .turnsDegenerate("the least-squares system is singular")
    }
    let g = gyroMatrix(gyro.parameters)
    if let worst = gyroErrors.max(), worst > 0.02 {
      throw .turnsDegenerate(
        "the matrix is known only to ±\(rounded(worst * 100, 1)) % from \(pairs.count) turns")
    }
    let diagonal = [g.row0.x, g.row1.y, g.row2.z]
    let offDiagonal = [g.row0.y, g.row0.z, g.row1.x, g.row1.z, g.row2.x, g.row2.y]
    if let bad = diagonal.first(where: { !CalibrationLimits.gyroScale.contains($0) }) {
      throw .implausible("a gyro scale entry of \(rounded(bad, 4))")
    }
    if let bad = offDiagonal.first(where: { abs($0) > CalibrationLimits.gyroCrossAxis }) {
      throw .implausible("a gyro cross-axis entry of \(rounded(bad, 4))")
    }

    // 3. The bias over the session and its scatter.
    var biasSum = Vector3.zero
    var count = 0.0
    for pose in poses {
      biasSum += pose.gyroscopeMean * Double(pose.samples.count)
      count += Double(pose.samples.count)
    }
    let bias = biasSum / max(1, count)
    var scatter = Vector3.zero
    for pose in poses {
      let d = pose.gyroscopeMean - bias
      scatter += d.scaled(by: d)
    }
    let n = Double(poses.count)
    let spread = scatter / max(1, n - 1)
    let biasUncertainty = Vector3(
      (spread.x / n).squareRoot(), (spread.y / n).squareRoot(), (spread.z / n).squareRoot())
    let temperatures = poses.map(\.temperatureCelsius).filter(\.isFinite)
    let temperature =
      temperatures.count == poses.count
      ? temperatures.reduce(0, +) / Double(temperatures.count) : .nan

    let residualVectors = turnResiduals(g)
    var turnAngles: [Double] = []
    var turnAxes: [Vector3] = []
    for turn in pairs {
      let q = turn.rotation(gyroMatrix: g).canonical
      turnAngles.append(q.angle)
      turnAxes.append(q.vector.length > 0 ? q.vector.normalized : .zero)
    }
    return IMUCalibrationSolution(
      accelerometer: AccelerometerCorrection(offset: o, matrix: a), gyroMatrix: g,
      gyroBias: bias, gyroBiasUncertainty: biasUncertainty, temperatureCelsius: temperature,
      accelerometerResiduals: readings.map { (a * ($0 - o)).length - gravity },
      // |R·u₁ − u₀| is a chord between unit vectors; the angle is 2·asin(chord / 2).
      turnResiduals: residualVectors.map { 2 * asin(min(1, $0.length / 2)) },
      turnFromPose: pairs.map(\.fromPose), turnAngles: turnAngles, turnAxes: turnAxes,
      accelerometerStandardErrors: accelErrors,
      gyroMatrixStandardErrors: gyroMatrix(gyroErrors), gravity: gravity)
  }

  /// A least-squares solution and what it says about itself.
  struct LeastSquares {
    var parameters: [Double]
    var residuals: [Double]
    /// √diag((JᵀJ)⁻¹) · σ, σ² = Σr² / (m − n); nil when JᵀJ is singular.
    var standardErrors: [Double]?
  }

  /// Levenberg–Marquardt with a forward-difference Jacobian: a handful of parameters and a few
  /// hundred residuals, run once per session, so clarity over speed.
  static func levenbergMarquardt(
    start: [Double], iterations: Int = 50, residuals f: ([Double]) -> [Double]
  ) -> LeastSquares {
    var p = start
    var r = f(p)
    var cost = r.reduce(0) { $0 + $1 * $1 }
    var lambda = 1e-3
    let n = p.count
    func jacobian(_ p: [Double], _ r: [Double]) -> [[Double]] {
      var columns: [[Double]] = []
      for j in 0..<n {
        var q = p
        let h = 1e-7 * max(1, abs(p[j]))
        q[j] += h
        let rq = f(q)
        columns.append(zip(rq, r).map { ($0 - $1) / h })
      }
      return columns  // columns[j][i] = ∂r_i/∂p_j
    }
    func normal(_ columns: [[Double]]) -> [[Double]] {
      var m = [[Double]](repeating: [Double](repeating: 0, count: n), count: n)
      for i in 0..<n {
        for j in i..<n {
          var s = 0.0
          for k in 0..<columns[i].count { s += columns[i][k] * columns[j][k] }
          m[i][j] = s
          m[j][i] = s
        }
      }
      return m
    }
    for _ in 0..<iterations {
      let columns = jacobian(p, r)
      let jtj = normal(columns)
      let jtr = columns.map { column in zip(column, r).reduce(0) { $0 + $1.0 * $1.1 } }
      var improved = false
      for _ in 0..<10 {
        var damped = jtj
        for i in 0..<n { damped[i][i] += lambda * max(jtj[i][i], 1e-12) }
        guard let step = solveLinearSystem(damped, jtr.map { -$0 }) else { break }
        let candidate = zip(p, step).map { $0 + $1 }
        let rc = f(candidate)
        let candidateCost = rc.reduce(0) { $0 + $1 * $1 }
        if candidateCost.isFinite, candidateCost <= cost {
          let relative = (cost - candidateCost) / max(cost, 1e-300)
          p = candidate
          r = rc
          cost = candidateCost
          lambda = max(lambda / 10, 1e-12)
          improved = relative > 1e-12
          break
        }
        lambda *= 10
      }
      if !improved { break }
    }
    let jtj = normal(jacobian(p, r))
    let dof = Double(max(1, r.count - n))
    let variance = cost / dof
    var errors: [Double]? = []
    for i in 0..<n {
      var unit = [Double](repeating: 0, count: n)
      unit[i] = 1
      guard let column = solveLinearSystem(jtj, unit), column[i] >= 0 else {
        errors = nil
        break
      }
      errors?.append((column[i] * variance).squareRoot())
    }
    return LeastSquares(parameters: p, residuals: r, standardErrors: errors)
  }
}

/// How much a session's calibration can be trusted.
public enum IMUCalibrationVerdict: String, Sendable, Hashable {
  /// The gyro matrix known to 0.1 %, turns and poses consistent with the chip's noise.
  case good
  /// Better than none, short of good: worth a second session.
  case usable
  /// Not written: the session's data do not agree with themselves.
  case poor
}

extension IMUCalibrationSolution {
  /// The verdict and why. Good: every gyro matrix entry known to ±0.1 % (1σ), the turns'
  /// gravity predictions within 0.2° RMS and |corrected a| within 20 mm/s² RMS of g; usable:
  /// ±0.3 %, 0.5°, 50 mm/s²; poor otherwise. (The simulated datasheet unit's sessions give
  /// ±0.01–0.03 %, 0.02–0.04° and 1–1.4 mm/s².)
  public var verdict: (verdict: IMUCalibrationVerdict, reason: String) {
    let matrix = gyroMatrixUncertainty
    let turns = turnResidualRMS * degreesPerRadian
    let accel = accelerometerResidualRMS
    let figures =
      "gyro matrix known to ±\(rounded(matrix * 100, 3)) %, turns agree to \(rounded(turns, 3))° RMS, |a| to \(rounded(accel * 1000, 1)) mm/s² RMS"
    if matrix <= 1e-3, turns <= 0.2, accel <= 0.02 { return (.good, figures) }
    if matrix <= 3e-3, turns <= 0.5, accel <= 0.05 {
      return (
        .usable,
        figures
          + "; more turns (--turns-per-axis) and poses on a firm surface, hands off, would tighten it"
      )
    }
    let worst =
      accel > 0.05
      ? "the poses disagree about g (a pose that moved, or vibration)"
      : turns > 0.5
        ? "the turns disagree with the poses (samples lost, the board slid, or turned too fast)"
        : "too few or too small turns to pin the matrix"
    return (.poor, figures + "; \(worst): run the session again")
  }
}
