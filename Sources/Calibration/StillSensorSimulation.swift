import Geometry
import Randomness

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A still IMU with known noise, bias and temperature behaviour, sampled into an
/// `InertialRecording`: the truth the calibration tests recover and the benchmarks time.
///
/// Per axis and per sample: reading = truth + bias(T) + wandering bias + white noise, where
/// the wandering bias is a random walk growing by K·√T₀ per sample (rate random walk K) and
/// bias(T) = bias + c₁(T − T_ref) + c₂(T − T_ref)². The temperature warms exponentially from
/// `startTemperatureCelsius` towards `finalTemperatureCelsius` with `warmUpTimeConstantSeconds`.
public struct StillSensorSimulation: Sendable {
  public var samplePeriodSeconds = 0.01
  /// White noise, standard deviation per sample: rad/s (gyro), m/s² (accel). N = σ·√T₀.
  public var gyroWhiteNoise = Vector3(0.002, 0.002, 0.002)
  public var accelWhiteNoise = Vector3(0.03, 0.03, 0.03)
  /// Rate random walk K: rad/s/√s (gyro), m/s²/√s (accel).
  public var gyroRateRandomWalk = Vector3(2e-5, 2e-5, 2e-5)
  public var accelRateRandomWalk = Vector3.zero
  /// Constant bias at the reference temperature, rad/s.
  public var gyroBias = Vector3.zero
  /// Bias temperature coefficients: rad/s/°C and rad/s/°C².
  public var gyroBiasPerDegree = Vector3.zero
  public var gyroBiasPerDegreeSquared = Vector3.zero
  public var referenceTemperatureCelsius = 25.0
  /// What a perfect accelerometer reads at rest: the specific force, m/s² (z up by default).
  public var specificForce = Vector3(0, 0, standardGravity)
  public var startTemperatureCelsius = 25.0
  public var finalTemperatureCelsius = 25.0
  public var warmUpTimeConstantSeconds = 600.0
  /// Whether the recording carries a temperature column.
  public var recordsTemperature = true

  public init() {}

  /// Seed 000's still gyro: white noise σ = 0.002 rad/s per sample at 100 Hz (N = 2.0e-4
  /// rad/√s) and a rate random walk K = 2e-5 rad/s/√s on every gyro axis; the accelerometer
  /// keeps the defaults (σ = 0.03 m/s², gravity on z).
  public static var seed000: StillSensorSimulation {
    var simulation = StillSensorSimulation()
    simulation.samplePeriodSeconds = 0.01
    simulation.gyroWhiteNoise = Vector3(0.002, 0.002, 0.002)
    simulation.gyroRateRandomWalk = Vector3(2e-5, 2e-5, 2e-5)
    return simulation
  }

  /// The input of the `allan_2h_ms` benchmark (issue 9): 2 hours at 100 Hz of seed 000's
  /// sensor, six axes. Time `AllanAnalysis.analyze(recording)` on it.
  public static func twoHourBenchmarkRecording(seed: UInt64 = 13) -> InertialRecording {
    seed000.record(sampleCount: 720_000, seed: seed, source: "seed 000, 2 h at 100 Hz")
  }

  /// The temperature at `seconds`, °C.
  public func temperature(atSeconds seconds: Double) -> Double {
    finalTemperatureCelsius + (startTemperatureCelsius - finalTemperatureCelsius)
      * exp(-seconds / warmUpTimeConstantSeconds)
  }

  /// The deterministic gyro bias at `temperature`, rad/s.
  public func gyroBias(atTemperature temperature: Double) -> Vector3 {
    let dT = temperature - referenceTemperatureCelsius
    return gyroBias + gyroBiasPerDegree * dT + gyroBiasPerDegreeSquared * (dT * dT)
  }

  /// `sampleCount` samples from `seed`.
  public func record(sampleCount: Int, seed: UInt64, source: String = "simulated")
    -> InertialRecording
  {
    var random = SeededGenerator(seed: seed)
    var time = [Double](repeating: 0, count: sampleCount)
    var channels = [[Double]](repeating: [Double](repeating: 0, count: sampleCount), count: 6)
    var temperatures = [Double](repeating: 0, count: sampleCount)
    let white = [
      gyroWhiteNoise.x, gyroWhiteNoise.y, gyroWhiteNoise.z, accelWhiteNoise.x, accelWhiteNoise.y,
      accelWhiteNoise.z,
    ]
    let rootPeriod = samplePeriodSeconds.squareRoot()
    let walkStep = [
      gyroRateRandomWalk.x, gyroRateRandomWalk.y, gyroRateRandomWalk.z, accelRateRandomWalk.x,
      accelRateRandomWalk.y, accelRateRandomWalk.z,
    ].map { $0 * rootPeriod }
    var walk = [Double](repeating: 0, count: 6)
    for i in 0..<sampleCount {
      let t = Double(i) * samplePeriodSeconds
      let temperature = temperature(atSeconds: t)
      let bias = gyroBias(atTemperature: temperature)
      let truth = [bias.x, bias.y, bias.z, specificForce.x, specificForce.y, specificForce.z]
      time[i] = t
      temperatures[i] = temperature
      for c in 0..<6 {
        walk[c] += walkStep[c] * random.gaussian()
        channels[c][i] = truth[c] + walk[c] + white[c] * random.gaussian()
      }
    }
    return InertialRecording(
      source: source, timeSeconds: time, channels: channels,
      temperatureCelsius: recordsTemperature ? temperatures : nil)
  }
}
