import Geometry

/// The angle between the estimated and the true gravity direction, radians: the inclination
/// error, whatever the heading (seed 003's gravity test, from the body's side).
public func inclinationErrorRadians(estimate: Quaternion, truth: Quaternion) -> Double {
  estimate.gravityInBody.angle(to: truth.gravityInBody)
}

/// The heading difference between an estimate and the truth, radians in −π…π: the twist about
/// the reference vertical of the rotation that takes the true attitude to the estimated one.
/// With no magnetometer the estimate's heading is relative to its start, so a report removes
/// the offset of the first trusted frame (`wrappedRadians(_:)` of the difference).
public func headingDifferenceRadians(estimate: Quaternion, truth: Quaternion) -> Double {
  (estimate * truth.conjugate).heading
}

/// An angle brought into −π…π.
public func wrappedRadians(_ angle: Double) -> Double {
  var a = angle.truncatingRemainder(dividingBy: 2 * .pi)
  if a > .pi { a -= 2 * .pi }
  if a < -.pi { a += 2 * .pi }
  return a
}

/// Accuracy figures accumulated frame by frame (no storage): RMS and worst inclination and
/// heading errors, degrees, over the frames after the estimator's initialisation.
public struct AccuracyFigures: Hashable, Sendable {
  /// Frames compared with the truth.
  public var frames: UInt64 = 0
  public var inclinationRMSDegrees: Double { rms(inclinationSquares) }
  public var inclinationMaximumDegrees: Double = 0
  public var headingRMSDegrees: Double { rms(headingSquares) }
  public var headingMaximumDegrees: Double = 0
  /// The RMS heading error about its mean over the run: the constant offset that minimises it
  /// removed (the BROAD dataset's scoring), so that an offset an uncalibrated unit's first,
  /// drifting frames leave is not counted as drift.
  public var headingDriftRMSDegrees: Double {
    guard frames > 0 else { return 0 }
    let mean = headingSum / Double(frames)
    return max(0, headingSquares / Double(frames) - mean * mean).squareRoot()
  }
  /// Gyro-bias error (estimate − truth, the norm over three axes), °/s, over frames that carry
  /// the estimate (binary frames only).
  public var biasFrames: UInt64 = 0
  public var biasErrorRMSDegreesPerSecond: Double {
    biasFrames == 0 ? 0 : (biasSquares / Double(biasFrames)).squareRoot()
  }
  public var biasErrorFinalDegreesPerSecond: Double = 0
  /// Rest flags against the scenario's true rests: frames in each of the four cases.
  public var restFlaggedWhileResting: UInt64 = 0
  public var restFlaggedWhileMoving: UInt64 = 0
  public var notFlaggedWhileResting: UInt64 = 0
  public var notFlaggedWhileMoving: UInt64 = 0

  var inclinationSquares = 0.0
  var headingSquares = 0.0
  var headingSum = 0.0
  var biasSquares = 0.0

  public init() {}

  private func rms(_ squares: Double) -> Double {
    frames == 0 ? 0 : (squares / Double(frames)).squareRoot()
  }

  mutating func add(inclinationDegrees: Double, headingDegrees: Double) {
    frames += 1
    inclinationSquares += inclinationDegrees * inclinationDegrees
    headingSquares += headingDegrees * headingDegrees
    headingSum += headingDegrees
    inclinationMaximumDegrees = max(inclinationMaximumDegrees, inclinationDegrees)
    headingMaximumDegrees = max(headingMaximumDegrees, abs(headingDegrees))
  }

  mutating func add(biasErrorDegreesPerSecond error: Double) {
    biasFrames += 1
    biasSquares += error * error
    biasErrorFinalDegreesPerSecond = error
  }

  mutating func add(restFlag: Bool, trulyResting: Bool) {
    switch (restFlag, trulyResting) {
    case (true, true): restFlaggedWhileResting += 1
    case (true, false): restFlaggedWhileMoving += 1
    case (false, true): notFlaggedWhileResting += 1
    case (false, false): notFlaggedWhileMoving += 1
    }
  }
}
