import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// The static bias of one gyro axis with an honest uncertainty.
public struct AxisBias: Sendable, Hashable {
  /// The mean reading, rad/s.
  public var bias: Double
  /// The standard error of that mean, rad/s: σ_A(T), the Allan deviation at the record length
  /// (see `GyroBias.estimate`).
  public var standardError: Double
  /// How many independent samples the record is worth: (sample σ / standard error)².
  public var effectiveSampleCount: Double
  /// σ/√n, what independent samples would give: too optimistic when the bias wanders.
  public var naiveStandardError: Double
  /// The sample standard deviation, rad/s.
  public var sampleStandardDeviation: Double
}

/// Static gyro bias from a still recording.
public enum GyroBias {
  /// The mean of each gyro axis and its standard error.
  ///
  /// **Why not σ/√n.** σ/√n assumes independent samples. A MEMS gyro's bias wanders (flicker
  /// and rate random walk), so consecutive samples share their slow error and the mean of n of
  /// them is far less certain than σ/√n says: averaging stops helping beyond the Allan minimum.
  /// The Allan deviation measures exactly this: σ_A(τ) is the RMS difference, over √2, between
  /// consecutive τ-long averages, so σ_A at τ = T (the record length) is the repeatability of a
  /// bias measured from a T-long record, whatever the noise. For white noise it equals σ/√n.
  ///
  /// σ_A(T) itself cannot be computed from one record (it needs two T-long clusters), so it is
  /// extrapolated from the longest decade of the curve (τ from T/100 to T/10): a weighted
  /// log-log line through those points, its slope clamped to −½ … +½ (no noise averages down
  /// faster than white noise, and a rate random walk rises at +½), carried from T/10 to T.
  /// The white-noise value N/√T is a floor (nothing averages down faster). The effective sample
  /// count n_eff = (σ / σ_A(T))² then says what the record is worth. The estimate is itself a
  /// one-record estimate of a long-τ quantity: carried over a decade from about ten clusters,
  /// it is good to a few tens of percent, which is what an uncertainty needs.
  public static func estimate(_ recording: InertialRecording, allan: AllanAnalysis) -> [AxisBias] {
    InertialSensor.gyroscope.axes.map { axis in
      let samples = recording.samples(axis)
      let mean = AllanDeviation.compensatedSum(samples) / Double(samples.count)
      var squares = 0.0
      for x in samples { squares += (x - mean) * (x - mean) }
      let curve =
        allan.curves[axis]
        ?? AllanDeviation.overlapping(
          samples, samplePeriodSeconds: allan.timing.samplePeriodSeconds,
          clusterSizes: allan.clusterSizes, gaps: allan.timing.gaps)
      return estimate(
        mean: mean, squares: squares, count: samples.count, curve: curve,
        randomWalk: allan.readOffs[axis]?.randomWalk, duration: allan.timing.durationSeconds)
    }
  }

  /// The same from a recording read in passes: the means from `statistics`, the squared
  /// deviations from them from `deviations`, the curves from `allan` (which must hold the gyro
  /// axes).
  public static func estimate(
    statistics: ChannelStatistics, deviations: SquaredDeviations, allan: AllanAnalysis
  ) -> [AxisBias] {
    InertialSensor.gyroscope.axes.map { axis in
      estimate(
        mean: statistics.mean(axis), squares: deviations.sum[axis.rawValue],
        count: statistics.count, curve: allan.curves[axis]!,
        randomWalk: allan.readOffs[axis]?.randomWalk, duration: allan.timing.durationSeconds)
    }
  }

  /// One axis from its mean, its sum of squared deviations from it, its sample count and curve.
  static func estimate(
    mean: Double, squares: Double, count: Int, curve: AllanCurve, randomWalk: Double?,
    duration: Double
  ) -> AxisBias {
    let n = Double(count)
    let sd = (squares / max(1, n - 1)).squareRoot()
    let naive = sd / n.squareRoot()
    var standardError = extrapolatedDeviation(curve, toTau: duration) ?? naive
    // No record averages faster than its white noise: N/√T is a floor.
    if let randomWalk { standardError = max(standardError, randomWalk / duration.squareRoot()) }
    return AxisBias(
      bias: mean, standardError: standardError,
      effectiveSampleCount: standardError > 0 ? (sd / standardError) * (sd / standardError) : n,
      naiveStandardError: naive, sampleStandardDeviation: sd)
  }

  /// σ_A extrapolated to `tau` from the curve's last decade; `nil` for a curve with fewer than
  /// two points.
  static func extrapolatedDeviation(_ curve: AllanCurve, toTau tau: Double) -> Double? {
    guard let last = curve.tauSeconds.last, curve.tauSeconds.count >= 2 else { return nil }
    var indices = curve.tauSeconds.indices.filter { curve.tauSeconds[$0] >= last / 10 }
    if indices.count < 2 { indices = Array(curve.tauSeconds.indices.suffix(2)) }
    let weights = curve.weights
    var slope = fittedSlope(curve.tauSeconds, curve.deviation, weights, indices)
    slope = min(0.5, max(-0.5, slope))
    // The fitted line's level at the last τ (a weighted mean with the slope fixed).
    var sum = 0.0
    var total = 0.0
    for i in indices {
      sum += weights[i] * (log(curve.deviation[i]) - slope * log(curve.tauSeconds[i] / last))
      total += weights[i]
    }
    let atLast = exp(sum / total)
    return atLast * pow(tau / last, slope)
  }
}

/// Σ (x − mean)² of each channel, summed in sample order as `GyroBias.estimate` does, for
/// samples read in a pass once the means are known (`ChannelStatistics`).
public struct SquaredDeviations: Sendable {
  let means: SIMD8<Double>
  public private(set) var sum = SIMD8<Double>()

  public init(_ statistics: ChannelStatistics) {
    var means = SIMD8<Double>()
    for axis in InertialAxis.allCases { means[axis.rawValue] = statistics.mean(axis) }
    self.means = means
  }

  public mutating func add(_ sample: RecordingSample) {
    let d = sample.values - means
    sum += d * d
  }
}

/// Which polynomial models bias against temperature.
public enum TemperatureModel: String, Sendable, Hashable, CaseIterable {
  case linear
  case quadratic
}

/// A least-squares polynomial y = c₀ + c₁·(T − T_ref) + c₂·(T − T_ref)² (c₂ = 0 for linear).
public struct PolynomialFit: Sendable, Hashable {
  /// c₀, c₁, c₂ in y's unit per °C⁰, °C¹, °C².
  public var coefficients: [Double]
  /// 1 − RSS/TSS.
  public var rSquared: Double
  /// √(RSS/n), y's unit.
  public var residualRMS: Double
  /// Residual sum of squares.
  public var residualSumOfSquares: Double

  public func value(at dT: Double) -> Double {
    var result = 0.0
    var power = 1.0
    for c in coefficients {
      result += c * power
      power *= dT
    }
    return result
  }

  /// Fits a polynomial of `degree` (1 or 2) to y against x by least squares (normal equations
  /// on x as given, which the caller centres on T_ref); `nil` when singular.
  public static func fit(x: [Double], y: [Double], degree: Int) -> PolynomialFit? {
    let size = degree + 1
    guard x.count == y.count, x.count > size else { return nil }
    var a = [[Double]](repeating: [Double](repeating: 0, count: size), count: size)
    var b = [Double](repeating: 0, count: size)
    for (xi, yi) in zip(x, y) {
      var powers = [Double](repeating: 1, count: 2 * size - 1)
      for p in 1..<powers.count { powers[p] = powers[p - 1] * xi }
      for r in 0..<size {
        b[r] += powers[r] * yi
        for c in 0..<size { a[r][c] += powers[r + c] }
      }
    }
    guard let c = solveLinearSystem(a, b) else { return nil }
    let fit0 = PolynomialFit(coefficients: c, rSquared: 0, residualRMS: 0, residualSumOfSquares: 0)
    let mean = y.reduce(0, +) / Double(y.count)
    var rss = 0.0
    var tss = 0.0
    for (xi, yi) in zip(x, y) {
      let r = yi - fit0.value(at: xi)
      rss += r * r
      tss += (yi - mean) * (yi - mean)
    }
    var coefficients = c
    while coefficients.count < 3 { coefficients.append(0) }
    return PolynomialFit(
      coefficients: coefficients, rSquared: tss > 0 ? 1 - rss / tss : 1,
      residualRMS: (rss / Double(x.count)).squareRoot(), residualSumOfSquares: rss)
  }
}

/// Solves A·x = b by Gaussian elimination with partial pivoting; `nil` when singular.
func solveLinearSystem(_ matrix: [[Double]], _ rhs: [Double]) -> [Double]? {
  var a = matrix
  var b = rhs
  let n = b.count
  for col in 0..<n {
    var pivot = col
    for r in (col + 1)..<max(col + 1, n) where abs(a[r][col]) > abs(a[pivot][col]) { pivot = r }
    let scale = a.map { row in row.map(abs).max() ?? 0 }.max() ?? 0
    guard abs(a[pivot][col]) > scale * 1e-13, abs(a[pivot][col]) > 0 else { return nil }
    a.swapAt(col, pivot)
    b.swapAt(col, pivot)
    for r in (col + 1)..<max(col + 1, n) {
      let f = a[r][col] / a[col][col]
      for c in col..<n { a[r][c] -= f * a[col][c] }
      b[r] -= f * b[col]
    }
  }
  var x = [Double](repeating: 0, count: n)
  for r in stride(from: n - 1, through: 0, by: -1) {
    var s = b[r]
    for c in (r + 1)..<max(r + 1, n) { s -= a[r][c] * x[c] }
    x[r] = s / a[r][r]
  }
  return x
}

/// Why bias versus temperature could not be fitted.
public enum TemperatureFitError: Error, Hashable, Sendable, CustomStringConvertible {
  case noTemperature
  case tooFewWindows(have: Int, need: Int, windowSeconds: Double)
  case spanTooSmall(spanCelsius: Double, needCelsius: Double)
  case singular

  public var description: String {
    switch self {
    case .noTemperature:
      "the recording has no temp_c column; bias versus temperature needs the die temperature of every sample"
    case .tooFewWindows(let have, let need, let window):
      "the recording holds \(have) averaging windows of \(window) s; the temperature fit needs at least \(need)"
    case .spanTooSmall(let span, let need):
      "the temperature spans only \((span * 100).rounded() / 100) °C; a fit needs at least \(need) °C: record a warm-up (power the unit on cold and record it still for 20–30 minutes)"
    case .singular:
      "the temperature fit is singular (every window at the same temperature?)"
    }
  }
}

/// Gyro bias against die temperature from a still warm-up recording, per axis.
public struct BiasTemperatureFit: Sendable {
  /// T_ref, °C: the mean temperature of the windows (centring decorrelates the coefficients).
  public var referenceTemperatureCelsius: Double
  /// The averaging windows: mean temperature (°C) and mean gyro reading (rad/s) of each.
  public var windowTemperatures: [Double]
  public var windowBiases: [Vector3]
  public var windowSeconds: Double
  /// Per gyro axis: both fits, the F statistic of the quadratic term and the chosen model.
  public var linear: [PolynomialFit]
  public var quadratic: [PolynomialFit]
  public var quadraticFStatistic: [Double]
  public var chosen: [TemperatureModel]

  /// The lowest and highest window temperatures, °C: the range the coefficients are valid in.
  public var temperatureRange: ClosedRange<Double> {
    (windowTemperatures.min() ?? 0)...(windowTemperatures.max() ?? 0)
  }

  /// The chosen fit of each axis.
  public var chosenFits: [PolynomialFit] {
    (0..<3).map { chosen[$0] == .quadratic ? quadratic[$0] : linear[$0] }
  }

  /// F above which the quadratic term counts as significant: for one added parameter and the
  /// dozens of windows of a warm-up, F(1, n−3) exceeds about 7 with probability 1 %; 10 leaves
  /// room for the windows' correlation through the wandering bias.
  public static let significantF = 10.0
  /// …and it must also cut the residual RMS by at least 10 %, or it is not worth a coefficient.
  public static let requiredImprovement = 0.9
  /// The fewest windows and the smallest temperature span accepted.
  public static let minimumWindows = 8
  public static let minimumSpanCelsius = 2.0

  /// Averages the recording in consecutive `windowSeconds` windows and fits each gyro axis's
  /// window means against the window temperatures, linearly and quadratically.
  ///
  /// Windows, not samples: a 10 s mean cuts the white noise by √1000 while the die warms by a
  /// small fraction of a degree, so the fit sees the temperature dependence and its residual
  /// RMS and R² describe it rather than the sample noise.
  ///
  /// **Choosing** (`model == nil`): quadratic only when it is significantly better, i.e. its F
  /// statistic F = (RSS_lin − RSS_quad) / (RSS_quad / (n − 3)) exceeds `significantF` *and* its
  /// residual RMS is at most `requiredImprovement` × the linear one; linear otherwise.
  public static func fit(
    _ recording: InertialRecording, timing: SampleTiming, windowSeconds: Double = 10,
    model: TemperatureModel? = nil
  ) throws(TemperatureFitError) -> BiasTemperatureFit {
    guard recording.temperatureCelsius != nil else { throw .noTemperature }
    var windows = TemperatureWindows(timing: timing, windowSeconds: windowSeconds)
    for i in 0..<recording.count { windows.add(recording.sample(i), index: i) }
    return try fit(windows, model: model)
  }

  /// The same from window means gathered a sample at a time (a recording read in passes).
  public static func fit(_ windows: TemperatureWindows, model: TemperatureModel? = nil)
    throws(TemperatureFitError) -> BiasTemperatureFit
  {
    let temperatures = windows.temperatures
    let biases = windows.biases
    guard temperatures.count >= minimumWindows else {
      throw .tooFewWindows(
        have: temperatures.count, need: minimumWindows, windowSeconds: windows.windowSeconds)
    }
    let span = (temperatures.max() ?? 0) - (temperatures.min() ?? 0)
    guard span >= minimumSpanCelsius else {
      throw .spanTooSmall(spanCelsius: span, needCelsius: minimumSpanCelsius)
    }
    let reference = temperatures.reduce(0, +) / Double(temperatures.count)
    let x = temperatures.map { $0 - reference }
    var linear: [PolynomialFit] = []
    var quadratic: [PolynomialFit] = []
    var fStatistics: [Double] = []
    var chosen: [TemperatureModel] = []
    for c in 0..<3 {
      let y = biases.map { [$0.x, $0.y, $0.z][c] }
      guard let lin = PolynomialFit.fit(x: x, y: y, degree: 1),
        let quad = PolynomialFit.fit(x: x, y: y, degree: 2)
      else { throw .singular }
      let dof = Double(x.count - 3)
      let f =
        quad.residualSumOfSquares > 0
        ? (lin.residualSumOfSquares - quad.residualSumOfSquares)
          / (quad.residualSumOfSquares / dof)
        : (lin.residualSumOfSquares > 0 ? Double.infinity : 0)
      linear.append(lin)
      quadratic.append(quad)
      fStatistics.append(f)
      if let model {
        chosen.append(model)
      } else {
        let better = f > significantF && quad.residualRMS <= requiredImprovement * lin.residualRMS
        chosen.append(better ? .quadratic : .linear)
      }
    }
    return BiasTemperatureFit(
      referenceTemperatureCelsius: reference, windowTemperatures: temperatures,
      windowBiases: biases, windowSeconds: Double(windows.perWindow) * windows.periodSeconds,
      linear: linear, quadratic: quadratic, quadraticFStatistic: fStatistics, chosen: chosen)
  }
}

/// The window means `BiasTemperatureFit.fit` fits, gathered a sample at a time: the mean die
/// temperature and gyro reading of every whole window within the runs (none spans a gap).
public struct TemperatureWindows: Sendable {
  /// The window asked for, seconds (as given, for messages).
  public let windowSeconds: Double
  let perWindow: Int
  let periodSeconds: Double
  var placer: WindowPlacer
  var temperature = 0.0
  var gyro = [0.0, 0.0, 0.0]
  public private(set) var temperatures: [Double] = []
  public private(set) var biases: [Vector3] = []

  /// For windows of `windowSeconds` (rounded to whole samples, at least one).
  public init(timing: SampleTiming, windowSeconds: Double = 10) {
    self.windowSeconds = windowSeconds
    perWindow = max(1, Int((windowSeconds / timing.samplePeriodSeconds).rounded()))
    periodSeconds = timing.samplePeriodSeconds
    placer = WindowPlacer(timing, length: perWindow)
  }

  /// Sample `index` (indices in increasing order).
  public mutating func add(_ sample: RecordingSample, index: Int) {
    guard let position = placer.position(of: index) else { return }
    temperature += sample.values[6]
    for c in 0..<3 { gyro[c] += sample.values[c] }
    guard position == perWindow - 1 else { return }
    let count = Double(perWindow)
    temperatures.append(temperature / count)
    biases.append(Vector3(gyro[0] / count, gyro[1] / count, gyro[2] / count))
    temperature = 0
    gyro = [0, 0, 0]
  }
}
