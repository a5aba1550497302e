import MPU6050
import Testing

@Suite("Conversion to SI units")
struct ConversionTests {
  /// 9.80665 m/s² per g and π/180 rad per degree, restated.
  let g = 9.80665
  let degree = Double.pi / 180

  func convert(_ bytes: [UInt8], _ scale: MPU6050Scale) -> MPU6050Sample {
    bytes.withUnsafeBytes { MPU6050Conversion.convert(burst: $0, scale: scale) }!
  }

  let scale = MPU6050Scale(
    gyroFullScale: .degreesPerSecond250, accelerometerFullScale: .standardGravities2)

  @Test("big-endian pairs, high byte first, in burst order")
  func byteOrder() {
    let sample = convert(
      [0x40, 0x00, 0xC0, 0x00, 0x00, 0x01, 0xFD, 0xF7, 0x00, 0x83, 0xFF, 0x7D, 0x7F, 0xFF], scale)
    #expect(sample.raw.accelerometer == SIMD3(16384, -16384, 1))
    #expect(sample.raw.temperature == -521)
    #expect(sample.raw.gyro == SIMD3(131, -131, 32767))
    // 16384 counts = 1 g at ±2 g; 131 counts = 1 °/s at ±250 °/s.
    #expect(abs(sample.specificForceMetersPerSecondSquared.x - g) < 1e-12)
    #expect(abs(sample.specificForceMetersPerSecondSquared.y + g) < 1e-12)
    #expect(abs(sample.angularRateRadiansPerSecond.x - degree) < 1e-15)
    #expect(abs(sample.angularRateRadiansPerSecond.y + degree) < 1e-15)
    // −521 counts is 35 °C (PS §6.3): −521 / 340 + 36.53.
    #expect(abs(sample.temperatureCelsius - (-521.0 / 340 + 36.53)) < 1e-12)
    #expect(abs(sample.temperatureCelsius - 35) < 0.01)
  }

  @Test("−32768 and 32767 at every range")
  func extremes() {
    let gyro: [(GyroFullScale, Double)] = [
      (.degreesPerSecond250, 131), (.degreesPerSecond500, 65.5), (.degreesPerSecond1000, 32.8),
      (.degreesPerSecond2000, 16.4),
    ]
    let accel: [(AccelerometerFullScale, Double)] = [
      (.standardGravities2, 16384), (.standardGravities4, 8192), (.standardGravities8, 4096),
      (.standardGravities16, 2048),
    ]
    for ((gyroRange, gyroLSB), (accelRange, accelLSB)) in zip(gyro, accel) {
      let scale = MPU6050Scale(gyroFullScale: gyroRange, accelerometerFullScale: accelRange)
      let low = convert(
        [0x80, 0x00, 0x80, 0x00, 0x80, 0x00, 0x80, 0x00, 0x80, 0x00, 0x80, 0x00, 0x80, 0x00], scale)
      let high = convert(
        [0x7F, 0xFF, 0x7F, 0xFF, 0x7F, 0xFF, 0x7F, 0xFF, 0x7F, 0xFF, 0x7F, 0xFF, 0x7F, 0xFF], scale)
      #expect(low.raw.gyro.x == -32768)
      #expect(high.raw.gyro.x == 32767)
      let lowRate = -32768 / gyroLSB * degree
      let highRate = 32767 / gyroLSB * degree
      #expect(abs(low.angularRateRadiansPerSecond.z - lowRate) < 1e-12)
      #expect(abs(high.angularRateRadiansPerSecond.z - highRate) < 1e-12)
      #expect(abs(low.specificForceMetersPerSecondSquared.z - -32768 / accelLSB * g) < 1e-9)
      #expect(abs(high.specificForceMetersPerSecondSquared.z - 32767 / accelLSB * g) < 1e-9)
      #expect(abs(low.temperatureCelsius - (-32768.0 / 340 + 36.53)) < 1e-9)
      #expect(abs(high.temperatureCelsius - (32767.0 / 340 + 36.53)) < 1e-9)
      #expect(low.clipping == [.accelerometer, .gyro])
      #expect(high.clipping == [.accelerometer, .gyro])
    }
  }

  func sample(accelX: Int16 = 0, gyroZ: Int16 = 0) -> MPU6050Sample {
    MPU6050Conversion.convert(
      MPU6050RawSample(
        accelerometer: SIMD3(accelX, 0, 0), temperature: 0, gyro: SIMD3(0, 0, gyroZ)),
      scale: scale)
  }

  @Test("clipping is flagged from 98 % of full scale (|counts| ≥ 32113), per sensor")
  func clipping() {
    // 0.98 × 32768 = 32112.64: 32112 is below, 32113 at or above.
    #expect(MPU6050Conversion.clippingThresholdCounts == 32113)
    #expect(sample(accelX: 32112).clipping == [])
    #expect(sample(accelX: 32113).clipping == [.accelerometer])
    #expect(sample(accelX: -32112).clipping == [])
    #expect(sample(accelX: -32113).clipping == [.accelerometer])
    #expect(sample(gyroZ: 32113).clipping == [.gyro])
    #expect(sample(gyroZ: -32768).clipping == [.gyro])
    #expect(sample(accelX: 32767, gyroZ: -32768).clipping == [.accelerometer, .gyro])
  }

  @Test("raw samples round-trip through their 14 bytes")
  func rawRoundTrip() {
    let raw = MPU6050RawSample(
      accelerometer: SIMD3(-32768, 32767, 1), temperature: -1, gyro: SIMD3(256, -256, 0))
    var bytes = [UInt8](repeating: 0, count: 14)
    #expect(bytes.withUnsafeMutableBytes { raw.write(bigEndian: $0) })
    #expect(
      bytes == [0x80, 0x00, 0x7F, 0xFF, 0x00, 0x01, 0xFF, 0xFF, 0x01, 0x00, 0xFF, 0x00, 0x00, 0x00])
    #expect(bytes.withUnsafeBytes { MPU6050RawSample(bigEndian: $0) } == raw)
  }

  @Test("a truncated burst decodes to nothing rather than trapping")
  func truncated() {
    let short: [UInt8] = Array(repeating: 0, count: 13)
    #expect(short.withUnsafeBytes { MPU6050Conversion.convert(burst: $0, scale: scale) } == nil)
    var output = [UInt8](repeating: 0xAA, count: 13)
    let raw = MPU6050RawSample(accelerometer: .zero, temperature: 0, gyro: .zero)
    #expect(!output.withUnsafeMutableBytes { raw.write(bigEndian: $0) })
    #expect(output.allSatisfy { $0 == 0xAA })
  }

  @Test("temperature constants per part family")
  func temperatureFamilies() {
    #expect(TemperatureConversion.mpu6050.celsius(counts: 0) == 36.53)
    #expect(abs(TemperatureConversion.mpu6050.celsius(counts: 340) - 37.53) < 1e-12)
    // MPU-6500: 333.87 LSB/°C, 21 °C at 0; ICM-20608 family: 326.8 LSB/°C, 25 °C at 0.
    #expect(TemperatureConversion.mpu6500.celsius(counts: 0) == 21)
    #expect(abs(TemperatureConversion.mpu6500.celsius(counts: 3339) - (21 + 3339 / 333.87)) < 1e-12)
    #expect(TemperatureConversion.icm20608.celsius(counts: 0) == 25)
    #expect(abs(TemperatureConversion.icm20608.celsius(counts: 3268) - 35) < 1e-12)
  }
}
