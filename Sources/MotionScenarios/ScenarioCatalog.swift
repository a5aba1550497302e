import Geometry

/// The named motions a simulated board or a hardware-in-the-loop run can play, one line each:
/// what `plumb-hil scenarios` lists and what a board file's `simulation.scenario` names.
public enum ScenarioCatalog {
  /// A named scenario: what it is, and how to make it for a seed and a length.
  public struct Entry: Sendable {
    public var name: String
    public var summary: String
    /// The scenario's natural length, seconds (`nil`: as long as asked).
    public var naturalSeconds: Double?
    public var make: @Sendable (_ seed: UInt64, _ seconds: Double) -> any MotionSource
    /// What the scenario asks of the sensor beyond the motion (a wandering gyro bias); the
    /// simulated unit's own errors are the board's. `plumb run` ignores it; `plumb-hil` applies
    /// it to the simulated chip.
    public var sensor: ScenarioSensorConditions

    public init(
      name: String, summary: String, naturalSeconds: Double?,
      sensor: ScenarioSensorConditions = .none,
      make: @escaping @Sendable (_ seed: UInt64, _ seconds: Double) -> any MotionSource
    ) {
      self.name = name
      self.summary = summary
      self.naturalSeconds = naturalSeconds
      self.sensor = sensor
      self.make = make
    }
  }

  /// When the seed 001 scenarios' motion begins, seconds after power-on: 5 s, not the seed's
  /// 2 s. On the firmware the scenario's clock starts at power-on: start-up (reset,
  /// configuration, self-test, warm-up) takes 0.8 s of it, and the estimator's first rest,
  /// which measures an uncalibrated gyro's bias (±20 °/s) well enough for the gyro to carry the
  /// attitude through a push, needs 1.5 s of quiet samples after that: 2.3 s at the earliest.
  /// Motion at 2 s began before any rest, and the scenarios measured the start-up instead of
  /// what the seed shows (a typical unit's tilt run: 12.4° RMS inclination error instead of
  /// 2.6°; a push with no bias: 14.5° instead of 0.7°). 5 s leaves a margin, and it is when
  /// `plumb-hil`'s faults begin by default.
  public static let seedMotionStartSeconds = 5.0

  public static let entries: [Entry] = [
    Entry(
      name: "rest", summary: "a level board lying still", naturalSeconds: nil,
      make: { _, _ in RestScenario() }),
    Entry(
      name: "tilt", summary: "seed 001: tips 60° about x in 1 s at t = 5 s, then holds",
      naturalSeconds: 9,
      make: { _, _ in TiltScenario(startSeconds: seedMotionStartSeconds, totalSeconds: 9) }),
    Entry(
      name: "push",
      summary: "seed 001: level, pushed at 0.3 g from 5 s to 10 s (looks like a 16.7° tilt)",
      naturalSeconds: 13,
      make: { _, _ in
        PushScenario(
          startSeconds: seedMotionStartSeconds, endSeconds: seedMotionStartSeconds + 5,
          totalSeconds: 13)
      }),
    Entry(
      name: "walk",
      summary: "seed 001: held at 30°, bouncing vertically at 2 Hz with 0.3 g from 5 s",
      naturalSeconds: 15,
      make: { _, _ in WalkScenario(startSeconds: seedMotionStartSeconds, totalSeconds: 15) }),
    Entry(
      name: "rest-turn",
      summary: "seed 000: rests 5 s at the start of every minute, turns about vertical otherwise",
      naturalSeconds: 600, make: { _, seconds in RestTurnSession(totalSeconds: max(seconds, 60)) }),
    Entry(
      name: "handheld",
      summary: "free rotations between random poses with wobble, irregular rests, warming die",
      naturalSeconds: nil,
      make: { seed, seconds in HandheldMotion(seconds: max(seconds, 10), seed: seed) }),
    Entry(
      name: "rest-turn-wander",
      summary:
        "seed 000's rest-turn session with the gyro bias wandering at K = 2e-4 rad/s/√s",
      naturalSeconds: 600, sensor: ScenarioSensorConditions(gyroBiasRandomWalk: 2e-4),
      make: { _, seconds in RestTurnSession(totalSeconds: max(seconds, 60)) }),
    Entry(
      name: "car",
      summary:
        "a dashboard ride: stops, sustained accelerations, turns, braking, road shake, hills",
      naturalSeconds: 300,
      make: { seed, seconds in CarRide(seconds: max(seconds, 10), seed: seed) }),
    Entry(
      name: "long-corner",
      summary: "a motorway loop at 15 m/s: 3 m/s² across the car for 30 s while it turns 367°",
      naturalSeconds: 54,
      make: { _, _ in SustainedAcceleration(kind: .corner) }),
    Entry(
      name: "long-push",
      summary: "3 m/s² along x for 30 s, level and without rotation (after and before 10 s rests)",
      naturalSeconds: 54,
      make: { _, _ in SustainedAcceleration(kind: .straight) }),
    Entry(
      name: "power-on-push",
      summary: "3 m/s² along x for 30 s from 1.5 s after power-on, before any rest can be taken",
      naturalSeconds: 37,
      make: { _, _ in SustainedAcceleration(kind: .straight, restSeconds: 1.5) }),
    Entry(
      name: "engine-vibration-below",
      summary: "tilted 10°, an engine shakes it at 30 Hz (0.2 g) from 3 s: below the 50 Hz Nyquist",
      naturalSeconds: 20,
      make: { _, seconds in EngineVibration(frequencyHertz: 30, totalSeconds: seconds) }),
    Entry(
      name: "engine-vibration-above",
      summary:
        "tilted 10°, an engine shakes it at 60 Hz (0.2 g) from 3 s: above Nyquist, aliases to 40 Hz",
      naturalSeconds: 20,
      make: { _, seconds in EngineVibration(frequencyHertz: 60, totalSeconds: seconds) }),
    Entry(
      name: "temperature-ramp",
      summary: "the die warms 20 → 50 °C over 8 min while the board rests 20 s and turns 90° 20 s",
      naturalSeconds: 600, make: { _, seconds in TemperatureRamp(totalSeconds: seconds) }),
    Entry(
      name: "warm-up",
      summary:
        "lying still while the die warms 20 → 45 °C over 20 min: a bench warm-up for plumb-cal",
      naturalSeconds: 1500,
      make: { _, seconds in
        // Always resting (the rest fills the period), never turning.
        TemperatureRamp(
          startCelsius: 20, endCelsius: 45, rampSeconds: 1200, periodSeconds: 60,
          restSeconds: 60, turnRadians: 0, totalSeconds: seconds)
      }),
    Entry(
      name: "power-on-turning",
      summary:
        "switched on turning at 2 °/s about an axis 60° from vertical for 60 s, die warming; then rests",
      naturalSeconds: 120, make: { _, seconds in PowerOnInSlowRotation(totalSeconds: seconds) }),
    Entry(
      name: "restless",
      summary:
        "never still for five minutes from power-on: rolls, pitches, wanders in heading, die warming; then rests 20 s",
      naturalSeconds: 320,
      make: { seed, seconds in
        RestlessMotion(motionSeconds: max(0, seconds - 20), restSeconds: 20, seed: seed)
      }),
    Entry(
      name: "long-stillness",
      summary: "lying still for hours, the room drifting ±1.5 °C, the gyro bias wandering slowly",
      naturalSeconds: 4 * 3600, sensor: ScenarioSensorConditions(gyroBiasRandomWalk: 2e-5),
      make: { _, seconds in LongStillness(hours: seconds / 3600) }),
  ]

  public static var names: [String] { entries.map(\.name) }

  /// The scenario called `name`, or `nil`.
  public static func entry(named name: String) -> Entry? {
    entries.first { $0.name == name }
  }
}

/// A level board lying still at 25 °C, for ever.
public struct RestScenario: MotionSource, Hashable, Sendable {
  public var durationSeconds: Double? { nil }

  public init() {}

  public func truth(atSeconds seconds: Double) -> MotionTruth {
    MotionTruth(
      timeSeconds: seconds, attitude: .identity, angularRateRadiansPerSecond: .zero,
      specificForceMetersPerSecondSquared: Vector3(0, 0, standardGravity),
      temperatureCelsius: 25)
  }
}

/// What a scenario asks of the sensor besides the motion.
public struct ScenarioSensorConditions: Hashable, Sendable {
  /// The gyro bias's random walk K, rad/s/√s (0: the bias moves only with temperature). Seed
  /// 000 uses 2e-4, a bias that wanders visibly within minutes.
  public var gyroBiasRandomWalk: Double

  public init(gyroBiasRandomWalk: Double = 0) {
    self.gyroBiasRandomWalk = gyroBiasRandomWalk
  }

  /// Nothing beyond the unit's own errors.
  public static let none = ScenarioSensorConditions()
}
