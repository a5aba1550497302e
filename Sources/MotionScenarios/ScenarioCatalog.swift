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

    public init(
      name: String, summary: String, naturalSeconds: Double?,
      make: @escaping @Sendable (_ seed: UInt64, _ seconds: Double) -> any MotionSource
    ) {
      self.name = name
      self.summary = summary
      self.naturalSeconds = naturalSeconds
      self.make = make
    }
  }

  public static let entries: [Entry] = [
    Entry(
      name: "rest", summary: "a level board lying still", naturalSeconds: nil,
      make: { _, _ in RestScenario() }),
    Entry(
      name: "tilt", summary: "seed 001: tips 60° about x in 1 s at t = 2 s, then holds",
      naturalSeconds: 6, make: { _, _ in TiltScenario() }),
    Entry(
      name: "push", summary: "seed 001: level, pushed at 0.3 g for 5 s (looks like a 16.7° tilt)",
      naturalSeconds: 10, make: { _, _ in PushScenario() }),
    Entry(
      name: "walk",
      summary: "seed 001: held at 30°, bouncing vertically at 2 Hz with 0.3 g", naturalSeconds: 10,
      make: { _, _ in WalkScenario() }),
    Entry(
      name: "rest-turn",
      summary: "seed 000: rests 5 s at the start of every minute, turns about vertical otherwise",
      naturalSeconds: 600, make: { _, seconds in RestTurnSession(totalSeconds: max(seconds, 60)) }),
    Entry(
      name: "handheld",
      summary: "free rotations between random poses with wobble, irregular rests, warming die",
      naturalSeconds: nil,
      make: { seed, seconds in HandheldMotion(seconds: max(seconds, 10), seed: seed) }),
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
