import Geometry
import HardwareAbstraction
import MPU6050
import MPU6050Simulation
import SimulatedHardware
import Testing

@Suite("FIFO fallback through the driver")
struct FIFOTests {
  /// Distinct values per axis, so a record read two bytes off could not pass for a good one.
  static let truth = FixedTruth(
    rate: Vector3(0.3, -0.6, 1.1), force: Vector3(1.5, -2.5, 9.0), temperature: 28)

  func checkAligned(_ samples: ArraySlice<(time: Timestamp, sample: MPU6050Sample)>) {
    for (_, sample) in samples {
      let force = sample.specificForceMetersPerSecondSquared
      let rate = sample.angularRateRadiansPerSecond
      #expect(abs(force.x - 1.5) < 0.3 && abs(force.y + 2.5) < 0.3 && abs(force.z - 9) < 0.3)
      #expect(abs(rate.x - 0.3) < 0.05 && abs(rate.y + 0.6) < 0.05 && abs(rate.z - 1.1) < 0.05)
      #expect(abs(sample.temperatureCelsius - 28) < 0.5)
    }
  }

  @Test("polling the FIFO delivers every sample the chip produced, none lost")
  func polling() throws {
    var unit = SimulatedMPU6050Unit.noisy(seed: 4)
    unit.oscillatorError = 0.025
    let rig = try Rig(motion: Self.truth, unit: unit)
    try rig.start()
    rig.enableFIFO()
    rig.runFIFO(until: rig.now.advanced(byNanoseconds: seconds(5)))
    let chip = rig.board.chip.statistics
    let pending = UInt64(rig.board.chip.fifoByteCount / 14)
    #expect(chip.fifoRecordsWritten == chip.fifoRecordsRead + chip.fifoRecordsLost + pending)
    #expect(chip.fifoRecordsLost == 0)
    #expect(rig.driver.counters.samplesDelivered == chip.fifoRecordsRead)
    #expect(rig.samples.count == Int(chip.fifoRecordsRead))
    // 5 s at 102.5 Hz.
    #expect(abs(rig.samples.count - 512) <= 2)
    #expect(rig.driver.counters.samplesLost == 0)
    checkAligned(rig.samples[...])
  }

  @Test("an overflow is detected, the FIFO reset, the losses counted exactly, alignment kept")
  func overflow() throws {
    var unit = SimulatedMPU6050Unit.noisy(seed: 9)
    unit.oscillatorError = -0.017
    let rig = try Rig(motion: Self.truth, unit: unit)
    try rig.start()
    rig.enableFIFO()
    rig.runFIFO(until: rig.now.advanced(byNanoseconds: seconds(2)))
    let before = rig.samples.count
    // Nobody reads for 1.2 s: 1024 bytes hold 73 records, about 0.74 s.
    rig.clock.advance(by: .milliseconds(1200))
    rig.runFIFO(until: rig.now.advanced(byNanoseconds: seconds(2)))
    #expect(rig.overflows == 1)
    let counters = rig.driver.counters
    let chip = rig.board.chip.statistics
    #expect(counters.fifoOverflows == 1)
    #expect(chip.fifoOverflows == 1)
    let accounting = rig.fifoAccounting()
    #expect(accounting.produced == accounting.delivered + accounting.lost + accounting.inFIFO)
    #expect(counters.samplesDelivered == chip.fifoRecordsRead)
    let pending = UInt64(rig.board.chip.fifoByteCount / 14)
    #expect(chip.fifoRecordsWritten == chip.fifoRecordsRead + chip.fifoRecordsLost + pending)
    #expect(rig.samples.count > before + 150)
    checkAligned(rig.samples[...])
  }

  /// Oscillator errors from −3 % to +3 %, including none at all, and unit seeds.
  static let clocks: [(Double, UInt64)] = [
    (-0.03, 1), (-0.01, 2), (-0.005, 3), (0, 4), (0.0025, 5), (0.01, 6), (0.03, 7),
  ]

  @Test("stalls of random length, each overflow's losses counted exactly", arguments: clocks)
  func repeatedOverflows(oscillatorError: Double, seed: UInt64) throws {
    var unit = SimulatedMPU6050Unit.noisy(seed: seed)
    unit.oscillatorError = oscillatorError
    let rig = try Rig(motion: Self.truth, unit: unit)
    try rig.start()
    rig.enableFIFO()
    var random = SeededGenerator(seed: seed, stream: 9)
    for _ in 0..<3 {
      rig.runFIFO(until: rig.now.advanced(byNanoseconds: Int64(1e9 + random.nextUniform() * 2e9)))
      rig.clock.advance(by: .nanoseconds(Int64(8e8 + random.nextUniform() * 3e9)))
    }
    rig.runFIFO(until: rig.now.advanced(byNanoseconds: seconds(1)))
    let chip = rig.board.chip.statistics
    #expect(rig.driver.counters.fifoOverflows == 3)
    #expect(!rig.driver.fifoLossPending)
    let accounting = rig.fifoAccounting()
    #expect(accounting.produced == accounting.delivered + accounting.lost + accounting.inFIFO)
    #expect(rig.driver.counters.samplesDelivered == chip.fifoRecordsRead)
    checkAligned(rig.samples[...])
  }

  @Test("the driver measures the chip's period from the drains")
  func periodMeasurement() throws {
    var unit = SimulatedMPU6050Unit.noisy(seed: 8)
    unit.oscillatorError = 0.021
    let rig = try Rig(motion: Self.truth, unit: unit)
    try rig.start()
    #expect(rig.driver.samplePeriodNanoseconds == 10_000_000)
    rig.enableFIFO()
    rig.runFIFO(until: rig.now.advanced(byNanoseconds: seconds(3)))
    // 10 ms / 1.021 = 9 794 319.3 ns, known to 1e-4 after 3 s of drains.
    #expect(abs(Double(rig.driver.samplePeriodNanoseconds) - 1e7 / 1.021) < 1_000)
    let newest = try #require(rig.driver.fifoNewestSampleTimeEstimate)
    let truth = rig.board.chip.nextSampleTime! - .nanoseconds(Int64(1e7 / 1.021))
    #expect(abs(newest.nanoseconds(since: truth)) < 500_000)
  }
}
