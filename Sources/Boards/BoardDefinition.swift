import Geometry
import Telemetry

/// Everything Plumb needs to know about one board: where the sensor is, how it is wired and
/// mounted, how to configure it, and where the frames go. Read from a JSON board file (schema in
/// `Boards/README.md`) by `BoardFile.load(path:)`; validated key by key, so every error names the
/// key and the line.
///
/// The definition holds the values as people write them (Hz, °/s, g); the firmware turns them into
/// the driver's configuration and validates the combination (e.g. aliasing) there.
public struct BoardDefinition: Hashable, Sendable {
  /// The schema version this definition was read with.
  public static let schemaVersion = 1

  /// A short identifier, e.g. `raspberry-pi-4`.
  public var name: String
  /// One sentence for people.
  public var description: String
  public var i2c: I2CSettings
  public var dataReady: DataReadySettings
  public var serial: SerialSettings
  /// Sensor axes → body axes: `body = mounting * sensor`. A proper rotation.
  public var mounting: Matrix3
  public var sensor: SensorSettings
  public var output: OutputSettings
  public var mavlink: MAVLinkSettings
  /// The calibration file, resolved against the board file's folder; `nil` when none.
  public var calibrationPath: String?
  /// Present only for the simulated board: what the simulated world looks like.
  public var simulation: SimulationSettings?

  public init(
    name: String, description: String, i2c: I2CSettings, dataReady: DataReadySettings,
    serial: SerialSettings, mounting: Matrix3 = .identity, sensor: SensorSettings = .init(),
    output: OutputSettings = .init(), mavlink: MAVLinkSettings = .init(),
    calibrationPath: String? = nil, simulation: SimulationSettings? = nil
  ) {
    self.name = name
    self.description = description
    self.i2c = i2c
    self.dataReady = dataReady
    self.serial = serial
    self.mounting = mounting
    self.sensor = sensor
    self.output = output
    self.mavlink = mavlink
    self.calibrationPath = calibrationPath
    self.simulation = simulation
  }

  /// Whether this board runs on simulated hardware.
  public var isSimulated: Bool { simulation != nil }
}

/// Where the sensor is on the I2C bus.
public struct I2CSettings: Hashable, Sendable {
  /// The bus device, e.g. `/dev/i2c-1`; `simulated` for the simulated board.
  public var bus: String
  /// The 7-bit address: `0x68` (AD0 low) or `0x69` (AD0 high).
  public var address: UInt8

  public init(bus: String, address: UInt8 = 0x68) {
    self.bus = bus
    self.address = address
  }
}

/// Which GPIO carries the sensor's INT (data-ready) pin.
public struct DataReadySettings: Hashable, Sendable {
  /// The GPIO chip: a path (`/dev/gpiochip0`), a name (`gpiochip0`) or a label
  /// (`pinctrl-bcm2711`). Labels are stable across kernels where numbers are not (Raspberry Pi 5).
  public var chip: String
  /// The line: an offset on that chip, or a line name (`GPIO17`).
  public var line: LineSelector
  /// `nil` for a board whose INT pin is not wired: the loop polls the FIFO on a timer.
  public var isWired: Bool

  public init(chip: String, line: LineSelector, isWired: Bool = true) {
    self.chip = chip
    self.line = line
    self.isWired = isWired
  }
}

/// A GPIO line by offset or by name.
public enum LineSelector: Hashable, Sendable, CustomStringConvertible {
  case offset(Int)
  case name(String)

  public var description: String {
    switch self {
    case .offset(let n): String(n)
    case .name(let s): s
    }
  }
}

/// Where frames go.
public struct SerialSettings: Hashable, Sendable {
  /// The serial device, e.g. `/dev/serial0`; `stdout` writes to standard output.
  public var device: String
  /// 8N1 baud rate, one of `supportedBaudRates`.
  public var baudRate: Int
  /// The baud rates a board file may give (the standard rates termios sets on every SBC UART).
  public static let supportedBaudRates = [
    9600, 19200, 38400, 57600, 115_200, 230_400, 460_800, 921_600,
  ]

  public init(device: String, baudRate: Int = 115_200) {
    self.device = device
    self.baudRate = baudRate
  }
}

/// The sensor's configuration as people write it. Defaults: 100 Hz with the 44 Hz DLPF (the
/// highest bandwidth under the 50 Hz Nyquist limit), ±500 °/s, ±4 g.
public struct SensorSettings: Hashable, Sendable {
  public var sampleRateHz: Double
  /// The accelerometer's DLPF bandwidth in Hz as the register map lists it (260, 184, 94, 44, 21,
  /// 10, 5); the gyroscope's follows from the same DLPF_CFG.
  public var dlpfBandwidthHz: Int
  public var gyroRangeDegreesPerSecond: Int
  public var accelRangeG: Int

  public init(
    sampleRateHz: Double = 100, dlpfBandwidthHz: Int = 44, gyroRangeDegreesPerSecond: Int = 500,
    accelRangeG: Int = 4
  ) {
    self.sampleRateHz = sampleRateHz
    self.dlpfBandwidthHz = dlpfBandwidthHz
    self.gyroRangeDegreesPerSecond = gyroRangeDegreesPerSecond
    self.accelRangeG = accelRangeG
  }
}

/// What goes out, how often.
public struct OutputSettings: Hashable, Sendable {
  public var format: TelemetryFormat
  /// Frames per second; at most the sample rate, and a divisor of it.
  public var rateHz: Double

  public init(format: TelemetryFormat = .binary, rateHz: Double = 100) {
    self.format = format
    self.rateHz = rateHz
  }
}

/// MAVLink identity (used only with the `mavlink` format).
public struct MAVLinkSettings: Hashable, Sendable {
  /// 1 … 255; 1 is the usual autopilot/vehicle id.
  public var systemId: Int
  /// 1 … 255; the default is MAV_COMP_ID_IMU, 200.
  public var componentId: Int
  /// The MAVLink stream over UDP as well (`plumb run --mavlink-udp`): `HOST:PORT` or
  /// `listen:[HOST:]PORT`, checked when the board is set up.
  public var udp: String?

  public init(systemId: Int = 1, componentId: Int = 200, udp: String? = nil) {
    self.systemId = systemId
    self.componentId = componentId
    self.udp = udp
  }
}

/// The simulated board's world: which motion, which unit, which faults.
public struct SimulationSettings: Hashable, Sendable {
  /// A scenario name (see `plumb-hil scenarios`).
  public var scenario: String
  /// The seed for every random draw (noise, per-unit errors, jitter).
  public var seed: UInt64
  /// How far the simulated chip's oscillator is off nominal, in percent (PS §7.15: ±1 % over
  /// temperature; clones are worse).
  public var oscillatorErrorPercent: Double
  /// A named fault plan, or `nil` for none.
  public var faults: String?

  public init(
    scenario: String = "handheld", seed: UInt64 = 1, oscillatorErrorPercent: Double = 0.7,
    faults: String? = nil
  ) {
    self.scenario = scenario
    self.seed = seed
    self.oscillatorErrorPercent = oscillatorErrorPercent
    self.faults = faults
  }
}
