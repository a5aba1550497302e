/// The seven raw readings of one sample, as the chip reports them: two's-complement counts.
public struct MPU6050RawSample: Hashable, Sendable {
  /// ACCEL_XOUT … ACCEL_ZOUT (RM §4.17).
  public var accelerometer: SIMD3<Int16>
  /// TEMP_OUT (RM §4.18).
  public var temperature: Int16
  /// GYRO_XOUT … GYRO_ZOUT (RM §4.19).
  public var gyro: SIMD3<Int16>

  public init(accelerometer: SIMD3<Int16>, temperature: Int16, gyro: SIMD3<Int16>) {
    self.accelerometer = accelerometer
    self.temperature = temperature
    self.gyro = gyro
  }

  /// Decodes the 14 bytes of a burst from ACCEL_XOUT_H (or one FIFO record with accelerometer,
  /// temperature and gyroscope enabled): seven big-endian pairs, high byte first. `nil` when
  /// `bytes` holds fewer than 14 bytes (a truncated recording); extra bytes are ignored.
  @inlinable
  public init?(bigEndian bytes: UnsafeRawBufferPointer) {
    guard bytes.count >= 14 else { return nil }
    self.init(validated: bytes)
  }

  /// Decodes 14 bytes the caller has checked are there: seven 16-bit loads, each byte-swapped
  /// (every sample's burst goes through here; two byte loads, a shift and an OR per word
  /// before).
  @usableFromInline @inline(__always)
  init(validated bytes: UnsafeRawBufferPointer) {
    @inline(__always) func word(_ index: Int) -> Int16 {
      Int16(
        bitPattern: UInt16(
          bigEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt16.self)))
    }
    accelerometer = SIMD3(word(0), word(2), word(4))
    temperature = word(6)
    gyro = SIMD3(word(8), word(10), word(12))
  }

  /// Writes the 14 big-endian bytes, in burst order, into `bytes`: what the chip sent, for
  /// recordings. Returns `false`, writing nothing, when `bytes` is shorter than 14.
  @inlinable
  @discardableResult
  public func write(bigEndian bytes: UnsafeMutableRawBufferPointer) -> Bool {
    guard bytes.count >= 14 else { return false }
    @inline(__always) func put(_ value: Int16, _ index: Int) {
      let bits = UInt16(bitPattern: value)
      bytes[index] = UInt8(bits >> 8)
      bytes[index + 1] = UInt8(bits & 0xFF)
    }
    put(accelerometer.x, 0)
    put(accelerometer.y, 2)
    put(accelerometer.z, 4)
    put(temperature, 6)
    put(gyro.x, 8)
    put(gyro.y, 10)
    put(gyro.z, 12)
    return true
  }
}

/// Which sensors read at or beyond 98 % of their full-scale range in a sample: their true value
/// may be larger than the reading.
public struct MPU6050Clipping: OptionSet, Hashable, Sendable {
  public var rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }
  public static let accelerometer = MPU6050Clipping(rawValue: 1 << 0)
  public static let gyro = MPU6050Clipping(rawValue: 1 << 1)
}

/// The factors that turn counts into SI units for one configuration and part.
public struct MPU6050Scale: Hashable, Sendable {
  public var gyroFullScale: GyroFullScale {
    didSet { radiansPerSecondPerCount = gyroFullScale.radiansPerSecondPerCount }
  }
  public var accelerometerFullScale: AccelerometerFullScale {
    didSet {
      metersPerSecondSquaredPerCount = accelerometerFullScale.metersPerSecondSquaredPerCount
    }
  }
  public var temperature: TemperatureConversion
  /// `gyroFullScale.radiansPerSecondPerCount` and
  /// `accelerometerFullScale.metersPerSecondSquaredPerCount`, kept with the ranges (the same
  /// values): worked out from the ranges, they were two divisions in every sample's conversion.
  public private(set) var radiansPerSecondPerCount: Double
  public private(set) var metersPerSecondSquaredPerCount: Double

  public init(
    gyroFullScale: GyroFullScale, accelerometerFullScale: AccelerometerFullScale,
    temperature: TemperatureConversion = .mpu6050
  ) {
    self.gyroFullScale = gyroFullScale
    self.accelerometerFullScale = accelerometerFullScale
    self.temperature = temperature
    radiansPerSecondPerCount = gyroFullScale.radiansPerSecondPerCount
    metersPerSecondSquaredPerCount = accelerometerFullScale.metersPerSecondSquaredPerCount
  }
}

/// One sample in SI units, sensor axes.
public struct MPU6050Sample: Hashable, Sendable {
  /// Specific force (acceleration minus gravity, what an accelerometer measures), m/s². At rest
  /// and level, z up: (0, 0, +9.81).
  public var specificForceMetersPerSecondSquared: SIMD3<Double>
  /// Angular rate, rad/s (right-hand rule about each sensor axis).
  public var angularRateRadiansPerSecond: SIMD3<Double>
  /// Die temperature, °C.
  public var temperatureCelsius: Double
  /// Sensors at or beyond 98 % of their range.
  public var clipping: MPU6050Clipping
  /// The counts this sample was converted from.
  public var raw: MPU6050RawSample

  public init(
    specificForceMetersPerSecondSquared: SIMD3<Double>, angularRateRadiansPerSecond: SIMD3<Double>,
    temperatureCelsius: Double, clipping: MPU6050Clipping, raw: MPU6050RawSample
  ) {
    self.specificForceMetersPerSecondSquared = specificForceMetersPerSecondSquared
    self.angularRateRadiansPerSecond = angularRateRadiansPerSecond
    self.temperatureCelsius = temperatureCelsius
    self.clipping = clipping
    self.raw = raw
  }
}

/// Counts to SI units: the one place the sample path converts.
public enum MPU6050Conversion {
  /// |counts| at or above which a reading is clipping: 98 % of the 32768-count half range,
  /// rounded up (⌈0.98 × 32768⌉ = 32113). A reading this close to full scale may be a larger
  /// value cut off by the range.
  public static let clippingThresholdCounts: Int32 = (98 * 32768 + 99) / 100

  /// Converts one burst (or one 14-byte FIFO record) to SI units: big-endian int16 counts →
  /// m/s² (counts × g / LSB-per-g, PS §6.2), rad/s (counts / LSB-per-°/s × π/180, PS §6.1),
  /// °C (counts / 340 + 36.53 on an MPU-6050, RM §4.18), and flags each sensor whose largest
  /// |count| is ≥ 98 % of full scale. Pure, allocation-free. `nil` when `bytes` holds fewer
  /// than 14 bytes.
  @inlinable
  public static func convert(burst bytes: UnsafeRawBufferPointer, scale: MPU6050Scale)
    -> MPU6050Sample?
  {
    guard let raw = MPU6050RawSample(bigEndian: bytes) else { return nil }
    return convert(raw, scale: scale)
  }

  /// Converts raw counts to SI units (the second half of `convert(burst:scale:)`).
  @inlinable
  public static func convert(_ raw: MPU6050RawSample, scale: MPU6050Scale) -> MPU6050Sample {
    let accelFactor = scale.metersPerSecondSquaredPerCount
    let gyroFactor = scale.radiansPerSecondPerCount
    var clipping: MPU6050Clipping = []
    if isClipping(raw.accelerometer) { clipping.insert(.accelerometer) }
    if isClipping(raw.gyro) { clipping.insert(.gyro) }
    return MPU6050Sample(
      specificForceMetersPerSecondSquared: SIMD3<Double>(raw.accelerometer) * accelFactor,
      angularRateRadiansPerSecond: SIMD3<Double>(raw.gyro) * gyroFactor,
      temperatureCelsius: scale.temperature.celsius(counts: raw.temperature),
      clipping: clipping, raw: raw)
  }

  /// Whether any axis is at or beyond 98 % of full scale, in either direction.
  @inlinable
  public static func isClipping(_ counts: SIMD3<Int16>) -> Bool {
    let t = clippingThresholdCounts
    return abs(Int32(counts.x)) >= t || abs(Int32(counts.y)) >= t || abs(Int32(counts.z)) >= t
  }
}
