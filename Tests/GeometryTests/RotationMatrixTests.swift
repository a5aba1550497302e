import Foundation
import Geometry
import Testing

@Suite struct RotationMatrixTests {
  /// Every branch of the conversion (a small angle, and half turns about each axis, where the
  /// trace is least), and a spread of general rotations: the matrix of the result is the matrix.
  @Test func aRotationMatrixGivesBackItsQuaternion() {
    var cases: [Quaternion] = [
      .identity, Quaternion(axis: .unitX, angle: .pi), Quaternion(axis: .unitY, angle: .pi),
      Quaternion(axis: .unitZ, angle: .pi), Quaternion(axis: Vector3(1, 1, 0), angle: 3.1),
      Quaternion(axis: Vector3(0, 1, 1), angle: -3.0), Quaternion(axis: .unitX, angle: 1e-9),
    ]
    for i in 0..<60 {
      let a = Double(i)
      cases.append(
        Quaternion(axis: Vector3(sin(a), cos(1.7 * a), sin(0.3 * a) + 0.1), angle: 0.1 * a - 3))
    }
    for q in cases {
      let back = Quaternion(rotationMatrix: Matrix3(q))
      #expect(back.w >= 0)
      #expect(back.angle(to: q) < 1e-9, "\(q) → \(back)")
    }
  }
}
