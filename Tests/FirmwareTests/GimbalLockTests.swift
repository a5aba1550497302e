import Geometry
import Testing

@testable import Firmware

/// The loop flags frames near gimbal lock with its own cheap test (no yaw or roll): it must
/// agree with the Euler extraction a display uses, everywhere and exactly at the margin.
@Suite struct GimbalLockTests {
  @Test func theLoopsTestAgreesWithTheEulerExtraction() {
    var agreed = 0
    var flagged = 0
    // Pitch through the whole range, finely near ±90° and across the 5° margin, with yaw and
    // roll around the circle and quaternions of other than unit length.
    for pitchTenths in stride(from: -900, through: 900, by: 1) {
      let pitch = Double(pitchTenths) / 10 * radiansPerDegree
      for yawDegrees in stride(from: -180.0, to: 180, by: 45) {
        for (rollDegrees, scale) in [(0.0, 1.0), (37.0, 0.5), (-120.0, 2.0)] {
          let unit = Quaternion(
            yaw: yawDegrees * radiansPerDegree, pitch: pitch, roll: rollDegrees * radiansPerDegree)
          let q = Quaternion(
            w: unit.w * scale, x: unit.x * scale, y: unit.y * scale, z: unit.z * scale)
          let expected = q.eulerAngles().isNearGimbalLock
          #expect(
            SimulatedLoop.isNearGimbalLock(q) == expected, "pitch \(Double(pitchTenths) / 10)°")
          agreed += 1
          if expected { flagged += 1 }
        }
      }
    }
    // Pitch within 5° of ±90° is flagged: 85.0° … 90.0° on each side, 102 of the 1801 pitch
    // values (give or take the two at exactly 85°, where rounding decides).
    #expect((100 * 24...102 * 24).contains(flagged), "\(flagged / 24) pitch values flagged")
    #expect(agreed == 1801 * 8 * 3)
  }
}
