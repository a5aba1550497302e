import Geometry
import MotionScenarios
import SimulatedHardware

/// One simulated MPU-6050 as it left the factory: its errors, noise, oscillator and self-test
/// trim. Every error is in SI units and applies before quantisation, as in the silicon.
///
/// The limits `typical(seed:)` draws from are the product specification's (PS-MPU-6000A-00
/// rev 3.4): §6.1 gyroscope — initial ZRO tolerance ±20 °/s, ZRO variation ±20 °/s over
/// −40…+85 °C, sensitivity tolerance ±3 %, its variation ±2 % over temperature, cross-axis ±2 %,
/// noise 0.005 °/s/√Hz; §6.2 accelerometer — zero-g tolerance ±50 mg (X, Y) and ±80 mg (Z),
/// its change ±35 mg (X, Y) and ±60 mg (Z) over 0…70 °C, sensitivity tolerance ±3 % and
/// ±0.02 %/°C, cross-axis ±2 %, noise 400 µg/√Hz; §7.15 — the clock varies ±1 % over
/// temperature (DESIGN.md: "only accurate to a few percent"); self-test response within ±14 % of
/// factory trim (§6.1, §6.2).
public struct SimulatedMPU6050Unit: Hashable, Sendable {
  /// Gyroscope zero-rate output at 25 °C, rad/s.
  public var gyroOffsetRadiansPerSecond: Vector3
  /// Change of the zero-rate output per °C away from 25 °C, rad/s/°C.
  public var gyroOffsetTemperatureCoefficient: Vector3
  /// Sensitivity error per axis, a fraction (0.01 reads 1 % high).
  public var gyroScaleError: Vector3
  /// Change of sensitivity per °C away from 25 °C, a fraction per °C.
  public var gyroScaleTemperatureCoefficient: Double
  /// Cross-axis sensitivity: reading = (I + this) × truth; zero diagonal.
  public var gyroCrossAxis: Matrix3
  /// Rate noise density, rad/s/√Hz (PS §6.1: 0.005 °/s/√Hz).
  public var gyroNoiseDensity: Double

  /// Accelerometer zero-g output at 25 °C, m/s².
  public var accelerometerOffsetMetersPerSecondSquared: Vector3
  /// Change of the zero-g output per °C away from 25 °C, m/s²/°C.
  public var accelerometerOffsetTemperatureCoefficient: Vector3
  /// Sensitivity error per axis, a fraction.
  public var accelerometerScaleError: Vector3
  /// Change of sensitivity per °C away from 25 °C, a fraction per °C.
  public var accelerometerScaleTemperatureCoefficient: Double
  /// Cross-axis sensitivity, zero diagonal.
  public var accelerometerCrossAxis: Matrix3
  /// Noise density, m/s²/√Hz (PS §6.2: 400 µg/√Hz).
  public var accelerometerNoiseDensity: Double

  /// The temperature sensor's error, °C (added to the die temperature).
  public var temperatureOffsetCelsius: Double
  /// The temperature reading's noise, °C per sample (standard deviation).
  public var temperatureNoiseCelsius: Double

  /// How far the oscillator is off nominal, a fraction: +0.02 runs 2 % fast (a 100 Hz
  /// configuration samples at 102 Hz).
  public var oscillatorError: Double

  /// The factory self-test trim codes (5 bits each) stored in 0x0D–0x10.
  public var gyroTrimCodes: SIMD3<UInt8>
  public var accelerometerTrimCodes: SIMD3<UInt8>
  /// The self-test response this unit really produces, relative to its factory trim: 1 is
  /// exactly the trim; a healthy unit is within 0.86…1.14, a damaged axis outside.
  public var gyroSelfTestResponseRatio: Vector3
  public var accelerometerSelfTestResponseRatio: Vector3

  /// The seed of the unit's noise.
  public var noiseSeed: UInt64

  /// A wandering part of the gyroscope's zero-rate output, added to the offset and its
  /// temperature dependence: seed 000's bias random walk, for hardware-in-the-loop runs whose
  /// scenario asks for it (`ScenarioSensorConditions`). `nil` (the default) for none; the walk's
  /// time is the motion's (seconds since the chip's `motionStart`). Not set by `typical(seed:)`,
  /// so existing units sample exactly as before.
  public var gyroOffsetRandomWalk: BiasRandomWalk? = nil

  /// The gyroscope's true zero-rate output at `seconds` of the motion when the motion reports a
  /// die temperature of `motionTemperatureCelsius`, rad/s, sensor axes: the offset, its
  /// temperature dependence (the chip adds `temperatureOffsetCelsius` to the motion's
  /// temperature, as `SimulatedMPU6050` does) and the wander. This is the bias an estimator
  /// should find (before the chip's quantisation and noise), for a HIL report to compare with.
  public func gyroZeroRateOutput(atMotionSeconds seconds: Double, motionTemperatureCelsius: Double)
    -> Vector3
  {
    let dT = motionTemperatureCelsius + temperatureOffsetCelsius - 25
    var output = gyroOffsetRadiansPerSecond + gyroOffsetTemperatureCoefficient * dT
    if let walk = gyroOffsetRandomWalk { output += walk.value(atSeconds: seconds) }
    return output
  }

  public init(
    gyroOffsetRadiansPerSecond: Vector3 = .zero,
    gyroOffsetTemperatureCoefficient: Vector3 = .zero, gyroScaleError: Vector3 = .zero,
    gyroScaleTemperatureCoefficient: Double = 0,
    gyroCrossAxis: Matrix3 = Matrix3(rows: .zero, .zero, .zero),
    gyroNoiseDensity: Double = 0,
    accelerometerOffsetMetersPerSecondSquared: Vector3 = .zero,
    accelerometerOffsetTemperatureCoefficient: Vector3 = .zero,
    accelerometerScaleError: Vector3 = .zero, accelerometerScaleTemperatureCoefficient: Double = 0,
    accelerometerCrossAxis: Matrix3 = Matrix3(rows: .zero, .zero, .zero),
    accelerometerNoiseDensity: Double = 0,
    temperatureOffsetCelsius: Double = 0, temperatureNoiseCelsius: Double = 0,
    oscillatorError: Double = 0, gyroTrimCodes: SIMD3<UInt8> = SIMD3(16, 17, 15),
    accelerometerTrimCodes: SIMD3<UInt8> = SIMD3(14, 15, 13),
    gyroSelfTestResponseRatio: Vector3 = Vector3(1, 1, 1),
    accelerometerSelfTestResponseRatio: Vector3 = Vector3(1, 1, 1), noiseSeed: UInt64 = 0
  ) {
    self.gyroOffsetRadiansPerSecond = gyroOffsetRadiansPerSecond
    self.gyroOffsetTemperatureCoefficient = gyroOffsetTemperatureCoefficient
    self.gyroScaleError = gyroScaleError
    self.gyroScaleTemperatureCoefficient = gyroScaleTemperatureCoefficient
    self.gyroCrossAxis = gyroCrossAxis
    self.gyroNoiseDensity = gyroNoiseDensity
    self.accelerometerOffsetMetersPerSecondSquared = accelerometerOffsetMetersPerSecondSquared
    self.accelerometerOffsetTemperatureCoefficient = accelerometerOffsetTemperatureCoefficient
    self.accelerometerScaleError = accelerometerScaleError
    self.accelerometerScaleTemperatureCoefficient = accelerometerScaleTemperatureCoefficient
    self.accelerometerCrossAxis = accelerometerCrossAxis
    self.accelerometerNoiseDensity = accelerometerNoiseDensity
    self.temperatureOffsetCelsius = temperatureOffsetCelsius
    self.temperatureNoiseCelsius = temperatureNoiseCelsius
    self.oscillatorError = oscillatorError
    self.gyroTrimCodes = gyroTrimCodes
    self.accelerometerTrimCodes = accelerometerTrimCodes
    self.gyroSelfTestResponseRatio = gyroSelfTestResponseRatio
    self.accelerometerSelfTestResponseRatio = accelerometerSelfTestResponseRatio
    self.noiseSeed = noiseSeed
  }

  /// A perfect unit: no offsets, scale or cross-axis errors, no noise, an exact oscillator,
  /// self-test responses exactly at trim. Readings are the truth, filtered and quantised — so
  /// at rest every burst is byte-identical, which the driver takes for stuck data (a real chip's
  /// noise never repeats 14 bytes) and drops as a repeated read: use `noisy(seed:)` for motions
  /// with rests (temperature noise alone repeats a burst about one sample in twelve).
  public static let ideal = SimulatedMPU6050Unit()

  /// Radians per second in one degree per second.
  static let radiansPerDegree = Double.pi / 180
  /// Metres per second squared in one milli-g.
  static let metersPerSecondSquaredPerMilliG = 9.806_65e-3

  /// The datasheet's typical noise, no other error: for tests that need realistic noise only.
  public static func noisy(seed: UInt64) -> SimulatedMPU6050Unit {
    var unit = SimulatedMPU6050Unit.ideal
    unit.gyroNoiseDensity = 0.005 * radiansPerDegree
    unit.accelerometerNoiseDensity = 400e-6 * 9.806_65
    unit.temperatureNoiseCelsius = 0.01
    unit.noiseSeed = seed
    return unit
  }

  /// A unit drawn at random within the datasheet's limits (each error gaussian with three
  /// standard deviations at the limit, clipped to it), with noise at the datasheet densities and
  /// an oscillator within ±2 %. The same seed gives the same unit.
  public static func typical(seed: UInt64) -> SimulatedMPU6050Unit {
    var random = SeededGenerator(seed: seed, stream: 100)
    func draw(_ limit: Double) -> Double {
      let value = random.gaussian() * limit / 3
      return max(-limit, min(limit, value))
    }
    func vector(_ limits: Vector3) -> Vector3 {
      Vector3(draw(limits.x), draw(limits.y), draw(limits.z))
    }
    func crossAxis(_ limit: Double) -> Matrix3 {
      Matrix3(
        rows: Vector3(0, draw(limit), draw(limit)), Vector3(draw(limit), 0, draw(limit)),
        Vector3(draw(limit), draw(limit), 0))
    }
    func code() -> UInt8 { UInt8(8 + Int(random.nextUniform() * 16)) }
    let degree = radiansPerDegree
    let milliG = metersPerSecondSquaredPerMilliG
    var unit = SimulatedMPU6050Unit()
    unit.gyroOffsetRadiansPerSecond = vector(Vector3(20, 20, 20) * degree)
    // ±20 °/s over −40…+85 °C: at most 20/65 °/s per °C away from 25 °C.
    unit.gyroOffsetTemperatureCoefficient = vector(Vector3(1, 1, 1) * (20.0 / 65.0 * degree))
    unit.gyroScaleError = vector(Vector3(0.03, 0.03, 0.03))
    unit.gyroScaleTemperatureCoefficient = draw(0.02 / 65)
    unit.gyroCrossAxis = crossAxis(0.02)
    unit.gyroNoiseDensity = 0.005 * degree
    unit.accelerometerOffsetMetersPerSecondSquared = vector(Vector3(50, 50, 80) * milliG)
    // ±35 mg (X, Y) and ±60 mg (Z) over 0…70 °C: per °C away from 25 °C, over 45 °C.
    unit.accelerometerOffsetTemperatureCoefficient = vector(Vector3(35, 35, 60) * (milliG / 45))
    unit.accelerometerScaleError = vector(Vector3(0.03, 0.03, 0.03))
    unit.accelerometerScaleTemperatureCoefficient = draw(0.0002)
    unit.accelerometerCrossAxis = crossAxis(0.02)
    unit.accelerometerNoiseDensity = 400e-6 * 9.806_65
    unit.temperatureOffsetCelsius = draw(1)
    unit.temperatureNoiseCelsius = 0.01
    unit.oscillatorError = draw(0.02)
    unit.gyroTrimCodes = SIMD3(code(), code(), code())
    unit.accelerometerTrimCodes = SIMD3(code(), code(), code())
    unit.gyroSelfTestResponseRatio = Vector3(1, 1, 1) + vector(Vector3(0.06, 0.06, 0.06))
    unit.accelerometerSelfTestResponseRatio = Vector3(1, 1, 1) + vector(Vector3(0.06, 0.06, 0.06))
    unit.noiseSeed = seed
    return unit
  }
}
