/// The MPU-6050 self-test: its factory trim, the response measured against it, and the verdict.
///
/// RM §4.1 (self-test registers 0x0D–0x10) and PS §6.1/§6.2 ("Self-Test Response, relative:
/// change from factory trim −14 … +14 %"). With a sensor's self-test bits set, an actuator
/// deflects its proof mass; the *self-test response* is the output with self-test enabled minus
/// the output without. The chip stores, per axis, a 5-bit code from which the factory-measured
/// response (the "factory trim", FT) follows:
///
/// - gyroscope, measured at ±250 °/s: FT = 25 × 131 × 1.046^(code − 1) counts (negated for Y),
///   0 when the code is 0;
/// - accelerometer, measured at ±8 g: FT = 4096 × 0.34 × (0.92 / 0.34)^((code − 1) / (2⁵ − 2))
///   counts, 0 when the code is 0.
///
/// An axis passes when (response − FT) / FT is within ±14 %.
public enum MPU6050SelfTest {
  /// ±14 %: the largest change from factory trim that passes (PS §6.1, §6.2).
  public static let tolerance = 0.14

  /// The gyroscope range the trim was measured at and the test must use: ±250 °/s (RM §4.1).
  public static let gyroFullScale = GyroFullScale.degreesPerSecond250
  /// The accelerometer range the trim was measured at and the test must use: ±8 g (RM §4.1).
  public static let accelerometerFullScale = AccelerometerFullScale.standardGravities8

  /// The five-bit trim codes, decoded from SELF_TEST_X/Y/Z/A (0x0D…0x10, RM §4.1).
  public struct TrimCodes: Hashable, Sendable {
    /// XG_TEST, YG_TEST, ZG_TEST: bits 4:0 of SELF_TEST_X/Y/Z.
    public var gyro: SIMD3<UInt8>
    /// XA_TEST, YA_TEST, ZA_TEST: bits 7:5 of SELF_TEST_X/Y/Z (code bits 4:2) joined with
    /// SELF_TEST_A bits 5:4, 3:2, 1:0 (code bits 1:0).
    public var accelerometer: SIMD3<UInt8>

    public init(gyro: SIMD3<UInt8>, accelerometer: SIMD3<UInt8>) {
      self.gyro = gyro
      self.accelerometer = accelerometer
    }

    /// Decodes the four registers 0x0D, 0x0E, 0x0F, 0x10, read in that order.
    public init(registers x: UInt8, _ y: UInt8, _ z: UInt8, _ a: UInt8) {
      let (x, y, z) = (
        SelfTestAxisRegister(bits: x), SelfTestAxisRegister(bits: y), SelfTestAxisRegister(bits: z)
      )
      gyro = SIMD3(x.gyroTrimCode, y.gyroTrimCode, z.gyroTrimCode)
      let high = SIMD3(
        x.accelerometerTrimCodeHigh, y.accelerometerTrimCodeHigh, z.accelerometerTrimCodeHigh)
      accelerometer = high &<< 2 | SelfTestAccelerometerRegister(bits: a).accelerometerTrimCodeLow
    }
  }

  /// The gyroscope factory trim for `code` on `axis`, counts at ±250 °/s.
  public static func gyroFactoryTrimCounts(code: UInt8, axis: SelfTestAxis) -> Double {
    guard code != 0 else { return 0 }
    var value = 25.0 * 131.0
    for _ in 1..<Int(code) { value *= 1.046 }
    return axis == .y ? -value : value
  }

  /// The accelerometer factory trim for `code`, counts at ±8 g.
  public static func accelerometerFactoryTrimCounts(code: UInt8) -> Double {
    guard code != 0 else { return 0 }
    return 4096 * 0.34 * power(0.92 / 0.34, (Double(code) - 1) / 30)
  }

  /// Judges measured responses (counts at the self-test ranges, output with self-test on minus
  /// output with it off, averaged) against the trim codes.
  public static func evaluate(
    codes: TrimCodes, gyroResponseCounts: SIMD3<Double>,
    accelerometerResponseCounts: SIMD3<Double>
  ) -> MPU6050SelfTestReport {
    var results: [MPU6050SelfTestReport.AxisResult] = []
    for (index, axis) in SelfTestAxis.allCases.enumerated() {
      results.append(
        .init(
          sensor: .gyro, axis: axis, trimCode: codes.gyro[index],
          factoryTrimCounts: gyroFactoryTrimCounts(code: codes.gyro[index], axis: axis),
          responseCounts: gyroResponseCounts[index]))
    }
    for (index, axis) in SelfTestAxis.allCases.enumerated() {
      results.append(
        .init(
          sensor: .accelerometer, axis: axis, trimCode: codes.accelerometer[index],
          factoryTrimCounts: accelerometerFactoryTrimCounts(code: codes.accelerometer[index]),
          responseCounts: accelerometerResponseCounts[index]))
    }
    return MPU6050SelfTestReport(outcome: .measured(results))
  }

  /// x^y for x > 0 without Foundation: exp(y · ln x) by series, accurate to ~1e-15 for the
  /// small arguments used here.
  static func power(_ x: Double, _ y: Double) -> Double {
    exponential(y * logarithm(x))
  }

  private static func logarithm(_ x: Double) -> Double {
    // ln x = 2 atanh((x − 1)/(x + 1)), after scaling x into [0.5, 2) by powers of two.
    var m = x
    var k = 0.0
    while m >= 2 {
      m /= 2
      k += 1
    }
    while m < 0.5 {
      m *= 2
      k -= 1
    }
    let s = (m - 1) / (m + 1)
    let s2 = s * s
    var term = s
    var sum = 0.0
    var n = 1.0
    while abs(term) > 1e-18 {
      sum += term / n
      term *= s2
      n += 2
    }
    return 2 * sum + k * 0.693_147_180_559_945_3
  }

  private static func exponential(_ x: Double) -> Double {
    // e^x = (e^(x/2^k))^(2^k), with the Taylor series on the reduced argument.
    var r = x
    var k = 0
    while abs(r) > 0.5 {
      r /= 2
      k += 1
    }
    var term = 1.0
    var sum = 1.0
    var n = 1.0
    while abs(term) > 1e-18 {
      term *= r / n
      sum += term
      n += 1
    }
    for _ in 0..<k { sum *= sum }
    return sum
  }
}

/// An axis of the self-test.
public enum SelfTestAxis: String, CaseIterable, Hashable, Sendable {
  case x, y, z
}

/// The outcome of a self-test: per axis, the factory trim, the measured response, how far it is
/// from the trim, and whether that is within ±14 %.
public struct MPU6050SelfTestReport: Hashable, Sendable, CustomStringConvertible {
  public enum Sensor: String, Hashable, Sendable {
    case gyro, accelerometer
  }

  /// One axis of one sensor.
  public struct AxisResult: Hashable, Sendable, CustomStringConvertible {
    public var sensor: Sensor
    public var axis: SelfTestAxis
    /// The 5-bit code from the self-test registers.
    public var trimCode: UInt8
    /// The factory-measured response, counts at the self-test range.
    public var factoryTrimCounts: Double
    /// The response measured now, counts at the self-test range.
    public var responseCounts: Double

    public init(
      sensor: Sensor, axis: SelfTestAxis, trimCode: UInt8, factoryTrimCounts: Double,
      responseCounts: Double
    ) {
      self.sensor = sensor
      self.axis = axis
      self.trimCode = trimCode
      self.factoryTrimCounts = factoryTrimCounts
      self.responseCounts = responseCounts
    }

    /// (response − trim) / trim, as a fraction (0.05 = +5 %); `nil` without factory trim.
    public var deviation: Double? {
      factoryTrimCounts == 0 ? nil : (responseCounts - factoryTrimCounts) / factoryTrimCounts
    }

    /// Whether the deviation is within ±14 %. An axis without factory trim fails: there is
    /// nothing to judge it by.
    public var passed: Bool {
      guard let deviation else { return false }
      return abs(deviation) <= MPU6050SelfTest.tolerance
    }

    /// `gyro x: pass, +3.2 % (response 6344 counts, trim 6148)`.
    public var description: String {
      let verdict = passed ? "pass" : "FAIL"
      guard let deviation else {
        return "\(sensor.rawValue) \(axis.rawValue): \(verdict), no factory trim (code 0)"
      }
      let percent = deviation * 100
      return
        "\(sensor.rawValue) \(axis.rawValue): \(verdict), \(percent >= 0 ? "+" : "")"
        + "\(decimal(percent, fractionDigits: 1)) % (response \(decimal(responseCounts, fractionDigits: 0)) "
        + "counts, trim \(decimal(factoryTrimCounts, fractionDigits: 0)))"
    }
  }

  public enum Outcome: Hashable, Sendable {
    /// Measured on every axis.
    case measured([AxisResult])
    /// Not run, and why (e.g. an MPU-6500-family part, whose self-test differs).
    case notAvailable(reason: String)
  }

  public var outcome: Outcome

  public init(outcome: Outcome) { self.outcome = outcome }

  /// The per-axis results (empty when the test was not run).
  public var results: [AxisResult] {
    if case .measured(let results) = outcome { return results }
    return []
  }

  /// Whether the test ran and every axis passed.
  public var passed: Bool {
    if case .measured(let results) = outcome { return results.allSatisfy(\.passed) }
    return false
  }

  /// The axes that failed.
  public var failures: [AxisResult] { results.filter { !$0.passed } }

  public var description: String {
    switch outcome {
    case .notAvailable(let reason): "self-test not run: \(reason)"
    case .measured(let results):
      "self-test \(passed ? "passed" : "FAILED"): "
        + results.map(\.description).joined(separator: "; ")
    }
  }
}
