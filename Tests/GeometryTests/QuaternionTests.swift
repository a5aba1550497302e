import Geometry
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Degrees → radians, restated here rather than imported.
private func rad(_ degrees: Double) -> Double { degrees * .pi / 180 }
private func deg(_ radians: Double) -> Double { radians * 180 / .pi }

private func close(_ a: Vector3, _ b: Vector3, _ tolerance: Double = 1e-12) -> Bool {
  (a - b).length <= tolerance
}

/// A reproducible spread of attitudes (no random generator needed): axes and angles on a grid.
private let sampleAttitudes: [Quaternion] = {
  var result: [Quaternion] = []
  for i in 0..<7 {
    for j in 0..<5 {
      let axis = Vector3(cos(Double(i)), sin(Double(i) * 1.3), cos(Double(j) * 0.7 + 0.3))
      result.append(Quaternion(axis: axis, angle: -3 + Double(i * 5 + j) * 0.18))
    }
  }
  return result
}()

@Suite struct QuaternionConventionTests {
  /// Seed 003's test: an attitude maps body → reference, so the gravity a body at rest feels,
  /// mapped with the attitude, lands on the reference's straight down; the inverse map does not.
  @Test func gravityMappedWithTheAttitudeLandsOnStraightDown() {
    var wrongWay = 0.0
    for q in sampleAttitudes {
      // A body at rest with attitude q: the reference's down, seen in body axes.
      let bodyGravity = q.conjugate.rotate(Vector3(0, 0, -1))
      #expect(close(q.rotate(bodyGravity), Vector3(0, 0, -1)))
      #expect(close(q.gravityInBody, bodyGravity))
      wrongWay += q.conjugate.rotate(bodyGravity).angle(to: Vector3(0, 0, -1))
    }
    // The opposite convention misses by a wide margin on average (seed 003: 61.8° on random
    // attitudes), so the test cannot pass by accident.
    #expect(deg(wrongWay / Double(sampleAttitudes.count)) > 30)
  }

  /// The small-angle series against the exact exponential map: close for every step the
  /// estimator takes with it (θ² ≤ 0.25), its terms the documented ones, bit for bit.
  @Test func smallRotationVectorSeriesIsTheExponentialMapToFourthOrder() {
    for (r, angle) in [
      (Vector3(1e-3, -2e-3, 5e-4), 2.29e-3), (Vector3(0.1, 0.2, -0.3), 0.374),
      (Vector3(0, 0, 0.5), 0.5), (Vector3(0, 0, 0), 0),
    ] {
      let t2 = r.dot(r)
      let series = Quaternion(smallRotationVector: r, squaredAngle: t2)
      let exact = Quaternion(rotationVector: r)
      #expect(series.angle(to: exact) <= max(1e-15, pow(angle, 5) / 1920 * 2), "\(r)")
      let h = 0.5 - t2 * (1.0 / 48)
      #expect(series.w == 1 - t2 * (1.0 / 8) + t2 * t2 * (1.0 / 384))
      #expect(series.x == r.x * h && series.y == r.y * h && series.z == r.z * h)
    }
  }

  @Test func qAndMinusQAreOneAttitude() {
    for q in sampleAttitudes {
      let negated = Quaternion(w: -q.w, x: -q.x, y: -q.y, z: -q.z)
      #expect(q != negated)
      #expect(q.angle(to: negated) < 1e-7)
      #expect(close(q.rotate(.unitX), negated.rotate(.unitX)))
      #expect(q.sameHemisphere(as: negated) == negated)
    }
  }

  @Test func angleBetweenAttitudesIsTheRotationBetweenThem() {
    let a = Quaternion(axis: Vector3(1, 2, 3), angle: rad(30))
    let b = a * Quaternion(axis: Vector3(0, 1, 0), angle: rad(25))
    #expect(abs(deg(a.angle(to: b)) - 25) < 1e-9)
    #expect(abs(deg(b.angle(to: a)) - 25) < 1e-9)
    // Small angles stay accurate (atan2 form, not 2·acos w).
    let tiny = a * Quaternion(axis: .unitZ, angle: 1e-9)
    #expect(abs(a.angle(to: tiny) - 1e-9) < 1e-15)
  }

  @Test func rotationVectorInvertsTheExponentialMap() {
    for q in sampleAttitudes {
      let r = q.rotationVector
      #expect(r.length <= .pi + 1e-12)
      #expect(Quaternion(rotationVector: r).angle(to: q) < 1e-9)
    }
    #expect(Quaternion.identity.rotationVector == .zero)
  }

  @Test func shortestArcTurnsOneDirectionOntoAnother() {
    let pairs: [(Vector3, Vector3)] = [
      (Vector3(0.2, -0.3, 9.7), .unitZ), (.unitX, .unitY), (Vector3(1, 1, 1), Vector3(-1, 2, 0.5)),
      (.unitZ, Vector3(0, 0, -1)), (Vector3(0, 1, 0), Vector3(0, -2, 0)),
    ]
    for (from, to) in pairs {
      let q = Quaternion(from: from, to: to)
      #expect(abs(q.norm - 1) < 1e-12)
      #expect(close(q.rotate(from.normalized), to.normalized, 1e-12))
      // Shortest arc: the angle turned is the angle between the directions.
      #expect(abs(q.angle - from.angle(to: to)) < 1e-9)
    }
    // A tilt from an accelerometer reading turns about a horizontal axis: no heading.
    let tilt = Quaternion(from: Vector3(1.5, -2.0, 9.3), to: .unitZ)
    #expect(abs(tilt.z) < 1e-15)
    #expect(abs(tilt.heading) < 1e-15)
  }
}

@Suite struct SlerpTests {
  @Test func endpointsAndConstantRate() {
    let a = Quaternion(axis: Vector3(1, 0, 1), angle: 0.4)
    let b = Quaternion(axis: Vector3(0, 1, 2), angle: 2.0)
    #expect(a.slerp(to: b, fraction: 0).angle(to: a) < 1e-12)
    #expect(a.slerp(to: b, fraction: 1).angle(to: b) < 1e-7)
    let total = a.angle(to: b)
    for t in [0.1, 0.25, 0.5, 0.9] {
      let m = a.slerp(to: b, fraction: t)
      #expect(abs(a.angle(to: m) - t * total) < 1e-9)
      #expect(abs(m.angle(to: b) - (1 - t) * total) < 1e-9)
    }
  }

  /// Seed 003: halfway between yaw 170° and yaw −170° is yaw 180°, not 0°.
  @Test func takesTheShortWayAcrossYaw180() {
    let a = Quaternion(axis: .unitZ, angle: rad(170))
    let b = Quaternion(axis: .unitZ, angle: rad(-170))
    let half = a.slerp(to: b, fraction: 0.5)
    #expect(abs(abs(deg(half.heading)) - 180) < 1e-9)
    // Also when b arrives with the opposite sign.
    let flipped = Quaternion(w: -b.w, x: -b.x, y: -b.y, z: -b.z)
    #expect(abs(abs(deg(a.slerp(to: flipped, fraction: 0.5).heading)) - 180) < 1e-9)
  }

  @Test func nearlyEqualRotationsInterpolateLinearly() {
    let a = Quaternion(axis: .unitX, angle: 0.3)
    let b = a * Quaternion(axis: .unitY, angle: 1e-10)
    let m = a.slerp(to: b, fraction: 0.5)
    #expect(abs(m.norm - 1) < 1e-15)
    #expect(abs(a.angle(to: m) - 0.5e-10) < 1e-14)
  }
}
