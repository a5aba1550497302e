import Boards
import Calibration
import Firmware
import Geometry
import HardwareAbstraction
import LinuxHardware
import MPU6050
import MPU6050Simulation
import MotionScenarios
import SimulatedHardware

/// How the guided six-position calibration runs.
public struct AccelerometerCalibrationOptions: Sendable {
  /// Solve the full 3×3 scale-and-misalignment matrix instead of offset and scale per axis.
  public var fullMatrix: Bool
  /// How long a pose must be still before it is averaged, seconds (the average is over it).
  public var stillSeconds: Double
  /// A pose's largest per-axis standard deviation while still, m/s² (PS §6.2: the noise at the
  /// default DLPF is about 0.03 m/s², so 0.08 is still; a hand on the board is not).
  public var stillDeviation: Double
  /// The gyro's largest per-axis standard deviation while still, rad/s.
  public var stillRateDeviation: Double
  /// Give up on a pose after this much sample time, seconds.
  public var poseTimeoutSeconds: Double
  /// For the simulated board: the poses its scripted motion goes through (nil: the standard
  /// six, in the order asked).
  public var simulatedPoses: [SixPoseMotion.Pose]?

  public init(
    fullMatrix: Bool = false, stillSeconds: Double = 2, stillDeviation: Double = 0.08,
    stillRateDeviation: Double = 0.5 * radiansPerDegree, poseTimeoutSeconds: Double = 300,
    simulatedPoses: [SixPoseMotion.Pose]? = nil
  ) {
    self.fullMatrix = fullMatrix
    self.stillSeconds = stillSeconds
    self.stillDeviation = stillDeviation
    self.stillRateDeviation = stillRateDeviation
    self.poseTimeoutSeconds = poseTimeoutSeconds
    self.simulatedPoses = simulatedPoses
  }
}

/// The faces in the order the procedure asks for them.
public let calibrationFaceOrder: [SensorFace] = [
  .plusZ, .minusZ, .plusX, .minusX, .plusY, .minusY,
]

/// What the six-position procedure measured and solved.
public struct AccelerometerCalibrationResult: Sendable {
  public var identity: MPU6050Identity
  public var solution: SixPositionCalibration
  /// Poses refused on the way, with the reason given to the user.
  public var rejections: [String]
}

/// Why the procedure stopped.
public enum AccelerometerCalibrationError: Error, CustomStringConvertible, Sendable {
  case hardware(String)
  case timedOut(SensorFace, seconds: Double)
  case solve(SixPositionError)
  case stopped

  public var description: String {
    switch self {
    case .hardware(let message): message
    case .timedOut(let face, let seconds):
      "no still \(face) pose in \(Int(seconds)) s: put the board with its \(axisName(face)) axis pointing up on a firm surface and keep hands off"
    case .solve(let error): error.description
    case .stopped: "stopped before all six poses were measured"
    }
  }
}

/// The guided six-position accelerometer calibration (issue 6): asks for each face in turn,
/// waits until the board is still on it, averages, refuses a pose that is more than 10° from
/// axis-aligned (saying by how much and which face it is) or on the wrong face, then solves
/// offset and scale per axis (or the full matrix) with residuals. On the simulated board the
/// motion is scripted to follow the instructions, so the whole procedure is tested end to end.
///
/// The faces asked for are the mounted **body's** when the board file's mounting is a quarter
/// turn (each chip axis along a body axis): the person turns the board, not the bare chip. The
/// simulated board is posed the same way, mounted as the board file says. With a mounting at
/// another angle no body face puts a chip axis up, so the chip's axes are named instead.
public func calibrateAccelerometer(
  _ setup: PlumbSetup, options: AccelerometerCalibrationOptions,
  instruct: @escaping (String) -> Void
) throws(AccelerometerCalibrationError) -> AccelerometerCalibrationResult {
  let mounting = setup.board.mounting
  let procedure = SixPositionProcedure(
    options: options, instruct: instruct, sensorToBody: mounting,
    namesBody: isQuarterTurn(mounting))
  return try runCalibration(
    setup,
    simulatedMotion: {
      // The person puts the body's faces up; with a mounting at another angle, the chip's.
      SixPoseMotion(
        poses: (options.simulatedPoses ?? SixPoseMotion.standardPoses).map { pose in
          var pose = pose
          if !procedure.namesBody { pose.up = mounting * pose.up }
          return pose
        })
    }, procedure)
}

struct SixPositionProcedure: CalibrationProcedure {
  let options: AccelerometerCalibrationOptions
  let instruct: (String) -> Void
  let sensorToBody: Matrix3
  /// Faces are named in body axes (a quarter-turn mounting), else in the chip's.
  let namesBody: Bool

  func hardwareFailure(_ message: String) -> AccelerometerCalibrationError { .hardware(message) }

  /// The face a person is asked for, as the chip sees it.
  func sensorFace(_ asked: SensorFace) -> SensorFace {
    namesBody ? SensorFace.dominant(in: sensorToBody.transposed * asked.up) : asked
  }

  /// What a person is told for a chip face.
  func name(_ sensorFace: SensorFace) -> SensorFace {
    namesBody ? SensorFace.dominant(in: sensorToBody * sensorFace.up) : sensorFace
  }

  func measure<Bus: I2CBus, Line: DataReadyLine, Clock: MonotonicClock>(
    _ sampler: inout CalibrationSampler<Bus, Line>, identity: MPU6050Identity, clock: inout Clock
  ) throws(AccelerometerCalibrationError) -> AccelerometerCalibrationResult {
    let period = sampler.periodNanoseconds
    let windowCount = max(10, Int((options.stillSeconds * 1e9 / Double(period)).rounded()))
    var accel: [Vector3] = []
    var gyro: [Vector3] = []
    var measurements: [PoseMeasurement] = []
    var rejections: [String] = []

    for asked in calibrationFaceOrder {
      let face = sensorFace(asked)
      instruct(
        namesBody
          ? "put the board with its \(axisName(asked)) axis pointing up, and keep it still"
          : "put the board so that the chip's \(axisName(asked)) axis points up (the mounting is not a quarter turn, so the chip's axes are named), and keep it still"
      )
      accel.removeAll(keepingCapacity: true)
      gyro.removeAll(keepingCapacity: true)
      let started = clock.now()
      var lastComplaint = ""
      while true {
        if stopRequested.load(ordering: .relaxed) { throw .stopped }
        if Double(clock.now().nanoseconds(since: started)) * 1e-9 > options.poseTimeoutSeconds {
          throw .timedOut(asked, seconds: options.poseTimeoutSeconds)
        }
        guard let (sample, _) = sampler.next(clock: &clock) else { continue }
        let a = sample.specificForceMetersPerSecondSquared
        let g = sample.angularRateRadiansPerSecond
        accel.append(Vector3(a.x, a.y, a.z))
        gyro.append(Vector3(g.x, g.y, g.z))
        if accel.count > windowCount {
          accel.removeFirst()
          gyro.removeFirst()
        }
        guard accel.count == windowCount else { continue }
        let pose = PoseMeasurement(samples: accel)
        let rate = PoseMeasurement(samples: gyro).standardDeviation
        let deviation = max(
          pose.standardDeviation.x, pose.standardDeviation.y, pose.standardDeviation.z)
        guard deviation <= options.stillDeviation,
          max(rate.x, rate.y, rate.z) <= options.stillRateDeviation
        else { continue }
        // Still: which face is up, and how far from axis-aligned?
        let seen = SensorFace.allCases.max { $0.up.dot(pose.mean) < $1.up.dot(pose.mean) }!
        let tilt = pose.mean.angle(to: seen.up) * degreesPerRadian
        var complaint = ""
        if seen != face, measurements.count > 0,
          sensorFace(calibrationFaceOrder[measurements.count - 1]) == seen
        {
          continue  // still on the face just measured: the user has not turned it yet
        } else if seen != face {
          complaint =
            "that is \(name(seen)), not \(asked): turn the board so its \(axisName(asked)) axis points up"
        } else if tilt > 10 {
          complaint =
            "\(asked) but tilted \(Int(tilt.rounded()))° (more than 10°): set it flat on a level surface"
        }
        if !complaint.isEmpty {
          if complaint != lastComplaint {
            instruct(complaint)
            rejections.append(complaint)
            lastComplaint = complaint
          }
          continue
        }
        measurements.append(pose)
        instruct(
          "\(asked): measured (\(Double(Int(tilt * 10)) / 10)° from axis-aligned, noise \(Int(deviation * 1000)) mm/s²)"
        )
        break
      }
    }
    var solveSettings = SixPositionCalibration.Settings()
    solveSettings.fullMatrix = options.fullMatrix
    let solution: SixPositionCalibration
    do {
      solution = try SixPositionCalibration.solve(measurements, settings: solveSettings)
    } catch {
      throw .solve(error)
    }
    return AccelerometerCalibrationResult(
      identity: identity, solution: solution, rejections: rejections)
  }
}

/// `+x` for the face whose +x axis points up.
func axisName(_ face: SensorFace) -> String { String(face.description.dropLast(3)) }
