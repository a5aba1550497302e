/// The noise figures of one inertial sensor, as an Allan-deviation analysis reads them off
/// (seed 000: the value at τ = 1 s is the angle random walk; the +½ slope is the rate random
/// walk). A calibration file stores them per unit; the estimator's thresholds and weights are
/// derived from them, so a quieter unit gets tighter rest thresholds and trusts its rests more.
public struct SensorNoise: Hashable, Sendable {
  /// Gyroscope white noise (angle random walk) N, rad/s/√Hz (= rad/√s). One sample at period
  /// dt then has a standard deviation of about N/√dt.
  ///
  /// Default 0.01 °/s/√Hz (1.75e-4 rad/√s): twice the MPU-6050's typical rate noise spectral
  /// density of 0.005 °/s/√Hz (PS §6.1), because real breakouts are noisier than the typical
  /// figure and an underestimate would make rests look like motion. Seed 000's simulated gyro
  /// (0.002 rad/s per sample at 100 Hz) has N = 2e-4 rad/√s.
  public var gyroNoiseDensity: Double
  /// Gyroscope bias random walk K, rad/s/√s: how fast the bias wanders while nothing measures
  /// it. Sets how quickly the bias uncertainty grows between rests.
  ///
  /// Default 1e-4 rad/s/√s (0.0057 °/s/√s): generous for a MEMS gyro at constant temperature:
  /// in ten minutes without a rest the uncertainty grows by 0.14 °/s (1σ), so warm-up drift of
  /// a tenth of a degree per second stays inside it; about half VQF's default bias forgetting
  /// (0.1 °/s over 100 s, where this gives 0.057 °/s).
  public var gyroBiasRandomWalk: Double
  /// Accelerometer white noise, m/s²/√Hz. Default 400 µg/√Hz (3.9e-3 m/s²/√Hz), the
  /// MPU-6050's power spectral density (PS §6.2).
  public var accelerometerNoiseDensity: Double

  public init(
    gyroNoiseDensity: Double = 0.01 * .pi / 180, gyroBiasRandomWalk: Double = 1e-4,
    accelerometerNoiseDensity: Double = 400e-6 * 9.80665
  ) {
    self.gyroNoiseDensity = gyroNoiseDensity
    self.gyroBiasRandomWalk = gyroBiasRandomWalk
    self.accelerometerNoiseDensity = accelerometerNoiseDensity
  }

  /// The defaults above: an MPU-6050 breakout with some margin.
  public static let mpu6050 = SensorNoise()
}
