import Firmware
import Geometry
import MPU6050
import MPU6050Simulation
import MotionScenarios
import Telemetry

/// What a hardware-in-the-loop run plays and how: the scenario, the faults, the output, and
/// the extra stresses (serial unplugs, garbage on the command input, host commands).
public struct HILOptions: Sendable {
  /// A `ScenarioCatalog` name.
  public var scenario: String
  /// A `SimulatedMPU6050FaultPlan.catalogue` name.
  public var faults: String
  /// Seconds of simulated time; `nil`: the scenario's natural length (60 s when it has none).
  public var seconds: Double?
  /// Seeds the scenario, the unit, the fault plan and every random stress.
  public var seed: UInt64
  /// The serial encoding.
  public var format: TelemetryFormat
  /// Run the simulated chip on the real clock, frames over a real pseudo-terminal, with this
  /// host's serial port and clock; `nil`: on a manual clock, as fast as the machine goes.
  public var realTime: (any HILRealTimeHost)?
  /// Whether the run is in real time (`realTime` is given).
  public var realtime: Bool { realTime != nil }
  /// Real-time runs: also pass every byte the host receives, as it arrives, to a second
  /// pseudo-terminal whose terminal side is linked here, for an outside reader such as
  /// `plumb-monitor PATH` (a tap on the line, like a second receiver on the UART's TX wire).
  public var monitorLinkPath: String?
  /// When the fault plan's faults begin, seconds of motion time (5: after start-up, warm-up and
  /// the estimator's first second, so the fault meets a running loop).
  public var faultStartSeconds: Double
  /// Serial unplugs (the USB adapter pulled out and put back).
  public var serialUnplugs: [SerialUnplug]
  /// Random bytes on the command input.
  public var commandGarbage: [GarbageBurst]
  /// Host command lines to send (each gets `\n`).
  public var hostCommands: [ScheduledCommand]
  /// The chip's configuration; `nil` for the firmware's default (100 Hz, DLPF 44 Hz).
  public var sensor: MPU6050Configuration?
  /// Frames per second; `nil` for one frame per sample.
  public var outputRateHz: Int?
  /// The serial line's baud rate; `nil` for 115200.
  public var baudRate: Int?
  /// Sensor axes → body axes (`body = mounting · sensor`), as a board file's `mounting` gives
  /// it: the simulated chip sits on the moving body so, and the firmware is told. Identity by
  /// default (the chip's axes are the body's).
  public var mounting: Matrix3
  /// The board file the sensor, output and mounting came from (`plumb-hil run --board`), for
  /// the report.
  public var boardPath: String?
  /// Run the self-test at start-up, as a board does (0.6 s; the scenario must rest then).
  public var selfTest: Bool
  /// The simulated unit; `nil` for `SimulatedMPU6050Unit.typical(seed:)`.
  public var unit: SimulatedMPU6050Unit?
  /// A calibration the firmware applies, as a board file's `calibration` key does (mounted as
  /// `mounting` says): a calibration file's values, `FirmwareCalibration(file)` (PlumbRuntime).
  /// It should be the simulated unit's own: made by `plumb record` / `plumb-cal save` /
  /// `plumb calibrate accel` on the simulated board with the same seed, whose unit is
  /// `typical(seed:)`.
  public var calibration: FirmwareCalibration?
  /// Run seed 001's plain complementary filter with this time constant, seconds, instead of
  /// Plumb's estimator (`AttitudeEstimator.Settings.plain`: no rest detection, no bias
  /// estimation, no rejection; a calibration's bias and temperature slope are still
  /// subtracted) — to see what the estimator buys on a scenario. `nil`: Plumb's.
  public var plainFilterSeconds: Double? = nil
  /// Keep every byte the host received (golden files), and every decoded frame (analysis).
  public var keepBytes: Bool
  public var keepFrames: Bool
  /// Keep, for every frame compared with the truth, the truth and the inclination error
  /// (`HILResult.truthRows`; plumb-hil's `--truth FILE.csv`).
  public var keepTruth: Bool = false
  /// Asked once per loop step; when it answers true the run ends there, as if it had reached
  /// its length, and the result is marked `interrupted` (plumb-hil: Ctrl-C). A flag, not a
  /// clock: the loop reads no wall clock.
  public var shouldStop: (@Sendable () -> Bool)?
  /// Points per plotted series (the run is binned to this many; memory stays flat however long
  /// the run).
  public var plotPoints: Int

  public init(
    scenario: String, faults: String = "none", seconds: Double? = nil, seed: UInt64 = 1,
    format: TelemetryFormat = .binary, realTime: (any HILRealTimeHost)? = nil
  ) {
    self.scenario = scenario
    self.faults = faults
    self.seconds = seconds
    self.seed = seed
    self.format = format
    self.realTime = realTime
    monitorLinkPath = nil
    faultStartSeconds = 5
    serialUnplugs = []
    commandGarbage = []
    hostCommands = []
    sensor = nil
    outputRateHz = nil
    baudRate = nil
    mounting = .identity
    boardPath = nil
    selfTest = true
    unit = nil
    calibration = nil
    keepBytes = false
    keepFrames = false
    plotPoints = 1200
    shouldStop = nil
  }
}

/// The serial device disappears at `atSeconds` (motion time) for `forSeconds`.
public struct SerialUnplug: Hashable, Sendable {
  public var atSeconds: Double
  public var forSeconds: Double
  public init(atSeconds: Double, forSeconds: Double) {
    self.atSeconds = atSeconds
    self.forSeconds = forSeconds
  }
}

/// Random bytes sent to the command input at `bytesPerSecond` from `atSeconds` for
/// `forSeconds` (motion time), seeded by the run's seed and `stream`.
public struct GarbageBurst: Hashable, Sendable {
  public var atSeconds: Double
  public var forSeconds: Double
  public var bytesPerSecond: Int
  public init(atSeconds: Double, forSeconds: Double, bytesPerSecond: Int) {
    self.atSeconds = atSeconds
    self.forSeconds = forSeconds
    self.bytesPerSecond = bytesPerSecond
  }
}

/// A host command line sent at `atSeconds` (motion time).
public struct ScheduledCommand: Hashable, Sendable {
  public var atSeconds: Double
  public var line: String
  public init(atSeconds: Double, line: String) {
    self.atSeconds = atSeconds
    self.line = line
  }
}

/// Why a run could not be made or started.
public enum HILError: Error, CustomStringConvertible, Sendable {
  case unknownScenario(String)
  case unknownFaultPlan(String)
  case invalid(String)
  case startFailed(String)
  case pseudoTerminal(String)

  public var description: String {
    switch self {
    case .unknownScenario(let name):
      "no scenario \"\(name)\"; choose one of \(ScenarioCatalog.names.joined(separator: ", ")) "
        + "(plumb-hil scenarios lists them)"
    case .unknownFaultPlan(let name):
      "no fault plan \"\(name)\"; choose one of "
        + "\(SimulatedMPU6050FaultPlan.names.joined(separator: ", ")) (plumb-hil faults lists them)"
    case .invalid(let message): message
    case .startFailed(let message): "the firmware did not start: \(message)"
    case .pseudoTerminal(let message): "real-time run: \(message)"
    }
  }
}
