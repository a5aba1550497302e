import Geometry

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// A board bolted near an engine: it rests for `startSeconds`, then the engine starts and shakes
/// it at `frequencyHertz` for the rest of the run.
///
/// Seed 000: "A 60 Hz vibration sampled at 50 Hz turns into a 10 Hz wobble that no filter can
/// remove afterwards." The shake is a vertical acceleration `A·sin(2πft)` with a lateral one of
/// half that size (along the reference y axis, phase-shifted), and a rocking of the board about
/// its x axis by `R·sin(2πft)`, all faded in over half a second when the engine starts. The
/// board sits tilted by `tiltRadians` about x, so gravity has a component on two axes.
///
/// The catalogue has it twice around the 50 Hz Nyquist frequency of Plumb's 100 Hz loop:
/// `engine-vibration-below` shakes at 30 Hz, which the frames may show as it is (attenuated by
/// the chip's low-pass filter); `engine-vibration-above` at 60 Hz, which sampling at 100 Hz folds
/// to |60 − 100| = 40 Hz and sampling at 50 Hz to |60 − 50| = 10 Hz. Whether that alias reaches
/// the samples depends on the chip's low-pass filter (DLPF_CFG), which is why the configuration
/// validator insists the filter's bandwidth stay below half the sample rate.
public struct EngineVibration: MotionSource, Hashable, Sendable {
  /// The vibration's frequency, Hz.
  public var frequencyHertz: Double
  /// The vertical acceleration's amplitude, m/s² (the lateral one is half).
  public var amplitudeMetersPerSecondSquared: Double
  /// The rocking amplitude about the board's x axis, radians.
  public var rockingRadians: Double
  /// When the engine starts, seconds (the board rests until then).
  public var startSeconds: Double
  /// The board's tilt about x, radians.
  public var tiltRadians: Double
  public var durationSeconds: Double?

  /// A 0.2 g shake (seed 000's example amplitude) with a 0.05° rocking, starting at 3 s, on a
  /// board tilted 10°; 20 s.
  public init(
    frequencyHertz: Double, amplitudeMetersPerSecondSquared: Double = 0.2 * standardGravity,
    rockingRadians: Double = 0.05 * radiansPerDegree, startSeconds: Double = 3,
    tiltRadians: Double = 10 * radiansPerDegree, totalSeconds: Double = 20
  ) {
    self.frequencyHertz = frequencyHertz
    self.amplitudeMetersPerSecondSquared = amplitudeMetersPerSecondSquared
    self.rockingRadians = rockingRadians
    self.startSeconds = startSeconds
    self.tiltRadians = tiltRadians
    durationSeconds = totalSeconds
  }

  /// 0 before the engine starts, 1 half a second later (smoothstep in between).
  func fade(_ t: Double) -> Double {
    let u = min(max((t - startSeconds) / 0.5, 0), 1)
    return u * u * (3 - 2 * u)
  }

  func rocking(_ t: Double) -> Double {
    rockingRadians * fade(t) * sin(2 * Double.pi * frequencyHertz * t)
  }

  public func truth(atSeconds seconds: Double) -> MotionTruth {
    let t = max(0, seconds)
    let h = 1e-7
    let q0 = Quaternion(axis: .unitX, angle: tiltRadians + rocking(t))
    let q1 = Quaternion(axis: .unitX, angle: tiltRadians + rocking(t + h))
    let phase = 2 * Double.pi * frequencyHertz * t
    // The scale as its own value: Swift 6.0's operator inference cannot type the product inline.
    let scale: Double = amplitudeMetersPerSecondSquared * fade(t)
    let shake = Vector3(0, 0.5 * sin(phase + 1), sin(phase)) * scale
    return MotionTruth(
      timeSeconds: t, attitude: q0,
      angularRateRadiansPerSecond: bodyRate(from: q0, to: q1, overSeconds: h),
      specificForceMetersPerSecondSquared: q0.inverseRotate(
        shake + Vector3(0, 0, standardGravity)),
      temperatureCelsius: 25)
  }
}
