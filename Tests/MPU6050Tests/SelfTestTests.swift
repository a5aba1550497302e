import MPU6050
import Testing

@Suite("Self-test arithmetic (RM §4.1, PS §6.1/6.2)")
struct SelfTestTests {
  @Test("gyroscope factory trim: 25 × 131 × 1.046^(code − 1), negative for Y, 0 for code 0")
  func gyroTrim() {
    #expect(MPU6050SelfTest.gyroFactoryTrimCounts(code: 0, axis: .x) == 0)
    #expect(MPU6050SelfTest.gyroFactoryTrimCounts(code: 1, axis: .x) == 3275)
    #expect(MPU6050SelfTest.gyroFactoryTrimCounts(code: 1, axis: .y) == -3275)
    #expect(
      abs(MPU6050SelfTest.gyroFactoryTrimCounts(code: 15, axis: .z) - 6146.882164126534) < 1e-6)
    #expect(
      abs(MPU6050SelfTest.gyroFactoryTrimCounts(code: 31, axis: .x) - 12622.97843486536) < 1e-6)
  }

  @Test("accelerometer factory trim: 4096 × 0.34 × (0.92/0.34)^((code − 1)/30), 0 for code 0")
  func accelTrim() {
    #expect(MPU6050SelfTest.accelerometerFactoryTrimCounts(code: 0) == 0)
    #expect(abs(MPU6050SelfTest.accelerometerFactoryTrimCounts(code: 1) - 1392.64) < 1e-9)
    // Code 31: the exponent is 1, so 4096 × 0.92.
    #expect(abs(MPU6050SelfTest.accelerometerFactoryTrimCounts(code: 31) - 3768.32) < 1e-9)
    #expect(
      abs(MPU6050SelfTest.accelerometerFactoryTrimCounts(code: 16) - 2290.832417441311) < 1e-9)
    #expect(
      abs(MPU6050SelfTest.accelerometerFactoryTrimCounts(code: 14) - 2143.7430338687063) < 1e-9)
  }

  @Test("trim codes from SELF_TEST_X/Y/Z (XA_TEST[4:2] 7:5, XG_TEST 4:0) and SELF_TEST_A")
  func codes() {
    // X: accel 0b10110 = 22, gyro 0b01101 = 13. Y: accel 0b01001 = 9, gyro 31. Z: accel 0b11111 = 31, gyro 1.
    // SELF_TEST_A = 0b00_10_01_11: XA[1:0] = 0b10, YA[1:0] = 0b01, ZA[1:0] = 0b11.
    let codes = MPU6050SelfTest.TrimCodes(
      registers: 0b101_01101, 0b010_11111, 0b111_00001, 0b00_10_01_11)
    #expect(codes.gyro == SIMD3(13, 31, 1))
    #expect(codes.accelerometer == SIMD3(22, 9, 31))
  }

  @Test("the ±14 % verdict, per axis, with the deviation")
  func verdict() {
    let codes = MPU6050SelfTest.TrimCodes(gyro: SIMD3(1, 1, 1), accelerometer: SIMD3(31, 31, 0))
    // Trims: gyro 3275, −3275, 3275; accel 3768.32, 3768.32, none.
    let report = MPU6050SelfTest.evaluate(
      codes: codes, gyroResponseCounts: SIMD3(3275 * 1.13, -3275 * 0.5, 3275 * 1.15),
      accelerometerResponseCounts: SIMD3(3768.32 * 0.87, 3768.32, 1000))
    let results = report.results
    #expect(results.count == 6)
    #expect(results[0].passed)
    #expect(abs(results[0].deviation! - 0.13) < 1e-12)
    #expect(!results[1].passed)
    #expect(abs(results[1].deviation! - -0.5) < 1e-12)
    #expect(!results[2].passed)
    #expect(results[3].passed)
    #expect(results[4].passed)
    #expect(results[5].deviation == nil)
    #expect(!results[5].passed)
    #expect(!report.passed)
    #expect(
      report.failures.map { "\($0.sensor.rawValue) \($0.axis.rawValue)" } == [
        "gyro y", "gyro z", "accelerometer z",
      ])
    #expect(results[1].description.contains("FAIL, -50 %"))
  }
}
