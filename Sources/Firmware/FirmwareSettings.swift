import AttitudeEstimation
import BuildInfo
import Geometry
import HardwareAbstraction
import MPU6050
import Telemetry

/// Everything the loop needs to know, as one value: built from a board file (and an optional
/// calibration file, `apply(_:mounting:)`) by PlumbRuntime's `PlumbSetup`, or directly by
/// tests.
public struct FirmwareSettings: Sendable {
  /// The chip's address on the bus.
  public var address: I2CAddress
  /// The chip's configuration (validated when the loop is made).
  public var sensor: MPU6050Configuration
  /// Whether to run the self-test at start-up (PS §6.1/6.2). A failure is reported, not fatal.
  public var selfTest: Bool
  /// The driver's retry, re-initialisation and stuck-data policy.
  public var recoveryPolicy: MPU6050RecoveryPolicy = .default
  /// Whether the INT pin is wired to the data-ready GPIO. When it is not, the loop drains the
  /// FIFO on a timer from the start.
  public var interruptWired: Bool
  /// Sensor axes → body axes, and the bench calibration.
  public var correction: SampleCorrection
  /// The calibration file's id (frames carry it); 0 when none is loaded.
  public var calibrationID: UInt32
  /// The estimator's settings.
  public var estimator: AttitudeEstimator.Settings
  /// The serial encoding and frames per second (a divisor of the sample rate).
  public var format: TelemetryFormat
  public var outputRateHz: Int
  /// The serial line's baud rate (for the link budget of `format`/`rate` commands).
  public var baudRate: Int
  public var mavlink: MAVLinkIdentity
  /// MAVLink's stream rates at start (parameters may change them; `PlumbSetup` lowers them to
  /// fit the line and says so).
  public var mavlinkRates: MAVLinkStreamRates
  /// Samples discarded after start-up, while the DLPF and the chip settle: 10 (100 ms at
  /// 100 Hz, about 20 DLPF delays at the default 44 Hz setting).
  public var warmUpSamples: Int
  /// The firmware version the `version` command reports.
  public var firmwareVersion: String
  /// Transmit queue size, bytes.
  public var transmitQueueBytes: Int
  /// How often to try to reopen a serial device that went away.
  public var reopenInterval: Duration

  public init(
    address: I2CAddress = .mpu6050, sensor: MPU6050Configuration = .default,
    selfTest: Bool = true, interruptWired: Bool = true,
    correction: SampleCorrection = SampleCorrection(), calibrationID: UInt32 = 0,
    estimator: AttitudeEstimator.Settings = .default, format: TelemetryFormat = .binary,
    outputRateHz: Int = 100, baudRate: Int = 115_200, mavlink: MAVLinkIdentity = MAVLinkIdentity(),
    mavlinkRates: MAVLinkStreamRates = .default,
    warmUpSamples: Int = 10, firmwareVersion: String = PlumbVersion.current,
    transmitQueueBytes: Int = 4096, reopenInterval: Duration = .seconds(1)
  ) {
    self.address = address
    self.sensor = sensor
    self.selfTest = selfTest
    self.interruptWired = interruptWired
    self.correction = correction
    self.calibrationID = calibrationID
    self.estimator = estimator
    self.format = format
    self.outputRateHz = outputRateHz
    self.baudRate = baudRate
    self.mavlink = mavlink
    self.mavlinkRates = mavlinkRates
    self.warmUpSamples = warmUpSamples
    self.firmwareVersion = firmwareVersion
    self.transmitQueueBytes = transmitQueueBytes
    self.reopenInterval = reopenInterval
  }

  /// What is wrong with these settings, or `nil`: the sensor configuration's validation, the
  /// output rate, and the link budget, each with the fix.
  public var problem: String? {
    let validated: ValidatedMPU6050Configuration
    do {
      validated = try sensor.validated()
    } catch {
      return error.description
    }
    let sampleRate = validated.sampleRateHertz
    guard outputRateHz >= 1, Double(outputRateHz) <= sampleRate,
      abs(sampleRate / Double(outputRateHz) - (sampleRate / Double(outputRateHz)).rounded())
        < 1e-9
    else {
      return
        "output rate \(outputRateHz) Hz must divide the \(formatHertz(sampleRate)) sample rate"
    }
    switch LinkBudget.check(
      format: format, outputRateHz: outputRateHz, baudRate: baudRate,
      sampleRateHz: Int(sampleRate.rounded()), mavlinkRates: mavlinkRates)
    {
    case .success: break
    case .failure(let refusal): return refusal.description
    }
    if let problem = estimator.problem { return "estimator: \(problem)" }
    return nil
  }
}

func formatHertz(_ value: Double) -> String {
  value == value.rounded() ? "\(Int(value)) Hz" : "\(value) Hz"
}
