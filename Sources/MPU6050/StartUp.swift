import HardwareAbstraction

/// What start-up found and did.
public struct MPU6050StartupReport: Hashable, Sendable, CustomStringConvertible {
  /// The part, by WHO_AM_I.
  public var identity: MPU6050Identity
  /// The self-test result (or why it did not run).
  public var selfTest: MPU6050SelfTestReport
  /// Things a person should know: a non-genuine part, configuration notes.
  public var warnings: [String]

  public var description: String {
    ([identity.description, selfTest.description] + warnings.map { "warning: " + $0 })
      .joined(separator: "\n")
  }
}

/// Start-up and self-test: identify the part, reset it, configure it, run the self-test, and
/// begin sampling. These wait on a clock they are handed; everything after start-up takes
/// the time as a parameter instead.
///
/// Owns `identity` and `scale` (the part's conversion factors, set when it is identified).
extension MPU6050Driver {
  /// Identifies, resets, wakes, configures and (optionally) self-tests the chip, waiting on
  /// `clock` where the chip needs time (≥ 100 ms after reset, the settling time, the self-test
  /// samples). Takes about 0.3 s, plus about 0.6 s for the self-test.
  ///
  /// Throws when the chip is missing, unknown, incompatible, or will not take its
  /// configuration; the driver then stays `.stopped`, and `readSample` keeps retrying in the
  /// background with back-off. A failed self-test does not throw: it is in the report, for
  /// the caller to decide.
  public mutating func start<Clock: MonotonicClock>(clock: inout Clock, selfTest: Bool = true)
    throws(MPU6050Error) -> MPU6050StartupReport
  {
    state = .stopped
    do throws(MPU6050Error) {
      let identity = try identify()
      try requireWrite(PowerManagement1Register.deviceReset)
      clock.sleep(until: clock.now().advanced(byNanoseconds: policy.resetWaitNanoseconds))
      var power = try requireRead(PowerManagement1Register.self)
      var polls = 0
      while power.deviceReset {
        polls += 1
        guard polls <= 10 else {
          throw MPU6050Error.resetDidNotComplete(powerManagement1: power.bits)
        }
        clock.sleep(until: clock.now().advanced(byNanoseconds: 10_000_000))
        power = try requireRead(PowerManagement1Register.self)
      }
      try writeConfiguration()
      try verifyConfiguration()
      clock.sleep(until: clock.now().advanced(byNanoseconds: settleNanoseconds))
      let report: MPU6050SelfTestReport
      if !selfTest {
        report = MPU6050SelfTestReport(outcome: .notAvailable(reason: "skipped by request"))
      } else if identity.family != .mpu6050 {
        report = MPU6050SelfTestReport(
          outcome: .notAvailable(
            reason:
              "\(identity.model.name) is an MPU-6500-generation part; its self-test uses "
              + "different registers and formulas than the MPU-6050's"))
      } else {
        report = try runSelfTest(clock: &clock)
      }
      becomeRunning(at: clock.now())
      var warnings: [String] = []
      if let warning = identity.warning { warnings.append(warning) }
      warnings += configuration.warnings
      if !report.passed, case .measured = report.outcome {
        warnings.append(
          "self-test failed on "
            + report.failures.map { "\($0.sensor.rawValue) \($0.axis.rawValue)" }.joined(
              separator: ", ")
            + ": the sensor may be damaged; its readings on those axes are suspect")
      }
      return MPU6050StartupReport(identity: identity, selfTest: report, warnings: warnings)
    } catch {
      lastError = error
      state = .stopped
      throw error
    }
  }

  /// Reads WHO_AM_I and names the part. Throws for an unknown or incompatible part, with the
  /// value read.
  public mutating func identify() throws(MPU6050Error) -> MPU6050Identity {
    let whoAmI = try requireRead(WhoAmIRegister.self).bits
    let identity = try MPU6050Identity.classify(whoAmI: whoAmI)
    adopt(identity)
    return identity
  }

  mutating func adopt(_ identity: MPU6050Identity) {
    self.identity = identity
    scale = configuration.scale(for: identity.family)
    scale.temperature = identity.temperature
    controlRegisters.accelConfig2 = identity.family == .mpu6500 ? configuration.accelConfig2 : nil
  }

  // MARK: - Self-test

  /// Runs the self-test (RM §4.1, PS §6.1/6.2): averages samples with self-test off and on at
  /// ±250 °/s and ±8 g, compares the difference with the factory trim, then restores the
  /// configuration. The chip must be configured and still. Waits on `clock`.
  public mutating func runSelfTest<Clock: MonotonicClock>(clock: inout Clock) throws(MPU6050Error)
    -> MPU6050SelfTestReport
  {
    let settle = max(settleNanoseconds, 50_000_000)
    var gyro = GyroConfigRegister(fullScale: MPU6050SelfTest.gyroFullScale)
    var accelerometer = AccelConfigRegister(fullScale: MPU6050SelfTest.accelerometerFullScale)
    try requireWrite(gyro)
    try requireWrite(accelerometer)
    clock.sleep(until: clock.now().advanced(byNanoseconds: settle))
    let off = try averageCounts(clock: &clock)
    gyro.selfTest = .all
    accelerometer.selfTest = .all
    try requireWrite(gyro)
    try requireWrite(accelerometer)
    clock.sleep(until: clock.now().advanced(byNanoseconds: settle))
    let on = try averageCounts(clock: &clock)
    var trim = Block()
    try requireBlock(SelfTestRegisters.x, count: 4, into: &trim)
    let codes = trim.withBytes { bytes in
      MPU6050SelfTest.TrimCodes(registers: bytes[0], bytes[1], bytes[2], bytes[3])
    }
    try requireWrite(controlRegisters.gyroConfig)
    try requireWrite(controlRegisters.accelConfig)
    clock.sleep(until: clock.now().advanced(byNanoseconds: settle))
    repeats.forgetPrevious()
    return MPU6050SelfTest.evaluate(
      codes: codes, gyroResponseCounts: on.gyro - off.gyro,
      accelerometerResponseCounts: on.accelerometer - off.accelerometer)
  }

  private mutating func averageCounts<Clock: MonotonicClock>(clock: inout Clock)
    throws(MPU6050Error) -> (accelerometer: SIMD3<Double>, gyro: SIMD3<Double>)
  {
    var accelerometer = SIMD3<Double>.zero
    var gyro = SIMD3<Double>.zero
    let period = configuration.samplePeriodNanoseconds
    for _ in 0..<policy.selfTestSamples {
      clock.sleep(until: clock.now().advanced(byNanoseconds: period))
      var block = Block()
      try requireBlock(
        MeasurementRegisters.accelXHigh, count: MeasurementRegisters.burstLength, into: &block)
      let raw = block.withBytes { MPU6050RawSample(validated: $0) }
      accelerometer += SIMD3<Double>(raw.accelerometer)
      gyro += SIMD3<Double>(raw.gyro)
    }
    let n = Double(policy.selfTestSamples)
    return (accelerometer / n, gyro / n)
  }
}
