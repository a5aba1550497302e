import Boards
import Firmware
import Geometry
import HardwareAbstraction
import LinuxHardware
import MPU6050
import MPU6050Simulation
import MotionScenarios
import SimulatedHardware

/// Reads samples for a guided calibration: on the data-ready edge, or, once the line has
/// given none for three periods, by polling the chip's status.
struct CalibrationSampler<Bus: I2CBus, Line: DataReadyLine> {
  var driver: MPU6050Driver<Bus>
  var line: Line
  var polling = false
  let periodNanoseconds: Int64

  /// The next sample and its time (the data-ready edge's, or the poll's), or nil when none
  /// came this tick.
  mutating func next<Clock: MonotonicClock>(clock: inout Clock) -> (
    sample: MPU6050Sample, time: Timestamp
  )? {
    let reading: MPU6050Reading
    let time: Timestamp
    if !polling,
      case .edge(let edge)? = try? line.waitForEdge(
        until: clock.now().advanced(byNanoseconds: 3 * periodNanoseconds))
    {
      time = edge
      reading = driver.readSample(at: edge)
    } else {
      polling = true
      clock.sleep(until: clock.now().advanced(byNanoseconds: periodNanoseconds / 4))
      time = clock.now()
      reading = driver.pollDataReady(at: time)
    }
    if case .sample(let sample, false) = reading { return (sample, time) }
    return nil
  }
}

/// A guided procedure that reads the chip: the six-position accelerometer calibration, the
/// IMU session.
protocol CalibrationProcedure {
  associatedtype Output
  associatedtype Failure: Error
  /// The error for a bus, line or chip that could not be opened or started.
  func hardwareFailure(_ message: String) -> Failure
  func measure<Bus: I2CBus, Line: DataReadyLine, Clock: MonotonicClock>(
    _ sampler: inout CalibrationSampler<Bus, Line>, identity: MPU6050Identity, clock: inout Clock
  ) throws(Failure) -> Output
}

/// Opens the board's chip (or, on the simulated board, a simulated unit — the board's seed's
/// typical one unless `simulatedUnit` says — moved by
/// `simulatedMotion` — the body's motion, mounted as the board file says, as a person moves the
/// mounted board) and runs `procedure` on it.
func runCalibration<Procedure: CalibrationProcedure>(
  _ setup: PlumbSetup, simulatedUnit: SimulatedMPU6050Unit? = nil,
  simulatedMotion: () -> any MotionSource, _ procedure: Procedure
) throws(Procedure.Failure) -> Procedure.Output {
  if let simulation = setup.board.simulation {
    var unit = simulatedUnit ?? SimulatedMPU6050Unit.typical(seed: simulation.seed)
    unit.oscillatorError = simulation.oscillatorErrorPercent / 100
    let world = SimulatedMPU6050Board(
      motion: MountedMotion.mount(simulatedMotion(), sensorToBody: setup.board.mounting),
      unit: unit)
    var clock = world.clock
    return try start(
      bus: world.bus, line: world.line, clock: &clock, settings: setup.settings, procedure)
  }
  let bus: LinuxI2CBus
  do {
    bus = try LinuxI2CBus(path: setup.board.i2c.bus)
  } catch {
    throw procedure.hardwareFailure(error.description)
  }
  var clock = LinuxMonotonicClock()
  guard setup.board.dataReady.isWired else {
    return try start(
      bus: bus, line: SelectedLine.notWired, clock: &clock, settings: setup.settings, procedure)
  }
  let selector: GPIOLineSelector
  switch setup.board.dataReady.line {
  case .offset(let offset): selector = .offset(UInt32(offset))
  case .name(let name): selector = .name(name)
  }
  let line: LinuxDataReadyLine
  do {
    line = try LinuxDataReadyLine(
      chip: GPIOChipSelector(setup.board.dataReady.chip), line: selector)
  } catch {
    throw procedure.hardwareFailure(error.description)
  }
  return try start(bus: bus, line: line, clock: &clock, settings: setup.settings, procedure)
}

func start<
  Bus: I2CBus, Line: DataReadyLine, Clock: MonotonicClock, Procedure: CalibrationProcedure
>(
  bus: Bus, line: Line, clock: inout Clock, settings: FirmwareSettings, _ procedure: Procedure
) throws(Procedure.Failure) -> Procedure.Output {
  var driver: MPU6050Driver<Bus>
  let report: MPU6050StartupReport
  do {
    driver = try MPU6050Driver(bus: bus, address: settings.address, configuration: settings.sensor)
    report = try driver.start(clock: &clock, selfTest: false)
  } catch {
    throw procedure.hardwareFailure(error.description)
  }
  var sampler = CalibrationSampler(
    driver: driver, line: line,
    periodNanoseconds: driver.configuration.samplePeriodNanoseconds)
  return try procedure.measure(&sampler, identity: report.identity, clock: &clock)
}

/// Whether `m` maps each axis onto an axis (a quarter-turn mounting): then the body's faces
/// are the chip's, renamed, and a person can be told the body's.
func isQuarterTurn(_ m: Matrix3) -> Bool {
  [m.row0, m.row1, m.row2].allSatisfy { row in
    let values = [abs(row.x), abs(row.y), abs(row.z)].sorted()
    return abs(values[2] - 1) < 1e-9 && values[1] < 1e-9
  }
}
