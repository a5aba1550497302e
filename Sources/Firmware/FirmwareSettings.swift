import AttitudeEstimation
import BuildInfo
import Calibration
import Geometry
import HardwareAbstraction
import MPU6050
import Telemetry

/// Everything the loop needs to know, as one value: built from a board file (and an optional
/// calibration file) by `FirmwareSettings(board:calibration:)` in the `plumb` executable, or
/// directly by tests.
public struct FirmwareSettings: Sendable {
  /// The chip's address on the bus.
  public var address: I2CAddress
  /// The chip's configuration (validated when the loop is made).
  public var sensor: MPU6050Configuration
  /// Whether to run the self-test at start-up (PS §6.1/6.2). A failure is reported, not fatal.
  public var selfTest: Bool
  /// The driver's retry, re-initialisation and stuck-data policy.
  public var recoveryPolicy: MPU6050RecoveryPolicy = .default
  /// Whether the INT pin is wired to the data-ready GPIO. When it is not, the loop drains the
  /// FIFO on a timer from the start.
  public var interruptWired: Bool
  /// Sensor axes → body axes, and the bench calibration.
  public var correction: SampleCorrection
  /// The calibration file's id (frames carry it); 0 when none is loaded.
  public var calibrationID: UInt32
  /// The estimator's settings.
  public var estimator: AttitudeEstimator.Settings
  /// The serial encoding and frames per second (a divisor of the sample rate).
  public var format: TelemetryFormat
  public var outputRateHz: Int
  /// The serial line's baud rate (for the link budget of `format`/`rate` commands).
  public var baudRate: Int
  public var mavlink: MAVLinkIdentity
  /// Samples discarded after start-up, while the DLPF and the chip settle: 10 (100 ms at
  /// 100 Hz, about 20 DLPF delays at the default 44 Hz setting).
  public var warmUpSamples: Int
  /// The firmware version the `version` command reports.
  public var firmwareVersion: String
  /// Transmit queue size, bytes.
  public var transmitQueueBytes: Int
  /// How often to try to reopen a serial device that went away.
  public var reopenInterval: Duration

  public init(
    address: I2CAddress = .mpu6050, sensor: MPU6050Configuration = .default,
    selfTest: Bool = true, interruptWired: Bool = true,
    correction: SampleCorrection = SampleCorrection(), calibrationID: UInt32 = 0,
    estimator: AttitudeEstimator.Settings = .default, format: TelemetryFormat = .binary,
    outputRateHz: Int = 100, baudRate: Int = 115_200, mavlink: MAVLinkIdentity = MAVLinkIdentity(),
    warmUpSamples: Int = 10, firmwareVersion: String = PlumbVersion.current,
    transmitQueueBytes: Int = 4096, reopenInterval: Duration = .seconds(1)
  ) {
    self.address = address
    self.sensor = sensor
    self.selfTest = selfTest
    self.interruptWired = interruptWired
    self.correction = correction
    self.calibrationID = calibrationID
    self.estimator = estimator
    self.format = format
    self.outputRateHz = outputRateHz
    self.baudRate = baudRate
    self.mavlink = mavlink
    self.warmUpSamples = warmUpSamples
    self.firmwareVersion = firmwareVersion
    self.transmitQueueBytes = transmitQueueBytes
    self.reopenInterval = reopenInterval
  }

  /// Applies a calibration file: the correction, its id, the estimator's bias seed (the
  /// residual on top of the bench model starts at zero with the bench uncertainty, or at what
  /// the last clean shutdown wrote into the `live` section) and, when the file has them,
  /// rest-detector thresholds measured on this unit.
  public mutating func apply(calibration: CalibrationFile, mounting: Matrix3) {
    correction = SampleCorrection(mounting: mounting, calibration: calibration)
    calibrationID = calibration.calibrationId
    if let gyroscope = calibration.gyroscope {
      let u = gyroscope.biasUncertaintyRadiansPerSecond
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
    if let live = calibration.live {
      // The last run's own estimate, at its temperature, is the best centre for this one:
      // the residual it found on top of the bench model (body axes). Its uncertainty stays the
      // bench's (or the datasheet's without a bench section): a bias moves between power-ups
      // by more than a rest's precision, and the first rest here measures it anyway.
      let residual =
        correction.mounting * live.gyroBiasRadiansPerSecond
        - correction.staticGyroBiasInBody(atTemperature: live.temperatureCelsius)
      if residual.isFinite { estimator.bias.initialBiasRadiansPerSecond = residual }
    }
    applyNoise(calibration)
  }

  /// The unit's own noise, from a calibration file: the Allan read-offs become the estimator's
  /// noise figures (N of the noisiest axis; K only where it is larger than the default, which
  /// allows for temperature drift that a bench at constant temperature does not show), and the
  /// rest detector's per-sample thresholds follow the estimator's own rule for them
  /// (`RestDetector.Settings(noise:samplePeriodSeconds:)`: 8σ of one sample's 3-axis noise,
  /// never below a quarter of the defaults) — from the file's rest section when it has one,
  /// which measured each sample's spread directly (filter correlation included), else from N.
  ///
  /// The rest section's figures are window statistics times k: the RMS of the gyro's 3-axis
  /// deviation over the window (σ√3) and the standard deviation of the accelerometer's
  /// magnitude (one axis' σ). They were once taken as the detector's per-sample thresholds,
  /// which test a sample's 3-axis deviation: 3σ of one axis for three, exceeded by a still
  /// unit's noise on 3 % of its samples, so that a calibrated unit almost never rested.
  mutating func applyNoise(_ calibration: CalibrationFile) {
    var noise = estimator.noise
    func worst(_ values: [Double?]) -> Double? {
      let known = values.compactMap { $0 }.filter { $0.isFinite && $0 > 0 }
      return known.count == values.count ? known.max() : nil
    }
    if let gyro = calibration.noise?.gyroscope {
      if let n = worst(gyro.randomWalk) { noise.gyroNoiseDensity = n }
      if let k = worst(gyro.rateRandomWalk) {
        noise.gyroBiasRandomWalk = max(k, noise.gyroBiasRandomWalk)
      }
    }
    if let accel = calibration.noise?.accelerometer, let n = worst(accel.randomWalk) {
      noise.accelerometerNoiseDensity = n
    }
    estimator.noise = noise
    guard calibration.noise != nil || calibration.restDetector != nil else { return }
    var spread = noise
    if let rest = calibration.restDetector, rest.noiseMultiple > 0 {
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

  /// What is wrong with these settings, or `nil`: the sensor configuration's validation, the
  /// output rate, and the link budget, each with the fix.
  public var problem: String? {
    let validated: ValidatedMPU6050Configuration
    do {
      validated = try sensor.validated()
    } catch {
      return error.description
    }
    let sampleRate = validated.sampleRateHertz
    guard outputRateHz >= 1, Double(outputRateHz) <= sampleRate,
      abs(sampleRate / Double(outputRateHz) - (sampleRate / Double(outputRateHz)).rounded())
        < 1e-9
    else {
      return
        "output rate \(outputRateHz) Hz must divide the \(formatHertz(sampleRate)) sample rate"
    }
    switch LinkBudget.check(
      format: format, outputRateHz: outputRateHz, baudRate: baudRate,
      sampleRateHz: Int(sampleRate.rounded()))
    {
    case .success: break
    case .failure(let refusal): return refusal.description
    }
    if let problem = estimator.problem { return "estimator: \(problem)" }
    return nil
  }
}

func formatHertz(_ value: Double) -> String {
  value == value.rounded() ? "\(Int(value)) Hz" : "\(value) Hz"
}
