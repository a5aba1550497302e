import Geometry
import HardwareAbstraction
import MPU6050
import MPU6050Simulation
import SimulatedHardware
import Testing

/// The simulated chip's register semantics, exercised directly on the bus (no driver), with
/// addresses and bits restated from RM-MPU-6000A rev 4.2.
@Suite("Simulated MPU-6050 registers")
struct ChipModelTests {
  let address = I2CAddress(rawValue: 0x68)!

  func makeBoard(unit: SimulatedMPU6050Unit = .ideal, variant: SimulatedMPU6050Variant = .mpu6050)
    -> SimulatedMPU6050Board
  {
    SimulatedMPU6050Board(motion: RestingMotion(), unit: unit, variant: variant)
  }

  func read(_ bus: SimulatedI2CBus, _ register: UInt8, _ count: Int = 1) throws -> [UInt8] {
    try bus.readRegisters(startingAt: register, count: count, at: address)
  }

  /// Wakes the chip: 100 Hz, DLPF_CFG 3, DATA_RDY_EN.
  func wake(_ bus: SimulatedI2CBus) throws {
    try bus.writeRegister(0x6B, value: 0x01, at: address)
    try bus.writeRegister(0x19, value: 0x09, at: address)
    try bus.writeRegister(0x1A, value: 0x03, at: address)
    try bus.writeRegister(0x38, value: 0x01, at: address)
  }

  @Test("power-on: asleep (PWR_MGMT_1 0x40), WHO_AM_I 0x68, no samples, no edges")
  func powerOn() throws {
    let board = makeBoard()
    #expect(try read(board.bus, 0x6B) == [0x40])
    #expect(try read(board.bus, 0x75) == [0x68])
    #expect(try read(board.bus, 0x19, 4) == [0, 0, 0, 0])
    board.clock.advance(by: .milliseconds(100))
    #expect(board.chip.statistics.samplesProduced == 0)
    #expect(board.chip.nextRisingEdge(after: board.clock.now()) == nil)
  }

  @Test("DEVICE_RESET: NACKs while resetting, then every register reset and asleep")
  func deviceReset() throws {
    let board = makeBoard()
    try wake(board.bus)
    board.clock.advance(by: .milliseconds(50))
    #expect(board.chip.statistics.samplesProduced == 5)
    try board.bus.writeRegister(0x6B, value: 0x80, at: address)
    #expect(throws: I2CError.self) { try read(board.bus, 0x75) }
    board.clock.advance(by: .milliseconds(100))
    #expect(try read(board.bus, 0x6B) == [0x40])
    #expect(try read(board.bus, 0x19, 4) == [0, 0, 0, 0])
    #expect(try read(board.bus, 0x38) == [0])
    #expect(board.chip.nextRisingEdge(after: board.clock.now()) == nil)
    #expect(board.chip.statistics.deviceResets == 1)
    #expect(board.chip.statistics.notAcknowledged == 1)
  }

  @Test("data-ready edges at the chip's own rate, only while awake with DATA_RDY_EN")
  func edges() throws {
    var unit = SimulatedMPU6050Unit.ideal
    unit.oscillatorError = 0.03
    let board = makeBoard(unit: unit)
    try wake(board.bus)
    let start = board.clock.now()
    var previous = start
    var intervals: [Int64] = []
    for _ in 0..<50 {
      guard case .edge(let time) = try board.line.waitForEdge(until: previous + .milliseconds(50))
      else {
        Issue.record("no edge")
        return
      }
      intervals.append(time.nanoseconds(since: previous))
      previous = time
    }
    // 10 ms / 1.03 = 9 708 737.9 ns; the first interval is the first sample after waking.
    for interval in intervals.dropFirst() {
      #expect(abs(Double(interval) - 1e7 / 1.03) <= 1, "\(interval)")
    }
    try board.bus.writeRegister(0x38, value: 0x00, at: address)  // DATA_RDY_EN off
    #expect(board.chip.nextRisingEdge(after: board.clock.now()) == nil)
    try board.bus.writeRegister(0x38, value: 0x01, at: address)
    #expect(board.chip.nextRisingEdge(after: board.clock.now()) != nil)
    try board.bus.writeRegister(0x6B, value: 0x41, at: address)  // SLEEP
    #expect(board.chip.nextRisingEdge(after: board.clock.now()) == nil)
  }

  @Test("edges that happened while nobody waited are answered as history")
  func edgeHistory() throws {
    let board = makeBoard()
    try wake(board.bus)
    let start = board.clock.now()
    board.clock.advance(by: .milliseconds(35))
    // Three samples happened at 10, 20, 30 ms: asking from the start returns the first.
    let first = try #require(board.chip.nextRisingEdge(after: start))
    #expect(first == start + .milliseconds(10))
    #expect(board.chip.nextRisingEdge(after: first) == start + .milliseconds(20))
    #expect(board.line.queuedEdgeCount == 3)
  }

  @Test("INT_STATUS: DATA_RDY_INT set per sample, cleared by reading it (not by a burst)")
  func interruptStatus() throws {
    let board = makeBoard()
    try wake(board.bus)
    board.clock.advance(by: .milliseconds(15))
    _ = try read(board.bus, 0x3B, 14)
    #expect(try read(board.bus, 0x3A) == [0x01])
    #expect(try read(board.bus, 0x3A) == [0x00])
    // INT_RD_CLEAR = 1: any read clears.
    try board.bus.writeRegister(0x37, value: 0x10, at: address)
    board.clock.advance(by: .milliseconds(10))
    _ = try read(board.bus, 0x3B, 14)
    #expect(try read(board.bus, 0x3A) == [0x00])
  }

  @Test("a burst reads one sampling instant, converted with the configured ranges")
  func burst() throws {
    let board = makeBoard()
    try wake(board.bus)
    try board.bus.writeRegister(0x1C, value: 0x18, at: address)  // ±16 g
    board.clock.advance(by: .milliseconds(200))
    let bytes = try read(board.bus, 0x3B, 14)
    let z = Int16(bitPattern: UInt16(bytes[4]) << 8 | UInt16(bytes[5]))
    #expect(z == 2048)  // 1 g at 2048 LSB/g
    let temperature = Int16(bitPattern: UInt16(bytes[6]) << 8 | UInt16(bytes[7]))
    // 25 °C = (25 − 36.53) × 340 = −3920.2 → −3920.
    #expect(temperature == -3920)
  }

  @Test("the self-test trim registers hold the unit's codes (RM §4.1 layout)")
  func trimRegisters() throws {
    var unit = SimulatedMPU6050Unit.ideal
    unit.gyroTrimCodes = SIMD3(13, 31, 1)
    unit.accelerometerTrimCodes = SIMD3(22, 9, 31)
    let board = makeBoard(unit: unit)
    #expect(try read(board.bus, 0x0D, 4) == [0b101_01101, 0b010_11111, 0b111_00001, 0b00_10_01_11])
  }

  @Test("FIFO: records in register order, FIFO_RESET only while FIFO_EN is 0, oldest dropped")
  func fifo() throws {
    let board = makeBoard()
    try wake(board.bus)
    try board.bus.writeRegister(0x23, value: 0xF8, at: address)  // accel, temp, gyro xyz
    try board.bus.writeRegister(0x6A, value: 0x40, at: address)  // FIFO_EN
    board.clock.advance(by: .milliseconds(25))
    #expect(try read(board.bus, 0x72, 2) == [0x00, 28])
    let burst = try read(board.bus, 0x3B, 14)
    let records = try read(board.bus, 0x74, 28)
    #expect(Array(records[14..<28]) == burst)
    #expect(try read(board.bus, 0x72, 2) == [0x00, 0x00])
    board.clock.advance(by: .milliseconds(10))
    try board.bus.writeRegister(0x6A, value: 0x44, at: address)  // reset with FIFO_EN set: ignored
    #expect(try read(board.bus, 0x72, 2) == [0x00, 14])
    try board.bus.writeRegister(0x6A, value: 0x04, at: address)  // reset with FIFO_EN clear
    #expect(try read(board.bus, 0x72, 2) == [0x00, 0x00])
    try board.bus.writeRegister(0x6A, value: 0x40, at: address)
    try board.bus.writeRegister(0x38, value: 0x11, at: address)  // + FIFO_OFLOW_EN
    board.clock.advance(by: .seconds(1))
    // 100 records × 14 bytes = 1400 > 1024: full, FIFO_OFLOW_INT set.
    #expect(try read(board.bus, 0x72, 2) == [0x04, 0x00])
    #expect(try read(board.bus, 0x3A)[0] & 0x10 == 0x10)
    let stats = board.chip.statistics
    #expect(stats.fifoBytesDropped == 1400 - 1024)
    #expect(stats.fifoOverflows == 1)
    // 1024 = 73 × 14 + 2: the head is 2 bytes into a record; the tail ends on a record.
    let lastRecord = try read(board.bus, 0x3B, 14)
    var drained: [UInt8] = []
    while drained.count < 1024 {
      drained += try read(board.bus, 0x74, min(32, 1024 - drained.count))
    }
    #expect(Array(drained[(1024 - 14)...]) == lastRecord)
  }

  @Test("same seed, same bytes; another seed, other bytes")
  func determinism() throws {
    func bytes(seed: UInt64) throws -> [UInt8] {
      let board = SimulatedMPU6050Board(motion: RestingMotion(), unit: .typical(seed: seed))
      try wake(board.bus)
      var all: [UInt8] = []
      for _ in 0..<200 {
        board.clock.advance(by: .milliseconds(10))
        all += try read(board.bus, 0x3B, 14)
      }
      return all
    }
    #expect(try bytes(seed: 7) == bytes(seed: 7))
    #expect(try bytes(seed: 7) != bytes(seed: 8))
  }

  @Test("noise at the datasheet density: σ ≈ 0.005 °/s/√Hz × √42 Hz at DLPF_CFG 3")
  func noiseLevel() throws {
    let board = makeBoard(unit: .noisy(seed: 5))
    try wake(board.bus)
    board.clock.advance(by: .milliseconds(100))
    var values: [Double] = []
    for _ in 0..<2000 {
      board.clock.advance(by: .milliseconds(10))
      let bytes = try read(board.bus, 0x47, 2)
      values.append(Double(Int16(bitPattern: UInt16(bytes[0]) << 8 | UInt16(bytes[1]))))
    }
    let mean = values.reduce(0, +) / Double(values.count)
    let sigma = (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count))
      .squareRoot()
    // 0.005 × √42 = 0.0324 °/s = 4.25 counts at 131 LSB/(°/s).
    #expect(abs(sigma - 0.005 * 42.0.squareRoot() * 131) < 0.3, "\(sigma)")
  }
}
