import Geometry
import HIL
import HardwareAbstraction
import MPU6050
import MPU6050Simulation
import MotionScenarios
import SimulatedHardware
import Testing

/// The simulated chip alone, configured by hand (no driver, so no validator), sampled at every
/// data-ready edge: the vertical linear acceleration in the reference frame, m/s², with times.
func chipSamples(
  motion: EngineVibration, sampleRateDivider: UInt8, dlpf: UInt8, seconds: Double
) throws -> (times: [Double], vertical: [Double]) {
  let clock = ManualClock()
  let chip = SimulatedMPU6050(clock: clock, motion: motion, unit: .noisy(seed: 3))
  let line = SimulatedDataReadyLine(clock: clock, source: chip)
  // RM §4: PWR_MGMT_1 (0x6B) PLL clock, awake; SMPLRT_DIV (0x19); CONFIG (0x1A) DLPF_CFG;
  // GYRO_CONFIG (0x1B) ±500 °/s; ACCEL_CONFIG (0x1C) ±4 g; INT_ENABLE (0x38) DATA_RDY_EN.
  try chip.writeRegister(0x6B, value: 0x01)
  try chip.writeRegister(0x19, value: sampleRateDivider)
  try chip.writeRegister(0x1A, value: dlpf)
  try chip.writeRegister(0x1B, value: 0x08)
  try chip.writeRegister(0x1C, value: 0x08)
  try chip.writeRegister(0x38, value: 0x01)
  var times: [Double] = []
  var vertical: [Double] = []
  var bytes = [UInt8](repeating: 0, count: 14)
  let end = clock.now() + .nanoseconds(Int64(seconds * 1e9))
  while clock.now() < end {
    guard case .edge(let time) = try line.waitForEdge(until: end) else { break }
    try bytes.withUnsafeMutableBytes { try chip.readRegisters(startingAt: 0x3B, into: $0) }
    func counts(_ i: Int) -> Double {
      Double(Int16(bitPattern: UInt16(bytes[i]) << 8 | UInt16(bytes[i + 1])))
    }
    // ±4 g: 8192 counts per g (PS §6.2).
    let body = Vector3(counts(0), counts(2), counts(4)) * (9.80665 / 8192)
    let t = Double(time.nanoseconds(since: chip.motionStart)) * 1e-9
    guard t > motion.startSeconds + 1 else { continue }
    let attitude = motion.truth(atSeconds: t).attitude
    times.append(t)
    vertical.append(attitude.rotate(body).z - 9.80665)
  }
  return (times, vertical)
}

/// The shake's vertical amplitude: 0.2 g (restated: seed 000's 60 Hz example, 9.80665 m/s² per g).
let shake = 0.2 * 9.80665

/// Frames after the engine has run for a second and a half: times (s) and the vertical linear
/// acceleration they carry (binary frames, reference frame, m/s²).
func verticalAcceleration(_ result: HILResult, after seconds: Double) -> ([Double], [Double]) {
  let frames = result.frames.filter {
    Double($0.sampleTimeNanoseconds) * 1e-9 - 1 > seconds
  }
  return (
    frames.map { Double($0.sampleTimeNanoseconds) * 1e-9 },
    frames.map { $0.linearAccelerationMetersPerSecondSquared?.z ?? .nan }
  )
}

/// Seed 000: "A 60 Hz vibration sampled at 50 Hz turns into a 10 Hz wobble that no filter can
/// remove afterwards." The chip's low-pass filter (DLPF) is the only filter before sampling; the
/// configuration validator refuses a bandwidth at or above half the sample rate.
///
/// Plumb samples at 100 Hz, where 60 Hz folds to |60 − 100| = 40 Hz (not 10 Hz: that is the
/// fold at 50 Hz). These tests show, through the simulated chip's filter model (two first-order
/// sections matched to RM §4.3's delays, which passes 46 % of the accelerometer at 60 Hz with
/// DLPF_CFG 3 and 24 % with DLPF_CFG 4):
/// - through the real loop at the default configuration (100 Hz, DLPF 44 Hz), the frames show
///   no 10 Hz wobble, the 40 Hz fold attenuated by the filter, and an unaffected attitude;
/// - at the chip, with the filter widened to 260 Hz (refused by the validator at 100 and 50 Hz),
///   the fold passes whole: at 50 Hz it is seed 000's 10 Hz wobble at full amplitude;
/// - with a configuration the validator accepts — 1 kHz with the 260 Hz filter — the loop's
///   output decimation to 50 Hz frames folds it to 10 Hz again: decimation picks every 20th
///   estimate without filtering, which the validator does not check.
@Suite struct VibrationTests {
  @Test func atTheDefaultFilterA60HzShakeIsNoTenHertzWobbleInTheFrames() throws {
    let above = try hil("engine-vibration-above", seconds: 10) {
      $0.keepFrames = true
      $0.unit = .noisy(seed: 3)
    }
    let (t, z) = verticalAcceleration(above, after: 4.5)
    #expect(t.count > 500)
    #expect(amplitude(ofHertz: 10, times: t, values: z) < 0.01 * shake)
    // The fold at 40 Hz is there, attenuated by the DLPF (46 % in the chip model at 60 Hz).
    let fold = amplitude(ofHertz: 40, times: t, values: z)
    #expect(fold > 0.35 * shake && fold < 0.6 * shake, "40 Hz: \(fold) m/s²")
    // The attitude does not wobble: the inclination filter (τ = 3 s) ignores a 40 Hz shake.
    #expect(above.accuracy.inclinationRMSDegrees < 0.1)
    #expect(above.accounting.silentLosses == 0)

    // Below Nyquist the frames show the shake itself, at its own frequency.
    let below = try hil("engine-vibration-below", seconds: 10) {
      $0.keepFrames = true
      $0.unit = .noisy(seed: 3)
    }
    let (tb, zb) = verticalAcceleration(below, after: 4.5)
    #expect(amplitude(ofHertz: 30, times: tb, values: zb) > 0.6 * shake)
    #expect(amplitude(ofHertz: 10, times: tb, values: zb) < 0.01 * shake)
    #expect(below.accuracy.inclinationRMSDegrees < 0.1)
  }

  @Test func withTheFilterWidenedTheAliasWouldAppear() throws {
    // The validator refuses the 260 Hz filter at 100 Hz and at 50 Hz, and says why.
    for rate in [100.0, 50] {
      #expect(throws: MPU6050ConfigurationError.self) {
        try MPU6050Configuration(sampleRateHertz: rate, lowPassFilter: .bandwidth260Hz)
          .validated()
      }
    }
    #expect(throws: Never.self) {
      try MPU6050Configuration(sampleRateHertz: 50, lowPassFilter: .bandwidth21Hz).validated()
    }
    // So, at the chip (registers set by hand): 8 kHz / (1 + 79) = 100 Hz with DLPF_CFG 0.
    let motion = EngineVibration(frequencyHertz: 60)
    let wide100 = try chipSamples(motion: motion, sampleRateDivider: 79, dlpf: 0, seconds: 8)
    #expect(amplitude(ofHertz: 40, times: wide100.times, values: wide100.vertical) > 0.95 * shake)
    // At 50 Hz — 8 kHz / 160 — the fold is seed 000's 10 Hz wobble, whole.
    let wide50 = try chipSamples(motion: motion, sampleRateDivider: 159, dlpf: 0, seconds: 8)
    #expect(amplitude(ofHertz: 10, times: wide50.times, values: wide50.vertical) > 0.95 * shake)
    // The widest filter the validator accepts at 50 Hz (21 Hz, 1 kHz / 20) cuts it to a quarter.
    let narrow50 = try chipSamples(motion: motion, sampleRateDivider: 19, dlpf: 4, seconds: 8)
    #expect(amplitude(ofHertz: 10, times: narrow50.times, values: narrow50.vertical) < 0.3 * shake)
  }

  @Test func decimatedFramesAliasEvenWhenTheValidatorAccepts() throws {
    // 1 kHz with the 260 Hz filter is valid (260 < 500 Hz), and 50 frames per second fit the
    // link: the loop keeps every 20th estimate, and the frames fold 60 Hz to 10 Hz.
    let settings = MPU6050Configuration(sampleRateHertz: 1000, lowPassFilter: .bandwidth260Hz)
    #expect(throws: Never.self) { try settings.validated() }
    let wide = try hil("engine-vibration-above", seconds: 8) {
      $0.keepFrames = true
      $0.unit = .noisy(seed: 3)
      $0.sensor = settings
      $0.outputRateHz = 50
    }
    let (t, z) = verticalAcceleration(wide, after: 4.5)
    #expect(amplitude(ofHertz: 10, times: t, values: z) > 0.95 * shake)
    #expect(wide.accounting.silentLosses == 0 && wide.accounting.decimated > 6000)
    // The default chip configuration with `rate 50`: the 40 Hz fold folds again, to 10 Hz.
    let halved = try hil("engine-vibration-above", seconds: 8) {
      $0.keepFrames = true
      $0.unit = .noisy(seed: 3)
      $0.outputRateHz = 50
    }
    let (th, zh) = verticalAcceleration(halved, after: 4.5)
    let wobble = amplitude(ofHertz: 10, times: th, values: zh)
    #expect(wobble > 0.35 * shake && wobble < 0.6 * shake)
    // The attitude stays right: the estimator saw every sample.
    #expect(
      wide.accuracy.inclinationRMSDegrees < 0.1 && halved.accuracy.inclinationRMSDegrees < 0.1)
  }
}
