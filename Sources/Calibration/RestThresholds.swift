import Geometry

/// Thresholds for the estimator's rest detector, derived from the unit's own noise.
///
/// The detector (issue 4) looks at a sliding window and reports rest when, over the window, the
/// gyro's deviation from its own window mean and the accelerometer magnitude's standard
/// deviation are both below their thresholds, for at least the dwell time. The gyro is tested
/// against its own mean, never by raw magnitude, because an MPU-6050's zero-rate output can be
/// ±20 °/s (PS §6.1).
public struct RestDetectorThresholds: Sendable, Hashable {
  /// Gyro deviation threshold, rad/s: RMS over the window of |ω − mean ω| (all three axes).
  public var gyroDeviationRadiansPerSecond: Double
  /// Accelerometer threshold, m/s²: standard deviation of |a| over the window.
  public var accelDeviationMetersPerSecondSquared: Double
  /// The window, seconds (seed 000 suggests 1.5 s).
  public var windowSeconds: Double
  /// How long both statistics must stay under their thresholds before rest is declared.
  public var dwellSeconds: Double
  /// k: the thresholds are k × the still unit's median window statistics.
  public var noiseMultiple: Double

  public init(
    gyroDeviationRadiansPerSecond: Double, accelDeviationMetersPerSecondSquared: Double,
    windowSeconds: Double, dwellSeconds: Double, noiseMultiple: Double
  ) {
    self.gyroDeviationRadiansPerSecond = gyroDeviationRadiansPerSecond
    self.accelDeviationMetersPerSecondSquared = accelDeviationMetersPerSecondSquared
    self.windowSeconds = windowSeconds
    self.dwellSeconds = dwellSeconds
    self.noiseMultiple = noiseMultiple
  }

  /// k = 3. Over a 1.5 s window at 100 Hz the window statistic of a still unit scatters by
  /// about 1/√(2·149) ≈ 6 % around its median (more with the DLPF's correlation, still ≲ 15 %),
  /// so three times the median is a dozen or more of those scatters away: noise alone never
  /// reads as motion, and slow bias drift inside 1.5 s is negligible. It is also where the seed's
  /// rule of thumb lands for a stock MPU-6050: 0.01 g ≈ 3 × its ≈ 3.3 mg white noise at the
  /// 44 Hz DLPF setting (400 µg/√Hz, PS §6.2). Larger k lets slow real motion (a hand drifting)
  /// pass as rest and be absorbed into the gyro bias; smaller k makes a bench's faint
  /// vibration break rests.
  public static let defaultNoiseMultiple = 3.0
  public static let defaultWindowSeconds = 1.5
  /// Half a second of dwell: long enough that one quiet window between two movements is not
  /// taken as rest, short enough to use most of a 5 s pause.
  public static let defaultDwellSeconds = 0.5

  /// Measures the window statistics of a still `recording` (every whole window, consecutive)
  /// and sets each threshold to `noiseMultiple` × its median. Measuring them directly, rather
  /// than computing σ = N·√(2B) from the Allan N, captures exactly what the detector will see:
  /// the loop rate, the DLPF bandwidth and its correlation of neighbouring samples, and the
  /// accelerometer's cross-axis noise — provided the recording was made with the sample rate and
  /// DLPF setting the firmware will run (the calibration file records the sample period).
  /// `nil` when the recording holds no whole window.
  public static func derive(
    from recording: InertialRecording, timing: SampleTiming,
    windowSeconds: Double = defaultWindowSeconds, dwellSeconds: Double = defaultDwellSeconds,
    noiseMultiple: Double = defaultNoiseMultiple
  ) -> RestDetectorThresholds? {
    var windows = RestWindowStatistics(timing: timing, windowSeconds: windowSeconds)
    for i in 0..<recording.count { windows.add(recording.sample(i), index: i) }
    return windows.thresholds(dwellSeconds: dwellSeconds, noiseMultiple: noiseMultiple)
  }
}

/// The window statistics `RestDetectorThresholds.derive` takes the medians of, gathered a
/// sample at a time (in a pass over a recording file, or over one in memory): every whole
/// window within the runs, none spanning a gap. Holds one window of samples.
public struct RestWindowStatistics: Sendable {
  let perWindow: Int
  let periodSeconds: Double
  var placer: WindowPlacer
  /// The window's samples: gyro x, y, z, accel x, y, z, `perWindow` of each.
  var window: [Double]
  var gyroStatistics: [Double] = []
  var accelStatistics: [Double] = []

  /// For windows of `windowSeconds` (rounded to whole samples, at least two).
  public init(
    timing: SampleTiming,
    windowSeconds: Double = RestDetectorThresholds.defaultWindowSeconds
  ) {
    perWindow = max(2, Int((windowSeconds / timing.samplePeriodSeconds).rounded()))
    periodSeconds = timing.samplePeriodSeconds
    placer = WindowPlacer(timing, length: perWindow)
    window = [Double](repeating: 0, count: 6 * perWindow)
  }

  /// Sample `index` (indices in increasing order).
  public mutating func add(_ sample: RecordingSample, index: Int) {
    guard let position = placer.position(of: index) else { return }
    for axis in 0..<6 { window[axis * perWindow + position] = sample.values[axis] }
    if position == perWindow - 1 { addWindow() }
  }

  private mutating func addWindow() {
    let n = Double(perWindow)
    var gyroVariance = 0.0
    for axis in 0..<3 {
      let values = window[(axis * perWindow)..<((axis + 1) * perWindow)]
      var mean = 0.0
      for x in values { mean += x }
      mean /= n
      var squares = 0.0
      for x in values { squares += (x - mean) * (x - mean) }
      gyroVariance += squares / (n - 1)
    }
    gyroStatistics.append(gyroVariance.squareRoot())
    var magnitudes: [Double] = []
    magnitudes.reserveCapacity(perWindow)
    for i in 0..<perWindow {
      magnitudes.append(
        Vector3(window[3 * perWindow + i], window[4 * perWindow + i], window[5 * perWindow + i])
          .length)
    }
    let mean = magnitudes.reduce(0, +) / n
    var squares = 0.0
    for m in magnitudes { squares += (m - mean) * (m - mean) }
    accelStatistics.append((squares / (n - 1)).squareRoot())
  }

  /// Each threshold `noiseMultiple` × the median of its window statistic; `nil` when no whole
  /// window was seen.
  public func thresholds(
    dwellSeconds: Double = RestDetectorThresholds.defaultDwellSeconds,
    noiseMultiple: Double = RestDetectorThresholds.defaultNoiseMultiple
  ) -> RestDetectorThresholds? {
    guard !gyroStatistics.isEmpty else { return nil }
    var gyro = gyroStatistics
    var accel = accelStatistics
    return RestDetectorThresholds(
      gyroDeviationRadiansPerSecond: noiseMultiple * SampleTiming.selectMedian(&gyro),
      accelDeviationMetersPerSecondSquared: noiseMultiple * SampleTiming.selectMedian(&accel),
      windowSeconds: Double(perWindow) * periodSeconds, dwellSeconds: dwellSeconds,
      noiseMultiple: noiseMultiple)
  }
}
