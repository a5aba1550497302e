import Calibration
import Geometry
import MotionScenarios
import Randomness
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// The IMU session's rules and fit on synthetic readings: a hand motion sampled at 100 Hz,
/// seen through a known sensitivity, offset and noise (no chip, no filter, no quantisation).
@Suite struct IMUCalibrationSessionTests {
  static let gyroSensitivity = Matrix3(
    rows: Vector3(1.03, 0.02, -0.01), Vector3(-0.015, 0.975, 0.02), Vector3(0.01, -0.02, 1.02))
  static let accelSensitivity = Matrix3(
    rows: Vector3(1.02, 0.004, -0.003), Vector3(0.004, 0.98, 0.006), Vector3(-0.003, 0.006, 1.01))
  static let gyroBias = Vector3(0.02, -0.05, 0.03)
  static let accelOffset = Vector3(0.3, -0.2, 0.5)

  /// Feeds `motion` to a session; `skip` drops samples (lost), `clip` flags them clipped.
  static func run(
    _ motion: HandPoseMotion, settings: IMUSessionSettings = IMUSessionSettings(),
    noise: Double = 1, skip: Set<Int> = [], clip: Set<Int> = []
  ) -> (session: IMUCalibrationSession, events: [IMUSessionEvent]) {
    var session = IMUCalibrationSession(settings: settings, nominalPeriodSeconds: 0.01)
    var random = SeededGenerator(seed: 7, stream: 1)
    func jitter(_ sigma: Double) -> Vector3 {
      // One scale, not `* (sigma * noise)`, which Swift 6.0.3 cannot type-check here.
      let scale = sigma * noise
      return Vector3(random.gaussian(), random.gaussian(), random.gaussian()) * scale
    }
    var events: [IMUSessionEvent] = []
    let samples = Int(((motion.durationSeconds ?? 0) + 5) * 100)
    for k in 0..<samples where !skip.contains(k) {
      let truth = motion.truth(atSeconds: Double(k) * 0.01)
      let g = gyroSensitivity * truth.angularRateRadiansPerSecond + gyroBias + jitter(0.001)
      let a =
        accelSensitivity * truth.specificForceMetersPerSecondSquared + accelOffset + jitter(0.004)
      events += session.add(
        timeNanoseconds: Int64(k) * 10_000_000, gyroscope: g, accelerometer: a,
        temperatureCelsius: 25, gyroscopeClipped: clip.contains(k))
    }
    return (session, events)
  }

  /// Turns about body axes by the given degrees, each held 3 s, turned over 1.5 s.
  static func motion(_ turns: [(axis: Vector3, degrees: Double)], start: Quaternion? = nil)
    -> HandPoseMotion
  {
    var q = start ?? Quaternion(axis: Vector3(1, 1, 0).normalized, angle: 0.1)
    var poses: [HandPoseMotion.Pose] = []
    for turn in turns {
      poses.append(.init(attitude: q, holdSeconds: 3, turnSeconds: 1.5, tremorDegrees: 0.2))
      q = (q * Quaternion(axis: turn.axis, angle: turn.degrees * radiansPerDegree)).normalized
    }
    poses.append(.init(attitude: q, holdSeconds: 4))
    return HandPoseMotion(poses: poses, seed: 3)
  }

  /// The turns a person asked by the session makes: the axis it asks for, 60–150°.
  static func followedSession(turnsPerAxis: Int = 4) -> [(axis: Vector3, degrees: Double)] {
    var q = Quaternion(axis: Vector3(1, 1, 0).normalized, angle: 0.1)
    var counts = [0, 0, 0]
    var turns: [(axis: Vector3, degrees: Double)] = []
    var random = SeededGenerator(seed: 11, stream: 2)
    while let axis = IMUCalibrationSession.nextAxis(
      counts: counts, up: q.inverseRotate(.unitZ), turnsPerAxis: turnsPerAxis, levelDegrees: 45)
    {
      let e = [Vector3.unitX, .unitY, .unitZ][axis]
      // Clear of the 45° level limit by 8°: the session sees up through the uncalibrated
      // accelerometer (0.5 m/s² of offset is 3°), and must ask for the axis planned here.
      var degrees = 0.0
      var next = q
      repeat {
        degrees = random.nextUniform(in: 60..<150)
        next = (q * Quaternion(axis: e, angle: degrees * radiansPerDegree)).normalized
        let u = next.inverseRotate(.unitZ)
        if [u.x, u.y, u.z].allSatisfy({ abs(acos(min(1, abs($0))) * degreesPerRadian - 45) > 8 }) {
          break
        }
      } while true
      turns.append((e, degrees))
      q = next
      counts[axis] += 1
    }
    return turns
  }

  @Test func aFollowedSessionRecoversBothSensorsAndCompletes() throws {
    let (session, events) = Self.run(Self.motion(Self.followedSession()))
    #expect(events.contains(.complete))
    #expect(session.refusals.isEmpty, "\(session.refusals)")
    #expect(session.turnCounts == [4, 4, 4])
    let solution = try session.solve()
    // The calibrated frame: A·S_a is a rotation R; the gyro's truth there is R·S_g⁻¹.
    let r = solution.accelerometer.matrix * Self.accelSensitivity
    let residual = r * r.transposed - .identity
    #expect(maxEntry(residual) < 2e-4)
    let gyroTruth = r * Self.gyroSensitivity.inverse!
    #expect(maxEntry(solution.gyroMatrix - gyroTruth) < 5e-4)
    #expect((solution.gyroBias - Self.gyroBias).length < 2e-4)
    #expect(
      (solution.accelerometer.offset - Self.accelOffset).length < 0.01,
      "\(solution.accelerometer.offset)")
    #expect(solution.verdict.verdict == .good, "\(solution.verdict)")
  }

  @Test func theNextAxisIsTheLeastTurnedLevelOne() {
    // z up: x and y are level; x has fewer turns.
    #expect(
      IMUCalibrationSession.nextAxis(
        counts: [1, 2, 0], up: .unitZ, turnsPerAxis: 4, levelDegrees: 45) == 0)
    // z has the fewest but points up: the fewest among the level ones.
    #expect(
      IMUCalibrationSession.nextAxis(
        counts: [3, 2, 0], up: Vector3(0.1, 0, 1), turnsPerAxis: 4, levelDegrees: 45) == 1)
    // Only z is short of turns and it points up: a tip about the most level axis first.
    #expect(
      IMUCalibrationSession.nextAxis(
        counts: [4, 4, 1], up: Vector3(0.05, 0.3, 1), turnsPerAxis: 4, levelDegrees: 45) == 0)
    #expect(
      IMUCalibrationSession.nextAxis(
        counts: [4, 4, 4], up: .unitZ, turnsPerAxis: 4, levelDegrees: 45) == nil)
  }

  @Test func aTurnAboutTheVerticalIsRefusedAndSaysWhichAxisToLevel() {
    // z up, a 90° turn about z: gravity does not move. Then one about x, which counts.
    let (session, _) = Self.run(Self.motion([(.unitZ, 90), (.unitX, 90)], start: .identity))
    #expect(
      session.refusals.contains {
        if case .turnAboutVertical(let degrees, _) = $0 { return degrees < 2 }
        return false
      }, "\(session.refusals)")
    #expect(session.poses.count == 2)
  }

  @Test func lostOrClippedSamplesDuringATurnKeepThePoseButNotTheTurn() {
    // z up; x turned first leaves z level for the second.
    let motion = Self.motion([(.unitX, 90), (.unitZ, 90)])
    // The first turn runs from 3.0 to 4.5 s: samples 300–450.
    let lost = Self.run(motion, skip: [370, 371, 372])
    #expect(lost.session.refusals.contains(.samplesLost(count: 3)), "\(lost.session.refusals)")
    #expect(lost.session.poses.count == 3)
    #expect(lost.session.turns.count == 1)
    let clipped = Self.run(motion, clip: Set(380..<390))
    #expect(clipped.session.refusals.contains(.clipped(count: 10)), "\(clipped.session.refusals)")
    #expect(clipped.session.turns.count == 1)
  }

  @Test func aSessionCutShortIsRefusedWithWhatIsMissing() {
    // The session's first turns: x, then z, then y.
    let plan = Self.followedSession()
    let (session, events) = Self.run(Self.motion(Array(plan.prefix(2))))
    #expect(!events.contains(.complete))
    #expect(session.turnCounts == [1, 0, 1])
    #expect {
      try session.solve()
    } throws: { error in
      "\(error)".contains("no turn about y") && "\(error)".contains("turn about each of x, y and z")
    }
    // With every axis turned once, too few poses for nine unknowns.
    let (short, _) = Self.run(Self.motion(Array(plan.prefix(3))))
    #expect {
      try short.solve()
    } throws: { error in
      (error as? IMUCalibrationError) == .tooFewPoses(have: 4, need: 9)
    }
  }

  @Test func aFlatRecordingNeverMakesAPose() {
    // A dead accelerometer: every reading zero. Still, but no pose has |a| near g.
    var session = IMUCalibrationSession(nominalPeriodSeconds: 0.01)
    for k in 0..<1000 {
      _ = session.add(
        timeNanoseconds: Int64(k) * 10_000_000, gyroscope: .zero, accelerometer: .zero,
        temperatureCelsius: .nan)
    }
    #expect(session.poses.isEmpty)
    #expect(session.refusals.first == .notGravity(magnitude: 0))
    #expect(throws: IMUCalibrationError.self) { try session.solve() }
  }
}

func maxEntry(_ m: Matrix3) -> Double {
  [m.row0, m.row1, m.row2].flatMap { [abs($0.x), abs($0.y), abs($0.z)] }.max()!
}
