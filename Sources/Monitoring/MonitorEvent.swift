import Geometry
import HardwareAbstraction
import Telemetry

/// One telemetry frame as the monitor shows it, whatever the format carried it.
public struct MonitorFrame: Hashable, Sendable {
  /// The format it came in.
  public var format: TelemetryFormat
  /// The frame's sequence number (binary, text), or MAVLink's 8-bit packet sequence.
  public var sequence: UInt32
  /// Sample time, ns: exact in binary, to the ms in text and MAVLink (`time_boot_ms`).
  public var sampleTimeNanoseconds: Int64
  /// Body → reference (z up) attitude, Plumb's convention.
  public var attitude: Quaternion
  /// Roll, pitch and yaw for display (FORMATS.md §1: aerospace ZYX in NED/FRD); for text
  /// frames, the line's own angles.
  public var angles: NEDEulerAngles
  /// Not carried by MAVLink's ATTITUDE_QUATERNION.
  public var flags: TelemetryFlags?
  /// °C; not carried by MAVLink's ATTITUDE_QUATERNION.
  public var temperatureCelsius: Double?
  public var missedSamples: UInt32?
  public var latencyMicroseconds: UInt32?
  /// The calibration file's id (binary only; 0 = none).
  public var calibrationID: UInt32?
  /// The gyro-bias estimate, body frame, rad/s (binary only).
  public var gyroBiasRadiansPerSecond: Vector3?
  /// The linear acceleration, gravity removed, reference frame, m/s² (binary only;
  /// `binary-imu` recomputes it from the specific force).
  public var linearAccelerationMetersPerSecondSquared: Vector3?
  /// The bias-corrected angular rate, body frame (FLU), rad/s: `binary-imu`, and MAVLink's
  /// ATTITUDE_QUATERNION (its FRD rates turned into Plumb's body axes).
  public var rateRadiansPerSecond: Vector3?
  /// The specific force (the accelerometer's reading), body frame, m/s² (`binary-imu`).
  public var specificForceMetersPerSecondSquared: Vector3?
  /// The estimator's uncertainties and the sensors' noise (`binary-imu`).
  public var uncertainty: EstimateUncertainty?

  public init(
    format: TelemetryFormat, sequence: UInt32, sampleTimeNanoseconds: Int64,
    attitude: Quaternion, angles: NEDEulerAngles, flags: TelemetryFlags? = nil,
    temperatureCelsius: Double? = nil, missedSamples: UInt32? = nil,
    latencyMicroseconds: UInt32? = nil, calibrationID: UInt32? = nil,
    gyroBiasRadiansPerSecond: Vector3? = nil,
    linearAccelerationMetersPerSecondSquared: Vector3? = nil, rateRadiansPerSecond: Vector3? = nil,
    specificForceMetersPerSecondSquared: Vector3? = nil, uncertainty: EstimateUncertainty? = nil
  ) {
    self.rateRadiansPerSecond = rateRadiansPerSecond
    self.specificForceMetersPerSecondSquared = specificForceMetersPerSecondSquared
    self.uncertainty = uncertainty
    self.gyroBiasRadiansPerSecond = gyroBiasRadiansPerSecond
    self.linearAccelerationMetersPerSecondSquared = linearAccelerationMetersPerSecondSquared
    self.format = format
    self.sequence = sequence
    self.sampleTimeNanoseconds = sampleTimeNanoseconds
    self.attitude = attitude
    self.angles = angles
    self.flags = flags
    self.temperatureCelsius = temperatureCelsius
    self.missedSamples = missedSamples
    self.latencyMicroseconds = latencyMicroseconds
    self.calibrationID = calibrationID
  }
}

/// Something the monitor reports while it runs. The library does not print: the executable
/// (or a test, or the HIL runner) decides what to do with each event; `MonitorPrinter` turns
/// them into lines.
public enum MonitorEvent: Hashable, Sendable {
  /// A valid telemetry frame.
  case frame(MonitorFrame)
  /// A reply to a host command (`OK …`/`ERR …`), in any format.
  case reply(HostReply)
  /// A MAVLink HEARTBEAT (1 Hz) with its `MAV_STATE`, and all its fields.
  case heartbeat(
    systemID: UInt8, componentID: UInt8, systemStatus: UInt8,
    fields: MAVLinkMessage.Heartbeat = MAVLinkMessage.Heartbeat(
      type: 0, autopilot: 0, systemStatus: 0))
  /// A MAVLink telemetry message beside the attitude and the heartbeat: HIGHRES_IMU, ATTITUDE
  /// or SYS_STATUS, with all its fields (`--json` shows them; the other styles do not).
  case mavlinkMessage(MAVLinkPacket)
  /// The statistics so far: every `--stats-every` seconds of sample time, and once at the end
  /// (`final`).
  case statistics(MonitorStatistics, final: Bool)
  /// Something about the link or the session.
  case notice(MonitorNotice)
}

/// What happened to the link or the session, for a person or a script.
public enum MonitorNotice: Hashable, Sendable {
  /// Automatic detection settled on a format.
  case formatDetected(TelemetryFormat)
  /// A host command (`--send`) was written to the device.
  case sent(command: String)
  /// No reply arrived within the timeout after the commands were sent.
  case noReply(commands: [String], waitedNanoseconds: Int64)
  /// The serial device went away (a USB adapter unplugged).
  case disconnected(input: String, error: SerialError)
  /// Waiting for it to come back (`--reopen`).
  case waitingForDevice(input: String)
  /// It is back but could not be opened yet (e.g. udev has not set its group); still waiting.
  case reopenRefused(SerialError)
  /// It is back and open again.
  case reopened(input: String)
}
