import Geometry

/// One output frame: what the loop hands the telemetry encoders once per output period.
///
/// A plain value with no references, so the loop fills one in place per sample without
/// allocating. Every quantity carries its unit in its name; conventions follow DESIGN.md
/// ("Frames and conventions") and seed 003:
///
/// - **Reference frame**: right-handed, z up, x = the heading at start. There is no
///   magnetometer, so yaw is relative to the start heading and drifts slowly.
/// - **Body frame**: the board's axes after the mounting rotation, z up when the board lies flat.
/// - **Attitude**: maps body-frame vectors into the reference frame (`attitude.rotate(v_body)`),
///   scalar first `(w, x, y, z)`.
///
/// The formats carry different subsets (FORMATS.md lists which field goes where).
public struct TelemetryFrame: Hashable, Sendable {
  /// Output frame counter; wraps at 2³² (about 497 days at 100 Hz). Consecutive frames differ by
  /// one, so a host counts lost frames from gaps.
  public var sequence: UInt32
  /// When the sample was taken: the data-ready edge time on `CLOCK_MONOTONIC`, nanoseconds
  /// (not the time of the read or of the write).
  public var sampleTimeNanoseconds: Int64
  /// Body → reference rotation, unit quaternion.
  public var attitude: Quaternion
  /// The gyroscope bias the estimator is currently subtracting, rad/s, body frame.
  public var gyroBiasRadiansPerSecond: Vector3
  /// Angular rate with the bias removed, rad/s, body frame.
  public var rateRadiansPerSecond: Vector3
  /// Acceleration with gravity removed, m/s², in the **reference** frame (z up): a board at rest
  /// reads (0, 0, 0); lifted upward it reads positive z.
  public var linearAccelerationMetersPerSecondSquared: Vector3
  /// The gravity vector in the body frame, m/s²: (0, 0, −9.80665) for a board lying flat.
  public var gravityBodyMetersPerSecondSquared: Vector3
  /// Die temperature, °C (RM §4.18: TEMP_OUT / 340 + 36.53).
  public var temperatureCelsius: Double
  /// Health and state flags.
  public var flags: TelemetryFlags
  /// Samples the chip produced that never reached the estimator, cumulative since start.
  public var missedSamples: UInt32
  /// Time from the data-ready edge to the write of this frame, µs.
  public var latencyMicroseconds: UInt32
  /// Identifies the calibration file in use; 0 = none loaded.
  public var calibrationID: UInt32
  /// What the estimator knows of its own accuracy, and the sensor's noise: the figures a
  /// consumer builds covariances from (the `binary-imu` format carries them).
  public var uncertainty: EstimateUncertainty

  public init(
    sequence: UInt32 = 0, sampleTimeNanoseconds: Int64 = 0, attitude: Quaternion = .identity,
    gyroBiasRadiansPerSecond: Vector3 = .zero, rateRadiansPerSecond: Vector3 = .zero,
    linearAccelerationMetersPerSecondSquared: Vector3 = .zero,
    gravityBodyMetersPerSecondSquared: Vector3 = Vector3(0, 0, -standardGravity),
    temperatureCelsius: Double = 25, flags: TelemetryFlags = [], missedSamples: UInt32 = 0,
    latencyMicroseconds: UInt32 = 0, calibrationID: UInt32 = 0,
    uncertainty: EstimateUncertainty = EstimateUncertainty()
  ) {
    self.sequence = sequence
    self.sampleTimeNanoseconds = sampleTimeNanoseconds
    self.attitude = attitude
    self.gyroBiasRadiansPerSecond = gyroBiasRadiansPerSecond
    self.rateRadiansPerSecond = rateRadiansPerSecond
    self.linearAccelerationMetersPerSecondSquared = linearAccelerationMetersPerSecondSquared
    self.gravityBodyMetersPerSecondSquared = gravityBodyMetersPerSecondSquared
    self.temperatureCelsius = temperatureCelsius
    self.flags = flags
    self.missedSamples = missedSamples
    self.latencyMicroseconds = latencyMicroseconds
    self.calibrationID = calibrationID
    self.uncertainty = uncertainty
  }

  /// The specific force an accelerometer would read, m/s², body frame: linear acceleration
  /// (rotated into the body) minus gravity. Flat and at rest: (0, 0, +9.80665).
  public var specificForceBodyMetersPerSecondSquared: Vector3 {
    attitude.inverseRotate(linearAccelerationMetersPerSecondSquared)
      - gravityBodyMetersPerSecondSquared
  }
}

/// One standard deviation of what the estimate and the readings may be off by (FORMATS.md §3,
/// `binary-imu`): the attitude's, from the estimator's state (`AttitudeEstimator.uncertainty`),
/// the gyro bias's, and one sample's white noise of each sensor. Zero by default (a frame
/// built by hand); NaN where a decoded format does not carry them.
public struct EstimateUncertainty: Hashable, Sendable {
  /// Roll and pitch: rotation about each horizontal axis of the reference frame, rad.
  public var tiltRadians: Double
  /// Heading: rotation about the vertical, relative to the heading at start or at the last
  /// `tare`, rad. Without a magnetometer nothing measures it: it grows while the body moves.
  public var headingRadians: Double
  /// The gyro-bias estimate's, per body axis, rad/s.
  public var gyroBiasRadiansPerSecond: Vector3
  /// One gyro sample's white noise, per axis, rad/s (N/√dt).
  public var gyroNoiseRadiansPerSecond: Double
  /// One accelerometer sample's white noise, per axis, m/s².
  public var accelerometerNoiseMetersPerSecondSquared: Double

  public init(
    tiltRadians: Double = 0, headingRadians: Double = 0,
    gyroBiasRadiansPerSecond: Vector3 = .zero, gyroNoiseRadiansPerSecond: Double = 0,
    accelerometerNoiseMetersPerSecondSquared: Double = 0
  ) {
    self.tiltRadians = tiltRadians
    self.headingRadians = headingRadians
    self.gyroBiasRadiansPerSecond = gyroBiasRadiansPerSecond
    self.gyroNoiseRadiansPerSecond = gyroNoiseRadiansPerSecond
    self.accelerometerNoiseMetersPerSecondSquared = accelerometerNoiseMetersPerSecondSquared
  }

  /// Not carried (formats without these figures).
  public static let notCarried = EstimateUncertainty(
    tiltRadians: .nan, headingRadians: .nan, gyroBiasRadiansPerSecond: Vector3(.nan, .nan, .nan),
    gyroNoiseRadiansPerSecond: .nan, accelerometerNoiseMetersPerSecondSquared: .nan)
}

/// Health and state flags carried by every format (16 bits; bit numbers are part of the wire
/// formats, FORMATS.md).
public struct TelemetryFlags: OptionSet, Hashable, Sendable {
  public var rawValue: UInt16

  @inlinable
  public init(rawValue: UInt16) { self.rawValue = rawValue }

  /// Bit 0: the rest detector says the board is still (bias is being re-estimated).
  public static let rest = TelemetryFlags(rawValue: 1 << 0)
  /// Bit 1: one or more samples were missed just before this one (interval > 1.5 periods).
  public static let gap = TelemetryFlags(rawValue: 1 << 1)
  /// Bit 2: a raw reading was at ≥ 98 % of its full-scale range.
  public static let clipping = TelemetryFlags(rawValue: 1 << 2)
  /// Bit 3: a sustained horizontal acceleration is being rejected: the accelerometer
  /// correction is slowed or stopped, and the gyro carries the tilt.
  public static let accelerationRejected = TelemetryFlags(rawValue: 1 << 3)
  /// Bit 4: the filter is converging again after a gap, reset or fault.
  public static let recovering = TelemetryFlags(rawValue: 1 << 4)
  /// Bit 5: no data-ready edges; the loop polls on a timer (degraded timing).
  public static let degradedTiming = TelemetryFlags(rawValue: 1 << 5)
  /// Bit 6: the driver is recovering the bus or the chip, or did since the previous frame: bus
  /// errors, a re-initialisation, or a control register a read-back found changed and
  /// rewrote. A full-scale change that the next sample shows (the accelerometer's, always;
  /// the gyro's while the body turns at 30 °/s or more) is caught by an early read-back at
  /// that sample, which is withheld: no frame carried a wrongly scaled sample, and this one
  /// also says `gap`. Any other change waits for the once-a-second read-back: then the samples
  /// since the previous read-back (a second at most, whose frames were sent before anyone
  /// knew) may have been misread.
  public static let i2cRecovery = TelemetryFlags(rawValue: 1 << 6)
  /// Bit 7: a calibration file is loaded (its id is in `calibrationID`).
  public static let calibrationLoaded = TelemetryFlags(rawValue: 1 << 7)
  /// Bit 8: start-up: warm-up samples and initial convergence, attitude not yet trustworthy.
  public static let initialising = TelemetryFlags(rawValue: 1 << 8)
  /// Bit 9: pitch within `NEDEulerAngles.gimbalLockMarginRadians` of ±90°: displayed roll and yaw are
  /// ill-conditioned (display only; the quaternion is fine).
  public static let gimbalLockNear = TelemetryFlags(rawValue: 1 << 9)
  /// Bit 10: the heading is not known as well as the gyro would know it: the gyro bias about
  /// the vertical is not yet known to 0.1 °/s, so the heading may drift by more than 6° a
  /// minute while the board moves (an uncalibrated gyro before its first rest, or minutes of
  /// motion without one); or a gap in the samples, or samples found misread, may have moved it
  /// by 1° or more unseen (until a rest begins, or 10 s per degree, 30 minutes at most). Tilt
  /// is unaffected.
  public static let headingUncertain = TelemetryFlags(rawValue: 1 << 10)

  /// Every flag this version defines; bits 11–15 are reserved (sent as 0, kept when decoded).
  public static let all: TelemetryFlags = [
    .rest, .gap, .clipping, .accelerationRejected, .recovering, .degradedTiming, .i2cRecovery,
    .calibrationLoaded, .initialising, .gimbalLockNear, .headingUncertain,
  ]
}

/// The serial encodings (DESIGN.md "Serial output"; FORMATS.md).
public enum TelemetryFormat: String, Hashable, Sendable, CaseIterable {
  /// COBS-framed binary frames with CRC-16 (the default): 63 B, the attitude.
  case binary
  /// Binary frames of kind 3 (89 B): the attitude with the bias-corrected rate, the specific
  /// force and the estimator's uncertainties: what ROS's `sensor_msgs/Imu` needs.
  case binaryIMU = "binary-imu"

  /// Whether the format is one of the two binary ones (one framing, COBS between delimiters).
  public var isBinary: Bool { self == .binary || self == .binaryIMU }
  /// One `$PLMB` line per frame, for people.
  case text
  /// MAVLink v2: HEARTBEAT, ATTITUDE_QUATERNION, HIGHRES_IMU.
  case mavlink
}
