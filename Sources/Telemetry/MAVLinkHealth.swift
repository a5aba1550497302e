/// What Plumb's SYS_STATUS says (FORMATS.md "MAVLink v2", "SYS_STATUS"). The loop that owns
/// the encoder refreshes it once a second; the counters are the run's totals, held at 65535.
public struct MAVLinkHealth: Hashable, Sendable {
  /// `load`: the share of each sample period the loop spent between the data-ready edge and
  /// the frame (the frame's latency over the period), averaged over the last second, ‰.
  public var loadPermille: UInt16 = 0
  /// `drop_rate_comm`: frames dropped (queue full or the line gone) over the last second, as a
  /// share of the frames made, in hundredths of a percent.
  public var dropRateCentipercent: UInt16 = 0
  /// `errors_comm`: MAVLink packets received that were not accepted (bad CRC, unknown or
  /// malformed) plus text command errors.
  public var communicationErrors: UInt16 = 0
  /// `errors_count1`: samples missed.
  public var missedSamples: UInt16 = 0
  /// `errors_count2`: sensor reads that failed (I²C).
  public var failedReads: UInt16 = 0
  /// `errors_count3`: frames dropped.
  public var framesDropped: UInt16 = 0
  /// `errors_count4`: host replies dropped (the transmit queue was full).
  public var repliesDropped: UInt16 = 0

  public init() {}

  /// The gyro and accelerometer bits: present and enabled always; healthy unless the frame
  /// says the bus is recovering or a reading clipped.
  public static let sensors = MAVLink.sensor3DGyro | MAVLink.sensor3DAccel

  /// The SYS_STATUS for a frame with `flags`.
  public func message(_ flags: TelemetryFlags) -> MAVLinkMessage.SystemStatus {
    let unhealthy = flags.contains(.i2cRecovery) || flags.contains(.clipping)
    return MAVLinkMessage.SystemStatus(
      sensorsPresent: Self.sensors, sensorsEnabled: Self.sensors,
      sensorsHealth: unhealthy ? 0 : Self.sensors, loadPermille: loadPermille,
      dropRateCommunicationCentipercent: dropRateCentipercent,
      communicationErrors: communicationErrors, errorsCount1: missedSamples,
      errorsCount2: failedReads, errorsCount3: framesDropped, errorsCount4: repliesDropped)
  }
}

extension TelemetryEncoder {
  /// ATTITUDE for a frame: the NED angles of its attitude (`NEDEulerAngles`), the body rates in
  /// FRD.
  static func attitude(_ frame: TelemetryFrame) -> MAVLinkMessage.Attitude {
    let angles = NEDEulerAngles(plumbAttitude: frame.attitude)
    let rate = MAVLinkFrames.flipYZ(frame.rateRadiansPerSecond)
    return MAVLinkMessage.Attitude(
      timeBootMilliseconds: timeBootMilliseconds(frame.sampleTimeNanoseconds),
      rollRadians: Float(angles.rollRadians), pitchRadians: Float(angles.pitchRadians),
      yawRadians: Float(angles.yawRadians),
      rateRadiansPerSecond: MAVLinkVector(x: Float(rate.x), y: Float(rate.y), z: Float(rate.z)))
  }
}

extension TelemetryEncoder {
  /// One of the messages Plumb streams, made from `frame` as the stream makes it (for
  /// MAV_CMD_REQUEST_MESSAGE): HEARTBEAT (0), SYS_STATUS (1), ATTITUDE (30),
  /// ATTITUDE_QUATERNION (31), HIGHRES_IMU (105); `nil` for any other id.
  public static func message(
    _ messageID: UInt32, for frame: TelemetryFrame, health: MAVLinkHealth,
    identity: MAVLinkIdentity = MAVLinkIdentity()
  ) -> MAVLinkMessage? {
    switch messageID {
    case 0:
      return .heartbeat(
        MAVLinkMessage.Heartbeat(
          type: MAVLink.typeIMU, autopilot: identity.autopilot,
          systemStatus: systemStatus(frame.flags)))
    case 1:
      return .systemStatus(health.message(frame.flags))
    case 30:
      return .attitude(attitude(frame))
    case 31:
      return .attitudeQuaternion(attitudeQuaternion(frame))
    case 105:
      return .highResIMU(highResIMU(frame))
    default:
      return nil
    }
  }
}
