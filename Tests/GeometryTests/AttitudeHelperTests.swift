import Geometry
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

private func rad(_ degrees: Double) -> Double { degrees * .pi / 180 }
private func deg(_ radians: Double) -> Double { radians * 180 / .pi }

@Suite struct EulerAngleTests {
  @Test func roundTripsAwayFromTheLock() {
    for (yaw, pitch, roll) in [(40.0, 20.0, -10.0), (-170, -60, 150), (5, 80, -90), (179, 0, 0)] {
      let q = Quaternion(yaw: rad(yaw), pitch: rad(pitch), roll: rad(roll))
      let e = q.eulerAngles()
      #expect(!e.isNearGimbalLock)
      #expect(abs(deg(e.yaw) - yaw) < 1e-9)
      #expect(abs(deg(e.pitch) - pitch) < 1e-9)
      #expect(abs(deg(e.roll) - roll) < 1e-9)
    }
  }

  /// The stated order: yaw about z first, then pitch about the new y, then roll about the new x.
  @Test func orderIsYawThenPitchThenRoll() {
    let q = Quaternion(yaw: rad(90), pitch: rad(30), roll: 0)
    // After yawing 90°, the body x axis points along reference y; pitching about the new y
    // (reference −x) by 30° tips it down by 30° (positive pitch is nose down in z-up frames).
    let nose = q.rotate(.unitX)
    #expect((nose - Vector3(0, cos(rad(30)), -sin(rad(30)))).length < 1e-12)
  }

  /// Seed 003: at pitch 90° yaw 40°/roll 10° and yaw 70°/roll 40° are the same rotation; near
  /// the lock a 0.2° nudge swung yaw by 34°. Flagged and folded, the display holds still.
  @Test func flagsAndStabilisesNearTheLock() {
    let a = Quaternion(yaw: rad(40), pitch: rad(90), roll: rad(10))
    let b = Quaternion(yaw: rad(70), pitch: rad(90), roll: rad(40))
    #expect(a.angle(to: b) < 1e-9)
    let ea = a.eulerAngles()
    let eb = b.eulerAngles()
    #expect(ea.isNearGimbalLock && eb.isNearGimbalLock)
    #expect(ea.roll == 0)
    #expect(abs(deg(ea.yaw) - 30) < 1e-6)
    #expect(abs(ea.yaw - eb.yaw) < 1e-6)

    let near = Quaternion(yaw: rad(40), pitch: rad(89.9), roll: rad(10))
    let nudged = Quaternion(axis: .unitX, angle: rad(0.2)) * near
    let before = near.eulerAngles()
    let after = nudged.eulerAngles()
    #expect(before.isNearGimbalLock && after.isNearGimbalLock)
    #expect(abs(deg(after.yaw - before.yaw)) < 0.5)
    // The raw extraction (no margin) shows the jitter the flag avoids.
    let rawBefore = near.eulerAngles(gimbalLockMargin: 0)
    let rawAfter = nudged.eulerAngles(gimbalLockMargin: 0)
    #expect(abs(deg(rawAfter.yaw - rawBefore.yaw)) > 20)
    // At −90° as well.
    let down = Quaternion(yaw: rad(25), pitch: rad(-88), roll: rad(15)).eulerAngles()
    #expect(down.isNearGimbalLock && abs(deg(down.yaw) - 40) < 0.5)
  }

  @Test func marginIsConfigurable() {
    let q = Quaternion(yaw: 0.1, pitch: rad(80), roll: 0.2)
    #expect(!q.eulerAngles().isNearGimbalLock)
    #expect(q.eulerAngles(gimbalLockMargin: rad(15)).isNearGimbalLock)
  }
}

@Suite struct BearingAndTareTests {
  /// Seed 003's compass example: flat, the top edge reads 30°; upright, the camera axis does.
  @Test func bearingOfTheAxisThatIsHorizontal() throws {
    let top = Vector3(0, 1, 0)
    let camera = Vector3(0, 0, -1)
    let flat = Quaternion(axis: .unitZ, angle: rad(-30)) * Quaternion(axis: .unitZ, angle: rad(-90))
    let upright = flat * Quaternion(axis: .unitX, angle: rad(90))
    #expect(abs(deg(try #require(flat.horizontalBearing(of: top))) - 30) < 1e-9)
    #expect(flat.horizontalBearing(of: camera) == nil)
    #expect(upright.horizontalBearing(of: top) == nil)
    #expect(abs(deg(try #require(upright.horizontalBearing(of: camera))) - 30) < 1e-9)
  }

  @Test func bearingIsClockwiseInZeroToTwoPi() throws {
    // Turning left (counter-clockwise, +z) by 10° points x at bearing 350°.
    let left = Quaternion(axis: .unitZ, angle: rad(10))
    #expect(abs(deg(try #require(left.horizontalBearing(of: .unitX))) - 350) < 1e-9)
    #expect(abs(deg(try #require(Quaternion.identity.horizontalBearing(of: .unitX)))) < 1e-12)
  }

  /// Seed 003: a 25° turn about the body's own y axis after the tare comes back exactly.
  @Test func tareGivesTheChangeSinceTheSavedAttitude() {
    let saved = Quaternion(axis: .unitZ, angle: rad(50)) * Quaternion(axis: .unitX, angle: rad(15))
    let later = saved * Quaternion(axis: .unitY, angle: rad(25))
    let change = later.relative(to: saved)
    #expect(change.angle(to: Quaternion(axis: .unitY, angle: rad(25))) < 1e-9)
    #expect(saved.relative(to: saved).angle < 1e-12)
  }

  @Test func headingIsTheTwistAboutVertical() {
    for yaw in [-170.0, -30, 0, 45, 179] {
      let tilted =
        Quaternion(axis: .unitZ, angle: rad(yaw)) * Quaternion(axis: Vector3(1, 2, 0), angle: 0.7)
      #expect(abs(deg(tilted.heading) - yaw) < 1e-9)
      let level = tilted.removingHeading
      #expect(abs(level.heading) < 1e-12)
      // Removing heading keeps the tilt: gravity in the body is unchanged.
      #expect((level.gravityInBody - tilted.gravityInBody).length < 1e-12)
    }
  }
}
