import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Which face of the unit points up: the sensor axis aligned with gravity's opposite, and its
/// sign. At rest the accelerometer reads +g along that axis (it measures specific force).
public enum SensorFace: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
  case plusX
  case minusX
  case plusY
  case minusY
  case plusZ
  case minusZ

  /// The unit vector of the axis pointing up, sensor frame.
  public var up: Vector3 {
    let sign: Double = rawValue % 2 == 0 ? 1 : -1
    switch rawValue / 2 {
    case 0: return Vector3(sign, 0, 0)
    case 1: return Vector3(0, sign, 0)
    default: return Vector3(0, 0, sign)
    }
  }

  /// 0, 1, 2 for x, y, z.
  public var axisIndex: Int { rawValue / 2 }

  public var description: String {
    (rawValue % 2 == 0 ? "+" : "−") + ["x", "y", "z"][axisIndex] + " up"
  }

  /// The face whose axis dominates `vector`.
  public static func dominant(in vector: Vector3) -> SensorFace {
    let a = [abs(vector.x), abs(vector.y), abs(vector.z)]
    let axis = a[0] >= a[1] && a[0] >= a[2] ? 0 : (a[1] >= a[2] ? 1 : 2)
    let value = [vector.x, vector.y, vector.z][axis]
    return SensorFace(rawValue: axis * 2 + (value >= 0 ? 0 : 1))!
  }
}

/// One still pose of the six-position procedure: the mean accelerometer reading over the pose
/// and the per-axis standard deviation of the samples behind it.
public struct PoseMeasurement: Sendable, Hashable {
  /// Mean reading, m/s², sensor axes.
  public var mean: Vector3
  /// Per-axis sample standard deviation, m/s².
  public var standardDeviation: Vector3
  public var sampleCount: Int

  public init(mean: Vector3, standardDeviation: Vector3, sampleCount: Int) {
    self.mean = mean
    self.standardDeviation = standardDeviation
    self.sampleCount = sampleCount
  }

  /// The measurement of a run of accelerometer samples (m/s²).
  public init(samples: [Vector3]) {
    let n = Double(max(1, samples.count))
    let mean = samples.reduce(Vector3.zero, +) / n
    var squares = Vector3.zero
    for s in samples {
      let d = s - mean
      squares += d.scaled(by: d)
    }
    let dof = max(1, n - 1)
    self.init(
      mean: mean,
      standardDeviation: Vector3(
        (squares.x / dof).squareRoot(), (squares.y / dof).squareRoot(),
        (squares.z / dof).squareRoot()), sampleCount: samples.count)
  }
}

/// Why a set of poses cannot be solved. Each names the pose (1-based, in the order given) and
/// what to do.
public enum SixPositionError: Error, Hashable, Sendable, CustomStringConvertible {
  /// Pose `index` is `angleDegrees` from the nearest axis-aligned orientation.
  case notAxisAligned(index: Int, face: SensorFace, angleDegrees: Double, limitDegrees: Double)
  /// Pose `index` moved: its largest per-axis standard deviation exceeds the limit.
  case notStill(index: Int, face: SensorFace, deviation: Double, limit: Double)
  /// Pose `index` reads a magnitude far from g: a dead or saturated axis, or the wrong units.
  case implausibleMagnitude(index: Int, magnitude: Double, gravity: Double)
  /// Two poses put the same face up.
  case duplicateFace(SensorFace, first: Int, second: Int)
  /// These faces were never up.
  case missingFaces([SensorFace])
  /// The readings are degenerate (zero scale on an axis, a singular least-squares system).
  case degenerate(String)

  public var description: String {
    switch self {
    case .notAxisAligned(let index, let face, let angle, let limit):
      "pose \(index) (\(face)) is \(rounded(angle, 1))° from axis-aligned, more than \(rounded(limit, 1))°: put the face squarely up (against a square block) and measure it again"
    case .notStill(let index, let face, let deviation, let limit):
      "pose \(index) (\(face)) was not still: its samples spread by \(rounded(deviation, 4)) m/s² (limit \(rounded(limit, 4)) m/s²); keep the unit untouched on a steady surface and measure it again"
    case .implausibleMagnitude(let index, let magnitude, let gravity):
      "pose \(index) reads |a| = \(rounded(magnitude, 3)) m/s², not about g = \(rounded(gravity, 3)) m/s²: check that the accelerometer works and that its readings are in m/s²"
    case .duplicateFace(let face, let first, let second):
      "poses \(first) and \(second) both have \(face): each of the six faces must be up exactly once"
    case .missingFaces(let faces):
      "no pose with \(faces.map(\.description).joined(separator: ", ")): the procedure needs all six faces up once each"
    case .degenerate(let message):
      "the poses cannot be solved: \(message)"
    }
  }
}

func rounded(_ value: Double, _ digits: Int) -> Double {
  var scale = 1.0
  for _ in 0..<digits { scale *= 10 }
  return (value * scale).rounded() / scale
}

/// The accelerometer correction a six-position calibration produces:
/// corrected = matrix · (raw − offset), m/s².
public struct AccelerometerCorrection: Sendable, Hashable {
  public enum Form: String, Sendable, Hashable {
    /// Offset and scale per axis; `matrix` is diagonal (1/scale).
    case perAxis
    /// Offset and a full 3×3 scale-and-misalignment matrix.
    case fullMatrix
  }

  public var form: Form
  /// Offset (bias), m/s², sensor axes.
  public var offset: Vector3
  /// Maps offset-corrected readings to specific force.
  public var matrix: Matrix3
  /// The per-axis scale factors as given (kept so they are written back exactly as solved,
  /// not as 1/(1/s)).
  private var givenScale: Vector3?

  /// A per-axis correction from offsets and scale factors (reading per true specific force,
  /// 1 for a perfect axis): corrected = (raw − offset) / scale.
  public init(offset: Vector3, scale: Vector3) {
    self.form = .perAxis
    self.offset = offset
    self.matrix = Matrix3(diagonal: Vector3(1 / scale.x, 1 / scale.y, 1 / scale.z))
    self.givenScale = scale
  }

  public init(offset: Vector3, matrix: Matrix3) {
    self.form = .fullMatrix
    self.offset = offset
    self.matrix = matrix
    self.givenScale = nil
  }

  public static let identity = AccelerometerCorrection(offset: .zero, scale: Vector3(1, 1, 1))

  /// The per-axis scale factors, reading per true specific force (the inverse of the matrix's
  /// diagonal).
  public var scale: Vector3 {
    givenScale ?? Vector3(1 / matrix.row0.x, 1 / matrix.row1.y, 1 / matrix.row2.z)
  }

  /// Applies the correction to a raw reading.
  @inlinable
  public func apply(_ raw: Vector3) -> Vector3 { matrix * (raw - offset) }
}

/// The six-position accelerometer calibration (IEEE Std 1293 style "tumble" test).
public struct SixPositionCalibration: Sendable {
  public struct Settings: Sendable, Hashable {
    /// A pose further than this from axis-aligned is rejected, degrees.
    public var maximumTiltDegrees = 10.0
    /// A pose whose largest per-axis sample standard deviation exceeds this moved, m/s².
    /// Default 0.1 m/s² ≈ 10 mg: about three times the MPU-6050's white noise at the 44 Hz
    /// DLPF setting (400 µg/√Hz, PS §6.2, over a ≈69 Hz noise bandwidth ≈ 3.3 mg), so the
    /// sensor's own noise never trips it while a touch or a wobble does.
    public var maximumStandardDeviation = 0.1
    /// Local gravity, m/s². Standard gravity by default; the true local value (±0.3 % over the
    /// Earth) goes into the scale factors otherwise.
    public var gravity = standardGravity
    /// Solve the full 3×3 scale-and-misalignment matrix (least squares) instead of per-axis
    /// offset and scale.
    public var fullMatrix = false
    /// Accept more than one pose per face (the least-squares solution averages them). With
    /// `false`, a repeated face is an error, as the guided procedure wants.
    public var allowRepeatedFaces = false

    public init() {}
  }

  /// A pose after identification.
  public struct Pose: Sendable, Hashable {
    public var measurement: PoseMeasurement
    public var face: SensorFace
    /// The angle between the mean reading and the face's axis, degrees.
    public var tiltDegrees: Double
  }

  public var poses: [Pose]
  public var correction: AccelerometerCorrection
  /// |corrected mean| − g per pose, m/s², in the order given.
  public var residuals: [Double]
  public var settings: Settings

  /// The largest |residual|, m/s².
  public var worstResidual: Double { residuals.map(abs).max() ?? 0 }

  /// Identifies, validates and solves the poses.
  ///
  /// Validation: every pose reads about g (within ±50 %), is within `maximumTiltDegrees` of
  /// axis-aligned and still; each face
  /// up exactly once (or at least once with `allowRepeatedFaces`).
  ///
  /// Per axis (classic two-position formulas): with a⁺ the axis's reading when it points up
  /// and a⁻ when it points down, offset = (a⁺ + a⁻)/2 and scale = (a⁺ − a⁻)/(2g). Cross-axis
  /// coupling does not bias these (the other axes read ≈ 0 in both poses) but is not corrected.
  ///
  /// Full matrix: for every pose the true specific force is g along the face's up axis; the
  /// affine map true = M·raw + b is solved row by row by least squares (4 unknowns per row, one
  /// equation per pose), then offset = −M⁻¹b. This assumes each face is truly level: a pose
  /// tilted by δ shows up as a misalignment of about δ, so use a square block on a level bench.
  public static func solve(_ measurements: [PoseMeasurement], settings: Settings = Settings())
    throws(SixPositionError) -> SixPositionCalibration
  {
    var poses: [Pose] = []
    var firstIndex: [SensorFace: Int] = [:]
    for (i, m) in measurements.enumerated() {
      let magnitude = m.mean.length
      guard magnitude > 0.5 * settings.gravity, magnitude < 1.5 * settings.gravity else {
        throw .implausibleMagnitude(index: i + 1, magnitude: magnitude, gravity: settings.gravity)
      }
      let face = SensorFace.dominant(in: m.mean)
      let tilt = m.mean.angle(to: face.up) * degreesPerRadian
      guard tilt <= settings.maximumTiltDegrees else {
        throw .notAxisAligned(
          index: i + 1, face: face, angleDegrees: tilt, limitDegrees: settings.maximumTiltDegrees)
      }
      let spread = max(m.standardDeviation.x, m.standardDeviation.y, m.standardDeviation.z)
      guard spread <= settings.maximumStandardDeviation, spread.isFinite else {
        throw .notStill(
          index: i + 1, face: face, deviation: spread, limit: settings.maximumStandardDeviation)
      }
      if let first = firstIndex[face], !settings.allowRepeatedFaces {
        throw .duplicateFace(face, first: first, second: i + 1)
      }
      if firstIndex[face] == nil { firstIndex[face] = i + 1 }
      poses.append(Pose(measurement: m, face: face, tiltDegrees: tilt))
    }
    let missing = SensorFace.allCases.filter { firstIndex[$0] == nil }
    guard missing.isEmpty else { throw .missingFaces(missing) }

    let g = settings.gravity
    let correction: AccelerometerCorrection
    if settings.fullMatrix {
      correction = try solveMatrix(poses, gravity: g)
    } else {
      var offset = [0.0, 0.0, 0.0]
      var scale = [0.0, 0.0, 0.0]
      for axis in 0..<3 {
        func mean(_ face: SensorFace) -> Double {
          let matching = poses.filter { $0.face == face }
          return matching.map {
            [$0.measurement.mean.x, $0.measurement.mean.y, $0.measurement.mean.z][axis]
          }
          .reduce(0, +) / Double(matching.count)
        }
        let up = mean(SensorFace(rawValue: axis * 2)!)
        let down = mean(SensorFace(rawValue: axis * 2 + 1)!)
        offset[axis] = (up + down) / 2
        scale[axis] = (up - down) / (2 * g)
        guard scale[axis] > 0.5 && scale[axis] < 2 else {
          throw .degenerate(
            "axis \(["x", "y", "z"][axis]) reads \(up) m/s² up and \(down) m/s² down: a scale of \(scale[axis]) is not a working accelerometer axis"
          )
        }
      }
      correction = AccelerometerCorrection(
        offset: Vector3(offset[0], offset[1], offset[2]),
        scale: Vector3(scale[0], scale[1], scale[2]))
    }
    let residuals = poses.map { correction.apply($0.measurement.mean).length - g }
    return SixPositionCalibration(
      poses: poses, correction: correction, residuals: residuals, settings: settings)
  }

  static func solveMatrix(_ poses: [Pose], gravity g: Double) throws(SixPositionError)
    -> AccelerometerCorrection
  {
    // Normal equations shared by the three rows: Σ [r;1][r;1]ᵀ.
    var a = [[Double]](repeating: [Double](repeating: 0, count: 4), count: 4)
    var rhs = [[Double]](repeating: [Double](repeating: 0, count: 4), count: 3)
    for pose in poses {
      let r = pose.measurement.mean
      let v = [r.x, r.y, r.z, 1]
      let truth = pose.face.up * g
      let t = [truth.x, truth.y, truth.z]
      for i in 0..<4 {
        for j in 0..<4 { a[i][j] += v[i] * v[j] }
        for row in 0..<3 { rhs[row][i] += v[i] * t[row] }
      }
    }
    var rows: [[Double]] = []
    for row in 0..<3 {
      guard let solution = solveLinearSystem(a, rhs[row]) else {
        throw .degenerate("the least-squares system is singular")
      }
      rows.append(solution)
    }
    let m = Matrix3(
      rows: Vector3(rows[0][0], rows[0][1], rows[0][2]),
      Vector3(rows[1][0], rows[1][1], rows[1][2]),
      Vector3(rows[2][0], rows[2][1], rows[2][2]))
    guard let inverse = m.inverse else {
      throw .degenerate("the solved scale-and-misalignment matrix is singular")
    }
    let b = Vector3(rows[0][3], rows[1][3], rows[2][3])
    return AccelerometerCorrection(offset: -(inverse * b), matrix: m)
  }
}
