import Boards
import Calibration
import Firmware
import Geometry
import HardwareAbstraction
import LinuxHardware
import MPU6050
import MPU6050Simulation
import MotionScenarios
import Telemetry

/// A board file, its calibration file, and the firmware settings they make: what `plumb run`,
/// `plumb check-board` and the bench tools start from.
///
/// PlumbRuntime is the composition root of the executables (`plumb`, `plumb-probe`, `plumb-hil`):
/// it is the one library that sees both the Linux and the simulated hardware, and it is used by
/// executables only; the firmware libraries receive their hardware as parameters.
public struct PlumbSetup: Sendable {
  public var boardPath: String
  public var board: BoardDefinition
  public var calibration: CalibrationFile?
  public var settings: FirmwareSettings
  /// MAVLink streams lowered to fit the serial line (said at start-up); empty for other formats.
  public var mavlinkLowering: [MAVLinkStreamRates.Lowering] = []
  /// The board file's `mavlink.udp`, checked.
  public var mavlinkUDP: UDPEndpointSpec?

  /// Reads and validates `boardPath` and the calibration file it names, and builds the
  /// firmware settings (with `format` overriding the board's output format).
  public static func load(boardPath: String, format: TelemetryFormat? = nil) throws(SetupError)
    -> PlumbSetup
  {
    let board: BoardDefinition
    do {
      board = try BoardFile.load(path: boardPath)
    } catch {
      throw .board(error)
    }
    if let simulation = board.simulation {
      try checkSimulation(simulation, boardPath: boardPath)
    }
    var calibration: CalibrationFile?
    if let path = board.calibrationPath {
      do {
        calibration = try CalibrationFile.load(path: path)
      } catch {
        throw .calibration(path: path, error)
      }
    }
    let settings: FirmwareSettings
    do {
      settings = try firmwareSettings(board: board, calibration: calibration, format: format)
    } catch {
      guard case .settings(let key, let message, nil) = error else { throw error }
      throw .settings(key: key, message, boardPath: boardPath)
    }
    var setup = PlumbSetup(
      boardPath: boardPath, board: board, calibration: calibration, settings: settings)
    if let udp = board.mavlink.udp {
      do {
        setup.mavlinkUDP = try UDPEndpointSpec.parse(udp)
      } catch {
        throw .settings(key: "mavlink.udp", error.description, boardPath: boardPath)
      }
      guard settings.format == .mavlink else {
        throw .settings(
          key: "mavlink.udp",
          "the UDP link carries the MAVLink stream, and the output is \(settings.format.rawValue): "
            + "set output.format to \"mavlink\" (or drop mavlink.udp)", boardPath: boardPath)
      }
    }
    setup.settings.mavlinkRates = .default
    setup.mavlinkLowering = setup.fitMAVLinkStreams()
    return setup
  }

  /// A simulated board's scenario and fault plan must be ones the simulator has: every command
  /// that reads the board (check-board, run, record, probe, the HIL) refuses the same file the
  /// same way, rather than one saying OK and another refusing it, or probing another motion.
  public static func checkSimulation(_ simulation: SimulationSettings, boardPath: String)
    throws(SetupError)
  {
    if ScenarioCatalog.entry(named: simulation.scenario) == nil {
      throw .settings(
        key: "simulation.scenario",
        "\"\(simulation.scenario)\" is not a scenario; choose one of "
          + ScenarioCatalog.names.joined(separator: ", "), boardPath: boardPath)
    }
    if let faults = simulation.faults, !SimulatedMPU6050FaultPlan.names.contains(faults) {
      throw .settings(
        key: "simulation.faults",
        "\"\(faults)\" is not a fault plan; choose one of "
          + SimulatedMPU6050FaultPlan.names.joined(separator: ", "), boardPath: boardPath)
    }
  }

  /// The firmware settings a board (and its calibration) describe; problems name the board key.
  public static func firmwareSettings(
    board: BoardDefinition, calibration: CalibrationFile?, format: TelemetryFormat? = nil
  ) throws(SetupError) -> FirmwareSettings {
    guard
      let filter = DigitalLowPassFilter.allCases.first(where: {
        Int($0.accelerometerBandwidthHertz) == board.sensor.dlpfBandwidthHz
      }),
      let gyro = GyroFullScale.allCases.first(where: {
        Int($0.degreesPerSecond) == board.sensor.gyroRangeDegreesPerSecond
      }),
      let accel = AccelerometerFullScale.allCases.first(where: {
        Int($0.standardGravities) == board.sensor.accelRangeG
      })
    else {
      throw .settings(key: "sensor", "unsupported sensor setting")
    }
    let sensor = MPU6050Configuration(
      sampleRateHertz: board.sensor.sampleRateHz, lowPassFilter: filter, gyroFullScale: gyro,
      accelerometerFullScale: accel, dataReadyInterrupt: board.dataReady.isWired)
    do {
      _ = try sensor.validated()
    } catch {
      let error = wholeRateAdvice(error)
      // The chip's field names, as the board file spells them.
      let key = error.field == "lowPassFilter" ? "sensor.dlpfHz" : "sensor.sampleRateHz"
      var message = error.description
      if message.hasPrefix(error.field + ": ") {
        message.removeFirst(error.field.count + 2)
      }
      throw .settings(key: key, message)
    }
    guard let address = I2CAddress(rawValue: board.i2c.address) else {
      throw .settings(key: "i2c.address", "not a 7-bit address")
    }
    var settings = FirmwareSettings(
      address: address, sensor: sensor, selfTest: true, interruptWired: board.dataReady.isWired,
      correction: SampleCorrection(mounting: board.mounting), format: format ?? board.output.format,
      outputRateHz: Int(board.output.rateHz.rounded()), baudRate: board.serial.baudRate,
      mavlink: MAVLinkIdentity(
        systemID: UInt8(board.mavlink.systemId), componentID: UInt8(board.mavlink.componentId)))
    if let calibration {
      settings.apply(calibration: calibration, mounting: board.mounting)
    }
    // MAVLink's streams are lowered to fit the line (said at start-up), not refused; a line
    // too slow for the heartbeat and the attitude at 1 Hz is.
    if settings.format == .mavlink,
      let (rates, _) = settings.mavlinkRates.fitted(
        outputRateHz: settings.outputRateHz, baudRate: settings.baudRate)
    {
      settings.mavlinkRates = rates
    }
    switch LinkBudget.check(
      format: settings.format, outputRateHz: settings.outputRateHz,
      baudRate: settings.baudRate,
      sampleRateHz: Int(board.sensor.sampleRateHz.rounded()), mavlinkRates: settings.mavlinkRates)
    {
    case .success: break
    case .failure(let refusal):
      throw .settings(key: "output", refusal.description)
    }
    if let problem = settings.estimator.problem { throw .settings(key: "", problem) }
    // What the loop checks when it starts: check-board must not pass a board the run refuses.
    if let problem = settings.problem { throw .settings(key: "", problem) }
    return settings
  }

  /// `error` with its advice narrowed to the sample rates Plumb runs: whole numbers of hertz
  /// (the frames go out every Nth sample, a whole number of them per second), and filters that
  /// can keep the rate asked for.
  static func wholeRateAdvice(_ error: MPU6050ConfigurationError) -> MPU6050ConfigurationError {
    switch error {
    case .sampleRateNotAchievable(let requested, let output, _):
      let rates = wholeSampleRates(gyroOutputRateHertz: output)
      let nearby =
        rates.filter { $0.hertz < requested }.suffix(2)
        + rates.filter { $0.hertz > requested }
        .prefix(2)
      return .sampleRateNotAchievable(
        requestedHertz: requested, gyroOutputRateHertz: output, nearby: Array(nearby))
    case .bandwidthAliases(let filter, let rate, let folded, _, _):
      let narrower = DigitalLowPassFilter.allCases.filter {
        let divisor = $0.gyroOutputRateHertz / rate
        return $0.bandwidthHertz < rate / 2 && divisor == divisor.rounded() && divisor <= 256
      }
      let faster = wholeSampleRates(gyroOutputRateHertz: filter.gyroOutputRateHertz).first {
        $0.hertz / 2 > filter.bandwidthHertz
      }
      return .bandwidthAliases(
        lowPassFilter: filter, sampleRateHertz: rate, foldedFrequencyHertz: folded,
        narrowerFilters: narrower, fasterRate: faster)
    default:
      return error
    }
  }

  /// The whole-hertz rates SMPLRT_DIV 0…255 make from `gyroOutputRateHertz`, slowest first.
  static func wholeSampleRates(gyroOutputRateHertz: Double) -> [AchievableSampleRate] {
    (0...255).reversed()
      .map { AchievableSampleRate(divider: UInt8($0), outputRateHertz: gyroOutputRateHertz) }
      .filter { $0.hertz == $0.hertz.rounded() }
  }
}

/// Why a board could not be set up. Each names the file and the key, and says what to do.
public enum SetupError: Error, CustomStringConvertible, Sendable {
  case board(BoardFileError)
  case calibration(path: String, CalibrationFileError)
  /// A combination the board file allows key by key but that cannot work (aliasing, a link
  /// that cannot carry the frames).
  case settings(key: String, String, boardPath: String? = nil)

  public var description: String {
    switch self {
    case .board(let error): error.description
    case .calibration(_, let error): error.description
    case .settings(let key, let message, let path):
      (path.map { "board file \($0): " } ?? "")
        + (key.isEmpty ? message : "key \"\(key)\": \(message)")
    }
  }
}
