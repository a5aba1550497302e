import AttitudeEstimation
import Geometry
import MotionScenarios
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A level body still until 2 s, shaken about the vertical at 90 °/s and 2 Hz until 5 s (the
/// rate at its peak when it stops), then still: its samples are far from quiet while shaken.
struct Shake: MotionSource {
  var startSeconds = 2.0
  /// A whole number of the shake's half-second periods after the start.
  var endSeconds = 5.0
  var durationSeconds: Double? = 10

  func truth(atSeconds t: Double) -> MotionTruth {
    let shaking = t >= startSeconds && t < endSeconds
    let amplitude = radians(90)
    let phase = 2 * Double.pi * 2 * (t - startSeconds)
    let rate = shaking ? amplitude * cos(phase) : 0
    let heading = shaking ? amplitude / (2 * Double.pi * 2) * sin(phase) : 0
    return MotionTruth(
      timeSeconds: t, attitude: Quaternion(axis: .unitZ, angle: heading),
      angularRateRadiansPerSecond: Vector3(0, 0, rate),
      specificForceMetersPerSecondSquared: Vector3(0, 0, 9.80665), temperatureCelsius: 25)
  }
}

@Suite struct GyroBiasCaptureTests {
  /// The raw gyro offset, rad/s (about 1.1, −0.9 and 0.6 °/s), and the white noise per axis per
  /// sample, rad/s, at 100 Hz.
  static let offset = Vector3(0.02, -0.015, 0.01)
  static let noise = 0.002
  static let sensor = InertialSensorModel.Settings(
    gyroBiasRadiansPerSecond: offset, gyroNoiseRadiansPerSecond: noise,
    accelerometerNoiseMetersPerSecondSquared: 0.03)
  /// The estimator told the sensor's noise: density = σ·√dt.
  static let settings: AttitudeEstimator.Settings = {
    var s = AttitudeEstimator.Settings.default
    s.noise.gyroNoiseDensity = noise * 0.1
    return s
  }()
  /// Still and level for 8 s.
  static let still = PushScenario(startSeconds: 100, endSeconds: 100, totalSeconds: 8)

  /// The raw samples a run of `source` feeds, for checking the capture's mean independently.
  static func readings(_ source: some MotionSource, seed: UInt64 = 1) -> [Vector3] {
    var model = InertialSensorModel(settings: sensor, seed: seed)
    let count = Int(((source.durationSeconds ?? 10) * 100).rounded())
    return (0..<count).map {
      model.measure(source.truth(atSeconds: Double($0) * 0.01), intervalSeconds: 0.01)
        .angularRateRadiansPerSecond
    }
  }

  @Test func aCaptureAtRestRecoversAConstantOffsetWithinTheStandardError() throws {
    var captured: Result<GyroBiasCapture, GyroBiasCaptureRefusal>?
    let (estimates, _) = runWithCommands(
      Self.still, sensor: Self.sensor, settings: Self.settings,
      commands: [600: { captured = $0.captureGyroBias() }])
    let capture = try #require(try captured?.get())
    #expect(estimates[599].flags.contains(.atRest))
    let n = capture.samples
    // The standard error of a mean of n samples, per axis.
    let standardError = Self.noise / Double(n).squareRoot()
    let error = capture.biasRadiansPerSecond - Self.offset
    print(
      "capture after \(capture.restSeconds) s of rest (\(n) samples): error \(error) rad/s, "
        + "standard error \(standardError), reported σ \(capture.standardDeviationRadiansPerSecond)"
    )
    #expect(abs(error.x) < 3 * standardError)
    #expect(abs(error.y) < 3 * standardError)
    #expect(abs(error.z) < 3 * standardError)
    // The reported σ is that standard error, from the configured noise density: N/√T.
    #expect(abs(capture.standardDeviationRadiansPerSecond / standardError - 1) < 1e-9)
    #expect(abs(capture.restSeconds - Double(n) * 0.01) < 1e-9)
    // The whole rest, each sample once: from the first quiet sample (the third: the first
    // starts the estimator, the second the rest detector's window) to the last before the
    // capture.
    #expect(n == 598)
    let raw = Self.readings(Self.still)[2..<600]
    let mean = raw.reduce(Vector3.zero, +) * (1 / Double(raw.count))
    #expect((capture.biasRadiansPerSecond - mean).length < 1e-12)
    #expect(capture.referenceTemperatureCelsius == 25)
  }

  @Test func theNextEstimateCarriesTheCapturedBias() throws {
    var captured: Result<GyroBiasCapture, GyroBiasCaptureRefusal>?
    // A capture in the middle of a block, and one just before a block's last sample.
    for index in [433, 619] {
      let (estimates, _) = runWithCommands(
        Self.still, sensor: Self.sensor, settings: Self.settings,
        commands: [index: { captured = $0.captureGyroBias() }])
      let capture = try #require(try captured?.get())
      #expect(estimates[index].gyroBiasRadiansPerSecond == capture.biasRadiansPerSecond)
      let sigma = capture.standardDeviationRadiansPerSecond
      // (Less when this sample ended a block: its rest measurements were applied.)
      #expect(estimates[index].gyroBiasVariance.x <= sigma * sigma)
      let readings = Self.readings(Self.still)
      #expect(
        estimates[index].angularRateRadiansPerSecond
          == readings[index] - capture.biasRadiansPerSecond)
      // The rest goes on measuring it: the estimate is the running mean of the whole rest.
      // The estimate moves at the sample after a block's end, with the block's samples.
      let moved = try #require(
        (index + 1..<800).last {
          estimates[$0].gyroBiasRadiansPerSecond != estimates[$0 - 1].gyroBiasRadiansPerSecond
        })
      let raw = readings[2..<moved]
      let mean = raw.reduce(Vector3.zero, +) * (1 / Double(raw.count))
      #expect((estimates[moved].gyroBiasRadiansPerSecond - mean).length < 1e-12)
    }
  }

  @Test func aStillnessRefusedAsASlowTurnIsRefusedWithWhatToDo() throws {
    // A calibration 1 °/s off about the vertical that claims 0.05 °/s: every dwell of this
    // stillness is refused as a slow turn (README, "A wrong bias, re-opened").
    var settings = Self.settings
    settings.bias = .calibrated(
      biasRadiansPerSecond: Self.offset + Vector3(0, 0, radians(1)),
      uncertaintyRadiansPerSecond: radians(0.05))
    let (refused, _) = try refusal(Self.still, at: 400, settings: settings)
    guard case .dwellRefused(.slowTurn(let rate)) = refused.reason else {
      Issue.record("\(refused.reason)")
      return
    }
    #expect(abs(degrees(rate) - 1) < 0.05)
    #expect(abs(refused.holdSeconds - 3) < 0.015)
    #expect(refused.description.contains("°/s against the gyro bias, taken for a slow turn"))
    // Done as it says: lifted (shaken for a second) and set down still, the capture succeeds
    // 3 s later, and measures the offset.
    let lifted = Shake(startSeconds: 4, endSeconds: 5, durationSeconds: 10)
    var captured: Result<GyroBiasCapture, GyroBiasCaptureRefusal>?
    _ = runWithCommands(
      lifted, sensor: Self.sensor, settings: settings,
      commands: [802: { captured = $0.captureGyroBias() }])
    let capture = try #require(try captured?.get())
    #expect((capture.biasRadiansPerSecond - Self.offset).length < radians(0.05))
  }

  /// The refusal returned before sample `index` of `source`, and the estimates.
  func refusal(
    _ source: some MotionSource, at index: Int, settings: AttitudeEstimator.Settings = settings
  ) throws -> (GyroBiasCaptureRefusal, [AttitudeEstimate]) {
    var result: Result<GyroBiasCapture, GyroBiasCaptureRefusal>?
    let (estimates, _) = runWithCommands(
      source, sensor: Self.sensor, settings: settings,
      commands: [index: { result = $0.captureGyroBias() }])
    guard case .failure(let refusal) = try #require(result) else {
      Issue.record("captured at \(index)")
      throw CancellationError()
    }
    print("refused at sample \(index): \(refusal)")
    return (refusal, estimates)
  }

  @Test func aCaptureIsRefusedWhileInitialisingAndChangesNothing() throws {
    let (first, _) = try refusal(Self.still, at: 0)
    #expect(first.reason == .initialising)
    #expect(first.description.hasPrefix("initialising"))
    let (early, estimates) = try refusal(Self.still, at: 50)
    #expect(early.reason == .initialising)
    #expect(abs(early.holdSeconds - 1.0) < 0.3)  // a 1.5 s dwell, 0.5 s of it done
    let (reference, _) = runWithCommands(Self.still, sensor: Self.sensor, settings: Self.settings)
    #expect(estimates == reference)
  }

  @Test func aCaptureIsRefusedWhileMovingWithHowLongToHoldStill() throws {
    let motion = Shake()
    // At a peak of the shake.
    let (moving, estimates) = try refusal(motion, at: 414)
    #expect(moving.reason == .moving)
    #expect(
      moving.description
        == "not at rest: the board is moving; hold it still for 1.5 s and ask again")
    let (reference, _) = runWithCommands(motion, sensor: Self.sensor, settings: Self.settings)
    #expect(estimates == reference)
    // 0.4 s after the shake stopped (at its peak: the sample at 5 s is the last that moves).
    let (stopped, _) = try refusal(motion, at: 541)
    #expect(stopped.reason == .movedRecently)
    #expect(abs(stopped.stillSeconds - 0.4) < 0.015)
    #expect(abs(stopped.holdSeconds - 1.1) < 0.015)
    #expect(
      stopped.description
        == "not at rest: the board moved 0.4 s ago; hold it still for 1.1 s more and ask again")
    // Once it rests, a capture is made.
    var captured: Result<GyroBiasCapture, GyroBiasCaptureRefusal>?
    _ = runWithCommands(
      motion, sensor: Self.sensor, settings: Self.settings,
      commands: [900: { captured = $0.captureGyroBias() }])
    let capture = try #require(try captured?.get())
    #expect(capture.restSeconds > 2 && capture.restSeconds <= 4)
  }

  @Test func aCaptureIsRefusedWithoutRestDetection() throws {
    var settings = Self.settings
    settings.rest.isEnabled = false
    let (off, _) = try refusal(Self.still, at: 600, settings: settings)
    #expect(off.reason == .restDetectionOff)
  }

  @Test func theSameCaptureAtTheSameSampleGivesTheSameEstimates() {
    let capture: (inout AttitudeEstimator) -> Void = { _ = $0.captureGyroBias() }
    let motion = YawSegments(segments: [(4, 0), (2, radians(30)), (4, 0)])
    let (a, _) = runWithCommands(
      motion, sensor: Self.sensor, settings: Self.settings, commands: [300: capture])
    let (b, _) = runWithCommands(
      motion, sensor: Self.sensor, settings: Self.settings, commands: [300: capture])
    let (none, _) = runWithCommands(motion, sensor: Self.sensor, settings: Self.settings)
    #expect(a == b)
    #expect(a[300...] != none[300...])
  }
}
