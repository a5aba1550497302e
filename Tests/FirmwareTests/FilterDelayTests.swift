import Firmware
import Foundation
import Geometry
import MPU6050
import MotionScenarios
import Testing

/// A level board swinging about the vertical: heading `amplitude · sin(2π f t)`.
private struct YawSwing: MotionSource {
  var amplitude = 30 * Double.pi / 180
  var frequency = 0.5
  var durationSeconds: Double? { nil }

  func rate(at time: Double) -> Double {
    amplitude * 2 * .pi * frequency * cos(2 * .pi * frequency * time)
  }

  func truth(atSeconds time: Double) -> MotionTruth {
    MotionTruth(
      timeSeconds: time,
      attitude: Quaternion(axis: .unitZ, angle: amplitude * sin(2 * .pi * frequency * time)),
      angularRateRadiansPerSecond: Vector3(0, 0, rate(at: time)),
      specificForceMetersPerSecondSquared: Vector3(0, 0, standardGravity),
      temperatureCelsius: 25)
  }
}

/// The chip's low-pass filter delays its samples (RM §4.3: 4.8 ms for the gyro at DLPF 44 Hz):
/// a sample stamped at its data-ready edge describes the motion that much earlier. Integrating
/// each rate over the interval before it puts the estimate half a period later again, so the
/// attitude a frame carries holds `delay − period/2` before the frame's time: nothing at 100 Hz
/// with the 44 Hz filter, 4.3 ms at 1 kHz, 2 ms of lead at 25 Hz with the 10 Hz filter. A frame
/// carries the attitude at its own time.
@Suite struct FilterDelayTests {
  /// A board swinging ±30° about the vertical at 0.5 Hz (up to 94 °/s): each frame's heading
  /// error against the truth at the frame's time, regressed on the true rate then — the slope
  /// is the lag (a constant heading offset, from the start, does not enter it). Before, at
  /// 1 kHz with the 44 Hz filter, every frame lagged by about 4.8 ms: 0.45° at the swing's
  /// fastest.
  @Test(arguments: [
    (1000.0, DigitalLowPassFilter.bandwidth44Hz), (200, .bandwidth44Hz), (100, .bandwidth44Hz),
    (25, .bandwidth10Hz), (1000, .bandwidth260Hz),
  ])
  func aFrameCarriesTheAttitudeAtItsOwnTime(hertz: Double, filter: DigitalLowPassFilter) throws {
    var sensor = MPU6050Configuration.default
    sensor.sampleRateHertz = hertz
    sensor.lowPassFilter = filter
    let motion = YawSwing()
    let rig = try Rig(
      motion: motion, unit: .noisy(seed: 4),
      settings: FirmwareSettings(
        sensor: sensor, selfTest: false, outputRateHz: min(100, Int(hertz))))
    try rig.run(seconds: 8)
    var points: [(rate: Double, error: Double)] = []
    for frame in rig.decode().samples {
      let t = rig.motionSeconds(frame.sampleTimeNanoseconds)
      guard t > 4 else { continue }
      let truth = motion.truth(atSeconds: t)
      let error = remainder(frame.attitude.heading - truth.attitude.heading, 2 * .pi)
      points.append((motion.rate(at: t), error))
    }
    #expect(points.count > 80)
    let n = Double(points.count)
    let meanRate = points.map(\.rate).reduce(0, +) / n
    let meanError = points.map(\.error).reduce(0, +) / n
    var covariance = 0.0
    var variance = 0.0
    for p in points {
      covariance += (p.rate - meanRate) * (p.error - meanError)
      variance += (p.rate - meanRate) * (p.rate - meanRate)
    }
    let lagMilliseconds = -covariance / variance * 1000
    #expect(
      abs(lagMilliseconds) < 0.3, "\(hertz) Hz, \(filter): frames lag by \(lagMilliseconds) ms")
  }
}
