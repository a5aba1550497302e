import Geometry
import Telemetry
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

private let degree = Double.pi / 180

/// MAVLink's attitude as a ground station reads it: roll, pitch, yaw from the NED quaternion by
/// the standard aerospace ZYX formulas (written here independently of `NEDEulerAngles`).
private func groundStationAngles(_ q: Quaternion) -> (roll: Double, pitch: Double, yaw: Double) {
  let roll = atan2(2 * (q.w * q.x + q.y * q.z), 1 - 2 * (q.x * q.x + q.y * q.y))
  let pitch = asin(max(-1, min(1, 2 * (q.w * q.y - q.z * q.x))))
  let yaw = atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
  return (roll / degree, pitch / degree, yaw / degree)
}

@Suite struct FrameConventionTests {
  @Test func aLevelUnrotatedBoardIsTheIdentityInMAVLink() {
    let q = MAVLinkFrames.nedAttitude(fromPlumb: .identity)
    #expect(q == Quaternion(w: 1, x: 0, y: 0, z: 0))
    let euler = NEDEulerAngles(plumbAttitude: .identity)
    #expect(euler.rollRadians == 0 && euler.pitchRadians == 0 && euler.yawRadians == 0)
  }

  @Test func rollingRightGivesPositiveRoll() {
    for angle in [1.0, 20, 60, 120] {
      // Right side down: in Plumb's body frame (x forward, y left, z up) that is a positive turn
      // about x, which lifts y (left).
      let attitude = Quaternion(axis: .unitX, angle: angle * degree)
      let rightSide = attitude.rotate(Vector3(0, -1, 0))
      #expect(rightSide.z < 0, "the right side went down")
      let angles = groundStationAngles(MAVLinkFrames.nedAttitude(fromPlumb: attitude))
      #expect(abs(angles.roll - angle) < 1e-9)
      #expect(abs(angles.pitch) < 1e-9 && abs(angles.yaw) < 1e-9)
    }
  }

  @Test func turningClockwiseSeenFromAboveIncreasesYaw() {
    var previous = -Double.infinity
    for angle in stride(from: 0.0, through: 170, by: 10) {
      // Seen from above (looking down −z), clockwise takes the nose from +x towards −y (right).
      let attitude = Quaternion(axis: .unitZ, angle: -angle * degree)
      let nose = attitude.rotate(.unitX)
      if angle > 0 { #expect(nose.y < 0, "the nose turned right") }
      let yaw = groundStationAngles(MAVLinkFrames.nedAttitude(fromPlumb: attitude)).yaw
      #expect(abs(yaw - angle) < 1e-9)
      #expect(yaw > previous)
      previous = yaw
    }
  }

  @Test func noseUpGivesPositivePitch() {
    let attitude = Quaternion(axis: .unitY, angle: -25 * degree)
    #expect(attitude.rotate(.unitX).z > 0, "the nose went up")
    let angles = groundStationAngles(MAVLinkFrames.nedAttitude(fromPlumb: attitude))
    #expect(abs(angles.pitch - 25) < 1e-9)
  }

  /// q_mav = Rx(π) ⊗ q ⊗ Rx(π)*, computed with the quaternion product, equals (w, x, −y, −z).
  @Test func conversionIsConjugationByAHalfTurnAboutX() {
    let c = Quaternion(axis: .unitX, angle: .pi)
    var random = SplitMix64(seed: 31)
    for _ in 0..<1000 {
      let q = random.quaternion()
      let conjugated = c * q * c.conjugate
      let converted = MAVLinkFrames.nedAttitude(fromPlumb: q)
      #expect(conjugated.angle(to: converted) < 1e-7)
      #expect(abs(conjugated.w - converted.w) < 1e-12, "same sign, not just same rotation")
      #expect(MAVLinkFrames.plumbAttitude(fromNED: converted) == q)
      // Vectors: converting then rotating equals rotating then converting.
      let v = random.vector(10)
      let a = converted.rotate(MAVLinkFrames.flipYZ(v))
      let b = MAVLinkFrames.flipYZ(q.rotate(v))
      #expect((a - b).length < 1e-9)
    }
  }

  @Test func gravityLandsOnDownAndTheAccelerometerReadsUp() {
    // DESIGN.md's gravity test: gravity (body) mapped with the attitude lands on (0, 0, −1) g.
    var random = SplitMix64(seed: 9)
    for _ in 0..<100 {
      let q = random.quaternion()
      let frame = TelemetryFrame(
        attitude: q,
        gravityBodyMetersPerSecondSquared: q.inverseRotate(Vector3(0, 0, -standardGravity)))
      let down = q.rotate(frame.gravityBodyMetersPerSecondSquared) / standardGravity
      #expect((down - Vector3(0, 0, -1)).length < 1e-12)
      // At rest the accelerometer reads +1 g up in Plumb's body frame; −g along FRD z when level.
      let up = q.rotate(frame.specificForceBodyMetersPerSecondSquared)
      #expect((up - Vector3(0, 0, standardGravity)).length < 1e-9)
    }
    let level = MAVLinkFrames.flipYZ(TelemetryFrame().specificForceBodyMetersPerSecondSquared)
    #expect(level == Vector3(0, 0, -standardGravity))
  }

  @Test func eulerAnglesRoundTripAwayFromTheLock() {
    var random = SplitMix64(seed: 0xE)
    for _ in 0..<1000 {
      let angles = NEDEulerAngles(
        rollRadians: random.uniform(-179, 179) * degree,
        pitchRadians: random.uniform(-84, 84) * degree,
        yawRadians: random.uniform(-179, 179) * degree)
      let back = NEDEulerAngles(plumbAttitude: angles.plumbAttitude)
      #expect(abs(back.rollRadians - angles.rollRadians) < 1e-9)
      #expect(abs(back.pitchRadians - angles.pitchRadians) < 1e-9)
      #expect(abs(back.yawRadians - angles.yawRadians) < 1e-9)
      #expect(!back.isNearGimbalLock)
    }
  }

  /// Seed 003: at pitch 90° yaw 40°/roll 10° and yaw 70°/roll 40° are one rotation; near it,
  /// Euler angles are flagged.
  @Test func gimbalLockIsFlaggedWithinFiveDegrees() {
    let a = NEDEulerAngles(
      rollRadians: 10 * degree, pitchRadians: 90 * degree, yawRadians: 40 * degree)
    let b = NEDEulerAngles(
      rollRadians: 40 * degree, pitchRadians: 90 * degree, yawRadians: 70 * degree)
    #expect(a.nedAttitude.angle(to: b.nedAttitude) < 1e-9)
    for (pitch, near) in [(84.9, false), (85.1, true), (89.9, true), (-85.1, true), (-84.9, false)]
    {
      let e = NEDEulerAngles(
        plumbAttitude: NEDEulerAngles(rollRadians: 0, pitchRadians: pitch * degree, yawRadians: 0)
          .plumbAttitude)
      #expect(e.isNearGimbalLock == near, "pitch \(pitch)°")
    }
  }

  /// Found by fuzzing (fuzz-monitor-text): the line `roll 3, pitch 90, yaw 90` decoded to an
  /// attitude that encoded as `0, 90, 90`, a rotation 3° away. At pitch ±90° only yaw − roll
  /// (at +90°) or yaw + roll (at −90°) is defined, and the general formulas divide rounding
  /// noise by rounding noise there: the angles at the lock are now roll 0 and that combination
  /// in yaw, the same rotation.
  @Test(arguments: [90.0, -90.0, 89.99999, -89.99999])
  func theAnglesAtTheLockAreTheSameRotation(pitch: Double) {
    var random = SplitMix64(seed: 0x90)
    for _ in 0..<200 {
      let angles = NEDEulerAngles(
        rollRadians: random.uniform(-179, 179) * degree, pitchRadians: pitch * degree,
        yawRadians: random.uniform(-179, 179) * degree)
      for attitude in [angles.nedAttitude, angles.plumbAttitude] {
        let back =
          attitude == angles.nedAttitude
          ? NEDEulerAngles(nedAttitude: attitude) : NEDEulerAngles(plumbAttitude: attitude)
        let again = attitude == angles.nedAttitude ? back.nedAttitude : back.plumbAttitude
        #expect(
          attitude.angle(to: again) < 1e-6,
          "\(angles) came back as \(back), \(attitude.angle(to: again) / degree)° apart")
      }
    }
  }
}
