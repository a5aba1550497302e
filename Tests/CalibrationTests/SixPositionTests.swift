import Calibration
import Geometry
import Randomness
import Testing

@Suite struct SixPositionTests {
  /// A simulated accelerometer: raw = S·truth + offset (+ noise), S = scale and misalignment.
  struct Accelerometer {
    var sensitivity: Matrix3
    var offset: Vector3
    var noise: Double

    /// `samples` readings with `face` up, tilted by `tiltDegrees` about an axis perpendicular to it.
    func pose(
      _ face: SensorFace, samples: Int, random: inout SeededGenerator, tiltDegrees: Double = 0
    ) -> PoseMeasurement {
      var up = face.up
      if tiltDegrees != 0 {
        let axis = face.axisIndex == 0 ? Vector3.unitY : Vector3.unitX
        up = Quaternion(axis: axis, angle: tiltDegrees * radiansPerDegree).rotate(up)
      }
      let truth = up * standardGravity
      var readings: [Vector3] = []
      for _ in 0..<samples {
        let n = Vector3(random.gaussian(), random.gaussian(), random.gaussian()) * noise
        readings.append(sensitivity * truth + offset + n)
      }
      return PoseMeasurement(samples: readings)
    }
  }

  let offset = Vector3(0.15, -0.2, 0.35)  // m/s², a typical MPU-6050 zero-g offset range
  let scale = Vector3(1.02, 0.985, 1.01)

  func measurements(_ sensor: Accelerometer, seed: UInt64, samples: Int = 200) -> [PoseMeasurement]
  {
    var random = SeededGenerator(seed: seed)
    // Deliberately not in face order: faces are identified from the readings.
    return [SensorFace.plusZ, .minusX, .plusY, .minusZ, .plusX, .minusY].map {
      sensor.pose($0, samples: samples, random: &random)
    }
  }

  @Test func noiseFreePosesGiveTheExactOffsetAndScale() throws {
    let sensor = Accelerometer(sensitivity: Matrix3(diagonal: scale), offset: offset, noise: 0)
    let result = try SixPositionCalibration.solve(measurements(sensor, seed: 1, samples: 2))
    let c = result.correction
    #expect((c.offset - offset).length < 1e-12)
    #expect((c.scale - scale).length < 1e-12)
    #expect(result.worstResidual < 1e-12)
    #expect(result.poses.map(\.face) == [.plusZ, .minusX, .plusY, .minusZ, .plusX, .minusY])
  }

  /// Tolerances with noise 0.03 m/s² per sample and 200 samples per pose (σ of a pose mean
  /// 0.002 m/s²): offset within 0.01 m/s², scale within 1e-3, residuals within 0.01 m/s².
  @Test func noisyPosesRecoverOffsetAndScaleWithinTolerance() throws {
    let sensor = Accelerometer(sensitivity: Matrix3(diagonal: scale), offset: offset, noise: 0.03)
    let result = try SixPositionCalibration.solve(measurements(sensor, seed: 2))
    let c = result.correction
    for (got, want) in zip([c.offset.x, c.offset.y, c.offset.z], [offset.x, offset.y, offset.z]) {
      #expect(abs(got - want) < 0.01)
    }
    for (got, want) in zip([c.scale.x, c.scale.y, c.scale.z], [scale.x, scale.y, scale.z]) {
      #expect(abs(got - want) < 1e-3)
    }
    #expect(result.worstResidual < 0.01)
    #expect(c.form == .perAxis)
  }

  /// With 1° of misalignment between axes, the full-matrix solution recovers S⁻¹ within 1e-3
  /// per element and the offset within 0.01 m/s²; corrected poses then read g within 0.01 m/s².
  @Test func fullMatrixRecoversMisalignment() throws {
    let misalignment = Matrix3(
      rows: Vector3(1.02, 0.017, -0.012), Vector3(-0.009, 0.985, 0.021),
      Vector3(0.014, -0.018, 1.01))
    let sensor = Accelerometer(sensitivity: misalignment, offset: offset, noise: 0.03)
    var settings = SixPositionCalibration.Settings()
    settings.fullMatrix = true
    let result = try SixPositionCalibration.solve(measurements(sensor, seed: 3), settings: settings)
    let c = result.correction
    #expect(c.form == .fullMatrix)
    let expected = try #require(misalignment.inverse)
    for (row, want) in zip(
      [c.matrix.row0, c.matrix.row1, c.matrix.row2], [expected.row0, expected.row1, expected.row2])
    {
      #expect((row - want).length < 1.7e-3)
    }
    #expect((c.offset - offset).length < 0.01)
    #expect(result.worstResidual < 0.01)
    // The per-axis solution of the same poses leaves the cross-axis error uncorrected.
    let perAxis = try SixPositionCalibration.solve(measurements(sensor, seed: 3))
    let probe = misalignment * Vector3(1, 1, 1).normalized * standardGravity + offset
    let fullError = (c.apply(probe) - Vector3(1, 1, 1).normalized * standardGravity).length
    let perAxisError =
      (perAxis.correction.apply(probe) - Vector3(1, 1, 1).normalized * standardGravity).length
    #expect(fullError < 0.02)
    #expect(perAxisError > 5 * fullError)
  }

  @Test func posesAreRejectedWithTheReason() {
    let sensor = Accelerometer(sensitivity: Matrix3(diagonal: scale), offset: .zero, noise: 0.01)
    var random = SeededGenerator(seed: 4)
    var poses = SensorFace.allCases.map { sensor.pose($0, samples: 50, random: &random) }

    var tilted = poses
    tilted[3] = sensor.pose(.minusY, samples: 50, random: &random, tiltDegrees: 12)
    #expect(throws: (any Error).self) { try SixPositionCalibration.solve(tilted) }
    do {
      _ = try SixPositionCalibration.solve(tilted)
    } catch {
      guard case .notAxisAligned(let index, let face, let angle, _) = error else {
        Issue.record("unexpected \(error)")
        return
      }
      #expect(index == 4 && face == .minusY && abs(angle - 12) < 0.5)
      #expect(error.description.contains("pose 4 (−y up) is 12"))
    }

    var shaken = poses
    shaken[0] = Accelerometer(sensitivity: .identity, offset: .zero, noise: 0.5).pose(
      .plusX, samples: 50, random: &random)
    #expect {
      try SixPositionCalibration.solve(shaken)
    } throws: { error in
      guard case .notStill(let index, _, _, _) = error as? SixPositionError else { return false }
      return index == 1 && "\(error)".contains("was not still")
    }

    var dead = poses
    dead[2] = PoseMeasurement(mean: Vector3(0, 0.01, 0), standardDeviation: .zero, sampleCount: 50)
    #expect {
      try SixPositionCalibration.solve(dead)
    } throws: { error in
      guard case .implausibleMagnitude(3, _, _) = error as? SixPositionError else { return false }
      return "\(error)".contains("not about g")
    }

    var duplicated = poses
    duplicated[5] = poses[4]
    #expect {
      try SixPositionCalibration.solve(duplicated)
    } throws: { error in
      (error as? SixPositionError) == .duplicateFace(.plusZ, first: 5, second: 6)
    }

    poses.removeLast()
    #expect {
      try SixPositionCalibration.solve(poses)
    } throws: { error in
      (error as? SixPositionError) == .missingFaces([.minusZ])
    }
  }

  @Test func facesAreIdentifiedFromTheDominantAxis() {
    #expect(SensorFace.dominant(in: Vector3(0.3, -9.7, 0.5)) == .minusY)
    #expect(SensorFace.dominant(in: Vector3(9.7, 0.3, 0.5)) == .plusX)
    #expect(SensorFace.dominant(in: Vector3(0.1, 0.3, -9.9)) == .minusZ)
  }
}
