import Geometry
import Randomness

/// What a simulated inertial sensor reports for one sample.
public struct InertialReading: Hashable, Sendable {
  /// Angular rate, body axes, rad/s (bias, scale and noise included).
  public var angularRateRadiansPerSecond: Vector3
  /// Specific force, body axes, m/s² (bias, scale and noise included).
  public var specificForceMetersPerSecondSquared: Vector3
  /// Die temperature, °C.
  public var temperatureCelsius: Double
  /// The gyro bias in effect for this sample (the truth an estimator is compared with), rad/s.
  public var gyroBiasRadiansPerSecond: Vector3
}

/// Turns motion truth into imperfect gyroscope and accelerometer readings: a constant bias plus
/// a bias random walk, white noise per sample and a per-axis scale error, for the estimation
/// tests (the register-level MPU-6050 simulation adds quantisation and saturation on top).
///
/// Deterministic: the noise comes from a seeded generator, drawn in a fixed order per sample
/// (gyro bias walk x y z, gyro noise x y z, accelerometer noise x y z).
public struct InertialSensorModel: Sendable {
  public struct Settings: Hashable, Sendable {
    /// Gyro bias at the start, rad/s.
    public var gyroBiasRadiansPerSecond: Vector3
    /// Gyro bias random walk K, rad/s/√s (seed 000: 2e-4).
    public var gyroBiasRandomWalk: Double
    /// Gyro white noise, one standard deviation per axis per sample, rad/s (seed 000: 0.002).
    public var gyroNoiseRadiansPerSecond: Double
    /// Gyro scale per axis (1 = exact).
    public var gyroScale: Vector3
    /// Accelerometer bias, m/s².
    public var accelerometerBiasMetersPerSecondSquared: Vector3
    /// Accelerometer white noise per axis per sample, m/s².
    public var accelerometerNoiseMetersPerSecondSquared: Double
    /// Accelerometer scale per axis (1 = exact).
    public var accelerometerScale: Vector3
    /// Gyro bias change per °C away from `referenceTemperatureCelsius`, rad/s/°C (a warming
    /// chip's zero-rate drift, PS §6.1). Default zero.
    public var gyroBiasTemperatureCoefficient: Vector3
    /// The temperature at which `gyroBiasRadiansPerSecond` holds, °C. Default 25.
    public var referenceTemperatureCelsius: Double

    public init(
      gyroBiasRadiansPerSecond: Vector3 = .zero, gyroBiasRandomWalk: Double = 0,
      gyroNoiseRadiansPerSecond: Double = 0, gyroScale: Vector3 = Vector3(1, 1, 1),
      accelerometerBiasMetersPerSecondSquared: Vector3 = .zero,
      accelerometerNoiseMetersPerSecondSquared: Double = 0,
      accelerometerScale: Vector3 = Vector3(1, 1, 1),
      gyroBiasTemperatureCoefficient: Vector3 = .zero, referenceTemperatureCelsius: Double = 25
    ) {
      self.gyroBiasTemperatureCoefficient = gyroBiasTemperatureCoefficient
      self.referenceTemperatureCelsius = referenceTemperatureCelsius
      self.gyroBiasRadiansPerSecond = gyroBiasRadiansPerSecond
      self.gyroBiasRandomWalk = gyroBiasRandomWalk
      self.gyroNoiseRadiansPerSecond = gyroNoiseRadiansPerSecond
      self.gyroScale = gyroScale
      self.accelerometerBiasMetersPerSecondSquared = accelerometerBiasMetersPerSecondSquared
      self.accelerometerNoiseMetersPerSecondSquared = accelerometerNoiseMetersPerSecondSquared
      self.accelerometerScale = accelerometerScale
    }

    /// A perfect sensor.
    public static let perfect = Settings()

    /// Seed 000's gyro: bias 0.003 rad/s on every axis wandering with K = 2e-4 rad/s/√s, white
    /// noise 0.002 rad/s per sample; an MPU-6050-like accelerometer (0.03 m/s² per sample).
    public static let seed000 = Settings(
      gyroBiasRadiansPerSecond: Vector3(0.003, 0.003, 0.003), gyroBiasRandomWalk: 2e-4,
      gyroNoiseRadiansPerSecond: 0.002, accelerometerNoiseMetersPerSecondSquared: 0.03)

    /// Seed 001/003's illustrative sensors: gyro bias (0.002, 0.001, 0.003) rad/s — its part
    /// perpendicular to a level body's gravity is 0.002236 rad/s, the figure seed 001's τ table
    /// implies (0.064° at τ = 0.5 s) — with the gyro noise of seed 000 and an MPU-6050-like
    /// accelerometer.
    public static let seed001 = Settings(
      gyroBiasRadiansPerSecond: Vector3(0.002, 0.001, 0.003), gyroNoiseRadiansPerSecond: 0.002,
      accelerometerNoiseMetersPerSecondSquared: 0.03)
  }

  public let settings: Settings
  private var random: SeededGenerator
  /// The gyro bias's wandering part now, rad/s (the temperature term comes on top).
  public private(set) var gyroBiasRadiansPerSecond: Vector3

  public init(settings: Settings, seed: UInt64) {
    self.settings = settings
    random = SeededGenerator(seed: seed)
    gyroBiasRadiansPerSecond = settings.gyroBiasRadiansPerSecond
  }

  /// The reading for `truth`, `intervalSeconds` after the previous reading (the bias walks by
  /// `K·√interval`).
  public mutating func measure(_ truth: MotionTruth, intervalSeconds: Double) -> InertialReading {
    let walk = settings.gyroBiasRandomWalk * max(intervalSeconds, 0).squareRoot()
    let w = Vector3(random.gaussian(), random.gaussian(), random.gaussian())
    gyroBiasRadiansPerSecond += w * walk
    let gn = Vector3(random.gaussian(), random.gaussian(), random.gaussian())
    let an = Vector3(random.gaussian(), random.gaussian(), random.gaussian())
    let dT = truth.temperatureCelsius - settings.referenceTemperatureCelsius
    let bias =
      settings.gyroBiasTemperatureCoefficient == .zero || !dT.isFinite
      ? gyroBiasRadiansPerSecond
      : gyroBiasRadiansPerSecond + settings.gyroBiasTemperatureCoefficient * dT
    let gyro =
      truth.angularRateRadiansPerSecond.scaled(by: settings.gyroScale) + bias
      + gn * settings.gyroNoiseRadiansPerSecond
    let accel =
      truth.specificForceMetersPerSecondSquared.scaled(by: settings.accelerometerScale)
      + settings.accelerometerBiasMetersPerSecondSquared
      + an * settings.accelerometerNoiseMetersPerSecondSquared
    return InertialReading(
      angularRateRadiansPerSecond: gyro, specificForceMetersPerSecondSquared: accel,
      temperatureCelsius: truth.temperatureCelsius, gyroBiasRadiansPerSecond: bias)
  }
}

/// Sample times with jitter and dropped samples (seed 000: "a busy queue loses them").
public struct SampleSchedule: Hashable, Sendable {
  /// The timestamps, nanoseconds, increasing.
  public var timestampsNanoseconds: [Int64]

  /// Sample `i` is taken at `i · nominalPeriod + jitter · N(0, 1)` for `i` in `0..<count`,
  /// except the `dropped` indices. Times that would not increase are moved just after their
  /// predecessor (with 1 ms of jitter at 10 ms that is a 7σ event).
  public init(
    nominalPeriodSeconds: Double, count: Int, jitterSeconds: Double = 0,
    dropped: Set<Int> = [], seed: UInt64 = 0
  ) {
    var random = SeededGenerator(seed: seed)
    var times: [Int64] = []
    times.reserveCapacity(count)
    for i in 0..<count {
      let jitter = jitterSeconds * random.gaussian()
      guard !dropped.contains(i) else { continue }
      var t = Int64(((Double(i) * nominalPeriodSeconds + jitter) * 1e9).rounded())
      if let last = times.last, t <= last { t = last + 1 }
      times.append(t)
    }
    timestampsNanoseconds = times
  }
}
