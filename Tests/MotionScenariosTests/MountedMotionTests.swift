import Geometry
import MotionScenarios
import Testing

@Suite struct MountedMotionTests {
  /// A chip mounted upside down and turned a quarter on a tilting, turning body: its readings
  /// are the body's in its own axes, and turned back by the mounting they are the body's again;
  /// its attitude maps its own axes as the body's attitude maps the mounted ones.
  @Test func aMountedSensorReadsTheBodysMotionInItsOwnAxes() {
    let body = ScenarioCatalog.entry(named: "handheld")!.make(2, 30)
    let m = Matrix3(Quaternion(axis: .unitX, angle: .pi) * Quaternion(axis: .unitZ, angle: .pi / 2))
    let mounted = MountedMotion(body: body, sensorToBody: m)
    #expect(mounted.durationSeconds == body.durationSeconds)
    for t in stride(from: 0.0, through: 30, by: 1.7) {
      let b = body.truth(atSeconds: t)
      let s = mounted.truth(atSeconds: t)
      #expect((m * s.angularRateRadiansPerSecond - b.angularRateRadiansPerSecond).length < 1e-12)
      #expect(
        (m * s.specificForceMetersPerSecondSquared - b.specificForceMetersPerSecondSquared).length
          < 1e-12)
      let v = Vector3(0.3, -0.5, 0.8)
      #expect((s.attitude.rotate(v) - b.attitude.rotate(m * v)).length < 1e-12)
      #expect(s.temperatureCelsius == b.temperatureCelsius && s.timeSeconds == b.timeSeconds)
    }
  }
}
