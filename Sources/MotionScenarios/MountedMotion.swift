import Geometry

/// What a sensor mounted on a moving body measures: the body's motion seen in the sensor's own
/// axes. `sensorToBody` is a board file's mounting (`body = sensorToBody · sensor`), so the
/// sensor reads `sensorToBodyᵀ · ω` and `sensorToBodyᵀ · f`, and its attitude is the body's
/// turned by the mounting. The firmware, told the same mounting, turns the readings back: a
/// hardware-in-the-loop run then judges its frames against the body's own truth.
public struct MountedMotion: MotionSource {
  public let body: any MotionSource
  public let sensorToBody: Matrix3
  let bodyToSensor: Matrix3
  let mountingRotation: Quaternion

  public init(body: any MotionSource, sensorToBody: Matrix3) {
    self.body = body
    self.sensorToBody = sensorToBody
    bodyToSensor = sensorToBody.transposed
    mountingRotation = Quaternion(rotationMatrix: sensorToBody)
  }

  public var durationSeconds: Double? { body.durationSeconds }

  /// What a chip mounted so on `body` reads: `body` itself for the identity mounting.
  public static func mount(_ body: any MotionSource, sensorToBody: Matrix3) -> any MotionSource {
    sensorToBody == .identity ? body : MountedMotion(body: body, sensorToBody: sensorToBody)
  }

  public func truth(atSeconds seconds: Double) -> MotionTruth {
    let t = body.truth(atSeconds: seconds)
    return MotionTruth(
      timeSeconds: t.timeSeconds, attitude: t.attitude * mountingRotation,
      angularRateRadiansPerSecond: bodyToSensor * t.angularRateRadiansPerSecond,
      specificForceMetersPerSecondSquared: bodyToSensor * t.specificForceMetersPerSecondSquared,
      temperatureCelsius: t.temperatureCelsius)
  }
}
