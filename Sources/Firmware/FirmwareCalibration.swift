import AttitudeEstimation
import Geometry

/// What the firmware takes from a bench calibration file, as plain values: the corrections it
/// removes from every sample and the figures it tunes the estimator with. PlumbRuntime reads
/// the file (`FirmwareCalibration(_ file: CalibrationFile)`); the loop never sees the file, its
/// JSON, its hash or the bench analyses behind it. Everything is in sensor axes, as measured
/// before the chip was mounted.
public struct FirmwareCalibration: Hashable, Sendable {
  /// The file's id (frames carry it).
  public var id: UInt32
  /// The six-position correction, sensor axes; `nil` without one.
  public var accelerometer: Accelerometer?
  /// The bench gyro bias model; `nil` without a gyroscope section.
  public var gyroscope: GyroBiasPolynomial?
  /// The bench bias's standard error per axis, rad/s (with `gyroscope`).
  public var gyroBiasUncertaintyRadiansPerSecond: Vector3
  /// G, the gyro's scale and misalignment (rate = G · (reading − bias)); `nil` without one.
  public var gyroscopeMatrix: Matrix3?
  /// The estimator's own bias at the last clean shutdown; `nil` when none was written.
  public var lastRun: LastRun?
  /// The unit's own noise, from the file's Allan read-offs; `nil` without a noise section.
  public var noise: Noise?
  /// The rest detector's window statistics measured on the unit; `nil` without a rest section.
  public var rest: RestSpread?

  /// corrected = matrix · (raw − offset), m/s².
  public struct Accelerometer: Hashable, Sendable {
    public var matrix: Matrix3
    public var offset: Vector3

    public init(matrix: Matrix3, offset: Vector3) {
      self.matrix = matrix
      self.offset = offset
    }
  }

  /// The estimator's gyro bias (sensor axes, rad/s) and the die temperature (°C) at the last
  /// clean shutdown.
  public struct LastRun: Hashable, Sendable {
    public var gyroBiasRadiansPerSecond: Vector3
    public var temperatureCelsius: Double

    public init(gyroBiasRadiansPerSecond: Vector3, temperatureCelsius: Double) {
      self.gyroBiasRadiansPerSecond = gyroBiasRadiansPerSecond
      self.temperatureCelsius = temperatureCelsius
    }
  }

  /// Allan read-offs, each the noisiest axis' (`nil` where an axis was not read off).
  public struct Noise: Hashable, Sendable {
    /// The recording's sample period, s.
    public var samplePeriodSeconds: Double
    /// N of the gyro, rad/√s.
    public var gyroNoiseDensity: Double?
    /// K of the gyro, rad/s/√s.
    public var gyroBiasRandomWalk: Double?
    /// N of the accelerometer, m/s/√s.
    public var accelerometerNoiseDensity: Double?

    public init(
      samplePeriodSeconds: Double, gyroNoiseDensity: Double? = nil,
      gyroBiasRandomWalk: Double? = nil, accelerometerNoiseDensity: Double? = nil
    ) {
      self.samplePeriodSeconds = samplePeriodSeconds
      self.gyroNoiseDensity = gyroNoiseDensity
      self.gyroBiasRandomWalk = gyroBiasRandomWalk
      self.accelerometerNoiseDensity = accelerometerNoiseDensity
    }
  }

  /// A still unit's window statistics times `noiseMultiple`: the RMS of the gyro's 3-axis
  /// deviation over the window (σ√3) and the standard deviation of the accelerometer's
  /// magnitude (one axis' σ).
  public struct RestSpread: Hashable, Sendable {
    public var gyroDeviationRadiansPerSecond: Double
    public var accelDeviationMetersPerSecondSquared: Double
    public var noiseMultiple: Double

    public init(
      gyroDeviationRadiansPerSecond: Double, accelDeviationMetersPerSecondSquared: Double,
      noiseMultiple: Double
    ) {
      self.gyroDeviationRadiansPerSecond = gyroDeviationRadiansPerSecond
      self.accelDeviationMetersPerSecondSquared = accelDeviationMetersPerSecondSquared
      self.noiseMultiple = noiseMultiple
    }
  }

  public init(
    id: UInt32, accelerometer: Accelerometer? = nil, gyroscope: GyroBiasPolynomial? = nil,
    gyroBiasUncertaintyRadiansPerSecond: Vector3 = .zero, lastRun: LastRun? = nil,
    noise: Noise? = nil, rest: RestSpread? = nil, gyroscopeMatrix: Matrix3? = nil
  ) {
    self.id = id
    self.gyroscopeMatrix = gyroscopeMatrix
    self.accelerometer = accelerometer
    self.gyroscope = gyroscope
    self.gyroBiasUncertaintyRadiansPerSecond = gyroBiasUncertaintyRadiansPerSecond
    self.lastRun = lastRun
    self.noise = noise
    self.rest = rest
  }
}

extension FirmwareSettings {
  /// Applies a calibration: the correction, its id, the estimator's bias seed (the residual
  /// on top of the bench model starts at zero with the bench uncertainty, or at what the last
  /// clean shutdown wrote) and, when the file had them, noise figures and rest-detector
  /// thresholds measured on this unit.
  public mutating func apply(_ calibration: FirmwareCalibration, mounting: Matrix3) {
    correction = SampleCorrection(
      mounting: mounting, accelerometerMatrix: calibration.accelerometer?.matrix ?? .identity,
      accelerometerOffset: calibration.accelerometer?.offset ?? .zero,
      gyroscope: calibration.gyroscope, gyroscopeMatrix: calibration.gyroscopeMatrix ?? .identity)
    calibrationID = calibration.id
    if let gyroscope = calibration.gyroscope {
      let u = calibration.gyroBiasUncertaintyRadiansPerSecond
      let uncertainty = max(u.x, u.y, u.z, 0.01 * radiansPerDegree)
      // The residual on top of the bench model is zero, to the bench's uncertainty, at the
      // bench's temperature; away from it the estimator's slope uncertainty widens it.
      var bias = GyroBiasEstimator.Settings.calibrated(
        biasRadiansPerSecond: .zero, uncertaintyRadiansPerSecond: uncertainty,
        referenceTemperatureCelsius: gyroscope.referenceTemperatureCelsius)
      bias.restEstimationEnabled = estimator.bias.restEstimationEnabled
      bias.motionEstimationEnabled = estimator.bias.motionEstimationEnabled
      // The estimator learns the slope of what the bench model leaves over: with a bench
      // temperature fit, a residual slope of 0.01 °/s/°C at 1σ (a fit's slope error over a
      // warm-up); without one, the unit's whole slope, so the estimator's wider default. Set to
      // zero on the board side, this freezes the learning.
      bias.temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius =
        gyroscope.temperatureRangeCelsius == nil
        ? estimator.bias.temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius
        : min(
          0.01 * radiansPerDegree,
          estimator.bias.temperatureCoefficientUncertaintyRadiansPerSecondPerCelsius)
      estimator.bias = bias
    }
    if let live = calibration.lastRun {
      // The last run's own estimate, at its temperature, is the best centre for this one:
      // the residual it found on top of the bench model (body axes). Its uncertainty stays the
      // bench's (or the datasheet's without a bench section): a bias moves between power-ups
      // by more than a rest's precision, and the first rest here measures it anyway.
      let residual =
        correction.gyroscopeToBody * live.gyroBiasRadiansPerSecond
        - correction.staticGyroBiasInBody(atTemperature: live.temperatureCelsius)
      if residual.isFinite { estimator.bias.initialBiasRadiansPerSecond = residual }
    }
    applyNoise(calibration)
  }

  /// The unit's own noise, from a calibration: the Allan read-offs become the estimator's
  /// noise figures (N of the noisiest axis; K only where it is larger than the default, which
  /// allows for temperature drift that a bench at constant temperature does not show), and the
  /// rest detector's per-sample thresholds follow the estimator's own rule for them
  /// (`RestDetector.Settings(noise:samplePeriodSeconds:)`: 8σ of one sample's 3-axis noise,
  /// never below a quarter of the defaults) — from the file's rest section when it has one,
  /// which measured each sample's spread directly (filter correlation included), else from N.
  ///
  /// The rest section's figures are window statistics times k: the RMS of the gyro's 3-axis
  /// deviation over the window (σ√3) and the standard deviation of the accelerometer's
  /// magnitude (one axis' σ). They are not the detector's per-sample thresholds, which test a
  /// sample's 3-axis deviation: taken as such they would be 3σ of one axis for three, exceeded
  /// by a still unit's noise on 3 % of its samples, and a calibrated unit would almost never
  /// rest (`CalibratedRestTests`).
  mutating func applyNoise(_ calibration: FirmwareCalibration) {
    var noise = estimator.noise
    if let n = calibration.noise?.gyroNoiseDensity { noise.gyroNoiseDensity = n }
    if let k = calibration.noise?.gyroBiasRandomWalk {
      noise.gyroBiasRandomWalk = max(k, noise.gyroBiasRandomWalk)
    }
    if let n = calibration.noise?.accelerometerNoiseDensity {
      noise.accelerometerNoiseDensity = n
    }
    estimator.noise = noise
    guard calibration.noise != nil || calibration.rest != nil else { return }
    var spread = noise
    if let rest = calibration.rest, rest.noiseMultiple > 0 {
      // Per-sample σ at the bench recording's period, as densities.
      let root = (calibration.noise?.samplePeriodSeconds ?? 1 / sensor.sampleRateHertz)
        .squareRoot()
      spread.gyroNoiseDensity =
        rest.gyroDeviationRadiansPerSecond / rest.noiseMultiple / 3.0.squareRoot() * root
      spread.accelerometerNoiseDensity =
        rest.accelDeviationMetersPerSecondSquared / rest.noiseMultiple * root
    }
    let derived = RestDetector.Settings(
      noise: spread, samplePeriodSeconds: 1 / sensor.sampleRateHertz)
    estimator.rest.gyroDeviationThresholdRadiansPerSecond =
      derived.gyroDeviationThresholdRadiansPerSecond
    estimator.rest.accelerationDeviationThresholdMetersPerSecondSquared =
      derived.accelerationDeviationThresholdMetersPerSecondSquared
  }
}
