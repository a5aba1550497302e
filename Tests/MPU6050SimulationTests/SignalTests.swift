import Geometry
import HardwareAbstraction
import MPU6050
import MPU6050Simulation
import SimulatedHardware
import Testing

/// What the simulated chip does to signals, measured through the real driver.
@Suite("Simulated signal path")
struct SignalTests {
  /// DLPF_CFG → gyroscope and accelerometer delay (RM §4.3), restated.
  static let delays: [(DigitalLowPassFilter, Double, Double, Double)] = [
    (.bandwidth184Hz, 500, 0.0019, 0.0020), (.bandwidth94Hz, 200, 0.0028, 0.0030),
    (.bandwidth44Hz, 100, 0.0048, 0.0049), (.bandwidth21Hz, 100, 0.0083, 0.0085),
    (.bandwidth5Hz, 100, 0.0186, 0.0190),
  ]

  @Test("the filter delays a ramp by the table's delay", arguments: delays)
  func filterDelay(
    filter: DigitalLowPassFilter, rate: Double, gyroDelay: Double, accelDelay: Double
  ) throws {
    let slope = 2.0  // rad/s and m/s² per second
    let rig = try Rig(
      motion: Ramp(slope: slope), unit: .ideal,
      configuration: MPU6050Configuration(
        sampleRateHertz: rate, lowPassFilter: filter, gyroFullScale: .degreesPerSecond2000,
        accelerometerFullScale: .standardGravities16),
      policy: MPU6050RecoveryPolicy(stuckSampleCount: nil))
    try rig.start()
    try rig.run(until: rig.now.advanced(byNanoseconds: seconds(1)))
    let (time, sample) = try #require(rig.samples.last)
    let elapsed = Double(time.nanoseconds(since: rig.board.chip.motionStart)) * 1e-9
    // Quantisation: 1 count is 0.0011 rad/s at ±2000 °/s and 0.0048 m/s² at ±16 g, i.e.
    // 0.5 ms and 2.4 ms of this ramp; compare the mean of the three axes.
    let rate = sample.angularRateRadiansPerSecond
    let force = sample.specificForceMetersPerSecondSquared
    let gyroLag = elapsed - (rate.x + rate.y + rate.z) / 3 / slope
    let accelLag = elapsed - (force.x + force.y + force.z) / 3 / slope
    #expect(abs(gyroLag - gyroDelay) < 0.0004, "gyro lag \(gyroLag)")
    #expect(abs(accelLag - accelDelay) < 0.0016, "accel lag \(accelLag)")
  }

  @Test("aliasing: a 60 Hz vibration sampled at 50 Hz without the filter appears at 10 Hz")
  func aliasing() throws {
    // The validator refuses this configuration, so the registers are written directly:
    // DLPF off (8 kHz), SMPLRT_DIV 159 → 50 Hz.
    let board = SimulatedMPU6050Board(
      motion: Vibration(frequency: 60, amplitude: 1), unit: .ideal)
    let address = board.address
    try board.bus.writeRegister(0x6B, value: 0x01, at: address)
    try board.bus.writeRegister(0x1A, value: 0x00, at: address)
    try board.bus.writeRegister(0x19, value: 159, at: address)
    var values: [Double] = []
    board.clock.advance(by: .milliseconds(100))
    for _ in 0..<500 {
      board.clock.advance(by: .milliseconds(20))
      let bytes = try board.bus.readRegisters(startingAt: 0x47, count: 2, at: address)
      values.append(Double(Int16(bitPattern: UInt16(bytes[0]) << 8 | UInt16(bytes[1]))) / 131)
    }
    let folded = MPU6050Configuration.foldedFrequency(ofHertz: 60, sampledAtHertz: 50)
    #expect(folded == 10)
    let atAlias = amplitude(of: values, at: folded, rate: 50)
    // 1 rad/s = 57.3 °/s; DLPF_CFG 0 passes 60 Hz almost whole.
    #expect(atAlias > 50, "\(atAlias)")
    #expect(amplitude(of: values, at: 5, rate: 50) < 1)
  }

  @Test("at the 100 Hz default a 60 Hz vibration folds to 40 Hz and the filter attenuates it")
  func defaultConfigurationAttenuates() throws {
    let rig = try Rig(
      motion: Vibration(frequency: 60, amplitude: 1), unit: .ideal,
      policy: MPU6050RecoveryPolicy(stuckSampleCount: nil))
    try rig.start()
    try rig.run(until: rig.now.advanced(byNanoseconds: seconds(5.2)))
    let values = rig.samples.suffix(500).map {
      $0.sample.angularRateRadiansPerSecond.z * 180 / Double.pi
    }
    let atAlias = amplitude(of: values, at: 40, rate: 100)
    #expect(atAlias < 57.3 * 0.6, "\(atAlias)")
    #expect(amplitude(of: values, at: 10, rate: 100) < 1)
  }
}

@Suite("Self-test on the simulated chip")
struct SimulatedSelfTestTests {
  @Test("a healthy unit passes, each axis near its response ratio")
  func healthy() throws {
    let unit = SimulatedMPU6050Unit.typical(seed: 11)
    let rig = try Rig(unit: unit)
    let report = try rig.start(selfTest: true)
    #expect(report.selfTest.passed, "\(report.selfTest)")
    let ratios = [
      unit.gyroSelfTestResponseRatio.x, unit.gyroSelfTestResponseRatio.y,
      unit.gyroSelfTestResponseRatio.z, unit.accelerometerSelfTestResponseRatio.x,
      unit.accelerometerSelfTestResponseRatio.y, unit.accelerometerSelfTestResponseRatio.z,
    ]
    for (result, ratio) in zip(report.selfTest.results, ratios) {
      #expect(abs(result.deviation! - (ratio - 1)) < 0.01, "\(result)")
    }
    // Restored afterwards: ±500 °/s, ±4 g.
    #expect(rig.board.chip.peek(0x1B) == 0x08)
    #expect(rig.board.chip.peek(0x1C) == 0x08)
    try rig.run(until: rig.now.advanced(byNanoseconds: seconds(0.2)))
    let last = try #require(rig.samples.last?.sample)
    #expect(abs(last.specificForceMetersPerSecondSquared.z - 9.80665) < 1.5)
  }

  @Test("the self-test-failure plan fails the gyroscope's Y axis with its deviation")
  func damaged() throws {
    let plan = try #require(SimulatedMPU6050FaultPlan.named("self-test-failure", start: .zero))
    let rig = try Rig(unit: .typical(seed: 11), plan: plan)
    let report = try rig.start(selfTest: true)
    #expect(!report.selfTest.passed)
    let failures = report.selfTest.failures
    #expect(failures.count == 1)
    #expect(failures.first?.sensor == .gyro)
    #expect(failures.first?.axis == .y)
    #expect(abs(failures.first!.deviation! - -0.5) < 0.01)
    #expect(report.warnings.contains { $0.contains("gyro y") })
    #expect(rig.driver.state == .running)
  }
}
