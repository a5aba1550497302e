import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// How a guided IMU calibration session judges what the person does.
public struct IMUSessionSettings: Sendable, Hashable {
  /// How long a pose must be still before it is measured, seconds.
  public var holdSeconds: Double
  /// The window over which stillness is judged, seconds.
  public var stillWindowSeconds: Double
  /// Still: every accelerometer axis' standard deviation over the window at most this, m/s²
  /// (the noise at the default filter is about 0.03 m/s², PS §6.2; a hand holding the board is
  /// not still).
  public var stillAccelerometerDeviation: Double
  /// Still: every gyro axis' standard deviation over the window at most this, rad/s.
  public var stillGyroscopeDeviation: Double
  /// Cut from the start of a pose before averaging (the board settling), seconds.
  public var settleSeconds: Double
  /// A turn smaller than this is refused, degrees.
  public var minimumTurnDegrees: Double
  /// Gravity must move by at least this across a turn, degrees (a turn about the vertical
  /// measures nothing).
  public var minimumGravityChangeDegrees: Double
  /// A pose whose gravity direction differs by more than this between its first and second
  /// half moved while it was held, degrees.
  public var movedPoseDegrees: Double
  /// Accepted turns wanted about each of the body's axes.
  public var turnsPerAxis: Int
  /// An axis within this of the vertical is not asked to be turned about, degrees.
  public var levelAxisDegrees: Double
  /// The most samples a session keeps (a session is minutes; this is 5.5 h at 100 Hz).
  public var maximumSamples: Int

  public init(
    holdSeconds: Double = 2, stillWindowSeconds: Double = 0.5,
    stillAccelerometerDeviation: Double = 0.08,
    stillGyroscopeDeviation: Double = 0.5 * radiansPerDegree, settleSeconds: Double = 0.25,
    minimumTurnDegrees: Double = 30, minimumGravityChangeDegrees: Double = 15,
    movedPoseDegrees: Double = 0.5, turnsPerAxis: Int = 4, levelAxisDegrees: Double = 45,
    maximumSamples: Int = 2_000_000
  ) {
    self.holdSeconds = holdSeconds
    self.stillWindowSeconds = stillWindowSeconds
    self.stillAccelerometerDeviation = stillAccelerometerDeviation
    self.stillGyroscopeDeviation = stillGyroscopeDeviation
    self.settleSeconds = settleSeconds
    self.minimumTurnDegrees = minimumTurnDegrees
    self.minimumGravityChangeDegrees = minimumGravityChangeDegrees
    self.movedPoseDegrees = movedPoseDegrees
    self.turnsPerAxis = turnsPerAxis
    self.levelAxisDegrees = levelAxisDegrees
    self.maximumSamples = maximumSamples
  }
}

/// What the session tells the person, sample by sample.
public enum IMUSessionEvent: Sendable, Hashable {
  /// What to do next.
  case instruction(String)
  /// A pose was measured (and the turn before it accepted).
  case progress(String)
  /// Something the person did cannot be used, and why; the instruction stands.
  case refused(IMUSessionRefusal)
  /// Every axis has its turns: the session can be solved.
  case complete
}

/// Why a pose or turn was not used. Each says what to do instead.
public enum IMUSessionRefusal: Sendable, Hashable, CustomStringConvertible {
  /// The board was still for less than the hold time.
  case poseTooShort(seconds: Double, needSeconds: Double)
  /// The pose's gravity direction moved while it was held.
  case poseMoved(degrees: Double)
  /// The turn was smaller than the minimum.
  case turnTooSmall(degrees: Double, minimumDegrees: Double, axis: String)
  /// Gravity hardly moved: the turn was about the vertical.
  case turnAboutVertical(gravityDegrees: Double, axis: String)
  /// The turn was about another axis than the one asked for (the data is kept).
  case otherAxis(turned: String, asked: String, again: Bool)
  /// Samples were lost during the turn: it cannot be integrated (the pose is kept).
  case samplesLost(count: Int)
  /// The gyro clipped during the turn (turned faster than its full scale): the pose is kept.
  case clipped(count: Int)
  /// A still pose reads a specific force far from g: a dead, saturated or mis-scaled
  /// accelerometer (or a recording of something else).
  case notGravity(magnitude: Double)

  public var description: String {
    switch self {
    case .poseTooShort(let seconds, let need):
      "the board was still for only \(rounded(seconds, 1)) s: hold it still for \(rounded(need, 1)) s after each turn"
    case .poseMoved(let degrees):
      "the board moved while it was held (\(rounded(degrees, 2))° between the first and second half of the pose): put it down on a firm surface, hands off, and hold it still"
    case .turnTooSmall(let degrees, let minimum, let axis):
      "that turn was only \(rounded(degrees, 1))°: turn about \(axis) by at least \(Int(minimum))° (45–180° is best), then hold still"
    case .turnAboutVertical(let gravity, let axis):
      "gravity moved only \(rounded(gravity, 1))°: that turn was about the vertical, which measures nothing; turn about \(axis) while \(axis) is level, not pointing up"
    case .otherAxis(let turned, let asked, let again):
      again
        ? "that was a turn about \(turned) again, not \(asked) (the same axis twice): it is kept, but \(asked) still needs turns"
        : "that was a turn about \(turned), not \(asked): it is kept, but \(asked) still needs turns"
    case .samplesLost(let count):
      "\(count) samples were lost during that turn, so it cannot be measured (the pose is kept as a new start): turn again"
    case .notGravity(let magnitude):
      "the board is still but reads |a| = \(rounded(magnitude, 3)) m/s², not about g = 9.81: check the accelerometer (its wiring, power and the board file's accelRangeG); nothing can be calibrated until it reads gravity"
    case .clipped(let count):
      "the gyro clipped at its full scale in \(count) samples of that turn (it was turned too fast), so it cannot be measured (the pose is kept as a new start): turn again, more slowly"
    }
  }
}

/// A guided IMU calibration session (`plumb calibrate imu`): fed the chip's samples one by one,
/// it finds the still poses and the turns between them, checks each (pose too short, a pose
/// that moved, a turn too small or about the vertical, about another axis than asked, samples
/// lost), asks for the next turn, and when every axis has its turns, solves
/// (`IMUCalibrationFit`).
///
/// Axes are the **body's** (`sensorToBody`, the board file's mounting): the person holds the
/// mounted board and turns it about the axes drawn on it; the data stay in sensor axes, where
/// the calibration belongs. The next axis asked for is the one with the fewest turns that is
/// level enough to turn about (`nextAxis`), so the order follows what the person did.
public struct IMUCalibrationSession: Sendable {
  public let settings: IMUSessionSettings
  /// Sensor axes → body axes.
  public let sensorToBody: Matrix3
  /// The chip's nominal sample period, seconds (for window lengths; turns are integrated
  /// over the measured one).
  public let nominalPeriodSeconds: Double

  // Every sample, sensor axes, raw SI.
  public private(set) var times: [Int64] = []
  public private(set) var gyroscope: [Vector3] = []
  public private(set) var accelerometer: [Vector3] = []
  public private(set) var temperatures: [Double] = []
  /// Indices of samples whose gyro clipped.
  public private(set) var clippedSamples: [Int] = []

  /// Accepted poses, in order.
  public private(set) var poses: [IMUStillPose] = []
  /// Accepted turns: the pose each starts from (it ends on the next) and its samples.
  public private(set) var turnSpans: [(fromPose: Int, samples: Range<Int>)] = []
  /// Accepted turns per body axis (x, y, z), by their dominant axis.
  public private(set) var turnCounts = [0, 0, 0]
  /// The body axis asked for next (0, 1, 2), nil before the first pose and when complete.
  public private(set) var requestedAxis: Int?
  /// Refusals so far, in order.
  public private(set) var refusals: [IMUSessionRefusal] = []
  public private(set) var isComplete = false

  var stillStart: Int?
  var poseHandled = false
  var lastAxis: Int?

  public init(
    settings: IMUSessionSettings = IMUSessionSettings(), sensorToBody: Matrix3 = .identity,
    nominalPeriodSeconds: Double
  ) {
    self.settings = settings
    self.sensorToBody = sensorToBody
    self.nominalPeriodSeconds = nominalPeriodSeconds
  }

  /// The first instruction.
  public var opening: String {
    "put the board down in any position and hold it still for \(rounded(settings.holdSeconds, 1)) s"
  }

  var windowCount: Int {
    max(5, Int((settings.stillWindowSeconds / nominalPeriodSeconds).rounded()))
  }
  var holdCount: Int {
    max(windowCount, Int((settings.holdSeconds / nominalPeriodSeconds).rounded()))
  }
  var settleCount: Int { Int((settings.settleSeconds / nominalPeriodSeconds).rounded()) }

  /// Whether the session's sample store is full.
  public var isFull: Bool { times.count >= settings.maximumSamples }

  /// Adds one sample (time: the chip's data-ready time, ns; readings in sensor axes, raw SI;
  /// temperature NaN when unknown) and returns what to tell the person.
  public mutating func add(
    timeNanoseconds: Int64, gyroscope g: Vector3, accelerometer a: Vector3,
    temperatureCelsius: Double, gyroscopeClipped: Bool = false
  ) -> [IMUSessionEvent] {
    guard !isComplete, !isFull else { return [] }
    if gyroscopeClipped { clippedSamples.append(times.count) }
    times.append(timeNanoseconds)
    gyroscope.append(g)
    accelerometer.append(a)
    temperatures.append(temperatureCelsius)
    let i = times.count - 1
    let still = isStill(endingAt: i)
    var events: [IMUSessionEvent] = []
    if still {
      if stillStart == nil { stillStart = i + 1 - windowCount }
      if let start = stillStart, !poseHandled, i + 1 - start >= holdCount {
        poseHandled = true
        events += pose(start + settleCount..<(i + 1))
        if case .refused(.poseMoved) = events.last {
          // Held still from now on, it is measured again: the hold restarts here.
          stillStart = i + 1 - settleCount
          poseHandled = false
        }
      }
    } else if let start = stillStart {
      let seconds = Double(i - start) * nominalPeriodSeconds
      if !poseHandled, seconds >= 0.25 * settings.holdSeconds {
        let refusal = IMUSessionRefusal.poseTooShort(
          seconds: seconds, needSeconds: settings.holdSeconds)
        refusals.append(refusal)
        events.append(.refused(refusal))
      }
      stillStart = nil
      poseHandled = false
    }
    return events
  }

  func isStill(endingAt i: Int) -> Bool {
    let n = windowCount
    guard i + 1 >= n else { return false }
    var sa = Vector3.zero
    var sg = Vector3.zero
    for k in (i + 1 - n)...i {
      sa += accelerometer[k]
      sg += gyroscope[k]
    }
    let ma = sa / Double(n)
    let mg = sg / Double(n)
    var va = Vector3.zero
    var vg = Vector3.zero
    for k in (i + 1 - n)...i {
      let da = accelerometer[k] - ma
      let dg = gyroscope[k] - mg
      va += da.scaled(by: da)
      vg += dg.scaled(by: dg)
    }
    let la = settings.stillAccelerometerDeviation * settings.stillAccelerometerDeviation
    let lg = settings.stillGyroscopeDeviation * settings.stillGyroscopeDeviation
    let d = Double(n - 1)
    return max(va.x, va.y, va.z) / d <= la && max(vg.x, vg.y, vg.z) / d <= lg
  }

  func mean(_ values: [Vector3], _ range: Range<Int>) -> Vector3 {
    var s = Vector3.zero
    for k in range { s += values[k] }
    return s / Double(max(1, range.count))
  }

  /// The sample period measured over the session so far, seconds: the span between the first
  /// and last sample over the whole number of nominal-ish periods in it (each interval counted
  /// as the nearest whole number of median intervals, so lost samples do not stretch it).
  public var measuredPeriodSeconds: Double {
    guard times.count >= 3 else { return nominalPeriodSeconds }
    var intervals: [Int64] = []
    let stride = max(1, times.count / 2000)
    var k = 1
    while k < times.count {
      intervals.append(times[k] - times[k - 1])
      k += stride
    }
    intervals.sort()
    let median = Double(intervals[intervals.count / 2])
    guard median > 0 else { return nominalPeriodSeconds }
    var periods = 0.0
    for k in 1..<times.count {
      periods += max(1, (Double(times[k] - times[k - 1]) / median).rounded())
    }
    return Double(times[times.count - 1] - times[0]) / periods * 1e-9
  }

  /// The body axis with the fewest accepted turns among those at least `levelAxisDegrees` from
  /// the vertical (ties to x, then y, then z); when every axis short of turns points up, the
  /// most level other axis (a tip that makes the wanted one level). `up`: the gravity
  /// direction's opposite in body axes (the accelerometer's reading at rest). Nil when every
  /// axis has `turnsPerAxis`.
  public static func nextAxis(counts: [Int], up: Vector3, turnsPerAxis: Int, levelDegrees: Double)
    -> Int?
  {
    let wanted = (0..<3).filter { counts[$0] < turnsPerAxis }
    guard !wanted.isEmpty else { return nil }
    let u = up.normalized
    let limit = cos(levelDegrees * radiansPerDegree)
    func vertical(_ axis: Int) -> Double { abs([u.x, u.y, u.z][axis]) }
    let level = wanted.filter { vertical($0) <= limit }
    if let best = level.min(by: { counts[$0] < counts[$1] || (counts[$0] == counts[$1] && $0 < $1) }
    ) {
      return best
    }
    return (0..<3).min { vertical($0) < vertical($1) || (vertical($0) == vertical($1) && $0 < $1) }
  }

  static let axisNames = ["x", "y", "z"]

  func instruction(axis: Int) -> String {
    let name = IMUCalibrationSession.axisNames[axis]
    return
      "turn the board by hand about its \(name) axis (any angle from \(Int(settings.minimumTurnDegrees))° to 180°, \(name) kept level), then put it down and hold it still for \(rounded(settings.holdSeconds, 1)) s"
  }

  /// Judges a still stretch that has lasted the hold time.
  mutating func pose(_ range: Range<Int>) -> [IMUSessionEvent] {
    let half = range.lowerBound + range.count / 2
    let first = mean(accelerometer, range.lowerBound..<half)
    let second = mean(accelerometer, half..<range.upperBound)
    let moved = first.angle(to: second) * degreesPerRadian
    if moved > settings.movedPoseDegrees {
      return refuse(.poseMoved(degrees: moved))
    }
    let magnitude = mean(accelerometer, range).length
    if magnitude < 0.5 * standardGravity || magnitude > 1.5 * standardGravity {
      return refuse(.notGravity(magnitude: magnitude))
    }
    let candidate = IMUStillPose(
      accelerometerMean: mean(accelerometer, range), gyroscopeMean: mean(gyroscope, range),
      temperatureCelsius: temperatures[range].reduce(0, +) / Double(range.count), samples: range)
    guard let previous = poses.last else {
      poses.append(candidate)
      return next(after: candidate, message: "pose 1 measured")
    }
    // The turn: every sample after the last pose's average up to this pose's first.
    let (increments, lost) = self.increments(
      previous.samples.upperBound..<range.lowerBound, from: previous, to: candidate,
      periodSeconds: measuredPeriodSeconds)
    let turn = IMUTurn(fromPose: poses.count - 1, increments: increments)
    let rotation = turn.rotation().canonical
    let angle = rotation.angle * degreesPerRadian
    let axisBody = sensorToBody * (rotation.vector.length > 0 ? rotation.vector.normalized : .zero)
    let turned = [abs(axisBody.x), abs(axisBody.y), abs(axisBody.z)]
    let turnedAxis =
      turned[0] >= turned[1] && turned[0] >= turned[2] ? 0 : (turned[1] >= turned[2] ? 1 : 2)
    let asked = requestedAxis ?? turnedAxis
    let askedName = IMUCalibrationSession.axisNames[asked]
    let span = previous.samples.upperBound..<range.lowerBound
    let clipped = clippedSamples.reversed().prefix { $0 >= span.lowerBound }.count
    if lost > 0 || clipped > 0 {
      // The pose is good; the turn before it is not measurable. It starts a new chain.
      poses.append(candidate)
      let refusal: IMUSessionRefusal =
        lost > 0 ? .samplesLost(count: lost) : .clipped(count: clipped)
      refusals.append(refusal)
      return [.refused(refusal)] + next(after: candidate, message: "pose \(poses.count) measured")
    }
    if angle < settings.minimumTurnDegrees {
      return refuse(
        .turnTooSmall(
          degrees: angle, minimumDegrees: settings.minimumTurnDegrees, axis: askedName))
    }
    let gravityChange =
      previous.accelerometerMean.angle(to: candidate.accelerometerMean) * degreesPerRadian
    if gravityChange < settings.minimumGravityChangeDegrees {
      return refuse(.turnAboutVertical(gravityDegrees: gravityChange, axis: askedName))
    }
    poses.append(candidate)
    turnSpans.append((turn.fromPose, span))
    turnCounts[turnedAxis] += 1
    var events: [IMUSessionEvent] = []
    if turnedAxis != asked {
      let refusal = IMUSessionRefusal.otherAxis(
        turned: IMUCalibrationSession.axisNames[turnedAxis], asked: askedName,
        again: lastAxis == turnedAxis)
      refusals.append(refusal)
      events.append(.refused(refusal))
    }
    lastAxis = turnedAxis
    let counts = (0..<3).map { "\(IMUCalibrationSession.axisNames[$0]) \(turnCounts[$0])" }
    return events
      + next(
        after: candidate,
        message:
          "pose \(poses.count) measured (a \(Int(angle.rounded()))° turn about \(IMUCalibrationSession.axisNames[turnedAxis])); turns: \(counts.joined(separator: ", ")) of \(settings.turnsPerAxis) each"
      )
  }

  /// (ω − b)·Δt for each sample of `span`, b the mean of the two poses' rates, Δt the whole
  /// number of periods since the sample before (more than one where samples were lost, counted
  /// in `lost`).
  func increments(
    _ span: Range<Int>, from first: IMUStillPose, to second: IMUStillPose, periodSeconds: Double
  ) -> (increments: [Vector3], lost: Int) {
    let bias = (first.gyroscopeMean + second.gyroscopeMean) / 2
    let periodNanoseconds = periodSeconds * 1e9
    var increments: [Vector3] = []
    increments.reserveCapacity(span.count)
    var lost = 0
    for k in span {
      let periods = max(1, (Double(times[k] - times[k - 1]) / periodNanoseconds).rounded())
      lost += Int(periods) - 1
      increments.append((gyroscope[k] - bias) * (periods * periodSeconds))
    }
    return (increments, lost)
  }

  /// The accepted turns, integrated over the period measured over the whole session.
  public var turns: [IMUTurn] {
    let period = measuredPeriodSeconds
    return turnSpans.map { span in
      IMUTurn(
        fromPose: span.fromPose,
        increments: increments(
          span.samples, from: poses[span.fromPose], to: poses[span.fromPose + 1],
          periodSeconds: period
        ).increments)
    }
  }

  mutating func refuse(_ refusal: IMUSessionRefusal) -> [IMUSessionEvent] {
    refusals.append(refusal)
    return [.refused(refusal)]
  }

  mutating func next(after pose: IMUStillPose, message: String) -> [IMUSessionEvent] {
    let up = sensorToBody * pose.accelerometerMean
    guard
      let axis = IMUCalibrationSession.nextAxis(
        counts: turnCounts, up: up, turnsPerAxis: settings.turnsPerAxis,
        levelDegrees: settings.levelAxisDegrees)
    else {
      requestedAxis = nil
      isComplete = true
      return [.progress(message), .complete]
    }
    requestedAxis = axis
    return [.progress(message), .instruction(instruction(axis: axis))]
  }

  /// Solves the session (`IMUCalibrationFit.solve`) with what it has.
  public func solve(gravity: Double = standardGravity) throws(IMUCalibrationError)
    -> IMUCalibrationSolution
  {
    guard turnCounts.allSatisfy({ $0 > 0 }) else {
      let missing = (0..<3).filter { turnCounts[$0] == 0 }.map {
        IMUCalibrationSession.axisNames[$0]
      }
      throw .turnsDegenerate("no turn about \(missing.joined(separator: " or "))")
    }
    return try IMUCalibrationFit.solve(poses: poses, turns: turns, gravity: gravity)
  }
}
