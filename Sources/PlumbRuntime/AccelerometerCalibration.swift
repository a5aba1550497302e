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
public func calibrateAccelerometer(
  _ setup: PlumbSetup, options: AccelerometerCalibrationOptions,
  instruct: @escaping (String) -> Void
) throws(AccelerometerCalibrationError) -> AccelerometerCalibrationResult {
  if setup.board.simulation != nil {
    let motion = SixPoseMotion(poses: options.simulatedPoses ?? SixPoseMotion.standardPoses)
    var unit = SimulatedMPU6050Unit.typical(seed: setup.board.simulation?.seed ?? 1)
    unit.oscillatorError = (setup.board.simulation?.oscillatorErrorPercent ?? 0) / 100
    let world = SimulatedMPU6050Board(motion: motion, unit: unit)
    var clock = world.clock
    return try measure(
      bus: world.bus, line: world.line, clock: &clock, settings: setup.settings,
      options: options, instruct: instruct)
  }
  let bus: LinuxI2CBus
  do {
    bus = try LinuxI2CBus(path: setup.board.i2c.bus)
  } catch {
    throw .hardware(error.description)
  }
  var clock = LinuxMonotonicClock()
  if setup.board.dataReady.isWired {
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
      throw .hardware(error.description)
    }
    return try measure(
      bus: bus, line: line, clock: &clock, settings: setup.settings, options: options,
      instruct: instruct)
  }
  return try measure(
    bus: bus, line: SelectedLine.notWired, clock: &clock, settings: setup.settings,
    options: options, instruct: instruct)
}

func measure<Bus: I2CBus, Line: DataReadyLine, Clock: MonotonicClock>(
  bus: Bus, line: Line, clock: inout Clock, settings: FirmwareSettings,
  options: AccelerometerCalibrationOptions, instruct: (String) -> Void
) throws(AccelerometerCalibrationError) -> AccelerometerCalibrationResult {
  var driver: MPU6050Driver<Bus>
  let report: MPU6050StartupReport
  do {
    driver = try MPU6050Driver(bus: bus, address: settings.address, configuration: settings.sensor)
    report = try driver.start(clock: &clock, selfTest: false)
  } catch {
    throw .hardware(error.description)
  }
  var line = line
  let period = driver.configuration.samplePeriodNanoseconds
  let windowCount = max(10, Int((options.stillSeconds * 1e9 / Double(period)).rounded()))
  var accel: [Vector3] = []
  var gyro: [Vector3] = []
  var measurements: [PoseMeasurement] = []
  var rejections: [String] = []
  var polling = false

  /// The next sample, or nil when none came this tick.
  func next() -> MPU6050Sample? {
    let reading: MPU6050Reading
    if !polling,
      case .edge(let time)? = try? line.waitForEdge(
        until: clock.now().advanced(byNanoseconds: 3 * period))
    {
      reading = driver.readSample(at: time)
    } else {
      polling = true
      clock.sleep(until: clock.now().advanced(byNanoseconds: period / 4))
      reading = driver.pollDataReady(at: clock.now())
    }
    if case .sample(let sample, false) = reading { return sample }
    return nil
  }

  for face in calibrationFaceOrder {
    instruct("put the board with its \(axisName(face)) axis pointing up, and keep it still")
    accel.removeAll(keepingCapacity: true)
    gyro.removeAll(keepingCapacity: true)
    let started = clock.now()
    var lastComplaint = ""
    while true {
      if stopRequested.load(ordering: .relaxed) { throw .stopped }
      if Double(clock.now().nanoseconds(since: started)) * 1e-9 > options.poseTimeoutSeconds {
        throw .timedOut(face, seconds: options.poseTimeoutSeconds)
      }
      guard let sample = next() else { continue }
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
        calibrationFaceOrder[measurements.count - 1] == seen
      {
        continue  // still on the face just measured: the user has not turned it yet
      } else if seen != face {
        complaint =
          "that is \(seen), not \(face): turn the board so its \(axisName(face)) axis points up"
      } else if tilt > 10 {
        complaint =
          "\(face) but tilted \(Int(tilt.rounded()))° (more than 10°): set it flat on a level surface"
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
        "\(face): measured (\(Double(Int(tilt * 10)) / 10)° from axis-aligned, noise \(Int(deviation * 1000)) mm/s²)"
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
    identity: report.identity, solution: solution, rejections: rejections)
}

/// `+x` for the face whose +x axis points up.
func axisName(_ face: SensorFace) -> String { String(face.description.dropLast(3)) }
