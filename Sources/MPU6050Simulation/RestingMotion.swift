import Geometry
import MotionScenarios

/// A body at rest in a fixed attitude, at a fixed temperature: zero angular rate, and the
/// specific force of gravity seen in the body frame, (0, 0, +g) when level. A consistent
/// `MotionSource` for boards that just need the chip to sit still (probes, start-up, faults).
public struct RestingMotion: MotionSource, Hashable, Sendable {
  /// The attitude (body → reference, z up).
  public var attitude: Quaternion
  /// The die temperature, °C.
  public var temperatureCelsius: Double

  public init(attitude: Quaternion = .identity, temperatureCelsius: Double = 25) {
    self.attitude = attitude
    self.temperatureCelsius = temperatureCelsius
  }

  public func truth(atSeconds seconds: Double) -> MotionTruth {
    MotionTruth(
      timeSeconds: max(0, seconds), attitude: attitude, angularRateRadiansPerSecond: .zero,
      specificForceMetersPerSecondSquared: attitude.inverseRotate(
        Vector3(0, 0, standardGravity)),
      temperatureCelsius: temperatureCelsius)
  }

  public var durationSeconds: Double? { nil }
}
