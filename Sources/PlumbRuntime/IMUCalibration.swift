import Calibration
import Geometry
import HardwareAbstraction
import MPU6050
import MPU6050Simulation
import MotionScenarios
import Randomness

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// How the guided IMU calibration runs.
public struct IMUCalibrationOptions: Sendable {
  /// What counts as a pose and a turn, and how many turns each axis needs.
  public var session: IMUSessionSettings
  /// Give up when nothing was measured for this much sample time, seconds.
  public var progressTimeoutSeconds: Double
  /// The local gravity, m/s² (the accelerometer's scale is fitted to it).
  public var gravity: Double
  /// For the simulated board: the seed of the scripted person, and whether they make the
  /// mistakes the session must catch (a pose too short, a turn too small, a pose that moved,
  /// a turn about the axis before).
  public var simulatedPersonSeed: UInt64
  public var simulatedMistakes: Bool
  /// For the simulated board: the unit to calibrate (nil: the board's seed's typical unit, the
  /// one `plumb run` simulates).
  public var simulatedUnit: SimulatedMPU6050Unit?

  public init(
    session: IMUSessionSettings = IMUSessionSettings(), progressTimeoutSeconds: Double = 180,
    gravity: Double = standardGravity, simulatedPersonSeed: UInt64 = 1,
    simulatedMistakes: Bool = true
  ) {
    self.session = session
    self.progressTimeoutSeconds = progressTimeoutSeconds
    self.gravity = gravity
    self.simulatedPersonSeed = simulatedPersonSeed
    self.simulatedMistakes = simulatedMistakes
  }
}

/// What the IMU session measured and solved.
public struct IMUCalibrationResult: Sendable {
  /// The part: as start-up identified it, or as the recording's header says.
  public var chip: RecordedChip
  public var solution: IMUCalibrationSolution
  /// What was refused on the way, in order.
  public var refusals: [IMUSessionRefusal]
  /// The sample period measured over the session, seconds.
  public var samplePeriodSeconds: Double
  /// Accepted turns per body axis.
  public var turnCounts: [Int]
}

/// Why the session stopped without a calibration.
public enum IMUCalibrationRunError: Error, CustomStringConvertible, Sendable {
  case hardware(String)
  /// Nothing measured for `seconds`.
  case stalled(seconds: Double, poses: Int, turnCounts: [Int], instruction: String)
  /// The recording ended before every axis had its turns.
  case recordingEnded(samples: Int, poses: Int, turnCounts: [Int])
  /// The session's sample store filled before every axis had its turns.
  case cutShort(samples: Int, turnCounts: [Int])
  case solve(IMUCalibrationError)
  case stopped

  public var description: String {
    switch self {
    case .hardware(let message): message
    case .stalled(let seconds, let poses, let counts, let instruction):
      "nothing measured for \(Int(seconds)) s (\(poses) poses so far; turns x \(counts[0]), y \(counts[1]), z \(counts[2])): the last instruction was to \(instruction); run the session again and keep the board still on a table between turns"
    case .cutShort(let samples, let counts):
      "the session reached its \(samples) samples before every axis had its turns (x \(counts[0]), y \(counts[1]), z \(counts[2])): run it again, with shorter pauses"
    case .recordingEnded(let samples, let poses, let counts):
      "the recording's \(samples) samples end before every axis had its turns (\(poses) poses; turns x \(counts[0]), y \(counts[1]), z \(counts[2])): record a whole session, following the instructions of a live one (BENCH-GUIDE.md step 6)"
    case .solve(let error): error.description
    case .stopped: "stopped before the session was complete"
    }
  }
}

/// The guided IMU calibration (`plumb calibrate imu`, issue 24): still poses and hand turns
/// about each body axis, judged as they happen (`IMUCalibrationSession`), then accelerometer
/// and gyroscope solved together (`IMUCalibrationFit`). On the simulated board a scripted
/// person (`SimulatedCalibrationPerson`) follows the instructions, with irregular timing,
/// tremor, imperfect poses and, unless told otherwise, the mistakes the session must catch.
public func calibrateIMU(
  _ setup: PlumbSetup, options: IMUCalibrationOptions, instruct: @escaping (String) -> Void
) throws(IMUCalibrationRunError) -> IMUCalibrationResult {
  let procedure = IMUSessionProcedure(
    options: options, instruct: instruct, sensorToBody: setup.board.mounting)
  return try runCalibration(
    setup, simulatedUnit: options.simulatedUnit,
    simulatedMotion: {
      SimulatedCalibrationPerson.motion(
        seed: options.simulatedPersonSeed, settings: options.session,
        mistakes: options.simulatedMistakes)
    }, procedure)
}

struct IMUSessionProcedure: CalibrationProcedure {
  let options: IMUCalibrationOptions
  let instruct: (String) -> Void
  let sensorToBody: Matrix3

  func hardwareFailure(_ message: String) -> IMUCalibrationRunError { .hardware(message) }

  func measure<Bus: I2CBus, Line: DataReadyLine, Clock: MonotonicClock>(
    _ sampler: inout CalibrationSampler<Bus, Line>, identity: MPU6050Identity, clock: inout Clock
  ) throws(IMUCalibrationRunError) -> IMUCalibrationResult {
    var driver = IMUSessionDriver(
      options: options, instruct: instruct, sensorToBody: sensorToBody,
      nominalPeriodSeconds: Double(sampler.periodNanoseconds) * 1e-9)
    var lastProgress = clock.now()
    while true {
      if stopRequested.load(ordering: .relaxed) { throw .stopped }
      let idle = Double(clock.now().nanoseconds(since: lastProgress)) * 1e-9
      if idle > options.progressTimeoutSeconds {
        throw .stalled(
          seconds: options.progressTimeoutSeconds, poses: driver.session.poses.count,
          turnCounts: driver.session.turnCounts, instruction: driver.instruction)
      }
      guard let (sample, time) = sampler.next(clock: &clock) else { continue }
      let g = sample.angularRateRadiansPerSecond
      let a = sample.specificForceMetersPerSecondSquared
      let step = try driver.add(
        timeNanoseconds: time.nanoseconds, gyroscope: Vector3(g.x, g.y, g.z),
        accelerometer: Vector3(a.x, a.y, a.z), temperatureCelsius: sample.temperatureCelsius,
        gyroscopeClipped: sample.clipping.contains(.gyro))
      if step.progressed { lastProgress = clock.now() }
      if step.complete { break }
    }
    return try driver.result(
      chip: RecordedChip(whoAmI: identity.whoAmI, name: identity.model.name))
  }
}

/// Feeds samples to a session, says its events, and solves it: the one loop behind the live
/// session and a recorded one.
struct IMUSessionDriver {
  let options: IMUCalibrationOptions
  let instruct: (String) -> Void
  var session: IMUCalibrationSession
  /// The instruction standing.
  var instruction: String

  init(
    options: IMUCalibrationOptions, instruct: @escaping (String) -> Void, sensorToBody: Matrix3,
    nominalPeriodSeconds: Double
  ) {
    self.options = options
    self.instruct = instruct
    session = IMUCalibrationSession(
      settings: options.session, sensorToBody: sensorToBody,
      nominalPeriodSeconds: nominalPeriodSeconds)
    instruction = session.opening
    instruct(instruction)
  }

  /// One sample; whether it measured a pose, and whether the session is complete.
  mutating func add(
    timeNanoseconds: Int64, gyroscope: Vector3, accelerometer: Vector3,
    temperatureCelsius: Double, gyroscopeClipped: Bool
  ) throws(IMUCalibrationRunError) -> (progressed: Bool, complete: Bool) {
    var progressed = false
    for event in session.add(
      timeNanoseconds: timeNanoseconds, gyroscope: gyroscope, accelerometer: accelerometer,
      temperatureCelsius: temperatureCelsius, gyroscopeClipped: gyroscopeClipped)
    {
      switch event {
      case .instruction(let text):
        instruction = text
        instruct(text)
      case .progress(let text):
        progressed = true
        instruct(text)
      case .refused(let refusal):
        instruct("not used: \(refusal)")
      case .complete:
        return (progressed, true)
      }
    }
    if session.isFull {
      throw .cutShort(samples: session.settings.maximumSamples, turnCounts: session.turnCounts)
    }
    return (progressed, false)
  }

  func result(chip: RecordedChip) throws(IMUCalibrationRunError) -> IMUCalibrationResult {
    let solution: IMUCalibrationSolution
    do {
      solution = try session.solve(gravity: options.gravity)
    } catch {
      throw .solve(error)
    }
    return IMUCalibrationResult(
      chip: chip, solution: solution, refusals: session.refusals,
      samplePeriodSeconds: session.measuredPeriodSeconds, turnCounts: session.turnCounts)
  }
}

/// The IMU session over a recording of one (`plumb record` while a person followed
/// BENCH-GUIDE.md step 6, or a recording of an earlier session): the same rules, messages and
/// fit, without the board. The recording's samples are the chip's (sensor axes); `sensorToBody`
/// names the axes in messages. A recording that ends before every axis has its turns is refused
/// with what it had.
public func calibrateIMU(
  recording: InertialRecording, sensorToBody: Matrix3, options: IMUCalibrationOptions,
  instruct: @escaping (String) -> Void
) throws(IMUCalibrationRunError) -> IMUCalibrationResult {
  let times = recording.timeSeconds
  guard times.count >= 3 else {
    throw .recordingEnded(samples: times.count, poses: 0, turnCounts: [0, 0, 0])
  }
  var intervals = zip(times.dropFirst(), times).map { $0 - $1 }
  intervals.sort()
  let period = intervals[intervals.count / 2]
  guard period > 0, period.isFinite else {
    throw .recordingEnded(samples: times.count, poses: 0, turnCounts: [0, 0, 0])
  }
  var driver = IMUSessionDriver(
    options: options, instruct: instruct, sensorToBody: sensorToBody,
    nominalPeriodSeconds: period)
  let c = recording.channels
  for k in 0..<times.count {
    let step = try driver.add(
      timeNanoseconds: Int64((times[k] * 1e9).rounded()),
      gyroscope: Vector3(c[0][k], c[1][k], c[2][k]),
      accelerometer: Vector3(c[3][k], c[4][k], c[5][k]),
      temperatureCelsius: recording.temperatureCelsius?[k] ?? .nan, gyroscopeClipped: false)
    if step.complete {
      return try driver.result(chip: recording.chip ?? RecordedChip(whoAmI: 0x68, name: "MPU-6050"))
    }
  }
  throw .recordingEnded(
    samples: times.count, poses: driver.session.poses.count,
    turnCounts: driver.session.turnCounts)
}

/// A scripted person for the simulated board's IMU session: puts the board down at a slightly
/// random attitude, then turns it by hand about the axis the session asks for (found with the
/// session's own rule, `IMUCalibrationSession.nextAxis`, from the true attitude), by a random
/// angle of 50–160° about an axis up to 8° off the one named, over 1–2.5 s with a hand's
/// tremor, and holds each pose 2.7–5 s. With `mistakes`, four of the turns go wrong the way
/// people's do: a pause too short in the middle of a turn, a first turn of 12°, a pose that
/// creeps 3° after it is put down, and a turn about the axis turned before.
public enum SimulatedCalibrationPerson {
  public static func motion(seed: UInt64, settings: IMUSessionSettings, mistakes: Bool)
    -> HandPoseMotion
  {
    var random = SeededGenerator(seed: seed, stream: 312)
    func uniform(_ range: Range<Double>) -> Double { random.nextUniform(in: range) }
    let up = Vector3(0, 0, 1)
    // An imperfect first pose: tilted up to 15°, any heading.
    let tiltAxis = Quaternion(axis: .unitZ, angle: uniform(0..<(2 * .pi))).rotate(.unitX)
    var q =
      (Quaternion(axis: tiltAxis, angle: uniform(3..<15) * radiansPerDegree)
      * Quaternion(axis: .unitZ, angle: uniform(0..<(2 * .pi)))).normalized
    var poses: [HandPoseMotion.Pose] = []
    var counts = [0, 0, 0]
    var lastAxis: Int?
    var step = 0
    var turnedTheSameAxisTwice = false
    func hold() -> Double { uniform(2.7..<5) }
    func turnSeconds(_ degrees: Double) -> Double { 0.6 + abs(degrees) / 90 * uniform(0.6..<1.2) }
    func level(_ q: Quaternion) -> Bool {
      // Clear of the session's level limit, so that its measured up (off by a degree or two
      // before calibration) asks for the same axis as the truth does.
      let u = q.inverseRotate(up)
      return [u.x, u.y, u.z].allSatisfy {
        abs(acos(min(1, abs($0))) * degreesPerRadian - settings.levelAxisDegrees) > 5
      }
    }
    while true {
      let bodyUp = q.inverseRotate(up)
      guard
        let asked = IMUCalibrationSession.nextAxis(
          counts: counts, up: bodyUp, turnsPerAxis: settings.turnsPerAxis,
          levelDegrees: settings.levelAxisDegrees)
      else { break }
      var axis = asked
      let mistake = mistakes ? step : -1
      if mistakes, step >= 8, !turnedTheSameAxisTwice, let last = lastAxis, last != asked,
        abs([bodyUp.x, bodyUp.y, bodyUp.z][last])
          < cos(settings.levelAxisDegrees * radiansPerDegree)
      {
        axis = last  // turns about the axis before again (at the first chance from step 8)
        turnedTheSameAxisTwice = true
      }
      // A turn about the chosen axis, a little off it, clear of the level limit at its end.
      var rotation = Quaternion.identity
      var degrees = 0.0
      var turnAxis = Vector3.zero
      for _ in 0..<50 {
        let wobble = Vector3(uniform(-1..<1), uniform(-1..<1), uniform(-1..<1)) * 0.08
        turnAxis = ([Vector3.unitX, .unitY, .unitZ][axis] + wobble).normalized
        degrees = uniform(50..<160) * (random.occurs(withProbability: 0.5) ? 1 : -1)
        rotation = Quaternion(axis: turnAxis, angle: degrees * radiansPerDegree)
        if level((q * rotation).normalized) { break }
      }
      let next = (q * rotation).normalized
      switch mistake {
      case 2:
        // Stops half way for under a second, then goes on.
        let half = (q * Quaternion(axis: turnAxis, angle: degrees / 2 * radiansPerDegree))
          .normalized
        poses.append(.init(attitude: q, holdSeconds: hold(), turnSeconds: turnSeconds(degrees / 2)))
        poses.append(.init(attitude: half, holdSeconds: 0.8, turnSeconds: turnSeconds(degrees / 2)))
      case 4:
        // A first turn of 12°, held, then the rest.
        let small =
          (q * Quaternion(axis: turnAxis, angle: 12 * radiansPerDegree * (degrees < 0 ? -1 : 1)))
          .normalized
        poses.append(.init(attitude: q, holdSeconds: hold(), turnSeconds: 0.6))
        poses.append(.init(attitude: small, holdSeconds: hold(), turnSeconds: turnSeconds(degrees)))
      default:
        poses.append(.init(attitude: q, holdSeconds: hold(), turnSeconds: turnSeconds(degrees)))
      }
      counts[axis] += 1
      lastAxis = axis
      step += 1
      q = next
      if mistake == 6 {
        // Put down on something soft: it creeps 3° over 2 s, then stays.
        poses.append(
          .init(
            attitude: q, holdSeconds: 6, creepDegrees: 3, creepSeconds: 2,
            turnSeconds: 0.001, tremorDegrees: 0))
        q = poses[poses.count - 1].endAttitude
        // The next pose starts where the creep ended; the "turn" to it is nothing.
      }
    }
    poses.append(.init(attitude: q, holdSeconds: 8))
    return HandPoseMotion(poses: poses, seed: seed)
  }
}
