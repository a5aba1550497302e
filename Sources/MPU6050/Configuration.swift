/// The MPU-6050's digital low-pass filter, DLPF_CFG in CONFIG (RM §4.3), named by its
/// accelerometer bandwidth. It filters both sensors; its bandwidths and delays (RM §4.3 table):
///
/// | DLPF_CFG | accel BW | accel delay | gyro BW | gyro delay | gyro output rate |
/// |---|---|---|---|---|---|
/// | 0 | 260 Hz | 0 ms    | 256 Hz | 0.98 ms | 8 kHz |
/// | 1 | 184 Hz | 2.0 ms  | 188 Hz | 1.9 ms  | 1 kHz |
/// | 2 | 94 Hz  | 3.0 ms  | 98 Hz  | 2.8 ms  | 1 kHz |
/// | 3 | 44 Hz  | 4.9 ms  | 42 Hz  | 4.8 ms  | 1 kHz |
/// | 4 | 21 Hz  | 8.5 ms  | 20 Hz  | 8.3 ms  | 1 kHz |
/// | 5 | 10 Hz  | 13.8 ms | 10 Hz  | 13.4 ms | 1 kHz |
/// | 6 | 5 Hz   | 19.0 ms | 5 Hz   | 18.6 ms | 1 kHz |
///
/// Code 7 is reserved and not representable here.
public enum DigitalLowPassFilter: UInt8, CaseIterable, Hashable, Sendable, CustomStringConvertible {
  /// DLPF_CFG 0: effectively off (260/256 Hz); the gyroscope runs at 8 kHz.
  case bandwidth260Hz = 0
  /// DLPF_CFG 1: 184/188 Hz.
  case bandwidth184Hz = 1
  /// DLPF_CFG 2: 94/98 Hz.
  case bandwidth94Hz = 2
  /// DLPF_CFG 3: 44/42 Hz, about 4.8 ms of delay. Plumb's default at 100 Hz.
  case bandwidth44Hz = 3
  /// DLPF_CFG 4: 21/20 Hz.
  case bandwidth21Hz = 4
  /// DLPF_CFG 5: 10/10 Hz.
  case bandwidth10Hz = 5
  /// DLPF_CFG 6: 5/5 Hz.
  case bandwidth5Hz = 6

  /// The accelerometer's bandwidth, Hz (RM §4.3).
  public var accelerometerBandwidthHertz: Double {
    switch self {
    case .bandwidth260Hz: 260
    case .bandwidth184Hz: 184
    case .bandwidth94Hz: 94
    case .bandwidth44Hz: 44
    case .bandwidth21Hz: 21
    case .bandwidth10Hz: 10
    case .bandwidth5Hz: 5
    }
  }

  /// The gyroscope's bandwidth, Hz (RM §4.3).
  public var gyroBandwidthHertz: Double {
    switch self {
    case .bandwidth260Hz: 256
    case .bandwidth184Hz: 188
    case .bandwidth94Hz: 98
    case .bandwidth44Hz: 42
    case .bandwidth21Hz: 20
    case .bandwidth10Hz: 10
    case .bandwidth5Hz: 5
    }
  }

  /// The accelerometer's delay, seconds (RM §4.3).
  public var accelerometerDelaySeconds: Double {
    switch self {
    case .bandwidth260Hz: 0
    case .bandwidth184Hz: 0.0020
    case .bandwidth94Hz: 0.0030
    case .bandwidth44Hz: 0.0049
    case .bandwidth21Hz: 0.0085
    case .bandwidth10Hz: 0.0138
    case .bandwidth5Hz: 0.0190
    }
  }

  /// The gyroscope's delay, seconds (RM §4.3).
  public var gyroDelaySeconds: Double {
    switch self {
    case .bandwidth260Hz: 0.00098
    case .bandwidth184Hz: 0.0019
    case .bandwidth94Hz: 0.0028
    case .bandwidth44Hz: 0.0048
    case .bandwidth21Hz: 0.0083
    case .bandwidth10Hz: 0.0134
    case .bandwidth5Hz: 0.0186
    }
  }

  /// The wider of the two bandwidths, Hz: what must stay below half the sample rate.
  public var bandwidthHertz: Double { max(accelerometerBandwidthHertz, gyroBandwidthHertz) }

  /// The longer of the two delays, seconds.
  public var delaySeconds: Double { max(accelerometerDelaySeconds, gyroDelaySeconds) }

  /// The gyroscope output rate the sample-rate divider divides, Hz (RM §4.2): 8 kHz with the
  /// filter off (DLPF_CFG 0), 1 kHz with it on.
  public var gyroOutputRateHertz: Double { self == .bandwidth260Hz ? 8000 : 1000 }

  /// `DLPF_CFG 3 (44 Hz accel / 42 Hz gyro)`.
  public var description: String {
    "DLPF_CFG \(rawValue) (\(decimal(accelerometerBandwidthHertz)) Hz accel / "
      + "\(decimal(gyroBandwidthHertz)) Hz gyro)"
  }
}

/// The gyroscope's full-scale range, FS_SEL in GYRO_CONFIG (RM §4.4), with the sensitivities of
/// PS §6.1.
public enum GyroFullScale: UInt8, CaseIterable, Hashable, Sendable, CustomStringConvertible {
  /// ±250 °/s, 131 LSB/(°/s).
  case degreesPerSecond250 = 0
  /// ±500 °/s, 65.5 LSB/(°/s).
  case degreesPerSecond500 = 1
  /// ±1000 °/s, 32.8 LSB/(°/s).
  case degreesPerSecond1000 = 2
  /// ±2000 °/s, 16.4 LSB/(°/s).
  case degreesPerSecond2000 = 3

  /// The range, ± degrees per second.
  public var degreesPerSecond: Double {
    switch self {
    case .degreesPerSecond250: 250
    case .degreesPerSecond500: 500
    case .degreesPerSecond1000: 1000
    case .degreesPerSecond2000: 2000
    }
  }

  /// Counts per degree per second (PS §6.1 "Sensitivity Scale Factor").
  public var countsPerDegreePerSecond: Double {
    switch self {
    case .degreesPerSecond250: 131
    case .degreesPerSecond500: 65.5
    case .degreesPerSecond1000: 32.8
    case .degreesPerSecond2000: 16.4
    }
  }

  /// Radians per second per count.
  public var radiansPerSecondPerCount: Double { (Double.pi / 180) / countsPerDegreePerSecond }

  public var description: String { "±\(decimal(degreesPerSecond)) °/s" }
}

/// The accelerometer's full-scale range, AFS_SEL in ACCEL_CONFIG (RM §4.5), with the
/// sensitivities of PS §6.2.
public enum AccelerometerFullScale: UInt8, CaseIterable, Hashable, Sendable,
  CustomStringConvertible
{
  /// ±2 g, 16384 LSB/g.
  case standardGravities2 = 0
  /// ±4 g, 8192 LSB/g.
  case standardGravities4 = 1
  /// ±8 g, 4096 LSB/g.
  case standardGravities8 = 2
  /// ±16 g, 2048 LSB/g.
  case standardGravities16 = 3

  /// The range, ± standard gravities.
  public var standardGravities: Double { Double(2 << Int(rawValue)) }

  /// Counts per standard gravity (PS §6.2 "Sensitivity Scale Factor").
  public var countsPerStandardGravity: Double { 16384 / Double(1 << Int(rawValue)) }

  /// Metres per second squared per count (g = 9.80665 m/s², the unit of PS §6.2).
  public var metersPerSecondSquaredPerCount: Double {
    MPU6050Configuration.standardGravity / countsPerStandardGravity
  }

  public var description: String { "±\(decimal(standardGravities)) g" }
}

/// How the sensor is set up: a value with a `default`, checked by `validated()` before anything
/// touches the chip.
///
/// **The 100 Hz default, and why.** Plumb's loop runs at 100 Hz, so the chip samples at 100 Hz:
/// DLPF on (1 kHz gyroscope output), SMPLRT_DIV 9 (RM §4.2). At 100 Hz only frequencies below
/// 50 Hz can be represented; anything the filter passes above that folds back to
/// |f − k·100 Hz| and becomes a slow false motion (seed 000: a 60 Hz vibration sampled at 50 Hz
/// shows up at 10 Hz). DLPF_CFG 3 (44 Hz accelerometer, 42 Hz gyroscope) is the widest setting
/// under 50 Hz; it delays the signal by about 4.8 ms, half a loop period. DLPF_CFG 4 (21/20 Hz)
/// would suppress more of a vibration near 50 Hz but delays by 8.3–8.5 ms and starts to smooth
/// real motion (a fast hand rotation has content at 10–20 Hz); DLPF_CFG 2 (94/98 Hz) would alias.
/// The ranges default to ±500 °/s (handheld rotations exceed 250 °/s; 65.5 LSB/(°/s) keeps
/// 0.015 °/s resolution) and ±4 g (walking and pushes stay under 3 g; 8192 LSB/g). The data-ready
/// interrupt is on: the chip is the loop's metronome.
public struct MPU6050Configuration: Hashable, Sendable, CustomStringConvertible {
  /// Standard gravity, m/s²: the g of the datasheet's ranges (PS §6.2).
  public static let standardGravity = 9.80665

  /// Samples per second. Must be the gyroscope output rate (1 kHz with the DLPF on, 8 kHz off)
  /// divided by 1 + SMPLRT_DIV for a whole SMPLRT_DIV in 0…255.
  public var sampleRateHertz: Double
  /// The digital low-pass filter; its wider bandwidth must stay below half the sample rate.
  public var lowPassFilter: DigitalLowPassFilter
  /// The gyroscope's range.
  public var gyroFullScale: GyroFullScale
  /// The accelerometer's range.
  public var accelerometerFullScale: AccelerometerFullScale
  /// Whether the INT pin pulses (50 µs, active high, push-pull) for every new sample. Turn it
  /// off only when the pin is not wired; the loop then polls the FIFO.
  public var dataReadyInterrupt: Bool

  public init(
    sampleRateHertz: Double = 100, lowPassFilter: DigitalLowPassFilter = .bandwidth44Hz,
    gyroFullScale: GyroFullScale = .degreesPerSecond500,
    accelerometerFullScale: AccelerometerFullScale = .standardGravities4,
    dataReadyInterrupt: Bool = true
  ) {
    self.sampleRateHertz = sampleRateHertz
    self.lowPassFilter = lowPassFilter
    self.gyroFullScale = gyroFullScale
    self.accelerometerFullScale = accelerometerFullScale
    self.dataReadyInterrupt = dataReadyInterrupt
  }

  /// 100 Hz, DLPF_CFG 3 (44/42 Hz), ±500 °/s, ±4 g, data-ready interrupt on.
  public static let `default` = MPU6050Configuration()

  public var description: String {
    "\(decimal(sampleRateHertz)) Hz, \(lowPassFilter), gyro \(gyroFullScale), accel "
      + "\(accelerometerFullScale), data-ready interrupt \(dataReadyInterrupt ? "on" : "off")"
  }

  /// The frequency at which an oscillation at `frequencyHertz` appears when sampled at
  /// `sampleRateHertz`: |f − k·fs| for the whole k that brings it into [0, fs/2] (seed 000).
  public static func foldedFrequency(ofHertz frequencyHertz: Double, sampledAtHertz rate: Double)
    -> Double
  {
    guard rate > 0, frequencyHertz.isFinite, rate.isFinite else { return .nan }
    let k = (frequencyHertz / rate).rounded()
    return abs(frequencyHertz - k * rate)
  }

  /// The rates the chip can sample at near `hertz` with this filter: the achievable rates just
  /// above and just below (up to `count` on each side).
  public static func achievableRates(
    near hertz: Double, lowPassFilter: DigitalLowPassFilter, count: Int = 2
  ) -> [AchievableSampleRate] {
    let output = lowPassFilter.gyroOutputRateHertz
    let all = (0...255).map { AchievableSampleRate(divider: UInt8($0), outputRateHertz: output) }
    let above = all.filter { $0.hertz > hertz }.suffix(count)
    let below = all.filter { $0.hertz < hertz }.prefix(count)
    return Array(below.reversed()) + Array(above.reversed())
  }

  /// Checks the configuration and computes the register values, or explains what is wrong and
  /// how to fix it.
  public func validated() throws(MPU6050ConfigurationError) -> ValidatedMPU6050Configuration {
    let rate = sampleRateHertz
    let output = lowPassFilter.gyroOutputRateHertz
    guard rate.isFinite, rate > 0 else { throw .sampleRateNotPositive(requestedHertz: rate) }
    let fastest = output
    let slowest = output / 256
    // 100 ppm: lets a board file write 333.33 for 1000/3 Hz.
    let tolerance = 1e-4
    guard rate <= fastest * (1 + tolerance), rate >= slowest * (1 - tolerance) else {
      throw .sampleRateOutOfRange(
        requestedHertz: rate, slowestHertz: slowest, fastestHertz: fastest,
        lowPassFilter: lowPassFilter)
    }
    let divider = (output / rate - 1).rounded()
    let achieved = output / (1 + divider)
    guard abs(achieved - rate) <= tolerance * rate else {
      throw .sampleRateNotAchievable(
        requestedHertz: rate, gyroOutputRateHertz: output,
        nearby: Self.achievableRates(near: rate, lowPassFilter: lowPassFilter))
    }
    let nyquist = achieved / 2
    let bandwidth = lowPassFilter.bandwidthHertz
    guard bandwidth < nyquist else {
      let narrower = DigitalLowPassFilter.allCases.filter {
        $0.bandwidthHertz < nyquist && $0.gyroOutputRateHertz == output
      }
      // The slowest rate with this filter that keeps its bandwidth under Nyquist.
      let faster = (0...255).reversed().lazy
        .map { AchievableSampleRate(divider: UInt8($0), outputRateHertz: output) }
        .first { $0.hertz / 2 > bandwidth }
      throw .bandwidthAliases(
        lowPassFilter: lowPassFilter, sampleRateHertz: achieved,
        foldedFrequencyHertz: Self.foldedFrequency(ofHertz: bandwidth, sampledAtHertz: achieved),
        narrowerFilters: narrower, fasterRate: faster)
    }
    var warnings: [String] = []
    if achieved > 1000 {
      warnings.append(
        "sampleRateHertz: above 1 kHz the accelerometer (1 kHz output rate) repeats samples "
          + "(RM §4.2); only the gyroscope is new in every sample")
    }
    return ValidatedMPU6050Configuration(
      configuration: self, divider: UInt8(divider), sampleRateHertz: achieved, warnings: warnings)
  }
}

/// A sample rate the chip can produce: the gyroscope output rate divided by 1 + SMPLRT_DIV.
public struct AchievableSampleRate: Hashable, Sendable, CustomStringConvertible {
  /// SMPLRT_DIV.
  public var divider: UInt8
  /// The resulting rate, Hz.
  public var hertz: Double

  public init(divider: UInt8, outputRateHertz: Double) {
    self.divider = divider
    self.hertz = outputRateHertz / (1 + Double(divider))
  }

  /// `333.333 Hz (SMPLRT_DIV 2)`.
  public var description: String { "\(decimal(hertz)) Hz (SMPLRT_DIV \(divider))" }
}

/// A configuration that passed validation, with the register values it implies.
public struct ValidatedMPU6050Configuration: Hashable, Sendable {
  /// What was asked for.
  public var configuration: MPU6050Configuration
  /// SMPLRT_DIV.
  public var divider: UInt8
  /// The exact rate the divider gives, Hz (nominal: the chip's oscillator is off by up to a few
  /// percent, PS §7.15).
  public var sampleRateHertz: Double
  /// Things that are allowed but worth knowing, each starting with the field's name.
  public var warnings: [String]

  /// The nominal sample period, nanoseconds.
  public var samplePeriodNanoseconds: Int64 { Int64((1e9 / sampleRateHertz).rounded()) }

  /// SMPLRT_DIV (`0x19`).
  public var sampleRateDivider: SampleRateDividerRegister { .init(divider: divider) }
  /// CONFIG (`0x1A`): FSYNC off, the filter.
  public var config: ConfigRegister { .init(lowPassFilter: configuration.lowPassFilter) }
  /// GYRO_CONFIG (`0x1B`): self-test off, the range.
  public var gyroConfig: GyroConfigRegister { .init(fullScale: configuration.gyroFullScale) }
  /// ACCEL_CONFIG (`0x1C`): self-test off, the range.
  public var accelConfig: AccelConfigRegister {
    .init(fullScale: configuration.accelerometerFullScale)
  }
  /// ACCEL_CONFIG2 (`0x1D`, MPU-6500 family only): the accelerometer filter code matching
  /// DLPF_CFG, so both sensors keep the same bandwidth class.
  public var accelConfig2: AccelConfig2Register {
    .init(lowPassFilterCode: configuration.lowPassFilter.rawValue)
  }

  /// INT_PIN_CFG (`0x37`) = `0x00`, chosen deliberately:
  /// - INT_LEVEL 0, active high, and INT_OPEN 0, push-pull: the pin drives both edges, so no
  ///   pull-up is needed and the GPIO watches for rising edges;
  /// - LATCH_INT_EN 0: a 50 µs pulse per sample (PS §6.4). A pulse needs no read to re-arm, so
  ///   a late loop never blocks later edges; the kernel timestamps the rising edge in its
  ///   interrupt handler, and the pulse is far longer than any GPIO edge detector needs;
  /// - INT_RD_CLEAR 0: status bits clear only when INT_STATUS itself is read. The sample path
  ///   never reads INT_STATUS (the edge says a sample is ready), and the polling fallback reads
  ///   it deliberately, so FIFO_OFLOW_INT cannot be cleared behind its back by a data burst.
  public var interruptPinConfig: InterruptPinConfigRegister { InterruptPinConfigRegister() }

  /// INT_ENABLE (`0x38`): DATA_RDY_EN when the interrupt is wanted, plus FIFO_OFLOW_EN when the
  /// FIFO is in use.
  public func interruptEnable(fifo: Bool) -> InterruptEnableRegister {
    var enable = InterruptEnableRegister()
    enable.dataReady = configuration.dataReadyInterrupt
    enable.fifoOverflow = fifo
    return enable
  }

  /// PWR_MGMT_1 (`0x6B`): awake, temperature sensor on, clocked from the X gyroscope's PLL
  /// (RM §4.28 recommends a gyroscope reference for stability).
  public var powerManagement1: PowerManagement1Register { .init(clockSource: .gyroXPLL) }

  /// FIFO_EN (`0x23`) for the polling fallback: accelerometer, temperature and all three gyro
  /// axes. With the temperature included a FIFO record has the same 14-byte layout as the
  /// register burst (outputs are written in register order, RM §4.6), so one conversion
  /// function serves both paths and a recording looks the same whichever path made it. The
  /// cost: 1024 B holds 73 records (730 ms at 100 Hz) instead of 85 (850 ms); the fallback
  /// drains the FIFO every period, so neither is ever close.
  public var fifoEnable: FIFOEnableRegister {
    .temperature | .gyroX | .gyroY | .gyroZ | .accelerometer
  }

  /// The conversion factors for this configuration on a chip of `family`.
  public func scale(for family: RegisterMapFamily = .mpu6050) -> MPU6050Scale {
    MPU6050Scale(
      gyroFullScale: configuration.gyroFullScale,
      accelerometerFullScale: configuration.accelerometerFullScale,
      temperature: family.temperatureConversion)
  }
}

/// Why a configuration cannot be used: the field, the problem, and the fix.
public enum MPU6050ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The rate is zero, negative or not a number.
  case sampleRateNotPositive(requestedHertz: Double)
  /// The rate is outside what the divider can reach with this filter.
  case sampleRateOutOfRange(
    requestedHertz: Double, slowestHertz: Double, fastestHertz: Double,
    lowPassFilter: DigitalLowPassFilter)
  /// The rate is not the gyroscope output rate divided by a whole 1 + SMPLRT_DIV.
  case sampleRateNotAchievable(
    requestedHertz: Double, gyroOutputRateHertz: Double, nearby: [AchievableSampleRate])
  /// The filter passes frequencies at or above half the sample rate: they would alias.
  case bandwidthAliases(
    lowPassFilter: DigitalLowPassFilter, sampleRateHertz: Double, foldedFrequencyHertz: Double,
    narrowerFilters: [DigitalLowPassFilter], fasterRate: AchievableSampleRate?)

  /// The configuration field at fault.
  public var field: String {
    switch self {
    case .sampleRateNotPositive, .sampleRateOutOfRange, .sampleRateNotAchievable:
      "sampleRateHertz"
    case .bandwidthAliases: "lowPassFilter"
    }
  }

  public var description: String {
    switch self {
    case .sampleRateNotPositive(let requested):
      return
        "sampleRateHertz: \(decimal(requested)) is not a rate; give a positive number of "
        + "samples per second, e.g. 100"
    case .sampleRateOutOfRange(let requested, let slowest, let fastest, let filter):
      return
        "sampleRateHertz: \(decimal(requested)) Hz is outside \(decimal(slowest))…"
        + "\(decimal(fastest)) Hz, the rates SMPLRT_DIV 255…0 give with \(filter) "
        + "(gyroscope output \(decimal(filter.gyroOutputRateHertz)) Hz, RM §4.2); choose a rate "
        + "in that range"
    case .sampleRateNotAchievable(let requested, let output, let nearby):
      let list = nearby.map(\.description).joined(separator: ", ")
      return
        "sampleRateHertz: \(decimal(requested)) Hz is not \(decimal(output)) Hz ÷ "
        + "(1 + SMPLRT_DIV) for any whole SMPLRT_DIV 0…255 (RM §4.2); rates near it that the "
        + "chip can produce: \(list)"
    case .bandwidthAliases(let filter, let rate, let folded, let narrower, let faster):
      let nyquist = rate / 2
      let bandwidth = filter.bandwidthHertz
      let k = (bandwidth / rate).rounded()
      var fixes: [String] = []
      if !narrower.isEmpty {
        fixes.append(
          "choose a filter below \(decimal(nyquist)) Hz ("
            + narrower.map(\.description).joined(separator: ", ") + ")")
      }
      if let faster {
        fixes.append("raise the sample rate to \(faster) or more")
      }
      return
        "lowPassFilter: \(filter) passes frequencies up to \(decimal(bandwidth)) Hz, at or "
        + "above \(decimal(nyquist)) Hz, half the \(decimal(rate)) Hz sample rate; anything "
        + "the filter passes above that aliases: a vibration at \(decimal(bandwidth)) Hz "
        + "would appear at the folded frequency |\(decimal(bandwidth)) − \(decimal(k)) × "
        + "\(decimal(rate))| = \(decimal(folded)) Hz, a false slow motion no later filter can "
        + "remove. Fix: " + fixes.joined(separator: ", or ")
    }
  }
}
