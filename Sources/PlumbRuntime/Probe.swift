import Boards
import Firmware
import HardwareAbstraction
import LinuxHardware
import MPU6050
import MPU6050Simulation
import MotionScenarios
import SimulatedHardware

/// What `plumb-probe` found.
public struct ProbeReport: Sendable {
  public var startup: MPU6050StartupReport
  public var registers: MPU6050RegisterDump
  /// Samples: the time (edge or poll) and the SI values.
  public var samples: [(time: Timestamp, sample: MPU6050Sample)]
  /// How the samples were timed.
  public var timing: String
}

/// Why a probe failed: the hardware's error, with its fix.
public enum ProbeError: Error, CustomStringConvertible, Sendable {
  case i2c(I2CError)
  case dataReady(DataReadyError)
  case sensor(MPU6050Error)
  case settings(String)

  public var description: String {
    switch self {
    case .i2c(let error): error.description
    case .dataReady(let error): error.description
    case .sensor(let error): error.description
    case .settings(let message): message
    }
  }
}

/// Identifies the board's chip, self-tests it, dumps its registers decoded and reads `count`
/// samples: the bring-up check for a new board or a suspicious sensor. Real boards open the
/// devices the board file names; the simulated board builds its simulated world.
public func probeBoard(_ setup: PlumbSetup, samples count: Int, selfTest: Bool) throws(ProbeError)
  -> ProbeReport
{
  let board = setup.board
  if let simulation = board.simulation {
    let clock = ManualClock()
    let motion = MountedMotion.mount(
      ScenarioCatalog.entry(named: simulation.scenario)?.make(simulation.seed, 60)
        ?? RestScenario(), sensorToBody: board.mounting)
    let plan =
      SimulatedMPU6050FaultPlan.named(
        simulation.faults ?? "none", start: clock.now() + .seconds(5), seed: simulation.seed)
      ?? .none
    var unit = SimulatedMPU6050Unit.typical(seed: simulation.seed)
    unit.oscillatorError = simulation.oscillatorErrorPercent / 100
    let world = SimulatedMPU6050Board(motion: motion, unit: unit, faultPlan: plan, clock: clock)
    var clockCopy = clock
    return try probe(
      bus: world.bus, line: plan.interruptWired ? world.line : nil, clock: &clockCopy,
      settings: setup.settings, count: count, selfTest: selfTest)
  }
  let bus: LinuxI2CBus
  do {
    bus = try LinuxI2CBus(path: board.i2c.bus)
  } catch {
    throw .i2c(error)
  }
  var line: LinuxDataReadyLine?
  if board.dataReady.isWired {
    let selector: GPIOLineSelector
    switch board.dataReady.line {
    case .offset(let offset): selector = .offset(UInt32(offset))
    case .name(let name): selector = .name(name)
    }
    do {
      line = try LinuxDataReadyLine(chip: GPIOChipSelector(board.dataReady.chip), line: selector)
    } catch {
      throw .dataReady(error)
    }
  }
  var clock = LinuxMonotonicClock()
  return try probe(
    bus: bus, line: line, clock: &clock, settings: setup.settings, count: count,
    selfTest: selfTest)
}

func probe<Bus: I2CBus, Line: DataReadyLine, Clock: MonotonicClock>(
  bus: Bus, line: Line?, clock: inout Clock, settings: FirmwareSettings, count: Int,
  selfTest: Bool
) throws(ProbeError) -> ProbeReport {
  var driver: MPU6050Driver<Bus>
  do {
    driver = try MPU6050Driver(
      bus: bus, address: settings.address, configuration: settings.sensor)
  } catch {
    throw .sensor(error)
  }
  let startup: MPU6050StartupReport
  let registers: MPU6050RegisterDump
  do {
    startup = try driver.start(clock: &clock, selfTest: selfTest)
    registers = try driver.readRegisterDump()
  } catch {
    throw .sensor(error)
  }
  var samples: [(time: Timestamp, sample: MPU6050Sample)] = []
  let period = driver.configuration.samplePeriodNanoseconds
  var timing = "data-ready edges (kernel timestamps)"
  var line = line
  if line != nil {
    // Drop edges that queued during start-up.
    while case .edge? = try? line?.waitForEdge(until: .zero) {}
  } else {
    timing = "polling INT_STATUS (INT not wired): times are poll times"
  }
  var attempts = 0
  while samples.count < count && attempts < count * 10 + 100 {
    attempts += 1
    let reading: MPU6050Reading
    let time: Timestamp
    if var edgeLine = line {
      let deadline = clock.now().advanced(byNanoseconds: 3 * period)
      let wait: EdgeWait
      do {
        wait = try edgeLine.waitForEdge(until: deadline)
      } catch {
        throw .dataReady(error)
      }
      line = edgeLine
      switch wait {
      case .edge(let edge):
        time = edge
        reading = driver.readSample(at: edge)
      case .timedOut:
        if samples.isEmpty && attempts > 3 {
          throw .settings(
            "no data-ready edge in \(attempts) waits of 3 sample periods: check the INT wire and the board file's dataReady chip/line, or set dataReady.wired false"
          )
        }
        continue
      }
    } else {
      clock.sleep(until: clock.now().advanced(byNanoseconds: period / 4))
      time = clock.now()
      reading = driver.pollDataReady(at: time)
    }
    switch reading {
    case .sample(let sample, let isRepeat) where !isRepeat:
      samples.append((time, sample))
    case .unavailable(.busError(let error)):
      throw .i2c(error)
    default:
      continue
    }
  }
  return ProbeReport(startup: startup, registers: registers, samples: samples, timing: timing)
}
