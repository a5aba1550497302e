import Firmware
import MPU6050
import MPU6050Simulation
import Testing

/// A board file may set any sample rate the chip gives (4 Hz – 8 kHz), not only the 100 Hz the
/// estimator assumes by default: the loop must tell the estimator the rate it configured.
@Suite struct SampleRateTests {
  /// The rates a user picks, each with a low-pass filter that does not alias at it.
  static let rates: [(hertz: Double, filter: DigitalLowPassFilter)] = [
    (25, .bandwidth10Hz), (50, .bandwidth21Hz), (200, .bandwidth44Hz), (1000, .bandwidth44Hz),
  ]

  /// A resting board at each rate: no sample is counted missing that the chip did not skip,
  /// no estimate is flagged as after a gap, and the first rest — which measures an
  /// uncalibrated gyro's bias — comes one rest dwell (1.5 s) after the warm-up, as at 100 Hz.
  /// At 25 Hz the estimator used to take the 40 ms intervals for gaps of three missed samples
  /// until its clock re-acquired the period: 45 phantom missed samples in the loop's status,
  /// the frames and a recording, and a first rest 1.5 s late.
  @Test(arguments: 0..<rates.count)
  func aRestingBoardAtAnyRateMissesNothingAndRestsOnTime(index: Int) throws {
    let (hertz, filter) = Self.rates[index]
    var sensor = MPU6050Configuration.default
    sensor.sampleRateHertz = hertz
    sensor.lowPassFilter = filter
    let settings = FirmwareSettings(
      sensor: sensor, selfTest: false, outputRateHz: hertz >= 100 ? 100 : Int(hertz))
    let rig = try Rig(unit: .noisy(seed: 3), settings: settings)
    try rig.run(seconds: 3)
    let loop = rig.loop
    #expect(loop.status.missedSamples == 0, "\(hertz) Hz: \(loop.status.missedSamples) missed")
    #expect(
      loop.estimator.clock.gapCount == 0, "\(hertz) Hz: \(loop.estimator.clock.gapCount) gaps")
    #expect(
      abs(loop.estimator.clock.periodSeconds * hertz - 1) < 0.03,
      "\(hertz) Hz: period \(loop.estimator.clock.periodSeconds) s")
    // Start-up (reset and configuration) and the warm-up take well under half a second of the
    // three; the dwell is 1.5 s.
    #expect(loop.estimator.restStatistics.rests >= 1, "\(hertz) Hz: no rest in 3 s")
  }
}
